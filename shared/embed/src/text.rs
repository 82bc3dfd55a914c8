//! How much of a text the embedders read.

/// The longest text embedded, in bytes: a fact's cues, or a recall's
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

/// `text`'s part in Latin letters, for the second model, which knows
/// English only: every letter of another script and the wide punctuation
/// around it become spaces, runs of spaces one. `None` when no Latin
/// letter is left. A fact in English keeps its English cues (and loses its
/// Japanese ones); which pairs of texts this part compares is recall's to
/// say (English talk with an English fact).
pub fn latin(text: &str) -> Option<String> {
    let text = cut(text);
    let mut out = String::with_capacity(text.len());
    let mut letters = false;
    for c in text.chars() {
        let other = if c.is_alphabetic() {
            !latin_letter(c)
        } else {
            wide_mark(c) && !c.is_numeric()
        };
        if other || c.is_whitespace() {
            if !out.ends_with(' ') && !out.is_empty() {
                out.push(' ');
            }
        } else {
            letters |= c.is_alphabetic();
            out.push(c);
        }
    }
    letters.then(|| out.trim_end().to_owned())
}

/// Whether the letter `c` is Latin: the blocks from Basic Latin to IPA
/// and the modifier letters (ʼ), Latin Extended Additional (ễ), C, D and
/// E, the Latin ligatures (ﬁ) and the full-width Latin letters.
fn latin_letter(c: char) -> bool {
    matches!(u32::from(c),
        0..=0x02FF
        | 0x1D00..=0x1EFF
        | 0x2C60..=0x2C7F
        | 0xA720..=0xA7FF
        | 0xAB30..=0xAB6F
        | 0xFB00..=0xFB06
        | 0xFF21..=0xFF3A
        | 0xFF41..=0xFF5A)
}

/// CJK punctuation and full-width forms (、。「」（）！？).
fn wide_mark(c: char) -> bool {
    matches!(u32::from(c), 0x3000..=0x303F | 0xFF00..=0xFFEF)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_latin_part_drops_other_scripts_and_keeps_latin_words() {
        let same = |t: &str| latin(t).as_deref() == Some(t);
        assert!(same("Tom bakes bread every Sunday."));
        assert!(same("Café déjà vu: naïve résumé! 3 > 2 :tada:"));
        assert_eq!(
            latin("Tom keeps bees (honey, apiary, 蜂蜜, 養蜂)").as_deref(),
            Some("Tom keeps bees (honey, apiary, , )")
        );
        assert_eq!(
            latin("year end:\n雪国に帰る人いる？ I might drive up").as_deref(),
            Some("year end: I might drive up")
        );
        assert!(
            same("Nguyễn donʼt ﬁle ＡＢＣ１２ naïve"),
            "Latin, however written"
        );
        assert!(
            same("e\u{301}te\u{301} 🎉 ok"),
            "combining accents and emoji"
        );
        assert_eq!(latin("ＡＢＣ、１２３。").as_deref(), Some("ＡＢＣ １２３"));
        assert_eq!(latin("エミの実家は新潟。"), None);
        assert_eq!(latin("Привет, как дела"), None);
        assert_eq!(latin("123 + 456 = 579 🎉"), None, "no letter at all");
        assert_eq!(latin(""), None);
        // Only the first 4 KB are read, as the models read them.
        let long = format!("{}{}", "あ".repeat(MAX_TEXT), "English after the cut");
        assert_eq!(latin(&long), None);
    }

    #[test]
    fn a_cut_keeps_a_whole_character() {
        let text = "é".repeat(MAX_TEXT);
        let kept = cut(&text);
        assert!(kept.len() <= MAX_TEXT && kept.len() >= MAX_TEXT - 1);
        assert_eq!(cut("short"), "short");
    }
}
