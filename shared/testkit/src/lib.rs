//! What the tests of the crates above the domain share, instead of each
//! file writing its own: ids, times and messages from literals
//! ([`ids`], [`time`], [`message`]), and the stubs of the outside HTTP
//! services ([`http`]).
//!
//! A dev-dependency only. The domain's own unit tests cannot use it: the
//! kit depends on the domain, and the cycle would give them a second copy
//! of its types. The core's unit tests can use what returns the domain's
//! types, but not [`time::clock_at`] (a `ManualClock` of the other copy of
//! the core); its benches and every crate above can use all of it.

pub mod embedder;
pub mod http;
pub mod ids;
pub mod message;
pub mod time;
