//! Jobs: the work that schedules and queues carry to the functions.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::grounds::Grounds;
use super::ids::{ChannelId, TeamId, Ts};
use super::message::Conversation;
use super::reply::Reply;

/// One unit of deferred work. Serialised as the input of a schedule or the
/// body of a queue message: its `kind`, then its job's fields (the wire
/// format of the struct variants it had before, byte for byte).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Job {
    /// Decide whether to speak in a conversation that went quiet.
    Judgment(JudgmentJob),
    /// Reply in a conversation.
    Response(ResponseJob),
    /// Refresh the memory of one thread: queued by earlier versions when a
    /// thread went quiet, and dropped now (its channel's digest, in
    /// [`Job::ChannelMemory`], writes thread memories).
    ThreadMemory(ThreadMemoryJob),
    /// The recurring run: forget what was deleted, then queue one
    /// [`Job::ChannelMemory`] per active channel and, after them, one
    /// [`Job::WorkspaceMemory`].
    MemorySweep,
    /// Refresh one channel's memories and its threads no judgment covered.
    ChannelMemory(ChannelMemoryJob),
    /// Refresh the workspace memories from the open channels' memories.
    WorkspaceMemory,
    /// Forget what was deleted or edited, or what a channel that became
    /// less visible said, at once (the recurring run does it too).
    Forget,
    /// Decide whether to open a topic in a channel gone quiet (made by the
    /// recurring run, run by the judgment function; `domain::proactive`).
    Proactive(ProactiveJob),
    /// Delete everything its team has in the store: the app was
    /// uninstalled there. Made by ingest, run by the memory function; only
    /// a team's job (see [`TeamJob`]) has anything to purge.
    Purge,
}

/// Decide whether to speak in a conversation that went quiet.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JudgmentJob {
    pub channel: ChannelId,
    pub thread_ts: Option<Ts>,
    /// The newest message the job was made for: a newer one makes it stale.
    pub newest_ts: Ts,
}

/// Reply in a conversation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResponseJob {
    pub channel: ChannelId,
    pub thread_ts: Option<Ts>,
    pub newest_ts: Ts,
    /// A reply to a mention is never stale.
    pub mention: bool,
    /// Its form: a full reply (the default, and what a job made before
    /// forms existed holds), a short one, or a reaction on `newest_ts`.
    #[serde(default, skip_serializing_if = "Reply::is_full")]
    pub reply: Reply,
    /// The newest message of the conversation when the answer was
    /// decided. A bot's message after it (another app's answer) stands
    /// the answer down, as a person's does; one the judgment saw does
    /// not. `None` (a mention, an opening, a job of an earlier
    /// version): `newest_ts`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seen_ts: Option<Ts>,
    /// What the judgment knew when it decided to answer, kept with the
    /// post for the hints people give on it. `None`: a mention's answer,
    /// or a job of an earlier version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grounds: Option<Grounds>,
}

/// Refresh the memory of one thread (an earlier version's job).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThreadMemoryJob {
    pub channel: ChannelId,
    pub thread_ts: Ts,
}

/// Refresh one channel's memories.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChannelMemoryJob {
    pub channel: ChannelId,
}

/// Decide whether to open a topic in a channel gone quiet.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProactiveJob {
    pub channel: ChannelId,
    /// When it was made: any message after it makes it stale.
    pub made_at: Ts,
}

impl JudgmentJob {
    /// The conversation it judges.
    pub fn conversation(&self) -> Conversation {
        Conversation {
            channel: self.channel.clone(),
            thread_ts: self.thread_ts,
        }
    }

    /// Its claim key ([`Job::claim_key`]).
    pub fn claim_key(&self) -> String {
        conversation_key(JobKind::Judgment, &self.conversation(), self.newest_ts)
    }
}

impl ResponseJob {
    /// The conversation it answers in.
    pub fn conversation(&self) -> Conversation {
        Conversation {
            channel: self.channel.clone(),
            thread_ts: self.thread_ts,
        }
    }

    /// Its claim key ([`Job::claim_key`]): one answer per message, whatever
    /// its form.
    pub fn claim_key(&self) -> String {
        conversation_key(JobKind::Response, &self.conversation(), self.newest_ts)
    }
}

impl ProactiveJob {
    /// Its claim key ([`Job::claim_key`]).
    pub fn claim_key(&self) -> String {
        format!("{}:{}:{}", JobKind::Proactive, self.channel, self.made_at)
    }
}

/// `kind:channel:thread-or-top:newest`.
fn conversation_key(kind: JobKind, conversation: &Conversation, newest_ts: Ts) -> String {
    format!(
        "{kind}:{}:{}:{newest_ts}",
        conversation.channel,
        conversation
            .thread_ts
            .map_or_else(|| "top".to_owned(), |t| t.to_string())
    )
}

macro_rules! into_job {
    ($($job:ident => $variant:ident),*) => {
        $(impl From<$job> for Job {
            fn from(job: $job) -> Job {
                Job::$variant(job)
            }
        })*
    };
}

into_job!(
    JudgmentJob => Judgment,
    ResponseJob => Response,
    ThreadMemoryJob => ThreadMemory,
    ChannelMemoryJob => ChannelMemory,
    ProactiveJob => Proactive
);

/// A job as the scheduler and the queues carry it: with the team it is
/// for, on a stack installed in many workspaces. A single-workspace stack's
/// jobs have none, and are written (and read) exactly as [`Job`] alone.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TeamJob {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub team: Option<TeamId>,
    #[serde(flatten)]
    pub job: Job,
}

/// What a job is, for names and logs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum JobKind {
    Judgment,
    Response,
    ThreadMemory,
    MemorySweep,
    ChannelMemory,
    WorkspaceMemory,
    Forget,
    Proactive,
    Purge,
}

impl JobKind {
    /// Every kind (a test holds it to the enum).
    pub const ALL: [JobKind; 9] = [
        JobKind::Judgment,
        JobKind::Response,
        JobKind::ThreadMemory,
        JobKind::MemorySweep,
        JobKind::ChannelMemory,
        JobKind::WorkspaceMemory,
        JobKind::Forget,
        JobKind::Proactive,
        JobKind::Purge,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            JobKind::Judgment => "judgment",
            JobKind::Response => "response",
            JobKind::ThreadMemory => "thread-memory",
            JobKind::MemorySweep => "memory-sweep",
            JobKind::ChannelMemory => "channel-memory",
            JobKind::WorkspaceMemory => "workspace-memory",
            JobKind::Forget => "forget",
            JobKind::Proactive => "proactive",
            JobKind::Purge => "purge",
        }
    }
}

impl fmt::Display for JobKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Job {
    pub fn kind(&self) -> JobKind {
        match self {
            Job::Judgment(_) => JobKind::Judgment,
            Job::Response(_) => JobKind::Response,
            Job::ThreadMemory(_) => JobKind::ThreadMemory,
            Job::MemorySweep => JobKind::MemorySweep,
            Job::ChannelMemory(_) => JobKind::ChannelMemory,
            Job::WorkspaceMemory => JobKind::WorkspaceMemory,
            Job::Forget => JobKind::Forget,
            Job::Proactive(_) => JobKind::Proactive,
            Job::Purge => JobKind::Purge,
        }
    }

    /// The conversation the job is about, if any.
    pub fn conversation(&self) -> Option<Conversation> {
        match self {
            Job::Judgment(job) => Some(job.conversation()),
            Job::Response(job) => Some(job.conversation()),
            Job::ThreadMemory(ThreadMemoryJob { channel, thread_ts }) => {
                Some(Conversation::thread(channel.clone(), *thread_ts))
            }
            // Where it would open a topic: the channel's top level.
            Job::Proactive(ProactiveJob { channel, .. }) => Some(Conversation {
                channel: channel.clone(),
                thread_ts: None,
            }),
            Job::MemorySweep
            | Job::ChannelMemory(_)
            | Job::WorkspaceMemory
            | Job::Forget
            | Job::Purge => None,
        }
    }

    /// Whether a retryable failure brings this job back after a short,
    /// growing delay ([`retry_delay`]) rather than its queue's visibility
    /// timeout: a reply, which a person is waiting for. (A judgment is
    /// retried by Lambda within minutes already; a memory job can wait.)
    pub fn retries_quickly(&self) -> bool {
        matches!(self, Job::Response(_))
    }

    /// The key that identifies one execution of this job: the same job made
    /// twice (a retried delivery, a mention seen as `message` and
    /// `app_mention`) has the same key, so claiming it once is enough to
    /// never act twice.
    pub fn claim_key(&self) -> String {
        match self {
            Job::Judgment(job) => job.claim_key(),
            Job::Response(job) => job.claim_key(),
            Job::ThreadMemory(ThreadMemoryJob { channel, thread_ts }) => {
                format!("{}:{}:{}", self.kind(), channel, thread_ts)
            }
            Job::ChannelMemory(ChannelMemoryJob { channel }) => {
                format!("{}:{}", self.kind(), channel)
            }
            Job::Proactive(job) => job.claim_key(),
            Job::MemorySweep | Job::WorkspaceMemory | Job::Forget | Job::Purge => {
                self.kind().to_string()
            }
        }
    }
}

/// When a job whose `tries`-th try (1 for the first) just failed comes
/// back: after the `tries`-th of `delays` (the setting
/// `retry_delays_seconds`), or `None` past them, when the queue's own
/// redelivery takes over (and, after its `maxReceiveCount`, its dead-letter
/// queue).
pub fn retry_delay(tries: u32, delays: &[u32]) -> Option<u32> {
    let index = usize::try_from(tries).ok()?.checked_sub(1)?;
    delays.get(index).copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_the_kinds_are_listed_once() {
        // A new kind fails to compile here until it is listed below, then
        // this test until it is in `ALL`.
        let listed = |kind: JobKind| match kind {
            JobKind::Judgment
            | JobKind::Response
            | JobKind::ThreadMemory
            | JobKind::MemorySweep
            | JobKind::ChannelMemory
            | JobKind::WorkspaceMemory
            | JobKind::Forget
            | JobKind::Proactive
            | JobKind::Purge => kind.as_str(),
        };
        let names: std::collections::BTreeSet<&str> =
            JobKind::ALL.iter().map(|k| listed(*k)).collect();
        assert_eq!(names.len(), JobKind::ALL.len());
        assert_eq!(names.len(), 9);
    }

    #[test]
    fn a_teams_job_carries_its_team_and_a_stacks_job_is_written_as_before() {
        let job = Job::Judgment(JudgmentJob {
            channel: ChannelId::parse("C1").unwrap(),
            thread_ts: None,
            newest_ts: Ts::parse("5.0").unwrap(),
        });
        let stack = TeamJob {
            team: None,
            job: job.clone(),
        };
        let as_before = serde_json::to_value(&job).unwrap();
        assert_eq!(serde_json::to_value(&stack).unwrap(), as_before);
        assert_eq!(
            serde_json::from_value::<TeamJob>(as_before.clone()).unwrap(),
            stack
        );
        let acme = TeamJob {
            team: Some(TeamId::parse("T0ACME").unwrap()),
            job: job.clone(),
        };
        let json = serde_json::to_value(&acme).unwrap();
        assert_eq!(json["team"], "T0ACME");
        assert_eq!(json["kind"], "judgment");
        assert_eq!(
            serde_json::from_value::<TeamJob>(json.clone()).unwrap(),
            acme
        );
        // A version without teams reads the job and leaves the team.
        assert_eq!(serde_json::from_value::<Job>(json).unwrap(), job);
        // A team that is no Slack id is no job.
        let forged = serde_json::json!({"team": "T1#CH", "kind": "purge"});
        assert!(serde_json::from_value::<TeamJob>(forged).is_err());
    }

    #[test]
    fn jobs_serialise_with_their_kind() {
        let job = Job::Response(ResponseJob {
            channel: ChannelId::parse("C1").unwrap(),
            thread_ts: None,
            newest_ts: Ts::parse("5.0").unwrap(),
            mention: true,
            reply: Reply::Full,
            seen_ts: None,
            grounds: None,
        });
        let json = serde_json::to_value(&job).unwrap();
        // A full reply is written as jobs were before forms existed, so
        // either version of the code reads the other's jobs.
        assert_eq!(
            json,
            serde_json::json!({"kind": "response", "channel": "C1", "thread_ts": null, "newest_ts": "5.000000", "mention": true})
        );
        assert_eq!(serde_json::from_value::<Job>(json).unwrap(), job);
        let reaction = Job::Response(ResponseJob {
            channel: ChannelId::parse("C1").unwrap(),
            thread_ts: None,
            newest_ts: Ts::parse("5.0").unwrap(),
            mention: false,
            reply: Reply::Reaction {
                emoji: crate::EmojiName::wave(),
            },
            seen_ts: Some(Ts::parse("6.0").unwrap()),
            grounds: None,
        });
        let json = serde_json::to_value(&reaction).unwrap();
        assert_eq!(
            json["reply"],
            serde_json::json!({"reaction": {"emoji": "wave"}})
        );
        assert_eq!(json["seen_ts"], "6.000000");
        assert_eq!(serde_json::from_value::<Job>(json).unwrap(), reaction);
        assert_eq!(
            serde_json::from_str::<Job>(r#"{"kind":"memory_sweep"}"#).unwrap(),
            Job::MemorySweep
        );
        let proactive = Job::Proactive(ProactiveJob {
            channel: ChannelId::parse("C1").unwrap(),
            made_at: Ts::parse("5.0").unwrap(),
        });
        let json = serde_json::to_value(&proactive).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"kind": "proactive", "channel": "C1", "made_at": "5.000000"})
        );
        assert_eq!(serde_json::from_value::<Job>(json).unwrap(), proactive);
        assert_eq!(proactive.claim_key(), "proactive:C1:5.000000");
    }

    #[test]
    fn the_same_job_made_twice_has_one_claim_key() {
        let make = |reply| {
            Job::Response(ResponseJob {
                channel: ChannelId::parse("C1").unwrap(),
                thread_ts: Some(Ts::parse("1.0").unwrap()),
                newest_ts: Ts::parse("5.0").unwrap(),
                mention: true,
                reply,
                seen_ts: None,
                grounds: None,
            })
        };
        // Whatever its form: one answer per message.
        assert_eq!(
            make(Reply::Full).claim_key(),
            make(Reply::Short).claim_key()
        );
        let make = || make(Reply::Full);
        assert_eq!(make().claim_key(), make().claim_key());
        assert_eq!(make().claim_key(), "response:C1:1.000000:5.000000");
    }

    #[test]
    fn a_failed_try_comes_back_after_its_delay_then_the_queues_own() {
        let delays = [10, 30, 90];
        let next: Vec<Option<u32>> = (0..=4).map(|t| retry_delay(t, &delays)).collect();
        assert_eq!(next, [None, Some(10), Some(30), Some(90), None]);
        assert_eq!(retry_delay(1, &[]), None);
        assert_eq!(retry_delay(u32::MAX, &delays), None);
    }
}
