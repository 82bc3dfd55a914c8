//! Spend limits: how many replies, mentions and LLM calls a window allows,
//! and the counters that hold them (issue 13). Pure: the store counts, the
//! application services ask before any LLM call.
//!
//! Windows are fixed and aligned in UTC: an hour from `hh:00`, a day from
//! `00:00`. A counter's key names its window, so a new window starts at zero
//! without a reset, and the counter expires (TTL) when its window ends.

use chrono::{DateTime, Duration, DurationRound, Utc};

use super::ids::{ChannelId, Ts, UserId};
use super::settings::Settings;

/// The fixed notice a mention over a limit gets (at most once an hour per
/// person, unless `limit_notice` is off). Written without an LLM.
pub const LIMIT_NOTICE: &str = "ちょっと休憩するにゃ。また後で話しかけてね";

/// How long a person waits between two notices.
pub const NOTICE_INTERVAL_SECONDS: i64 = 3_600;

/// A limit that can refuse work, named after its setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Limit {
    /// `max_replies_per_channel_per_hour`: replies (mentions and unprompted).
    RepliesPerChannel,
    /// `max_mentions_per_user_per_hour`: mentions answered per person.
    MentionsPerUser,
    /// `max_llm_calls_per_day`: LLM calls of the whole workspace.
    LlmCallsPerDay,
}

impl Limit {
    /// The setting that holds it.
    pub fn setting(self) -> &'static str {
        match self {
            Limit::RepliesPerChannel => "max_replies_per_channel_per_hour",
            Limit::MentionsPerUser => "max_mentions_per_user_per_hour",
            Limit::LlmCallsPerDay => "max_llm_calls_per_day",
        }
    }

    /// Its value in `settings`.
    pub fn max(self, settings: &Settings) -> u32 {
        match self {
            Limit::RepliesPerChannel => settings.max_replies_per_channel_per_hour,
            Limit::MentionsPerUser => settings.max_mentions_per_user_per_hour,
            Limit::LlmCallsPerDay => settings.max_llm_calls_per_day,
        }
    }
}

/// What an LLM call is for, by how much of the day's calls it may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallPurpose {
    /// Memories: nobody waits for them, so they stop first.
    Memory,
    /// Deciding whether to join a conversation.
    Judgment,
    /// Writing a reply (to a mention, or after a judgment).
    Response,
}

impl CallPurpose {
    /// The share of `max_llm_calls_per_day` (percent) that calls of this
    /// purpose may use: memories stop at 80 %, judgments at 95 %, and the
    /// last 5 % is kept for replies, so that people who ask are answered
    /// longest.
    pub fn share_percent(self) -> u32 {
        match self {
            CallPurpose::Memory => 80,
            CallPurpose::Judgment => 95,
            CallPurpose::Response => 100,
        }
    }

    /// How many calls of the day may have been made for a call of this
    /// purpose still to go ahead: it goes while the day's count is below
    /// this (rounded down, so that a purpose never takes more than its share).
    pub fn ceiling(self, max_llm_calls_per_day: u32) -> u64 {
        u64::from(max_llm_calls_per_day) * u64::from(self.share_percent()) / 100
    }
}

/// A counter in the store: its key, and when it expires (its window's end).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Counter {
    pub key: String,
    pub expires_at: DateTime<Utc>,
}

fn window(now: DateTime<Utc>, length: Duration, format: &str) -> (String, DateTime<Utc>) {
    // Rounding an in-range UTC time down to whole hours cannot fail.
    let start = now.duration_trunc(length).unwrap_or(now);
    (start.format(format).to_string(), start + length)
}

fn hourly(kind: &str, subject: &str, now: DateTime<Utc>) -> Counter {
    let (label, end) = window(now, Duration::hours(1), "%Y-%m-%dT%H");
    Counter {
        key: format!("{kind}#{subject}#{label}"),
        expires_at: end,
    }
}

/// The replies of `channel` in the hour of `now`.
pub fn channel_replies(channel: &ChannelId, now: DateTime<Utc>) -> Counter {
    hourly("replies", channel.as_str(), now)
}

/// The unprompted replies of `channel` in the hour of `now`.
pub fn unprompted_replies(channel: &ChannelId, now: DateTime<Utc>) -> Counter {
    hourly("unprompted", channel.as_str(), now)
}

/// The top-level questions of `channel` given a wait of their own in the
/// hour of `now` ([`crate::routing::QUESTION_WAITS_PER_HOUR`]).
pub fn question_waits(channel: &ChannelId, now: DateTime<Utc>) -> Counter {
    hourly("questions", channel.as_str(), now)
}

/// The claim that, while held, means Slack refused the bot token lately:
/// no LLM call is made for a reply or a judgment (it could not be posted).
pub const TOKEN_BREAKER: &str = "breaker#slack-token";
/// How long the breaker stays open after a refusal.
pub const TOKEN_BREAKER_FOR: Duration = Duration::minutes(5);

/// Whether a Slack failure's detail (`"chat.postMessage: token_revoked"`)
/// is a refusal of the bot token ([`crate::metrics::SLACK_AUTH_CODES`]).
pub fn is_token_refusal(detail: &str) -> bool {
    crate::metrics::SLACK_AUTH_CODES
        .iter()
        .any(|code| detail.ends_with(&format!(": {code}")))
}

/// The unprompted replies of the whole workspace in the hour of `now`.
pub fn workspace_unprompted_replies(now: DateTime<Utc>) -> Counter {
    // "unprompted-all": no channel id has a dash, so no channel's counter.
    hourly("unprompted-all", "workspace", now)
}

/// The LLM's declines in `channel` in a row since `since` (the bot's last
/// message there, or the last call of its name): a new message of the bot
/// or a new call starts another row. Kept for a day at most.
pub fn declines(channel: &ChannelId, since: Option<Ts>, now: DateTime<Utc>) -> Counter {
    let since = since.map_or_else(|| "0".to_owned(), |t| t.to_string());
    Counter {
        key: format!("declines#{channel}#{since}"),
        expires_at: now + Duration::days(1),
    }
}

/// How long a judgment window outlives its ceiling: a judgment that runs
/// late still finds it; one that never runs frees it then.
pub const WINDOW_GRACE: Duration = Duration::minutes(15);

/// The claim that backs off `channel`'s judgments until it expires.
pub fn backoff_claim(channel: &ChannelId) -> String {
    format!("backoff#{channel}")
}

/// The claim that holds a conversation's judgment window open: it expires
/// [`WINDOW_GRACE`] after the pending judgment must run at the latest
/// (`max_wait_seconds` after the window's first message), and the judgment
/// releases it when it runs.
pub fn judgment_window(conversation: &str) -> String {
    format!("window#{conversation}")
}

/// The mentions of `user` answered in the hour of `now`.
pub fn user_mentions(user: &UserId, now: DateTime<Utc>) -> Counter {
    hourly("mentions", user.as_str(), now)
}

/// The workspace's LLM calls in the (UTC) day of `now`.
pub fn llm_calls(now: DateTime<Utc>) -> Counter {
    let (label, end) = window(now, Duration::days(1), "%Y-%m-%d");
    Counter {
        key: format!("llm#{label}"),
        expires_at: end,
    }
}

/// The claim that lets `user` get a notice: one per
/// [`NOTICE_INTERVAL_SECONDS`] from the last one (a rolling hour).
pub fn notice_claim(user: &UserId, now: DateTime<Utc>) -> Counter {
    Counter {
        key: format!("notice#{user}"),
        expires_at: now + Duration::seconds(NOTICE_INTERVAL_SECONDS),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(text: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(text)
            .expect("a time")
            .with_timezone(&Utc)
    }

    #[test]
    fn memories_stop_first_then_judgments_and_replies_last() {
        let d = 2_000;
        assert_eq!(CallPurpose::Memory.ceiling(d), 1_600);
        assert_eq!(CallPurpose::Judgment.ceiling(d), 1_900);
        assert_eq!(CallPurpose::Response.ceiling(d), 2_000);
        for d in [1, 2, 7, 10, 19, 20, 99, 100, 1_000_000] {
            let (m, j, r) = (
                CallPurpose::Memory.ceiling(d),
                CallPurpose::Judgment.ceiling(d),
                CallPurpose::Response.ceiling(d),
            );
            assert!(m <= j && j <= r, "{d}: {m} {j} {r}");
            assert_eq!(r, u64::from(d), "replies may use the whole day");
        }
    }

    #[test]
    fn a_share_is_rounded_down() {
        assert_eq!(CallPurpose::Memory.ceiling(10), 8);
        assert_eq!(CallPurpose::Judgment.ceiling(10), 9);
        assert_eq!(CallPurpose::Judgment.ceiling(19), 18);
        // With a tiny day, only replies are made.
        assert_eq!(CallPurpose::Memory.ceiling(1), 0);
        assert_eq!(CallPurpose::Judgment.ceiling(1), 0);
        assert_eq!(CallPurpose::Response.ceiling(1), 1);
    }

    #[test]
    fn a_limit_names_its_setting_and_reads_it() {
        let s = Settings::default();
        for limit in [
            Limit::RepliesPerChannel,
            Limit::MentionsPerUser,
            Limit::LlmCallsPerDay,
        ] {
            assert!(crate::settings::SETTING_NAMES.contains(&limit.setting()));
        }
        assert_eq!(Limit::RepliesPerChannel.max(&s), 30);
        assert_eq!(Limit::MentionsPerUser.max(&s), 20);
        assert_eq!(Limit::LlmCallsPerDay.max(&s), 2_000);
    }

    #[test]
    fn counters_are_per_window_and_expire_at_its_end() {
        let c = ChannelId::parse("C1").expect("id");
        let u = UserId::parse("U1").expect("id");
        let a = channel_replies(&c, t("2026-01-05T08:59:59Z"));
        assert_eq!(a.key, "replies#C1#2026-01-05T08");
        assert_eq!(a.expires_at, t("2026-01-05T09:00:00Z"));
        let b = channel_replies(&c, t("2026-01-05T09:00:00Z"));
        assert_eq!(b.key, "replies#C1#2026-01-05T09");
        assert_eq!(
            user_mentions(&u, t("2026-01-05T08:30:00Z")).key,
            "mentions#U1#2026-01-05T08"
        );
        let day = llm_calls(t("2026-01-05T23:59:59Z"));
        assert_eq!(day.key, "llm#2026-01-05");
        assert_eq!(day.expires_at, t("2026-01-06T00:00:00Z"));
        assert_eq!(llm_calls(t("2026-01-06T00:00:00Z")).key, "llm#2026-01-06");
    }

    #[test]
    fn a_notice_waits_an_hour_from_the_last_one() {
        let u = UserId::parse("U1").expect("id");
        let n = notice_claim(&u, t("2026-01-05T08:59:00Z"));
        assert_eq!(n.key, "notice#U1");
        assert_eq!(n.expires_at, t("2026-01-05T09:59:00Z"));
    }

    #[test]
    fn a_token_refusal_is_told_by_slacks_code() {
        for code in [
            "invalid_auth",
            "token_revoked",
            "account_inactive",
            "not_authed",
        ] {
            assert!(
                is_token_refusal(&format!("chat.postMessage: {code}")),
                "{code}"
            );
        }
        assert!(!is_token_refusal("chat.postMessage: channel_not_found"));
        assert!(!is_token_refusal(
            "chat.postMessage: not_invalid_auth_really"
        ));
    }
}
