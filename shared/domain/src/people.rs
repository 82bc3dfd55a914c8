//! The people of a workspace as the bot knows them: how much they talk,
//! how often with the bot, and so how familiar they are (the Discord
//! design's familiarity at 6 / 31 / 101 interactions).

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::ids::{Ts, UserId};
use super::message::Message;
use super::text::without_marks;
use super::text::{mentions_user, names as calls_name};

/// What the bot knows of one person.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Profile {
    pub user: UserId,
    /// Their messages the bot has read.
    pub messages: u64,
    /// Their exchanges with the bot: mentions of it, replies to it, its
    /// replies to them.
    pub interactions: u64,
    pub first_seen: DateTime<Utc>,
    pub last_seen: DateTime<Utc>,
    /// A few things they talked about lately, newest first.
    pub topics: Vec<String>,
}

/// How many topics a profile keeps.
pub const MAX_TOPICS: usize = 5;

/// The `topics` that `backing` (the keywords of the facts still behind
/// them) holds, in their order.
pub fn still_backed(
    topics: &[String],
    backing: Option<&std::collections::BTreeSet<String>>,
) -> Vec<String> {
    topics
        .iter()
        .filter(|t| backing.is_some_and(|b| b.contains(*t)))
        .cloned()
        .collect()
}

/// How well the bot knows someone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Familiarity {
    Stranger,
    Acquaintance,
    Friend,
    Close,
}

/// The interactions from which someone is an acquaintance, a friend, close.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FamiliarityThresholds {
    pub acquaintance: u64,
    pub friend: u64,
    pub close: u64,
}

impl Default for FamiliarityThresholds {
    fn default() -> Self {
        FamiliarityThresholds {
            acquaintance: 6,
            friend: 31,
            close: 101,
        }
    }
}

impl Familiarity {
    pub fn of(interactions: u64, t: FamiliarityThresholds) -> Familiarity {
        if interactions >= t.close {
            Familiarity::Close
        } else if interactions >= t.friend {
            Familiarity::Friend
        } else if interactions >= t.acquaintance {
            Familiarity::Acquaintance
        } else {
            Familiarity::Stranger
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Familiarity::Stranger => "stranger",
            Familiarity::Acquaintance => "acquaintance",
            Familiarity::Friend => "friend",
            Familiarity::Close => "close",
        }
    }

    /// As the prompts say it.
    pub fn shown(self) -> &'static str {
        match self {
            Familiarity::Stranger => "初対面に近い",
            Familiarity::Acquaintance => "顔見知り",
            Familiarity::Friend => "友達",
            Familiarity::Close => "親しい友達",
        }
    }
}

/// What the bot says once it forgot someone who asked it to.
pub const FORGOTTEN_NOTICE: &str =
    "わかった、あなたについて覚えていたことは忘れたよ。(Done: I forgot what I knew about you.)";

/// Whether `text`, said to the bot, asks it to forget the speaker: "forget
/// me", "forget about me", "私のことを忘れて" (mentions aside).
pub fn forget_me(text: &str) -> bool {
    let lower = without_marks(text).to_lowercase();
    if [
        "don't forget",
        "dont forget",
        "do not forget",
        "never forget",
        "忘れないで",
    ]
    .iter()
    .any(|n| lower.contains(n))
    {
        return false;
    }
    let words: String = lower.chars().filter(|c| c.is_alphanumeric()).collect();
    const ASKS: &[&str] = &[
        "forgetme",
        "forgetaboutme",
        "forgeteverythingaboutme",
        "forgetallaboutme",
        "私のことを忘れて",
        "私のこと忘れて",
        "僕のことを忘れて",
        "僕のこと忘れて",
        "俺のことを忘れて",
        "俺のこと忘れて",
        "自分のことを忘れて",
    ];
    ASKS.iter().any(|a| words.contains(a))
}

/// What some new messages add to one person's profile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileDelta {
    pub messages: u64,
    pub interactions: u64,
    pub first: Ts,
    pub last: Ts,
}

impl ProfileDelta {
    fn at(ts: Ts) -> ProfileDelta {
        ProfileDelta {
            messages: 0,
            interactions: 0,
            first: ts,
            last: ts,
        }
    }

    fn seen(&mut self, ts: Ts) {
        self.first = self.first.min(ts);
        self.last = self.last.max(ts);
    }
}

/// What the messages of `conversation` (oldest first) newer than `after`
/// add to each person's profile: their messages, and their interactions
/// with `bot`: a message that mentions it or calls it by `names`, a message
/// right after the bot's, and the bot's message right after theirs.
pub fn tally(
    conversation: &[Message],
    after: Option<Ts>,
    bot: &UserId,
    names: &[&str],
) -> BTreeMap<UserId, ProfileDelta> {
    let mut out: BTreeMap<UserId, ProfileDelta> = BTreeMap::new();
    let is_new = |m: &Message| after.is_none_or(|a| m.ts > a);
    let mut previous: Option<&Message> = None;
    for m in conversation {
        let person = !m.is_bot && m.user != *bot;
        if is_new(m) {
            if person {
                let d = out
                    .entry(m.user.clone())
                    .or_insert_with(|| ProfileDelta::at(m.ts));
                d.seen(m.ts);
                d.messages += 1;
                let calls =
                    mentions_user(&m.text, bot) || names.iter().any(|n| calls_name(&m.text, n));
                let answers_bot = previous.is_some_and(|p| p.user == *bot);
                if calls || answers_bot {
                    d.interactions += 1;
                }
            } else if m.user == *bot {
                if let Some(p) = previous.filter(|p| !p.is_bot && p.user != *bot) {
                    let d = out
                        .entry(p.user.clone())
                        .or_insert_with(|| ProfileDelta::at(p.ts));
                    d.interactions += 1;
                }
            }
        }
        previous = Some(m);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ChannelId;

    fn msg(user: &str, secs: u64, text: &str) -> Message {
        Message::new(
            ChannelId::parse("C1").unwrap(),
            UserId::parse(user).unwrap(),
            text,
            Ts::from_parts(1_767_600_000 + secs, 100),
            None,
            user == "UBOT",
        )
    }

    #[test]
    fn forget_me_is_asked_in_english_or_japanese() {
        for yes in [
            "<@UBOT> forget me",
            "please forget about me!",
            "<@UBOT> 私のことを忘れて",
            "僕のこと忘れてね",
        ] {
            assert!(forget_me(yes), "{yes}");
        }
        for no in [
            "don't forget me",
            "forget it",
            "I forget",
            "忘れてた",
            "私のことを忘れないで",
        ] {
            assert!(!forget_me(no), "{no}");
        }
    }

    #[test]
    fn familiarity_follows_the_interactions() {
        let t = FamiliarityThresholds::default();
        assert_eq!(Familiarity::of(0, t), Familiarity::Stranger);
        assert_eq!(Familiarity::of(5, t), Familiarity::Stranger);
        assert_eq!(Familiarity::of(6, t), Familiarity::Acquaintance);
        assert_eq!(Familiarity::of(31, t), Familiarity::Friend);
        assert_eq!(Familiarity::of(101, t), Familiarity::Close);
    }

    #[test]
    fn messages_and_exchanges_with_the_bot_are_counted_once() {
        let bot = UserId::parse("UBOT").unwrap();
        let conversation = vec![
            msg("UALICE", 0, "anyone know grub?"),
            msg("UBOT", 10, "try update-grub"),
            msg("UALICE", 20, "that worked"),
            msg("UBOB", 30, "myao, what about lilo?"),
            msg("UCAROL", 40, "lilo is old"),
        ];
        let all = tally(&conversation, None, &bot, &["myao"]);
        let alice = &all[&UserId::parse("UALICE").unwrap()];
        // Her question answered by the bot, her reply to it.
        assert_eq!((alice.messages, alice.interactions), (2, 2));
        let bob = &all[&UserId::parse("UBOB").unwrap()];
        assert_eq!((bob.messages, bob.interactions), (1, 1));
        let carol = &all[&UserId::parse("UCAROL").unwrap()];
        assert_eq!((carol.messages, carol.interactions), (1, 0));
        assert!(!all.contains_key(&bot));

        // Only what is newer than `after`.
        let later = tally(&conversation, Some(conversation[2].ts), &bot, &["myao"]);
        assert!(!later.contains_key(&UserId::parse("UALICE").unwrap()));
        assert_eq!(later.len(), 2);
    }

    #[test]
    fn only_topics_a_fact_still_backs_stay() {
        let topics: Vec<String> = ["osaka", "namba", "cats"].map(String::from).to_vec();
        let backing: std::collections::BTreeSet<String> =
            ["cats", "osaka", "ramen"].map(String::from).into();
        assert_eq!(still_backed(&topics, Some(&backing)), ["osaka", "cats"]);
        assert!(still_backed(&topics, None).is_empty());
    }
}
