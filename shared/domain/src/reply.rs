//! The form of an answer: a full reply, one short sentence, or an emoji
//! reaction (the Discord design's reaction / short acknowledgement / full
//! reply), and the plain thanks or greeting that earns a reaction.

use std::collections::BTreeSet;
use std::fmt;

use serde::{Deserialize, Serialize};

use super::text::without_marks;

/// The longest emoji name accepted (Slack's own limit is lower).
const MAX_EMOJI_CHARS: usize = 100;

/// A Slack emoji name, without colons: `tada`, `+1`, `thinking_face`, a
/// workspace's `party-parrot`. Lower-case letters, digits, `_`, `-`, `+`
/// and `'` (Slack's alphabet for emoji names).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct EmojiName(String);

/// Why a text is not an emoji name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not an emoji name: {0:?}")]
pub struct EmojiError(String);

impl EmojiName {
    /// Reads an emoji name as a model or a person writes it: surrounding
    /// colons and spaces are dropped and letters lowered (`:Tada:` is
    /// `tada`); anything else outside the alphabet is refused.
    pub fn parse(text: &str) -> Result<EmojiName, EmojiError> {
        let name = text.trim().trim_matches(':').to_lowercase();
        let allowed = |c: char| {
            c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '_' | '-' | '+' | '\'')
        };
        if name.is_empty() || name.chars().count() > MAX_EMOJI_CHARS || !name.chars().all(allowed) {
            return Err(EmojiError(text.chars().take(MAX_EMOJI_CHARS).collect()));
        }
        Ok(EmojiName(name))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// `:wave:`, for a greeting.
    pub fn wave() -> EmojiName {
        EmojiName("wave".to_owned())
    }
}

impl std::str::FromStr for EmojiName {
    type Err = EmojiError;
    fn from_str(text: &str) -> Result<EmojiName, EmojiError> {
        EmojiName::parse(text)
    }
}

impl TryFrom<String> for EmojiName {
    type Error = EmojiError;
    fn try_from(text: String) -> Result<EmojiName, EmojiError> {
        EmojiName::parse(&text)
    }
}

impl From<EmojiName> for String {
    fn from(name: EmojiName) -> String {
        name.0
    }
}

impl fmt::Display for EmojiName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The emoji a reaction uses: `chosen` when the workspace has it (its
/// custom emoji and the standard ones, `known`), else `fallback`. With
/// `known` unreadable (`None`), `chosen` is tried as it is: Slack refuses
/// an unknown name, and the caller falls back then.
pub fn pick_emoji(
    chosen: &EmojiName,
    known: Option<&BTreeSet<String>>,
    fallback: &EmojiName,
) -> EmojiName {
    match known {
        Some(names) if !names.contains(chosen.as_str()) => fallback.clone(),
        _ => chosen.clone(),
    }
}

/// How the bot answers a conversation.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reply {
    /// A reply written by the reply model, as long as it needs.
    #[default]
    Full,
    /// One short sentence ("nice!"), the reply model held to
    /// `short_max_tokens`.
    Short,
    /// An emoji reaction on the answered message; no reply model call.
    Reaction { emoji: EmojiName },
    /// A new top-level post about `topic`, opening a conversation in a
    /// channel gone quiet (a proactive judgment's yes; `domain::proactive`).
    /// The job's `newest_ts` is when the judgment was made: any message
    /// after it makes the post stale.
    Opener { topic: String },
}

impl Reply {
    pub fn is_full(&self) -> bool {
        matches!(self, Reply::Full)
    }

    /// `full`, `short`, `reaction` or `opener`, for logs and reports.
    pub fn name(&self) -> &'static str {
        match self {
            Reply::Full => "full",
            Reply::Short => "short",
            Reply::Reaction { .. } => "reaction",
            Reply::Opener { .. } => "opener",
        }
    }
}

/// A message that only closes or opens a conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Closing {
    /// "thanks!", "ありがとうございます"
    Thanks,
    /// "good morning", "おはよう"
    Greeting,
}

impl Closing {
    /// The emoji a member reacts to it with: `thanks` for thanks (the
    /// `default_reaction` setting), `:wave:` for a greeting.
    pub fn emoji(self, thanks: &EmojiName) -> EmojiName {
        match self {
            Closing::Thanks => thanks.clone(),
            Closing::Greeting => EmojiName::wave(),
        }
    }
}

/// Words of thanks, without spaces (the text is compared without them).
const THANKS: &[&str] = &[
    "thankyou",
    "thanks",
    "thank",
    "thx",
    "tysm",
    "ty",
    "cheers",
    "appreciateit",
    "ありがとうございます",
    "ありがとうございました",
    "ありがとう",
    "ありがと",
    "あざす",
    "サンキュー",
    "感謝です",
    "感謝",
    "助かりました",
    "助かります",
    "助かった",
    "助かる",
];

/// Words of greeting, without spaces.
const GREETINGS: &[&str] = &[
    "goodmorning",
    "goodafternoon",
    "goodevening",
    "goodnight",
    "morning",
    "hello",
    "hiya",
    "hey",
    "hi",
    "yo",
    "gm",
    "おはようございます",
    "おはよう",
    "こんにちは",
    "こんばんは",
    "おやすみなさい",
    "おやすみ",
    "お疲れ様です",
    "お疲れさまです",
    "お疲れ様",
    "お疲れ",
    "おつかれさまです",
    "おつかれ",
];

/// Words that may go with them and change nothing.
const FILLER: &[&str] = &[
    "somuch",
    "alot",
    "verymuch",
    "again",
    "really",
    "everyone",
    "everybody",
    "all",
    "folks",
    "guys",
    "team",
    "there",
    "okay",
    "ok",
    "great",
    "perfect",
    "awesome",
    "nice",
    "cool",
    "gotit",
    "thatworked",
    "itworked",
    "worksnow",
    "itworksnow",
    "本当に",
    "ほんとに",
    "みなさん",
    "皆さん",
    "みんな",
    "了解です",
    "了解",
    "です",
];

/// The longest closing text considered, in characters once spaces,
/// punctuation, mentions, emoji and names are taken out.
const MAX_CLOSING_CHARS: usize = 40;

/// Whether `text` is only a thanks or a greeting: nothing but such words
/// (and filler), once mentions, `:emoji:`, punctuation and `names` (the
/// bot's) are taken out. "thanks myao!" and "おはようございます☀" are;
/// "thanks, but it still fails" is not.
pub fn closing(text: &str, names: &[&str]) -> Option<Closing> {
    let mut rest = strip_marks(text).to_lowercase();
    for name in names {
        let name = name.trim().to_lowercase();
        if !name.is_empty() {
            rest = rest.replace(&name, " ");
        }
    }
    let rest: String = rest.chars().filter(|c| c.is_alphanumeric()).collect();
    if rest.is_empty() || rest.chars().count() > MAX_CLOSING_CHARS {
        return None;
    }
    let mut found = None;
    let mut at = rest.as_str();
    'words: while !at.is_empty() {
        for (list, kind) in [
            (THANKS, Some(Closing::Thanks)),
            (GREETINGS, Some(Closing::Greeting)),
            (FILLER, None),
        ] {
            if let Some(word) = list.iter().find(|w| at.starts_with(**w)) {
                at = &at[word.len()..];
                // Thanks wins over a greeting in "hi, thanks!".
                found = match (found, kind) {
                    (Some(Closing::Thanks), _) | (_, Some(Closing::Thanks)) => {
                        Some(Closing::Thanks)
                    }
                    (f, k) => k.or(f),
                };
                continue 'words;
            }
        }
        return None;
    }
    found
}

/// `text` without Slack's marks: `<...>` (mentions, links) and `:emoji:`.
fn strip_marks(text: &str) -> String {
    let text = without_marks(text);
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != ':' {
            out.push(c);
            continue;
        }
        // An emoji code is `:name:` with no space inside.
        let code: String = chars
            .clone()
            .take_while(|d| *d != ':' && !d.is_whitespace())
            .collect();
        let closed = chars.clone().nth(code.chars().count()) == Some(':');
        if !code.is_empty() && closed {
            for _ in 0..=code.chars().count() {
                chars.next();
            }
        }
        out.push(' ');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emoji_names_are_read_leniently_and_checked_strictly() {
        assert_eq!(EmojiName::parse(":Tada:").unwrap().as_str(), "tada");
        assert_eq!(EmojiName::parse(" +1 ").unwrap().as_str(), "+1");
        assert_eq!(
            EmojiName::parse("party-parrot").unwrap().as_str(),
            "party-parrot"
        );
        for bad in ["", "::", "thumbs up", "🎉", "a<b", &"x".repeat(101)] {
            assert!(EmojiName::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_reply_form_round_trips_and_defaults_to_full() {
        let reaction = Reply::Reaction {
            emoji: EmojiName::parse("tada").unwrap(),
        };
        let json = serde_json::to_string(&reaction).unwrap();
        assert_eq!(json, r#"{"reaction":{"emoji":"tada"}}"#);
        assert_eq!(serde_json::from_str::<Reply>(&json).unwrap(), reaction);
        assert_eq!(
            serde_json::from_str::<Reply>(r#""short""#).unwrap(),
            Reply::Short
        );
        assert!(serde_json::from_str::<Reply>(r#"{"reaction":{"emoji":"no way"}}"#).is_err());
        assert!(Reply::default().is_full());
    }

    #[test]
    fn an_unknown_emoji_falls_back_unless_the_list_is_unknown() {
        let known: BTreeSet<String> = ["tada".to_owned(), "+1".to_owned()].into();
        let tada = EmojiName::parse("tada").unwrap();
        let nope = EmojiName::parse("not-an-emoji").unwrap();
        let plus = EmojiName::parse("+1").unwrap();
        assert_eq!(pick_emoji(&tada, Some(&known), &plus), tada);
        assert_eq!(pick_emoji(&nope, Some(&known), &plus), plus);
        assert_eq!(pick_emoji(&nope, None, &plus), nope);
    }

    #[test]
    fn plain_thanks_and_greetings_are_closings() {
        let names = ["myao", "ミャオ"];
        for text in [
            "thanks!",
            "Thank you so much <@UBOT>",
            "thx myao :pray:",
            "ok, thanks again",
            "ありがとうございます！",
            "ミャオ、ありがと🙏",
            "hi, thanks!",
            "that worked, thank you!",
        ] {
            assert_eq!(closing(text, &names), Some(Closing::Thanks), "{text}");
        }
        for text in [
            "good morning everyone",
            "おはようございます☀️",
            "hey myao",
            "お疲れ様です",
        ] {
            assert_eq!(closing(text, &names), Some(Closing::Greeting), "{text}");
        }
    }

    #[test]
    fn anything_more_is_not_a_closing() {
        let names = ["myao"];
        for text in [
            "thanks, but it still fails",
            "this is it",
            "hello, does anyone know grub?",
            "ありがとう、でもまだ動かない",
            "ok",
            "",
            "<@UBOT>",
            "they said thanks",
        ] {
            assert_eq!(closing(text, &names), None, "{text}");
        }
    }
}
