//! Slack's text rules, each written once: its markup turned into plain text
//! for prompts, the escaping that keeps a reply from notifying anyone, a
//! model's reply cleaned before it is posted, the users a message
//! `<@U…>`-mentions, and the name Slack shows for a user.

use super::ids::UserId;

/// `text` without Slack's `<...>` marks (mentions, channels, links), each
/// left as a space: what a person typed around them.
pub fn without_marks(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_mark = false;
    for c in text.chars() {
        match c {
            '<' => in_mark = true,
            '>' if in_mark => {
                in_mark = false;
                out.push(' ');
            }
            _ if in_mark => {}
            c => out.push(c),
        }
    }
    out
}

/// Renders Slack markup readably: `<@U123>` becomes `@name` (through
/// `name_of`), `<#C123|general>` becomes `#general`, `<https://x|label>`
/// becomes `label (https://x)`, and `&amp; &lt; &gt;` are unescaped.
pub fn render_slack_text(text: &str, name_of: impl Fn(&str) -> Option<String>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('<') {
        out.push_str(&unescape(&rest[..open]));
        let after = &rest[open + 1..];
        let Some(close) = after.find('>') else {
            out.push_str(&unescape(&rest[open..]));
            return out;
        };
        let inner = &after[..close];
        let (target, label) = match inner.split_once('|') {
            Some((t, l)) => (t, Some(l)),
            None => (inner, None),
        };
        if let Some(id) = target.strip_prefix('@') {
            let name = name_of(id)
                .or_else(|| label.map(str::to_owned))
                .unwrap_or_else(|| id.to_owned());
            out.push('@');
            out.push_str(&name);
        } else if let Some(id) = target.strip_prefix('#') {
            out.push('#');
            out.push_str(label.unwrap_or(id));
        } else if let Some(special) = target.strip_prefix('!') {
            // <!here>, <!channel>, <!subteam^ID|@team>
            out.push('@');
            out.push_str(label.map(|l| l.trim_start_matches('@')).unwrap_or(special));
        } else {
            let url = unescape(target);
            match label {
                Some(l) if l != target => {
                    out.push_str(&unescape(l));
                    out.push_str(" (");
                    out.push_str(&url);
                    out.push(')');
                }
                _ => out.push_str(&url),
            }
        }
        rest = &after[close + 1..];
    }
    out.push_str(&unescape(rest));
    out
}

fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// Escapes Slack's control characters so that text is shown as written: a
/// `<!channel>` or `<@U…>` in a reply must not notify anyone. The inverse
/// of the unescaping [`render_slack_text`] does.
pub fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// Trims a model's reply and drops a leading "name:" or "**time** name:"
/// it may have copied from the transcript's format.
pub fn clean_reply(text: &str, persona_name: &str) -> String {
    let mut t = text.trim();
    if let Some(rest) = t.strip_prefix("**") {
        if let Some(end) = rest.find("**") {
            // Only a transcript time such as "**2024-01-01 12:00:00**".
            let inner = &rest[..end];
            if !inner.is_empty()
                && inner
                    .chars()
                    .all(|c| c.is_ascii_digit() || matches!(c, '-' | ':' | ' '))
            {
                t = rest[end + 2..].trim_start();
            }
        }
    }
    for prefix in [
        format!("{persona_name}:"),
        format!("{persona_name}："),
        format!("@{persona_name}:"),
    ] {
        if let Some(rest) = t.strip_prefix(prefix.as_str()) {
            t = rest.trim_start();
        }
    }
    t.to_owned()
}

/// Whether `line` is one that names a shared file ([`super::files::with_lines`]).
fn names_a_file(line: &str) -> bool {
    line.starts_with("[file: ") && line.ends_with(", not opened]")
}

/// What a person said in `text`: without the lines that name its shared
/// files, whose names must not call the bot ("myao.png") or ask anything
/// ("huh?.png").
pub fn spoken(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains("[file: ") {
        return std::borrow::Cow::Borrowed(text);
    }
    std::borrow::Cow::Owned(
        text.lines()
            .filter(|l| !names_a_file(l))
            .collect::<Vec<_>>()
            .join("\n"),
    )
}

/// `text` held to `max_chars` characters, as a person would stop: at the
/// last end of a sentence or line within them (when that keeps at least
/// half), else at the last space, else at the limit. Cut before escaping,
/// so never inside an escape.
pub fn held_to(text: &str, max_chars: usize) -> &str {
    let Some((limit, _)) = text.char_indices().nth(max_chars) else {
        return text;
    };
    let head = &text[..limit];
    let half = head.len() / 2;
    let sentence = head
        .char_indices()
        .rev()
        .find(|(i, c)| {
            matches!(c, '。' | '！' | '？' | '\n')
                || (matches!(c, '.' | '!' | '?')
                    && head[i + c.len_utf8()..].starts_with(char::is_whitespace))
        })
        .map(|(i, c)| i + c.len_utf8())
        .filter(|end| *end >= half);
    let end = sentence
        .or_else(|| head.rfind(char::is_whitespace).filter(|i| *i > 0))
        .unwrap_or(limit);
    head[..end].trim_end()
}

/// The users `text` mentions (`<@U123>` or `<@U123|label>`), in order; a
/// malformed id is passed over.
pub fn mentions(text: &str) -> impl Iterator<Item = UserId> + '_ {
    text.match_indices("<@").filter_map(move |(i, _)| {
        let rest = &text[i + 2..];
        let end = rest.find(['>', '|']).unwrap_or(rest.len());
        UserId::parse(&rest[..end]).ok()
    })
}

/// The names Slack knows a user by, as `users.info` and an export's
/// `users.json` both hold them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UserNames<'a> {
    /// `profile.display_name`.
    pub display_name: Option<&'a str>,
    /// `profile.real_name`.
    pub profile_real_name: Option<&'a str>,
    /// `real_name`.
    pub real_name: Option<&'a str>,
    /// `name`: the handle.
    pub handle: Option<&'a str>,
}

impl<'a> UserNames<'a> {
    /// The name people see: the display name, else the real name (the
    /// profile's, then the user's), else the handle; trimmed, and `None`
    /// when every one is missing or blank.
    pub fn shown(&self) -> Option<&'a str> {
        [
            self.display_name,
            self.profile_real_name,
            self.real_name,
            self.handle,
        ]
        .into_iter()
        .flatten()
        .map(str::trim)
        .find(|n| !n.is_empty())
    }
}

/// Whether `text` mentions `bot` the way Slack encodes it (`<@U123>` or `<@U123|name>`).
pub fn mentions_user(text: &str, bot: &UserId) -> bool {
    let plain = format!("<@{bot}>");
    let labelled = format!("<@{bot}|");
    text.contains(&plain) || text.contains(&labelled)
}

/// Whether `text` calls `name`: case-insensitive; for a name in Latin
/// script, a whole word among Latin letters and digits ("myao," and
/// "ねえmyao" yes, "myaomyao" no); for one in another script, anywhere
/// (Japanese has no spaces between words).
pub fn names(text: &str, name: &str) -> bool {
    let name = name.trim().to_lowercase();
    if name.is_empty() {
        return false;
    }
    let text = text.to_lowercase();
    if !name.is_ascii() {
        return text.contains(&name);
    }
    // Latin letters and digits make a word; a Japanese neighbour does not.
    let word_char = |c: char| c.is_ascii_alphanumeric() || c == '_';
    text.match_indices(&name).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + name.len()..].chars().next();
        !before.is_some_and(word_char) && !after.is_some_and(word_char)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_are_left_out_as_spaces() {
        assert_eq!(without_marks("<@U1> thanks<#C2|general>!"), "  thanks !");
        assert_eq!(without_marks("a < b"), "a ");
    }

    fn names(id: &str) -> Option<String> {
        (id == "U1").then(|| "alice".to_owned())
    }

    #[test]
    fn mentions_become_names() {
        assert_eq!(render_slack_text("hi <@U1>!", names), "hi @alice!");
        assert_eq!(render_slack_text("<@U9|bob> there", names), "@bob there");
        assert_eq!(render_slack_text("<@U9>", names), "@U9");
    }

    #[test]
    fn channels_links_and_specials() {
        assert_eq!(
            render_slack_text("see <#C1|general>", names),
            "see #general"
        );
        assert_eq!(
            render_slack_text("<https://example.com|the docs> and <https://x.y>", names),
            "the docs (https://example.com) and https://x.y"
        );
        assert_eq!(render_slack_text("<!here> lunch", names), "@here lunch");
    }

    #[test]
    fn escapes_and_stray_brackets() {
        assert_eq!(
            render_slack_text("a &lt;b&gt; &amp;amp; c", names),
            "a <b> &amp; c"
        );
        assert_eq!(
            render_slack_text("1 < 2 and no close", names),
            "1 < 2 and no close"
        );
        assert_eq!(render_slack_text("", names), "");
    }

    #[test]
    fn copied_transcript_prefixes_are_dropped() {
        assert_eq!(clean_reply("  hello  ", "myao"), "hello");
        assert_eq!(clean_reply("myao: hi", "myao"), "hi");
        assert_eq!(
            clean_reply("**2024-01-01 12:00:00** myao:\nhi", "myao"),
            "hi"
        );
        assert_eq!(clean_reply("myaomyao", "myao"), "myaomyao");
        assert_eq!(clean_reply("", "myao"), "");
        assert_eq!(
            clean_reply("**重要** です", "myao"),
            "**重要** です",
            "bold text is kept"
        );
    }

    #[test]
    fn replies_cannot_notify_anyone() {
        assert_eq!(
            escape("<!channel> hi <@U1> & bye"),
            "&lt;!channel&gt; hi &lt;@U1&gt; &amp; bye"
        );
    }

    #[test]
    fn escaping_is_undone_by_rendering() {
        let text = "a <b> & c &amp; <@U1>";
        assert_eq!(render_slack_text(&escape(text), names), text);
    }

    fn id(s: &str) -> UserId {
        UserId::parse(s).unwrap()
    }

    #[test]
    fn mentions_are_found_in_order() {
        let found: Vec<UserId> = mentions("<@U2|bob> hi <@U1>, <@bad id> <@U3").collect();
        assert_eq!(found, [id("U2"), id("U1"), id("U3")]);
        assert_eq!(mentions("no one <#C1|here>").count(), 0);
    }

    #[test]
    fn the_shown_name_prefers_the_display_name() {
        let all = UserNames {
            display_name: Some("annie"),
            profile_real_name: Some("Ann P. Lee"),
            real_name: Some("Ann Lee"),
            handle: Some("ann"),
        };
        assert_eq!(all.shown(), Some("annie"));
        let blank_display = UserNames {
            display_name: Some(" "),
            ..all
        };
        assert_eq!(blank_display.shown(), Some("Ann P. Lee"));
        let only_handle = UserNames {
            handle: Some(" ann "),
            ..UserNames::default()
        };
        assert_eq!(only_handle.shown(), Some("ann"));
        let only_real = UserNames {
            display_name: Some(""),
            profile_real_name: Some(""),
            real_name: Some("Ann Lee"),
            handle: None,
        };
        assert_eq!(only_real.shown(), Some("Ann Lee"));
        assert_eq!(UserNames::default().shown(), None);
    }

    #[test]
    fn a_long_reply_is_held_to_its_length_at_a_sentence() {
        assert_eq!(held_to("short enough.", 100), "short enough.");
        let text = "First sentence here. Second one follows! Third is far too long to keep";
        assert_eq!(
            held_to(text, 50),
            "First sentence here. Second one follows!"
        );
        // No sentence end in the second half: the last space.
        assert_eq!(held_to("one two three four five", 12), "one two");
        // Japanese ends sentences without spaces.
        assert_eq!(
            held_to("これは一文目です。これは二文目ですがとても長い", 16),
            "これは一文目です。"
        );
        // No space at all: the limit, on a character boundary.
        assert_eq!(held_to("ああああああ", 4), "ああああ");
        // Cut before escaping: a `<` stays whole and is escaped after.
        let cut = held_to("a < b is true. and then more words", 20);
        assert_eq!(escape(cut), "a &lt; b is true.");
    }
}
