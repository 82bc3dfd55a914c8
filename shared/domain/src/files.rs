//! Files shared with messages: how the prompts name them, and which of
//! them the bot may open (images for a model that sees them).
//!
//! A message keeps a line for each of its files in its text ("[file:
//! build-7781.log, text, 18 KB, not opened]"), so that every prompt that
//! shows the message names them, and keeps the files themselves beside it.
//! When a reply opens some, its copy of the message says what became of
//! each: attached, too large, or unreadable. Nothing is dropped in silence.

use serde::{Deserialize, Serialize};

/// The most characters of a file's name a message keeps.
const NAME_CHARS: usize = 100;

/// A file shared with a message, as Slack describes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SharedFile {
    /// Its name, cleaned to sit on one line of a prompt.
    pub name: String,
    /// Slack's `filetype` ("text", "png"), else its MIME type.
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mimetype: Option<String>,
    /// Its size in bytes, when Slack says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Where the bot token can download it (`url_private`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}

/// What became of a file when a reply was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileState {
    /// Not opened: the bot does not read files, or not this kind.
    NotOpened,
    /// Given to the model as its `n`th image (from 1).
    Attached(usize),
    /// Larger than the bytes the bot reads of a file.
    TooLarge,
    /// Its download failed, or what came was not what it claimed to be.
    Unreadable,
}

/// The image formats the models take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageFormat {
    Png,
    Jpeg,
    Gif,
    Webp,
}

impl ImageFormat {
    /// The format's short name ("png"), as Bedrock's image block names it.
    pub fn as_str(self) -> &'static str {
        match self {
            ImageFormat::Png => "png",
            ImageFormat::Jpeg => "jpeg",
            ImageFormat::Gif => "gif",
            ImageFormat::Webp => "webp",
        }
    }

    /// Its MIME type ("image/png").
    pub fn media_type(self) -> &'static str {
        match self {
            ImageFormat::Png => "image/png",
            ImageFormat::Jpeg => "image/jpeg",
            ImageFormat::Gif => "image/gif",
            ImageFormat::Webp => "image/webp",
        }
    }

    /// The format a file's bytes begin with, whatever it was called: an
    /// HTML login page served in place of an image is none.
    pub fn sniff(bytes: &[u8]) -> Option<ImageFormat> {
        match bytes {
            [0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a, ..] => Some(ImageFormat::Png),
            [0xff, 0xd8, 0xff, ..] => Some(ImageFormat::Jpeg),
            [b'G', b'I', b'F', b'8', b'7' | b'9', b'a', ..] => Some(ImageFormat::Gif),
            [b'R', b'I', b'F', b'F', _, _, _, _, b'W', b'E', b'B', b'P', ..] => {
                Some(ImageFormat::Webp)
            }
            _ => None,
        }
    }
}

/// An image given to the reply model.
#[derive(Clone, PartialEq, Eq)]
pub struct Image {
    pub format: ImageFormat,
    pub bytes: Vec<u8>,
}

impl std::fmt::Debug for Image {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Image({}, {} bytes)",
            self.format.as_str(),
            self.bytes.len()
        )
    }
}

impl SharedFile {
    /// A file named `name` (cut to sit on one line of a prompt; "a file"
    /// when it has none), of `kind` ("unknown kind" when none is said).
    pub fn new(
        name: Option<&str>,
        kind: Option<&str>,
        mimetype: Option<&str>,
        size: Option<u64>,
        url: Option<&str>,
    ) -> SharedFile {
        let name: String = name
            .unwrap_or("a file")
            .chars()
            .map(|c| if c.is_control() || c == ']' { ' ' } else { c })
            .take(NAME_CHARS)
            .collect();
        SharedFile {
            name: name.trim().to_owned(),
            kind: kind.or(mimetype).unwrap_or("unknown kind").to_owned(),
            mimetype: mimetype.map(str::to_owned),
            size,
            url: url.map(str::to_owned),
        }
    }

    /// The image format it claims, from its MIME type or Slack's filetype.
    pub fn image_format(&self) -> Option<ImageFormat> {
        let kind = self
            .mimetype
            .as_deref()
            .and_then(|m| m.strip_prefix("image/"))
            .unwrap_or(&self.kind);
        match kind.to_ascii_lowercase().as_str() {
            "png" => Some(ImageFormat::Png),
            "jpeg" | "jpg" => Some(ImageFormat::Jpeg),
            "gif" => Some(ImageFormat::Gif),
            "webp" => Some(ImageFormat::Webp),
            _ => None,
        }
    }

    /// The line a prompt names it by, as a person reads it (unescaped).
    pub fn line(&self, state: FileState) -> String {
        let mut line = format!("[file: {}, {}", self.name, self.kind);
        if let Some(bytes) = self.size {
            line.push_str(&format!(", {}", size(bytes)));
        }
        match state {
            FileState::NotOpened => line.push_str(", not opened]"),
            FileState::Attached(n) => line.push_str(&format!(", image {n} attached]")),
            FileState::TooLarge => line.push_str(", too large to open]"),
            FileState::Unreadable => line.push_str(", could not be read]"),
        }
        line
    }
}

/// `text` with a line for each of `files`, as the message keeps it:
/// written as Slack writes text (`<`, `>` and `&` escaped), so that the
/// prompts unescape it like the rest.
pub fn with_lines(text: &str, files: &[SharedFile]) -> String {
    let mut out = text.to_owned();
    for file in files {
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&super::text::escape(&file.line(FileState::NotOpened)));
    }
    out
}

/// Whether `text` still names `file` on its line (an edit that took the
/// file away took its line too).
pub fn names(text: &str, file: &SharedFile) -> bool {
    text.contains(&super::text::escape(&file.line(FileState::NotOpened)))
}

/// `text` (from [`with_lines`]) with the line of `file` that says `from`
/// saying `to` instead.
pub fn restate(text: &str, file: &SharedFile, from: FileState, to: FileState) -> String {
    let from = super::text::escape(&file.line(from));
    let to = super::text::escape(&file.line(to));
    match text.rfind(&from) {
        Some(at) => format!("{}{}{}", &text[..at], to, &text[at + from.len()..]),
        None => text.to_owned(),
    }
}

/// `bytes` as a person reads a size: 512 B, 18 KB, 3.4 MB.
pub fn size(bytes: u64) -> String {
    const KB: u64 = 1024;
    const MB: u64 = 1024 * 1024;
    match bytes {
        b if b < KB => format!("{b} B"),
        b if b < MB => format!("{} KB", b.div_ceil(KB)),
        b => format!("{:.1} MB", b as f64 / MB as f64),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn png() -> SharedFile {
        SharedFile::new(
            Some("shot<1>.png"),
            Some("png"),
            Some("image/png"),
            Some(120_000),
            Some("https://files.slack.com/files-pri/T1-F1/shot.png"),
        )
    }

    #[test]
    fn a_file_has_a_clean_name_and_a_kind() {
        let file = png();
        assert_eq!(file.name, "shot<1>.png");
        assert_eq!(file.image_format(), Some(ImageFormat::Png));
        let odd = SharedFile::new(Some("odd]\nname"), Some("text"), None, None, None);
        assert_eq!(odd.name, "odd  name");
        assert_eq!(odd.image_format(), None);
        let image = SharedFile::new(None, None, Some("image/webp"), None, None);
        assert_eq!(image.kind, "image/webp");
        assert_eq!(image.image_format(), Some(ImageFormat::Webp));
        assert_eq!(
            SharedFile::new(None, None, None, None, None).line(FileState::NotOpened),
            "[file: a file, unknown kind, not opened]"
        );
    }

    #[test]
    fn each_state_is_said_on_the_files_line() {
        let file = png();
        let kept = with_lines("look", std::slice::from_ref(&file));
        assert_eq!(
            kept,
            "look\n[file: shot&lt;1&gt;.png, png, 118 KB, not opened]"
        );
        assert_eq!(
            restate(&kept, &file, FileState::NotOpened, FileState::Attached(2)),
            "look\n[file: shot&lt;1&gt;.png, png, 118 KB, image 2 attached]"
        );
        assert_eq!(
            restate(&kept, &file, FileState::NotOpened, FileState::Unreadable),
            "look\n[file: shot&lt;1&gt;.png, png, 118 KB, could not be read]"
        );
        assert_eq!(
            restate(&kept, &file, FileState::NotOpened, FileState::TooLarge),
            "look\n[file: shot&lt;1&gt;.png, png, 118 KB, too large to open]"
        );
        // An edited text that lost the line is left as it is.
        assert_eq!(
            restate("edited", &file, FileState::NotOpened, FileState::Unreadable),
            "edited"
        );
    }

    #[test]
    fn images_are_told_by_their_bytes_not_their_names() {
        assert_eq!(
            ImageFormat::sniff(b"\x89PNG\r\n\x1a\nrest"),
            Some(ImageFormat::Png)
        );
        assert_eq!(
            ImageFormat::sniff(b"\xff\xd8\xff\xe0"),
            Some(ImageFormat::Jpeg)
        );
        assert_eq!(ImageFormat::sniff(b"GIF89a..."), Some(ImageFormat::Gif));
        assert_eq!(
            ImageFormat::sniff(b"RIFF\0\0\0\0WEBPVP8 "),
            Some(ImageFormat::Webp)
        );
        assert_eq!(ImageFormat::sniff(b"<!DOCTYPE html><html>"), None);
        assert_eq!(ImageFormat::sniff(b""), None);
        assert_eq!(ImageFormat::Jpeg.media_type(), "image/jpeg");
    }
}
