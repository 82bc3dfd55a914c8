//! What a prompt for one channel may draw from (who can read a channel is
//! `channel.rs`'s), and what a deletion makes the memories forget.
//!
//! The rule: what is said in a channel stays in it. Another channel's
//! messages, memories and thread summaries reach a prompt only when that
//! channel is public and not shared outside the organisation, and the prompt's
//! own channel is not shared outside it either (its readers could include
//! another company). The workspace memories are written only from such open
//! channels. A channel whose visibility is not known counts as private.

use chrono::{DateTime, Utc};

use super::channel::{Channel, VisibilityChange};
use super::ids::{ChannelId, Ts};
use super::memory::Memory;

/// Whom a prompt is for: the members of one channel, or the workspace
/// memories (which every channel's prompts may show).
#[derive(Debug, Clone, Copy)]
pub enum Audience<'a> {
    Channel(&'a Channel),
    WorkspaceMemory,
}

/// What a prompt draws from.
#[derive(Debug, Clone, Copy)]
pub enum Source<'a> {
    /// A channel's name, messages, memories or thread summaries.
    Channel(&'a Channel),
    /// The workspace memories.
    WorkspaceMemory,
}

/// Whether a prompt for `audience` may use `source`. Every prompt builder
/// asks this for every source other than the conversation itself.
pub fn may_use(audience: Audience<'_>, source: Source<'_>) -> bool {
    match (audience, source) {
        (Audience::Channel(own), Source::Channel(other)) if own.id == other.id => true,
        (Audience::Channel(own), Source::Channel(other)) => {
            other.visibility.is_open() && own.visibility.may_hear_others()
        }
        (Audience::Channel(own), Source::WorkspaceMemory) => own.visibility.may_hear_others(),
        (Audience::WorkspaceMemory, Source::Channel(channel)) => channel.visibility.is_open(),
        (Audience::WorkspaceMemory, Source::WorkspaceMemory) => true,
    }
}

/// A message deleted or edited after memories may have covered it: the
/// memories of its thread, its channel and (for an open channel) the
/// workspace are rewritten from what remains. Or a whole channel that
/// became less visible (`ts` zero): what it said leaves the memories other
/// channels see.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Forget {
    pub channel: ChannelId,
    pub ts: Ts,
    /// Its thread's root, when Slack said (a deleted root is its own).
    pub thread_ts: Option<Ts>,
    /// When the deletion or edit arrived.
    pub at: DateTime<Utc>,
}

impl Forget {
    /// Everything a channel said so far, for the memories others see.
    pub fn whole_channel(channel: ChannelId, at: DateTime<Utc>) -> Forget {
        Forget {
            channel,
            ts: Ts::from_parts(0, 0),
            thread_ts: None,
            at,
        }
    }

    pub fn is_whole_channel(&self) -> bool {
        self.ts == Ts::from_parts(0, 0)
    }

    /// Whether a change of visibility means the channel's words must leave
    /// the memories other channels see.
    pub fn needed_after(change: VisibilityChange) -> bool {
        matches!(
            change,
            VisibilityChange::ConvertedToPrivate | VisibilityChange::SharedExternally
        )
    }

    /// Whether `memory` may hold what this forget names: it was written
    /// from inputs read no later than the deletion or edit, and covers its
    /// time. (Which memories to look at, by scope, is the caller's.)
    pub fn may_be_in(&self, memory: &Memory) -> bool {
        memory.updated_at <= self.at
            && (self.is_whole_channel()
                || memory.newest_ts.is_none_or(|covered| covered >= self.ts))
    }

    /// The thread whose memory may hold the message: its own thread, else
    /// the thread it may have opened.
    pub fn thread(&self) -> Ts {
        self.thread_ts.unwrap_or(self.ts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::channel::{ChannelKind, Visibility};

    fn ch(id: &str, visibility: Visibility) -> Channel {
        Channel {
            id: ChannelId::parse(id).unwrap(),
            name: id.to_lowercase(),
            visibility,
        }
    }

    const EXTERNAL_PUBLIC: Visibility = Visibility {
        kind: ChannelKind::Public,
        external: true,
    };

    #[test]
    fn a_conversation_always_sees_its_own_channel() {
        for v in [
            Visibility::PUBLIC,
            Visibility::PRIVATE,
            Visibility::DIRECT,
            Visibility::UNKNOWN,
            EXTERNAL_PUBLIC,
        ] {
            let c = ch("C1", v);
            assert!(may_use(Audience::Channel(&c), Source::Channel(&c)), "{v:?}");
        }
    }

    #[test]
    fn only_open_channels_reach_other_channels() {
        let public = ch("C1", Visibility::PUBLIC);
        let audiences = [
            ch("C2", Visibility::PUBLIC),
            ch("G2", Visibility::PRIVATE),
            ch("D2", Visibility::DIRECT),
        ];
        for a in &audiences {
            assert!(may_use(Audience::Channel(a), Source::Channel(&public)));
            for hidden in [
                ch("G1", Visibility::PRIVATE),
                ch("D1", Visibility::DIRECT),
                ch("C9", Visibility::UNKNOWN),
                ch("C8", EXTERNAL_PUBLIC),
            ] {
                assert!(
                    !may_use(Audience::Channel(a), Source::Channel(&hidden)),
                    "{hidden:?} must not reach {a:?}"
                );
            }
        }
    }

    #[test]
    fn a_channel_shared_outside_or_unknown_hears_nothing_else() {
        let public = ch("C1", Visibility::PUBLIC);
        for own in [
            ch("C2", EXTERNAL_PUBLIC),
            ch("G2", Visibility::PRIVATE.shared_externally()),
            ch("C3", Visibility::UNKNOWN),
        ] {
            assert!(!may_use(Audience::Channel(&own), Source::Channel(&public)));
            assert!(!may_use(Audience::Channel(&own), Source::WorkspaceMemory));
        }
        let private = ch("G1", Visibility::PRIVATE);
        assert!(may_use(
            Audience::Channel(&private),
            Source::WorkspaceMemory
        ));
    }

    #[test]
    fn the_workspace_memory_is_written_from_open_channels_only() {
        assert!(may_use(
            Audience::WorkspaceMemory,
            Source::Channel(&ch("C1", Visibility::PUBLIC))
        ));
        for v in [
            Visibility::PRIVATE,
            Visibility::DIRECT,
            Visibility::UNKNOWN,
            EXTERNAL_PUBLIC,
        ] {
            assert!(!may_use(
                Audience::WorkspaceMemory,
                Source::Channel(&ch("C1", v))
            ));
        }
    }

    #[test]
    fn slack_flags_make_a_visibility() {
        assert_eq!(
            Visibility::from_flags(false, false, false, false, false),
            Visibility::PUBLIC
        );
        assert_eq!(
            Visibility::from_flags(true, false, false, false, false),
            Visibility::PRIVATE
        );
        assert_eq!(
            Visibility::from_flags(true, false, true, false, false),
            Visibility::DIRECT
        );
        assert_eq!(
            Visibility::from_flags(false, true, false, false, false),
            Visibility::DIRECT
        );
        assert_eq!(
            Visibility::from_flags(false, false, false, false, true),
            EXTERNAL_PUBLIC
        );
        assert_eq!(
            ChannelKind::from_channel_type("group"),
            ChannelKind::Private
        );
        assert_eq!(ChannelKind::from_channel_type("mpim"), ChannelKind::Direct);
        assert_eq!(ChannelKind::from_channel_type("?"), ChannelKind::Unknown);
        for k in [
            ChannelKind::Public,
            ChannelKind::Private,
            ChannelKind::Direct,
            ChannelKind::Unknown,
        ] {
            assert_eq!(ChannelKind::from_name(k.as_str()), k);
        }
    }

    #[test]
    fn changes_towards_more_readers_wait_for_confirmation() {
        let p = Visibility::PUBLIC;
        assert_eq!(
            p.after(VisibilityChange::ConvertedToPrivate),
            Visibility::PRIVATE
        );
        assert!(p.after(VisibilityChange::SharedExternally).external);
        let back = Visibility::PRIVATE.after(VisibilityChange::ConvertedToPublic);
        assert!(!back.is_open(), "public again only once Slack confirms");
        let unshared = EXTERNAL_PUBLIC.after(VisibilityChange::Unshared);
        assert!(!unshared.is_open());
    }

    #[test]
    fn fewer_readers_make_the_channel_leave_others_memories() {
        assert!(Forget::needed_after(VisibilityChange::ConvertedToPrivate));
        assert!(Forget::needed_after(VisibilityChange::SharedExternally));
        assert!(!Forget::needed_after(VisibilityChange::ConvertedToPublic));
        assert!(!Forget::needed_after(VisibilityChange::Unshared));
        let f = Forget::whole_channel(ChannelId::parse("C1").unwrap(), DateTime::UNIX_EPOCH);
        assert!(f.is_whole_channel());
    }

    #[test]
    fn a_forgotten_message_names_its_thread() {
        let f = Forget {
            channel: ChannelId::parse("C1").unwrap(),
            ts: Ts::parse("5.0").unwrap(),
            thread_ts: None,
            at: DateTime::<Utc>::from_timestamp(0, 0).unwrap(),
        };
        assert_eq!(f.thread(), Ts::parse("5.0").unwrap());
        let reply = Forget {
            thread_ts: Some(Ts::parse("4.0").unwrap()),
            ..f
        };
        assert_eq!(reply.thread(), Ts::parse("4.0").unwrap());
    }
}
