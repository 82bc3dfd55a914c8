//! The rule stage: before any LLM judgment, a score per conversation from
//! signals in what was said, and a decision from the score. Below the low
//! threshold the bot stays silent without asking the LLM; at or above the
//! high one it answers without asking; in between the LLM judges as before.
//!
//! The signals follow the Discord design's rule-based judge (REFERENCE.md);
//! their points were tuned with `myao eval` on real multi-party chat
//! (docs/deciding.md, "When it speaks"): a question left hanging weighs
//! more (+60), the minuses less, since the over-talking guards (cooldown, hourly cap,
//! backoff) now do the work the design's larger minuses did. Three
//! departures in kind:
//! - "engaged" (+40) and the bot's name (+80) are not scored: a reply in the
//!   bot's thread within its engagement window, a name call and a direct
//!   message are addressed to the bot and answered like mentions, before
//!   any judgment ([`super::routing::addressed`]);
//! - the cooldown (-50 within 120 s of the bot's last reply) is a gate, not a
//!   score: no unprompted reply at all within `cooldown_seconds`;
//! - "ends with ?" (+20) becomes a question nobody has answered yet: a
//!   question someone already answered does not call for the bot, and one
//!   left hanging is the clearest moment for a member to speak up.
//!
//! A question is left to the room only when the room had its time: its
//! conversation's own pace ([`pace`]) sets how long people there take to
//! answer each other, and a question inside a live exchange of two or three
//! people, answering the other's last message, is theirs until it stalls
//! ([`their_exchange`]). Until then the question weighs nothing
//! ([`Signal::NotLeftYet`], [`Signal::TheirExchange`]) and the judgment
//! runs again when it would ([`Score::again`]). A question its asker
//! answered himself, or followed with his own thinking, waits for nobody
//! ([`moved_on`]); a top-level question with a thread is judged in that
//! thread, not at the top level too.

use chrono::{DateTime, Duration, Utc};

use super::ids::{Ts, UserId};
use super::message::Message;
use super::reply::{closing, Closing};

mod questions;
mod scene;

pub use questions::{
    asks_again, is_question, moved_on, to_the_room, waits_on_its_own, QUESTION_WAITS_PER_HOUR,
};
use questions::{person, unanswered_question};
pub use scene::{talks_in_threads, Scene, QUESTION_MAX_AGE, THREAD_HABIT_REPLIES};

/// How readily the bot speaks unprompted: the thresholds of the rule stage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum Chattiness {
    /// Only when addressed: no judgment at all.
    MentionsOnly,
    Quiet,
    #[default]
    Normal,
    Chatty,
}

impl Chattiness {
    /// All levels, least chatty first.
    pub const ALL: [Chattiness; 4] = [
        Chattiness::MentionsOnly,
        Chattiness::Quiet,
        Chattiness::Normal,
        Chattiness::Chatty,
    ];

    /// The level's name in settings.
    pub fn name(self) -> &'static str {
        match self {
            Chattiness::MentionsOnly => "mentions_only",
            Chattiness::Quiet => "quiet",
            Chattiness::Normal => "normal",
            Chattiness::Chatty => "chatty",
        }
    }

    /// The level named `name`, if any.
    pub fn parse(name: &str) -> Option<Chattiness> {
        Chattiness::ALL
            .into_iter()
            .find(|c| c.name() == name.trim())
    }

    /// The scores that split silence, the LLM's judgment and an answer:
    /// `None` at `mentions_only`, where nothing unprompted is judged.
    pub fn thresholds(self) -> Option<Thresholds> {
        let (low, high) = match self {
            Chattiness::MentionsOnly => return None,
            Chattiness::Quiet => (35, 60),
            Chattiness::Normal => (20, 40),
            Chattiness::Chatty => (10, 30),
        };
        Some(Thresholds { low, high })
    }
}

/// Written by its name (`quiet`, `normal`, ...), as in the settings.
impl serde::Serialize for Chattiness {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

impl<'de> serde::Deserialize<'de> for Chattiness {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        Chattiness::parse(&name)
            .ok_or_else(|| serde::de::Error::custom(format!("no level is named {name:?}")))
    }
}

impl std::fmt::Display for Chattiness {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Scores below `low` are silent; scores at or above `high` are answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Thresholds {
    pub low: i32,
    pub high: i32,
}

/// Something in a conversation that makes speaking more or less welcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// A person asked a question (a "?" and at least three words) that
    /// nobody else has answered.
    UnansweredQuestion,
    /// The latest message came after a long silence in the channel:
    /// somebody is looking for company.
    AfterSilence,
    /// A word of the persona's interests (`interest_keywords`).
    Interest,
    /// Only two people are talking: a dialogue, not an open room.
    TwoPeople,
    /// Many messages of the conversation in a short time: it is lively
    /// without the bot.
    Burst,
    /// The bot spoke in this channel not long ago.
    BotRecent,
    /// The waiting question is younger than its conversation's pace lets a
    /// person take to answer ([`pace_wait`]): not left to the room yet.
    NotLeftYet,
    /// The waiting question answers the other person's last message in a
    /// live exchange of two or three people and is not put to the room,
    /// and it has not stalled: it is theirs.
    TheirExchange,
}

impl Signal {
    /// The signal's points.
    pub fn points(self) -> i32 {
        match self {
            Signal::UnansweredQuestion => 60,
            Signal::AfterSilence => 10,
            Signal::Interest => 15,
            Signal::TwoPeople => -10,
            Signal::Burst => -5,
            Signal::BotRecent => -10,
            Signal::NotLeftYet => -60,
            Signal::TheirExchange => -60,
        }
    }

    /// Every signal (a test holds it to the enum).
    pub const ALL: [Signal; 8] = [
        Signal::UnansweredQuestion,
        Signal::AfterSilence,
        Signal::Interest,
        Signal::TwoPeople,
        Signal::Burst,
        Signal::BotRecent,
        Signal::NotLeftYet,
        Signal::TheirExchange,
    ];

    /// The signal named `name`, if this version has one.
    pub fn named(name: &str) -> Option<Signal> {
        Signal::ALL.into_iter().find(|s| s.name() == name)
    }

    /// The signal's name, for logs and the local timeline.
    pub fn name(self) -> &'static str {
        match self {
            Signal::UnansweredQuestion => "unanswered_question",
            Signal::AfterSilence => "after_silence",
            Signal::Interest => "interest",
            Signal::TwoPeople => "two_people",
            Signal::Burst => "burst",
            Signal::BotRecent => "bot_recent",
            Signal::NotLeftYet => "not_left_yet",
            Signal::TheirExchange => "their_exchange",
        }
    }
}

/// A silence in the channel at least this long before a conversation opens
/// makes [`Signal::AfterSilence`].
pub const SILENCE: Duration = Duration::minutes(10);
/// [`Signal::Burst`]: this many messages within [`BURST_WINDOW`].
pub const BURST_MESSAGES: usize = 10;
pub const BURST_WINDOW: Duration = Duration::seconds(60);
/// [`Signal::BotRecent`]: the bot spoke in the channel within this.
pub const BOT_RECENT: Duration = Duration::minutes(10);
/// [`Signal::TwoPeople`]: the last this many messages of people are of two.
pub const DIALOGUE_MESSAGES: usize = 4;
/// [`pace_wait`]: a question is left to the room after this many of its
/// conversation's usual waits for an answer...
pub const PACE_FACTOR: i32 = 3;
/// ...but never later than this after it was asked.
pub const PACE_CAP: Duration = Duration::minutes(15);
/// [`pace`]: the turns (one person's message, then another's) it is read
/// from, newest first, and the least of them it needs.
pub const PACE_TURNS: usize = 12;
pub const PACE_MIN_TURNS: usize = 2;
/// [`their_exchange`]: an exchange is live when the other person's message
/// came within this before the question (a question's own life,
/// [`QUESTION_MAX_AGE`]: a message older than that is no longer one the
/// asker is answering in a live exchange)...
pub const EXCHANGE_LIVE: Duration = QUESTION_MAX_AGE;
/// ...and of at most this many people, among its last
/// [`EXCHANGE_MESSAGES`] messages of people.
pub const EXCHANGE_PEOPLE: usize = 3;
pub const EXCHANGE_MESSAGES: usize = 6;
/// An exchange has stalled when the question waited this many of its
/// usual waits, and at least [`STALL_MIN`].
pub const STALL_FACTOR: i32 = 4;
pub const STALL_MIN: Duration = Duration::minutes(20);

/// The rule stage's score and the signals behind it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Score {
    pub total: i32,
    pub signals: Vec<Signal>,
    /// The message the bot would answer: the latest unanswered question, or
    /// else the latest person's message.
    pub answers: Option<Ts>,
    /// When the waiting question would be left to the room (its pace's
    /// wait is over, or its exchange would have stalled), if it is not yet:
    /// the conversation is judged again then, unless a person speaks first.
    pub again: Option<DateTime<Utc>>,
    /// The learned wait a waiting question was held to ([`Scene::learned_wait`]),
    /// when one was: else its conversation's pace decided.
    pub wait: Option<Duration>,
}

impl Score {
    /// The signals as `name(+points)` words, for logs and the timeline.
    pub fn explain(&self) -> String {
        self.signals
            .iter()
            .map(|s| format!("{}({:+})", s.name(), s.points()))
            .chain(
                self.wait
                    .map(|w| format!("learned_wait={}s", w.num_seconds())),
            )
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// What the rule stage decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Below the low threshold: silent, no LLM call.
    Silent,
    /// In the ambiguous band: the LLM judges.
    Ask,
    /// At or above the high threshold: answer without asking.
    Respond,
    /// A plain thanks or greeting to the bot ([`thanks_to_bot`]): an emoji
    /// reaction, whatever the score, without asking.
    React,
}

impl Decision {
    pub fn name(self) -> &'static str {
        match self {
            Decision::Silent => "silent",
            Decision::Ask => "ask",
            Decision::Respond => "respond",
            Decision::React => "react",
        }
    }
}

/// The decision `score` makes under `thresholds`.
pub fn decide(score: &Score, thresholds: Thresholds) -> Decision {
    if score.total < thresholds.low {
        Decision::Silent
    } else if score.total >= thresholds.high {
        Decision::Respond
    } else {
        Decision::Ask
    }
}

/// The newest person's message when it only thanks or greets the bot: it
/// follows the bot's own message in the conversation, with nothing but the
/// same person's thanks or greetings in between. It earns a reaction, not
/// a reply. `names` are the bot's names, which such a message may hold.
pub fn thanks_to_bot(scene: &Scene<'_>, names: &[&str]) -> Option<(Closing, Ts)> {
    let mut messages = scene.conversation.iter().rev();
    let newest = messages.next().filter(|m| person(m))?;
    let kind = closing(&newest.text, names)?;
    for m in messages {
        if m.user == *scene.bot {
            return Some((kind, newest.ts));
        }
        if m.user != newest.user || closing(&m.text, names).is_none() {
            return None;
        }
    }
    None
}

/// The conversation's pace: the median wait, over its latest turns (a
/// person's message, then another person's), from one to the next; from
/// the channel's conversations when it has too few turns of its own.
/// `None` when neither has [`PACE_MIN_TURNS`].
pub fn pace(conversation: &[Message], channel: &[Message]) -> Option<Duration> {
    fn turns<'a>(messages: impl Iterator<Item = &'a Message>) -> Vec<Duration> {
        let people: Vec<&Message> = messages.filter(|m| person(m)).collect();
        people
            .windows(2)
            .filter(|w| w[0].user != w[1].user)
            .map(|w| w[1].ts.to_datetime() - w[0].ts.to_datetime())
            .collect()
    }
    let mut gaps = turns(conversation.iter());
    if gaps.len() < PACE_MIN_TURNS {
        // The channel's conversations, each on its own: the top level and
        // every thread.
        let mut threads: Vec<Option<Ts>> = channel.iter().map(|m| m.thread_ts).collect();
        threads.sort();
        threads.dedup();
        gaps = threads
            .into_iter()
            .flat_map(|t| turns(channel.iter().filter(move |m| m.thread_ts == t)))
            .collect();
    }
    if gaps.len() < PACE_MIN_TURNS {
        return None;
    }
    let start = gaps.len().saturating_sub(PACE_TURNS);
    let mut latest = gaps.split_off(start);
    latest.sort();
    Some(latest[latest.len() / 2])
}

/// How long a question waits before it is left to the room:
/// [`PACE_FACTOR`] times the pace, at most [`PACE_CAP`]; nothing beyond the
/// judgment's own wait (`min_wait_seconds`) without a pace.
pub fn pace_wait(pace: Option<Duration>) -> Duration {
    pace.map_or(Duration::zero(), |p| (p * PACE_FACTOR).min(PACE_CAP))
}

/// When a question inside an exchange stalls: [`STALL_FACTOR`] times the
/// pace, at least [`STALL_MIN`].
pub fn stall_wait(pace: Option<Duration>) -> Duration {
    pace.map_or(STALL_MIN, |p| (p * STALL_FACTOR).max(STALL_MIN))
}

/// Whether `question` belongs to a live exchange of two or three people in
/// `conversation`: it answers another person's message (that person's last
/// message before it, within [`EXCHANGE_LIVE`]; the asker may have said
/// more in between), whose author is already
/// talking with the asker (the asker spoke before in the conversation, or
/// replies in a thread that person opened), among at most
/// [`EXCHANGE_PEOPLE`] people, and it is not put to the room.
pub fn their_exchange(conversation: &[Message], question: &Message) -> bool {
    if to_the_room(&question.text) {
        return false;
    }
    let before: Vec<&Message> = conversation
        .iter()
        .filter(|m| person(m) && m.ts < question.ts)
        .collect();
    // The other person's last message: the asker may have said more since.
    let Some(other) = before.iter().rev().find(|m| m.user != question.user) else {
        return false;
    };
    if question.ts.to_datetime() - other.ts.to_datetime() > EXCHANGE_LIVE {
        return false;
    }
    let their_thread = question.thread_ts.is_some()
        && conversation
            .first()
            .is_some_and(|root| root.thread_ts.is_none() && root.user == other.user);
    let talking = before.iter().any(|m| m.user == question.user);
    let mut people: Vec<&UserId> = before
        .iter()
        .rev()
        .take(EXCHANGE_MESSAGES - 1)
        .map(|m| &m.user)
        .chain([&question.user])
        .collect();
    people.sort();
    people.dedup();
    (talking || their_thread) && people.len() <= EXCHANGE_PEOPLE
}

/// Whether a signal of the scene as a whole holds.
type SceneTest = fn(&Scene<'_>) -> bool;

/// The signals of the scene as a whole, each with its test, in the order
/// they are listed.
const SCENE_SIGNALS: [(Signal, SceneTest); 5] = [
    (Signal::AfterSilence, after_silence),
    (Signal::Interest, of_interest),
    (Signal::TwoPeople, two_people),
    (Signal::Burst, burst),
    (Signal::BotRecent, bot_recent),
];

/// Scores the scene.
pub fn score(scene: &Scene<'_>) -> Score {
    let mut signals = Vec::new();
    let question = unanswered_question(scene);
    let again = question.and_then(|q| waiting_question(scene, q, &mut signals));
    // Not past the question's age: it is no longer waiting then. So a
    // question of an exchange slow enough to stall only after that (a pace
    // of 7½ minutes or more) stays theirs: a late answer from the bot would
    // come after they had half an hour to answer each other.
    let again =
        again.filter(|at| question.is_some_and(|q| *at - q.ts.to_datetime() < QUESTION_MAX_AGE));
    signals.extend(
        SCENE_SIGNALS
            .iter()
            .filter(|(_, holds)| holds(scene))
            .map(|(signal, _)| *signal),
    );
    Score {
        total: signals.iter().map(|s| s.points()).sum(),
        answers: question.or(latest_person(scene)).map(|m| m.ts),
        signals,
        again,
        wait: question.and(scene.learned_wait),
    }
}

/// The signals of an unanswered question `q`, pushed onto `signals`, and
/// when to judge again while it is not left to the room yet or is still
/// theirs.
fn waiting_question(
    scene: &Scene<'_>,
    q: &Message,
    signals: &mut Vec<Signal>,
) -> Option<DateTime<Utc>> {
    signals.push(Signal::UnansweredQuestion);
    let pace = pace(scene.conversation, scene.channel);
    let asked = first_asked(scene, q).ts.to_datetime();
    let left = asked + scene.learned_wait.unwrap_or_else(|| pace_wait(pace));
    let stalled = asked + stall_wait(pace);
    if scene.now < left {
        signals.push(Signal::NotLeftYet);
        Some(left)
    } else if scene.now < stalled && their_exchange(scene.conversation, q) {
        signals.push(Signal::TheirExchange);
        Some(stalled)
    } else {
        None
    }
}

/// The first question of the run of its asker's messages that `q` ends:
/// a question stays open while only its asker speaks (a follow-up line,
/// the code, "anyone?", another way to put it), so its wait runs from the
/// first of them, not again from each. No older than [`QUESTION_MAX_AGE`],
/// and none that someone else answered in its thread: that one was another
/// question's run.
fn first_asked<'a>(scene: &Scene<'a>, q: &'a Message) -> &'a Message {
    let oldest = scene.now - QUESTION_MAX_AGE;
    let answered_under = |m: &Message| {
        scene
            .channel
            .iter()
            .any(|r| r.thread_ts == Some(m.ts) && r.user != m.user)
    };
    scene
        .conversation
        .iter()
        .rev()
        .skip_while(|m| m.ts >= q.ts)
        .take_while(|m| {
            person(m) && m.user == q.user && m.ts.to_datetime() >= oldest && !answered_under(m)
        })
        .filter(|m| is_question(&m.text))
        .last()
        .unwrap_or(q)
}

/// The conversation's latest message of a person.
fn latest_person<'a>(scene: &Scene<'a>) -> Option<&'a Message> {
    scene.conversation.iter().rev().find(|m| person(m))
}

/// The latest message of a person came after [`SILENCE`] in the channel.
fn after_silence(scene: &Scene<'_>) -> bool {
    latest_person(scene).is_some_and(|latest| {
        let before = scene
            .channel
            .iter()
            .filter(|m| m.ts < latest.ts)
            .map(|m| m.ts)
            .max();
        before.is_none_or(|b| latest.ts.to_datetime() - b.to_datetime() >= SILENCE)
    })
}

/// One of the persona's interests is in the last three messages of people.
fn of_interest(scene: &Scene<'_>) -> bool {
    let recent_text = scene
        .conversation
        .iter()
        .rev()
        .filter(|m| person(m))
        .take(3)
        .map(|m| m.text.to_lowercase())
        .collect::<Vec<_>>();
    scene
        .interests
        .iter()
        .filter(|k| !k.trim().is_empty())
        .any(|k| recent_text.iter().any(|t| t.contains(k.trim())))
}

/// A dialogue: the last few messages of people are of exactly two.
fn two_people(scene: &Scene<'_>) -> bool {
    let mut people: Vec<&UserId> = scene
        .conversation
        .iter()
        .rev()
        .filter(|m| person(m))
        .take(DIALOGUE_MESSAGES)
        .map(|m| &m.user)
        .collect();
    let enough = people.len() >= DIALOGUE_MESSAGES;
    people.sort();
    people.dedup();
    enough && people.len() == 2
}

/// The busiest minute of the conversation's last ten: a lively exchange
/// that does without the bot (the channel's other conversations are
/// theirs).
fn burst(scene: &Scene<'_>) -> bool {
    let since = scene.now - SILENCE;
    let talk = scene.conversation;
    let busiest = (0..talk.len())
        .filter(|&i| talk[i].ts.to_datetime() >= since)
        .map(|i| {
            let end = talk[i].ts.to_datetime() + BURST_WINDOW;
            talk[i..]
                .iter()
                .take_while(|n| n.ts.to_datetime() <= end)
                .count()
        })
        .max()
        .unwrap_or(0);
    busiest >= BURST_MESSAGES && scene.conversation.len() > 1
}

/// The bot spoke in the channel within [`BOT_RECENT`].
fn bot_recent(scene: &Scene<'_>) -> bool {
    scene
        .channel
        .iter()
        .any(|m| m.user == *scene.bot && scene.now - m.ts.to_datetime() <= BOT_RECENT)
}

/// Where an answer to `answers` goes: in its thread when the judged
/// conversation is a channel's top level and others have spoken after it
/// (as a person answers an earlier message in Slack) or the channel's
/// people talk in threads ([`talks_in_threads`]), else where the
/// conversation is.
pub fn reply_thread(
    conversation_thread: Option<Ts>,
    conversation: &[Message],
    answers: Ts,
    in_threads: bool,
) -> Option<Ts> {
    match conversation_thread {
        Some(root) => Some(root),
        None => (in_threads || conversation.iter().any(|m| m.ts > answers)).then_some(answers),
    }
}

/// What the gates look at: facts of the judged conversation and channel.
#[derive(Debug, Clone, Copy)]
pub struct Facts<'a> {
    /// The conversation's newest message.
    pub newest: &'a Message,
    /// The bot's user id, when known.
    pub bot: Option<&'a UserId>,
    pub now: DateTime<Utc>,
    /// `max_message_age_seconds`.
    pub max_age: Duration,
    /// The rule stage's thresholds in this channel (`None`: mentions only).
    pub thresholds: Option<Thresholds>,
    /// When the bot last spoke in this channel, as far as its recent
    /// messages show.
    pub bot_last_spoke: Option<DateTime<Utc>>,
    /// `cooldown_seconds`.
    pub cooldown: Duration,
    /// Until when the channel's judgments are backed off, if they are.
    pub backoff_until: Option<DateTime<Utc>>,
    /// Until when someone asked the bot to be quiet in the channel ("not
    /// now", 「静かにして」), if they did.
    pub muted_until: Option<DateTime<Utc>>,
}

/// A gate that keeps a judgment from going on, before any score or LLM call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gate {
    /// The bot spoke last, or reacted to the newest message: nothing to add.
    BotSpokeLast,
    /// The newest message is older than `max_message_age_seconds`.
    TooOld,
    /// The channel's chattiness is `mentions_only`.
    MentionsOnly,
    /// The bot spoke in the channel within `cooldown_seconds`.
    Cooldown,
    /// The LLM declined this channel `backoff_after_declines` times in a row.
    Backoff,
    /// Someone asked the bot to be quiet in the channel, for a while.
    Muted,
}

impl Gate {
    pub fn name(self) -> &'static str {
        match self {
            Gate::BotSpokeLast => "bot_spoke_last",
            Gate::TooOld => "too_old",
            Gate::MentionsOnly => "mentions_only",
            Gate::Cooldown => "cooldown",
            Gate::Backoff => "backoff",
            Gate::Muted => "muted",
        }
    }
}

fn bot_spoke_last(f: &Facts<'_>) -> bool {
    // A message from an unknown bot counts as ours when our id is unknown.
    (f.newest.is_bot && f.bot.is_none_or(|b| *b == f.newest.user))
        || f.newest.bot_reaction.is_some()
}

fn too_old(f: &Facts<'_>) -> bool {
    f.now - f.newest.ts.to_datetime() > f.max_age
}

fn mentions_only(f: &Facts<'_>) -> bool {
    f.thresholds.is_none()
}

fn cooldown(f: &Facts<'_>) -> bool {
    f.cooldown > Duration::zero() && f.bot_last_spoke.is_some_and(|at| f.now - at < f.cooldown)
}

fn backoff(f: &Facts<'_>) -> bool {
    f.backoff_until.is_some_and(|until| f.now < until)
}

fn muted(f: &Facts<'_>) -> bool {
    f.muted_until.is_some_and(|until| f.now < until)
}

/// Whether a gate closes on some facts.
pub type Closes = fn(&Facts<'_>) -> bool;

/// The gates, in the order they are tried: adding a rule is adding a line.
pub const GATES: &[(Gate, Closes)] = &[
    (Gate::BotSpokeLast, bot_spoke_last),
    (Gate::TooOld, too_old),
    (Gate::MentionsOnly, mentions_only),
    // Asked in words: said before any gate of the bot's own pacing.
    (Gate::Muted, muted),
    (Gate::Cooldown, cooldown),
    (Gate::Backoff, backoff),
];

/// The first gate that closes on `facts`, if any.
pub fn closed_gate(facts: &Facts<'_>) -> Option<Gate> {
    GATES
        .iter()
        .find(|(_, closes)| closes(facts))
        .map(|(gate, _)| *gate)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ChannelId;

    const BOT: &str = "UBOT";

    fn at(secs: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_700_000_000 + secs, 0).expect("a valid time")
    }

    fn msg(user: &str, secs: i64, text: &str, thread: Option<i64>) -> Message {
        Message::new(
            ChannelId::parse("C1").expect("id"),
            UserId::parse(user).expect("id"),
            text,
            Ts::from_datetime(at(secs)),
            thread.map(|t| Ts::from_datetime(at(t))),
            user == BOT,
        )
    }

    fn scored(conversation: &[Message], channel: &[Message], now: i64) -> Score {
        scored_with(conversation, channel, now, &[])
    }

    fn scored_with(
        conversation: &[Message],
        channel: &[Message],
        now: i64,
        interests: &[String],
    ) -> Score {
        let bot = UserId::parse(BOT).expect("id");
        score(&Scene {
            conversation,
            top_level: conversation.iter().all(|m| m.thread_ts.is_none()),
            channel,
            bot: &bot,
            now: at(now),
            interests,
            learned_wait: None,
        })
    }

    fn thanked(conversation: &[Message]) -> Option<(Closing, Ts)> {
        let bot = UserId::parse(BOT).expect("id");
        thanks_to_bot(
            &Scene {
                conversation,
                top_level: true,
                channel: conversation,
                bot: &bot,
                now: at(600),
                interests: &[],
                learned_wait: None,
            },
            &["myao"],
        )
    }

    #[test]
    fn a_thanks_right_after_the_bot_is_to_the_bot() {
        let answer = msg(BOT, 0, "try clearing the cache", None);
        let thanks = msg("UA", 60, "thanks myao!", None);
        let again = msg("UA", 70, "really, thank you", None);
        assert_eq!(
            thanked(&[answer.clone(), thanks.clone()]),
            Some((Closing::Thanks, thanks.ts))
        );
        assert_eq!(
            thanked(&[answer.clone(), thanks.clone(), again.clone()]),
            Some((Closing::Thanks, again.ts))
        );
        // Someone else spoke in between: the thanks may be theirs.
        let other = msg("UB", 30, "or restart it", None);
        assert_eq!(thanked(&[answer.clone(), other, thanks.clone()]), None);
        // More than a thanks, or no bot before it: not a closing to the bot.
        let more = msg("UA", 60, "thanks, but it still fails", None);
        assert_eq!(thanked(&[answer.clone(), more]), None);
        assert_eq!(thanked(std::slice::from_ref(&thanks)), None);
    }

    #[test]
    fn a_message_the_bot_reacted_to_closes_the_bot_spoke_last_gate() {
        let mut person = msg("UA", 0, "shipped it", None);
        assert_eq!(closed_gate(&facts(&person)), None);
        person.bot_reaction = Some(crate::EmojiName::wave());
        assert_eq!(closed_gate(&facts(&person)), Some(Gate::BotSpokeLast));
    }

    #[test]
    fn questions_need_a_question_mark_and_three_words() {
        assert!(is_question("how do I mount a usb stick?"));
        assert!(is_question("これってどうやって使うの？"));
        assert!(!is_question("really?"));
        assert!(!is_question("<@U1> why?"));
        assert!(!is_question("how do I mount a usb stick"));
        // A "?" in code or in a link is none.
        assert!(!is_question("I had to add `#:link-target? #f` to fix it"));
        assert!(!is_question("see ```(if (null? x) 1 2)``` for the fix"));
        assert!(!is_question(
            "results at <https://example.com/search?q=racket> here"
        ));
        assert!(is_question("does `null?` work on vectors?"));
        assert!(is_question("an unclosed `span, does it still ask?"));
        // A shared file's name is not what the person said.
        assert!(!is_question("lol\n[file: huh?.png, png, 2 KB, not opened]"));
    }

    #[test]
    fn a_question_nobody_answered_scores_and_is_what_is_answered() {
        let q = msg("UA", 0, "anyone know how to fix grub?", None);
        let before = msg("UC", -60, "brb", None);
        let s = scored(std::slice::from_ref(&q), &[before, q.clone()], 300);
        assert_eq!(s.signals, vec![Signal::UnansweredQuestion]);
        assert_eq!(s.total, Signal::UnansweredQuestion.points());
        assert_eq!(s.answers, Some(q.ts));
    }

    #[test]
    fn an_answered_question_does_not() {
        let q = msg("UA", 0, "anyone know how to fix grub?", None);
        let a = msg("UB", 60, "reinstall it from a live cd", None);
        let s = scored(&[q.clone(), a.clone()], &[q, a], 300);
        assert!(!s.signals.contains(&Signal::UnansweredQuestion));
    }

    #[test]
    fn a_top_level_question_answered_in_its_thread_does_not() {
        let q = msg("UA", 0, "anyone know how to fix grub?", None);
        let a = msg("UB", 60, "reinstall it", Some(0));
        let s = scored(std::slice::from_ref(&q), &[q.clone(), a], 300);
        assert!(!s.signals.contains(&Signal::UnansweredQuestion));
    }

    #[test]
    fn the_askers_own_follow_up_does_not_answer_it() {
        let q = msg("UA", 0, "anyone know how to fix grub?", None);
        let more = msg("UA", 30, "it says error 17", None);
        let s = scored(&[q.clone(), more.clone()], &[q.clone(), more], 300);
        assert!(s.signals.contains(&Signal::UnansweredQuestion));
        assert_eq!(s.answers, Some(q.ts));
    }

    #[test]
    fn an_old_question_is_no_longer_waiting() {
        let q = msg("UA", 0, "anyone know how to fix grub?", None);
        let s = scored(std::slice::from_ref(&q), std::slice::from_ref(&q), 3600);
        assert!(!s.signals.contains(&Signal::UnansweredQuestion));
    }

    #[test]
    fn a_question_to_someone_else_is_theirs() {
        // Put to someone by an @-mention: theirs, however long they take.
        let q = msg("UA", 0, "<@UB> did you try the new kernel?", None);
        for now in [300, 1500] {
            let s = scored(std::slice::from_ref(&q), std::slice::from_ref(&q), now);
            assert!(!s.signals.contains(&Signal::UnansweredQuestion), "{now}");
            assert_eq!((s.answers, s.again), (Some(q.ts), None), "{now}");
        }
        // One to the bot is a call, answered at once, not left here.
        let to_bot = msg("UA", 0, "<@UBOT> did you try the new kernel?", None);
        let s = scored(
            std::slice::from_ref(&to_bot),
            std::slice::from_ref(&to_bot),
            300,
        );
        assert!(s.signals.contains(&Signal::UnansweredQuestion));
    }

    #[test]
    fn silence_before_a_conversation_counts() {
        let old = msg("UC", -3600, "bye", None);
        let hi = msg("UA", 0, "morning all", None);
        let s = scored(std::slice::from_ref(&hi), &[old.clone(), hi.clone()], 300);
        assert_eq!(s.signals, vec![Signal::AfterSilence]);
        let recent = msg("UC", -60, "bye", None);
        let s = scored(std::slice::from_ref(&hi), &[recent, hi.clone()], 300);
        assert!(s.signals.is_empty());
    }

    #[test]
    fn interests_match_recent_words() {
        let m = msg("UA", 0, "I baked a Cake today", None);
        let s = scored_with(
            std::slice::from_ref(&m),
            &[msg("UC", -60, "hi", None), m.clone()],
            300,
            &["cake".to_owned()],
        );
        assert_eq!(s.signals, vec![Signal::Interest]);
    }

    #[test]
    fn two_people_talking_is_a_dialogue() {
        let c = [
            msg("UA", 0, "so the build broke", Some(-10)),
            msg("UB", 10, "yes since monday", Some(-10)),
            msg("UA", 20, "I will look", Some(-10)),
        ];
        let s = scored(&c, &c, 300);
        assert!(!s.signals.contains(&Signal::TwoPeople), "three messages");
        let c = [
            c[0].clone(),
            c[1].clone(),
            c[2].clone(),
            msg("UB", 30, "thanks", Some(-10)),
        ];
        let s = scored(&c, &c, 300);
        assert!(s.signals.contains(&Signal::TwoPeople));
        let c = [
            c[0].clone(),
            c[1].clone(),
            msg("UC", 25, "me too", Some(-10)),
            c[3].clone(),
        ];
        let s = scored(&c, &c, 300);
        assert!(!s.signals.contains(&Signal::TwoPeople), "three people");
    }

    #[test]
    fn a_burst_is_busy() {
        let c: Vec<Message> = (0..10)
            .map(|i| msg(if i % 3 == 0 { "UA" } else { "UC" }, i * 5, "lol", None))
            .collect();
        let s = scored(&c, &c, 300);
        assert!(s.signals.contains(&Signal::Burst));
    }

    #[test]
    fn the_bot_having_spoken_recently_counts_against() {
        let b = msg(BOT, -300, "hello", None);
        let m = msg("UA", 0, "nice weather", None);
        let s = scored(std::slice::from_ref(&m), &[b, m.clone()], 300);
        assert_eq!(s.signals, vec![Signal::BotRecent]);
    }

    #[test]
    fn the_bot_answering_a_question_answers_it() {
        let q = msg("UA", 0, "anyone know how to fix grub?", None);
        let b = msg(BOT, 30, "try boot-repair", None);
        let s = scored(&[q.clone(), b.clone()], &[q, b], 300);
        assert!(!s.signals.contains(&Signal::UnansweredQuestion));
    }

    #[test]
    fn the_thresholds_split_three_ways() {
        let t = Chattiness::Normal.thresholds().expect("thresholds");
        let score = |total| Score {
            total,
            signals: vec![],
            answers: None,
            again: None,
            wait: None,
        };
        assert_eq!(decide(&score(t.low - 1), t), Decision::Silent);
        assert_eq!(decide(&score(t.low), t), Decision::Ask);
        assert_eq!(decide(&score(t.high - 1), t), Decision::Ask);
        assert_eq!(decide(&score(t.high), t), Decision::Respond);
        assert_eq!(Chattiness::MentionsOnly.thresholds(), None);
    }

    #[test]
    fn chattier_levels_have_lower_thresholds() {
        let levels: Vec<Thresholds> = Chattiness::ALL
            .iter()
            .filter_map(|c| c.thresholds())
            .collect();
        for pair in levels.windows(2) {
            assert!(pair[1].low < pair[0].low && pair[1].high < pair[0].high);
        }
        for c in Chattiness::ALL {
            assert_eq!(Chattiness::parse(c.name()), Some(c));
        }
        assert_eq!(Chattiness::parse("loud"), None);
    }

    #[test]
    fn an_earlier_top_level_message_is_answered_in_its_thread() {
        let q = msg("UA", 0, "anyone know how to fix grub?", None);
        let later = msg("UC", 60, "lunch?", None);
        let c = [q.clone(), later];
        assert_eq!(reply_thread(None, &c, q.ts, false), Some(q.ts));
        assert_eq!(
            reply_thread(None, std::slice::from_ref(&q), q.ts, false),
            None
        );
        let root = Ts::from_datetime(at(-100));
        assert_eq!(reply_thread(Some(root), &c, q.ts, false), Some(root));
        // Where people talk in threads, the latest top-level message too.
        assert_eq!(
            reply_thread(None, std::slice::from_ref(&q), q.ts, true),
            Some(q.ts)
        );
    }

    #[test]
    fn a_channel_talks_in_threads_when_half_its_peoples_messages_are_replies() {
        let root = msg("UA", -600, "anyone know how to fix grub?", None);
        let replies: Vec<Message> = (0..5)
            .map(|i| msg("UB", -500 + i * 10, "try this", Some(-600)))
            .collect();
        let tops: Vec<Message> = (0..5)
            .map(|i| msg("UC", -300 + i * 10, "lunch?", None))
            .collect();
        let window = [vec![root.clone()], replies.clone(), tops[..4].to_vec()].concat();
        assert!(talks_in_threads(&window));
        // More top-level messages than replies: a channel that answers at
        // the top level.
        let window = [vec![root.clone()], replies.clone(), tops.clone()].concat();
        assert!(!talks_in_threads(&window));
        // Too few replies to tell.
        assert!(!talks_in_threads(&[root.clone(), replies[0].clone()]));
        // The bot's own replies are no habit of the people's.
        let bots: Vec<Message> = replies
            .iter()
            .map(|m| Message {
                is_bot: true,
                ..m.clone()
            })
            .collect();
        assert!(!talks_in_threads(&[vec![root], bots].concat()));
    }

    fn facts(newest: &Message) -> Facts<'_> {
        Facts {
            newest,
            bot: None,
            now: at(300),
            max_age: Duration::hours(12),
            thresholds: Chattiness::Normal.thresholds(),
            bot_last_spoke: None,
            cooldown: Duration::seconds(120),
            backoff_until: None,
            muted_until: None,
        }
    }

    #[test]
    fn every_gate_closes_on_its_own_fact_only() {
        let person = msg("UA", 0, "hello there", None);
        assert_eq!(closed_gate(&facts(&person)), None);
        let own = msg(BOT, 0, "hi", None);
        assert_eq!(closed_gate(&facts(&own)), Some(Gate::BotSpokeLast));
        let other_bot = Message {
            user: UserId::parse("UCI").expect("id"),
            ..own.clone()
        };
        let bot = UserId::parse(BOT).expect("id");
        let known = Facts {
            bot: Some(&bot),
            ..facts(&other_bot)
        };
        assert_eq!(
            closed_gate(&known),
            None,
            "another bot's message is not ours"
        );
        let old = Facts {
            now: at(13 * 3600),
            ..facts(&person)
        };
        assert_eq!(closed_gate(&old), Some(Gate::TooOld));
        let quiet = Facts {
            thresholds: None,
            ..facts(&person)
        };
        assert_eq!(closed_gate(&quiet), Some(Gate::MentionsOnly));
        let cooling = Facts {
            bot_last_spoke: Some(at(200)),
            ..facts(&person)
        };
        assert_eq!(closed_gate(&cooling), Some(Gate::Cooldown));
        let cooled = Facts {
            bot_last_spoke: Some(at(100)),
            ..facts(&person)
        };
        assert_eq!(closed_gate(&cooled), None);
        let no_cooldown = Facts {
            bot_last_spoke: Some(at(301)),
            cooldown: Duration::zero(),
            ..facts(&person)
        };
        assert_eq!(closed_gate(&no_cooldown), None, "a cooldown of 0 is none");
        let backed_off = Facts {
            backoff_until: Some(at(301)),
            ..facts(&person)
        };
        assert_eq!(closed_gate(&backed_off), Some(Gate::Backoff));
        let over = Facts {
            backoff_until: Some(at(300)),
            ..facts(&person)
        };
        assert_eq!(closed_gate(&over), None);
        let muted = Facts {
            muted_until: Some(at(301)),
            ..facts(&person)
        };
        assert_eq!(closed_gate(&muted), Some(Gate::Muted));
        let unmuted = Facts {
            muted_until: Some(at(300)),
            ..facts(&person)
        };
        assert_eq!(closed_gate(&unmuted), None, "a mute ends on time");
    }

    #[test]
    fn a_top_level_question_with_a_thread_is_judged_in_the_thread_only() {
        let q = msg("UA", 0, "anyone know how to mount a usb disk?", None);
        let more = msg("UA", 30, "still stuck", Some(0));
        // At the top level: the thread holds it.
        let s = scored(std::slice::from_ref(&q), &[q.clone(), more.clone()], 400);
        assert!(!s.signals.contains(&Signal::UnansweredQuestion));
        // In its thread (root first): it waits there.
        let thread = [q.clone(), more.clone()];
        let bot = UserId::parse(BOT).expect("id");
        let s = score(&Scene {
            conversation: &thread,
            top_level: false,
            channel: &thread,
            bot: &bot,
            now: at(400),
            interests: &[],
            learned_wait: None,
        });
        assert!(s.signals.contains(&Signal::UnansweredQuestion));
        assert_eq!(s.answers, Some(q.ts));
    }

    /// The score of a top-level question's own thread (`thread`, its root
    /// first) among the channel's messages, with a learned wait.
    fn scored_in_thread(thread: &[Message], channel: &[Message], now: i64, wait: i64) -> Score {
        let bot = UserId::parse(BOT).expect("id");
        score(&Scene {
            conversation: thread,
            top_level: false,
            channel,
            bot: &bot,
            now: at(now),
            interests: &[],
            learned_wait: Some(Duration::seconds(wait)),
        })
    }

    #[test]
    fn a_question_stays_open_while_only_its_asker_speaks_and_waits_from_its_first_line() {
        let q = msg(
            "UA",
            0,
            "has anyone had success with the nvidia driver on 8.10?",
            None,
        );
        for line in [
            "hmm......",
            "```\nEE (II) NVIDIA(0): Failed to initialize the NVIDIA kernel module\n```",
            "thanks in advance",
            "誰か分かる人いますか",
            "anyone?",
        ] {
            let thread = [q.clone(), msg("UA", 120, line, Some(0))];
            let s = scored_in_thread(&thread, &thread, 300, 600);
            assert!(s.signals.contains(&Signal::UnansweredQuestion), "{line}");
            assert_eq!(s.answers, Some(q.ts), "{line}");
            // Left to the room 600 s after the question, not after the line.
            assert_eq!(s.again, Some(at(600)), "{line}");
        }
        // Asked again in other words: the newer question is answered, and
        // the wait still runs from the first.
        let again = msg("UA", 240, "or is nouveau the only way on 8.10?", Some(0));
        let thread = [q.clone(), again.clone()];
        let s = scored_in_thread(&thread, &thread, 300, 600);
        assert_eq!((s.answers, s.again), (Some(again.ts), Some(at(600))));
        // Another person's word answers it.
        let thread = [
            q.clone(),
            msg("UB", 120, "use the restricted driver", Some(0)),
        ];
        let s = scored_in_thread(&thread, &thread, 700, 600);
        assert!(!s.signals.contains(&Signal::UnansweredQuestion));
    }

    #[test]
    fn a_run_of_the_askers_questions_starts_after_one_someone_answered() {
        // Alice's first question was answered in its thread; her next one,
        // at the top level right after it, waits from its own time.
        let q0 = msg("UA", 0, "how do I mount a usb disk?", None);
        let q1 = msg("UA", 1500, "and how do I unmount it safely?", None);
        let top = [q0.clone(), q1.clone()];
        let channel = [q0, msg("UB", 60, "udisksctl mount", Some(0)), q1.clone()];
        let bot = UserId::parse(BOT).expect("id");
        let s = score(&Scene {
            conversation: &top,
            top_level: true,
            channel: &channel,
            bot: &bot,
            now: at(1600),
            interests: &[],
            learned_wait: Some(Duration::seconds(600)),
        });
        assert_eq!((s.answers, s.again), (Some(q1.ts), Some(at(2100))));
    }

    #[test]
    fn a_questions_own_judgment_reads_the_top_level_only_where_people_talk_there() {
        let q = msg(
            "UA",
            0,
            "is there an iptables command to list chains?",
            None,
        );
        let answer = msg("UB", 60, "iptables -L", None);
        // People talk at the top level: the next message answers it.
        let flat = [q.clone(), answer.clone()];
        let s = scored_in_thread(std::slice::from_ref(&q), &flat, 900, 600);
        assert!(!s.signals.contains(&Signal::UnansweredQuestion));
        // People talk in threads: it is another conversation.
        let mut threaded = vec![msg("UC", -600, "the build is red", None)];
        threaded.extend((0..5).map(|i| msg("UD", -590 + i, "on it", Some(-600))));
        threaded.extend([q.clone(), answer]);
        assert!(talks_in_threads(&threaded));
        let s = scored_in_thread(std::slice::from_ref(&q), &threaded, 900, 600);
        assert!(s.signals.contains(&Signal::UnansweredQuestion));
        assert_eq!(s.answers, Some(q.ts));
    }

    #[test]
    fn a_question_its_asker_answered_or_thought_on_is_not_waiting() {
        let q = msg("UA", 0, "how do I mount a usb disk?", None);
        let nvm = msg("UA", 60, "nvm, got it working", None);
        assert!(moved_on(&q, &[&nvm]));
        let s = scored(&[q.clone(), nvm.clone()], &[q.clone(), nvm], 400);
        assert!(!s.signals.contains(&Signal::UnansweredQuestion));
        // A guess followed by more of his own thinking.
        let guess = msg(
            "UB",
            0,
            "looking. probably the flaky payments test again?",
            None,
        );
        let on = msg("UB", 60, "the lockfile was regenerated, fixing", None);
        assert!(moved_on(&guess, &[&on]));
        // A real question followed by details, or a plea: still waiting.
        let details = msg("UA", 60, "it says error 17", None);
        let plea = msg("UA", 60, "still stuck, anyone?", None);
        assert!(!moved_on(&q, &[&details]));
        assert!(!moved_on(&guess, &[&plea]));
        // A word of seeing it is moving on; one with more words is not.
        let oh = msg("UA", 60, "OH….", None);
        assert!(moved_on(&q, &[&oh]));
        let more = msg("UA", 60, "oh, and it says error 17", None);
        assert!(!moved_on(&q, &[&more]));
        // Still stuck, whatever words of being done it holds; "かな" inside
        // a word is no guess.
        let stuck = msg("UA", 60, "still not fixed, error 17", None);
        assert!(!moved_on(&q, &[&stuck]));
        let jp = msg("UA", 0, "この関数、なかなか動かないのはなぜ？", None);
        let detail = msg("UA", 60, "エラーコードは17です", None);
        assert!(!moved_on(&jp, &[&detail]));
        let wondering = msg("UA", 0, "キャッシュのせいかな？", None);
        assert!(moved_on(&wondering, &[&detail]));
        // Someone else's words are not the asker's answer.
        let other = msg("UC", 60, "nvm that", None);
        assert!(!moved_on(&q, &[&other]));
    }

    #[test]
    fn a_question_is_put_to_the_room_by_its_words() {
        assert!(to_the_room("does anyone know how to mount it?"));
        assert!(to_the_room("Any idea why it hangs?"));
        assert!(to_the_room("誰か知ってる?"));
        assert!(!to_the_room("did you try the new kernel?"));
        assert!(!to_the_room("someones-lib is broken?"), "a whole word only");
    }

    #[test]
    fn the_pace_is_the_median_wait_between_turns() {
        let c = [
            msg("UA", 0, "so", Some(-10)),
            msg("UB", 60, "yes", Some(-10)),
            msg("UB", 70, "and", Some(-10)),
            msg("UA", 370, "ok", Some(-10)),
            msg("UB", 490, "right", Some(-10)),
        ];
        // Turns: 60, 300, 120 s; the same person's second line is no turn.
        assert_eq!(pace(&c, &[]), Some(Duration::seconds(120)));
        // Too few turns of its own: the channel's conversations, each apart.
        let one = [msg("UA", 0, "hi", None), msg("UB", 30, "hi", None)];
        let channel = [
            msg("UC", 0, "a", Some(-5)),
            msg("UD", 10, "b", None),
            msg("UE", 20, "c", Some(-5)),
            msg("UC", 50, "d", Some(-5)),
        ];
        assert_eq!(pace(&one, &channel), Some(Duration::seconds(30)));
        assert_eq!(pace(&one, &one), None);
        assert_eq!(pace_wait(None), Duration::zero());
        assert_eq!(
            pace_wait(Some(Duration::seconds(100))),
            Duration::seconds(300)
        );
        assert_eq!(pace_wait(Some(Duration::hours(1))), PACE_CAP);
        assert_eq!(stall_wait(None), STALL_MIN);
        assert_eq!(
            stall_wait(Some(Duration::minutes(7))),
            Duration::minutes(28)
        );
        assert_eq!(stall_wait(Some(Duration::minutes(4))), STALL_MIN);
    }

    /// A slow two-person thread: Bob opened it, Alice answered, and they
    /// take minutes to answer each other.
    fn slow_exchange(question: &str) -> Vec<Message> {
        vec![
            msg("UB", 0, "trying the new testing library", None),
            msg("UA", 240, "which one?", Some(0)),
            msg("UB", 480, "rackunit-chk, it is nice", Some(0)),
            msg("UA", 720, question, Some(0)),
        ]
    }

    fn thread_score(c: &[Message], now: i64) -> Score {
        let bot = UserId::parse(BOT).expect("id");
        score(&Scene {
            conversation: c,
            top_level: false,
            channel: c,
            bot: &bot,
            now: at(now),
            interests: &[],
            learned_wait: None,
        })
    }

    #[test]
    fn a_question_is_left_to_the_room_only_after_its_conversations_pace() {
        let c = slow_exchange("does it work with typed code?");
        // Pace 240 s: not left before 720 s after it was asked.
        let s = thread_score(&c, 720 + 300);
        assert!(s.signals.contains(&Signal::NotLeftYet), "{:?}", s.signals);
        assert_eq!(s.again, Some(at(720 + 720)));
        assert!(s.total < Chattiness::Chatty.thresholds().expect("t").low);
    }

    #[test]
    fn a_question_inside_a_live_exchange_is_theirs_until_it_stalls() {
        let c = slow_exchange("does it work with typed code?");
        assert!(their_exchange(&c, &c[3]));
        let s = thread_score(&c, 720 + 800);
        assert!(
            s.signals.contains(&Signal::TheirExchange),
            "{:?}",
            s.signals
        );
        // Stalled at 20 minutes: four paces are 16.
        assert_eq!(s.again, Some(at(720 + 1200)));
        let s = thread_score(&c, 720 + 1500);
        assert!(s.signals.contains(&Signal::UnansweredQuestion));
        assert!(!s.signals.contains(&Signal::TheirExchange));
        // Put to the room, it is anyone's once the pace has passed.
        let c = slow_exchange("does anyone know if it works with typed code?");
        assert!(!their_exchange(&c, &c[3]));
        let s = thread_score(&c, 720 + 800);
        assert!(!s.signals.contains(&Signal::TheirExchange));
        assert!(s.signals.contains(&Signal::UnansweredQuestion));
        // A newcomer's question at the top level, or one to a room of
        // four, is not theirs.
        let c = [
            msg("UB", 0, "trying the new testing library", None),
            msg("UA", 240, "which one?", None),
            msg("UC", 480, "does it work with typed code?", None),
        ];
        assert!(!their_exchange(&c, &c[2]));
        let c = [
            msg("UB", 0, "trying the new testing library", None),
            msg("UC", 60, "nice", Some(0)),
            msg("UD", 120, "which one?", Some(0)),
            msg("UA", 180, "cool", Some(0)),
            msg("UB", 240, "rackunit-chk", Some(0)),
            msg("UA", 300, "does it work with typed code?", Some(0)),
        ];
        assert!(!their_exchange(&c, &c[5]));
    }

    #[test]
    fn a_reply_asking_in_someone_elses_thread_is_to_them() {
        let c = [
            msg("UB", 0, "released v2 of the parser today", None),
            msg("UA", 60, "does it handle unicode now?", Some(0)),
        ];
        assert!(their_exchange(&c, &c[1]));
        // A message older than the question's half hour is no live
        // exchange: 25 minutes on it is theirs, 35 minutes on it is not.
        for (after, theirs) in [(1500, true), (2100, false), (7200, false)] {
            let c = [
                msg("UB", 0, "released v2 of the parser today", None),
                msg("UA", after, "does it handle unicode now?", Some(0)),
            ];
            assert_eq!(their_exchange(&c, &c[1]), theirs, "{after} s on");
        }
    }
}
