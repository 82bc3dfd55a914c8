//! myao's job services and everything they call: judgment, response,
//! memory and proactive talk, the prompts, the LLM (OpenAI-compatible and
//! Bedrock) and Slack Web API adapters, and the job functions' assembly.
//!
//! The layers below are crates of their own, re-exported here so that one
//! path names each thing:
//! - [`domain`]: pure types and rules (no I/O, no async, no AWS): the crate
//!   `myao-domain` (`shared/domain`), whose manifest holds no I/O dependency.
//! - [`slack`]: Slack's wire protocol (events, signature): the crate
//!   `myao-slack` (`shared/slack`), pure like the domain.
//! - [`ports`], [`deadline`], [`env`], [`telemetry`], ingest and the
//!   settings cache in [`app`], the twins in [`adapters`]: the crate
//!   `myao-core` (`shared/core`), which the ingest function links without
//!   this one.
//! - the AWS adapters, [`adapters::aws`]: the crate `myao-aws`
//!   (`shared/aws`).
//!
//! This crate's own:
//! - [`app`]: judgment, response, memory, proactive talk, written against
//!   the ports.
//! - [`adapters`]: the LLM (OpenAI-compatible, Bedrock) and the Slack Web API.
//! - [`prompts`]: the minijinja templates of `templates/`.
//! - [`wire`]: the composition root, where the adapters are plugged into the
//!   app's ports: the job functions' assembly ([`wire::aws`]) and the
//!   services over any ports. Outside their tests, neither `app` nor
//!   `adapters` imports the other: only `wire` sees both.

pub mod adapters;
pub mod app;
pub use myao_core::{deadline, domain, env, ports, schedule, slack, telemetry};
pub mod prompts;
pub mod wire;
