//! The English rules: a phrase opening its clause, and what may follow it.

use chrono::Weekday;

use super::heard::{Heard, Sense};
use super::mute::RestOfDay;

/// What may follow an English phrase in its clause.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tail {
    /// Fillers and a duration only: "not now please", "quiet for an hour".
    Closed,
    /// Anything: "stop talking about the deploy".
    Open,
    /// A thanks: fillers, "so much", "for ...", "to you"; not "to the
    /// cache" nor "anyway".
    Thanks,
}

/// An English clause: leads, then a phrase and the tail its phrase takes.
/// `today`: what is left of the workspace's day.
pub(super) fn english(clause: &str, today: RestOfDay) -> Heard {
    let words: Vec<String> = clause
        .split_whitespace()
        .map(|w| {
            w.replace('\u{2019}', "'")
                .trim_matches(|c: char| !c.is_alphanumeric() && c != '\'')
                .to_owned()
        })
        .filter(|w| !w.is_empty())
        .collect();
    let words: Vec<&str> = words.iter().map(String::as_str).collect();
    let mut minutes = None;
    let mut at = 0;
    while at < words.len() {
        if let Some((sense, tail, len)) = english_phrase(&words[at..]) {
            return match english_tail(&words[at + len..], tail, today) {
                Some(after) => Heard::Hint(sense, minutes.or(after)),
                None => Heard::Nothing,
            };
        }
        if let Some((m, len)) = english_duration(&words[at..], today) {
            minutes = minutes.or(Some(m));
            at += len;
        } else if LEADS.contains(&words[at]) || FILLERS.contains(&words[at]) {
            at += 1;
        } else {
            return Heard::Nothing;
        }
    }
    minutes.map_or(Heard::Nothing, Heard::Duration)
}

/// The longest phrase `words` open with: its sense, tail and length.
fn english_phrase(words: &[&str]) -> Option<(Sense, Tail, usize)> {
    let mut best: Option<(Sense, Tail, usize)> = None;
    for (sense, tail, phrases) in ENGLISH {
        for phrase in *phrases {
            let len = phrase.split(' ').count();
            let matches = words.len() >= len && phrase.split(' ').zip(words).all(|(p, w)| p == *w);
            if matches && best.is_none_or(|(_, _, l)| len > l) {
                best = Some((*sense, *tail, len));
            }
        }
    }
    best
}

/// The duration a tail says, if it is one `tail` allows (`Some(None)`: an
/// allowed tail with no duration).
fn english_tail(words: &[&str], tail: Tail, today: RestOfDay) -> Option<Option<u32>> {
    match tail {
        Tail::Open => Some(english_minutes(words, today)),
        Tail::Closed => closed(words, today),
        Tail::Thanks => {
            let rest: Vec<&str> = words
                .iter()
                .copied()
                .skip_while(|w| INTENSIFIERS.contains(w))
                .collect();
            match rest.as_slice() {
                ["for", ..] | ["to", "you" | "u", ..] => Some(None),
                [] => Some(None),
                _ => closed(&rest, today).filter(|_| !rest.contains(&"anyway")),
            }
        }
    }
}

/// Fillers, the channel ("in here") and durations only: the duration, if
/// any.
fn closed(words: &[&str], today: RestOfDay) -> Option<Option<u32>> {
    let mut minutes = None;
    let mut at = 0;
    while at < words.len() {
        if let Some((m, len)) = english_duration(&words[at..], today) {
            minutes = minutes.or(Some(m));
            at += len;
        } else if let Some(place) = PLACES.iter().find(|p| opens(&words[at..], p)) {
            at += place.len();
        } else if FILLERS.contains(&words[at]) {
            at += 1;
        } else {
            return None;
        }
    }
    Some(minutes)
}

/// Whether `words` open with `phrase`.
fn opens(words: &[&str], phrase: &[&str]) -> bool {
    words.len() >= phrase.len() && phrase.iter().zip(words).all(|(p, w)| p == w)
}

/// The channel, after a phrase: "be quiet in here".
const PLACES: &[&[&str]] = &[
    &["in", "here"],
    &["around", "here"],
    &["in", "this", "channel"],
    &["in", "the", "channel"],
    &["in", "this", "thread"],
    &["here"],
];

/// The duration an open tail says: a time until a day right after its
/// phrase ("stop talking until monday"), else the first count of time
/// anywhere ("stop talking about it for an hour"). A day further on is
/// talk ("stop talking about what we did over the weekend").
fn english_minutes(words: &[&str], today: RestOfDay) -> Option<u32> {
    until_a_day(words, today).map(|(m, _)| m).or_else(|| {
        (0..words.len()).find_map(|at| counted(&words[at..], today.left()).map(|(m, _)| m))
    })
}

/// The rest of the day, said: "today", "until tomorrow", "for the rest of
/// the day"; with "morning" after "tomorrow", until nine then.
const REST_OF_DAY: &[&[&str]] = &[
    &["today"],
    &["tonight"],
    &["for", "today"],
    &["for", "tonight"],
    &["for", "the", "day"],
    &["for", "the", "rest", "of", "the", "day"],
    &["for", "the", "rest", "of", "today"],
    &["the", "rest", "of", "the", "day"],
    &["until", "tomorrow"],
    &["till", "tomorrow"],
    &["til", "tomorrow"],
    &["'til", "tomorrow"],
    &["until", "the", "end", "of", "the", "day"],
    &["until", "end", "of", "day"],
    &["until", "eod"],
    &["till", "eod"],
];

/// Until the weekend is over, or the week: until Monday begins.
const TO_MONDAY: &[&[&str]] = &[
    &["for", "the", "weekend"],
    &["over", "the", "weekend"],
    &["through", "the", "weekend"],
    &["this", "weekend"],
    &["until", "after", "the", "weekend"],
    &["till", "after", "the", "weekend"],
    &["until", "the", "weekend", "is", "over"],
    &["till", "the", "weekend", "is", "over"],
    &["til", "the", "weekend", "is", "over"],
    &["this", "week"],
    &["for", "this", "week"],
    &["for", "the", "week"],
    &["for", "the", "rest", "of", "the", "week"],
    &["the", "rest", "of", "the", "week"],
    &["until", "next", "week"],
    &["till", "next", "week"],
    &["til", "next", "week"],
];

/// Until the weekend begins: until Saturday.
const TO_SATURDAY: &[&[&str]] = &[
    &["until", "the", "weekend"],
    &["till", "the", "weekend"],
    &["til", "the", "weekend"],
];

/// The day of the week `word` names.
fn weekday(word: &str) -> Option<Weekday> {
    Some(match word {
        "monday" | "mon" => Weekday::Mon,
        "tuesday" | "tue" | "tues" => Weekday::Tue,
        "wednesday" | "wed" => Weekday::Wed,
        "thursday" | "thu" | "thurs" => Weekday::Thu,
        "friday" | "fri" => Weekday::Fri,
        "saturday" | "sat" => Weekday::Sat,
        "sunday" | "sun" => Weekday::Sun,
        _ => return None,
    })
}

/// A time until a day of the week `words` open with ("until monday", "till
/// next friday", "for the weekend", "this week"), in minutes, and how many
/// words it takes; with "morning" after the day, until nine then.
fn until_a_day(words: &[&str], today: RestOfDay) -> Option<(u32, usize)> {
    let longest = |table: &[&'static [&'static str]]| {
        table
            .iter()
            .filter(|p| opens(words, p))
            .map(|p| p.len())
            .max()
    };
    if let Some(len) = longest(TO_MONDAY) {
        return Some((today.until(Weekday::Mon), len));
    }
    if let Some(len) = longest(TO_SATURDAY) {
        return Some((today.until(Weekday::Sat), len));
    }
    let until = usize::from(matches!(
        words.first(),
        Some(&("until" | "till" | "til" | "'til"))
    ));
    if until == 0 {
        return None;
    }
    let next = usize::from(words.get(until) == Some(&"next"));
    let day = weekday(words.get(until + next)?)?;
    let len = until + next + 1;
    let minutes = if next == 1 {
        today.until_next(day)
    } else {
        today.until(day)
    };
    Some(match words.get(len) {
        Some(&"morning") => (minutes.saturating_add(9 * 60), len + 1),
        _ => (minutes, len),
    })
}

/// A duration `words` open with ("for an hour", "2 hours", "30m", "half an
/// hour", "for a week", "today", "until monday"), in minutes, and how many
/// words it takes. `today`: what is left of the workspace's day.
fn english_duration(words: &[&str], today: RestOfDay) -> Option<(u32, usize)> {
    until_a_day(words, today).or_else(|| counted(words, today.left()))
}

/// A duration `words` open with that is no day of the week: a count of
/// time or the rest of the day (`today`, its minutes left).
fn counted(words: &[&str], today: u32) -> Option<(u32, usize)> {
    if let Some(said) = REST_OF_DAY
        .iter()
        .filter(|p| opens(words, p))
        .max_by_key(|p| p.len())
    {
        return Some(match words.get(said.len()) {
            Some(&"morning") if said.last() == Some(&"tomorrow") => {
                (today.saturating_add(9 * 60), said.len() + 1)
            }
            _ => (today, said.len()),
        });
    }
    let skip = usize::from(words.first() == Some(&"for"));
    let w = &words[skip..];
    let (count, unit_at) = match w {
        ["half", "an", "hour", ..] => return Some((30, skip + 3)),
        ["a", "couple", "of", ..] => (2, 3),
        ["a", "couple", ..] | ["a", "few", ..] => (if w[1] == "few" { 3 } else { 2 }, 2),
        ["a" | "an", ..] => (1, 1),
        [n, ..] => match number_word(n) {
            Some(n) => (n, 1),
            // "2h", "30min", "1hr".
            None => {
                let digits = n.chars().take_while(char::is_ascii_digit).count();
                let count: u32 = n[..digits].parse().ok()?;
                return Some((count.saturating_mul(unit(&n[digits..])?), skip + 1));
            }
        },
        [] => return None,
    };
    let per = unit(w.get(unit_at)?)?;
    Some((count.saturating_mul(per), skip + unit_at + 1))
}

/// Minutes in a unit's name.
fn unit(word: &str) -> Option<u32> {
    match word {
        "hour" | "hours" | "hr" | "hrs" | "h" => Some(60),
        "minute" | "minutes" | "min" | "mins" | "m" => Some(1),
        "day" | "days" | "d" => Some(24 * 60),
        "week" | "weeks" | "wk" | "wks" | "w" => Some(7 * 24 * 60),
        "month" | "months" | "mo" => Some(30 * 24 * 60),
        "year" | "years" | "yr" | "yrs" | "y" => Some(365 * 24 * 60),
        _ => None,
    }
}

fn number_word(word: &str) -> Option<u32> {
    const WORDS: &[&str] = &[
        "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
        "twelve",
    ];
    if let Some(i) = WORDS.iter().position(|w| *w == word) {
        return u32::try_from(i + 1).ok();
    }
    match word {
        "fifteen" => Some(15),
        "twenty" => Some(20),
        "thirty" => Some(30),
        "forty" => Some(40),
        "ninety" => Some(90),
        _ if word.chars().all(|c| c.is_ascii_digit()) => word.parse().ok(),
        _ => None,
    }
}

/// The English phrases: what each says and what may follow it.
const ENGLISH: &[(Sense, Tail, &[&str])] = &[
    (
        Sense::Mute,
        Tail::Closed,
        &[
            "not now",
            "not right now",
            "not the time",
            "not the right time",
            "quiet",
            "be quiet",
            "keep quiet",
            "stay quiet",
            "quiet down",
            "hush",
            "shush",
            "shh",
            "shhh",
            "sh",
            "be silent",
            "silence",
            "stop",
            "stop it",
            "go away",
            "leave us alone",
            "leave us",
            "enough",
            "that's enough",
            "that is enough",
            "zip it",
            "pipe down",
            "mute",
            "shut up",
            "shut it",
            "take a break",
            "give it a rest",
            "buzz off",
        ],
    ),
    (
        Sense::Mute,
        Tail::Open,
        &[
            "stop talking",
            "stop replying",
            "stop responding",
            "stop posting",
            "stop answering",
            "stop commenting",
            "stop chiming in",
            "stop interrupting",
            "stop butting in",
            "stay out of this",
            "stay out of it",
            "butt out",
        ],
    ),
    (
        Sense::Negative,
        Tail::Open,
        &[
            "you talk too much",
            "you're talking too much",
            "you are talking too much",
            "too chatty",
            "too talkative",
            "nobody asked",
            "no one asked",
            "not helpful",
            "that's not helpful",
            "that wasn't helpful",
            "unhelpful",
            "not helping",
            "you're not helping",
            "not useful",
            "not talking to you",
            "wasn't talking to you",
            "i wasn't talking to you",
            "i'm not talking to you",
            "wasn't asking you",
            "i wasn't asking you",
            "bad bot",
            "read the room",
        ],
    ),
    (
        Sense::Positive,
        Tail::Thanks,
        &[
            "thanks",
            "thank you",
            "thank u",
            "thx",
            "thanx",
            "thnx",
            "ty",
            "tysm",
            "tyvm",
            "cheers",
            "many thanks",
            "much appreciated",
            "appreciate it",
            "appreciated",
        ],
    ),
    (
        Sense::Positive,
        Tail::Closed,
        &[
            "that helped",
            "this helped",
            "it helped",
            "that helps",
            "this helps",
            "that was it",
            "that did it",
            "that did the trick",
            "that worked",
            "it worked",
            "that fixed it",
            "helpful",
            "very helpful",
            "super helpful",
            "so helpful",
            "really helpful",
            "that was helpful",
            "that's helpful",
            "good bot",
            "good job",
            "nice one",
            "well done",
            "great answer",
            "good answer",
            "good catch",
            "perfect",
            "exactly",
            "spot on",
            "you're a lifesaver",
            "lifesaver",
            "you're the best",
            "love it",
            // A mute lifted: "you can talk again".
            "talk again",
            "speak again",
            "chime in again",
            "post again",
            "you can talk",
            "you can speak",
            "you may talk",
            "you may speak",
            "you may talk again",
            "you may speak again",
            "you can come back",
            "come back",
            "unmute",
            "unmuted",
            "you're unmuted",
            "you are unmuted",
        ],
    ),
    (
        Sense::Not,
        Tail::Open,
        &[
            "no thanks",
            "no thank you",
            "thanks anyway",
            "thanks for nothing",
        ],
    ),
];

/// Words before a phrase that leave it the clause's point: greetings,
/// asking forms ("can you be quiet"), a "but" after a pause.
const LEADS: &[&str] = &[
    "hey",
    "hi",
    "oh",
    "ah",
    "so",
    "well",
    "yes",
    "yeah",
    "yep",
    "yup",
    "no",
    "nope",
    "hmm",
    "um",
    "uh",
    "wow",
    "ok",
    "okay",
    "alright",
    "can",
    "could",
    "would",
    "will",
    "you",
    "u",
    "just",
    "seriously",
    "honestly",
    "but",
    "and",
    "then",
    "dear",
    "omg",
    "many",
    "big",
    "also",
    "kindly",
    "really",
    "again",
];

/// Words that add nothing to a phrase: "please", "for now", "a bit".
const FILLERS: &[&str] = &[
    "please", "pls", "plz", "now", "right", "for", "a", "bit", "little", "while", "moment", "sec",
    "second", "ok", "okay", "thanks", "thx", "lol", "haha", "sorry", "guys", "all", "dude", "man",
    "mate", "buddy", "bot", "already", "just", "so", "much", "very", "lot", "really", "tons",
    "too", "again", "k",
];

/// Words a thanks may go on with: "thanks so much", "thanks a lot".
const INTENSIFIERS: &[&str] = &[
    "so", "very", "much", "a", "lot", "ton", "tons", "bunch", "again", "heaps", "loads",
];
