//! Channels: who can read one (its kind, and whether it is shared
//! outside), and what Slack says when that changes.

use serde::{Deserialize, Serialize};

use super::ids::ChannelId;

/// A channel the bot is in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Channel {
    pub id: ChannelId,
    pub name: String,
    /// Who can read it; unknown counts as private.
    #[serde(default)]
    pub visibility: Visibility,
}

/// Who can read a channel, as Slack says (`conversations.info`, the event's
/// `channel_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChannelKind {
    /// Every member of the workspace may read it.
    Public,
    /// Only its members.
    Private,
    /// A direct message or a group direct message.
    Direct,
    /// Not known (yet): treated as private.
    Unknown,
}

impl ChannelKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ChannelKind::Public => "public",
            ChannelKind::Private => "private",
            ChannelKind::Direct => "direct",
            ChannelKind::Unknown => "unknown",
        }
    }

    /// The kind named by [`ChannelKind::as_str`]; anything else is unknown.
    pub fn from_name(name: &str) -> ChannelKind {
        match name {
            "public" => ChannelKind::Public,
            "private" => ChannelKind::Private,
            "direct" => ChannelKind::Direct,
            _ => ChannelKind::Unknown,
        }
    }

    /// The kind of an event's `channel_type` (`channel`, `group`, `im`, `mpim`).
    pub fn from_channel_type(channel_type: &str) -> ChannelKind {
        match channel_type {
            "channel" => ChannelKind::Public,
            "group" => ChannelKind::Private,
            "im" | "mpim" => ChannelKind::Direct,
            _ => ChannelKind::Unknown,
        }
    }
}

/// A channel's visibility: its kind, and whether people outside the
/// organisation can read it (Slack Connect).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Visibility {
    pub kind: ChannelKind,
    /// Shared (or being shared) with another organisation.
    pub external: bool,
}

impl Default for Visibility {
    fn default() -> Self {
        Visibility::UNKNOWN
    }
}

impl Visibility {
    /// Nothing known: private in effect.
    pub const UNKNOWN: Visibility = Visibility {
        kind: ChannelKind::Unknown,
        external: false,
    };
    /// A public channel of the organisation only.
    pub const PUBLIC: Visibility = Visibility {
        kind: ChannelKind::Public,
        external: false,
    };
    /// A private channel of the organisation only.
    pub const PRIVATE: Visibility = Visibility {
        kind: ChannelKind::Private,
        external: false,
    };
    /// A direct message.
    pub const DIRECT: Visibility = Visibility {
        kind: ChannelKind::Direct,
        external: false,
    };

    /// The same channel, shared outside the organisation.
    pub fn shared_externally(self) -> Visibility {
        Visibility {
            external: true,
            ..self
        }
    }

    /// From `conversations.info`'s flags. `is_shared` alone (sharing within
    /// one Enterprise organisation) is not "outside".
    pub fn from_flags(
        is_private: bool,
        is_im: bool,
        is_mpim: bool,
        is_ext_shared: bool,
        is_pending_ext_shared: bool,
    ) -> Visibility {
        let kind = if is_im || is_mpim {
            ChannelKind::Direct
        } else if is_private {
            ChannelKind::Private
        } else {
            ChannelKind::Public
        };
        Visibility {
            kind,
            external: is_ext_shared || is_pending_ext_shared,
        }
    }

    /// Whether what is said in it may be repeated elsewhere in the workspace.
    pub fn is_open(self) -> bool {
        self.kind == ChannelKind::Public && !self.external
    }

    /// Whether its readers may be told what was said in open channels.
    pub fn may_hear_others(self) -> bool {
        self.kind != ChannelKind::Unknown && !self.external
    }

    /// After Slack said the visibility changed. A change towards more
    /// readers (public again, unshared) is not taken on trust from the
    /// event alone: the kind becomes unknown until `conversations.info`
    /// confirms it, so the channel is private in effect meanwhile.
    pub fn after(self, change: VisibilityChange) -> Visibility {
        match change {
            VisibilityChange::ConvertedToPrivate => Visibility {
                kind: ChannelKind::Private,
                ..self
            },
            VisibilityChange::SharedExternally => self.shared_externally(),
            VisibilityChange::ConvertedToPublic | VisibilityChange::Unshared => Visibility {
                kind: ChannelKind::Unknown,
                ..self
            },
        }
    }
}

/// What Slack announced about a channel's readers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum VisibilityChange {
    /// `message` subtype `channel_convert_to_private`.
    ConvertedToPrivate,
    /// `message` subtype `channel_convert_to_public`.
    ConvertedToPublic,
    /// `channel_shared`.
    SharedExternally,
    /// `channel_unshared`.
    Unshared,
}
