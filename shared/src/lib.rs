//! myao's core library: the domain, the ports, the application services that
//! the Lambda functions and the local mode run, the adapters, and the
//! composition root that joins them.
//!
//! - [`domain`]: pure types and rules (no I/O, no async, no AWS): the crate
//!   `myao-domain` (`shared/domain`), whose manifest holds no I/O dependency.
//! - [`slack`]: Slack's wire protocol (events, signature): the crate
//!   `myao-slack` (`shared/slack`), pure like the domain.
//! - [`ports`]: the traits that separate the core from the outside world.
//! - [`app`]: ingest, judgment, response and memory, written against the ports.
//! - [`adapters`]: AWS (feature `aws`), OpenAI-compatible LLM, Slack Web API,
//!   and the in-process twins.
//! - [`prompts`]: the minijinja templates of `templates/` (feature `jobs`).
//! - [`deadline`]: the invocation's deadline, which the LLM and Slack
//!   adapters size their attempts and retries to.
//! - [`wire`]: the composition root, where the adapters are plugged into the
//!   app's ports: the Lambda functions' assembly (feature `aws`) and the
//!   in-process one of the local mode, the tests and the benchmarks. Outside
//!   their tests, neither `app` nor `adapters` imports the other: only
//!   `wire` sees both.

pub mod adapters;
pub mod app;
pub mod deadline;
pub use myao_domain as domain;
pub use myao_slack as slack;
pub mod env;
pub mod ports;
#[cfg(feature = "jobs")]
pub mod prompts;
pub mod telemetry;
pub mod wire;
