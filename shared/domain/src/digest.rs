//! A channel's digest: one memory call that writes, from the channel's
//! recent window, its short-term memory, the summaries of its threads that
//! moved, the facts worth remembering in its new messages and, when due,
//! its long-term memory. Here: when a digest is due, how many threads one
//! call summarises and how long its answer may be, and how its answer is
//! read. No I/O.

use chrono::{DateTime, Duration, Utc};
use serde_json::{Map, Value};

use crate::ids::Ts;
use crate::judgment::first_object;
use crate::settings::Settings;

/// The most threads one digest call summarises; more are summarised by
/// further calls of the same run, this many at a time.
pub const THREADS_PER_CALL: usize = 6;

/// The answer length one fact list is given, in tokens.
const FACTS_TOKENS: u32 = 800;
/// The answer length the sketches of the people who wrote new messages are
/// given, in tokens (asked with the facts).
const SKETCHES_TOKENS: u32 = 150;

/// Whether a channel's memories are due for a digest: `new` messages came
/// after what its short-term memory covers, the oldest at `oldest_new`.
/// Due once `memory_min_new_messages` have come, or once the oldest has
/// waited half the short-term window (so that no message leaves the window
/// before a memory covered it).
pub fn due(new: usize, oldest_new: Option<Ts>, settings: &Settings, now: DateTime<Utc>) -> bool {
    let Some(oldest) = oldest_new else {
        return false;
    };
    new >= settings.memory_min_new_messages.max(1) as usize || waited(oldest, settings, now)
}

/// Whether `oldest` has waited half the short-term window by `now`: then
/// its channel's digest is due, and the facts of a message that waits for
/// company are asked for before it leaves the window.
pub fn waited(oldest: Ts, settings: &Settings, now: DateTime<Utc>) -> bool {
    now - oldest.to_datetime()
        >= Duration::minutes(i64::from(settings.short_term_window_hours) * 30)
}

/// A message of a digest's prompt, for [`covered_to`]: its ts, whether the
/// prompt showed it, and whether it was new to what `mark` covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Seen {
    pub ts: Ts,
    pub shown: bool,
    pub new: bool,
}

/// How far a mark may move after a digest whose prompt showed `seen`: to
/// the newest shown message older than every new message the prompt left
/// out (a budget cut leaves the newest for the next digest; a thread's root
/// kept past them covers nothing), and never back from `mark`.
pub fn covered_to(seen: &[Seen], mark: Option<Ts>) -> Option<Ts> {
    let first_left_out = seen
        .iter()
        .filter(|s| s.new && !s.shown)
        .map(|s| s.ts)
        .min();
    let reached = seen
        .iter()
        .filter(|s| s.shown && first_left_out.is_none_or(|f| s.ts < f))
        .map(|s| s.ts)
        .max();
    reached.max(mark)
}

/// What one digest call asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Asked {
    /// The channel's short-term memory (the first call of a run).
    pub channel: bool,
    /// The channel's long-term memory too (due, and the first call).
    pub long: bool,
    /// Facts from the new messages, and the sketches of their writers.
    pub facts: bool,
    /// How many thread summaries.
    pub threads: usize,
}

impl Asked {
    /// The answer's length budget, in tokens: each memory's own budget, a
    /// thread summary half a short-term memory, and room for the facts
    /// (the memory model's `memory_max_tokens` caps it).
    pub fn max_tokens(&self, settings: &Settings) -> u32 {
        let short = settings.short_term_max_tokens;
        let threads = u32::try_from(self.threads).unwrap_or(u32::MAX);
        let mut total = threads.saturating_mul(short / 2);
        if self.channel {
            total = total.saturating_add(short);
        }
        if self.long {
            total = total.saturating_add(settings.long_term_max_tokens);
        }
        if self.facts {
            total = total.saturating_add(FACTS_TOKENS + SKETCHES_TOKENS);
        }
        // JSON's quotes and keys, and a model that runs long.
        total.saturating_add(total / 2)
    }
}

/// A digest's answer, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Digest {
    /// The channel's short-term memory, when it was asked for.
    pub channel: Option<String>,
    /// The channel's long-term memory, when it was asked for and given.
    pub long: Option<String>,
    /// The summaries of the threads asked for that the answer gives.
    pub threads: Vec<(Ts, String)>,
}

/// Why a digest's answer wrote nothing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DigestError {
    #[error("the answer is not a JSON object")]
    NotJson,
    #[error("the answer has no `channel` memory")]
    NoChannel,
    #[error("the answer's `{0}` is not text")]
    NotText(&'static str),
    #[error("the answer's `threads` is not an object of texts")]
    BadThreads,
}

/// Reads a digest's answer: `{"channel": "...", "long": "...", "threads":
/// {"<thread ts>": "..."}, "facts": [...]}` (the facts are read by
/// [`crate::facts::parse_reflection`]). The channel's memory must be there
/// when it was asked for; the long-term memory may be left out (it stays as
/// it was); a thread not asked for is ignored, one left out stays as it was.
/// Anything else out of shape refuses the whole answer.
pub fn parse(answer: &str, asked: Asked, threads: &[Ts]) -> Result<Digest, DigestError> {
    let value: Value = first_object(answer)
        .and_then(|s| serde_json::from_str(s).ok())
        .ok_or(DigestError::NotJson)?;
    let object = value.as_object().ok_or(DigestError::NotJson)?;
    let channel = if asked.channel {
        Some(text(object, "channel")?.ok_or(DigestError::NoChannel)?)
    } else {
        None
    };
    let long = if asked.long {
        text(object, "long")?
    } else {
        None
    };
    let mut summaries = Vec::new();
    match object.get("threads") {
        None | Some(Value::Null) => {}
        Some(Value::Object(given)) => {
            for (key, summary) in given {
                let summary = summary.as_str().ok_or(DigestError::BadThreads)?.trim();
                let Ok(ts) = Ts::parse(key.trim()) else {
                    continue;
                };
                if threads.contains(&ts) && !summary.is_empty() {
                    summaries.push((ts, summary.to_owned()));
                }
            }
        }
        Some(_) => return Err(DigestError::BadThreads),
    }
    summaries.sort_by_key(|(ts, _)| *ts);
    summaries.dedup_by_key(|(ts, _)| *ts);
    Ok(Digest {
        channel,
        long,
        threads: summaries,
    })
}

/// `object[key]` trimmed: `None` when missing, null or empty.
fn text(object: &Map<String, Value>, key: &'static str) -> Result<Option<String>, DigestError> {
    match object.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => {
            let s = s.trim();
            Ok((!s.is_empty()).then(|| s.to_owned()))
        }
        Some(_) => Err(DigestError::NotText(key)),
    }
}

/// The first wait after a digest answer that could not be used.
pub const BACKOFF_FIRST: Duration = Duration::minutes(30);
/// The longest: a day.
pub const BACKOFF_MAX: Duration = Duration::days(1);

/// A channel's digest held back after answers it could not use (prose, or
/// JSON cut at the token limit, asked for twice): each such digest in a row
/// doubles the wait ([`BACKOFF_FIRST`] to [`BACKOFF_MAX`]); a good digest
/// ends it. The
/// memory run asks again only after `until`, so a model that keeps failing
/// costs a few calls a day, not one at every sweep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    /// Digests in a row whose answers could not be used.
    pub failures: u32,
    /// No digest of the channel before this.
    pub until: DateTime<Utc>,
}

impl Backoff {
    /// The backoff after one more failed digest at `now`.
    pub fn after_failure(previous: Option<&Backoff>, now: DateTime<Utc>) -> Backoff {
        let failures = previous.map_or(0, |b| b.failures).saturating_add(1);
        // 2^(failures - 1) waits, never past the day (2^6 halves already is).
        let doublings = (failures - 1).min(6);
        let wait = (BACKOFF_FIRST * 2i32.pow(doublings)).min(BACKOFF_MAX);
        Backoff {
            failures,
            until: now + wait,
        }
    }

    /// Whether a digest waits at `now`.
    pub fn holds(&self, now: DateTime<Utc>) -> bool {
        now < self.until
    }

    /// `b1 FAILURES UNTIL_MILLIS`, as the channel's record keeps it.
    pub fn to_text(&self) -> String {
        format!("b1 {} {}", self.failures, self.until.timestamp_millis())
    }

    /// Reads [`Backoff::to_text`]'s line; `None` for anything else.
    pub fn parse(text: &str) -> Option<Backoff> {
        let mut words = text.split_whitespace();
        if words.next()? != "b1" {
            return None;
        }
        let failures = words.next()?.parse().ok()?;
        let until = DateTime::from_timestamp_millis(words.next()?.parse().ok()?)?;
        words
            .next()
            .is_none()
            .then_some(Backoff { failures, until })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(s: &str) -> Ts {
        Ts::parse(s).unwrap()
    }

    const ALL: Asked = Asked {
        channel: true,
        long: true,
        facts: true,
        threads: 2,
    };

    #[test]
    fn a_digest_is_due_after_enough_messages_or_half_the_window() {
        let s = Settings::default();
        let now = DateTime::<Utc>::from_timestamp(100_000, 0).unwrap();
        let recent = Some(ts("99000.0"));
        let min = s.memory_min_new_messages as usize;
        assert!(!due(0, None, &s, now), "nothing new");
        assert!(!due(min - 1, recent, &s, now), "a few, lately");
        assert!(due(min, recent, &s, now), "enough");
        let half = i64::from(s.short_term_window_hours) * 1800;
        let waited = Some(Ts::from_datetime(now - Duration::seconds(half)));
        assert!(due(1, waited, &s, now), "one, waiting half the window");
        let almost = Some(Ts::from_datetime(now - Duration::seconds(half - 60)));
        assert!(!due(1, almost, &s, now));
    }

    #[test]
    fn a_mark_covers_what_was_shown_up_to_the_first_new_message_left_out() {
        let seen = |ts_: &str, shown, new| Seen {
            ts: ts(ts_),
            shown,
            new,
        };
        // Nothing left out: the newest shown.
        let all = [
            seen("1.0", true, false),
            seen("2.0", true, true),
            seen("3.0", true, true),
        ];
        assert_eq!(covered_to(&all, Some(ts("1.0"))), Some(ts("3.0")));
        // The newest left out: up to the last shown before them.
        let cut = [
            seen("2.0", true, true),
            seen("3.0", false, true),
            seen("4.0", false, true),
        ];
        assert_eq!(covered_to(&cut, Some(ts("1.0"))), Some(ts("2.0")));
        // A root kept past messages left out covers nothing beyond them.
        let root = [
            seen("2.0", true, true),
            seen("3.0", false, true),
            seen("4.0", true, true),
            seen("5.0", false, true),
        ];
        assert_eq!(covered_to(&root, None), Some(ts("2.0")));
        // Covered messages left out do not hold the mark back...
        let old = [seen("1.0", false, false), seen("2.0", true, true)];
        assert_eq!(covered_to(&old, Some(ts("1.5"))), Some(ts("2.0")));
        // ...and a mark never moves back.
        let nothing_new = [seen("1.0", true, false), seen("2.0", false, true)];
        assert_eq!(covered_to(&nothing_new, Some(ts("1.5"))), Some(ts("1.5")));
        assert_eq!(covered_to(&[], None), None);
    }

    #[test]
    fn a_digest_answer_gives_the_memories_asked_for() {
        let threads = [ts("10.0"), ts("20.0")];
        let answer = r#"Here: {"channel": " - 2024-05-01 Ann asked about builds ",
            "long": "- history", "threads": {"10.0": "builds", "20.000000": "deploys",
            "30.0": "not asked"}, "facts": []}"#;
        let digest = parse(answer, ALL, &threads).unwrap();
        assert_eq!(
            digest.channel.as_deref(),
            Some("- 2024-05-01 Ann asked about builds")
        );
        assert_eq!(digest.long.as_deref(), Some("- history"));
        assert_eq!(
            digest.threads,
            vec![
                (ts("10.0"), "builds".to_owned()),
                (ts("20.0"), "deploys".to_owned())
            ]
        );
        // Long not asked for: not written, whatever the answer says.
        let short_only = Asked { long: false, ..ALL };
        assert_eq!(parse(answer, short_only, &threads).unwrap().long, None);
        // A thread left out stays as it was.
        let one = parse(
            r#"{"channel": "x", "threads": {"10.0": "b"}}"#,
            ALL,
            &threads,
        )
        .unwrap();
        assert_eq!(one.threads.len(), 1);
        assert_eq!(one.long, None);
    }

    #[test]
    fn a_digest_answer_out_of_shape_writes_nothing() {
        let threads = [ts("10.0")];
        for (answer, error) in [
            ("I could not", DigestError::NotJson),
            ("{\"channel\": ", DigestError::NotJson),
            ("[1, 2]", DigestError::NotJson),
            (r#"{"threads": {}}"#, DigestError::NoChannel),
            (r#"{"channel": "  "}"#, DigestError::NoChannel),
            (r#"{"channel": 3}"#, DigestError::NotText("channel")),
            (
                r#"{"channel": "x", "long": ["a"]}"#,
                DigestError::NotText("long"),
            ),
            (
                r#"{"channel": "x", "threads": ["a"]}"#,
                DigestError::BadThreads,
            ),
            (
                r#"{"channel": "x", "threads": {"10.0": 4}}"#,
                DigestError::BadThreads,
            ),
        ] {
            assert_eq!(parse(answer, ALL, &threads), Err(error), "{answer}");
        }
        // Threads alone: no channel needed.
        let threads_only = Asked {
            channel: false,
            long: false,
            facts: false,
            threads: 1,
        };
        let digest = parse(r#"{"threads": {"10.0": "b"}}"#, threads_only, &threads).unwrap();
        assert_eq!(digest.channel, None);
        assert_eq!(digest.threads, vec![(ts("10.0"), "b".to_owned())]);
    }

    #[test]
    fn a_digest_answer_has_room_for_what_it_asks() {
        let s = Settings::default();
        let small = Asked {
            channel: false,
            long: false,
            facts: false,
            threads: 1,
        };
        assert!(small.max_tokens(&s) >= s.short_term_max_tokens / 2);
        let full = Asked {
            threads: THREADS_PER_CALL,
            ..ALL
        };
        let needed = s.short_term_max_tokens
            + s.long_term_max_tokens
            + THREADS_PER_CALL as u32 * s.short_term_max_tokens / 2;
        assert!(full.max_tokens(&s) > needed);
        assert!(
            full.max_tokens(&s) <= s.memory_max_tokens,
            "within the memory model's answer"
        );
    }

    #[test]
    fn an_unusable_digest_doubles_its_wait_up_to_a_day() {
        let now = DateTime::from_timestamp(1_767_600_000, 0).unwrap();
        let mut backoff: Option<Backoff> = None;
        let mut waits = Vec::new();
        for _ in 0..8 {
            let next = Backoff::after_failure(backoff.as_ref(), now);
            waits.push((next.until - now).num_minutes());
            backoff = Some(next);
        }
        assert_eq!(waits, [30, 60, 120, 240, 480, 960, 1440, 1440]);
        let b = backoff.unwrap();
        assert!(b.holds(now) && !b.holds(b.until));
        assert_eq!(Backoff::parse(&b.to_text()), Some(b));
        for bad in ["", "b2 1 0", "b1 x 0", "b1 1", "b1 1 0 9"] {
            assert_eq!(Backoff::parse(bad), None, "{bad}");
        }
    }
}
