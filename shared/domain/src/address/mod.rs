//! Whether a message calls the bot by its name, only talks about it, or
//! does not use the name at all.
//!
//! A member hears its name in "myao, any idea?" and "hey myao" and answers;
//! in "myao is down again?" or 「みゃおに聞いても」 it hears people talking
//! about it, which it may join like any conversation, but which asks nothing
//! of it. The name inside code, a link, a channel or user reference, a quote
//! or a compound (`myao-bot`, `myao.example.com`) is not its name at all.
//!
//! A call is a call: opening a sentence, the name needs a pause after it
//! or a request form ("myao can you ...", 「みゃお教えて」); ending a question,
//! no verb may take it as its object ("thoughts myao?", not "did you ask
//! myao?"). What the rules cannot place ("myao in prod is slow today") is
//! no call: the judge reads it with the rest of the conversation. A name
//! that is also a common word (`max`, [`common_word`]) counts only in its
//! clearest calls.
//!
//! The rules read the words around each use of the name, in English and
//! Japanese, and stay cheap: no model, no dictionary beyond the short word
//! lists of `words.rs` and `common.rs`.

use super::text::spoken;

mod common;
mod words;

pub use common::common_word;
use words::{
    about_it, asks_it, asks_its_view_ja, bare, ends_with_any, greets, is_greeting, is_pause,
    japanese_particle, joins, latin, of_its_state, opens_question, requests, strip_honorific,
    takes_object, JA_VOCATIVES,
};

/// How a message uses the bot's names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameUse {
    /// Addressed to it: "myao, ...", "hey myao", "..., myao?", "thoughts
    /// myao?", "can myao ...?", 「みゃお、」「ねえみゃお」「みゃおさん、...？」.
    Call,
    /// About it, or not placed as a call: "myao is down", "ask myao",
    /// "myao in prod is slow", 「みゃおって誰が作ったの？」.
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

/// How the use of the name at `text[start..end]` reads.
fn use_at(text: &str, start: usize, end: usize, name: &str) -> Option<NameUse> {
    let before = &text[..start];
    let prev = before.chars().next_back();
    let ascii = name.is_ascii();
    if ascii && prev.is_some_and(latin) {
        return None;
    }
    if prev.is_some_and(|c| joins(c) && c != ':') {
        return None;
    }
    let (honorific, after) = strip_honorific(&text[end..]);
    let next = after.chars().next();
    if ascii && next.is_some_and(latin) {
        return None;
    }
    // A joiner between the name and a letter or digit: a compound. A dot or
    // a colon before a space or the end closes a sentence or opens a call.
    if next.is_some_and(joins) && after.chars().nth(1).is_some_and(char::is_alphanumeric) {
        return None;
    }
    let lead = sentence_lead(before);
    let at = lead.ends_with('@');
    let lead = lead.trim_end_matches('@').trim_end();
    let tail = sentence_tail(after);
    // 「みゃおって」「みゃおに」「みゃおは」, "myao's": about it; but
    // 「みゃおはどう思う？」 asks its view, the name its topic.
    if japanese_particle(after) || after.starts_with(['\'', '\u{2019}']) {
        let call = after.starts_with('は') && asks_its_view_ja(tail);
        return Some(if call { NameUse::Call } else { NameUse::Talk });
    }
    let rest = tail.trim_start_matches(|c: char| c.is_whitespace() || is_pause(c));
    let use_ = Use {
        lead,
        words: lead.split_whitespace().collect(),
        tail,
        rest,
        paused: tail.trim_start().starts_with(is_pause) || bare(tail),
        question: tail.contains(['?', '？']),
        at,
        honorific,
        ascii,
        strict: ascii && common_word(name),
    };
    let greeted = !use_.words.is_empty() && use_.words.iter().all(|w| is_greeting(w));
    // "hey, myao is down" is talk; "hey, myao, help?" a call.
    let opens = lead.is_empty() || (greeted && (!lead.ends_with(',') || use_.paused));
    let call = if opens {
        use_.opening_calls(greeted)
    } else {
        use_.later_calls()
    };
    Some(if call { NameUse::Call } else { NameUse::Talk })
}

/// One use of a name, and the words around it.
struct Use<'a> {
    /// The sentence before the name, without an `@` right before it.
    lead: &'a str,
    words: Vec<&'a str>,
    /// The sentence after the name (and its honorific).
    tail: &'a str,
    /// `tail` from its first word.
    rest: &'a str,
    /// A mark sets the name off from what follows, or nothing follows.
    paused: bool,
    question: bool,
    /// Written `@myao`.
    at: bool,
    honorific: bool,
    ascii: bool,
    /// The name is a common word ([`common_word`]): only its clearest
    /// calls count.
    strict: bool,
}

impl Use<'_> {
    /// Whether a sentence opened with the name (after a greeting, if
    /// `greeted`) calls it: a pause after the name ("myao, ...", "hey
    /// myao!"), or a request form ("myao can you...", 「みゃお教えて」).
    /// What the rules cannot place ("myao in prod is slow", "max batch
    /// size?") is no call: the judge reads it with the rest.
    fn opening_calls(&self, greeted: bool) -> bool {
        if self.paused {
            // "max: 5 per hour": a label and its value.
            let label = self.tail.trim_start().starts_with([':', '：'])
                && self.rest.starts_with(|c: char| c.is_ascii_digit());
            return !label;
        }
        // 「みゃおちゃん教えて」 yes, 「みゃおちゃん可愛いね」 no.
        if self.rest.chars().next().is_some_and(|c| !c.is_ascii()) {
            return greets(self.rest)
                || ((self.question || requests(self.tail)) && !of_its_state(self.tail));
        }
        if asks_it(self.rest, self.strict) {
            return true;
        }
        if about_it(self.rest) {
            return false;
        }
        // "@myao help", "hey myao the deploy failed".
        self.at || (greeted && !self.strict)
    }

    /// Whether a name inside or at the end of a sentence calls it.
    fn later_calls(&self) -> bool {
        // Japanese: a name after 「ねえ」「おい」, a name set off by 「、」,
        // or one with an honorific in a question or a request.
        if self
            .words
            .last()
            .is_some_and(|w| ends_with_any(w, JA_VOCATIVES))
            || (!self.ascii && self.paused)
            || (!self.ascii && self.honorific && (self.question || requests(self.tail)))
        {
            return true;
        }
        // "..., myao?", "thanks, myao", "thoughts myao?", "what do you
        // think myao?"; not "did you ask myao?".
        if bare(self.rest) {
            let before = self.words.last().map_or("", |w| w.trim_end_matches(','));
            if self.lead.ends_with([',', '、']) || is_greeting(before) {
                return true;
            }
            let question = self.question || opens_question(&self.words);
            if question && !self.strict && !takes_object(before) {
                return true;
            }
        }
        // "can myao summarize this thread?": a request to it, by name; not
        // "can myao be turned off?".
        if !self.strict
            && self.words.len() == 1
            && matches!(self.words[0], "can" | "could" | "would" | "will")
            && (self.question || self.tail.contains("please"))
            && !self.rest.starts_with("be ")
        {
            return true;
        }
        // 「みゃお元気？」「ミャオ教えて」 after one word: the name, then the
        // question or request.
        !self.ascii
            && self.words.len() == 1
            && (self.question || requests(self.tail))
            && !of_its_state(self.tail)
    }
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

#[cfg(test)]
mod tests;
