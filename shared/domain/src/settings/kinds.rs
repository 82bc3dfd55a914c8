//! The kinds of value a setting takes. Each kind parses the text that SSM,
//! a file or the environment holds, says in a few words what it accepts (for
//! the settings page and `myao settings`), and writes a value back as text
//! that parses to it again.

use std::collections::BTreeMap;

use chrono_tz::Tz;

use super::error::SettingError;
use super::provider::LlmProvider;
use crate::ids::{ChannelId, UserId};
use crate::people::FamiliarityThresholds;
use crate::proactive::{ProactiveChannels, WorkingDays, WorkingHours};
use crate::reply::EmojiName;
use crate::rules::{Chattiness, Thresholds};

/// One kind of setting value.
pub trait Kind {
    type Value;
    /// The value of `text`, or why it is none.
    fn parse(&self, text: &str) -> Result<Self::Value, SettingError>;
    /// What it accepts, in a few words.
    fn describe(&self) -> String;
    /// `value` as text that [`Kind::parse`] reads back; empty for none.
    fn show(&self, value: &Self::Value) -> String;
}

/// The non-empty items of a comma-separated list, trimmed.
fn items(text: &str) -> impl Iterator<Item = &str> {
    text.split(',').map(str::trim).filter(|n| !n.is_empty())
}

/// Trimmed text that is not blank.
fn filled(text: &str) -> Result<String, SettingError> {
    let t = text.trim();
    if t.is_empty() {
        return Err(SettingError::Empty);
    }
    Ok(t.to_owned())
}

/// A whole number from `min` to `max`.
pub struct Whole(pub u32, pub u32);

impl Kind for Whole {
    type Value = u32;
    fn parse(&self, text: &str) -> Result<u32, SettingError> {
        let Whole(min, max) = *self;
        // A whole number outside u32 (-5, 99999999999) is out of range, not
        // "not a whole number".
        let n: i128 = text
            .trim()
            .parse()
            .map_err(|_| SettingError::NotAWholeNumber)?;
        match u32::try_from(n) {
            Ok(n) if (min..=max).contains(&n) => Ok(n),
            _ => Err(SettingError::WholeNumberOutOfRange { min, max }),
        }
    }
    fn describe(&self) -> String {
        format!("whole number, {} to {}", self.0, self.1)
    }
    fn show(&self, value: &u32) -> String {
        value.to_string()
    }
}

/// A number from `min` to `max`.
pub struct Number(pub f64, pub f64);

impl Kind for Number {
    type Value = f64;
    fn parse(&self, text: &str) -> Result<f64, SettingError> {
        let Number(min, max) = *self;
        let x: f64 = text.trim().parse().map_err(|_| SettingError::NotANumber)?;
        if !x.is_finite() || x < min || x > max {
            return Err(SettingError::NumberOutOfRange { min, max });
        }
        Ok(x)
    }
    fn describe(&self) -> String {
        format!("number, {} to {}", self.0, self.1)
    }
    fn show(&self, value: &f64) -> String {
        format!("{value}")
    }
}

/// `true` or `false` (also yes/no, on/off, 1/0).
pub struct Bool;

impl Kind for Bool {
    type Value = bool;
    fn parse(&self, text: &str) -> Result<bool, SettingError> {
        match text.trim().to_ascii_lowercase().as_str() {
            "true" | "yes" | "on" | "1" => Ok(true),
            "false" | "no" | "off" | "0" => Ok(false),
            _ => Err(SettingError::NotABoolean),
        }
    }
    fn describe(&self) -> String {
        "true or false".to_owned()
    }
    fn show(&self, value: &bool) -> String {
        value.to_string()
    }
}

/// Text that is not blank, trimmed.
pub struct Text;

impl Kind for Text {
    type Value = String;
    fn parse(&self, text: &str) -> Result<String, SettingError> {
        filled(text)
    }
    fn describe(&self) -> String {
        "text".to_owned()
    }
    fn show(&self, value: &String) -> String {
        value.clone()
    }
}

/// An http(s) URL, kept without a trailing `/`.
pub struct Url;

impl Kind for Url {
    type Value = String;
    fn parse(&self, text: &str) -> Result<String, SettingError> {
        let t = filled(text)?;
        if !(t.starts_with("http://") || t.starts_with("https://")) {
            return Err(SettingError::NotAnHttpUrl);
        }
        Ok(t.trim_end_matches('/').to_owned())
    }
    fn describe(&self) -> String {
        "http(s) URL".to_owned()
    }
    fn show(&self, value: &String) -> String {
        value.clone()
    }
}

/// A Slack id such as an app id (`A…`) or a workspace id (`T…`): capital
/// letters and digits, starting with the letter given.
pub struct SlackId(pub char);

impl Kind for SlackId {
    type Value = String;
    fn parse(&self, text: &str) -> Result<String, SettingError> {
        let t = filled(text)?;
        let id_char = |b: u8| b.is_ascii_uppercase() || b.is_ascii_digit();
        if t.len() > 32 || !t.bytes().all(id_char) {
            return Err(SettingError::NotASlackId);
        }
        if !t.starts_with(self.0) {
            return Err(SettingError::WrongSlackIdKind { first: self.0 });
        }
        Ok(t)
    }
    fn describe(&self) -> String {
        format!("Slack id starting with {}", self.0)
    }
    fn show(&self, value: &String) -> String {
        value.clone()
    }
}

/// A Slack user id (`U…`, `W…`).
pub struct User;

impl Kind for User {
    type Value = UserId;
    fn parse(&self, text: &str) -> Result<UserId, SettingError> {
        Ok(UserId::parse(text.trim())?)
    }
    fn describe(&self) -> String {
        "Slack user id".to_owned()
    }
    fn show(&self, value: &UserId) -> String {
        value.to_string()
    }
}

/// The most quick retries, and the longest wait of one: SQS's longest
/// visibility timeout, 12 hours.
pub const MAX_RETRIES: usize = 10;
pub const MAX_RETRY_DELAY: u32 = 43_200;

/// Seconds, comma-separated: at most [`MAX_RETRIES`] of them, each at most
/// [`MAX_RETRY_DELAY`]. Blank is none.
pub struct Delays;

impl Kind for Delays {
    type Value = Vec<u32>;
    fn parse(&self, text: &str) -> Result<Vec<u32>, SettingError> {
        let delays = items(text)
            .map(|n| {
                Whole(0, MAX_RETRY_DELAY)
                    .parse(n)
                    .map_err(|_| SettingError::NotDelays)
            })
            .collect::<Result<Vec<u32>, _>>()?;
        if delays.len() > MAX_RETRIES {
            return Err(SettingError::NotDelays);
        }
        Ok(delays)
    }
    fn describe(&self) -> String {
        format!("seconds, comma-separated: at most {MAX_RETRIES}, each up to {MAX_RETRY_DELAY}")
    }
    fn show(&self, value: &Vec<u32>) -> String {
        let delays: Vec<String> = value.iter().map(u32::to_string).collect();
        delays.join(",")
    }
}

/// Words, comma-separated; `lower` keeps them in lower case.
pub struct Words {
    pub lower: bool,
}

impl Kind for Words {
    type Value = Vec<String>;
    fn parse(&self, text: &str) -> Result<Vec<String>, SettingError> {
        let word = |w: &str| {
            if self.lower {
                w.to_lowercase()
            } else {
                w.to_owned()
            }
        };
        Ok(items(text).map(word).collect())
    }
    fn describe(&self) -> String {
        "words, comma-separated".to_owned()
    }
    fn show(&self, value: &Vec<String>) -> String {
        value.join(",")
    }
}

/// `mentions_only`, `quiet`, `normal` or `chatty`.
pub struct Level;

impl Kind for Level {
    type Value = Chattiness;
    fn parse(&self, text: &str) -> Result<Chattiness, SettingError> {
        Chattiness::parse(text).ok_or(SettingError::NotAChattiness)
    }
    fn describe(&self) -> String {
        "mentions_only, quiet, normal or chatty".to_owned()
    }
    fn show(&self, value: &Chattiness) -> String {
        value.to_string()
    }
}

/// `C123=quiet,C456=mentions_only`.
pub struct ChannelLevels;

impl Kind for ChannelLevels {
    type Value = BTreeMap<ChannelId, Chattiness>;
    fn parse(&self, text: &str) -> Result<Self::Value, SettingError> {
        items(text)
            .map(|pair| {
                let (channel, level) =
                    pair.split_once('=').ok_or(SettingError::NotAChannelLevel)?;
                let channel =
                    ChannelId::parse(channel.trim()).map_err(|_| SettingError::NotAChannelLevel)?;
                Ok((channel, Level.parse(level)?))
            })
            .collect()
    }
    fn describe(&self) -> String {
        "CHANNEL=LEVEL pairs, comma-separated".to_owned()
    }
    fn show(&self, value: &Self::Value) -> String {
        let pairs: Vec<String> = value
            .iter()
            .map(|(channel, level)| format!("{channel}={level}"))
            .collect();
        pairs.join(",")
    }
}

/// `LOW,HIGH`, with LOW <= HIGH.
pub struct LowHigh;

impl Kind for LowHigh {
    type Value = Thresholds;
    fn parse(&self, text: &str) -> Result<Thresholds, SettingError> {
        let score = |s: &str| {
            s.trim()
                .parse::<i32>()
                .map_err(|_| SettingError::NotThresholds)
        };
        let (low, high) = text.split_once(',').ok_or(SettingError::NotThresholds)?;
        let (low, high) = (score(low)?, score(high)?);
        if low > high {
            return Err(SettingError::NotThresholds);
        }
        Ok(Thresholds { low, high })
    }
    fn describe(&self) -> String {
        "LOW,HIGH scores".to_owned()
    }
    fn show(&self, value: &Thresholds) -> String {
        format!("{},{}", value.low, value.high)
    }
}

/// `ACQUAINTANCE,FRIEND,CLOSE`, in order.
pub struct Familiarity;

impl Kind for Familiarity {
    type Value = FamiliarityThresholds;
    fn parse(&self, text: &str) -> Result<FamiliarityThresholds, SettingError> {
        let n: Vec<u64> = text
            .split(',')
            .map(|v| v.trim().parse::<u64>())
            .collect::<Result<_, _>>()
            .map_err(|_| SettingError::NotFamiliarity)?;
        match n[..] {
            [a, f, c] if a <= f && f <= c => Ok(FamiliarityThresholds {
                acquaintance: a,
                friend: f,
                close: c,
            }),
            _ => Err(SettingError::NotFamiliarity),
        }
    }
    fn describe(&self) -> String {
        "ACQUAINTANCE,FRIEND,CLOSE counts".to_owned()
    }
    fn show(&self, value: &FamiliarityThresholds) -> String {
        format!("{},{},{}", value.acquaintance, value.friend, value.close)
    }
}

/// An emoji's name, without colons.
pub struct Emoji;

impl Kind for Emoji {
    type Value = EmojiName;
    fn parse(&self, text: &str) -> Result<EmojiName, SettingError> {
        EmojiName::parse(text).map_err(|_| SettingError::NotAnEmojiName)
    }
    fn describe(&self) -> String {
        "emoji name".to_owned()
    }
    fn show(&self, value: &EmojiName) -> String {
        value.to_string()
    }
}

/// Emoji names without colons, comma-separated. Blank is none.
pub struct Emojis;

impl Kind for Emojis {
    type Value = Vec<EmojiName>;
    fn parse(&self, text: &str) -> Result<Vec<EmojiName>, SettingError> {
        items(text).map(|name| Emoji.parse(name)).collect()
    }
    fn describe(&self) -> String {
        "emoji names, comma-separated".to_owned()
    }
    fn show(&self, value: &Vec<EmojiName>) -> String {
        let names: Vec<&str> = value.iter().map(EmojiName::as_str).collect();
        names.join(",")
    }
}

/// Channel ids and `public`, comma-separated.
pub struct Channels;

impl Kind for Channels {
    type Value = ProactiveChannels;
    fn parse(&self, text: &str) -> Result<ProactiveChannels, SettingError> {
        ProactiveChannels::parse(text).map_err(|_| SettingError::NotProactiveChannels)
    }
    fn describe(&self) -> String {
        "channel ids and public, comma-separated".to_owned()
    }
    fn show(&self, value: &ProactiveChannels) -> String {
        value.to_string()
    }
}

/// Whole hours `START-END`.
pub struct Hours;

impl Kind for Hours {
    type Value = WorkingHours;
    fn parse(&self, text: &str) -> Result<WorkingHours, SettingError> {
        WorkingHours::parse(text).ok_or(SettingError::NotHours)
    }
    fn describe(&self) -> String {
        "hours START-END".to_owned()
    }
    fn show(&self, value: &WorkingHours) -> String {
        value.to_string()
    }
}

/// Days and ranges of days, comma-separated.
pub struct Days;

impl Kind for Days {
    type Value = WorkingDays;
    fn parse(&self, text: &str) -> Result<WorkingDays, SettingError> {
        WorkingDays::parse(text).ok_or(SettingError::NotDays)
    }
    fn describe(&self) -> String {
        "days, e.g. mon-fri or mon,wed,fri".to_owned()
    }
    fn show(&self, value: &WorkingDays) -> String {
        value.to_string()
    }
}

/// An IANA time zone name.
pub struct Zone;

impl Kind for Zone {
    type Value = Tz;
    fn parse(&self, text: &str) -> Result<Tz, SettingError> {
        text.trim()
            .parse::<Tz>()
            .map_err(|_| SettingError::NotATimeZone)
    }
    fn describe(&self) -> String {
        "IANA time zone".to_owned()
    }
    fn show(&self, value: &Tz) -> String {
        value.name().to_owned()
    }
}

/// `openai` or `bedrock`.
pub struct Provider;

impl Kind for Provider {
    type Value = LlmProvider;
    fn parse(&self, text: &str) -> Result<LlmProvider, SettingError> {
        LlmProvider::parse(text).ok_or(SettingError::NotAProvider)
    }
    fn describe(&self) -> String {
        "openai or bedrock".to_owned()
    }
    fn show(&self, value: &LlmProvider) -> String {
        value.to_string()
    }
}

/// A setting that may have no value: blank is none.
pub struct Optional<K>(pub K);

impl<K: Kind> Kind for Optional<K> {
    type Value = Option<K::Value>;
    fn parse(&self, text: &str) -> Result<Self::Value, SettingError> {
        if text.trim().is_empty() {
            return Ok(None);
        }
        self.0.parse(text).map(Some)
    }
    fn describe(&self) -> String {
        self.0.describe()
    }
    fn show(&self, value: &Self::Value) -> String {
        value.as_ref().map(|v| self.0.show(v)).unwrap_or_default()
    }
}
