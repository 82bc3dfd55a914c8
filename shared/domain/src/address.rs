//! Whether a message calls the bot by its name, only talks about it, or
//! does not use the name at all.
//!
//! A member hears its name in "myao, any idea?" and "hey myao" and answers;
//! in "myao is down again?" or 「みゃおに聞いても」 it hears people talking
//! about it, which it may join like any conversation, but which asks nothing
//! of it. The name inside code, a link, a channel or user reference, a quote
//! or a compound (`myao-bot`, `myao.example.com`) is not its name at all.
//!
//! The rules read the words around each use of the name, in English and
//! Japanese, and stay cheap: no model, no dictionary beyond the short word
//! lists below.

use super::text::spoken;

/// How a message uses the bot's names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameUse {
    /// Addressed to it: "myao, ...", "hey myao", "..., myao?", "can myao
    /// ...?", 「みゃお、」「ねえみゃお」「みゃおさん、...？」.
    Call,
    /// About it: "myao is down", "ask myao", 「みゃおって誰が作ったの？」.
    Talk,
}

/// How `text` uses any of `names`: a call if any use is one, else talk if
/// any use stands as the name, else `None`.
pub fn name_use(text: &str, names: &[&str]) -> Option<NameUse> {
    let plain = plain(&spoken(text)).to_lowercase();
    let mut found = None;
    for name in names {
        let name = name.trim().to_lowercase();
        if name.is_empty() {
            continue;
        }
        for (at, _) in plain.match_indices(&name) {
            match use_at(&plain, at, at + name.len(), &name) {
                Some(NameUse::Call) => return Some(NameUse::Call),
                Some(NameUse::Talk) => found = Some(NameUse::Talk),
                None => {}
            }
        }
    }
    found
}

/// Whether `text` calls the bot by one of `names`.
pub fn calls(text: &str, names: &[&str]) -> bool {
    name_use(text, names) == Some(NameUse::Call)
}

/// `text` without what a person did not say to the room in their own
/// words: quoted lines, code, Slack's `<...>` references (links, channels,
/// users, groups), bare links and double-quoted words, each left as a
/// space, so that words on either side stay apart.
pub(crate) fn plain(text: &str) -> String {
    let unquoted: Vec<&str> = text
        .lines()
        .filter(|l| {
            let l = l.trim_start();
            !(l.starts_with("&gt;") || l.starts_with('>'))
        })
        .collect();
    let mut out = String::with_capacity(text.len());
    let mut rest = unquoted.join("\n");
    // Spans closed on the same text; an unclosed opener is kept as it is.
    for (open, close) in [
        ("```", "```"),
        ("`", "`"),
        ("<", ">"),
        ("\"", "\""),
        ("\u{201c}", "\u{201d}"),
    ] {
        out.clear();
        let mut at = rest.as_str();
        while let Some(start) = at.find(open) {
            let after = &at[start + open.len()..];
            let Some(end) = after.find(close) else { break };
            out.push_str(&at[..start]);
            out.push(' ');
            at = &after[end + close.len()..];
        }
        out.push_str(at);
        rest = std::mem::take(&mut out);
    }
    rest.split_inclusive(char::is_whitespace)
        .map(|word| if word.contains("://") { " " } else { word })
        .collect()
}

/// Characters that join the name into a longer token: `myao-bot`,
/// `acme/myao`, `#myao`, `myao.example.com`, `myao_test`, `myao:latest`.
fn joins(c: char) -> bool {
    matches!(
        c,
        '-' | '.' | '/' | '\\' | '#' | '_' | ':' | '=' | '+' | '$' | '%'
    )
}

/// A letter or digit of a Latin word.
fn latin(c: char) -> bool {
    c.is_ascii_alphanumeric()
}

/// How the use of the name at `text[start..end]` reads.
fn use_at(text: &str, start: usize, end: usize, name: &str) -> Option<NameUse> {
    let before = &text[..start];
    let after = &text[end..];
    let prev = before.chars().next_back();
    let next = after.chars().next();
    let mut next2 = after.chars().skip(1);
    let next2 = next2.next();
    let ascii = name.is_ascii();
    if ascii && (prev.is_some_and(latin) || next.is_some_and(latin)) {
        return None;
    }
    if prev.is_some_and(|c| joins(c) && c != ':') {
        return None;
    }
    // A joiner between the name and a letter or digit: a compound. A dot or
    // a colon before a space or the end closes a sentence or opens a call.
    if next.is_some_and(joins) && next2.is_some_and(|c| c.is_alphanumeric()) {
        return None;
    }
    let lead = sentence_lead(before);
    let (honorific, after) = strip_honorific(after);
    // 「みゃおって」「みゃおに」「みゃおは」, "myao's": about it.
    if japanese_particle(after) || after.starts_with(['\'', '\u{2019}']) {
        return Some(NameUse::Talk);
    }
    let tail = sentence_tail(after);
    let rest = tail.trim_start_matches(|c: char| c.is_whitespace() || is_pause(c));
    let paused = tail.trim_start().starts_with(is_pause) || tail.trim().is_empty();
    let question = tail.contains(['?', '？']);

    // Opened with the name, or with a greeting and the name.
    let interjections = lead.split_whitespace().all(is_interjection);
    // "hey, myao is down" is talk; "hey, myao, help?" a call.
    if lead.is_empty() || prev == Some('@') || (interjections && (!lead.ends_with(',') || paused)) {
        // 「みゃおちゃん教えて」 yes, 「みゃおちゃん可愛いね」 no.
        let japanese = rest.chars().next().is_some_and(|c| !c.is_ascii());
        let call = if paused {
            true
        } else if japanese {
            question || requests(tail)
        } else {
            !about_it(rest)
        };
        return Some(if call { NameUse::Call } else { NameUse::Talk });
    }
    let lead_words: Vec<&str> = lead.split_whitespace().collect();
    // Japanese: a name after 「ねえ」「おい」, a name set off by 「、」, or
    // one with an honorific in a question or a request.
    if lead_words
        .last()
        .is_some_and(|w| ends_with_any(w, JA_VOCATIVES))
        || (!ascii && paused)
        || (honorific && (question || requests(tail)))
    {
        return Some(NameUse::Call);
    }
    // "..., myao?", "thanks, myao", "what do you think myao?"
    let last = rest.trim_end_matches(is_closing_mark).is_empty();
    if last
        && (lead.ends_with(',')
            || lead.ends_with('、')
            || lead_words
                .last()
                .is_some_and(|w| is_interjection(w.trim_end_matches(',')))
            || (question && asks_its_view(&lead_words)))
    {
        return Some(NameUse::Call);
    }
    // "can myao summarize this thread?": a request to it, by name.
    if lead_words.len() == 1
        && matches!(lead_words[0], "can" | "could" | "would" | "will")
        && (question || tail.contains("please"))
    {
        return Some(NameUse::Call);
    }
    // 「みゃお元気？」「ミャオ教えて」: the name, then the question or request.
    if !ascii && (lead.is_empty() || lead_words.len() == 1) && (question || requests(tail)) {
        return Some(NameUse::Call);
    }
    Some(NameUse::Talk)
}

/// The part of the sentence before the name, trimmed: from the last
/// sentence end (a line's end, `.`, `!`, `?`, `。`, `！`, `？`).
fn sentence_lead(before: &str) -> &str {
    let start = before
        .char_indices()
        .rev()
        .find(|(i, c)| {
            matches!(c, '\n' | '。' | '！' | '？')
                || (matches!(c, '.' | '!' | '?')
                    && before[i + c.len_utf8()..].starts_with(char::is_whitespace))
        })
        .map_or(0, |(i, c)| i + c.len_utf8());
    before[start..].trim()
}

/// The rest of the sentence after the name, its end mark included.
fn sentence_tail(after: &str) -> &str {
    let end = after
        .char_indices()
        .find(|(i, c)| {
            *c == '\n'
                || (matches!(c, '.' | '!' | '?' | '。' | '！' | '？')
                    && !after[i + c.len_utf8()..]
                        .chars()
                        .next()
                        .is_some_and(|n| matches!(n, '.' | '!' | '?' | '！' | '？')))
        })
        .map_or(
            after.len(),
            |(i, c)| {
                if c == '\n' {
                    i
                } else {
                    i + c.len_utf8()
                }
            },
        );
    &after[..end]
}

/// A mark that sets a vocative off from what follows.
fn is_pause(c: char) -> bool {
    matches!(
        c,
        ',' | ':' | '!' | '?' | '、' | '，' | '：' | '！' | '？' | '~' | '〜' | 'ー' | '—' | '…'
    )
}

/// A mark (or an emoji, or a space) a sentence may end with after the name.
fn is_closing_mark(c: char) -> bool {
    !c.is_alphanumeric()
}

/// Japanese honorifics after a name: 「みゃおさん」「みゃおちゃん」.
fn strip_honorific(after: &str) -> (bool, &str) {
    for h in ["さん", "ちゃん", "くん", "君", "さま", "様", "たん"] {
        if let Some(rest) = after.strip_prefix(h) {
            return (true, rest);
        }
    }
    (false, after)
}

/// A Japanese particle right after the name makes it part of a sentence
/// about it: subject, object, topic, or quoted (「って」).
fn japanese_particle(after: &str) -> bool {
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
fn is_interjection(word: &str) -> bool {
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
const JA_VOCATIVES: &[&str] = &[
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

fn ends_with_any(word: &str, list: &[&str]) -> bool {
    list.iter().any(|v| word.ends_with(v))
}

/// Whether a question before the name asks for the bot's own view ("what
/// do you think myao?", "what would you suggest myao?"), rather than about
/// it ("have you tried myao?", "did you ask myao?").
fn asks_its_view(lead_words: &[&str]) -> bool {
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
fn about_it(rest: &str) -> bool {
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
fn requests(tail: &str) -> bool {
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

#[cfg(test)]
mod tests {
    // A table of cases reads best whole (clippy.toml holds production code
    // to 80 lines).
    #![allow(clippy::too_many_lines)]

    use super::*;

    /// What each message does with the names `myao`, `みゃお`, `ミャオ`
    /// (and `max`, a name that is also a common word, where said).
    #[test]
    fn a_call_is_told_from_talk_about_it_and_from_no_use_at_all() {
        use NameUse::{Call, Talk};
        let myao = ["myao", "みゃお", "ミャオ"];
        let max = ["max"];
        let cases: &[(&str, &[&str], Option<NameUse>)] = &[
            // Calls, English.
            ("myao, what's the max batch size?", &myao, Some(Call)),
            ("myao: can you summarize this?", &myao, Some(Call)),
            ("hey myao", &myao, Some(Call)),
            ("hey myao, any ideas?", &myao, Some(Call)),
            ("Hi Myao!", &myao, Some(Call)),
            ("what do you think, myao?", &myao, Some(Call)),
            ("thanks, myao", &myao, Some(Call)),
            ("thanks myao!", &myao, Some(Call)),
            ("can myao summarize this thread?", &myao, Some(Call)),
            ("@myao help", &myao, Some(Call)),
            ("myao?", &myao, Some(Call)),
            ("Myao summarize this thread please", &myao, Some(Call)),
            ("myao can you check the logs", &myao, Some(Call)),
            ("ok myao, go ahead", &myao, Some(Call)),
            ("what do you think myao?", &myao, Some(Call)),
            ("hey, myao, can you help?", &myao, Some(Call)),
            ("myao\nwhat is this error?", &myao, Some(Call)),
            ("so myao, what now?", &myao, Some(Call)),
            ("Got it. Myao, can you write it up?", &myao, Some(Call)),
            ("Max, what's the max batch size?", &max, Some(Call)),
            ("hey max", &max, Some(Call)),
            // Calls, Japanese.
            ("みゃお、これ教えて", &myao, Some(Call)),
            ("ねえみゃお", &myao, Some(Call)),
            ("ねえ、みゃお、元気？", &myao, Some(Call)),
            ("みゃおさん、今日の予定は？", &myao, Some(Call)),
            ("みゃおちゃん教えて", &myao, Some(Call)),
            ("ミャオ元気?", &myao, Some(Call)),
            ("みゃお！", &myao, Some(Call)),
            ("おいミャオ、起きて", &myao, Some(Call)),
            ("ねえみゃおどう思う?", &myao, Some(Call)),
            ("ありがとうみゃお", &myao, Some(Call)),
            // Talk about it.
            ("myao is down again?", &myao, Some(Talk)),
            ("I asked myao yesterday and it was wrong", &myao, Some(Talk)),
            ("should we turn myao off", &myao, Some(Talk)),
            ("ask myao", &myao, Some(Talk)),
            ("myao's answer was wrong", &myao, Some(Talk)),
            ("did anyone ask myao?", &myao, Some(Talk)),
            ("have you tried myao?", &myao, Some(Talk)),
            ("did you ask myao?", &myao, Some(Talk)),
            ("hey, myao is down again", &myao, Some(Talk)),
            ("みゃお壊れてる", &myao, Some(Talk)),
            ("myao can summarize threads now", &myao, Some(Talk)),
            ("myao crashed again", &myao, Some(Talk)),
            ("is myao down?", &myao, Some(Talk)),
            ("myao works fine for me", &myao, Some(Talk)),
            ("みゃおって誰が作ったの？", &myao, Some(Talk)),
            ("みゃおに聞いても無駄だよ", &myao, Some(Talk)),
            ("みゃおは賢い", &myao, Some(Talk)),
            ("みゃおさんは今日いないの？", &myao, Some(Talk)),
            ("昨日ミャオが変なこと言ってた", &myao, Some(Talk)),
            ("what is the max batch size", &max, Some(Talk)),
            ("set the retries to max", &max, Some(Talk)),
            ("is the max 10?", &max, Some(Talk)),
            // Not the name at all.
            ("run `myao replay`", &myao, None),
            ("<https://github.com/acme/myao/issues/42>", &myao, None),
            ("see <#C0MYAODEV|myao-dev>", &myao, None),
            ("the myao-bot deploy is green", &myao, None),
            ("myao.example.com is down", &myao, None),
            ("```myao eval --html```", &myao, None),
            ("&gt; myao, stop\nlol", &myao, None),
            ("he said \"myao, stop\" lol", &myao, None),
            ("the myaomyao crate", &myao, None),
            ("see https://myao.dev/docs", &myao, None),
            ("acme/myao has a new release", &myao, None),
            ("join #myao for news", &myao, None),
            (
                "new logo\n[file: myao.png, png, 2 KB, not opened]",
                &myao,
                None,
            ),
            ("anything", &["  "], None),
            ("maximum batch size?", &max, None),
        ];
        let wrong: Vec<String> = cases
            .iter()
            .filter(|(text, names, want)| name_use(text, names) != *want)
            .map(|(text, names, want)| {
                format!("{text:?}: {:?}, want {want:?}", name_use(text, names))
            })
            .collect();
        assert!(cases.len() >= 40);
        assert!(
            wrong.is_empty(),
            "{} wrong:\n{}",
            wrong.len(),
            wrong.join("\n")
        );
    }

    #[test]
    fn calls_is_a_call_only() {
        assert!(calls("myao, help", &["myao"]));
        assert!(!calls("myao is down", &["myao"]));
        assert!(!calls("nothing here", &["myao"]));
    }
}
