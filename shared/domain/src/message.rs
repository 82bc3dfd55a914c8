//! Messages, conversations and users.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use super::files::SharedFile;
use super::ids::{ChannelId, Ts, UserId};
use super::reply::EmojiName;
use super::text::mentions;

/// A message of a channel, as the bot remembers it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    pub channel: ChannelId,
    pub user: UserId,
    pub text: String,
    pub ts: Ts,
    /// The root's `ts` for a reply in a thread; `None` for a top-level
    /// message, including the root of a thread.
    pub thread_ts: Option<Ts>,
    /// Whether a bot (this one or another) wrote it.
    pub is_bot: bool,
    /// The emoji this bot reacted to it with, if it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bot_reaction: Option<EmojiName>,
    /// The files shared with it; its text names each on a line of its own.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<SharedFile>,
}

impl Message {
    /// A message; a `thread_ts` equal to `ts` (how Slack marks the root of a
    /// thread) is normalised to `None`: the root is a top-level message.
    pub fn new(
        channel: ChannelId,
        user: UserId,
        text: impl Into<String>,
        ts: Ts,
        thread_ts: Option<Ts>,
        is_bot: bool,
    ) -> Message {
        Message {
            channel,
            user,
            text: text.into(),
            ts,
            thread_ts: thread_ts.filter(|t| *t != ts),
            is_bot,
            bot_reaction: None,
            files: Vec::new(),
        }
    }

    /// The conversation this message belongs to: its thread, or the
    /// channel's top level.
    pub fn conversation(&self) -> Conversation {
        Conversation {
            channel: self.channel.clone(),
            thread_ts: self.thread_ts,
        }
    }
}

/// The unit that is judged and answered: one thread, or the top level of a
/// channel (all its top-level messages are one conversation, as in the design).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Conversation {
    pub channel: ChannelId,
    /// The root's `ts`, or `None` for the top level.
    pub thread_ts: Option<Ts>,
}

impl Conversation {
    /// The top level of `channel`.
    pub fn top_level(channel: ChannelId) -> Conversation {
        Conversation {
            channel,
            thread_ts: None,
        }
    }

    /// The thread rooted at `root` in `channel`.
    pub fn thread(channel: ChannelId, root: Ts) -> Conversation {
        Conversation {
            channel,
            thread_ts: Some(root),
        }
    }

    /// Whether `message` is part of this conversation. The root of a thread
    /// belongs to the top level and is shown with its thread as its opener.
    pub fn contains(&self, message: &Message) -> bool {
        message.channel == self.channel
            && (message.thread_ts == self.thread_ts
                || self.thread_ts.is_some_and(|root| root == message.ts))
    }
}

/// Whether a message at `ts` in `thread_ts` of `question`'s channel speaks in
/// the question's conversation: the question's thread, or, for a top-level
/// question, the thread under it and the channel's top level until that
/// thread began (`thread_began`: its first reply, if any, the asker's own
/// details too). Once a top-level question has a thread, its conversation
/// is there: another person's new top-level message is another
/// conversation, not an answer. Where a channel's people talk in threads,
/// its conversation is there from the start: [`thread_began`] gives the
/// question's own time.
pub fn speaks_to(
    question: &Message,
    thread_ts: Option<Ts>,
    ts: Ts,
    thread_began: Option<Ts>,
) -> bool {
    match question.thread_ts {
        Some(_) => thread_ts == question.thread_ts,
        None => {
            thread_ts == Some(question.ts)
                || (thread_ts.is_none() && thread_began.is_none_or(|began| ts < began))
        }
    }
}

/// When the thread under a top-level `question` began: its first reply by
/// a person among `channel`'s messages (the asker's own too). A bot's reply
/// does not count: what the channel's people do is learned apart from what
/// the bot did. Where the channel's people talk in threads (`in_threads`,
/// [`talks_in_threads`]), a top-level message begins a conversation of its
/// own, in its thread from the start: the question's own time, so that no
/// other person's new top-level message answers it.
///
/// [`talks_in_threads`]: super::rules::talks_in_threads
pub fn thread_began(question: &Message, channel: &[Message], in_threads: bool) -> Option<Ts> {
    if question.thread_ts.is_some() {
        return None;
    }
    if in_threads {
        return Some(question.ts);
    }
    channel
        .iter()
        .filter(|m| !m.is_bot && m.thread_ts == Some(question.ts))
        .map(|m| m.ts)
        .min()
}

/// A member of the workspace (a person or a bot).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct User {
    pub id: UserId,
    /// The name shown in prompts: display name, else real name, else the id.
    pub name: String,
    pub is_bot: bool,
}

/// The users a prompt over `messages` names: every author, and the first
/// `max_mentioned` other people mentioned, newest messages first.
pub fn named_users<'a>(
    messages: impl DoubleEndedIterator<Item = &'a Message> + Clone,
    max_mentioned: usize,
) -> BTreeSet<UserId> {
    let mut ids: BTreeSet<UserId> = messages.clone().map(|m| m.user.clone()).collect();
    let mut mentioned = 0;
    for id in messages.rev().flat_map(|m| mentions(&m.text)) {
        if ids.contains(&id) {
            continue;
        }
        if mentioned == max_mentioned {
            break;
        }
        mentioned += 1;
        ids.insert(id);
    }
    ids
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(s: &str) -> Ts {
        Ts::parse(s).unwrap()
    }

    fn msg(ts_: &str, thread: Option<&str>) -> Message {
        Message::new(
            ChannelId::parse("C1").unwrap(),
            UserId::parse("U1").unwrap(),
            "hi",
            ts(ts_),
            thread.map(ts),
            false,
        )
    }

    #[test]
    fn a_top_level_questions_conversation_moves_to_its_thread_once_it_has_one() {
        let q = msg("10.0", None);
        let began = Some(ts("20.0"));
        // Its thread, always.
        assert!(speaks_to(&q, Some(ts("10.0")), ts("30.0"), began));
        // The top level, before the thread began and not after.
        assert!(speaks_to(&q, None, ts("15.0"), began));
        assert!(!speaks_to(&q, None, ts("25.0"), began));
        assert!(speaks_to(&q, None, ts("25.0"), None));
        // Another thread, never.
        assert!(!speaks_to(&q, Some(ts("5.0")), ts("25.0"), None));
        // A question in a thread: that thread alone.
        let reply = msg("12.0", Some("10.0"));
        assert!(speaks_to(&reply, Some(ts("10.0")), ts("30.0"), None));
        assert!(!speaks_to(&reply, None, ts("30.0"), None));
    }

    #[test]
    fn a_root_with_thread_ts_equal_to_ts_is_top_level() {
        let root = msg("10.0", Some("10.0"));
        assert_eq!(root.thread_ts, None);
        assert_eq!(
            root.conversation(),
            Conversation::top_level(root.channel.clone())
        );
    }

    #[test]
    fn a_reply_belongs_to_its_thread_and_the_root_opens_it() {
        let root = msg("10.0", None);
        let reply = msg("11.0", Some("10.0"));
        let thread = reply.conversation();
        assert_eq!(
            thread,
            Conversation::thread(reply.channel.clone(), ts("10.0"))
        );
        assert!(thread.contains(&reply));
        assert!(thread.contains(&root));
        assert!(!Conversation::top_level(root.channel.clone()).contains(&reply));
        assert!(Conversation::top_level(root.channel.clone()).contains(&root));
    }

    fn said(user: &str, text: &str, ts: &str) -> Message {
        Message::new(
            ChannelId::parse("C1").unwrap(),
            UserId::parse(user).unwrap(),
            text,
            Ts::parse(ts).unwrap(),
            None,
            false,
        )
    }

    #[test]
    fn authors_and_the_newest_mentions_are_named() {
        let messages = [
            said("U1", "<@U7> <@U8>", "1.0"),
            said("U2", "<@U1> <@U5> <@U6|six>", "2.0"),
        ];
        let ids: Vec<UserId> = named_users(messages.iter(), 2).into_iter().collect();
        // U1 is an author; the newest message's mentions come first.
        let id = |s: &str| UserId::parse(s).unwrap();
        assert_eq!(ids, [id("U1"), id("U2"), id("U5"), id("U6")]);
        assert_eq!(named_users(messages.iter(), 0).len(), 2);
        assert_eq!(named_users(messages.iter(), 9).len(), 6);
    }
}
