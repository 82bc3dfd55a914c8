//! The rule stage: before any LLM judgment, a score per conversation from
//! signals in what was said, and a decision from the score. Below the low
//! threshold the bot stays silent without asking the LLM; at or above the
//! high one it answers without asking; in between the LLM judges as before.
//!
//! The signals follow the Discord design's rule-based judge (REFERENCE.md);
//! their points were tuned with `myao eval` on real multi-party chat (the
//! README's "Numbers"): a question left hanging weighs more (+60), the
//! minuses less, since the over-talking guards (cooldown, hourly cap,
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

use chrono::{DateTime, Duration, Utc};

use super::ids::{Ts, UserId};
use super::message::Message;
use super::reply::{closing, Closing};
use super::routing::mentions;

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
    /// The question @-mentions another person: it is theirs to answer.
    AskedSomeoneElse,
    /// Only two people are talking: a dialogue, not an open room.
    TwoPeople,
    /// Many messages of the conversation in a short time: it is lively
    /// without the bot.
    Burst,
    /// The bot spoke in this channel not long ago.
    BotRecent,
}

impl Signal {
    /// The signal's points.
    pub fn points(self) -> i32 {
        match self {
            Signal::UnansweredQuestion => 60,
            Signal::AfterSilence => 10,
            Signal::Interest => 15,
            Signal::AskedSomeoneElse => -20,
            Signal::TwoPeople => -10,
            Signal::Burst => -5,
            Signal::BotRecent => -10,
        }
    }

    /// The signal's name, for logs and the local timeline.
    pub fn name(self) -> &'static str {
        match self {
            Signal::UnansweredQuestion => "unanswered_question",
            Signal::AfterSilence => "after_silence",
            Signal::Interest => "interest",
            Signal::AskedSomeoneElse => "asked_someone_else",
            Signal::TwoPeople => "two_people",
            Signal::Burst => "burst",
            Signal::BotRecent => "bot_recent",
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
/// A question older than this is no longer waiting for an answer.
pub const QUESTION_MAX_AGE: Duration = Duration::minutes(30);

/// What the rule stage looks at.
#[derive(Debug, Clone, Copy)]
pub struct Scene<'a> {
    /// The judged conversation, oldest first: a thread (its root first) or
    /// the channel's top level.
    pub conversation: &'a [Message],
    /// Whether `conversation` is a channel's top level.
    pub top_level: bool,
    /// The channel's recent messages in any conversation, oldest first
    /// (replies too: they tell whether a top-level question was answered
    /// in its thread).
    pub channel: &'a [Message],
    pub bot: &'a UserId,
    pub now: DateTime<Utc>,
    /// `interest_keywords`, lower case.
    pub interests: &'a [String],
}

/// The rule stage's score and the signals behind it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Score {
    pub total: i32,
    pub signals: Vec<Signal>,
    /// The message the bot would answer: the latest unanswered question, or
    /// else the latest person's message.
    pub answers: Option<Ts>,
}

impl Score {
    /// The signals as `name(+points)` words, for logs and the timeline.
    pub fn explain(&self) -> String {
        self.signals
            .iter()
            .map(|s| format!("{}({:+})", s.name(), s.points()))
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

/// Whether `text` is a question: a "?" (or "？") and at least three words,
/// where a run of Japanese counts a word per three characters (it has no
/// spaces between words).
pub fn is_question(text: &str) -> bool {
    (text.contains('?') || text.contains('？')) && words(text) >= 3
}

fn words(text: &str) -> usize {
    text.split_whitespace()
        .filter(|w| !w.starts_with("<@"))
        .map(|w| {
            let wide = w.chars().filter(|c| !c.is_ascii()).count();
            if wide == 0 {
                usize::from(w.chars().any(char::is_alphanumeric))
            } else {
                wide.div_ceil(3)
            }
        })
        .sum()
}

/// Whether `text` @-mentions someone other than `bot`.
fn mentions_other(text: &str, bot: &UserId) -> bool {
    text.contains("<@") && !mentions(text, bot)
}

/// Whether `message` is a person's (not a bot's).
fn person(message: &Message) -> bool {
    !message.is_bot
}

/// The latest question in the conversation that a person asked and no one
/// else (person or bot) has answered, in the conversation or, for a
/// top-level question, in its thread: its asker may have said more since.
fn unanswered_question<'a>(scene: &Scene<'a>) -> Option<&'a Message> {
    let oldest = scene.now - QUESTION_MAX_AGE;
    scene
        .conversation
        .iter()
        .rev()
        .filter(|m| person(m) && m.ts.to_datetime() >= oldest && is_question(&m.text))
        .find(|q| {
            let later_in_conversation = scene.conversation.iter().filter(|m| m.ts > q.ts).chain(
                scene
                    .channel
                    .iter()
                    .filter(|m| scene.top_level && m.thread_ts == Some(q.ts)),
            );
            !later_in_conversation
                .into_iter()
                .any(|m| m.user != q.user || m.user == *scene.bot)
        })
}

/// Scores the scene.
pub fn score(scene: &Scene<'_>) -> Score {
    let mut signals = Vec::new();
    let question = unanswered_question(scene);
    if let Some(q) = question {
        signals.push(Signal::UnansweredQuestion);
        if mentions_other(&q.text, scene.bot) {
            signals.push(Signal::AskedSomeoneElse);
        }
    }
    let latest_person = scene.conversation.iter().rev().find(|m| person(m));
    if let Some(latest) = latest_person {
        let before = scene
            .channel
            .iter()
            .filter(|m| m.ts < latest.ts)
            .map(|m| m.ts)
            .max();
        if before.is_none_or(|b| latest.ts.to_datetime() - b.to_datetime() >= SILENCE) {
            signals.push(Signal::AfterSilence);
        }
    }
    let recent_text = scene
        .conversation
        .iter()
        .rev()
        .filter(|m| person(m))
        .take(3)
        .map(|m| m.text.to_lowercase())
        .collect::<Vec<_>>();
    if scene
        .interests
        .iter()
        .filter(|k| !k.trim().is_empty())
        .any(|k| recent_text.iter().any(|t| t.contains(k.trim())))
    {
        signals.push(Signal::Interest);
    }
    // A dialogue: the last few messages of people are of exactly two.
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
    if enough && people.len() == 2 {
        signals.push(Signal::TwoPeople);
    }
    // The busiest minute of the conversation's last ten: a lively exchange
    // that does without the bot (the channel's other conversations are
    // theirs).
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
    if busiest >= BURST_MESSAGES && scene.conversation.len() > 1 {
        signals.push(Signal::Burst);
    }
    if scene
        .channel
        .iter()
        .any(|m| m.user == *scene.bot && scene.now - m.ts.to_datetime() <= BOT_RECENT)
    {
        signals.push(Signal::BotRecent);
    }
    Score {
        total: signals.iter().map(|s| s.points()).sum(),
        answers: question.or(latest_person).map(|m| m.ts),
        signals,
    }
}

/// Where an answer to `answers` goes: in its thread when the judged
/// conversation is a channel's top level and others have spoken after it
/// (as a person answers an earlier message in Slack), else where the
/// conversation is.
pub fn reply_thread(
    conversation_thread: Option<Ts>,
    conversation: &[Message],
    answers: Ts,
) -> Option<Ts> {
    match conversation_thread {
        Some(root) => Some(root),
        None => conversation
            .iter()
            .any(|m| m.ts > answers)
            .then_some(answers),
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
}

impl Gate {
    pub fn name(self) -> &'static str {
        match self {
            Gate::BotSpokeLast => "bot_spoke_last",
            Gate::TooOld => "too_old",
            Gate::MentionsOnly => "mentions_only",
            Gate::Cooldown => "cooldown",
            Gate::Backoff => "backoff",
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

/// Whether a gate closes on some facts.
pub type Closes = fn(&Facts<'_>) -> bool;

/// The gates, in the order they are tried: adding a rule is adding a line.
pub const GATES: &[(Gate, Closes)] = &[
    (Gate::BotSpokeLast, bot_spoke_last),
    (Gate::TooOld, too_old),
    (Gate::MentionsOnly, mentions_only),
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
    use crate::domain::ChannelId;

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
        person.bot_reaction = Some(crate::domain::EmojiName::wave());
        assert_eq!(closed_gate(&facts(&person)), Some(Gate::BotSpokeLast));
    }

    #[test]
    fn questions_need_a_question_mark_and_three_words() {
        assert!(is_question("how do I mount a usb stick?"));
        assert!(is_question("これってどうやって使うの？"));
        assert!(!is_question("really?"));
        assert!(!is_question("<@U1> why?"));
        assert!(!is_question("how do I mount a usb stick"));
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
        let q = msg("UA", 0, "<@UB> did you try the new kernel?", None);
        let s = scored(std::slice::from_ref(&q), std::slice::from_ref(&q), 300);
        assert!(s.signals.contains(&Signal::AskedSomeoneElse));
        assert_eq!(
            s.signals,
            vec![
                Signal::UnansweredQuestion,
                Signal::AskedSomeoneElse,
                Signal::AfterSilence
            ]
        );
        assert_eq!(s.total, 60 - 20 + 10);
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
        assert_eq!(reply_thread(None, &c, q.ts), Some(q.ts));
        assert_eq!(reply_thread(None, std::slice::from_ref(&q), q.ts), None);
        let root = Ts::from_datetime(at(-100));
        assert_eq!(reply_thread(Some(root), &c, q.ts), Some(root));
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
    }
}
