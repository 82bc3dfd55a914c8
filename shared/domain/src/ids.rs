//! Slack identifiers and timestamps, parsed at the edge.
//!
//! Inside the core a channel id, a user id or a Slack `ts` is never a bare
//! string: it is parsed once, and a [`Ts`] orders as the number it is.

use std::fmt;
use std::str::FromStr;

use chrono::{DateTime, TimeZone, Utc};
use serde::{Deserialize, Serialize};

/// Why a text is not a valid id or timestamp.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IdError {
    #[error("empty {0}")]
    Empty(&'static str),
    #[error("{kind} {value:?} has a character outside [A-Za-z0-9]")]
    BadChar { kind: &'static str, value: String },
    #[error("{kind} {value:?} is longer than {max} characters")]
    TooLong {
        kind: &'static str,
        value: String,
        max: usize,
    },
    #[error("timestamp {0:?} is not of the form SECONDS.MICROS")]
    BadTs(String),
}

fn slack_id(kind: &'static str, value: &str) -> Result<String, IdError> {
    const MAX: usize = 32;
    if value.is_empty() {
        return Err(IdError::Empty(kind));
    }
    if value.len() > MAX {
        return Err(IdError::TooLong {
            kind,
            value: value.chars().take(40).collect(),
            max: MAX,
        });
    }
    if !value.bytes().all(|b| b.is_ascii_alphanumeric()) {
        return Err(IdError::BadChar {
            kind,
            value: value.chars().take(40).collect(),
        });
    }
    Ok(value.to_owned())
}

macro_rules! slack_id_type {
    ($(#[$doc:meta])* $name:ident, $kind:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        #[serde(try_from = "String", into = "String")]
        pub struct $name(String);

        impl $name {
            /// Parses a Slack id: 1 to 32 ASCII letters and digits.
            pub fn parse(value: &str) -> Result<Self, IdError> {
                slack_id($kind, value).map($name)
            }

            /// The id as Slack writes it.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl FromStr for $name {
            type Err = IdError;
            fn from_str(s: &str) -> Result<Self, IdError> {
                Self::parse(s)
            }
        }

        impl TryFrom<String> for $name {
            type Error = IdError;
            fn try_from(s: String) -> Result<Self, IdError> {
                Self::parse(&s)
            }
        }

        impl From<$name> for String {
            fn from(id: $name) -> String {
                id.0
            }
        }
    };
}

slack_id_type!(
    /// A Slack channel id (`C...` public, `G...` private, `D...` direct).
    ChannelId,
    "channel id"
);
slack_id_type!(
    /// A Slack user id (`U...`, `W...`), bots included.
    UserId,
    "user id"
);
slack_id_type!(
    /// A Slack workspace's id (`T...`).
    TeamId,
    "team id"
);
slack_id_type!(
    /// An Enterprise Grid organisation's id (`E...`).
    EnterpriseId,
    "enterprise id"
);

/// A Slack message timestamp (`"1712345678.123456"`): unique within a
/// channel, and ordered numerically (`"9.5" < "10.1"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Ts {
    secs: u64,
    micros: u32,
}

impl Ts {
    /// Parses `SECONDS` or `SECONDS.FRACTION` with at most six fraction digits.
    pub fn parse(value: &str) -> Result<Ts, IdError> {
        let bad = || IdError::BadTs(value.chars().take(40).collect());
        let (secs, frac) = match value.split_once('.') {
            Some((s, f)) => (s, f),
            None => (value, ""),
        };
        if secs.is_empty()
            || secs.len() > 12
            || frac.len() > 6
            || !secs.bytes().all(|b| b.is_ascii_digit())
            || !frac.bytes().all(|b| b.is_ascii_digit())
        {
            return Err(bad());
        }
        let secs: u64 = secs.parse().map_err(|_| bad())?;
        let micros = if frac.is_empty() {
            0
        } else {
            let n: u32 = frac.parse().map_err(|_| bad())?;
            n * 10u32.pow(6 - frac.len() as u32)
        };
        Ok(Ts { secs, micros })
    }

    /// A timestamp from whole seconds and microseconds.
    pub fn from_parts(secs: u64, micros: u32) -> Ts {
        Ts {
            secs: secs + u64::from(micros / 1_000_000),
            micros: micros % 1_000_000,
        }
    }

    /// The timestamp of an instant (before 1970 clamps to 0).
    pub fn from_datetime(at: DateTime<Utc>) -> Ts {
        let secs = u64::try_from(at.timestamp()).unwrap_or(0);
        Ts::from_parts(secs, at.timestamp_subsec_micros())
    }

    /// Whole seconds since the epoch.
    pub fn secs(self) -> u64 {
        self.secs
    }

    /// The instant this timestamp names.
    pub fn to_datetime(self) -> DateTime<Utc> {
        let secs = i64::try_from(self.secs).unwrap_or(i64::MAX);
        Utc.timestamp_opt(secs, self.micros * 1000)
            .single()
            .unwrap_or(DateTime::<Utc>::MAX_UTC)
    }

    /// A fixed-width text that sorts like the number, for storage keys.
    pub fn sort_key(self) -> String {
        format!("{:016}.{:06}", self.secs, self.micros)
    }
}

impl fmt::Display for Ts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{:06}", self.secs, self.micros)
    }
}

impl FromStr for Ts {
    type Err = IdError;
    fn from_str(s: &str) -> Result<Ts, IdError> {
        Ts::parse(s)
    }
}

impl TryFrom<String> for Ts {
    type Error = IdError;
    fn try_from(s: String) -> Result<Ts, IdError> {
        Ts::parse(&s)
    }
}

impl From<Ts> for String {
    fn from(ts: Ts) -> String {
        ts.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ts_orders_numerically_not_as_text() {
        let a = Ts::parse("9.500000").unwrap();
        let b = Ts::parse("10.100000").unwrap();
        assert!(a < b);
        assert!(
            "9.500000" > "10.100000",
            "as text the order is the other way"
        );
        assert!(Ts::parse("1.000002").unwrap() > Ts::parse("1.000001").unwrap());
    }

    #[test]
    fn ts_round_trips_and_pads_the_fraction() {
        assert_eq!(
            Ts::parse("1712345678.123456").unwrap().to_string(),
            "1712345678.123456"
        );
        assert_eq!(Ts::parse("1.5").unwrap().to_string(), "1.500000");
        assert_eq!(Ts::parse("7").unwrap().to_string(), "7.000000");
        assert_eq!(Ts::parse("1.5").unwrap(), Ts::parse("1.500000").unwrap());
    }

    #[test]
    fn ts_rejects_what_slack_never_sends() {
        for bad in ["", ".5", "1.1234567", "-1.0", "1e9", "abc", "1.2.3", " 1.0"] {
            assert!(Ts::parse(bad).is_err(), "{bad:?} was accepted");
        }
    }

    #[test]
    fn ts_sort_key_sorts_like_the_number() {
        let a = Ts::parse("999999999.999999").unwrap().sort_key();
        let b = Ts::parse("1000000000.000000").unwrap().sort_key();
        assert!(a < b);
    }

    #[test]
    fn ts_and_datetime_agree() {
        let ts = Ts::parse("1709287200.250000").unwrap();
        let at = ts.to_datetime();
        assert_eq!(at.to_rfc3339(), "2024-03-01T10:00:00.250+00:00");
        assert_eq!(Ts::from_datetime(at), ts);
    }

    #[test]
    fn ids_accept_slack_ids_and_refuse_others() {
        assert_eq!(ChannelId::parse("C0123ABC").unwrap().as_str(), "C0123ABC");
        assert!(UserId::parse("U1").is_ok());
        assert!(ChannelId::parse("").is_err());
        assert!(ChannelId::parse("C1/../x").is_err());
        assert!(UserId::parse(&"U".repeat(33)).is_err());
    }

    #[test]
    fn ids_and_ts_serialise_as_strings() {
        let json =
            serde_json::to_string(&(ChannelId::parse("C1").unwrap(), Ts::parse("1.5").unwrap()))
                .unwrap();
        assert_eq!(json, r#"["C1","1.500000"]"#);
        let bad: Result<Ts, _> = serde_json::from_str(r#""x""#);
        assert!(bad.is_err());
    }
}
