//! Ids and timestamps from the literals of a test: a bad literal is a bug
//! in the test, so these panic naming it instead of returning an error.

use myao_domain::{ChannelId, Ts, UserId};

/// The channel `id` (e.g. `"C1"`).
pub fn channel(id: &str) -> ChannelId {
    ChannelId::parse(id).unwrap_or_else(|e| panic!("bad channel id {id:?} in a test: {e}"))
}

/// The user `id` (e.g. `"U1"`).
pub fn user(id: &str) -> UserId {
    UserId::parse(id).unwrap_or_else(|e| panic!("bad user id {id:?} in a test: {e}"))
}

/// The Slack timestamp `text` (e.g. `"1767600000.000100"`).
pub fn ts(text: &str) -> Ts {
    Ts::parse(text).unwrap_or_else(|e| panic!("bad ts {text:?} in a test: {e}"))
}
