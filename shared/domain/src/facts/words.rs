//! The words a fact and a conversation are matched by (keyword recall).

use std::collections::BTreeSet;

use super::fact::Fact;
use crate::text::without_marks;

/// How a text is written: in words spaced apart (English and the other
/// Latin scripts) or without spaces (Japanese, Chinese, Korean).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Script {
    #[default]
    Spaced,
    Wide,
}

impl Script {
    /// `text`'s script: wide when at least a third of its letters are
    /// (Japanese keeps Latin names and terms among its kana).
    pub fn of(text: &str) -> Script {
        let (mut letters, mut wides) = (0usize, 0usize);
        for c in text.chars().filter(|c| c.is_alphabetic()) {
            letters += 1;
            wides += usize::from(wide(c));
        }
        if wides * 3 >= letters.max(1) {
            Script::Wide
        } else {
            Script::Spaced
        }
    }
}

/// Whether `c` is written without spaces between words (CJK).
pub(super) fn wide(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF   // hiragana, katakana
        | 0x3400..=0x4DBF // CJK extension A
        | 0x4E00..=0x9FFF // CJK ideographs
        | 0xF900..=0xFAFF
        | 0xAC00..=0xD7AF // hangul
        | 0xFF66..=0xFF9F) // half-width katakana
}

/// Whether `c` is hiragana: in Japanese the particles and endings (です,
/// ます, って, ながら) that any two sentences share, so a pair of them
/// tells nothing. Names, places and things are written in kanji or
/// katakana.
fn kana(c: char) -> bool {
    matches!(c as u32, 0x3040..=0x309F)
}

/// Latin words too common to tell facts apart.
const STOPWORDS: &[&str] = &[
    "is", "it", "to", "of", "in", "on", "at", "an", "be", "do", "my", "me", "we", "he", "so", "or",
    "if", "as", "by", "up", "no", "us", "am", "hi", "ok", "the", "and", "for", "are", "but", "not",
    "you", "all", "any", "can", "had", "her", "was", "one", "our", "out", "has", "him", "his",
    "how", "its", "who", "did", "yes", "get", "got", "she", "too", "use", "that", "with", "have",
    "this", "will", "your", "from", "they", "know", "want", "been", "good", "much", "some", "time",
    "very", "when", "come", "here", "just", "like", "long", "make", "many", "more", "only", "over",
    "such", "take", "than", "them", "well", "were", "what", "about", "there", "their", "would",
    "could", "should", "which", "into", "also", "then", "does", "doing", "done", "it's", "i'm",
    "don't",
];

/// The words of `text` for matching: Latin words of two letters or more
/// (lower case, without the commonest), and for Japanese and other scripts
/// without spaces, the character bigrams of each run (a lone character as
/// itself) but those all in hiragana ([`kana`]). Slack's `<...>` marks are
/// left out.
pub fn tokens(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let clean = without_marks(text);
    let mut run: Vec<char> = Vec::new();
    let mut word = String::new();
    let flush_word = |word: &mut String, out: &mut BTreeSet<String>| {
        let w = word.to_lowercase();
        if w.chars().count() >= 2 && !STOPWORDS.contains(&w.as_str()) {
            out.insert(w);
        }
        word.clear();
    };
    let flush_run = |run: &mut Vec<char>, out: &mut BTreeSet<String>| {
        match run.len() {
            0 => {}
            1 if !run.iter().all(|c| kana(*c)) => {
                out.insert(run[0].to_string());
            }
            1 => {}
            _ => {
                for pair in run.windows(2).filter(|p| !p.iter().all(|c| kana(*c))) {
                    out.insert(pair.iter().collect());
                }
            }
        }
        run.clear();
    };
    for c in clean.chars() {
        if wide(c) {
            flush_word(&mut word, &mut out);
            run.push(c);
        } else if c.is_alphanumeric() || c == '\'' {
            flush_run(&mut run, &mut out);
            word.push(c);
        } else {
            flush_word(&mut word, &mut out);
            flush_run(&mut run, &mut out);
        }
    }
    flush_word(&mut word, &mut out);
    flush_run(&mut run, &mut out);
    out
}

/// The words of `text` that are names: capitalised Latin words not at the
/// start of a sentence, and `names` (the people of the conversation), lower
/// case, as [`tokens`] writes them.
pub fn proper_nouns(text: &str, names: &[&str]) -> BTreeSet<String> {
    let mut out: BTreeSet<String> = names.iter().flat_map(|n| tokens(n)).collect();
    let mut sentence_start = true;
    for word in text.split_whitespace() {
        let bare: String = word.chars().filter(|c| c.is_alphanumeric()).collect();
        if !sentence_start && bare.chars().next().is_some_and(char::is_uppercase) {
            out.extend(tokens(&bare));
        }
        sentence_start = word.ends_with(['.', '!', '?', '。', '！', '？']);
    }
    out
}

/// How much a name counts in a match, against 1 for another word.
pub const NAME_WEIGHT: f64 = 2.0;

/// The weighted Jaccard similarity of two word sets: the weight of the
/// words they share over the weight of all their words, a name weighing
/// [`NAME_WEIGHT`].
pub fn similarity(a: &BTreeSet<String>, b: &BTreeSet<String>, names: &BTreeSet<String>) -> f64 {
    let weight = |w: &String| if names.contains(w) { NAME_WEIGHT } else { 1.0 };
    let shared: f64 = a.intersection(b).map(weight).sum();
    let all: f64 = a.union(b).map(weight).sum();
    if all == 0.0 {
        0.0
    } else {
        shared / all
    }
}

/// The words a fact is matched by: its keywords, cues, subject and
/// sentence.
pub fn fact_words(fact: &Fact) -> BTreeSet<String> {
    let mut words = tokens(&fact.subject);
    words.extend(tokens(&fact.text));
    for k in fact.keywords.iter().chain(&fact.cues) {
        words.extend(tokens(k));
    }
    words
}
