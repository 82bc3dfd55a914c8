//! The words and marks the address rules read around a name.

/// Characters that join the name into a longer token: `myao-bot`,
/// `acme/myao`, `#myao`, `myao.example.com`, `myao_test`, `myao:latest`.
pub(super) fn joins(c: char) -> bool {
    matches!(
        c,
        '-' | '.' | '/' | '\\' | '#' | '_' | ':' | '=' | '+' | '$' | '%'
    )
}

/// A letter or digit of a Latin word.
pub(super) fn latin(c: char) -> bool {
    c.is_ascii_alphanumeric()
}

/// A mark that sets a vocative off from what follows.
pub(super) fn is_pause(c: char) -> bool {
    matches!(
        c,
        ',' | ':' | '!' | '?' | '、' | '，' | '：' | '！' | '？' | '~' | '〜' | 'ー' | '—' | '…'
    )
}

/// A mark (or an emoji, or a space) a sentence may end with after the name.
pub(super) fn is_closing_mark(c: char) -> bool {
    !c.is_alphanumeric()
}

/// Japanese honorifics after a name: 「みゃおさん」「みゃおちゃん」.
pub(super) fn strip_honorific(after: &str) -> (bool, &str) {
    for h in ["さん", "ちゃん", "くん", "君", "さま", "様", "たん"] {
        if let Some(rest) = after.strip_prefix(h) {
            return (true, rest);
        }
    }
    (false, after)
}

/// A Japanese particle right after the name makes it part of a sentence
/// about it: subject, object, topic, or quoted (「って」).
pub(super) fn japanese_particle(after: &str) -> bool {
    const PARTICLES: &[&str] = &[
        "って",
        "から",
        "より",
        "まで",
        "なら",
        "だけ",
        "しか",
        "とか",
        "など",
        "じゃ",
        "でも",
        "は",
        "が",
        "に",
        "を",
        "の",
        "と",
        "も",
        "で",
        "へ",
        "だ",
        "や",
        "っぽ",
        "みたい",
    ];
    let after = after.trim_start_matches(' ');
    PARTICLES.iter().any(|p| after.starts_with(p))
}

/// Words that open a call before the name: "hey myao", "thanks myao".
pub(super) fn is_interjection(word: &str) -> bool {
    let word = word.trim_matches(|c: char| !c.is_alphanumeric() && c != '@');
    matches!(
        word,
        "hey"
            | "hi"
            | "hello"
            | "yo"
            | "oi"
            | "ok"
            | "okay"
            | "oh"
            | "so"
            | "thanks"
            | "thank"
            | "you"
            | "thx"
            | "ty"
            | "morning"
            | "good"
            | "evening"
            | "dear"
            | "well"
            | "please"
            | "pls"
            | "ah"
            | "hmm"
            | "sorry"
            | "bye"
            | "night"
            | "cheers"
            | "@"
    ) || ends_with_any(word, JA_VOCATIVES)
}

/// Japanese words that call the next name: 「ねえみゃお」「おいミャオ」.
pub(super) const JA_VOCATIVES: &[&str] = &[
    "ねえ",
    "ねぇ",
    "ねー",
    "なあ",
    "なぁ",
    "おい",
    "あの",
    "ちょっと",
    "やあ",
    "ヘイ",
    "へい",
    "おーい",
    "ありがとう",
    "おはよう",
    "こんにちは",
    "こんばんは",
    "おやすみ",
];

pub(super) fn ends_with_any(word: &str, list: &[&str]) -> bool {
    list.iter().any(|v| word.ends_with(v))
}

/// Whether a question before the name asks for the bot's own view ("what
/// do you think myao?", "what would you suggest myao?"), rather than about
/// it ("have you tried myao?", "did you ask myao?").
pub(super) fn asks_its_view(lead_words: &[&str]) -> bool {
    let words: Vec<&str> = lead_words
        .iter()
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric() && c != '\''))
        .collect();
    words.iter().any(|w| is_you(w))
        && words.last().is_some_and(|w| {
            matches!(
                *w,
                "think" | "reckon" | "suggest" | "recommend" | "say" | "mean" | "know" | "thoughts"
            )
        })
}

fn is_you(word: &str) -> bool {
    let word = word.trim_matches(|c: char| !c.is_alphanumeric() && c != '\'');
    matches!(word, "you" | "you're" | "your" | "u" | "ya")
}

/// Words after a name that ask it something ("myao can you check"), unless
/// the word after them is not "you" ("myao can summarize threads").
const ASKING: &[&str] = &["can", "could", "would", "will", "do", "did", "are"];

/// Words after a name that speak of it in the third person ("myao is
/// down", "myao just broke", "myao and I").
const THIRD_PERSON: &[&str] = &[
    "is",
    "isn't",
    "was",
    "wasn't",
    "has",
    "hasn't",
    "had",
    "does",
    "doesn't",
    "didn't",
    "can't",
    "cannot",
    "won't",
    "wouldn't",
    "couldn't",
    "shouldn't",
    "should",
    "might",
    "may",
    "must",
    "seems",
    "just",
    "said",
    "says",
    "told",
    "broke",
    "went",
    "got",
    "and",
    "or",
    "bot",
    "itself",
    "also",
    "still",
    "never",
    "always",
    "really",
    "apparently",
    "actually",
    "again",
    "keeps",
    "kept",
    "used",
    "being",
    "though",
    "too",
    "isnt",
    "doesnt",
    "cant",
    "wont",
    "didnt",
    "wasnt",
    "vs",
];

/// Words ending in "s" that are no third-person verb: a thanks, a request,
/// a noun put to the room ("myao thanks", "myao status?").
const NOT_VERBS: &[&str] = &[
    "thanks", "thx", "pls", "plz", "status", "yes", "guys", "folks", "thoughts", "ideas", "does",
];

/// Whether what follows a name at the start of a sentence says something
/// of it, in the third person ("myao is down", "myao crashed", "myao can
/// summarize threads"), rather than asking it something ("myao summarize
/// this", "myao can you check").
pub(super) fn about_it(rest: &str) -> bool {
    let mut words = rest
        .split_whitespace()
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric() && c != '\''));
    let Some(first) = words.next() else {
        return false;
    };
    if ASKING.contains(&first) {
        return !is_you(words.next().unwrap_or(""));
    }
    THIRD_PERSON.contains(&first) || verb_of_it(first)
}

/// Whether a word is in the past tense or a third-person verb ("crashed",
/// "works", "answers"), not a request ("thanks", "pls", "status?").
fn verb_of_it(word: &str) -> bool {
    let lower = word.to_ascii_lowercase();
    lower.len() > 3
        && (lower.ends_with("ed")
            || (lower.ends_with('s')
                && !lower.ends_with("ss")
                && !NOT_VERBS.contains(&lower.as_str())))
}

/// Whether a Japanese sentence asks for something: it ends (marks and
/// laughter aside) in a request or a question form.
pub(super) fn requests(tail: &str) -> bool {
    let end = tail.trim_end_matches(|c: char| {
        c.is_whitespace()
            || matches!(c, '。' | '！' | '!' | 'w' | '笑' | '〜' | '~' | 'ー')
            || !c.is_alphanumeric()
    });
    [
        "て",
        "てね",
        "てよ",
        "てくれ",
        "ください",
        "下さい",
        "ちょうだい",
        "頂戴",
        "か",
        "かな",
        "の",
        "何",
        "なに",
        "どう",
    ]
    .iter()
    .any(|form| end.ends_with(form))
}
