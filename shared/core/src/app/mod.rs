//! The application services that every function shares: the [`Ports`],
//! ingest and the settings cache. The job functions' services (judgment,
//! response, memory, ...) are the crate `myao-services`, over these ports.

pub mod ingest;
pub mod install;
pub mod settings;

mod expiry;
mod ports;

pub use expiry::{memory_retention, retention};
pub use ports::Ports;
