//! The cases of the recall-by-meaning benchmark: facts people state, and
//! later threads that allude to them without sharing a content word, plus
//! control threads that allude to nothing. Two sets written apart: `b` is
//! the one the ranking's constants were tuned on, `a` is held out.

/// The language of a fact and of its allusion.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    /// Both in English.
    En,
    /// Both in Japanese.
    Ja,
    /// The fact in Japanese, the allusion in English.
    JaEn,
    /// The fact in English, the allusion in Japanese.
    EnJa,
}

/// A fact and a later thread that alludes to it.
pub struct Case {
    /// The person the fact is about.
    pub about: &'static str,
    /// The person who stated it (the same as `about`, or someone else for
    /// the provenance slice).
    pub said_by: &'static str,
    /// The message in which it was stated.
    pub said: &'static str,
    /// The fact as a digest writes it: one sentence, naming `about`.
    pub fact: &'static str,
    /// Its keywords as a digest picks them (names, places, things).
    pub keywords: &'static [&'static str],
    /// The later thread's messages (by people other than `about`, oldest
    /// first), sharing no content word with `said`, `fact` or `keywords`.
    pub allusion: &'static [&'static str],
    pub lang: Lang,
}

/// A thread that alludes to no fact of its set.
pub struct Control {
    pub messages: &'static [&'static str],
    /// `En` or `Ja`.
    pub lang: Lang,
}

pub const fn case(
    about: &'static str,
    said_by: &'static str,
    said: &'static str,
    fact: &'static str,
    keywords: &'static [&'static str],
    allusion: &'static [&'static str],
    lang: Lang,
) -> Case {
    Case {
        about,
        said_by,
        said,
        fact,
        keywords,
        allusion,
        lang,
    }
}

pub const fn control(messages: &'static [&'static str], lang: Lang) -> Control {
    Control { messages, lang }
}
