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

mod words;

use words::{
    about_it, asks_its_view, ends_with_any, is_closing_mark, is_interjection, is_pause,
    japanese_particle, joins, latin, requests, strip_honorific, JA_VOCATIVES,
};

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

#[cfg(test)]
mod tests;
