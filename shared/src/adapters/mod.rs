//! Adapters: the ports implemented for AWS, for the HTTP services, and in
//! process (the twins used by tests and by the local mode).

#[cfg(feature = "aws")]
pub mod aws;
#[cfg(feature = "jobs")]
pub(crate) mod http;
#[cfg(feature = "jobs")]
pub mod llm;
pub mod metrics;
#[cfg(feature = "jobs")]
pub mod openai;
#[cfg(feature = "jobs")]
pub mod slack;
pub mod system;
#[cfg(any(feature = "aws", feature = "jobs"))]
pub mod tls;
pub mod twins;
