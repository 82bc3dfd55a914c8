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

/// Honorifics after a name: 「みゃおさん」「みゃおちゃん」, and the same
/// joined by a hyphen in Latin script ("myao-san", "myao-chan").
pub(super) fn strip_honorific(after: &str) -> (bool, &str) {
    for h in [
        "さーん",
        "ちゃーん",
        "さん",
        "ちゃん",
        "くん",
        "君",
        "さま",
        "様",
        "たん",
        "先輩",
        "氏",
    ] {
        if let Some(rest) = after.strip_prefix(h) {
            return (true, rest);
        }
    }
    for h in ["-san", "-chan", "-kun", "-sama", "-senpai", "-sensei"] {
        if let Some(rest) = after.strip_prefix(h) {
            if !rest.starts_with(|c: char| latin(c) || joins(c)) {
                return (true, rest);
            }
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
            | "sup"
            | "hiya"
            | "heya"
            | "howdy"
            | "gm"
            | "cc"
            | "fyi"
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
    "おつかれ",
    "お疲れ",
    "おつかれさま",
    "お疲れさま",
    "お疲れ様",
    "もしもし",
    "やっほー",
    "やっほ",
    "はろー",
];

pub(super) fn ends_with_any(word: &str, list: &[&str]) -> bool {
    list.iter().any(|v| word.ends_with(v))
}

pub(super) fn is_you(word: &str) -> bool {
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
    // Irregular past tenses: "myao made a mistake", "myao wrote the wrong
    // date".
    "made",
    "gave",
    "took",
    "wrote",
    "thought",
    "knew",
    "sent",
    "left",
    "lost",
    "forgot",
    "ran",
    "came",
    "did",
    "found",
    "spoke",
    "understood",
    "misunderstood",
    "misread",
    "fell",
    "hung",
    "began",
    "brought",
    "built",
    "meant",
    "put",
    "saw",
    "chose",
    "stole",
    "ate",
    "gets",
    "needs",
    // A place, a time or a thing of it after the name: "myao in prod is
    // slow", "myao on staging", "myao for the win".
    "in",
    "on",
    "at",
    "for",
    "from",
    "with",
    "without",
    "of",
    "by",
    "via",
    "over",
    "under",
    "now",
    "today",
    "yesterday",
    "here",
    "the",
    "a",
    "an",
];

/// Words ending in "s" that are no third-person verb: a thanks, a request,
/// a noun put to the room ("myao thanks", "myao status?").
const NOT_VERBS: &[&str] = &[
    "thanks",
    "thx",
    "pls",
    "plz",
    "status",
    "yes",
    "guys",
    "folks",
    "thoughts",
    "ideas",
    "does",
    "plans",
    "news",
    "options",
    "suggestions",
    "tips",
    "opinions",
    "views",
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

/// Whether what follows a name at the start of a sentence asks it
/// something: "can you", "could you", "do you" (even after a name that
/// is a common word, `strict`); else also "please", "you there?", a
/// question word ("myao what's up", "myao how do I..."), "any thoughts",
/// or a request ("myao summarize this").
pub(super) fn asks_it(rest: &str, strict: bool) -> bool {
    let mut words = rest
        .split_whitespace()
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric() && c != '\''));
    let Some(first) = words.next() else {
        return false;
    };
    if ASKING.contains(&first) && is_you(words.next().unwrap_or("")) {
        return true;
    }
    if strict {
        return false;
    }
    is_you(first)
        || QUESTION_WORDS.contains(&first)
        || matches!(
            first,
            "please"
                | "pls"
                | "plz"
                | "any"
                | "anything"
                | "thoughts"
                | "ideas"
                | "lmk"
                | "thanks"
                | "thank"
                | "thx"
                | "ty"
                | "hi"
                | "hello"
                | "hey"
                | "morning"
                | "cheers"
                | "sorry"
        )
        || REQUESTS.contains(&first)
}

/// Verbs that open a request to the bot after its name: "myao summarize
/// this thread", "@myao help".
const REQUESTS: &[&str] = &[
    "summarize",
    "summarise",
    "explain",
    "tell",
    "check",
    "write",
    "translate",
    "find",
    "look",
    "show",
    "give",
    "list",
    "remind",
    "draft",
    "review",
    "search",
    "answer",
    "help",
    "stop",
    "describe",
    "compare",
    "suggest",
    "recommend",
    "calculate",
    "convert",
    "rewrite",
    "recap",
    "remember",
    "let",
];

/// Whether the word before a name at the end of a question makes the
/// name its object or its place ("did you ask myao?", "have you tried
/// myao?", "anyone using myao?", "what's wrong with myao?", "is it
/// myao?"), rather than leaving it a vocative ("thoughts myao?", "what
/// do you think myao?", "how's it going myao?").
pub(super) fn takes_object(word: &str) -> bool {
    let word = word.trim_matches(|c: char| !c.is_alphanumeric() && c != '\'');
    if matches!(word, "going" | "doing" | "listening" | "thinking") {
        return false;
    }
    OBJECT_TAKERS.contains(&word)
        || THIRD_PERSON.contains(&word)
        || (word.len() > 3 && (word.ends_with("ed") || word.ends_with("ing")))
        || verb_of_it(word)
}

/// Verbs, prepositions and determiners that take a name after them.
const OBJECT_TAKERS: &[&str] = &[
    "ask",
    "try",
    "use",
    "ping",
    "tell",
    "trust",
    "blame",
    "call",
    "tag",
    "mention",
    "restart",
    "deploy",
    "fix",
    "break",
    "kill",
    "disable",
    "enable",
    "update",
    "upgrade",
    "install",
    "uninstall",
    "invite",
    "kick",
    "remove",
    "add",
    "mute",
    "turn",
    "set",
    "configure",
    "like",
    "love",
    "hate",
    "need",
    "want",
    "see",
    "check",
    "test",
    "hit",
    "reach",
    "pay",
    "run",
    "own",
    "wrote",
    "made",
    "built",
    "to",
    "into",
    "about",
    "with",
    "from",
    "for",
    "of",
    "by",
    "at",
    "on",
    "in",
    "than",
    "like",
    "via",
    "without",
    "over",
    "under",
    "past",
    "the",
    "a",
    "an",
    "this",
    "that",
    "these",
    "those",
    "our",
    "my",
    "your",
    "their",
    "his",
    "her",
    "its",
    "it",
    "them",
    "me",
    "him",
    "us",
    "is",
    "was",
    "are",
    "be",
    "been",
];

/// Whether a Japanese sentence asks about the bot's state (slow, heavy,
/// down, broken, stopped) rather than asking it something: 「みゃお今日遅く
/// ない？」「みゃお落ちてる？」.
pub(super) fn of_its_state(tail: &str) -> bool {
    [
        "遅",
        "重",
        "落ち",
        "壊れ",
        "止ま",
        "死ん",
        "バグ",
        "動かな",
        "動いて",
        "使え",
        "エラー",
        "おかし",
    ]
    .iter()
    .any(|w| tail.contains(w))
}

/// Whether a Japanese sentence after the name greets or thanks it:
/// 「ミャオ君おはよう」「みゃおありがとう」.
pub(super) fn greets(rest: &str) -> bool {
    JA_VOCATIVES
        .iter()
        .filter(|w| !matches!(**w, "あの" | "ちょっと"))
        .any(|w| rest.starts_with(w))
}

/// Whether a sentence opens with a question word, so that it asks even
/// without a question mark ("what's up myao").
pub(super) fn opens_question(lead_words: &[&str]) -> bool {
    lead_words.first().is_some_and(|w| {
        QUESTION_WORDS.contains(&w.trim_matches(|c: char| !c.is_alphanumeric() && c != '\''))
    })
}

/// The words that open an English question.
const QUESTION_WORDS: &[&str] = &[
    "what", "what's", "whats", "how", "how's", "hows", "why", "when", "where", "who", "which",
];

/// Whether a Japanese sentence with the name as its topic asks for its
/// view: 「みゃおはどう思う？」「みゃおさんはどっちがいい？」.
pub(super) fn asks_its_view_ja(tail: &str) -> bool {
    [
        "どう思",
        "どう考え",
        "どっち",
        "意見",
        "おすすめ",
        "オススメ",
    ]
    .iter()
    .any(|w| tail.contains(w))
}

/// Whether a word is a greeting: a word ("hey", 「ねえ」) or a greeting's
/// emoji, as Slack writes it (`:wave:`, `:wave::skin-tone-3:`) or as the
/// character itself ("👋", "🙏").
pub(super) fn is_greeting(word: &str) -> bool {
    is_interjection(word) || greeting_emoji(word)
}

fn greeting_emoji(word: &str) -> bool {
    const CODES: &[&str] = &[
        "wave",
        "raising_hand",
        "man-raising-hand",
        "woman-raising-hand",
        "raised_hand",
        "hand",
        "pray",
        "bow",
        "hugging_face",
        "slightly_smiling_face",
        "smile",
    ];
    const CHARS: &[char] = &['👋', '🙋', '✋', '🤚', '🖐', '🙏', '🙇', '🤗', '🙂', '😊'];
    let word = word.trim_end_matches([',', '、']);
    if word.len() > 2 && word.starts_with(':') && word.ends_with(':') {
        let codes: Vec<&str> = word.split(':').filter(|c| !c.is_empty()).collect();
        return codes.iter().any(|c| CODES.contains(c))
            && codes
                .iter()
                .all(|c| CODES.contains(c) || c.starts_with("skin-tone"));
    }
    let modifier = |c: char| {
        matches!(
            c,
            '\u{1F3FB}'..='\u{1F3FF}' | '\u{200D}' | '\u{FE0F}' | '♂' | '♀'
        )
    };
    word.chars().any(|c| CHARS.contains(&c))
        && word.chars().all(|c| CHARS.contains(&c) || modifier(c))
}

/// Whether `text` holds no word: marks, spaces, emoji (`:wave:` too).
pub(super) fn bare(text: &str) -> bool {
    text.split_whitespace().all(|w| {
        (w.starts_with(':') && w.ends_with(':') && w.len() > 2)
            || !w.chars().any(char::is_alphanumeric)
    })
}
