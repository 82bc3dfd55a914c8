//! Labels: the hints people gave about the bot's posts, one per person,
//! post and way of giving it, and the channel's tuning read from them.
//!
//! A label holds no word of the conversation: who, on which post, what
//! hint and how it came (an emoji's name, words, a button).

use std::collections::BTreeMap;

use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};

use crate::hints::Hint;
use crate::reply::EmojiName;
use crate::tuning::Tuning;
use crate::{ChannelId, Ts, UserId};

/// How long a label is kept, and how far back a channel's tuning reads:
/// three weeks, past which a hint's step has faded to nothing
/// ([`crate::tuning::HALF_LIFE_HOURS`]).
pub const LABEL_DAYS: i64 = 21;

/// How a hint came.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "emoji")]
pub enum Source {
    /// A reaction on the post, by its emoji's name.
    Reaction(EmojiName),
    /// Words to the bot ("not now", 「ありがとう」).
    Words,
    /// One of Slack's feedback buttons under the post (`feedback_buttons`):
    /// a person's latest click is their one label for the post.
    Button,
}

impl Source {
    /// The source in a label's key: a person's `+1` and `pray` on one post
    /// are two labels; the same emoji twice is one.
    pub fn key(&self) -> String {
        match self {
            Source::Reaction(emoji) => format!("r:{}", emoji.as_str()),
            Source::Words => "w".to_owned(),
            Source::Button => "b".to_owned(),
        }
    }
}

/// One person's hint about one of the bot's posts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Label {
    pub channel: ChannelId,
    /// The post it is about: the bot's message a reaction is on, or the
    /// message whose words gave the hint.
    pub post: Ts,
    /// Who gave it.
    pub user: UserId,
    #[serde(with = "hint_text")]
    pub hint: Hint,
    pub source: Source,
    /// When it was given.
    pub at: DateTime<Utc>,
}

impl Label {
    /// What tells one label from another in its channel: a person's repeated
    /// reaction is the same label, and a withdrawn one removes it.
    pub fn key(&self) -> String {
        format!(
            "{}#{}#{}",
            self.post.sort_key(),
            self.user,
            self.source.key()
        )
    }

    /// When it expires.
    pub fn expires_at(&self) -> DateTime<Utc> {
        self.at + Duration::days(LABEL_DAYS)
    }
}

/// The channel's tuning at `now` from its labels given in the last
/// [`LABEL_DAYS`], in the order they were given (each fades from its own
/// time; a mute lasts from its own).
///
/// A person counts once: only their latest hint moves the thresholds (at
/// one instant, their strongest), so eleven thumbs-down of one person are
/// one step and three people's are three. A mute is the channel's: any
/// person's mute starts one, and anyone's positive hint after it ends it.
pub fn tuning_of(labels: &[Label], now: DateTime<Utc>) -> Tuning {
    let since = now - Duration::days(LABEL_DAYS);
    let mut given: Vec<&Label> = labels
        .iter()
        .filter(|l| l.at <= now && l.at > since)
        .collect();
    given.sort_by_key(|l| (l.at, strength(l.hint)));
    let mut latest: BTreeMap<&UserId, usize> = BTreeMap::new();
    for (i, label) in given.iter().enumerate() {
        latest.insert(&label.user, i);
    }
    let mut tuning = Tuning::default();
    for (i, label) in given.iter().enumerate() {
        if latest.get(&label.user) == Some(&i) {
            tuning.step(label.hint, label.at);
        }
        tuning.hear(label.hint, label.at);
    }
    tuning
}

/// Which of one person's hints given at one instant counts: a mute over a
/// negative over a positive, as within one message.
fn strength(hint: Hint) -> u8 {
    match hint {
        Hint::Positive => 0,
        Hint::Negative => 1,
        Hint::Mute { .. } => 2,
    }
}

/// A hint as a label stores it: `positive`, `negative`, `mute:MINUTES`.
mod hint_text {
    use serde::{Deserialize, Deserializer, Serializer};

    use crate::hints::{mute_minutes, Hint};

    pub fn serialize<S: Serializer>(hint: &Hint, s: S) -> Result<S::Ok, S::Error> {
        match hint {
            Hint::Positive => s.serialize_str("positive"),
            Hint::Negative => s.serialize_str("negative"),
            Hint::Mute { minutes } => s.serialize_str(&format!("mute:{minutes}")),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Hint, D::Error> {
        let text = String::deserialize(d)?;
        match text.as_str() {
            "positive" => Ok(Hint::Positive),
            "negative" => Ok(Hint::Negative),
            other => other
                .strip_prefix("mute:")
                .and_then(|m| m.parse::<u32>().ok())
                .map(|minutes| Hint::Mute {
                    minutes: mute_minutes(minutes),
                })
                .ok_or_else(|| serde::de::Error::custom("not a hint")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::{Chattiness, Thresholds};

    fn label(user: &str, hint: Hint, source: Source, at: i64) -> Label {
        Label {
            channel: ChannelId::parse("C1").unwrap(),
            post: Ts::parse("1000.000100").unwrap(),
            user: UserId::parse(user).unwrap(),
            hint,
            source,
            at: DateTime::from_timestamp(at, 0).unwrap(),
        }
    }

    fn thumbs_down() -> Source {
        Source::Reaction(EmojiName::parse("-1").unwrap())
    }

    #[test]
    fn a_label_is_one_per_person_post_and_source() {
        let a = label("U1", Hint::Negative, thumbs_down(), 2000);
        let again = label("U1", Hint::Negative, thumbs_down(), 2500);
        let other = label("U2", Hint::Negative, thumbs_down(), 2000);
        let pray = label(
            "U1",
            Hint::Positive,
            Source::Reaction(EmojiName::parse("pray").unwrap()),
            2000,
        );
        assert_eq!(a.key(), again.key());
        assert_ne!(a.key(), other.key());
        assert_ne!(a.key(), pray.key());
        assert_ne!(
            a.key(),
            label("U1", Hint::Negative, Source::Words, 2000).key()
        );
    }

    #[test]
    fn a_label_round_trips_as_json_without_any_words() {
        for hint in [Hint::Positive, Hint::Negative, Hint::Mute { minutes: 90 }] {
            let l = label("U1", hint, thumbs_down(), 2000);
            let json = serde_json::to_string(&l).unwrap();
            assert_eq!(serde_json::from_str::<Label>(&json).unwrap(), l, "{json}");
        }
        let words = label("U1", Hint::Mute { minutes: 60 }, Source::Words, 2000);
        let json = serde_json::to_string(&words).unwrap();
        assert!(json.contains(r#""hint":"mute:60""#), "{json}");
        assert!(serde_json::from_str::<Label>(&json.replace("mute:60", "loud")).is_err());
    }

    #[test]
    fn a_button_label_round_trips_and_is_one_per_person_and_post() {
        let down = label("U1", Hint::Negative, Source::Button, 2000);
        let json = serde_json::to_string(&down).unwrap();
        assert!(json.contains(r#""source":{"kind":"button"}"#), "{json}");
        assert_eq!(serde_json::from_str::<Label>(&json).unwrap(), down);
        // The other button later is the same label, told from a reaction's.
        let up = label("U1", Hint::Positive, Source::Button, 2500);
        assert_eq!(down.key(), up.key());
        assert!(down.key().ends_with("#U1#b"), "{}", down.key());
        assert_ne!(
            down.key(),
            label("U1", Hint::Negative, thumbs_down(), 2000).key()
        );
    }

    #[test]
    fn the_tuning_is_read_from_the_labels_in_the_order_given() {
        let normal = Chattiness::Normal.thresholds().unwrap();
        let now = DateTime::from_timestamp(10_000, 0).unwrap();
        let none = tuning_of(&[], now);
        assert_eq!(none.thresholds(normal, now), normal);
        let three_down: Vec<Label> = ["U1", "U2", "U3"]
            .iter()
            .map(|u| label(u, Hint::Negative, thumbs_down(), 9_000))
            .collect();
        let raised = tuning_of(&three_down, now).thresholds(normal, now);
        assert!(
            raised.low > normal.low && raised.high > normal.high,
            "{raised:?}"
        );
        let quiet: Thresholds = Chattiness::Quiet.thresholds().unwrap();
        assert!(
            raised.low <= quiet.low && raised.high <= quiet.high,
            "{raised:?}"
        );
        // A label given after `now` does not count yet.
        let later = vec![label("U1", Hint::Negative, thumbs_down(), 20_000)];
        assert_eq!(tuning_of(&later, now).thresholds(normal, now), normal);
        // A mute in words silences the channel for its minutes.
        let mute = vec![label(
            "U1",
            Hint::Mute { minutes: 60 },
            Source::Words,
            9_000,
        )];
        assert!(tuning_of(&mute, now).muted(now));
        let after = now + Duration::minutes(60);
        assert!(!tuning_of(&mute, after).muted(after));
    }

    #[test]
    fn a_person_counts_once_and_anyones_welcome_ends_a_mute() {
        let now = DateTime::from_timestamp(10_000, 0).unwrap();
        let emoji = |name: &str| Source::Reaction(EmojiName::parse(name).unwrap());
        let eleven: Vec<Label> = (0..11)
            .map(|i| label("U1", Hint::Negative, emoji(&format!("no{i}")), 9_000 + i))
            .collect();
        assert_eq!(tuning_of(&eleven, now).offset(now), 7, "one step");
        let mut three = eleven.clone();
        three.push(label("U2", Hint::Negative, thumbs_down(), 9_100));
        three.push(label("U3", Hint::Negative, thumbs_down(), 9_200));
        assert_eq!(tuning_of(&three, now).offset(now), 21);
        // A person's latest hint is theirs: down, then up, is up.
        let changed = vec![
            label("U1", Hint::Negative, thumbs_down(), 9_000),
            label("U1", Hint::Positive, emoji("pray"), 9_500),
        ];
        assert_eq!(tuning_of(&changed, now).offset(now), -7);
        // At one instant, the strongest.
        let at_once = vec![
            label("U1", Hint::Positive, emoji("pray"), 9_000),
            label("U1", Hint::Negative, thumbs_down(), 9_000),
        ];
        assert_eq!(tuning_of(&at_once, now).offset(now), 7);
        // U1's mute holds past U1's own later thumbs-down; U2's thanks ends it.
        let mut muted = vec![
            label("U1", Hint::Mute { minutes: 120 }, Source::Words, 9_000),
            label("U1", Hint::Negative, thumbs_down(), 9_100),
        ];
        assert!(tuning_of(&muted, now).muted(now));
        muted.push(label("U2", Hint::Positive, Source::Words, 9_500));
        let lifted = tuning_of(&muted, now);
        assert!(!lifted.muted(now));
        assert_eq!(lifted.offset(now), 0, "U1 down, U2 up");
        // A label older than the labels' days does not count.
        let old = vec![label("U1", Hint::Negative, thumbs_down(), 9_000)];
        let later = now + Duration::days(LABEL_DAYS);
        assert!(tuning_of(&old, later).is_neutral(later));
    }
}
