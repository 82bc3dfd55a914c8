//! myao's core library: the domain, the ports, the application services that
//! the Lambda functions and the local mode run, and the adapters.
//!
//! - [`domain`]: pure types and rules (no I/O, no async, no AWS).
//! - [`ports`]: the traits that separate the core from the outside world.
//! - [`app`]: ingest, judgment, response and memory, written against the ports.
//! - [`adapters`]: AWS (feature `aws`), OpenAI-compatible LLM, Slack Web API,
//!   and the in-process twins.
//! - [`prompts`]: the minijinja templates of `templates/`.
//! - [`deadline`]: the invocation's deadline, which the LLM and Slack
//!   adapters size their attempts and retries to.

pub mod adapters;
pub mod app;
pub mod deadline;
pub mod domain;
pub mod env;
pub mod ports;
pub mod prompts;
pub mod telemetry;
