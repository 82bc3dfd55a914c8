//! The table's schema: the key and index attribute names, the index, and
//! the key of every kind of item (see the layout in the module docs).

use myao_domain::{ChannelId, MemoryKind, MemoryScope, TeamId, Ts, UserId};

/// The partition key attribute.
pub const PK: &str = "pk";
/// The sort key attribute.
pub const SK: &str = "sk";
/// The one global secondary index: a conversation's messages by time, and a
/// channel's thread memories by update time.
pub const GSI1: &str = "gsi1";
/// The partition key attribute of [`GSI1`].
pub const GSI1_PK: &str = "gsi1pk";
/// The sort key attribute of [`GSI1`].
pub const GSI1_SK: &str = "gsi1sk";
/// The TTL attribute (epoch seconds).
pub const TTL_ATTRIBUTE: &str = "expires_at";
/// A counter's number attribute.
pub(super) const COUNT_ATTRIBUTE: &str = "n";

/// The partition of the channel records.
pub(super) const CHANNELS_PK: &str = "CHANNELS";
const USERS_PK: &str = "USERS";
/// The partition of how far reflection read each conversation.
const REFLECTED_PK: &str = "REFLECTED";
/// The partition of the people's profiles.
const PEOPLE_PK: &str = "PEOPLE";
/// What the partition of a channel's facts starts with.
const FACTS_PK_PREFIX: &str = "FACTS#";
/// What the partition of a channel's sketches of its people starts with.
const SKETCHES_PK_PREFIX: &str = "SKETCHES#";
const MEMORY_PK: &str = "MEM";
/// What the partition of a channel's labels starts with.
const LABELS_PK_PREFIX: &str = "LABELS#";
/// What a label's sort key starts with, in its channel's labels partition.
pub(super) const LABEL_SK_PREFIX: &str = "L#";
/// What the sort key of a post's grounds starts with, in the same partition.
pub(super) const GROUNDS_SK_PREFIX: &str = "P#";
/// The partition of the installations, one item per team.
pub(super) const INSTALLATIONS_PK: &str = "INSTALL";
/// The partition of the stack's own workspace (its one item, `-`).
pub(super) const HOME_PK: &str = "HOME";
/// What the partition of an install link's state starts with.
const OAUTH_PK_PREFIX: &str = "OAUTH#";
/// The partition of the pending deletions and edits.
pub(super) const FORGET_PK: &str = "FORGET";
/// What the partitions of a team's items start with, on a stack installed
/// in many workspaces: `TEAM#{team}#` before the partition the item would
/// have on a single-workspace stack.
const TEAM_PK_PREFIX: &str = "TEAM#";
/// What every message's sort key starts with.
pub(super) const MESSAGE_SK_PREFIX: &str = "M#";

/// An item's primary key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Key {
    pub pk: String,
    pub sk: String,
}

impl Key {
    pub fn new(pk: impl Into<String>, sk: impl Into<String>) -> Key {
        Key {
            pk: pk.into(),
            sk: sk.into(),
        }
    }

    /// A message, its tombstone, or an edit waiting for it.
    pub fn message(channel: &ChannelId, ts: Ts) -> Key {
        Key::new(channel_pk(channel), message_sk(ts))
    }

    /// A channel's record.
    pub fn channel(id: &ChannelId) -> Key {
        Key::new(CHANNELS_PK, format!("C#{id}"))
    }

    /// A cached user.
    pub fn user(id: &UserId) -> Key {
        Key::new(USERS_PK, format!("U#{id}"))
    }

    /// The memory of a scope and kind.
    pub fn memory(scope: &MemoryScope, kind: MemoryKind) -> Key {
        let kind = kind.as_str();
        match scope {
            MemoryScope::Workspace => Key::new(MEMORY_PK, format!("workspace#{kind}")),
            MemoryScope::Channel { channel } => {
                Key::new(MEMORY_PK, format!("channel#{channel}#{kind}"))
            }
            MemoryScope::Thread { channel, thread_ts } => Key::new(
                thread_memory_pk(channel),
                format!("T#{}#{kind}", thread_ts.sort_key()),
            ),
        }
    }

    /// How far reflection read a conversation.
    pub fn reflected(channel: &ChannelId, thread_ts: Option<Ts>) -> Key {
        let at = thread_ts.map_or_else(|| "top".to_owned(), |t| t.sort_key());
        Key::new(REFLECTED_PK, format!("{channel}#{at}"))
    }

    /// A person's profile.
    pub fn profile(id: &UserId) -> Key {
        Key::new(PEOPLE_PK, format!("P#{id}"))
    }

    /// A fact of a channel.
    pub fn fact(channel: &ChannelId, id: &str) -> Key {
        Key::new(facts_pk(channel), format!("F#{id}"))
    }

    /// A person's sketch in a channel.
    pub fn sketch(channel: &ChannelId, user: &UserId) -> Key {
        Key::new(sketches_pk(channel), format!("S#{user}"))
    }

    /// A label of a channel.
    pub fn label(channel: &ChannelId, key: &str) -> Key {
        Key::new(labels_pk(channel), format!("{LABEL_SK_PREFIX}{key}"))
    }

    /// The grounds of one of the bot's posts, beside its labels.
    pub fn grounds(channel: &ChannelId, post: Ts) -> Key {
        Key::new(
            labels_pk(channel),
            format!("{GROUNDS_SK_PREFIX}{}", post.sort_key()),
        )
    }

    /// A workspace's installation of the app.
    pub fn installation(team: &TeamId) -> Key {
        Key::new(INSTALLATIONS_PK, team.as_str())
    }

    /// The stack's own workspace.
    pub fn home() -> Key {
        Key::new(HOME_PK, "-")
    }

    /// An install link's one-time state.
    pub fn oauth_state(state: &str) -> Key {
        Key::new(format!("{OAUTH_PK_PREFIX}{state}"), "-")
    }

    /// A pending deletion or edit of a message.
    pub fn forget(channel: &ChannelId, ts: Ts) -> Key {
        Key::new(FORGET_PK, format!("{channel}#{}", ts.sort_key()))
    }

    /// A job execution's claim.
    pub fn claim(key: &str) -> Key {
        Key::new(format!("CLAIM#{key}"), "-")
    }

    /// A job's written work, kept apart from its claim.
    pub fn draft(key: &str) -> Key {
        Key::new(format!("DRAFT#{key}"), "-")
    }

    /// A counter.
    pub fn counter(key: &str) -> Key {
        Key::new(format!("COUNT#{key}"), "-")
    }
}

/// What every partition (and [`GSI1`] partition) of `team`'s items starts with.
pub(super) fn team_prefix(team: &TeamId) -> String {
    format!("{TEAM_PK_PREFIX}{team}#")
}

/// The partition `pk` is in `team`'s part of the table. The installations,
/// the install states and the home are the stack's, not a team's: they
/// stay where they are.
pub(super) fn team_pk(team: &TeamId, pk: String) -> String {
    if pk == INSTALLATIONS_PK || pk == HOME_PK || pk.starts_with(OAUTH_PK_PREFIX) {
        return pk;
    }
    format!("{}{pk}", team_prefix(team))
}

/// The partition of a channel's labels.
pub(super) fn labels_pk(channel: &ChannelId) -> String {
    format!("{LABELS_PK_PREFIX}{channel}")
}

/// The partition of a channel's facts.
pub(super) fn facts_pk(channel: &ChannelId) -> String {
    format!("{FACTS_PK_PREFIX}{channel}")
}

/// The partition of a channel's sketches.
pub(super) fn sketches_pk(channel: &ChannelId) -> String {
    format!("{SKETCHES_PK_PREFIX}{channel}")
}

pub(super) fn channel_pk(channel: &ChannelId) -> String {
    format!("CH#{channel}")
}

/// A message's sort key: its ts, in an order that sorts as text.
pub(super) fn message_sk(ts: Ts) -> String {
    format!("{MESSAGE_SK_PREFIX}{}", ts.sort_key())
}

/// The [`GSI1`] partition of a conversation: a thread's replies, or the
/// channel's top-level messages.
pub(super) fn conversation_pk(channel: &ChannelId, thread_ts: Option<Ts>) -> String {
    match thread_ts {
        Some(root) => format!("CONV#{channel}#{}", root.sort_key()),
        None => format!("CONV#{channel}#top"),
    }
}

/// The partition (and [`GSI1`] partition) of a channel's thread memories.
pub(super) fn thread_memory_pk(channel: &ChannelId) -> String {
    format!("TMEM#{channel}")
}
