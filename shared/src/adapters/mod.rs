//! Adapters: the ports implemented for AWS, for the HTTP services, and in
//! process (the twins used by tests and by the local mode).

#[cfg(feature = "aws")]
pub mod aws;
pub(crate) mod http;
pub mod metrics;
pub mod openai;
pub mod slack;
pub mod system;
pub mod twins;
