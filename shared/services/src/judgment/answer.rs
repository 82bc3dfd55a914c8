//! Where and to what the bot answers, once the judgment decided to: the
//! response job, sent to the scheduler or the queue by its delay.

use chrono::{DateTime, Duration, Utc};

use myao_core::ports::PortError;
use myao_core::schedule::ScheduleName;
use myao_domain::grounds::Grounds;
use myao_domain::rules;
use myao_domain::{Conversation, Job, JobKind, Message, Reply, ResponseJob, Ts};

use super::outcome::Ruling;
use crate::JobContext;

/// Jobs whose wait is at least this long go to the scheduler; shorter ones to
/// the queue (EventBridge Scheduler fires with one-minute precision).
const SCHEDULER_MIN_DELAY_SECONDS: u32 = 60;

/// The newest message the judgment read, when it is newer than the one
/// answered: a bot's message after it is news to the answer
/// ([`Job::Response`]'s `seen_ts`).
fn seen(messages: &[Message], answered: Ts) -> Option<Ts> {
    messages
        .iter()
        .map(|m| m.ts)
        .max()
        .filter(|s| *s > answered)
}

/// Where and to what the bot answers.
pub(super) struct Answer {
    job: Job,
    name: ScheduleName,
}

impl Answer {
    /// The answer to what the ruling names: in the thread of a top-level
    /// message when others came after it or the channel's people talk in
    /// threads (`in_threads`), else in the judged conversation. A reaction
    /// goes on the newest person's message, in the judged conversation.
    pub(super) fn of(
        conversation: &Conversation,
        messages: &[Message],
        ruling: &Ruling,
        newest_ts: Ts,
        reply: Reply,
        grounds: Grounds,
        in_threads: bool,
    ) -> Answer {
        if let Reply::Reaction { .. } = reply {
            let on = messages
                .iter()
                .rev()
                .find(|m| !m.is_bot && conversation.contains(m))
                .map_or(newest_ts, |m| m.ts);
            let job = Job::Response(ResponseJob {
                channel: conversation.channel.clone(),
                thread_ts: conversation.thread_ts,
                newest_ts: on,
                mention: false,
                reply,
                seen_ts: seen(messages, on),
                grounds: Some(grounds),
            });
            return Answer {
                job,
                name: ScheduleName::for_conversation(JobKind::Response, conversation),
            };
        }
        let answers = ruling.score.answers.unwrap_or(newest_ts);
        let thread_ts = rules::reply_thread(conversation.thread_ts, messages, answers, in_threads);
        let (thread_ts, newest_ts) = match (conversation.thread_ts, thread_ts) {
            // Answering an earlier top-level message in its thread: the
            // response follows that thread.
            (None, Some(root)) => (Some(root), answers),
            _ => (conversation.thread_ts, newest_ts),
        };
        let job = Job::Response(ResponseJob {
            channel: conversation.channel.clone(),
            thread_ts,
            newest_ts,
            mention: false,
            reply,
            seen_ts: seen(messages, newest_ts),
            grounds: Some(grounds),
        });
        let answered = Conversation {
            channel: conversation.channel.clone(),
            thread_ts,
        };
        Answer {
            job,
            name: ScheduleName::for_conversation(JobKind::Response, &answered),
        }
    }

    /// Makes the response job, due in `delay` seconds; returns when.
    pub(super) async fn send(
        &self,
        cx: &JobContext<'_>,
        delay: u32,
    ) -> Result<DateTime<Utc>, PortError> {
        let at = cx.now() + Duration::seconds(i64::from(delay));
        if delay >= SCHEDULER_MIN_DELAY_SECONDS {
            cx.scheduler().upsert(&self.name, at, &self.job).await?;
        } else {
            cx.queue().send(&self.job, delay).await?;
        }
        Ok(at)
    }
}
