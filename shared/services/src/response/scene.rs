//! What a response job reads of its conversation, once, at its start, and
//! the rules that tell from it whether the job came too late. The reply's
//! context is built from the same reads ([`Scene::context_read`]): no
//! check and no prompt reads the conversation again.

use myao_core::ports::PortError;
use myao_domain::rules::talks_in_threads;
use myao_domain::{Channel, Conversation, Message, Reply, ResponseJob, Ts, UserId};

use crate::context::{self, Recent, RECENT};
use crate::JobContext;

/// How many replies under an answered top-level message are read to tell
/// whether someone else answered it first, and how many of a thread's
/// newest replies tell when it began.
const RECENT_REPLIES: usize = 20;

/// A response job's conversation as it read it.
pub(super) struct Scene {
    /// Whether the conversation is a thread (else the top level).
    in_thread: bool,
    /// The conversation's newest messages, oldest first (a thread's
    /// replies, or the channel's top level): at least [`RECENT`] and the
    /// prompt's `message_limit`.
    conversation: Vec<Message>,
    /// A thread's root.
    root: Option<Message>,
    /// The channel's newest messages, of every conversation, oldest first:
    /// at least [`RECENT`] and the prompt's `channel_messages_limit`.
    window: Vec<Message>,
    /// The message the job answers (gone: `None`).
    pub(super) answered: Option<Message>,
    /// The replies under the answered message, for an answer at the top
    /// level (its newest [`RECENT_REPLIES`]).
    under: Vec<Message>,
}

impl Scene {
    /// Reads the scene of `job`: an opening needs only the channel's
    /// newest messages (the silence it would break), a reply its
    /// conversation, the channel's window and the message it answers.
    pub(super) async fn read(cx: &JobContext<'_>, job: &ResponseJob) -> Result<Scene, PortError> {
        let settings = cx.settings();
        let store = cx.store();
        let conversation = conversation_of(job);
        let window = store
            .recent_messages(
                &job.channel,
                (settings.channel_messages_limit as usize).max(RECENT),
            )
            .await?;
        if matches!(job.reply, Reply::Opener { .. }) {
            return Ok(Scene {
                in_thread: conversation.thread_ts.is_some(),
                conversation: Vec::new(),
                root: None,
                window,
                answered: None,
                under: Vec::new(),
            });
        }
        let messages = store
            .conversation_messages(&conversation, (settings.message_limit as usize).max(RECENT))
            .await?;
        let root = match conversation.thread_ts {
            Some(root) => store.get_message(&job.channel, root).await?,
            None => None,
        };
        // Answering a thread's root (a question's own thread), that is it.
        let answered = match &root {
            Some(r) if r.ts == job.newest_ts => Some(r.clone()),
            _ => store.get_message(&job.channel, job.newest_ts).await?,
        };
        let under = match (conversation.thread_ts, &answered) {
            (None, Some(_)) => {
                let thread = Conversation::thread(job.channel.clone(), job.newest_ts);
                store.conversation_messages(&thread, RECENT_REPLIES).await?
            }
            _ => Vec::new(),
        };
        Ok(Scene {
            in_thread: conversation.thread_ts.is_some(),
            conversation: messages,
            root,
            window,
            answered,
            under,
        })
    }

    /// What the reply's context is built around ([`context::build_from`]):
    /// the channel, its newest `channel_messages_limit` messages, and a
    /// thread's newest `message_limit` with its root first.
    pub(super) fn context_read(self, cx: &JobContext<'_>, channel: Channel) -> context::Read {
        let settings = cx.settings();
        let mut window = self.window;
        window.drain(
            ..window
                .len()
                .saturating_sub(settings.channel_messages_limit as usize),
        );
        let mut thread = Vec::new();
        if self.in_thread {
            let mut replies = self.conversation;
            replies.drain(
                ..replies
                    .len()
                    .saturating_sub(settings.message_limit as usize),
            );
            thread.extend(self.root);
            thread.extend(replies);
        }
        context::Read {
            channel,
            window,
            thread,
        }
    }

    /// [`Recent`] of the conversation after `since` (a thread's root only
    /// when it has no reply), over its newest [`RECENT`] messages.
    pub(super) fn recent(&self, since: Ts) -> Option<Recent> {
        let newest = newest(&self.conversation, RECENT);
        let root = self.root.as_ref().filter(|_| newest.is_empty());
        Recent::of(newest, root, since)
    }

    /// An opening is stale after any message in the channel, in a thread
    /// too: the silence it would break is over.
    pub(super) fn opening_broken(&self, newest_ts: Ts) -> bool {
        self.window.iter().any(|m| m.ts > newest_ts)
    }

    /// An answer at the top level is late too once the message it answers
    /// has a thread: that thread is where it is judged and answered (its
    /// author's words there made a judgment of their own), so it is
    /// answered once.
    pub(super) fn answered_in_its_thread(&self) -> bool {
        self.answered
            .as_ref()
            .is_some_and(|a| self.under.iter().any(|m| m.ts > a.ts))
    }

    /// An answer in the thread of the top-level message it answers is stale
    /// once a person spoke at the top level after what its judgment read
    /// (`seen_ts`, else that message) and before a reply began the thread:
    /// until then the top level is the message's conversation
    /// ([`speaks_to`]), and the top level's own judgment decides again, as
    /// it does for an answer that goes to the top level. Not where the
    /// channel's people talk in threads ([`talks_in_threads`], over its
    /// window): there a new top-level message is another conversation.
    ///
    /// [`speaks_to`]: myao_domain::message::speaks_to
    pub(super) fn spoken_after_at_the_top_level(
        &self,
        conversation: &Conversation,
        newest_ts: Ts,
        seen_ts: Option<Ts>,
    ) -> bool {
        if conversation.thread_ts != Some(newest_ts) || talks_in_threads(&self.window) {
            return false;
        }
        let seen = seen_ts.unwrap_or(newest_ts).max(newest_ts);
        let began = newest(&self.conversation, RECENT_REPLIES)
            .iter()
            .filter(|m| m.thread_ts.is_some())
            .map(|m| m.ts)
            .min();
        self.window.iter().any(|m| {
            !m.is_bot && m.thread_ts.is_none() && m.ts > seen && began.is_none_or(|b| m.ts < b)
        })
    }
}

/// The conversation a job answers in.
pub(super) fn conversation_of(job: &ResponseJob) -> Conversation {
    Conversation {
        channel: job.channel.clone(),
        thread_ts: job.thread_ts,
    }
}

/// The newest `n` of `messages` (oldest first).
fn newest(messages: &[Message], n: usize) -> &[Message] {
    &messages[messages.len().saturating_sub(n)..]
}

/// Whether someone answered since the judgment, by what `recent` shows: a
/// person spoke (their own judgment decides); this bot did (`bot`, when
/// known; it already answered, e.g. a mention); or another app did after
/// the judgment read the conversation (up to `seen_ts`): its answer is an
/// answer, as a person's is. A bot the judgment saw and still decided to
/// answer after (a CI notice) does not count.
pub(super) fn answered_since(
    recent: &Recent,
    newest_ts: Ts,
    seen_ts: Option<Ts>,
    bot: Option<&UserId>,
) -> bool {
    let Recent {
        person_after,
        bots_after,
        ..
    } = recent;
    let seen = seen_ts.unwrap_or(newest_ts).max(newest_ts);
    let bot_spoke = if *person_after || bots_after.is_empty() {
        false
    } else if bots_after.iter().any(|(_, ts)| *ts > seen) {
        true
    } else {
        bots_after.iter().any(|(b, _)| bot.is_none_or(|me| me == b))
    };
    *person_after || bot_spoke
}

/// Whether [`answered_since`] needs to know the bot's id to tell: only
/// bots spoke after the job, none after what the judgment saw.
pub(super) fn needs_bot(recent: &Recent, newest_ts: Ts, seen_ts: Option<Ts>) -> bool {
    let seen = seen_ts.unwrap_or(newest_ts).max(newest_ts);
    !recent.person_after
        && !recent.bots_after.is_empty()
        && recent.bots_after.iter().all(|(_, ts)| *ts <= seen)
}
