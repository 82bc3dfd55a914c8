//! The replay's stand-ins for the outside world: a Slack that knows the
//! export's users and channels and "posts" at the virtual time, an LLM that
//! refuses (the dry run), one that only writes placeholder replies (the
//! offline eval), and a meter around whichever LLM is used.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex, MutexGuard};

use async_trait::async_trait;
use myao_core::adapters::system::ManualClock;
use myao_core::ports::{
    Clock, Llm, LlmReply, LlmRequest, LlmRole, PortError, Reacted, Secrets, SlackApi,
};
use myao_domain::{Channel, ChannelId, EmojiName, TeamId, Ts, User, UserId};

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// A message the bot posted during a replay.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Post {
    pub channel: ChannelId,
    pub thread_ts: Option<Ts>,
    pub ts: Ts,
    pub text: String,
    /// What [`SlackApi::post_marked`] gave it, for `find_marked`.
    pub marker: Option<String>,
}

/// Slack during a replay: `users.info` and `conversations.info` answer from
/// the export, `auth.test` names the bot, and `chat.postMessage` records the
/// post and gives it a `ts` at the virtual now, unique in its channel (the
/// response service then stores the bot's message, so later prompts see it).
pub struct ReplaySlack {
    clock: Arc<ManualClock>,
    bot: UserId,
    users: HashMap<UserId, User>,
    channels: HashMap<ChannelId, Channel>,
    /// Every `ts` in use per channel: the export's and the posts'.
    taken: Mutex<HashMap<ChannelId, BTreeSet<Ts>>>,
    posts: Mutex<Vec<Post>>,
    /// The reactions added: channel, message, emoji.
    reactions: Mutex<Vec<(ChannelId, Ts, EmojiName)>>,
}

impl ReplaySlack {
    pub fn new(
        clock: Arc<ManualClock>,
        bot: UserId,
        users: &[User],
        channels: &[Channel],
        taken: impl IntoIterator<Item = (ChannelId, Ts)>,
    ) -> ReplaySlack {
        let mut used: HashMap<ChannelId, BTreeSet<Ts>> = HashMap::new();
        for (channel, ts) in taken {
            used.entry(channel).or_default().insert(ts);
        }
        ReplaySlack {
            clock,
            bot,
            users: users.iter().map(|u| (u.id.clone(), u.clone())).collect(),
            channels: channels.iter().map(|c| (c.id.clone(), c.clone())).collect(),
            taken: Mutex::new(used),
            posts: Mutex::new(Vec::new()),
            reactions: Mutex::new(Vec::new()),
        }
    }

    /// Everything posted so far, in order.
    pub fn posts(&self) -> Vec<Post> {
        lock(&self.posts).clone()
    }

    /// Records a post at the virtual now, its `ts` unique in its channel.
    fn record(
        &self,
        channel: &ChannelId,
        thread_ts: Option<Ts>,
        text: &str,
        marker: Option<&str>,
    ) -> Ts {
        let mut ts = Ts::from_datetime(self.clock.now());
        {
            let mut taken = lock(&self.taken);
            let used = taken.entry(channel.clone()).or_default();
            // A reply to a mention is posted at the mention's own instant.
            while used.contains(&ts) {
                ts = Ts::from_parts(ts.secs(), ts_micros(ts) + 1);
            }
            used.insert(ts);
        }
        lock(&self.posts).push(Post {
            channel: channel.clone(),
            thread_ts,
            ts,
            text: text.to_owned(),
            marker: marker.map(str::to_owned),
        });
        ts
    }
}

#[async_trait]
impl SlackApi for ReplaySlack {
    /// The replay's Slack stands in for every team's: one export, one bot.
    fn for_team(self: Arc<Self>, _team: &TeamId, _tokens: Arc<dyn Secrets>) -> Arc<dyn SlackApi> {
        self
    }

    /// The replay's timeline shows the reply itself; a status would be gone
    /// by the time anyone read it.
    async fn set_status(
        &self,
        _channel: &ChannelId,
        _thread_ts: Ts,
        _status: &str,
        _loading: &[String],
    ) -> Result<(), PortError> {
        Ok(())
    }

    /// An export holds no files: each is named as unreadable.
    async fn download(&self, _url: &str, _max_bytes: u64) -> Result<Vec<u8>, PortError> {
        Err(PortError::refused("slack", "an export holds no files"))
    }

    async fn post_message(
        &self,
        channel: &ChannelId,
        thread_ts: Option<Ts>,
        text: &str,
    ) -> Result<Ts, PortError> {
        Ok(self.record(channel, thread_ts, text, None))
    }

    async fn post_marked(
        &self,
        channel: &ChannelId,
        thread_ts: Option<Ts>,
        text: &str,
        marker: &str,
    ) -> Result<Ts, PortError> {
        Ok(self.record(channel, thread_ts, text, Some(marker)))
    }

    async fn find_marked(
        &self,
        channel: &ChannelId,
        thread_ts: Option<Ts>,
        since: Ts,
        marker: &str,
    ) -> Result<Option<Ts>, PortError> {
        Ok(lock(&self.posts)
            .iter()
            .find(|p| {
                p.channel == *channel
                    && p.thread_ts == thread_ts
                    && p.ts >= since
                    && p.marker.as_deref() == Some(marker)
            })
            .map(|p| p.ts))
    }

    async fn user_info(&self, user: &UserId) -> Result<User, PortError> {
        self.users
            .get(user)
            .cloned()
            .ok_or_else(|| PortError::refused("slack", "users.info: user_not_found"))
    }

    async fn channel_info(&self, channel: &ChannelId) -> Result<Channel, PortError> {
        self.channels
            .get(channel)
            .cloned()
            .ok_or_else(|| PortError::refused("slack", "conversations.info: channel_not_found"))
    }

    async fn auth_test(&self) -> Result<UserId, PortError> {
        Ok(self.bot.clone())
    }

    /// A replay has no workspace of its own to learn: its export's events
    /// are the stack's (`slack_team_id` unset, nothing offered).
    async fn own_workspace(&self) -> Result<myao_domain::install::Home, PortError> {
        Err(PortError::refused("slack", "a replay has no workspace"))
    }

    async fn add_reaction(
        &self,
        channel: &ChannelId,
        ts: Ts,
        emoji: &EmojiName,
    ) -> Result<Reacted, PortError> {
        let mut reactions = lock(&self.reactions);
        let key = (channel.clone(), ts, emoji.clone());
        if reactions.contains(&key) {
            return Ok(Reacted::AlreadyThere);
        }
        reactions.push(key);
        Ok(Reacted::Added)
    }

    /// An export holds no emoji list: every valid name is tried as it is.
    async fn emoji_names(&self) -> Result<Arc<BTreeSet<String>>, PortError> {
        Err(PortError::refused(
            "slack",
            "emoji.list: not in a workspace export",
        ))
    }
}

/// The microseconds of a `ts` (the core's `Ts` shows them only in its text).
fn ts_micros(ts: Ts) -> u32 {
    ts.to_datetime().timestamp_subsec_micros()
}

/// The error every dry-run LLM call returns.
pub const DRY_RUN: &str = "dry run: no LLM configured";

/// The LLM of a dry run: it answers nothing, so the core stays silent and
/// no reply is invented. The prompts are recorded by [`MeteredLlm`].
#[derive(Debug, Default, Clone, Copy)]
pub struct DryRunLlm;

#[async_trait]
impl Llm for DryRunLlm {
    async fn complete(&self, _request: &LlmRequest) -> Result<LlmReply, PortError> {
        Err(PortError::refused("llm", DRY_RUN))
    }
}

/// The reply [`OfflineWriter`] writes.
pub const PLACEHOLDER_REPLY: &str = "(offline: a reply would be here)";

/// The LLM of an offline eval: it judges nothing and remembers nothing
/// (refused, as in a dry run, so the ambiguous band stays silent), but
/// writes a placeholder reply. The rule stage's answers are then posted and
/// stored like real ones, so what follows them (the bot spoke last, its
/// cooldown, a reply in its thread, a question it answered) plays out as it
/// would with an LLM.
#[derive(Debug, Default, Clone, Copy)]
pub struct OfflineWriter;

#[async_trait]
impl Llm for OfflineWriter {
    async fn complete(&self, request: &LlmRequest) -> Result<LlmReply, PortError> {
        match request.role {
            LlmRole::Response => Ok(LlmReply {
                text: PLACEHOLDER_REPLY.to_owned(),
                prompt_tokens: 0,
                completion_tokens: 0,
                cached_tokens: 0,
            }),
            LlmRole::Judgment | LlmRole::Memory => Err(PortError::refused("llm", DRY_RUN)),
        }
    }
}

/// Calls, failures and tokens of one role.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RoleStats {
    pub calls: u64,
    pub failures: u64,
    pub prompt_chars: u64,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
}

/// One call, as recorded for the timeline.
#[derive(Debug, Clone)]
pub struct Call {
    pub role: LlmRole,
    pub prompt: String,
    /// Whether the LLM answered, or how it failed.
    pub outcome: Result<(), PortError>,
}

/// Counts calls and tokens per role around any [`Llm`], and keeps the
/// prompts (when asked) until the replay takes them.
pub struct MeteredLlm {
    inner: Arc<dyn Llm>,
    keep_prompts: bool,
    stats: Mutex<BTreeMap<&'static str, RoleStats>>,
    calls: Mutex<Vec<Call>>,
}

impl MeteredLlm {
    pub fn new(inner: Arc<dyn Llm>, keep_prompts: bool) -> MeteredLlm {
        MeteredLlm {
            inner,
            keep_prompts,
            stats: Mutex::new(BTreeMap::new()),
            calls: Mutex::new(Vec::new()),
        }
    }

    /// The counts per role (`judgment`, `response`, `memory`).
    pub fn stats(&self) -> BTreeMap<&'static str, RoleStats> {
        lock(&self.stats).clone()
    }

    /// The calls recorded since the last take (none unless prompts are kept).
    pub fn take_calls(&self) -> Vec<Call> {
        std::mem::take(&mut *lock(&self.calls))
    }
}

#[async_trait]
impl Llm for MeteredLlm {
    async fn complete(&self, request: &LlmRequest) -> Result<LlmReply, PortError> {
        let result = self.inner.complete(request).await;
        {
            let mut stats = lock(&self.stats);
            let s = stats.entry(request.role.as_str()).or_default();
            s.calls += 1;
            s.prompt_chars += request.system.chars().count() as u64;
            match &result {
                Ok(reply) => {
                    s.prompt_tokens += reply.prompt_tokens;
                    s.completion_tokens += reply.completion_tokens;
                }
                Err(_) => s.failures += 1,
            }
        }
        if self.keep_prompts {
            lock(&self.calls).push(Call {
                role: request.role,
                prompt: request.system.clone(),
                outcome: result.as_ref().map(|_| ()).map_err(PortError::clone),
            });
        }
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{DateTime, Utc};

    #[tokio::test]
    async fn posts_get_a_unique_ts_at_the_virtual_now() {
        let t = DateTime::<Utc>::from_timestamp(1_767_603_612, 100_000).unwrap();
        let clock = Arc::new(ManualClock::new(t));
        let c = ChannelId::parse("C1").unwrap();
        let mention = Ts::from_datetime(t);
        let slack = ReplaySlack::new(
            clock.clone(),
            UserId::parse("UMYAO").unwrap(),
            &[],
            &[],
            [(c.clone(), mention)],
        );
        let a = slack.post_message(&c, None, "a").await.unwrap();
        let b = slack.post_message(&c, None, "b").await.unwrap();
        assert_eq!(a.to_string(), "1767603612.000101");
        assert_eq!(b.to_string(), "1767603612.000102");
        assert_eq!(slack.posts().len(), 2);
        assert!(slack
            .user_info(&UserId::parse("UX").unwrap())
            .await
            .is_err());
    }

    #[tokio::test]
    async fn the_meter_counts_dry_run_calls_as_failures() {
        let llm = MeteredLlm::new(Arc::new(DryRunLlm), true);
        let request = LlmRequest {
            role: LlmRole::Judgment,
            system: "prompt".into(),
            json: true,
            max_tokens: None,
            images: Vec::new(),
            stable_prefix: 0,
        };
        let e = llm.complete(&request).await.unwrap_err();
        assert!(e.to_string().contains(DRY_RUN));
        assert_eq!(llm.stats()["judgment"].calls, 1);
        assert_eq!(llm.stats()["judgment"].failures, 1);
        let calls = llm.take_calls();
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].prompt, "prompt");
        assert!(llm.take_calls().is_empty());
    }
}
