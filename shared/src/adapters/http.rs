//! Small helpers shared by the HTTP adapters (LLM, Slack).

/// `text` cut to `max` characters, with an ellipsis when it was longer.
pub(crate) fn truncate(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_owned(),
    }
}

/// A transport error with its causes, without the URL (which may carry a
/// token in a query), cut to `max` characters.
pub(crate) fn transport_detail(error: reqwest::Error, max: usize) -> String {
    let error = error.without_url();
    let mut detail = error.to_string();
    let mut source = std::error::Error::source(&error);
    while let Some(cause) = source {
        detail.push_str(": ");
        detail.push_str(&cause.to_string());
        source = cause.source();
    }
    truncate(&detail, max)
}

#[cfg(test)]
mod tests {
    use super::truncate;

    #[test]
    fn truncate_counts_characters_not_bytes() {
        assert_eq!(truncate("にゃあにゃあ", 3), "にゃあ…");
        assert_eq!(truncate("abc", 3), "abc");
        assert_eq!(truncate("", 0), "");
    }
}
