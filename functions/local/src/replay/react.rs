//! What `--react` asks for, in a module of its own: the options in the
//! parent carry it and the engine beside it keeps it, and the engine should
//! not have to reach back up into the parent to name it.

use myao_domain::EmojiName;

/// `--react EMOJI --react-to N`: members ([`REACTOR`] and a number) react
/// with `emoji` to the bot's first `posts` unprompted posts in each
/// channel, as soon as each is posted, as people in the channel would:
/// another member for each post, as a person's hints count once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct React {
    pub emoji: EmojiName,
    pub posts: usize,
}

/// The members who react for `--react`: `UREACTOR1` on the first post,
/// `UREACTOR2` on the second, ...
pub const REACTOR: &str = "UREACTOR";
