//! What the rule stage looks at ([`Scene`]), and the facts of a channel
//! both the score and the questions' rules read: how old a question may
//! be and still wait, and whether its people talk in threads.

use chrono::{DateTime, Duration, Utc};

use crate::ids::UserId;
use crate::message::Message;

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
    /// How long the channel's people take to answer a question, learned
    /// from its history at the level's share ([`AnswerTimes::wait`]); `None`
    /// while it has too little: the conversation's pace decides then.
    ///
    /// [`AnswerTimes::wait`]: crate::answer_times::AnswerTimes::wait
    pub learned_wait: Option<Duration>,
}

/// The fewest thread replies in a channel's recent messages that show a
/// habit of threads.
pub const THREAD_HABIT_REPLIES: usize = 5;

/// Whether a channel's people talk in threads: at least half of their
/// recent messages (`window`) are thread replies, and at least
/// [`THREAD_HABIT_REPLIES`] of them. There a member answers a top-level
/// message in its thread, as the others do; where they answer at the top
/// level, so does the bot.
pub fn talks_in_threads(window: &[Message]) -> bool {
    let people = window.iter().filter(|m| !m.is_bot);
    let (replies, all) = people.fold((0, 0), |(replies, all), m| {
        (replies + usize::from(m.thread_ts.is_some()), all + 1)
    });
    replies >= THREAD_HABIT_REPLIES && 2 * replies >= all
}
