//! What the bot knows of a person in one channel beyond how much they talk
//! (the Discord design's richer profiles, Phase 3B): a few tags, a one-line
//! note on them, and what the last conversation with them was about.
//!
//! The channel's digest writes it, in the call it makes anyway, for each
//! person who wrote one of its new messages, revising the sketch it wrote
//! before. It is kept with that channel's memory and shown only in that
//! channel's prompts, so nothing said in a private channel reaches another
//! channel through it; forgetting any message it was drawn from, or the
//! person asking to be forgotten, forgets it. No I/O.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::facts::named;
use crate::ids::{ChannelId, Ts, UserId};
use crate::judgment::first_object;

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
    /// Their messages it was drawn from, this digest's and the earlier
    /// ones' it revised (the newest [`MAX_SOURCES`]).
    pub sources: Vec<Ts>,
    pub written_at: DateTime<Utc>,
}

/// How many tags a sketch keeps.
pub const MAX_TAGS: usize = 5;
/// The longest tag kept, in characters.
const MAX_TAG_CHARS: usize = 30;
/// The longest note or last conversation kept, in characters.
pub const MAX_LINE_CHARS: usize = 160;
/// How many source messages a sketch remembers.
pub const MAX_SOURCES: usize = 100;

impl Sketch {
    /// Whether it was drawn from message `ts`.
    pub fn drawn_from(&self, ts: Ts) -> bool {
        self.sources.contains(&ts)
    }
}

/// The sketches of a digest's answer (`"people": [{"name", "tags", "note",
/// "last_talk"}]`), for `channel` at `now`: one for each person of `wrote`
/// (who wrote the new messages, with their ts) that `people` (the names
/// the prompt showed) names, revising `before` (the channel's sketches so
/// far). A sketch out of shape, of someone who wrote nothing new, or a
/// second one of the same person is left out on its own: a digest's
/// memories and facts do not depend on it. No `people` in the answer, none.
pub fn parse_sketches(
    answer: &str,
    wrote: &BTreeMap<UserId, Vec<Ts>>,
    people: &[(UserId, String)],
    before: &[Sketch],
    channel: &ChannelId,
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
        let Some(new) = wrote
            .get(&user)
            .filter(|_| !out.iter().any(|s| s.user == user))
        else {
            continue;
        };
        let (Some(note), Some(last_talk), Some(tags)) =
            (line(entry, "note"), line(entry, "last_talk"), tags(entry))
        else {
            continue;
        };
        let mut sources: Vec<Ts> = before
            .iter()
            .filter(|s| s.user == user)
            .flat_map(|s| s.sources.iter().copied())
            .chain(new.iter().copied())
            .collect();
        sources.sort();
        sources.dedup();
        let from = sources.len().saturating_sub(MAX_SOURCES);
        out.push(Sketch {
            channel: channel.clone(),
            user,
            tags,
            note,
            last_talk,
            sources: sources.split_off(from),
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

    fn wrote() -> BTreeMap<UserId, Vec<Ts>> {
        BTreeMap::from([(user("UALICE"), vec![ts("1767500000.000200")])])
    }

    #[test]
    fn a_sketch_is_read_for_who_wrote_the_new_messages_and_revises_the_last() {
        let before = Sketch {
            channel: channel(),
            user: user("UALICE"),
            tags: vec!["rust".into()],
            note: "old".into(),
            last_talk: "old".into(),
            sources: vec![ts("1767400000.000100")],
            written_at: now(),
        };
        let answer = r#"Here: {"channel": "x", "people": [
            {"name": "@Alice", "tags": ["Rust", "rust", " sourdough ", "", "a", "b", "c", "d"],
             "note": "  Backend lead,\n new to Tokyo ", "last_talk": "asked how to cache builds"},
            {"name": "bob", "tags": ["go"], "note": "wrote nothing new", "last_talk": "x"},
            {"name": "carol", "tags": [], "note": "not in the prompt", "last_talk": "x"},
            {"name": "alice", "tags": [], "note": "a second one", "last_talk": "x"}
        ]}"#;
        let got = parse_sketches(answer, &wrote(), &people(), &[before], &channel(), now());
        assert_eq!(got.len(), 1, "{got:?}");
        let s = &got[0];
        assert_eq!(s.user, user("UALICE"));
        assert_eq!(s.tags, ["Rust", "sourdough", "a", "b", "c"]);
        assert_eq!(s.note, "Backend lead, new to Tokyo");
        assert_eq!(s.last_talk, "asked how to cache builds");
        assert_eq!(
            s.sources,
            [ts("1767400000.000100"), ts("1767500000.000200")]
        );
        assert!(s.drawn_from(ts("1767400000.000100")));
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
            let got = parse_sketches(answer, &wrote(), &people(), &[], &channel(), now());
            assert!(got.is_empty(), "{answer}: {got:?}");
        }
        let long = "x".repeat(MAX_LINE_CHARS + 1);
        let answer =
            format!(r#"{{"people": [{{"name": "alice", "note": "{long}", "last_talk": "t"}}]}}"#);
        assert!(parse_sketches(&answer, &wrote(), &people(), &[], &channel(), now()).is_empty());
        // Tags may be missing.
        let answer = r#"{"people": [{"name": "alice", "note": "n", "last_talk": "t"}]}"#;
        let got = parse_sketches(answer, &wrote(), &people(), &[], &channel(), now());
        assert_eq!(got[0].tags, Vec::<String>::new());
    }

    #[test]
    fn a_sketch_remembers_its_newest_sources_only() {
        let many: Vec<Ts> = (0..MAX_SOURCES + 20)
            .map(|i| ts(&format!("17670{:05}.000100", i)))
            .collect();
        let before = Sketch {
            channel: channel(),
            user: user("UALICE"),
            tags: vec![],
            note: "n".into(),
            last_talk: "t".into(),
            sources: many.clone(),
            written_at: now(),
        };
        let answer = r#"{"people": [{"name": "alice", "note": "n", "last_talk": "t"}]}"#;
        let got = parse_sketches(answer, &wrote(), &people(), &[before], &channel(), now());
        assert_eq!(got[0].sources.len(), MAX_SOURCES);
        assert_eq!(got[0].sources.last(), Some(&ts("1767500000.000200")));
        assert!(!got[0].drawn_from(many[0]));
    }
}
