//! Slack's message markup, turned into plain text for prompts.

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

#[cfg(test)]
mod tests {
    use super::*;

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
}
