//! How long a mute lasts, out of the module root so that the English and
//! Japanese rules beneath it read a day's rest without leaning on the file
//! that declares them.

use chrono::{DateTime, Datelike, Utc, Weekday};
use chrono_tz::Tz;

/// How long "be quiet" lasts when it says no duration: an hour, long enough
/// for the conversation at hand to end, short enough that a forgotten mute
/// costs the channel little.
pub const DEFAULT_MUTE_MINUTES: u32 = 60;
/// The shortest mute: "for a minute" is a while, not sixty seconds.
pub const MIN_MUTE_MINUTES: u32 = 5;
/// The longest mute, a day: a channel that wants silence for longer sets
/// its chattiness (`channel_chattiness`).
pub const MAX_MUTE_MINUTES: u32 = 24 * 60;

/// What the bot says when a mute asked for longer than
/// [`MAX_MUTE_MINUTES`] is held to it ("be quiet for a week"): the bound,
/// so no one takes a day for a week.
pub const CAPPED_NOTICE: &str =
    "わかった、ここでは24時間静かにしてるね。それより長くは黙れないので、その後はまた話すよ。(OK: quiet here for 24 hours, the longest a mute lasts.)";

/// `minutes` held to [`MIN_MUTE_MINUTES`]..=[`MAX_MUTE_MINUTES`].
pub fn mute_minutes(minutes: u32) -> u32 {
    minutes.clamp(MIN_MUTE_MINUTES, MAX_MUTE_MINUTES)
}

/// What "today" and "until tomorrow" last: the minutes left until
/// midnight in the workspace's time zone (`timezone`), at least one; and
/// the day of the week it is there, for "until Monday" and "for the
/// weekend".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RestOfDay {
    left: u32,
    weekday: Weekday,
}

impl RestOfDay {
    /// The rest of the day at `now` in `tz`. A midnight a clock change
    /// skips is taken an hour on.
    pub fn at(now: DateTime<Utc>, tz: Tz) -> RestOfDay {
        let local = now.with_timezone(&tz);
        let midnight = local
            .date_naive()
            .succ_opt()
            .and_then(|day| day.and_hms_opt(0, 0, 0))
            .and_then(|m| {
                let hour = chrono::Duration::hours(1);
                m.and_local_timezone(tz)
                    .earliest()
                    .or_else(|| (m + hour).and_local_timezone(tz).earliest())
            });
        let minutes = midnight.map_or(i64::from(MAX_MUTE_MINUTES), |m| (m - local).num_minutes());
        RestOfDay {
            left: u32::try_from(minutes.max(1)).unwrap_or(MAX_MUTE_MINUTES),
            weekday: local.weekday(),
        }
    }

    /// `minutes` left of a Wednesday (a test's or a replay's own day).
    pub fn minutes(minutes: u32) -> RestOfDay {
        RestOfDay {
            left: minutes.max(1),
            weekday: Weekday::Wed,
        }
    }

    /// The same minutes left, of a `weekday`.
    pub fn on(self, weekday: Weekday) -> RestOfDay {
        RestOfDay { weekday, ..self }
    }

    /// The minutes left.
    pub fn left(self) -> u32 {
        self.left
    }

    /// The minutes until `day` of the next week begins ("until next
    /// Friday" on a Tuesday): [`RestOfDay::until`] a week later when `day`
    /// is still ahead in this week (weeks begin on Monday).
    pub fn until_next(self, day: Weekday) -> u32 {
        let ahead = day.num_days_from_monday() > self.weekday.num_days_from_monday();
        let week = if ahead { 7 * 24 * 60 } else { 0 };
        self.until(day).saturating_add(week)
    }

    /// The minutes until `day` begins: the rest of today and the whole
    /// days between; `day` being today's, a week on.
    pub fn until(self, day: Weekday) -> u32 {
        let ahead = (day.num_days_from_monday() + 7 - self.weekday.num_days_from_monday()) % 7;
        let between = if ahead == 0 { 6 } else { ahead - 1 };
        self.left.saturating_add(between * 24 * 60)
    }
}
