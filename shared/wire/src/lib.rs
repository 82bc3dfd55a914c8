//! The job services' composition root: where the LLM and Slack adapters
//! are plugged in beside the [`Ports`](myao_core::app::Ports), from which
//! [`Services`](myao_services::Services) are built. It is the one crate
//! that sees both the services and the adapters; the functions (jobs, the
//! local mode) and the tests assemble through it. Ingest, which links no
//! service of the jobs, assembles itself (`functions/ingest`).
//!
//! - [`aws`]: the job functions, from their environment.
//! - [`http_services`]: the services over any ports (the AWS adapters, or
//!   `myao-core`'s in-process twins), with the real LLM and Slack clients
//!   ([`http_services_with`]: Amazon Bedrock's LLM besides).

pub mod aws;
pub mod embedder;
mod http;

pub use http::{http_services, http_services_with, Bedrock};
