//! How big a prompt is, estimated without a tokenizer, and how a text is cut.
//!
//! Models count tokens, not characters, and a token holds about four
//! characters of English but about one of Japanese. The estimate counts
//! characters by script, so both come out sane; it errs on the high side,
//! which is the safe side for a budget.

/// The marker left where a text was cut.
pub const CUT_MARK: &str = " [...]";

/// An estimate of the tokens `text` costs a chat model.
pub fn estimate_tokens(text: &str) -> usize {
    let (mut ascii, mut wide, mut other) = (0usize, 0usize, 0usize);
    for c in text.chars() {
        if c.is_ascii() {
            ascii += 1;
        } else if is_cjk(c) {
            wide += 1;
        } else if u32::from(c) >= 0x1F000 {
            // Emoji and other pictographs take two or more tokens each.
            wide += 2;
        } else {
            other += 1;
        }
    }
    ascii.div_ceil(4) + wide + other.div_ceil(2)
}

/// Kana, CJK ideographs, Hangul, CJK punctuation and full-width forms:
/// about one token a character.
fn is_cjk(c: char) -> bool {
    matches!(
        u32::from(c),
        0x3000..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xAC00..=0xD7AF | 0xF900..=0xFAFF
            | 0xFF00..=0xFFEF
    )
}

/// `text` cut to at most `max_chars` characters, with [`CUT_MARK`] where it
/// was cut (a text that fits is returned as it is).
pub fn cap_chars(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        None => text.to_owned(),
        Some((end, _)) => {
            let mut cut = text[..end].trim_end().to_owned();
            cut.push_str(CUT_MARK);
            cut
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn english_is_about_four_characters_a_token_and_japanese_about_one() {
        let english = "The build fails with a linker error on the new runner.";
        assert_eq!(estimate_tokens(english), english.len().div_ceil(4));
        let japanese = "ビルドがリンカーエラーで落ちる";
        assert_eq!(estimate_tokens(japanese), japanese.chars().count());
        assert_eq!(estimate_tokens(""), 0);
        // Accented Latin, Cyrillic: between the two.
        assert_eq!(estimate_tokens("déjà"), 1 + 1);
        assert_eq!(estimate_tokens("🐈🐈"), 4);
    }

    #[test]
    fn the_estimate_errs_on_the_high_side() {
        // A word of English is at least one token; a Japanese character is
        // at most one in common tokenizers.
        let english = "Could someone review my pull request before lunch?";
        assert!(estimate_tokens(english) >= english.split_whitespace().count());
        let japanese = "誰かレビューしてくれませんか？";
        assert_eq!(estimate_tokens(japanese), japanese.chars().count());
    }

    #[test]
    fn a_long_text_is_cut_with_a_visible_mark_and_a_short_one_kept() {
        assert_eq!(cap_chars("short", 10), "short");
        assert_eq!(cap_chars("exactly10!", 10), "exactly10!");
        assert_eq!(cap_chars("eleven chars", 6), "eleven [...]");
        let cut = cap_chars(&"猫".repeat(5000), 4000);
        assert_eq!(cut.chars().count(), 4000 + CUT_MARK.chars().count());
        assert!(cut.ends_with(CUT_MARK));
    }
}
