//! What every function of myao uses, ingest included: the ports, ingest and
//! the settings cache written against them, and the in-process twins of the
//! AWS services. No AWS SDK, no HTTP client, no templates: the ingest
//! function links this crate and `myao-aws` and nothing of the job
//! functions, by its dependency list.
//!
//! - [`domain`]: pure types and rules (the crate `myao-domain`).
//! - [`slack`]: Slack's wire protocol (the crate `myao-slack`).
//! - [`ports`]: the traits that separate the core from the outside world.
//! - [`app`]: the [`app::Ports`] every function holds, ingest and the
//!   settings cache.
//! - [`adapters`]: the in-process adapters: the twins, the clock and random
//!   source, the metrics' EMF log.
//! - [`schedule`]: the scheduler's key, a schedule's name (EventBridge
//!   Scheduler's rules, kept by the twin too).
//! - [`deadline`]: the invocation's deadline.
//! - [`wire`]: the in-process assembly ([`wire::Twins`]).

pub mod adapters;
pub mod app;
pub mod deadline;
pub mod env;
pub mod ports;
pub mod schedule;
pub mod telemetry;
pub mod wire;
