//! The job services: what the judgment, response and memory functions do,
//! written against `myao-core`'s ports, and the prompts they send. The
//! Lambda functions and the local mode run exactly this code, assembled
//! with the adapters by `myao-wire`. No AWS SDK, no HTTP client, no LLM or
//! Slack adapter: this crate's manifest does not name them.

pub mod cap;
pub mod context;
pub mod files;
pub mod home;
mod job_context;
pub mod jobs;
pub mod judgment;
pub mod limits;
pub mod memory;
pub mod proactive;
pub mod prompts;
pub mod reflection;
mod report;
pub mod response;
mod services;
pub mod tokens;

pub use job_context::JobContext;
pub use report::MemoryReport;
pub use services::Services;
