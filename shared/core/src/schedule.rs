//! The scheduler port's key: a schedule's name. The Scheduler port
//! ([`crate::ports::Scheduler`]) keeps one pending job per name, and
//! upserting a name moves its job: one name per conversation and job kind
//! is how a new message restarts a conversation's wait. Its rules are
//! EventBridge Scheduler's, which the in-process twin keeps as well, so
//! that a name the deployed scheduler would refuse fails in the tests.

use std::fmt;

use myao_domain::{Conversation, JobKind, TeamId};

/// The most characters EventBridge Scheduler allows in a schedule name.
pub const MAX_SCHEDULE_NAME: usize = 64;

/// Why a schedule name was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScheduleNameError {
    #[error("schedule name {0:?} is empty or longer than 64 characters")]
    Length(String),
    #[error("schedule name {0:?} has a character outside [0-9a-zA-Z-_.]")]
    BadChar(String),
}

/// A valid EventBridge Scheduler name (1-64 characters of `[0-9a-zA-Z-_.]`).
/// The emulator accepts anything, so the rule is enforced here.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ScheduleName(String);

impl ScheduleName {
    pub fn parse(name: &str) -> Result<ScheduleName, ScheduleNameError> {
        if name.is_empty() || name.len() > MAX_SCHEDULE_NAME {
            return Err(ScheduleNameError::Length(name.chars().take(80).collect()));
        }
        if !name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        {
            return Err(ScheduleNameError::BadChar(name.chars().take(80).collect()));
        }
        Ok(ScheduleName(name.to_owned()))
    }

    /// The name of the one pending job of `kind` for a conversation: stable
    /// for the same conversation, distinct for different ones, so that
    /// upserting it moves the conversation's wait and leaves others alone.
    /// A name that would be too long keeps its readable start and ends with
    /// a hash of the whole.
    pub fn for_conversation(kind: JobKind, conversation: &Conversation) -> ScheduleName {
        let thread = conversation
            .thread_ts
            .map(|t| t.to_string())
            .unwrap_or_else(|| "top".to_owned());
        fitted(format!("{}-{}-{}", kind, conversation.channel, thread))
    }

    /// The same name in `team`'s part of the scheduler: the team's id before
    /// it, so that two teams' conversations (a channel shared between two
    /// workspaces has one id in both) never move each other's waits.
    pub fn for_team(&self, team: &TeamId) -> ScheduleName {
        fitted(format!("{team}.{}", self.0))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ScheduleName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// `full` (of valid characters) as a name: as it is when short enough,
/// else its readable start and a hash of the whole.
fn fitted(full: String) -> ScheduleName {
    if full.len() <= MAX_SCHEDULE_NAME {
        return ScheduleName(full);
    }
    let hash = format!("{:016x}", fnv1a(full.as_bytes()));
    let keep = MAX_SCHEDULE_NAME - hash.len() - 1;
    ScheduleName(format!("{}-{}", &full[..keep], hash))
}

/// 64-bit FNV-1a: a stable hash (std's hashers are seeded per process).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use myao_domain::{ChannelId, Ts};

    fn conv(channel: &str, thread: Option<&str>) -> Conversation {
        Conversation {
            channel: ChannelId::parse(channel).unwrap(),
            thread_ts: thread.map(|t| Ts::parse(t).unwrap()),
        }
    }

    #[test]
    fn a_teams_names_carry_the_team_and_stay_valid() {
        let name = ScheduleName::for_conversation(
            JobKind::Judgment,
            &conv("C0123456789", Some("1712345678.123456")),
        );
        let acme = name.for_team(&TeamId::parse("T0ACME").unwrap());
        assert_eq!(
            acme.as_str(),
            "T0ACME.judgment-C0123456789-1712345678.123456"
        );
        let beta = name.for_team(&TeamId::parse("T0BETA").unwrap());
        assert_ne!(acme, beta);
        let long = name.for_team(&TeamId::parse(&"T".repeat(32)).unwrap());
        assert_eq!(long.as_str().len(), MAX_SCHEDULE_NAME);
        assert!(ScheduleName::parse(long.as_str()).is_ok());
        assert_ne!(
            long,
            name.for_team(&TeamId::parse(&"T".repeat(31)).unwrap())
        );
    }

    #[test]
    fn names_are_stable_and_distinct_per_conversation() {
        let a = ScheduleName::for_conversation(
            JobKind::Judgment,
            &conv("C1", Some("1712345678.123456")),
        );
        let a2 = ScheduleName::for_conversation(
            JobKind::Judgment,
            &conv("C1", Some("1712345678.123456")),
        );
        let b = ScheduleName::for_conversation(
            JobKind::Judgment,
            &conv("C1", Some("1712345678.123457")),
        );
        let top = ScheduleName::for_conversation(JobKind::Judgment, &conv("C1", None));
        let resp = ScheduleName::for_conversation(JobKind::Response, &conv("C1", None));
        assert_eq!(a, a2);
        assert_eq!(a.as_str(), "judgment-C1-1712345678.123456");
        assert_ne!(a, b);
        assert_eq!(top.as_str(), "judgment-C1-top");
        assert_ne!(top, resp);
    }

    #[test]
    fn every_generated_name_is_valid_even_for_long_ids() {
        let long = "C".repeat(32);
        for kind in [JobKind::Judgment, JobKind::Response, JobKind::ThreadMemory] {
            for thread in [None, Some("99999999999.999999")] {
                let n = ScheduleName::for_conversation(kind, &conv(&long, thread));
                assert!(ScheduleName::parse(n.as_str()).is_ok(), "{n}");
                assert!(n.as_str().len() <= MAX_SCHEDULE_NAME);
            }
        }
        let x = ScheduleName::for_conversation(JobKind::Response, &conv(&long, Some("1.0")));
        let y = ScheduleName::for_conversation(JobKind::Response, &conv(&long, Some("2.0")));
        assert_ne!(x, y, "the hash keeps truncated names distinct");
    }

    #[test]
    fn invalid_names_are_refused() {
        assert!(ScheduleName::parse("").is_err());
        assert!(ScheduleName::parse(&"a".repeat(65)).is_err());
        assert!(ScheduleName::parse("a b").is_err());
        assert!(ScheduleName::parse("a:b").is_err());
        assert!(ScheduleName::parse(&"a".repeat(64)).is_ok());
    }

    #[test]
    fn a_proactive_judgment_has_its_channels_name() {
        let channel = conv("C1", None);
        assert_eq!(
            ScheduleName::for_conversation(JobKind::Proactive, &channel).as_str(),
            "proactive-C1-top"
        );
    }
}
