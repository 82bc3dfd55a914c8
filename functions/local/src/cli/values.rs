//! The values the options take, parsed at the edge: clap calls each parser
//! and frames its error (`invalid value 'X' for '--flag <V>': ...`), so the
//! messages here say only what is wrong with the value.

use std::net::SocketAddr;

use chrono::{Datelike as _, Duration, NaiveDate};

use crate::stack::SETTINGS_PATH;
use myao_domain::EmojiName;

/// A value an option does not take, or a command line whose options do
/// not go together: a usage error, exit code 2.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UsageError {
    #[error("not KEY=VALUE, like TableName=myao-Table-X")]
    NotAKeyValue,
    #[error("not a date like 2026-01-05")]
    NotADate,
    #[error("the dates go from 0001-01-01 to 9999-12-31")]
    DateOutOfRange,
    #[error("--from {from} is after --to {to}")]
    FromAfterTo { from: NaiveDate, to: NaiveDate },
    #[error("not a duration like 30m, 1h or off")]
    NotAnInterval,
    #[error("must be from 1m to 30d (or off)")]
    IntervalOutOfRange,
    #[error("not an emoji's name like -1, +1 or pray")]
    NotAnEmoji,
    #[error("not host:port like 127.0.0.1:3000")]
    NotAnAddress,
    #[error("not a stage's name like prod (lower-case letters, digits, -)")]
    NotAStage,
    #[error("{0} needs the stack: --stack <FILE> (the JSON of `aws cloudformation describe-stacks --stack-name NAME`, - for standard input), or its outputs with --set KEY=VALUE")]
    NoStack(&'static str),
    #[error("settings {0} changes a deployed stack's settings: give --stack <FILE>, --stage <NAME> or --settings-path <PATH> (locally, edit the --config file or set MYAO_<NAME>)")]
    SettingsNeedStack(&'static str),
    #[error("feedback reset takes back one channel's hints: give exactly one --channel (got {0})")]
    ResetOneChannel(usize),
    #[error("settings {action} needs {needs}")]
    SettingsNeeds {
        action: &'static str,
        needs: &'static str,
    },
    #[error("unexpected argument '{arg}' found: settings {action} takes {takes}")]
    SettingsExtra {
        action: &'static str,
        takes: &'static str,
        arg: String,
    },
    #[error("--config is for the local settings; a stack's are in SSM: give one or the other")]
    ConfigWithStack,
}

impl UsageError {
    /// The kind of clap error this one is shown as.
    pub fn kind(&self) -> clap::error::ErrorKind {
        use clap::error::ErrorKind;
        match self {
            UsageError::FromAfterTo { .. } | UsageError::ConfigWithStack => {
                ErrorKind::ArgumentConflict
            }
            UsageError::NoStack(_)
            | UsageError::SettingsNeedStack(_)
            | UsageError::SettingsNeeds { .. }
            | UsageError::ResetOneChannel(_) => ErrorKind::MissingRequiredArgument,
            UsageError::SettingsExtra { .. } => ErrorKind::UnknownArgument,
            _ => ErrorKind::ValueValidation,
        }
    }
}

/// The dates `--from` and `--to` accept: four-digit years. (chrono reads
/// `+262143-12-31` too, where a day more or less no longer exists.)
pub fn date(value: &str) -> Result<NaiveDate, UsageError> {
    match NaiveDate::parse_from_str(value, "%Y-%m-%d") {
        Ok(date) if (1..=9999).contains(&date.year()) => Ok(date),
        Ok(_) => Err(UsageError::DateOutOfRange),
        Err(_) => Err(UsageError::NotADate),
    }
}

/// The shortest `--memory-interval`: one minute of virtual time.
pub const MIN_MEMORY_INTERVAL_SECONDS: i64 = 60;
/// The longest `--memory-interval`: thirty days.
pub const MAX_MEMORY_INTERVAL_SECONDS: i64 = 30 * 86_400;

/// `--memory-interval`: the virtual time between memory sweeps, or none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Interval(pub Option<Duration>);

/// `90s`, `30m`, `1h`, `2d` (a bare number is seconds), from one minute to
/// thirty days; `0` and `off` are `None`.
pub fn interval(value: &str) -> Result<Option<Duration>, UsageError> {
    let v = value.trim();
    if v == "off" || v == "0" {
        return Ok(None);
    }
    let split = v.find(|c: char| !c.is_ascii_digit()).unwrap_or(v.len());
    let (digits, unit) = v.split_at(split);
    let unit_seconds: i64 = match unit {
        "" | "s" => 1,
        "m" | "min" => 60,
        "h" => 3_600,
        "d" => 86_400,
        _ => return Err(UsageError::NotAnInterval),
    };
    if digits.is_empty() {
        return Err(UsageError::NotAnInterval);
    }
    // All digits: a number that does not parse is too large for an i64.
    let out_of_range = || UsageError::IntervalOutOfRange;
    let n: i64 = digits.parse().map_err(|_| out_of_range())?;
    let seconds = n.checked_mul(unit_seconds).ok_or_else(out_of_range)?;
    if seconds == 0 {
        return Ok(None);
    }
    if !(MIN_MEMORY_INTERVAL_SECONDS..=MAX_MEMORY_INTERVAL_SECONDS).contains(&seconds) {
        return Err(out_of_range());
    }
    Duration::try_seconds(seconds)
        .map(Some)
        .ok_or_else(out_of_range)
}

/// [`interval`], as the option's type.
pub fn memory_interval(value: &str) -> Result<Interval, UsageError> {
    interval(value).map(Interval)
}

/// `--addr`: an IP address and a port.
pub fn addr(value: &str) -> Result<SocketAddr, UsageError> {
    value.parse().map_err(|_| UsageError::NotAnAddress)
}

/// `--set KEY=VALUE`: a stack output or parameter (the value may hold `=`).
pub fn key_value(value: &str) -> Result<(String, String), UsageError> {
    match value.split_once('=') {
        Some((key, v)) if !key.trim().is_empty() => Ok((key.trim().to_owned(), v.to_owned())),
        _ => Err(UsageError::NotAKeyValue),
    }
}

/// `--stage NAME`: the settings' path `/myao/NAME/`, for a name the
/// template takes (its pattern: `^[a-z0-9][a-z0-9-]{0,19}$`).
pub fn stage(value: &str) -> Result<(String, String), UsageError> {
    let name_char = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-';
    if value.is_empty()
        || value.len() > 20
        || value.starts_with('-')
        || !value.chars().all(name_char)
    {
        return Err(UsageError::NotAStage);
    }
    Ok((SETTINGS_PATH.to_owned(), format!("/myao/{value}/")))
}

/// `--settings-path PATH`: the stack's `SettingsPath`.
pub fn settings_path(value: &str) -> Result<(String, String), UsageError> {
    Ok((SETTINGS_PATH.to_owned(), value.to_owned()))
}

/// An emoji's name for `--react`: `-1`, `+1`, `pray` (colons around it
/// are dropped).
pub fn emoji(text: &str) -> Result<EmojiName, UsageError> {
    EmojiName::parse(text).map_err(|_| UsageError::NotAnEmoji)
}
