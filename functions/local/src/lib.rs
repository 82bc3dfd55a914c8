//! myao on one machine: replay a Slack export on a virtual clock, or serve
//! the bot for a real workspace, both without AWS, with the in-process
//! twins of the store, scheduler and queue.
//!
//! - [`config`]: settings and secrets from a TOML file and `MYAO_*` variables.
//! - [`export`]: reading a Slack workspace export (folder or zip).
//! - [`replay`]: the replay engine; [`timeline`] what it reports.
//! - [`eval`]: the replay at each chattiness level, measured.
//! - [`twins`]: the replay's Slack and LLM stand-ins.
//! - [`serve`]: the four functions in one process behind a local HTTP server;
//!   [`socket`] the same over Slack's Socket Mode.
//! - [`doctor`], [`redrive`]: a deployed stack checked, and its failed jobs
//!   sent back, with the caller's AWS credentials; [`stack`] its names.
//! - [`settings`]: `myao settings`, the local or a stack's settings shown,
//!   and a stack's changed or reset.
//! - [`llm`]: the LLM of every command, routed per role to its provider
//!   (an OpenAI-compatible endpoint, or Amazon Bedrock).
//! - [`cli`]: the command line.

pub mod cli;
pub mod config;
pub mod doctor;
pub mod eval;
pub mod export;
pub mod feedback;
pub mod llm;
pub mod redrive;
pub mod replay;
pub mod serve;
pub mod settings;
pub mod socket;
pub mod stack;
pub mod timeline;
pub mod twins;
