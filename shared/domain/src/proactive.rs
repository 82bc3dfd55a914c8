//! Proactive talk: now and then, after a long silence in a channel it may
//! speak in, the bot opens a topic of its own (issue 17). Off by default and
//! tightly bounded: only in the channels `proactive_channels` lets it speak
//! in, only inside working hours, at most one judgment per channel and day
//! and `max_proactive_per_channel_week` posts per channel and week, never
//! twice in a row without anyone answering.
//!
//! Pure: when a channel qualifies, when the judgment runs, the counters that
//! hold the bounds, and how the judgment's answer is read.

use std::collections::BTreeSet;
use std::fmt;

use chrono::{DateTime, Datelike, Duration, NaiveDate, TimeZone, Utc, Weekday};
use chrono_tz::Tz;
use serde_json::Value;

use super::channel::Channel;
use super::ids::{ChannelId, UserId};
use super::judgment::first_object;
use super::message::Message;

/// The hours of the day (in the workspace's `timezone`) in which the bot may
/// open a topic: from `start` o'clock up to, not including, `end` o'clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorkingHours {
    pub start: u32,
    pub end: u32,
}

impl Default for WorkingHours {
    fn default() -> Self {
        WorkingHours { start: 10, end: 18 }
    }
}

impl WorkingHours {
    /// `START-END`, whole hours with `0 <= START < END <= 24` (`10-18`).
    pub fn parse(text: &str) -> Option<WorkingHours> {
        let (start, end) = text.trim().split_once('-')?;
        let start: u32 = start.trim().parse().ok()?;
        let end: u32 = end.trim().parse().ok()?;
        (start < end && end <= 24).then_some(WorkingHours { start, end })
    }
}

impl fmt::Display for WorkingHours {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.start, self.end)
    }
}

/// The days of the week on which the bot may open a topic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorkingDays(u8);

const DAY_NAMES: [&str; 7] = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"];

impl Default for WorkingDays {
    /// Monday to Friday.
    fn default() -> Self {
        WorkingDays(0b001_1111)
    }
}

impl WorkingDays {
    /// Days and ranges of days by their first three letters, comma
    /// separated: `mon-fri`, `mon,wed,fri`, `sat-sun`, `mon-sun`. A range
    /// runs forward and may wrap (`fri-mon`). At least one day.
    pub fn parse(text: &str) -> Option<WorkingDays> {
        let day = |name: &str| {
            let name = name.trim().to_ascii_lowercase();
            DAY_NAMES.iter().position(|d| *d == name)
        };
        let mut bits = 0u8;
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            match part.split_once('-') {
                Some((from, to)) => {
                    let (from, to) = (day(from)?, day(to)?);
                    let mut d = from;
                    loop {
                        bits |= 1 << d;
                        if d == to {
                            break;
                        }
                        d = (d + 1) % 7;
                    }
                }
                None => bits |= 1 << day(part)?,
            }
        }
        (bits != 0).then_some(WorkingDays(bits))
    }

    pub fn contains(self, day: Weekday) -> bool {
        self.0 & (1 << day.num_days_from_monday()) != 0
    }
}

impl fmt::Display for WorkingDays {
    /// The days as a list (`mon,tue,wed,thu,fri`), which parses back.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let days: Vec<&str> = DAY_NAMES
            .iter()
            .enumerate()
            .filter(|(i, _)| self.0 & (1 << i) != 0)
            .map(|(_, d)| *d)
            .collect();
        // Monday to Friday, the default, reads as the setting is documented.
        if self.0 == WorkingDays::default().0 {
            return f.write_str("mon-fri");
        }
        f.write_str(&days.join(","))
    }
}

/// The word of `proactive_channels` that stands for every public channel
/// not shared outside the organisation.
pub const PUBLIC: &str = "public";

/// The channels the bot may open a topic in (`proactive_channels`): those
/// listed by id, and, with the word `public`, every public channel not
/// shared outside the organisation. A private channel, a direct message or
/// a channel shared with another organisation only when listed by id.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ProactiveChannels {
    pub listed: BTreeSet<ChannelId>,
    pub public: bool,
}

impl ProactiveChannels {
    /// `C123,G456`, or `public`, or both (`public,G456`). Empty: none.
    pub fn parse(text: &str) -> Result<ProactiveChannels, ProactiveChannelsError> {
        let mut out = ProactiveChannels::default();
        for item in text.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            if item.eq_ignore_ascii_case(PUBLIC) {
                out.public = true;
            } else {
                // Slack writes channel ids in capitals: a lower-case word is
                // a channel's name, which would never match.
                let refused = || ProactiveChannelsError::NotAnId {
                    item: item.chars().take(40).collect(),
                };
                if !item
                    .bytes()
                    .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
                {
                    return Err(refused());
                }
                let id = ChannelId::parse(item).map_err(|_| refused())?;
                out.listed.insert(id);
            }
        }
        Ok(out)
    }

    /// Whether the bot may open a topic in `channel` (its visibility as
    /// last known: an unknown one counts as private).
    pub fn allows(&self, channel: &Channel) -> bool {
        self.listed.contains(&channel.id) || (self.public && channel.visibility.is_open())
    }

    pub fn is_empty(&self) -> bool {
        self.listed.is_empty() && !self.public
    }
}

/// Why a `proactive_channels` text does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProactiveChannelsError {
    /// An item neither `public` nor a channel id (a channel's name, say):
    /// its first 40 characters.
    #[error("not a channel id or `public`: {item:?}")]
    NotAnId { item: String },
}

impl fmt::Display for ProactiveChannels {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut items: Vec<&str> = Vec::new();
        if self.public {
            items.push(PUBLIC);
        }
        items.extend(self.listed.iter().map(ChannelId::as_str));
        f.write_str(&items.join(","))
    }
}

/// A proactive judgment is scheduled at least this long ahead (EventBridge
/// Scheduler fires with one-minute precision; a time in the past would not
/// fire at all).
pub const MIN_LEAD: Duration = Duration::seconds(60);

/// The local time `hour:00` of `date` in `tz`, as UTC (the earliest when
/// the clock goes back, the next existing hour when it springs forward).
fn local(tz: Tz, date: NaiveDate, hour: u32) -> Option<DateTime<Utc>> {
    let start = if hour >= 24 {
        date.succ_opt()?.and_hms_opt(0, 0, 0)?
    } else {
        date.and_hms_opt(hour, 0, 0)?
    };
    (0..3).find_map(|extra| {
        tz.from_local_datetime(&(start + Duration::hours(extra)))
            .earliest()
            .map(|t| t.with_timezone(&Utc))
    })
}

/// Whether `at` falls inside the working hours of a working day in `tz`.
pub fn within(at: DateTime<Utc>, tz: Tz, hours: WorkingHours, days: WorkingDays) -> bool {
    let date = at.with_timezone(&tz).date_naive();
    if !days.contains(date.weekday()) {
        return false;
    }
    match (local(tz, date, hours.start), local(tz, date, hours.end)) {
        (Some(from), Some(to)) => from <= at && at < to,
        _ => false,
    }
}

/// When a proactive judgment made at `now` runs: at a whole minute drawn by
/// `unit` (from [0, 1)) inside the first working window that still has at
/// least a minute left after `now` + [`MIN_LEAD`] (today's, else the next
/// working day's), with the window's local date. Never before `now` +
/// [`MIN_LEAD`]. `None` only when no working day falls within the next
/// eight days (impossible with at least one day set).
pub fn slot(
    now: DateTime<Utc>,
    tz: Tz,
    hours: WorkingHours,
    days: WorkingDays,
    unit: f64,
) -> Option<(DateTime<Utc>, NaiveDate)> {
    let earliest = now + MIN_LEAD;
    let today = now.with_timezone(&tz).date_naive();
    for offset in 0..=8 {
        let date = today + Duration::days(offset);
        if !days.contains(date.weekday()) {
            continue;
        }
        let (Some(open), Some(close)) = (local(tz, date, hours.start), local(tz, date, hours.end))
        else {
            continue;
        };
        // Whole minutes from the window's opening (or the earliest allowed).
        let from = open.max(earliest);
        let from = if from == open {
            from
        } else {
            let secs = (from - open).num_seconds();
            open + Duration::seconds((secs + 59) / 60 * 60)
        };
        let minutes = (close - from).num_minutes();
        if minutes < 1 {
            continue;
        }
        let pick = ((minutes as f64) * unit.clamp(0.0, 1.0)).floor() as i64;
        let at = from + Duration::minutes(pick.min(minutes - 1));
        return Some((at, date));
    }
    None
}

/// Whether `channel`, whose newest activity was `last_active`, has been
/// silent at least `after` at `now`. A channel with no activity known (the
/// epoch) does not qualify: there is nothing to go on.
pub fn silent_for(last_active: DateTime<Utc>, now: DateTime<Utc>, after: Duration) -> bool {
    last_active > DateTime::<Utc>::UNIX_EPOCH && now - last_active >= after
}

/// Why a proactive judgment stopped before asking the LLM.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hold {
    /// `proactive` is off (it was turned off after the job was made).
    Off,
    /// The channel is not one `proactive_channels` allows (any more).
    NotAllowed,
    /// Only mentions are answered there (`chattiness`, `channel_chattiness`
    /// or `autonomous_replies`): nothing unprompted.
    MentionsOnly,
    /// Run outside the working hours (a late delivery).
    OutsideHours,
    /// Someone asked the bot to be quiet in the channel, for a while.
    Muted,
    /// No message of the channel is left to go on.
    Empty,
    /// The channel has not been silent `proactive_after_hours`.
    NotSilent,
    /// The bot's own message is the newest: never two openings in a row.
    BotSpokeLast,
    /// The bot spoke in the channel within `cooldown_seconds`.
    Cooldown,
    /// The channel had its `max_proactive_per_channel_week` openings.
    WeekFull,
    /// The channel had its `max_unprompted_per_channel_hour` replies, or
    /// the workspace its `max_unprompted_per_workspace_hour`.
    HourFull,
}

impl Hold {
    pub fn name(self) -> &'static str {
        match self {
            Hold::Off => "off",
            Hold::NotAllowed => "not_allowed",
            Hold::MentionsOnly => "mentions_only",
            Hold::OutsideHours => "outside_hours",
            Hold::Muted => "muted",
            Hold::Empty => "empty",
            Hold::NotSilent => "not_silent",
            Hold::BotSpokeLast => "bot_spoke_last",
            Hold::Cooldown => "cooldown",
            Hold::WeekFull => "week_full",
            Hold::HourFull => "hour_full",
        }
    }
}

/// What holds an opening in the channel's `recent` messages at `now`
/// before anything else is asked: none left, or the newest not `after`
/// old yet (`proactive_after_hours`).
pub fn silence_hold(recent: &[Message], now: DateTime<Utc>, after: Duration) -> Option<Hold> {
    let Some(newest) = recent.iter().max_by_key(|m| m.ts) else {
        return Some(Hold::Empty);
    };
    (!silent_for(newest.ts.to_datetime(), now, after)).then_some(Hold::NotSilent)
}

/// What holds an opening in a silence long enough ([`silence_hold`]): the
/// bot's own word the newest (`bot`, its user id when known: any bot's
/// otherwise), or within `cooldown` (`cooldown_seconds`) of `now`.
pub fn own_word_hold(
    recent: &[Message],
    now: DateTime<Utc>,
    cooldown: Duration,
    bot: Option<&UserId>,
) -> Option<Hold> {
    let newest = recent.iter().max_by_key(|m| m.ts)?;
    if newest.is_bot && bot.is_none_or(|b| *b == newest.user) {
        return Some(Hold::BotSpokeLast);
    }
    let spoke_lately =
        |m: &&Message| bot.is_some_and(|b| *b == m.user) && now - m.ts.to_datetime() < cooldown;
    recent.iter().find(spoke_lately).map(|_| Hold::Cooldown)
}

/// The claim that lets one proactive judgment be made for `channel` on the
/// local `date`: the hourly run makes one at most a day, however long the
/// silence lasts. It expires two days after the date began (the date's
/// window is over by then, in any zone).
pub fn day_claim(channel: &ChannelId, date: NaiveDate) -> (String, DateTime<Utc>) {
    let expires = date
        .and_hms_opt(0, 0, 0)
        .map(|d| d.and_utc() + Duration::days(2))
        .unwrap_or(DateTime::<Utc>::MAX_UTC);
    (format!("proactive-day#{channel}#{date}"), expires)
}

/// The claims of the proactive posts of `channel` in the (ISO, UTC) week of
/// `now`: slot 1 to `max_proactive_per_channel_week`, taken in order, so the
/// week is full when its last slot is held. They expire at the week's end.
pub fn week_slot(channel: &ChannelId, now: DateTime<Utc>, slot: u32) -> (String, DateTime<Utc>) {
    let week = now.iso_week();
    let monday = NaiveDate::from_isoywd_opt(week.year(), week.week(), Weekday::Mon)
        .and_then(|d| d.and_hms_opt(0, 0, 0))
        .map(|d| d.and_utc())
        .unwrap_or(now);
    (
        format!(
            "proactive-week#{channel}#{}-W{:02}#{slot}",
            week.year(),
            week.week()
        ),
        monday + Duration::days(7),
    )
}

/// The most characters of an opening's topic kept.
pub const MAX_TOPIC_CHARS: usize = 300;

/// Why the proactive judgment's answer could not be read: silence.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OpeningParseError {
    #[error("no JSON object in the answer")]
    NoJson,
    #[error("the JSON object does not parse: {0}")]
    BadJson(String),
    #[error("open is missing or not a boolean")]
    NoVerdict,
    #[error("open is true but the topic is missing, empty or not a string")]
    NoTopic,
}

/// Reads the proactive judgment's answer, `{"open": bool, "topic": "..."}`
/// (in a code fence or prose too): `Some(topic)` to open with it, `None`
/// to stay silent. `open` must be a real boolean and a yes must name a
/// topic: anything else is no verdict, and the bot stays silent.
pub fn parse_opening(answer: &str) -> Result<Option<String>, OpeningParseError> {
    let object = first_object(answer).ok_or(OpeningParseError::NoJson)?;
    let value: Value =
        serde_json::from_str(object).map_err(|e| OpeningParseError::BadJson(e.to_string()))?;
    match value.get("open") {
        Some(Value::Bool(false)) => Ok(None),
        Some(Value::Bool(true)) => match value.get("topic") {
            Some(Value::String(topic)) if !topic.trim().is_empty() => {
                Ok(Some(topic.trim().chars().take(MAX_TOPIC_CHARS).collect()))
            }
            _ => Err(OpeningParseError::NoTopic),
        },
        _ => Err(OpeningParseError::NoVerdict),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Ts, Visibility};

    fn t(text: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(text)
            .expect("a time")
            .with_timezone(&Utc)
    }

    fn channel(id: &str, visibility: Visibility) -> Channel {
        Channel {
            id: ChannelId::parse(id).unwrap(),
            name: id.to_lowercase(),
            visibility,
        }
    }

    #[test]
    fn the_silence_holds_an_opening_until_it_is_long_and_not_the_bots() {
        let (now, hour) = (t("2026-01-05T14:00:00Z"), 3_600);
        let said = |user: &str, secs_ago: i64, is_bot: bool| {
            let ts = Ts::from_datetime(now - Duration::seconds(secs_ago));
            Message::new(
                ChannelId::parse("C1").unwrap(),
                UserId::parse(user).unwrap(),
                "hi",
                ts,
                None,
                is_bot,
            )
        };
        let (after, cooldown) = (Duration::hours(24), Duration::hours(48));
        let bot = UserId::parse("UBOT").unwrap();
        let hold = |recent: &[Message], bot: Option<&UserId>| {
            silence_hold(recent, now, after).or_else(|| own_word_hold(recent, now, cooldown, bot))
        };
        assert_eq!(hold(&[], Some(&bot)), Some(Hold::Empty));
        let lately = [said("UA", 30 * hour, false), said("UB", 2 * hour, false)];
        assert_eq!(hold(&lately, Some(&bot)), Some(Hold::NotSilent));
        let quiet = [said("UA", 40 * hour, false), said("UB", 30 * hour, false)];
        assert_eq!(hold(&quiet, Some(&bot)), None);
        let its_own = [said("UA", 40 * hour, false), said("UBOT", 30 * hour, true)];
        assert_eq!(hold(&its_own, Some(&bot)), Some(Hold::BotSpokeLast));
        // Another bot's notice last is no opening of its own; any bot's is
        // when its own id is not known.
        let notice = [said("UA", 40 * hour, false), said("UCI", 30 * hour, true)];
        assert_eq!(hold(&notice, Some(&bot)), None);
        assert_eq!(hold(&notice, None), Some(Hold::BotSpokeLast));
        let answered = [said("UBOT", 40 * hour, true), said("UA", 30 * hour, false)];
        assert_eq!(hold(&answered, Some(&bot)), Some(Hold::Cooldown));
        let long_ago = [said("UBOT", 50 * hour, true), said("UA", 30 * hour, false)];
        assert_eq!(hold(&long_ago, Some(&bot)), None);
    }

    #[test]
    fn hours_and_days_parse_and_print() {
        assert_eq!(
            WorkingHours::parse(" 9 - 17 "),
            Some(WorkingHours { start: 9, end: 17 })
        );
        assert_eq!(
            WorkingHours::parse("0-24"),
            Some(WorkingHours { start: 0, end: 24 })
        );
        for bad in ["18-10", "10-10", "10-25", "10", "a-b", ""] {
            assert_eq!(WorkingHours::parse(bad), None, "{bad}");
        }
        assert_eq!(WorkingHours::default().to_string(), "10-18");

        let weekdays = WorkingDays::parse("mon-fri").unwrap();
        assert_eq!(weekdays, WorkingDays::default());
        assert!(weekdays.contains(Weekday::Fri) && !weekdays.contains(Weekday::Sat));
        assert_eq!(weekdays.to_string(), "mon-fri");
        let odd = WorkingDays::parse("Mon, wed,FRI").unwrap();
        assert_eq!(odd.to_string(), "mon,wed,fri");
        assert_eq!(WorkingDays::parse(&odd.to_string()), Some(odd));
        let wrap = WorkingDays::parse("fri-mon").unwrap();
        assert_eq!(wrap.to_string(), "mon,fri,sat,sun");
        assert_eq!(WorkingDays::parse("mon-sun").unwrap().to_string().len(), 27);
        for bad in ["", ",", "monday", "mon-xyz", "m"] {
            assert_eq!(WorkingDays::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn only_listed_channels_or_open_ones_with_public_qualify() {
        let general = channel("C1", Visibility::PUBLIC);
        let secret = channel("G2", Visibility::PRIVATE);
        let shared = channel("C3", Visibility::PUBLIC.shared_externally());
        let unknown = channel("C4", Visibility::UNKNOWN);

        let none = ProactiveChannels::parse("").unwrap();
        assert!(none.is_empty());
        assert!(!none.allows(&general), "empty is none, not all");

        let listed = ProactiveChannels::parse("C1, G2").unwrap();
        assert!(listed.allows(&general) && listed.allows(&secret));
        assert!(!listed.allows(&shared) && !listed.allows(&unknown));

        let public = ProactiveChannels::parse("public").unwrap();
        assert!(public.allows(&general));
        assert!(!public.allows(&secret), "private: only by its id");
        assert!(!public.allows(&shared), "shared outside: only by its id");
        assert!(!public.allows(&unknown), "unknown counts as private");

        let both = ProactiveChannels::parse("PUBLIC,C3").unwrap();
        assert!(both.allows(&shared) && both.allows(&general) && !both.allows(&secret));
        assert_eq!(both.to_string(), "public,C3");
        assert_eq!(
            ProactiveChannels::parse("C1,not an id"),
            Err(ProactiveChannelsError::NotAnId {
                item: "not an id".into()
            })
        );
        assert!(
            ProactiveChannels::parse("general").is_err(),
            "a name, not an id"
        );
    }

    #[test]
    fn a_slot_is_a_whole_minute_inside_todays_window_when_time_is_left() {
        let (h, d) = (WorkingHours::default(), WorkingDays::default());
        // Monday 2026-01-05, 08:00 UTC: the whole window is ahead.
        let now = t("2026-01-05T08:00:00Z");
        assert_eq!(
            slot(now, Tz::UTC, h, d, 0.0),
            Some((t("2026-01-05T10:00:00Z"), now.date_naive()))
        );
        assert_eq!(
            slot(now, Tz::UTC, h, d, 0.5).map(|s| s.0),
            Some(t("2026-01-05T14:00:00Z"))
        );
        assert_eq!(
            slot(now, Tz::UTC, h, d, 0.999_999).map(|s| s.0),
            Some(t("2026-01-05T17:59:00Z"))
        );
        // Inside the window: from a minute ahead, rounded up to the minute.
        let now = t("2026-01-05T12:30:20Z");
        assert_eq!(
            slot(now, Tz::UTC, h, d, 0.0).map(|s| s.0),
            Some(t("2026-01-05T12:32:00Z"))
        );
        for unit in [0.0, 0.3, 0.7, 0.99] {
            let (at, _) = slot(now, Tz::UTC, h, d, unit).unwrap();
            assert!(at >= now + MIN_LEAD && at < t("2026-01-05T18:00:00Z"));
            assert_eq!(at.timestamp() % 60, 0);
        }
        // Too late today: the next working day's window.
        let now = t("2026-01-05T17:59:30Z");
        assert_eq!(
            slot(now, Tz::UTC, h, d, 0.0),
            Some((
                t("2026-01-06T10:00:00Z"),
                NaiveDate::from_ymd_opt(2026, 1, 6).unwrap()
            ))
        );
    }

    #[test]
    fn weekends_are_skipped_and_the_zone_is_the_workspaces() {
        let (h, d) = (WorkingHours::default(), WorkingDays::default());
        // Friday 2026-01-09 19:00 UTC: next Monday.
        let (at, date) = slot(t("2026-01-09T19:00:00Z"), Tz::UTC, h, d, 0.0).unwrap();
        assert_eq!(at, t("2026-01-12T10:00:00Z"));
        assert_eq!(date.weekday(), Weekday::Mon);
        // Tokyo (UTC+9): 10:00 there is 01:00 UTC.
        let tokyo = chrono_tz::Asia::Tokyo;
        let (at, _) = slot(t("2026-01-05T00:00:00Z"), tokyo, h, d, 0.0).unwrap();
        assert_eq!(at, t("2026-01-05T01:00:00Z"));
        assert!(within(t("2026-01-05T08:59:00Z"), tokyo, h, d));
        assert!(!within(t("2026-01-05T09:00:00Z"), tokyo, h, d), "18:00 JST");
        // Saturday, Monday early, Monday late.
        assert!(!within(t("2026-01-10T12:00:00Z"), Tz::UTC, h, d));
        assert!(!within(t("2026-01-05T09:59:59Z"), Tz::UTC, h, d));
        assert!(within(t("2026-01-05T10:00:00Z"), Tz::UTC, h, d));
        assert!(!within(t("2026-01-05T18:00:00Z"), Tz::UTC, h, d));
        // A whole day, in a zone that springs forward at midnight.
        let all = WorkingHours { start: 0, end: 24 };
        let every = WorkingDays::parse("mon-sun").unwrap();
        let now = t("2026-03-08T12:00:00Z");
        let (at, _) = slot(now, chrono_tz::America::New_York, all, every, 0.5).unwrap();
        assert!(at >= now + MIN_LEAD);
    }

    #[test]
    fn silence_is_measured_from_known_activity() {
        let now = t("2026-01-05T12:00:00Z");
        let day = Duration::hours(24);
        assert!(silent_for(t("2026-01-04T12:00:00Z"), now, day));
        assert!(!silent_for(t("2026-01-04T12:00:01Z"), now, day));
        assert!(!silent_for(DateTime::<Utc>::UNIX_EPOCH, now, day));
    }

    #[test]
    fn claims_name_their_day_and_week() {
        let c = ChannelId::parse("C1").unwrap();
        let (key, expires) = day_claim(&c, NaiveDate::from_ymd_opt(2026, 1, 5).unwrap());
        assert_eq!(key, "proactive-day#C1#2026-01-05");
        assert_eq!(expires, t("2026-01-07T00:00:00Z"));
        // Sunday and the next Monday are different ISO weeks.
        let (sun, end) = week_slot(&c, t("2026-01-11T23:00:00Z"), 1);
        let (mon, _) = week_slot(&c, t("2026-01-12T00:00:00Z"), 1);
        assert_eq!(sun, "proactive-week#C1#2026-W02#1");
        assert_eq!(end, t("2026-01-12T00:00:00Z"));
        assert_eq!(mon, "proactive-week#C1#2026-W03#1");
        assert_ne!(week_slot(&c, t("2026-01-11T23:00:00Z"), 2).0, sun);
    }

    #[test]
    fn an_opening_is_read_strictly() {
        assert_eq!(parse_opening(r#"{"open": false, "topic": ""}"#), Ok(None));
        assert_eq!(parse_opening(r#"{"open": false}"#), Ok(None));
        assert_eq!(
            parse_opening("```json\n{\"open\": true, \"topic\": \" Bob's move to Osaka \"}\n```"),
            Ok(Some("Bob's move to Osaka".to_owned()))
        );
        let long = format!(r#"{{"open": true, "topic": "{}"}}"#, "x".repeat(1000));
        assert_eq!(
            parse_opening(&long).unwrap().unwrap().chars().count(),
            MAX_TOPIC_CHARS
        );
        assert_eq!(
            parse_opening("sure, let's talk about cats"),
            Err(OpeningParseError::NoJson)
        );
        assert!(matches!(
            parse_opening("{open: true}"),
            Err(OpeningParseError::BadJson(_))
        ));
        for no in [
            r#"{"open": "true", "topic": "cats"}"#,
            r#"{"open": 1, "topic": "cats"}"#,
            r#"{"topic": "cats"}"#,
        ] {
            assert_eq!(parse_opening(no), Err(OpeningParseError::NoVerdict), "{no}");
        }
        for no in [
            r#"{"open": true}"#,
            r#"{"open": true, "topic": "  "}"#,
            r#"{"open": true, "topic": 3}"#,
        ] {
            assert_eq!(parse_opening(no), Err(OpeningParseError::NoTopic), "{no}");
        }
    }
}
