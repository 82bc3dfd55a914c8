//! What the bot knows of a person in one channel beyond how much they talk
//! (the Discord design's richer profiles, Phase 3B): a few tags, a one-line
//! note on them, and what the last conversation with them was about.
//!
//! The channel's digest writes it, in the call it makes anyway, for each
//! person who wrote one of its new messages, revising the sketch it wrote
//! before. It is kept with that channel's memory and shown only in that
//! channel's prompts, so nothing said in a private channel reaches another
//! channel through it. Like a memory, it may hold anything its digests
//! read: a deleted or edited message of its channel that it covers forgets
//! it ([`Sketch::may_hold`]), as does the person, or a person it names,
//! asking to be forgotten. No I/O.

use std::collections::BTreeSet;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::facts::named;
use crate::ids::{ChannelId, Ts, UserId};
use crate::judgment::first_object;
use crate::privacy::Forget;
use crate::text::{mentions, names};

/// One person as one channel's digests saw them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sketch {
    pub channel: ChannelId,
    pub user: UserId,
    /// A few words for what they do and care about, at most [`MAX_TAGS`].
    pub tags: Vec<String>,
    /// Who they are, in one line.
    pub note: String,
    /// What the last conversation with them was about, in one line.
    pub last_talk: String,
    /// The newest message of its channel that the digest writing it read:
    /// it may hold any message up to there, the earlier sketch it revised
    /// included.
    pub read_to: Ts,
    pub written_at: DateTime<Utc>,
}

/// How many tags a sketch keeps.
pub const MAX_TAGS: usize = 5;
/// The longest tag kept, in characters.
const MAX_TAG_CHARS: usize = 30;
/// The longest note or last conversation kept, in characters.
pub const MAX_LINE_CHARS: usize = 160;
impl Sketch {
    /// Whether it may hold what `forget` names (a message of its channel
    /// deleted or edited): it was written before, from messages up to one
    /// no older. A whole channel's forget (made private, deleted) leaves it:
    /// it is shown in that channel only.
    pub fn may_hold(&self, forget: &Forget) -> bool {
        forget.channel == self.channel
            && !forget.is_whole_channel()
            && self.written_at <= forget.at
            && forget.ts <= self.read_to
    }

    /// Whether it is of `user` or names them: by an @-mention, or by one of
    /// their `names` as a word.
    pub fn concerns(&self, user: &UserId, their_names: &[String]) -> bool {
        self.user == *user
            || [&self.note, &self.last_talk].iter().any(|text| {
                mentions(text).any(|u| u == *user) || their_names.iter().any(|n| names(text, n))
            })
    }
}

/// What a digest read, for the sketches of its answer: its channel, the
/// people who wrote its new messages, and the newest message it was shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DigestRead<'a> {
    pub channel: &'a ChannelId,
    pub wrote: &'a BTreeSet<UserId>,
    pub read_to: Ts,
}

/// The sketches of a digest's answer (`"people": [{"name", "tags", "note",
/// "last_talk"}]`), written at `now`: one for each person who wrote the
/// new messages that `people` (the names the prompt showed) names. A
/// sketch out of shape, of someone who wrote nothing new, or a second one
/// of the same person is left out on its own: a digest's memories and
/// facts do not depend on it. No `people` in the answer, none.
pub fn parse_sketches(
    answer: &str,
    read: &DigestRead<'_>,
    people: &[(UserId, String)],
    now: DateTime<Utc>,
) -> Vec<Sketch> {
    let Some(value) = first_object(answer).and_then(|s| serde_json::from_str::<Value>(s).ok())
    else {
        return Vec::new();
    };
    let Some(list) = value.get("people").and_then(Value::as_array) else {
        return Vec::new();
    };
    let mut out: Vec<Sketch> = Vec::new();
    for entry in list {
        let Some(user) = entry
            .get("name")
            .and_then(Value::as_str)
            .and_then(|n| named(n, people))
        else {
            continue;
        };
        if !read.wrote.contains(&user) || out.iter().any(|s| s.user == user) {
            continue;
        }
        let (Some(note), Some(last_talk), Some(tags)) =
            (line(entry, "note"), line(entry, "last_talk"), tags(entry))
        else {
            continue;
        };
        out.push(Sketch {
            channel: read.channel.clone(),
            user,
            tags,
            note,
            last_talk,
            read_to: read.read_to,
            written_at: now,
        });
    }
    out
}

/// A one-line text of `entry`: trimmed, not empty, on one line, not too long.
fn line(entry: &Value, key: &str) -> Option<String> {
    let text = entry.get(key)?.as_str()?.trim();
    let one: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    (!one.is_empty() && one.chars().count() <= MAX_LINE_CHARS).then_some(one)
}

/// `entry`'s tags: texts, each short, the first [`MAX_TAGS`] distinct
/// ones; none given, none.
fn tags(entry: &Value) -> Option<Vec<String>> {
    let Some(list) = entry.get("tags") else {
        return Some(Vec::new());
    };
    let mut out: Vec<String> = Vec::new();
    for tag in list.as_array()? {
        let tag = tag.as_str()?.trim();
        if tag.is_empty() || tag.chars().count() > MAX_TAG_CHARS {
            continue;
        }
        if !out.iter().any(|t| t.eq_ignore_ascii_case(tag)) && out.len() < MAX_TAGS {
            out.push(tag.to_owned());
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(s: &str) -> Ts {
        Ts::parse(s).unwrap()
    }

    fn user(id: &str) -> UserId {
        UserId::parse(id).unwrap()
    }

    fn now() -> DateTime<Utc> {
        DateTime::from_timestamp(1_767_600_000, 0).unwrap()
    }

    fn channel() -> ChannelId {
        ChannelId::parse("C1").unwrap()
    }

    fn people() -> Vec<(UserId, String)> {
        vec![
            (user("UALICE"), "alice".into()),
            (user("UBOB"), "bob".into()),
        ]
    }

    fn parse(answer: &str) -> Vec<Sketch> {
        let wrote = BTreeSet::from([user("UALICE")]);
        let ch = channel();
        let read = DigestRead {
            channel: &ch,
            wrote: &wrote,
            read_to: ts("1767500000.000200"),
        };
        parse_sketches(answer, &read, &people(), now())
    }

    #[test]
    fn a_sketch_is_read_for_who_wrote_the_new_messages() {
        let answer = r#"Here: {"channel": "x", "people": [
            {"name": "@Alice", "tags": ["Rust", "rust", " sourdough ", "", "a", "b", "c", "d"],
             "note": "  Backend lead,\n new to Tokyo ", "last_talk": "asked how to cache builds"},
            {"name": "bob", "tags": ["go"], "note": "wrote nothing new", "last_talk": "x"},
            {"name": "carol", "tags": [], "note": "not in the prompt", "last_talk": "x"},
            {"name": "alice", "tags": [], "note": "a second one", "last_talk": "x"}
        ]}"#;
        let got = parse(answer);
        assert_eq!(got.len(), 1, "{got:?}");
        let s = &got[0];
        assert_eq!(s.user, user("UALICE"));
        assert_eq!(s.tags, ["Rust", "sourdough", "a", "b", "c"]);
        assert_eq!(s.note, "Backend lead, new to Tokyo");
        assert_eq!(s.last_talk, "asked how to cache builds");
        assert_eq!(s.read_to, ts("1767500000.000200"));
    }

    #[test]
    fn a_sketch_out_of_shape_is_left_out_alone() {
        let cases = [
            r#"{"people": [{"name": "alice", "tags": ["x"], "last_talk": "no note"}]}"#,
            r#"{"people": [{"name": "alice", "tags": "x", "note": "n", "last_talk": "t"}]}"#,
            r#"{"people": [{"name": "alice", "tags": [1], "note": "n", "last_talk": "t"}]}"#,
            r#"{"people": [{"name": 3, "tags": [], "note": "n", "last_talk": "t"}]}"#,
            r#"{"people": "alice is nice"}"#,
            r#"{"facts": []}"#,
            "not json",
        ];
        for answer in cases {
            assert!(parse(answer).is_empty(), "{answer}");
        }
        let long = "x".repeat(MAX_LINE_CHARS + 1);
        let answer =
            format!(r#"{{"people": [{{"name": "alice", "note": "{long}", "last_talk": "t"}}]}}"#);
        assert!(parse(&answer).is_empty());
        // Tags may be missing.
        let got = parse(r#"{"people": [{"name": "alice", "note": "n", "last_talk": "t"}]}"#);
        assert_eq!(got[0].tags, Vec::<String>::new());
    }

    /// Like a memory: a deletion or edit of a message of its channel up to
    /// what it read, made after it was written, may be in it.
    #[test]
    fn a_sketch_may_hold_any_message_of_its_channel_it_read() {
        let sketch = &parse(r#"{"people": [{"name": "alice", "note": "n", "last_talk": "t"}]}"#)[0];
        let forget = |channel: &str, ts_: &str, at: DateTime<Utc>| Forget {
            channel: ChannelId::parse(channel).unwrap(),
            ts: ts(ts_),
            thread_ts: None,
            at,
        };
        let later = now() + chrono::Duration::minutes(5);
        assert!(sketch.may_hold(&forget("C1", "1767400000.000100", later)));
        assert!(sketch.may_hold(&forget("C1", "1767500000.000200", later)));
        assert!(
            !sketch.may_hold(&forget("C1", "1767500000.000300", later)),
            "newer than it read"
        );
        assert!(
            !sketch.may_hold(&forget("C2", "1767400000.000100", later)),
            "another channel"
        );
        let before = now() - chrono::Duration::minutes(5);
        assert!(
            !sketch.may_hold(&forget("C1", "1767400000.000100", before)),
            "written after"
        );
    }

    #[test]
    fn a_sketch_concerns_its_person_and_those_it_names() {
        let mut sketch =
            parse(r#"{"people": [{"name": "alice", "note": "n", "last_talk": "t"}]}"#).remove(0);
        let bob = user("UBOB");
        assert!(sketch.concerns(&user("UALICE"), &[]));
        assert!(!sketch.concerns(&bob, &["bob".into()]));
        sketch.last_talk = "helped Bob move to Osaka".into();
        assert!(sketch.concerns(&bob, &["bob".into()]));
        sketch.last_talk = "paired with <@UBOB> on the cache".into();
        assert!(sketch.concerns(&bob, &[]));
        sketch.last_talk = "bobsleigh videos".into();
        assert!(
            !sketch.concerns(&bob, &["bob".into()]),
            "a word, not a part"
        );
    }
}
