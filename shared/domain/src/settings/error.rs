//! Why a setting's value cannot be used, out of the module root so that
//! the setting kinds and the embedder beneath it refuse a value without
//! leaning on the file that declares them.

use crate::ids::IdError;

/// Why a setting's value cannot be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SettingError {
    /// No setting has this name.
    #[error("unknown setting")]
    UnknownName,
    #[error("not a whole number")]
    NotAWholeNumber,
    #[error("not a number")]
    NotANumber,
    #[error("out of range {min}..={max}")]
    WholeNumberOutOfRange { min: u32, max: u32 },
    #[error("out of range {min}..={max}")]
    NumberOutOfRange { min: f64, max: f64 },
    /// Blank, where some text is needed.
    #[error("empty")]
    Empty,
    #[error("not an http(s) URL")]
    NotAnHttpUrl,
    /// Not capital letters and digits (at most 32).
    #[error("not a Slack id (capital letters and digits)")]
    NotASlackId,
    /// A Slack id of the wrong kind (an app id must start with `A`, a
    /// workspace id with `T`).
    #[error("not a Slack id starting with {first}")]
    WrongSlackIdKind { first: char },
    #[error("not true or false")]
    NotABoolean,
    #[error("not an IANA time zone name")]
    NotATimeZone,
    #[error("not one of mentions_only, quiet, normal, chatty")]
    NotAChattiness,
    #[error("not CHANNEL=LEVEL pairs, comma-separated (e.g. C123=quiet,C456=mentions_only)")]
    NotAChannelLevel,
    #[error("not two whole numbers LOW,HIGH with LOW <= HIGH")]
    NotThresholds,
    #[error("not an emoji name (lower-case letters, digits, _ - + ')")]
    NotAnEmojiName,
    #[error("not three whole numbers ACQUAINTANCE,FRIEND,CLOSE in order")]
    NotFamiliarity,
    #[error("not channel ids and `public`, comma-separated (e.g. public,G123)")]
    NotProactiveChannels,
    #[error("not whole hours START-END with 0 <= START < END <= 24 (e.g. 10-18)")]
    NotHours,
    #[error("not days or ranges of days, comma-separated (e.g. mon-fri, or mon,wed,fri)")]
    NotDays,
    #[error("not openai or bedrock")]
    NotAProvider,
    #[error(
        "not bundled, off, openai:MODEL or bedrock:MODEL (e.g. openai:text-embedding-3-small)"
    )]
    NotAnEmbedder,
    #[error(
        "not at most 10 whole numbers of seconds up to 43200, comma-separated (e.g. 10,30,90)"
    )]
    NotDelays,
    #[error(transparent)]
    BadUserId(#[from] IdError),
}
