//! How much of a text the embedders read.

/// The longest text embedded, in bytes: a fact with its cues, or a recall's
/// newest messages, fit well within it; a longer text is cut (on a
/// character).
pub const MAX_TEXT: usize = 4096;

/// `text`'s first [`MAX_TEXT`] bytes, cut on a character.
pub fn cut(text: &str) -> &str {
    let mut end = text.len().min(MAX_TEXT);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// Whether `text` is written in Latin letters alone, as English is: it has
/// a letter, and every letter is of the Latin blocks (below U+0250). The
/// second model knows English only; a text with Japanese (or any other
/// script's letters) in it is left to the first.
pub fn latin(text: &str) -> bool {
    let mut letters = cut(text).chars().filter(|c| c.is_alphabetic()).peekable();
    letters.peek().is_some() && letters.all(|c| u32::from(c) < 0x250)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latin_is_text_in_latin_letters_alone() {
        assert!(latin("Tom bakes bread every Sunday."));
        assert!(latin("Café déjà vu: naïve résumé! 3 > 2 :tada:"));
        assert!(!latin("エミの実家は新潟。"));
        assert!(!latin("year end: 雪国に帰る? I might drive up"));
        assert!(!latin("Привет, как дела"));
        assert!(!latin("123 + 456 = 579 🎉"), "no letter at all");
        assert!(!latin(""));
    }

    #[test]
    fn a_cut_keeps_a_whole_character() {
        let text = "é".repeat(MAX_TEXT);
        let kept = cut(&text);
        assert!(kept.len() <= MAX_TEXT && kept.len() >= MAX_TEXT - 1);
        assert_eq!(cut("short"), "short");
    }
}
