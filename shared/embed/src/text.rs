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
