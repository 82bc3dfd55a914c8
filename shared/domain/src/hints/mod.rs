//! What people tell the bot about its speaking, and how it hears it.
//!
//! A member takes a hint: a 👍 or a "thanks, that helped" on what it said
//! makes it a little readier to speak in that channel, a 👎, "you talk too
//! much" or 「しゃべりすぎ」 a little less ready, and "not now" or 「1時間黙ってて」
//! keeps it from speaking unprompted there for a while. This module only
//! recognises a hint; [`crate::tuning`] is what a channel makes of them.
//!
//! The rules are cheap, like [`crate::address`]'s: word lists as data, read
//! around each phrase. A phrase is a hint only where a member would hear
//! one: opening its clause (after a greeting, a "please" or a duration) and
//! followed by nothing but fillers and a duration ("be quiet for an hour
//! please"), and in Japanese closing its clause (「ちょっと静かにしてて」).
//! So "thanks to the new cache, ...", "don't stop", 「黙ってたけど」 and
//! 「静かにしてって言われた」 are none, nor is a hint its clause hands on
//! ("not now, but tomorrow I'll try it"). Quotes, code and links are not
//! the person's own words ([`crate::address`]), nor is what follows a
//! request's colon ("translate to Japanese: be quiet", "reply to Bob: not
//! now", 「英語に訳して：静かにして」), and a message that @-mentions someone
//! else may say it to them.
//!
//! A mute lasts what it says, any duration: "for a week" and 「1週間」 are
//! held to a day ([`MAX_MUTE_MINUTES`], and the bot says so), "today" and
//! "until tomorrow" last until midnight where the workspace is
//! ([`RestOfDay`]).

use crate::address::plain;
use crate::reply::EmojiName;
use crate::settings::Settings;
use crate::text::{mentions, spoken};
use english::english;
use japanese::japanese;

mod english;
mod heard;
mod japanese;
mod mute;

pub use mute::{
    mute_minutes, RestOfDay, CAPPED_NOTICE, DEFAULT_MUTE_MINUTES, MAX_MUTE_MINUTES,
    MIN_MUTE_MINUTES,
};

use heard::{Heard, Sense};

/// Something a person told the bot about its speaking in a channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hint {
    /// Welcome: a thanks, "that helped", a 👍 or 🙏 on its message.
    Positive,
    /// Too much: "you talk too much", 「呼んでない」, a 👎 or 🤐 on its message.
    Negative,
    /// "Be quiet", "not now", 「静かにして」: no unprompted word in the channel
    /// for `minutes` ([`MIN_MUTE_MINUTES`] to [`MAX_MUTE_MINUTES`]). It is
    /// also a negative hint: the channel is tuned as for [`Hint::Negative`].
    Mute { minutes: u32 },
}

/// A hint in words, as [`words_hint`] heard it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WordsHint {
    pub hint: Hint,
    /// A mute asked for longer than [`MAX_MUTE_MINUTES`] ("for a week"),
    /// held to it: the acknowledgment says so ([`CAPPED_NOTICE`]).
    pub capped: bool,
}

/// The emoji of a Slack reaction as its event names it, a skin tone left
/// out: `+1::skin-tone-2` is `+1`.
pub fn reaction_emoji(reaction: &str) -> Option<EmojiName> {
    EmojiName::parse(base_emoji(reaction)).ok()
}

fn base_emoji(name: &str) -> &str {
    name.split("::").next().unwrap_or(name)
}

/// The hint of a reaction on the bot's message: positive for an emoji of
/// `positive_reactions`, negative for one of `negative_reactions` (a skin
/// tone counts as its emoji), none for any other or for one in both lists.
/// A reaction is never a mute: it says how the message was taken, not for
/// how long to keep quiet.
pub fn reaction_hint(emoji: &EmojiName, settings: &Settings) -> Option<Hint> {
    let name = base_emoji(emoji.as_str());
    let listed = |list: &[EmojiName]| list.iter().any(|e| base_emoji(e.as_str()) == name);
    match (
        listed(&settings.positive_reactions),
        listed(&settings.negative_reactions),
    ) {
        (true, false) => Some(Hint::Positive),
        (false, true) => Some(Hint::Negative),
        _ => None,
    }
}

/// The hint in words said to the bot: `text` replies to its message or
/// mentions it (the caller knows which). `names` are the bot's names
/// ([`Settings::names`]), stripped wherever they stand, and its user id,
/// by which its own `<@U…>` mention is told from another's: a message that
/// mentions anyone else may be said to them, and is no hint.
///
/// A message with several hints gives the strongest: a mute over a
/// negative over a positive ("thanks, but not now" is a mute). A mute's
/// duration is the one said ("for 2 hours", 「30分」, "for a week", "today":
/// `today` is what is left of the workspace's day), held to
/// [`MIN_MUTE_MINUTES`]..=[`MAX_MUTE_MINUTES`], else [`DEFAULT_MUTE_MINUTES`].
pub fn words_hint(text: &str, names: &[&str], today: RestOfDay) -> Option<WordsHint> {
    let is_name = |id: &str| names.iter().any(|n| n.trim().eq_ignore_ascii_case(id));
    if mentions(text).any(|user| !is_name(user.as_str())) {
        return None;
    }
    let own = unquoted(&without_names(&plain(&spoken(text)).to_lowercase(), names));
    let clauses = clauses(&own);
    let heard_all: Vec<Heard> = clauses.iter().map(|c| hear(c, today)).collect();
    let mut found: Option<(Sense, Option<u32>)> = None;
    let mut said_minutes = None;
    for (at, heard) in heard_all.iter().enumerate() {
        match *heard {
            Heard::Duration(minutes) => said_minutes = said_minutes.or(Some(minutes)),
            Heard::Hint(sense, minutes) if !handed_on(&clauses, &heard_all, at) => {
                if found.is_none_or(|(strongest, _)| sense > strongest) {
                    found = Some((sense, minutes));
                }
            }
            Heard::Hint(..) | Heard::Nothing => {}
        }
    }
    let (hint, capped) = match found? {
        (Sense::Mute, minutes) => {
            let asked = minutes.or(said_minutes).unwrap_or(DEFAULT_MUTE_MINUTES);
            let minutes = mute_minutes(asked);
            (Hint::Mute { minutes }, asked > minutes)
        }
        (Sense::Negative, _) => (Hint::Negative, false),
        (Sense::Positive, _) => (Hint::Positive, false),
        (Sense::Not, _) => return None,
    };
    Some(WordsHint { hint, capped })
}

/// The message without what follows a request's colon on its line: "translate
/// to japanese: be quiet", "reply to bob: not now", "how do i tell my cat:
/// not now?", 「英語に訳して：静かにして」 ask for words, they do not hint.
fn unquoted(text: &str) -> String {
    let lines: Vec<&str> = text.lines().map(own_part).collect();
    lines.join("\n")
}

/// `line` up to the first colon that words of a request lead to, in their
/// sentence ("myao: translate this: be quiet" is cut at the second).
fn own_part(line: &str) -> &str {
    let mut start = 0;
    for (at, c) in line.char_indices() {
        match c {
            '.' | '!' | '?' | '。' | '！' | '？' => start = at + c.len_utf8(),
            ':' | '：' => {
                let sentence = &line[start..at];
                let mut words = sentence.split(|c: char| !c.is_alphanumeric() && c != '\'');
                if words.any(|w| QUOTING.contains(&w))
                    || JA_QUOTING.iter().any(|q| sentence.contains(q))
                {
                    return &line[..at];
                }
                start = at + c.len_utf8();
            }
            _ => {}
        }
    }
    line
}

/// Words of a request for words, before a colon: what follows is quoted.
const QUOTING: &[&str] = &[
    "translate",
    "translation",
    "reply",
    "respond",
    "answer",
    "say",
    "saying",
    "tell",
    "write",
    "draft",
    "rephrase",
    "reword",
    "rewrite",
    "paraphrase",
    "summarize",
    "summarise",
    "explain",
    "proofread",
    "correct",
    "fix",
    "spell",
    "type",
    "post",
    "send",
    "ask",
    "repeat",
    "quote",
    "mean",
    "means",
    "meaning",
    "message",
    "dm",
    "email",
];
const JA_QUOTING: &[&str] = &[
    "訳して",
    "訳す",
    "翻訳",
    "英訳",
    "和訳",
    "返信",
    "返事",
    "言って",
    "言う",
    "伝えて",
    "書いて",
    "送って",
    "英語で",
    "日本語で",
    "意味",
    "添削",
    "直して",
    "要約",
];

/// The message cut at every mark that ends a clause or a sentence.
fn clauses(text: &str) -> Vec<&str> {
    text.split(|c: char| {
        matches!(
            c,
            ',' | '.'
                | '!'
                | '?'
                | ';'
                | ':'
                | '\n'
                | '、'
                | '。'
                | '！'
                | '？'
                | '，'
                | '…'
                | '：'
        )
    })
    .map(str::trim)
    .filter(|c| !c.is_empty())
    .collect()
}

/// Whether the hint of clause `at` is handed on to a next clause that is
/// no hint nor a duration and opens with a conjunction: "not now, but
/// tomorrow I'll try it", "thanks, but that didn't work",
/// 「ありがとう、でもまだ動かない」; not "not now, until tomorrow".
fn handed_on(clauses: &[&str], heard: &[Heard], at: usize) -> bool {
    let (Some(next), Some(next_heard)) = (clauses.get(at + 1), heard.get(at + 1)) else {
        return false;
    };
    if !matches!(next_heard, Heard::Nothing) {
        return false;
    }
    let first = next.split_whitespace().next().unwrap_or("");
    CONJUNCTIONS.contains(&first) || JA_CONJUNCTIONS.iter().any(|c| next.starts_with(c))
}

const CONJUNCTIONS: &[&str] = &[
    "but", "because", "cause", "since", "though", "although", "however", "if", "when", "until",
    "unless", "while", "yet",
];
const JA_CONJUNCTIONS: &[&str] = &["でも", "けど", "だけど", "ただ", "しかし", "が、"];

/// The message without the bot's names: each left as a pause, so "not now
/// myao" and "myao, not now" read alike. A name in Latin letters only as a
/// whole word; a Japanese honorific after a name goes with it.
fn without_names(text: &str, names: &[&str]) -> String {
    let mut out = text.to_owned();
    for name in names {
        let name = name.trim().to_lowercase();
        if name.is_empty() {
            continue;
        }
        let mut kept = String::with_capacity(out.len());
        let mut rest = out.as_str();
        while let Some(at) = rest.find(&name) {
            let (before, after) = (&rest[..at], &rest[at + name.len()..]);
            let latin = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric());
            if name.is_ascii() && (latin(before.chars().next_back()) || latin(after.chars().next()))
            {
                kept.push_str(&rest[..at + name.len()]);
                rest = after;
            } else {
                kept.push_str(before.trim_end_matches('@'));
                kept.push_str(" , ");
                rest = HONORIFICS
                    .iter()
                    .find_map(|h| after.strip_prefix(h))
                    .unwrap_or(after);
            }
        }
        kept.push_str(rest);
        out = kept;
    }
    out
}

const HONORIFICS: &[&str] = &["さん", "ちゃん", "くん", "君", "さま", "様", "たん"];

/// What a clause holds: a hint in English or in Japanese, a duration alone,
/// or nothing.
fn hear(clause: &str, today: RestOfDay) -> Heard {
    match english(clause, today) {
        Heard::Nothing => japanese(clause, today),
        heard => heard,
    }
}

#[cfg(test)]
mod tests;
