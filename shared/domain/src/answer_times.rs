//! How long a channel's people take to answer each other's questions, and
//! how many they leave: learned from the messages of the channel as they
//! come, with no LLM call and nothing for a user to set.
//!
//! Every question a person asks is folded in once its fate is known: the
//! delay until a person other than the asker spoke in its conversation
//! ([`speaks_to`]: a top-level question's thread, and the top level until
//! that thread began), or "left" when nobody did within [`HORIZON`].
//! Older questions weigh less: a weight halves every [`HALF_LIFE`]. From
//! that the bot reads how long to leave a question to the room
//! ([`AnswerTimes::wait`]): until the chance that one of them still answers
//! it is small, the chattiness level choosing how small.
//!
//! The state is a plain struct of a dozen numbers, stored with the
//! channel's record as one short line of text ([`AnswerTimes::to_text`]).

use chrono::{DateTime, Duration, Utc};

use super::ids::Ts;
use super::message::{speaks_to, thread_began, Message};
use super::rules::{is_question, talks_in_threads, Chattiness};

/// The upper edges of the delay bins, in seconds: a log-like scale from a
/// minute to [`HORIZON`].
pub const EDGES: [i64; 11] = [60, 120, 180, 300, 420, 600, 900, 1200, 1800, 2700, 3600];
/// A question nobody else spoke after within this is left unanswered.
pub const HORIZON: Duration = Duration::hours(1);
/// A question's weight halves every this long: weeks, not months.
pub const HALF_LIFE: Duration = Duration::days(14);
/// The least (decayed) number of answered questions the wait is read from;
/// below it the conversation's pace decides ([`super::rules::pace_wait`]).
pub const MIN_ANSWERED: f64 = 5.0;
/// The longest wait it learns: past it a question has waited long enough
/// that a late answer from the bot helps less than the silence costs.
pub const CEILING: Duration = Duration::minutes(20);

/// What the channel's people did with their questions.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AnswerTimes {
    /// Decayed count of questions answered, per bin of [`EDGES`].
    pub answered: [f64; EDGES.len()],
    /// Decayed count of questions nobody else answered within [`HORIZON`].
    pub left: f64,
    /// When the weights were last decayed.
    pub updated: Option<Ts>,
    /// The newest question folded in: older ones are never folded again.
    pub through: Option<Ts>,
}

/// The fate of one question.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fate {
    /// Another person spoke in its conversation after this long.
    Answered(Duration),
    /// Nobody else did within [`HORIZON`].
    Left,
}

impl AnswerTimes {
    /// The decayed number of answered questions.
    pub fn answered_weight(&self) -> f64 {
        self.answered.iter().sum()
    }

    /// The share of questions nobody else answered, if any were seen.
    pub fn left_share(&self) -> Option<f64> {
        let total = self.answered_weight() + self.left;
        (total > 0.0).then(|| self.left / total)
    }

    /// Decays every weight to `at` (an earlier `at` changes nothing).
    pub fn decay_to(&mut self, at: Ts) {
        if let Some(updated) = self.updated {
            let elapsed = at.to_datetime() - updated.to_datetime();
            if elapsed <= Duration::zero() {
                return;
            }
            let factor = 0.5f64.powf(elapsed.num_seconds() as f64 / HALF_LIFE.num_seconds() as f64);
            self.answered.iter_mut().for_each(|w| *w *= factor);
            self.left *= factor;
        }
        self.updated = Some(at);
    }

    /// Folds in the fate of the question asked at `asked`.
    pub fn observe(&mut self, asked: Ts, fate: Fate) {
        self.decay_to(asked);
        match fate {
            Fate::Answered(delay) if delay <= HORIZON => {
                let secs = delay.num_seconds().max(0);
                let bin = EDGES
                    .iter()
                    .position(|edge| secs <= *edge)
                    .unwrap_or(EDGES.len() - 1);
                self.answered[bin] += 1.0;
            }
            Fate::Answered(_) | Fate::Left => self.left += 1.0,
        }
        self.through = Some(self.through.map_or(asked, |t| t.max(asked)));
    }

    /// Folds in every question of `channel` (its recent messages, any
    /// conversation, oldest first) newer than the last one folded whose
    /// fate is known at `now`, in order, stopping at the first still open:
    /// its fate, and that of every later one, is read at a later judgment.
    /// Whether anything was folded.
    pub fn learn(&mut self, channel: &[Message], now: DateTime<Utc>) -> bool {
        let mut questions: Vec<&Message> = channel
            .iter()
            .filter(|m| !m.is_bot && self.through.is_none_or(|t| m.ts > t))
            .filter(|m| is_question(&m.text))
            .collect();
        questions.sort_by_key(|m| m.ts);
        questions.dedup_by_key(|m| m.ts);
        let in_threads = talks_in_threads(channel);
        let mut learned = false;
        for question in questions {
            let Some(fate) = fate(question, channel, in_threads, now) else {
                break;
            };
            self.observe(question.ts, fate);
            learned = true;
        }
        learned
    }

    /// How long a question waits before it is left to the room: until the
    /// chance that a person still answers a question nobody has answered
    /// yet has fallen to the level's [`still_answered`] share, never below
    /// `floor` nor past [`CEILING`]. `None` while the channel has too
    /// little history ([`MIN_ANSWERED`]) or the level never speaks
    /// unprompted.
    ///
    /// With `u` the share of questions nobody answers and `F` the
    /// distribution of the delays of those answered, that chance after `t`
    /// is `(1 - u)(1 - F(t)) / (u + (1 - u)(1 - F(t)))`: the share of the
    /// questions still open at `t` that a person will answer, the share of
    /// its answers the bot would take from someone about to give one. The
    /// wait is the least `t` where it is at most the level's share. Where
    /// people answer nearly everything, that is late (the ceiling); where
    /// they leave many questions, sooner.
    pub fn wait(&self, level: Chattiness, floor: Duration, now: Ts) -> Option<Duration> {
        let share = still_answered(level)?;
        // Weighed as of now: a channel busy long ago and quiet since has
        // little history left.
        let mut current = self.clone();
        current.decay_to(now);
        let answered = current.answered_weight();
        if answered < MIN_ANSWERED {
            return None;
        }
        // (1 - u)(1 - F) <= s (u + (1 - u)(1 - F)), with u = L / (A + L):
        // 1 - F <= s L / ((1 - s) A).
        let target = 1.0 - share * current.left / ((1.0 - share) * answered);
        let wait = if target <= 0.0 {
            Duration::zero()
        } else {
            current.delay_quantile(target)
        };
        Some(wait.max(floor).min(CEILING.max(floor)))
    }

    /// The delay by which a share `q` (0 to 1) of the answers had come,
    /// read linearly within its bin.
    fn delay_quantile(&self, q: f64) -> Duration {
        let total = self.answered_weight();
        let want = q.clamp(0.0, 1.0) * total;
        let mut below = 0.0;
        let mut lower = 0;
        for (weight, edge) in self.answered.iter().zip(EDGES) {
            if below + weight >= want && *weight > 0.0 {
                let within = (want - below) / weight;
                let secs = lower as f64 + within * (edge - lower) as f64;
                return Duration::seconds(secs.round() as i64);
            }
            below += weight;
            lower = edge;
        }
        HORIZON
    }

    /// The state as one line: `a1 THROUGH UPDATED LEFT W1 ... W11`, the
    /// times as Slack timestamps (`-` for none), the weights to 3 places.
    pub fn to_text(&self) -> String {
        let ts = |t: Option<Ts>| t.map_or_else(|| "-".to_owned(), |t| t.to_string());
        let mut out = format!(
            "a1 {} {} {:.3}",
            ts(self.through),
            ts(self.updated),
            self.left
        );
        for w in &self.answered {
            out.push_str(&format!(" {w:.3}"));
        }
        out
    }

    /// Reads [`AnswerTimes::to_text`]'s line; `None` for anything else
    /// (a record of another version starts learning again).
    pub fn parse(text: &str) -> Option<AnswerTimes> {
        let mut words = text.split_whitespace();
        if words.next()? != "a1" {
            return None;
        }
        let ts = |w: &str| -> Option<Option<Ts>> {
            if w == "-" {
                Some(None)
            } else {
                Ts::parse(w).ok().map(Some)
            }
        };
        let weight = |w: &str| w.parse::<f64>().ok().filter(|w| w.is_finite() && *w >= 0.0);
        let through = ts(words.next()?)?;
        let updated = ts(words.next()?)?;
        let left = weight(words.next()?)?;
        let mut answered = [0.0; EDGES.len()];
        for slot in &mut answered {
            *slot = weight(words.next()?)?;
        }
        words.next().is_none().then_some(AnswerTimes {
            answered,
            left,
            updated,
            through,
        })
    }
}

/// The share of the questions still open that a person would yet answer
/// which the bot accepts to take from them, by level: the quieter, the
/// longer it waits. Tuned on both dev corpora together with `myao eval`
/// (docs/deciding.md, "When it speaks").
pub fn still_answered(level: Chattiness) -> Option<f64> {
    match level {
        Chattiness::MentionsOnly => None,
        Chattiness::Quiet => Some(0.15),
        Chattiness::Normal => Some(0.30),
        Chattiness::Chatty => Some(0.50),
    }
}

/// The fate of `question` among `channel`'s messages at `now`: the delay
/// to the first message of another person in its conversation
/// ([`speaks_to`]: for a top-level question, its thread, and, where the
/// channel's people do not talk in threads (`in_threads`), the top level
/// until the thread began), or left after [`HORIZON`]; `None` while it is
/// still open.
pub fn fate(
    question: &Message,
    channel: &[Message],
    in_threads: bool,
    now: DateTime<Utc>,
) -> Option<Fate> {
    let began = thread_began(question, channel, in_threads);
    let first = channel
        .iter()
        .filter(|m| m.ts > question.ts && !m.is_bot && m.user != question.user)
        .filter(|m| speaks_to(question, m.thread_ts, m.ts, began))
        .map(|m| m.ts)
        .min();
    let asked = question.ts.to_datetime();
    match first {
        Some(ts) if ts.to_datetime() - asked <= HORIZON => {
            Some(Fate::Answered(ts.to_datetime() - asked))
        }
        _ if now - asked >= HORIZON => Some(Fate::Left),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{ChannelId, UserId};

    const T0: i64 = 1_767_603_600;

    fn ts(secs: i64) -> Ts {
        Ts::parse(&format!("{}.000100", T0 + secs)).unwrap()
    }

    fn said(user: &str, secs: i64, thread: Option<i64>, text: &str) -> Message {
        Message::new(
            ChannelId::parse("C1").unwrap(),
            UserId::parse(user).unwrap(),
            text,
            ts(secs),
            thread.map(ts),
            false,
        )
    }

    /// `n` questions asked at once, each answered after `delay` seconds.
    fn answered_after(delay: i64, n: i64) -> AnswerTimes {
        let mut times = AnswerTimes::default();
        for _ in 0..n {
            times.observe(ts(0), Fate::Answered(Duration::seconds(delay)));
        }
        times
    }

    #[test]
    fn a_question_folds_in_its_delay_or_left_and_only_once() {
        let channel = [
            said("U1", 0, None, "how do I mount a usb disk?"),
            said("U2", 400, Some(0), "use udisksctl"),
            said("U3", 500, None, "is the build green today?"),
        ];
        let mut times = AnswerTimes::default();
        // At 600 s the second question is still open: only the first is folded.
        assert!(times.learn(&channel, ts(600).to_datetime()));
        assert_eq!(times.answered[4], 1.0, "400 s is in the 300-420 s bin");
        assert_eq!(times.left, 0.0);
        assert_eq!(times.through, Some(ts(0)));
        // Nothing new: nothing folded again.
        assert!(!times.learn(&channel, ts(700).to_datetime()));
        // An hour later the second is left unanswered.
        assert!(times.learn(&channel, ts(500 + 3600).to_datetime()));
        assert!((times.left - 1.0).abs() < 1e-6, "{times:?}");
        assert_eq!(times.through, Some(ts(500)));
    }

    #[test]
    fn the_asker_and_bots_do_not_answer_a_question() {
        let mut bot = said("UBOT", 100, Some(0), "try this");
        bot.is_bot = true;
        let channel = [
            said("U1", 0, None, "how do I mount a usb disk?"),
            bot,
            said("U1", 200, Some(0), "still stuck"),
        ];
        assert_eq!(
            fate(&channel[0], &channel, false, ts(300).to_datetime()),
            None
        );
        assert_eq!(
            fate(&channel[0], &channel, false, ts(3600).to_datetime()),
            Some(Fate::Left)
        );
    }

    #[test]
    fn once_a_top_level_question_has_a_thread_a_new_top_level_message_is_no_answer() {
        let channel = [
            said("U1", 0, None, "how do I mount a usb disk?"),
            said("U1", 60, Some(0), "it is formatted as exfat"),
            said("U2", 120, None, "anyone going to the meetup?"),
            said("U3", 900, Some(0), "install exfat-fuse"),
        ];
        assert_eq!(
            fate(&channel[0], &channel, false, ts(3600).to_datetime()),
            Some(Fate::Answered(Duration::seconds(900)))
        );
        // With no thread yet, the top level is the conversation.
        let flat = [
            said("U1", 0, None, "how do I mount a usb disk?"),
            said("U2", 120, None, "use the disks app"),
        ];
        assert_eq!(
            fate(&flat[0], &flat, false, ts(3600).to_datetime()),
            Some(Fate::Answered(Duration::seconds(120)))
        );
        assert_eq!(thread_began(&channel[0], &channel, false), Some(ts(60)));
        assert_eq!(thread_began(&channel[1], &channel, false), None);
        // The bot's reply in the thread does not move the conversation: a
        // person's top-level answer after it is still an answer.
        let mut bot = said("UBOT", 60, Some(0), "try the disks app");
        bot.is_bot = true;
        let with_bot = [
            flat[0].clone(),
            bot,
            said("U2", 120, None, "use the disks app"),
        ];
        assert_eq!(thread_began(&with_bot[0], &with_bot, false), None);
        assert_eq!(
            fate(&with_bot[0], &with_bot, false, ts(3600).to_datetime()),
            Some(Fate::Answered(Duration::seconds(120)))
        );
    }

    #[test]
    fn where_people_talk_in_threads_a_new_top_level_message_answers_no_question() {
        let q = said("U1", 0, None, "is there a command to list the chains?");
        let channel = [
            q.clone(),
            said("U2", 60, None, "who broke the build?"),
            said("U3", 90, Some(60), "not me"),
        ];
        // Threads are the habit: the stranger's new conversation is no
        // answer, and the question is left after the horizon.
        assert_eq!(thread_began(&q, &channel, true), Some(q.ts));
        assert_eq!(fate(&q, &channel, true, ts(600).to_datetime()), None);
        assert_eq!(
            fate(&q, &channel, true, ts(3600).to_datetime()),
            Some(Fate::Left)
        );
        // At the top level, the next person's message answers it.
        assert_eq!(
            fate(&q, &channel, false, ts(3600).to_datetime()),
            Some(Fate::Answered(Duration::seconds(60)))
        );
        // A reply in its own thread answers it either way.
        let answered = [q.clone(), said("U2", 300, Some(0), "iptables -L")];
        assert_eq!(
            fate(&q, &answered, true, ts(3600).to_datetime()),
            Some(Fate::Answered(Duration::seconds(300)))
        );
    }

    #[test]
    fn weights_halve_every_half_life() {
        let mut times = answered_after(60, 4);
        let later = Ts::from_datetime(ts(0).to_datetime() + HALF_LIFE);
        times.decay_to(later);
        assert!((times.answered_weight() - 2.0).abs() < 1e-9, "{times:?}");
        // Time going backwards decays nothing.
        times.decay_to(ts(0));
        assert!((times.answered_weight() - 2.0).abs() < 1e-9);
    }

    #[test]
    fn history_long_past_weighs_little() {
        let floor = Duration::seconds(300);
        let times = answered_after(600, 8);
        assert!(times.wait(Chattiness::Normal, floor, ts(0)).is_some());
        // Eight answers two half-lives ago weigh two: too little now.
        let later = Ts::from_datetime(ts(0).to_datetime() + HALF_LIFE * 2);
        assert_eq!(times.wait(Chattiness::Normal, floor, later), None);
    }

    #[test]
    fn too_little_history_falls_back_and_mentions_only_never_waits() {
        let floor = Duration::seconds(300);
        assert_eq!(
            answered_after(600, 4).wait(Chattiness::Normal, floor, ts(0)),
            None
        );
        assert!(answered_after(600, 5)
            .wait(Chattiness::Normal, floor, ts(0))
            .is_some());
        assert_eq!(
            answered_after(600, 50).wait(Chattiness::MentionsOnly, floor, ts(0)),
            None
        );
    }

    #[test]
    fn a_slow_channel_waits_longer_than_a_fast_one_within_the_bounds() {
        let floor = Duration::seconds(120);
        let slow = answered_after(1150, 20)
            .wait(Chattiness::Normal, floor, ts(0))
            .unwrap();
        let fast = answered_after(110, 20)
            .wait(Chattiness::Normal, floor, ts(0))
            .unwrap();
        assert!(slow > fast, "{slow} vs {fast}");
        assert!(slow <= CEILING && slow >= Duration::minutes(15), "{slow}");
        assert_eq!(fast, floor, "never below the floor");
        // Answers after 50 minutes: the ceiling.
        let slowest = answered_after(3000, 20)
            .wait(Chattiness::Quiet, floor, ts(0))
            .unwrap();
        assert_eq!(slowest, CEILING);
    }

    #[test]
    fn the_levels_wait_differently_and_questions_left_shorten_the_wait() {
        let floor = Duration::zero();
        let mut times = AnswerTimes {
            left: 3.0,
            ..AnswerTimes::default()
        };
        for (i, delay) in [60, 120, 240, 400, 600, 800, 1000, 1100, 1150, 1190]
            .into_iter()
            .enumerate()
        {
            times.observe(ts(i as i64), Fate::Answered(Duration::seconds(delay)));
        }
        let quiet = times.wait(Chattiness::Quiet, floor, ts(0)).unwrap();
        let normal = times.wait(Chattiness::Normal, floor, ts(0)).unwrap();
        let chatty = times.wait(Chattiness::Chatty, floor, ts(0)).unwrap();
        assert!(
            quiet > normal && normal > chatty,
            "{quiet} {normal} {chatty}"
        );
        // Where people leave most questions, fewer of those still open are
        // answered after any wait: it waits less.
        let mut leaving = times.clone();
        leaving.left = 20.0;
        assert!(leaving.wait(Chattiness::Normal, floor, ts(0)).unwrap() < normal);
    }

    #[test]
    fn the_state_round_trips_as_one_short_line() {
        let mut times = answered_after(400, 7);
        times.observe(ts(1000), Fate::Left);
        let text = times.to_text();
        assert!(text.len() < 200, "{text}");
        let back = AnswerTimes::parse(&text).unwrap();
        assert_eq!(back.through, times.through);
        assert_eq!(back.updated, times.updated);
        assert!((back.answered_weight() - times.answered_weight()).abs() < 0.01);
        assert!((back.left - times.left).abs() < 0.01);
        for bad in [
            "",
            "a2 - - 0 0 0 0 0 0 0 0 0 0 0 0",
            "a1 - - x",
            "a1 - - 1 1",
            "a1 - - -1 0 0 0 0 0 0 0 0 0 0 0",
        ] {
            assert_eq!(AnswerTimes::parse(bad), None, "{bad}");
        }
    }
}
