//! The adapters that need no outside service: CloudWatch's EMF log
//! ([`metrics`]), the system's clock and random source and the fixed
//! stand-ins of tests ([`system`]), and the in-process twins of the AWS
//! services that the tests and the local mode run on ([`twins`]).

pub mod metrics;
pub mod system;
pub mod twins;
