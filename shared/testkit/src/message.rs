//! Messages from literals.

use myao_domain::Message;

use crate::ids::{channel, ts, user};

/// A person's message (not a bot's) of `user` in `channel` at `at`, in the
/// thread of the message at `thread` when there is one.
pub fn message(
    channel_id: &str,
    user_id: &str,
    at: &str,
    thread: Option<&str>,
    text: &str,
) -> Message {
    Message::new(
        channel(channel_id),
        user(user_id),
        text,
        ts(at),
        thread.map(ts),
        false,
    )
}
