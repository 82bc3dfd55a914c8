//! BERT's uncased tokenizer, in plain Rust, as Hugging Face's
//! `tokenizer.json` for all-MiniLM-L6-v2 runs it:
//! 1. normalize: drop NUL, U+FFFD and the control and format characters,
//!    turn white space into spaces, put spaces around CJK ideographs, strip
//!    accents, lowercase;
//! 2. split: on white space, and every punctuation character a word of its
//!    own;
//! 3. WordPiece: each word as the longest piece of the vocabulary that
//!    starts it, then the longest `##` piece that goes on from there, and
//!    so on; a word of more than 100 characters, or one the pieces cannot
//!    cover, is one unknown piece;
//! 4. frame: `[CLS]` first and `[SEP]` last, at most [`MAX_IDS`] in all.
//!
//! Two corners part from Hugging Face's (see `chars.rs` for the character
//! classes): special tokens written in the text (`[CLS]`) are text like any
//! other, not the special ids, so that what a person writes cannot frame
//! the input; and only some accents are stripped.

use std::collections::HashMap;

use crate::chars::{is_cjk, is_dropped, is_punctuation, unaccented};

/// The most ids a text is embedded by, `[CLS]` and `[SEP]` among them:
/// the longest text the model was trained on (sentence-transformers cuts
/// at 256), and what a call costs grows with them, faster than their
/// number. A fact is well within it; a recall's words, newest first, keep
/// their newest lines.
pub const MAX_IDS: usize = 128;
/// The longest word split into pieces, in characters; a longer one is one
/// unknown piece.
const MAX_WORD: usize = 100;
/// What marks a piece that goes on a word.
const CONTINUES: &str = "##";

/// A WordPiece vocabulary, loaded.
pub struct WordPiece {
    /// The pieces that start a word, by text.
    starts: HashMap<String, u32>,
    /// The pieces that go on a word, by their text after `##`.
    continues: HashMap<String, u32>,
    /// The longest piece's length, in bytes: no longer match is looked for.
    longest: usize,
    unk: u32,
    cls: u32,
    sep: u32,
    len: usize,
}

impl WordPiece {
    /// Reads a `vocab.txt`: one piece a line, its id its line's number (from
    /// 0), trailing white space left out, as Hugging Face reads it. Err
    /// when it lacks `[UNK]`, `[CLS]` or `[SEP]`.
    pub fn from_vocab(text: &str) -> Result<WordPiece, String> {
        let (mut starts, mut continues) = (HashMap::new(), HashMap::new());
        let mut len = 0;
        for (i, line) in text.lines().enumerate() {
            let id = u32::try_from(i).map_err(|_| "too many pieces")?;
            let piece = line.trim_end();
            match piece.strip_prefix(CONTINUES) {
                Some(rest) => continues.insert(rest.to_owned(), id),
                None => starts.insert(piece.to_owned(), id),
            };
            len = i + 1;
        }
        let special = |name: &str| {
            starts
                .get(name)
                .copied()
                .ok_or_else(|| format!("no {name} in the vocabulary"))
        };
        let (unk, cls, sep) = (special("[UNK]")?, special("[CLS]")?, special("[SEP]")?);
        let longest = starts.keys().chain(continues.keys()).map(String::len).max();
        Ok(WordPiece {
            longest: longest.unwrap_or(0),
            starts,
            continues,
            unk,
            cls,
            sep,
            len,
        })
    }

    /// How many ids the vocabulary gives (one past the highest).
    #[allow(clippy::len_without_is_empty)] // a loaded vocabulary has its specials
    pub fn len(&self) -> usize {
        self.len
    }

    /// The ids of `text`: `[CLS]`, the pieces of its words (the first
    /// [`MAX_IDS`] - 2 of them), `[SEP]`.
    pub fn encode(&self, text: &str) -> Vec<u32> {
        let mut ids = vec![self.cls];
        let room = MAX_IDS - 1;
        for word in words(&normalize(text)) {
            self.pieces(word, &mut ids);
            if ids.len() >= room {
                ids.truncate(room);
                break;
            }
        }
        ids.push(self.sep);
        ids
    }

    /// Appends the pieces of `word` to `ids`: each the longest that matches
    /// where the last one ended; the unknown piece alone when they cannot
    /// cover it, or when it is too long.
    fn pieces(&self, word: &str, ids: &mut Vec<u32>) {
        if word.chars().count() > MAX_WORD {
            ids.push(self.unk);
            return;
        }
        let before = ids.len();
        let mut start = 0;
        while start < word.len() {
            let pieces = if start == 0 {
                &self.starts
            } else {
                &self.continues
            };
            let rest = &word[start..];
            let found = rest
                .char_indices()
                .map(|(at, c)| at + c.len_utf8())
                .rev()
                .filter(|&end| end <= self.longest)
                .find_map(|end| pieces.get(&rest[..end]).map(|&id| (end, id)));
            let Some((end, id)) = found else {
                ids.truncate(before);
                ids.push(self.unk);
                return;
            };
            ids.push(id);
            start += end;
        }
    }
}

/// `text` normalized: the dropped characters gone, white space as spaces,
/// CJK ideographs between spaces, accents stripped, lowercase. (Hugging
/// Face does these one after the other over the whole text; each touches
/// characters the others leave alone, so one pass does them all.)
fn normalize(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    for c in text.chars() {
        if is_dropped(c) {
            continue;
        }
        if c.is_whitespace() {
            out.push(' ');
        } else if is_cjk(c) {
            out.extend([' ', c, ' ']);
        } else {
            for c in unaccented(c).into_iter().flatten() {
                out.extend(c.to_lowercase());
            }
        }
    }
    out
}

/// The words of a normalized text: split on white space, and each
/// punctuation character a word of its own.
fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(char::is_whitespace).flat_map(|chunk| {
        let mut rest = chunk;
        std::iter::from_fn(move || {
            let first = rest.chars().next()?;
            let end = if is_punctuation(first) {
                first.len_utf8()
            } else {
                rest.find(is_punctuation).unwrap_or(rest.len())
            };
            let (word, after) = rest.split_at(end);
            rest = after;
            Some(word)
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A vocabulary of the pieces given, after the specials (ids 0 to 3).
    fn vocab(pieces: &[&str]) -> WordPiece {
        let mut text = String::from("[PAD]\n[UNK]\n[CLS]\n[SEP]\n");
        for p in pieces {
            text.push_str(p);
            text.push('\n');
        }
        WordPiece::from_vocab(&text).unwrap()
    }

    fn words_of(text: &str) -> Vec<String> {
        words(&normalize(text)).map(str::to_owned).collect()
    }

    #[test]
    fn accents_are_stripped_and_letters_lowercased() {
        assert_eq!(
            normalize("Café DÉJÀ vu, naïve Ŝtraße"),
            "cafe deja vu, naive straße"
        );
        assert_eq!(normalize("Việt Nam"), "viet nam");
        assert_eq!(normalize("e\u{301}te\u{0308}"), "ete", "combining marks go");
        assert_eq!(normalize("がぱ ガ"), "かは カ");
        assert_eq!(normalize("Ωμέγα Łódź ёлка"), "ωμεγα łodz елка");
        assert_eq!(
            normalize("한국"),
            "\u{1112}\u{1161}\u{11AB}\u{1100}\u{116E}\u{11A8}"
        );
        assert_eq!(normalize("≠ ὄ"), "≠ ὄ", "other decompositions are left");
    }

    #[test]
    fn control_format_and_white_space_characters() {
        assert_eq!(
            normalize("a\tb\nc\r\u{3000}d\u{0}e\u{FFFD}f\u{200B}g\u{7}h\u{AD}i\u{E000}j"),
            "a b c  defghij"
        );
    }

    #[test]
    fn punctuation_is_a_word_of_its_own() {
        assert_eq!(
            words_of("Hey friend!  How are you?!? it's $5 «ok»—fine…"),
            [
                "hey", "friend", "!", "how", "are", "you", "?", "!", "?", "it", "'", "s", "$", "5",
                "«", "ok", "»", "—", "fine", "…"
            ]
        );
        assert_eq!(
            words_of("[CLS] x [SEP]"),
            ["[", "cls", "]", "x", "[", "sep", "]"]
        );
    }

    #[test]
    fn cjk_ideographs_are_words_of_their_own_kana_are_not() {
        assert_eq!(
            words_of("東京タワーに行く"),
            ["東", "京", "タワーに", "行", "く"]
        );
    }

    #[test]
    fn words_split_into_the_longest_pieces_first() {
        let v = vocab(&["un", "unaff", "##aff", "##able", "##a", "##ble", "!"]);
        // unaff ##able, not un ##aff ##able: each piece the longest.
        assert_eq!(v.encode("Unaffable!"), [2, 5, 7, 10, 3]);
        assert_eq!(v.encode("unable"), [2, 4, 7, 3]);
        assert_eq!(v.encode("unaffa"), [2, 5, 8, 3]);
        // A word the pieces cannot cover is one unknown piece; the next
        // word is split on its own.
        assert_eq!(v.encode("unaffx un"), [2, 1, 4, 3]);
        assert_eq!(v.encode(""), [2, 3]);
    }

    #[test]
    fn a_word_over_100_characters_is_unknown() {
        let v = vocab(&["a", "##a"]);
        let ids = v.encode(&"a".repeat(100));
        assert_eq!(ids.len(), 102);
        assert_eq!(v.encode(&"a".repeat(101)), [2, 1, 3]);
    }

    #[test]
    fn long_texts_are_cut_to_128_ids_sep_last() {
        let v = vocab(&["a", "##a"]);
        let ids = v.encode(&"a ".repeat(1000));
        assert_eq!(ids.len(), MAX_IDS);
        assert_eq!((ids[0], ids[126], ids[127]), (2, 4, 3));
        // A word cut part way.
        let ids = v.encode(&format!("{}aaaa", "a ".repeat(124)));
        assert_eq!(ids.len(), MAX_IDS);
        assert_eq!(&ids[124..], [4, 4, 5, 3]);
    }

    #[test]
    fn a_vocabulary_without_its_specials_is_refused() {
        assert!(WordPiece::from_vocab("").is_err());
        assert!(WordPiece::from_vocab("[UNK]\n[CLS]\n").is_err());
        let v = WordPiece::from_vocab("[UNK]\r\n[CLS]  \n[SEP]\nx").unwrap();
        assert_eq!((v.unk, v.cls, v.sep, v.len()), (0, 1, 2, 4));
    }
}
