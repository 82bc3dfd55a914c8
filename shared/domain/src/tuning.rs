//! How a channel's hints move the bot's readiness to speak there: bounded,
//! fading, and said in one line.
//!
//! Each hint ([`Hint`]) moves the rule stage's thresholds by a step: a
//! negative one up (it speaks less), a positive one down. The move fades
//! back to the channel's set level with a half-life of [`HALF_LIFE_HOURS`],
//! as a member's caution after a rebuke does, and it never takes the
//! thresholds past `quiet`'s or `chatty`'s: hints tune a level, they do not
//! replace the setting. A mute also keeps the bot from speaking unprompted
//! until it ends. Being called is another matter: the caller still answers
//! a mention or its name.

use chrono::{DateTime, Duration, SecondsFormat, Utc};
use serde::{Deserialize, Serialize};

use crate::hints::{mute_minutes, Hint};
use crate::rules::{Chattiness, Thresholds};

/// Score points one hint moves the thresholds: three negative hints take
/// `normal` (20, 40) to `quiet` (35, 60), three positive ones to `chatty`
/// (10, 30).
pub const STEP: f64 = 7.0;
/// The most the hints move the thresholds either way, three steps: more
/// of them only keep it there, so that a few kind words later are heard.
pub const MAX_OFFSET: f64 = 3.0 * STEP;
/// The offset halves every three days: after a week a fifth of it is left,
/// after three weeks nothing that rounds to a point.
pub const HALF_LIFE_HOURS: i64 = 72;

/// A channel's tuning by its hints, kept in its record. The default is
/// neutral: no offset, no mute.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Tuning {
    /// Score points added to both thresholds as of `updated` (positive:
    /// it speaks less), within ±[`MAX_OFFSET`].
    offset: f64,
    /// When a hint last changed `offset`.
    #[serde(skip_serializing_if = "Option::is_none")]
    updated: Option<DateTime<Utc>>,
    /// No unprompted word in the channel before this.
    #[serde(skip_serializing_if = "Option::is_none")]
    muted_until: Option<DateTime<Utc>>,
}

/// The step of `hint`: up (speak less) for a negative one and a mute.
fn step(hint: Hint) -> f64 {
    match hint {
        Hint::Positive => -STEP,
        Hint::Negative | Hint::Mute { .. } => STEP,
    }
}

impl Tuning {
    /// Takes in a hint given at `now`: its step ([`Tuning::step`]) and what
    /// it says of a mute ([`Tuning::hear`]).
    pub fn hint(&mut self, hint: Hint, now: DateTime<Utc>) {
        self.step(hint, now);
        self.hear(hint, now);
    }

    /// Moves the offset by a hint's step at `now`: it fades to `now`, then
    /// moves up for a negative hint or a mute, down for a positive one,
    /// held within ±[`MAX_OFFSET`].
    pub fn step(&mut self, hint: Hint, now: DateTime<Utc>) {
        let offset = self.decayed(now) + step(hint);
        self.set(offset, now);
    }

    /// What a hint at `now` says of the mute: a mute lasts at least until
    /// `now` plus its minutes (an earlier, longer mute is kept); a positive
    /// hint ("you can talk again", a 👍) ends one, whoever gave it: the
    /// channel's quiet is everyone's, not the asker's alone.
    pub fn hear(&mut self, hint: Hint, now: DateTime<Utc>) {
        match hint {
            Hint::Mute { minutes } => {
                let until = now + Duration::minutes(i64::from(mute_minutes(minutes)));
                self.muted_until = Some(self.muted_until.map_or(until, |u| u.max(until)));
            }
            Hint::Positive => {
                if self.muted(now) {
                    self.muted_until = None;
                }
            }
            Hint::Negative => {}
        }
    }

    /// Takes back one hint's step (its reaction was removed, its message
    /// deleted), as far as it is still there: the offset moves toward zero
    /// by a step at most, never past it. Withdrawing a mute also ends the
    /// mute: the bot cannot tell one mute from another, and the person took
    /// the words back.
    pub fn withdraw(&mut self, hint: Hint, now: DateTime<Utc>) {
        let current = self.decayed(now);
        let step = step(hint);
        let offset = if step > 0.0 && current > 0.0 {
            (current - step).max(0.0)
        } else if step < 0.0 && current < 0.0 {
            (current - step).min(0.0)
        } else {
            current
        };
        self.set(offset, now);
        if matches!(hint, Hint::Mute { .. }) {
            self.muted_until = None;
        }
    }

    /// The thresholds of the channel's set level (`set`: its level's, or
    /// `rule_thresholds`) moved by the offset at `now`, each held between
    /// `chatty`'s and `quiet`'s; a set threshold already beyond one is not
    /// moved further that way.
    pub fn thresholds(&self, set: Thresholds, now: DateTime<Utc>) -> Thresholds {
        let (Some(quiet), Some(chatty)) = (
            Chattiness::Quiet.thresholds(),
            Chattiness::Chatty.thresholds(),
        ) else {
            return set;
        };
        let offset = self.offset(now);
        let moved = |set: i32, chatty: i32, quiet: i32| {
            set.saturating_add(offset)
                .clamp(set.min(chatty), set.max(quiet))
        };
        let low = moved(set.low, chatty.low, quiet.low);
        let high = moved(set.high, chatty.high, quiet.high);
        Thresholds {
            low: low.min(high),
            high,
        }
    }

    /// Whether a mute holds at `now`.
    pub fn muted(&self, now: DateTime<Utc>) -> bool {
        self.muted_until.is_some_and(|until| now < until)
    }

    /// When the mute ends, if one holds at `now`.
    pub fn muted_until(&self, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
        self.muted_until.filter(|_| self.muted(now))
    }

    /// The offset at `now`, faded and rounded to whole score points.
    pub fn offset(&self, now: DateTime<Utc>) -> i32 {
        // Within ±MAX_OFFSET, so the cast cannot overflow.
        #[allow(clippy::cast_possible_truncation)]
        let points = self.decayed(now).round() as i32;
        points
    }

    /// The tuning in one line for a log or a report, with no word of the
    /// conversation: `tuned=+14`, and `muted_until=2024-05-01T13:00:00Z`
    /// while a mute holds.
    pub fn explain(&self, now: DateTime<Utc>) -> String {
        let offset = self.offset(now);
        let mut line = if offset == 0 {
            "tuned=0".to_owned()
        } else {
            format!("tuned={offset:+}")
        };
        if let Some(until) = self.muted_until(now) {
            line.push_str(" muted_until=");
            line.push_str(&until.to_rfc3339_opts(SecondsFormat::Secs, true));
        }
        line
    }

    /// Whether the tuning does nothing at `now` (no offset left, no mute):
    /// the record may drop it.
    pub fn is_neutral(&self, now: DateTime<Utc>) -> bool {
        self.offset(now) == 0 && !self.muted(now)
    }

    /// The offset faded from `updated` to `now`; a `now` before `updated`
    /// (a late event) fades nothing.
    fn decayed(&self, now: DateTime<Utc>) -> f64 {
        let offset = if self.offset.is_finite() {
            self.offset.clamp(-MAX_OFFSET, MAX_OFFSET)
        } else {
            0.0
        };
        let Some(updated) = self.updated else {
            return offset;
        };
        let seconds = (now - updated).num_seconds().max(0);
        // Seconds since a hint: far below 2^52, exact as f64.
        #[allow(clippy::cast_precision_loss)]
        let half_lives = seconds as f64 / (HALF_LIFE_HOURS * 3_600) as f64;
        offset * 0.5_f64.powf(half_lives)
    }

    fn set(&mut self, offset: f64, now: DateTime<Utc>) {
        self.offset = offset.clamp(-MAX_OFFSET, MAX_OFFSET);
        self.updated = Some(self.updated.map_or(now, |u| u.max(now)));
        if self.muted_until.is_some_and(|until| until <= now) {
            self.muted_until = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn at(hours: i64) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2024, 5, 1, 12, 0, 0).unwrap() + Duration::hours(hours)
    }

    fn level(c: Chattiness) -> Thresholds {
        c.thresholds().unwrap()
    }

    fn tuned(hints: &[Hint], now: DateTime<Utc>) -> Tuning {
        let mut t = Tuning::default();
        for h in hints {
            t.hint(*h, now);
        }
        t
    }

    const NEG: Hint = Hint::Negative;
    const POS: Hint = Hint::Positive;

    #[test]
    fn three_negative_hints_reach_quiet_and_three_positive_ones_chatty() {
        let normal = level(Chattiness::Normal);
        let t = tuned(&[NEG, NEG, NEG], at(0));
        assert_eq!(t.thresholds(normal, at(0)), level(Chattiness::Quiet));
        assert_eq!(t.offset(at(0)), 21);
        let t = tuned(&[POS, POS, POS], at(0));
        assert_eq!(t.thresholds(normal, at(0)), level(Chattiness::Chatty));
        assert_eq!(t.offset(at(0)), -21);
        // One hint is a step, not the whole way.
        let t = tuned(&[NEG], at(0));
        assert_eq!(
            t.thresholds(normal, at(0)),
            Thresholds { low: 27, high: 47 }
        );
    }

    #[test]
    fn the_thresholds_never_pass_quiets_or_chattys_from_any_level() {
        let quiet = level(Chattiness::Quiet);
        let chatty = level(Chattiness::Chatty);
        let sets = [
            quiet,
            level(Chattiness::Normal),
            chatty,
            Thresholds { low: 30, high: 30 },
            Thresholds { low: 15, high: 55 },
        ];
        for hints in [[NEG; 10], [POS; 10]] {
            let t = tuned(&hints, at(0));
            assert_eq!(t.offset(at(0)).abs(), 21, "held to three steps");
            for set in sets {
                let moved = t.thresholds(set, at(0));
                assert!(moved.low <= moved.high, "{set:?} -> {moved:?}");
                assert!((chatty.low..=quiet.low).contains(&moved.low), "{moved:?}");
                assert!(
                    (chatty.high..=quiet.high).contains(&moved.high),
                    "{moved:?}"
                );
            }
        }
    }

    #[test]
    fn rule_thresholds_beyond_the_levels_are_not_moved_further() {
        let wide = Thresholds { low: 0, high: 100 };
        assert_eq!(Tuning::default().thresholds(wide, at(0)), wide);
        // Quieter moves the low one up, toward quiet's, and leaves the high.
        let t = tuned(&[NEG, NEG], at(0));
        assert_eq!(t.thresholds(wide, at(0)), Thresholds { low: 14, high: 100 });
        let t = tuned(&[POS, POS], at(0));
        assert_eq!(t.thresholds(wide, at(0)), Thresholds { low: 0, high: 86 });
    }

    #[test]
    fn the_offset_drifts_back_to_the_set_level_over_days() {
        let t = tuned(&[NEG, NEG], at(0));
        assert_eq!(t.offset(at(0)), 14);
        assert_eq!(t.offset(at(HALF_LIFE_HOURS)), 7, "half after a half-life");
        assert_eq!(t.offset(at(2 * HALF_LIFE_HOURS)), 4);
        assert_eq!(t.offset(at(7 * 24)), 3, "a fifth after a week");
        let full = tuned(&[NEG; 3], at(0));
        assert_eq!(full.offset(at(21 * 24)), 0);
        assert!(full.is_neutral(at(21 * 24)));
        let normal = level(Chattiness::Normal);
        assert_eq!(full.thresholds(normal, at(21 * 24)), normal);
        // A later hint starts from what is left.
        let mut t = t;
        t.hint(POS, at(HALF_LIFE_HOURS));
        assert_eq!(t.offset(at(HALF_LIFE_HOURS)), 0);
        // A clock behind the last hint fades nothing and grows nothing.
        let t = tuned(&[NEG], at(10));
        assert_eq!(t.offset(at(0)), 7);
    }

    #[test]
    fn a_mute_holds_for_its_minutes_and_counts_as_a_negative_hint() {
        let mut t = Tuning::default();
        t.hint(Hint::Mute { minutes: 90 }, at(0));
        assert!(t.muted(at(0)));
        assert!(t.muted(at(1)));
        assert!(!t.muted(at(0) + Duration::minutes(90)));
        assert_eq!(t.offset(at(0)), 7);
        assert_eq!(
            t.explain(at(1)),
            "tuned=+7 muted_until=2024-05-01T13:30:00Z"
        );
        assert_eq!(t.explain(at(2)), "tuned=+7");
        // A shorter mute does not cut a longer one; the minutes are bounded.
        t.hint(Hint::Mute { minutes: 10 }, at(0));
        assert_eq!(t.muted_until(at(0)), Some(at(0) + Duration::minutes(90)));
        let mut t = Tuning::default();
        t.hint(Hint::Mute { minutes: 0 }, at(0));
        assert!(!t.muted(at(0) + Duration::minutes(5)));
        t.hint(Hint::Mute { minutes: u32::MAX }, at(0));
        assert!(t.muted(at(23)));
        assert!(!t.muted(at(24)));
    }

    #[test]
    fn a_positive_hint_ends_a_mute_and_a_negative_one_does_not() {
        let mut t = Tuning::default();
        t.hint(Hint::Mute { minutes: 120 }, at(0));
        t.hint(NEG, at(1));
        assert!(t.muted(at(1)), "a negative hint keeps it");
        t.hint(POS, at(1));
        assert!(!t.muted(at(1)));
        assert_eq!(t.muted_until(at(1)), None);
        // A positive hint before a mute does not end it.
        let mut t = Tuning::default();
        t.hint(POS, at(0));
        t.hint(Hint::Mute { minutes: 120 }, at(1));
        assert!(t.muted(at(2)));
    }

    #[test]
    fn a_withdrawn_hint_takes_back_its_step_never_past_zero() {
        let mut t = tuned(&[NEG, NEG], at(0));
        t.withdraw(NEG, at(0));
        assert_eq!(t.offset(at(0)), 7);
        t.withdraw(NEG, at(0));
        t.withdraw(NEG, at(0));
        assert_eq!(t.offset(at(0)), 0, "not past zero");
        // Faded to 4, a withdrawn negative leaves 0, not -3.
        let mut t = tuned(&[NEG], at(0));
        t.withdraw(NEG, at(2 * HALF_LIFE_HOURS));
        assert_eq!(t.offset(at(2 * HALF_LIFE_HOURS)), 0);
        // A positive one withdrawn from a negative offset changes nothing.
        let mut t = tuned(&[NEG], at(0));
        t.withdraw(POS, at(0));
        assert_eq!(t.offset(at(0)), 7);
        t.hint(POS, at(0));
        t.hint(POS, at(0));
        t.withdraw(POS, at(0));
        assert_eq!(t.offset(at(0)), 0);
        // A withdrawn mute ends it.
        let mut t = Tuning::default();
        t.hint(Hint::Mute { minutes: 60 }, at(0));
        t.withdraw(Hint::Mute { minutes: 60 }, at(0));
        assert!(!t.muted(at(0)));
        assert!(t.is_neutral(at(0)));
    }

    #[test]
    fn the_same_hints_at_the_same_times_give_the_same_tuning() {
        let play = || {
            let mut t = Tuning::default();
            for (i, h) in [NEG, POS, NEG, Hint::Mute { minutes: 30 }, POS, NEG]
                .into_iter()
                .enumerate()
            {
                t.hint(h, at(i64::try_from(i).unwrap() * 7));
            }
            t
        };
        assert_eq!(play(), play());
        assert_eq!(play().explain(at(40)), play().explain(at(40)));
    }

    #[test]
    fn it_keeps_in_a_record_as_json_and_starts_neutral() {
        let t = tuned(&[NEG, Hint::Mute { minutes: 60 }], at(0));
        let json = serde_json::to_string(&t).unwrap();
        let back: Tuning = serde_json::from_str(&json).unwrap();
        assert_eq!(back, t);
        let empty: Tuning = serde_json::from_str("{}").unwrap();
        assert_eq!(empty, Tuning::default());
        assert!(empty.is_neutral(at(0)));
        assert_eq!(empty.explain(at(0)), "tuned=0");
        assert_eq!(
            serde_json::to_string(&Tuning::default()).unwrap(),
            r#"{"offset":0.0}"#
        );
    }
}
