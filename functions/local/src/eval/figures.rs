//! When-to-speak figures: what the bot's posts came to, measured against what
//! the people of an export did. Pure: the replay gives the messages and the
//! posts, this counts.
//!
//! - A question people left unanswered: a person's message with a "?" and at
//!   least three words ([`is_question`]), after which no other person posts
//!   in its conversation for ten minutes. A top-level question's
//!   conversation is the thread under it, and the top level until that
//!   thread began ([`speaks_to`]): once the conversation has moved into a
//!   thread (a first reply, the asker's own too), a new top-level message
//!   of someone else is another conversation. The bot
//!   joined it if it posted there within thirty minutes, before any other
//!   person did. One its asker closed in those ten minutes ("nvm, got it":
//!   [`moved_on`]) or asked again at the top level ([`asks_again`]: the
//!   later one stands for both) is not left: the judgment's own rules.
//! - A live two-person exchange: a thread with exactly two people, at least
//!   four messages, the last not a question. The bot intruded if it posted
//!   in it unprompted while it was live: after the second person's first
//!   message and before its last, so that they talked on after the post.
//!   (Posts made before the second person came, often an answer to a
//!   question nobody had taken yet, or after the last message, on a
//!   question left when the exchange stalled, are counted apart.)
//! - Precision: the share of the bot's unprompted posts made where a
//!   question was waiting: asked in its conversation within thirty minutes
//!   before the post, with no other person's message after it (its asker
//!   adding details is still waiting for an answer, as for the questions
//!   left unanswered). The strict precision counts only posts made right
//!   after the question (its conversation's latest person's message).
//! - Preempted: the share of the bot's unprompted posts after which a person
//!   other than the one it answered did speak in that conversation within
//!   thirty minutes: a turn the bot took from someone who was going to take
//!   it.
//! - Engaged answers: the bot's answers, at once, to a thread reply that
//!   neither mentioned nor named it (it replied in a thread where the bot
//!   had just spoken), per unprompted post, and the longest run of them in
//!   one thread with no call of the bot in between.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use chrono::Duration;
use myao_domain::message::speaks_to;
use myao_domain::rules::{asks_again, is_question, moved_on, talks_in_threads};
use myao_domain::{ChannelId, Message, Ts, UserId};
use serde::Serialize;

/// How long a question must stay without another person's answer to count
/// as left unanswered.
pub const UNANSWERED_FOR: Duration = Duration::minutes(10);
/// How soon the bot must post to have joined a question; how soon after a
/// post a person's turn makes it preempted.
pub const JOIN_WITHIN: Duration = Duration::minutes(30);
/// The least messages of a live two-person exchange.
pub const EXCHANGE_MESSAGES: usize = 4;

/// One of the bot's posts.
#[derive(Debug, Clone, PartialEq)]
pub struct Post {
    pub channel: ChannelId,
    pub ts: Ts,
    /// The thread it went to, `None` for the top level.
    pub thread_ts: Option<Ts>,
    /// Whether it answered nobody's call (no mention, name, DM or reply to it).
    pub unprompted: bool,
    /// Whether it was an engaged answer: prompted, but by a thread reply
    /// that neither mentioned nor named the bot.
    pub engaged: bool,
}

/// An exchange of two people, by its thread and its span.
#[derive(Debug, Clone, PartialEq)]
pub struct Exchange {
    pub root: Ts,
    /// Its first and last messages.
    pub first: Ts,
    pub last: Ts,
    /// Whether the bot posted in it unprompted while it was live.
    pub intruded: bool,
}

/// The cases behind a channel's figures, for a report to point at.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Cases {
    /// Each question people left unanswered, and whether the bot joined it.
    pub questions: Vec<(Ts, bool)>,
    pub exchanges: Vec<Exchange>,
    /// The unprompted posts another person's turn followed.
    pub preempted: Vec<Ts>,
}

/// The figures of one channel, or of all.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Figures {
    /// Questions people left unanswered.
    pub questions: usize,
    /// Of those, the ones the bot joined.
    pub joined: usize,
    /// Live two-person exchanges.
    pub exchanges: usize,
    /// Of those, the ones the bot posted in unprompted while they were live:
    /// after both people had spoken, before the last message.
    pub intruded: usize,
    /// Of those, the ones the bot posted in unprompted at any time (before
    /// the second person came too: often a question it answered while it
    /// waited, that someone else answered later).
    pub posted_in: usize,
    /// The bot's unprompted posts.
    pub unprompted: usize,
    /// Of those, the ones made where a question was waiting for an answer.
    pub on_question: usize,
    /// Of those, the ones whose conversation's latest person's message was
    /// the waiting question (the stricter figure of earlier versions: a
    /// question its asker added details to does not count).
    pub on_latest_question: usize,
    /// Of those, the ones after which another person spoke in the
    /// conversation within [`JOIN_WITHIN`].
    pub preempted: usize,
    /// Engaged answers ([`Post::engaged`]).
    pub engaged: usize,
    /// The most engaged answers in a row in one thread, with no mention or
    /// name call of the bot in between.
    pub longest_engaged_run: usize,
    /// Hours from the channel's first message to its last.
    pub hours: f64,
    /// The cases counted (of one channel; empty in a total).
    #[serde(skip)]
    pub cases: Cases,
}

impl Figures {
    /// The share of unanswered questions joined (0 when there were none).
    pub fn join_rate(&self) -> f64 {
        ratio(self.joined, self.questions)
    }
    /// The share of exchanges intruded on.
    pub fn intrusion_rate(&self) -> f64 {
        ratio(self.intruded, self.exchanges)
    }
    /// The share of unprompted posts made on a waiting question.
    pub fn precision(&self) -> f64 {
        ratio(self.on_question, self.unprompted)
    }
    /// The share of unprompted posts made on the latest message, a waiting
    /// question.
    pub fn strict_precision(&self) -> f64 {
        ratio(self.on_latest_question, self.unprompted)
    }
    /// The share of unprompted posts preempted.
    pub fn preempted_rate(&self) -> f64 {
        ratio(self.preempted, self.unprompted)
    }
    /// Engaged answers per unprompted post.
    pub fn engaged_per_unprompted(&self) -> f64 {
        ratio(self.engaged, self.unprompted)
    }
    /// Unprompted posts per channel-hour.
    pub fn per_hour(&self) -> f64 {
        if self.hours > 0.0 {
            self.unprompted as f64 / self.hours
        } else {
            0.0
        }
    }
    fn add(&mut self, other: &Figures) {
        self.questions += other.questions;
        self.joined += other.joined;
        self.exchanges += other.exchanges;
        self.intruded += other.intruded;
        self.posted_in += other.posted_in;
        self.unprompted += other.unprompted;
        self.on_question += other.on_question;
        self.on_latest_question += other.on_latest_question;
        self.preempted += other.preempted;
        self.engaged += other.engaged;
        self.longest_engaged_run = self.longest_engaged_run.max(other.longest_engaged_run);
        self.hours += other.hours;
    }
}

fn ratio(part: usize, whole: usize) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 / whole as f64
    }
}

/// When each thread began (its first reply, of the messages and posts it is
/// made of): a top-level question's conversation is its thread from then on
/// ([`speaks_to`]). In a channel whose people talk in threads
/// ([`talks_in_threads`], over all of its people's messages), from the
/// start: another person's new top-level message is another conversation.
pub(super) struct Threads {
    began: HashMap<(ChannelId, Ts), Ts>,
    in_threads: BTreeSet<ChannelId>,
}

impl Threads {
    pub(super) fn of(people: &[Message], posts: &[Post]) -> Threads {
        let mut began: HashMap<(ChannelId, Ts), Ts> = HashMap::new();
        let replies = people
            .iter()
            .filter_map(|m| Some((&m.channel, m.thread_ts?, m.ts)))
            .chain(
                posts
                    .iter()
                    .filter_map(|p| Some((&p.channel, p.thread_ts?, p.ts))),
            );
        for (channel, root, ts) in replies {
            let first = began.entry((channel.clone(), root)).or_insert(ts);
            *first = (*first).min(ts);
        }
        let mut by_channel: BTreeMap<&ChannelId, Vec<Message>> = BTreeMap::new();
        for m in people {
            by_channel.entry(&m.channel).or_default().push(m.clone());
        }
        let in_threads = by_channel
            .into_iter()
            .filter(|(_, messages)| talks_in_threads(messages))
            .map(|(channel, _)| channel.clone())
            .collect();
        Threads { began, in_threads }
    }

    /// The conversation of `q`, its thread's beginning looked up once.
    pub(super) fn asked<'a>(&self, q: &'a Message) -> Asked<'a> {
        let began = match q.thread_ts {
            Some(_) => None,
            None if self.in_threads.contains(&q.channel) => Some(q.ts),
            None => self.began.get(&(q.channel.clone(), q.ts)).copied(),
        };
        Asked { q, began }
    }
}

/// A question (or any message) and when the thread under it began.
pub(super) struct Asked<'a> {
    q: &'a Message,
    began: Option<Ts>,
}

impl Asked<'_> {
    /// Whether `m` is in the conversation of the question.
    pub(super) fn with(&self, m: &Message) -> bool {
        m.channel == self.q.channel && speaks_to(self.q, m.thread_ts, m.ts, self.began)
    }

    /// Whether a post is in the conversation of the question.
    fn post_with(&self, post: &Post) -> bool {
        post.channel == self.q.channel && speaks_to(self.q, post.thread_ts, post.ts, self.began)
    }
}

/// The figures per channel, from the people's messages (oldest first, no
/// bot's) and the bot's posts.
pub fn measure(people: &[Message], posts: &[Post]) -> BTreeMap<ChannelId, Figures> {
    let mut out = channel_hours(people);
    // Which questions people left is theirs alone to say (the same at every
    // level); after a post, the bot's reply has begun a thread too.
    count_unanswered_questions(&mut out, &Threads::of(people, &[]), people, posts);
    count_exchanges(&mut out, people, posts);
    count_unprompted_posts(&mut out, &Threads::of(people, posts), people, posts);
    count_engaged_runs(&mut out, posts);
    out
}

/// Each channel of the people's messages, with the hours from its first
/// message to its last.
fn channel_hours(people: &[Message]) -> BTreeMap<ChannelId, Figures> {
    let mut out: BTreeMap<ChannelId, Figures> = BTreeMap::new();
    for channel in people.iter().map(|m| &m.channel) {
        out.entry(channel.clone()).or_default();
    }
    for (channel, figures) in &mut out {
        let mine: Vec<&Message> = people.iter().filter(|m| m.channel == *channel).collect();
        if let (Some(first), Some(last)) = (mine.first(), mine.last()) {
            figures.hours =
                (last.ts.to_datetime() - first.ts.to_datetime()).num_seconds() as f64 / 3600.0;
        }
    }
    out
}

/// Whether `m` is a question that may be left to the room: a question
/// ([`is_question`]) that @-mentions nobody. One put to someone by an
/// @-mention is theirs (or, put to the bot, a call it answers at once):
/// none is counted as left unanswered, at any level or for the room.
pub(super) fn left_to_ask(m: &Message) -> bool {
    is_question(&m.text) && !m.text.contains("<@")
}

/// The questions people left unanswered, and those the bot joined.
fn count_unanswered_questions(
    out: &mut BTreeMap<ChannelId, Figures>,
    threads: &Threads,
    people: &[Message],
    posts: &[Post],
) {
    for q in people.iter().filter(|m| left_to_ask(m)) {
        let at = q.ts.to_datetime();
        let asked = threads.asked(q);
        let next_other = people
            .iter()
            .filter(|m| m.ts > q.ts && m.user != q.user && asked.with(m))
            .map(|m| m.ts.to_datetime())
            .min();
        if next_other.is_some_and(|t| t - at <= UNANSWERED_FOR) {
            continue;
        }
        // Nor is one its asker closed within that time ("nvm, got it"), or
        // asked again at the top level (the later one stands for both): the
        // rules the judgment holds a question open by.
        let own: Vec<&Message> = people
            .iter()
            .filter(|m| m.ts > q.ts && m.user == q.user && asked.with(m))
            .filter(|m| m.ts.to_datetime() - at <= UNANSWERED_FOR)
            .collect();
        if moved_on(q, &own) || people.iter().any(|m| asks_again(q, m)) {
            continue;
        }
        let figures = out.entry(q.channel.clone()).or_default();
        figures.questions += 1;
        let deadline = next_other.map_or(at + JOIN_WITHIN, |t| t.min(at + JOIN_WITHIN));
        let joined = posts
            .iter()
            .any(|p| asked.post_with(p) && p.ts > q.ts && p.ts.to_datetime() <= deadline);
        figures.joined += usize::from(joined);
        figures.cases.questions.push((q.ts, joined));
    }
}

/// The live two-person exchanges, those the bot posted in unprompted, and
/// those it intruded on while they were live.
fn count_exchanges(out: &mut BTreeMap<ChannelId, Figures>, people: &[Message], posts: &[Post]) {
    let mut threads: BTreeMap<(ChannelId, Ts), Vec<&Message>> = BTreeMap::new();
    for m in people {
        let root = m.thread_ts.unwrap_or(m.ts);
        threads
            .entry((m.channel.clone(), root))
            .or_default()
            .push(m);
    }
    for ((channel, root), messages) in &threads {
        let who: BTreeSet<&UserId> = messages.iter().map(|m| &m.user).collect();
        let replies = messages.iter().any(|m| m.thread_ts.is_some());
        let last_is_question = messages.last().is_some_and(|m| is_question(&m.text));
        if !replies || who.len() != 2 || messages.len() < EXCHANGE_MESSAGES || last_is_question {
            continue;
        }
        let figures = out.entry(channel.clone()).or_default();
        figures.exchanges += 1;
        let in_thread =
            |p: &&Post| p.unprompted && p.channel == *channel && p.thread_ts == Some(*root);
        if posts.iter().any(|p| in_thread(&p)) {
            figures.posted_in += 1;
        }
        // Live from the second person's first message to the last message:
        // a post within it is one they talked on after. (After the last
        // message, the exchange had ended: a post there picks up a question
        // left when it stalled, and is counted in `posted_in`.)
        let opened = messages
            .iter()
            .find(|m| m.user != messages[0].user)
            .map(|m| m.ts);
        let ended = messages.last().map(|m| m.ts);
        let intruded = posts
            .iter()
            .filter(in_thread)
            .any(|p| opened.is_some_and(|o| p.ts > o) && ended.is_some_and(|e| p.ts < e));
        figures.intruded += usize::from(intruded);
        figures.cases.exchanges.push(Exchange {
            root: *root,
            first: messages[0].ts,
            last: ended.unwrap_or(*root),
            intruded,
        });
    }
}

/// The bot's unprompted posts: those made on a waiting question (on the
/// latest message, strictly), and those another person's turn followed.
fn count_unprompted_posts(
    out: &mut BTreeMap<ChannelId, Figures>,
    threads: &Threads,
    people: &[Message],
    posts: &[Post],
) {
    for post in posts.iter().filter(|p| p.unprompted) {
        let figures = out.entry(post.channel.clone()).or_default();
        figures.unprompted += 1;
        let in_conversation = |m: &&Message| {
            m.channel == post.channel
                && (m.thread_ts == post.thread_ts || post.thread_ts == Some(m.ts))
                && m.ts < post.ts
        };
        let Some(latest) = people.iter().filter(in_conversation).max_by_key(|m| m.ts) else {
            continue;
        };
        // A question is waiting when only its asker spoke after it (adding
        // details is still waiting for an answer), as for the questions
        // left unanswered.
        let since = post.ts.to_datetime() - JOIN_WITHIN;
        let waiting = people
            .iter()
            .filter(in_conversation)
            .filter(|q| q.ts.to_datetime() >= since && is_question(&q.text))
            .any(|q| {
                let asked = threads.asked(q);
                !people
                    .iter()
                    .any(|m| m.ts > q.ts && m.ts < post.ts && m.user != q.user && asked.with(m))
            });
        if waiting {
            figures.on_question += 1;
        }
        let latest_asked = threads.asked(latest);
        let answered = people.iter().any(|m| {
            m.ts > latest.ts && m.ts < post.ts && m.user != latest.user && latest_asked.with(m)
        });
        if is_question(&latest.text) && !answered {
            figures.on_latest_question += 1;
        }
        let until = post.ts.to_datetime() + JOIN_WITHIN;
        if people.iter().any(|m| {
            m.ts > post.ts
                && m.ts.to_datetime() <= until
                && m.user != latest.user
                && latest_asked.with(m)
        }) {
            figures.preempted += 1;
            figures.cases.preempted.push(post.ts);
        }
    }
}

/// The engaged answers, and their longest run in one thread.
fn count_engaged_runs(out: &mut BTreeMap<ChannelId, Figures>, posts: &[Post]) {
    let mut runs: BTreeMap<(ChannelId, Option<Ts>), usize> = BTreeMap::new();
    for post in posts {
        let run = runs
            .entry((post.channel.clone(), post.thread_ts))
            .or_default();
        if post.engaged {
            *run += 1;
            let figures = out.entry(post.channel.clone()).or_default();
            figures.engaged += 1;
            figures.longest_engaged_run = figures.longest_engaged_run.max(*run);
        } else if !post.unprompted {
            // A mention or a name call starts a new run.
            *run = 0;
        }
    }
}

/// The figures of all channels together.
pub fn total(per_channel: &BTreeMap<ChannelId, Figures>) -> Figures {
    let mut all = Figures::default();
    for figures in per_channel.values() {
        all.add(figures);
    }
    all
}

/// The messages the eval's tests are made of.
#[cfg(test)]
pub(super) mod fixtures {
    use myao_domain::{ChannelId, Message, Ts, UserId};

    /// `secs` seconds after a fixed instant.
    pub(crate) fn ts(secs: u64) -> Ts {
        Ts::from_parts(1_700_000_000 + secs, 0)
    }

    /// A person's message in #C1, at the top level or in `thread`.
    pub(crate) fn said(user: &str, secs: u64, text: &str, thread: Option<u64>) -> Message {
        Message::new(
            ChannelId::parse("C1").expect("id"),
            UserId::parse(user).expect("id"),
            text,
            ts(secs),
            thread.map(ts),
            false,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::fixtures::{said, ts};
    use super::*;

    fn post(secs: u64, thread: Option<u64>, unprompted: bool) -> Post {
        Post {
            channel: ChannelId::parse("C1").expect("id"),
            ts: ts(secs),
            thread_ts: thread.map(ts),
            unprompted,
            engaged: false,
        }
    }

    fn engaged(secs: u64, thread: u64) -> Post {
        Post {
            engaged: true,
            ..post(secs, Some(thread), false)
        }
    }

    fn only(people: &[Message], posts: &[Post]) -> Figures {
        total(&measure(people, posts))
    }

    #[test]
    fn a_question_answered_within_ten_minutes_is_not_left_unanswered() {
        let people = [
            said("UA", 0, "how do I mount a usb stick?", None),
            said("UB", 300, "use the files app", Some(0)),
        ];
        assert_eq!(only(&people, &[]).questions, 0);
    }

    #[test]
    fn a_question_left_alone_is_joined_by_a_post_in_its_thread() {
        let people = [said("UA", 0, "how do I mount a usb stick?", None)];
        let f = only(&people, &[post(400, Some(0), true)]);
        assert_eq!((f.questions, f.joined), (1, 1));
        assert_eq!((f.unprompted, f.on_question), (1, 1));
        assert_eq!(f.precision(), 1.0);
        // Too late, or after another person: not joined.
        let f = only(&people, &[post(2000, Some(0), true)]);
        assert_eq!(f.joined, 0);
        let late = [
            said("UA", 0, "how do I mount a usb stick?", None),
            said("UB", 900, "use the files app", Some(0)),
        ];
        let f = only(&late, &[post(1000, Some(0), true)]);
        assert_eq!((f.questions, f.joined), (1, 0));
    }

    /// Issue 54: the questions left are those the judgment holds open. One
    /// its asker closed within the ten minutes is not left, nor one he
    /// asked again at the top level (the later one is, once); details of
    /// his own keep it left.
    #[test]
    fn a_question_its_asker_closed_or_asked_again_is_not_left() {
        let closed = [
            said(
                "UA",
                0,
                "how do I restore gconf settings to defaults?",
                None,
            ),
            said("UA", 110, "nevermind, I figured it out", Some(0)),
        ];
        assert_eq!(only(&closed, &[]).questions, 0);
        let late = [
            said(
                "UA",
                0,
                "how do I restore gconf settings to defaults?",
                None,
            ),
            said("UA", 900, "nevermind, I figured it out", Some(0)),
        ];
        assert_eq!(only(&late, &[]).questions, 1, "closed after ten minutes");
        let again = [
            said("UA", 0, "is the frequency scaling governor loaded?", None),
            said("UA", 25, "a module", Some(0)),
            said(
                "UA",
                240,
                "is the frequency governor a module I can blacklist?",
                None,
            ),
        ];
        assert_eq!(only(&again, &[]).questions, 1, "asked twice, left once");
        let details = [
            said(
                "UA",
                0,
                "how do I restore gconf settings to defaults?",
                None,
            ),
            said("UA", 60, "it says error 17 when I try", Some(0)),
        ];
        assert_eq!(only(&details, &[]).questions, 1);
    }

    #[test]
    fn another_persons_top_level_message_answers_a_top_level_question() {
        // The rule: the question's conversation is the top level.
        let people = [
            said("UA", 0, "how do I mount a usb stick?", None),
            said("UC", 60, "the game was great last night", None),
        ];
        assert_eq!(only(&people, &[]).questions, 0);
    }

    #[test]
    fn once_a_question_has_a_thread_a_new_top_level_message_is_another_conversation() {
        // The asker adds details in the thread; someone else starts another
        // topic at the top level: the question is still waiting.
        let people = [
            said("UA", 0, "how do I mount a usb stick?", None),
            said("UA", 30, "it is formatted as exfat", Some(0)),
            said("UC", 60, "the game was great last night", None),
        ];
        let posts = [post(600, Some(0), true)];
        let f = only(&people, &posts);
        assert_eq!((f.questions, f.joined), (1, 1));
        assert_eq!((f.on_question, f.preempted), (1, 0));
        // Which questions people left is theirs to say: a post of the bot's
        // in the thread does not make another person's top-level message
        // soon after it another conversation.
        let quick = [
            said("UA", 0, "how do I mount a usb stick?", None),
            said("UC", 480, "use the disks app", None),
        ];
        assert_eq!(only(&quick, &[post(300, Some(0), true)]).questions, 0);
        // The bot's post began the thread: another top-level message after
        // it takes no turn from anyone.
        let later = [
            said("UA", 0, "how do I mount a usb stick?", None),
            said("UC", 900, "the game was great last night", None),
            said("UD", 1200, "anyone around?", None),
        ];
        let f = only(&later, &posts);
        assert_eq!((f.questions, f.joined, f.preempted), (1, 1, 0));
        // A reply in its thread does.
        let answered = [
            said("UA", 0, "how do I mount a usb stick?", None),
            said("UC", 900, "use the disks app", Some(0)),
        ];
        assert_eq!(only(&answered, &posts).preempted, 1);
    }

    #[test]
    fn where_people_talk_in_threads_a_new_top_level_message_answers_no_question() {
        // Five replies, half of the people's messages: threads are the habit.
        let mut people = vec![
            said("UA", 0, "how do I mount a usb stick?", None),
            said("UC", 60, "the game was great", None),
        ];
        for i in 0..5 {
            people.push(said("UD", 70 + i, "it was", Some(60)));
        }
        let f = only(&people, &[post(900, Some(0), true)]);
        assert_eq!((f.questions, f.joined, f.preempted), (1, 1, 0));
        // At the top level, the same next message answers it.
        let flat: Vec<Message> = people
            .iter()
            .filter(|m| m.thread_ts.is_none())
            .cloned()
            .collect();
        assert_eq!(only(&flat, &[]).questions, 0);
    }

    #[test]
    fn a_question_put_to_someone_by_an_at_mention_is_never_left() {
        let people = [said("UA", 0, "<@UB> can you review my patch?", None)];
        assert_eq!(only(&people, &[post(900, Some(0), true)]).questions, 0);
    }

    #[test]
    fn a_post_before_the_second_person_came_is_no_intrusion() {
        let people = [
            said("UA", 0, "how do I mount a usb stick?", None),
            said("UB", 1200, "use the files app", Some(0)),
            said("UA", 1300, "thanks, works", Some(0)),
            said("UB", 1400, "great", Some(0)),
        ];
        let f = only(&people, &[post(700, Some(0), true)]);
        assert_eq!((f.exchanges, f.intruded, f.posted_in), (1, 0, 1));
        let f = only(&people, &[post(1250, Some(0), true)]);
        assert_eq!((f.exchanges, f.intruded, f.posted_in), (1, 1, 1));
        // After the last message: the exchange had ended.
        let f = only(&people, &[post(1500, Some(0), true)]);
        assert_eq!((f.exchanges, f.intruded, f.posted_in), (1, 0, 1));
    }

    #[test]
    fn precision_counts_a_question_its_asker_added_to_strict_precision_does_not() {
        let people = [
            said("UA", 0, "how do I mount a usb stick?", None),
            said("UA", 30, "it is an ntfs one", Some(0)),
        ];
        let f = only(&people, &[post(400, Some(0), true)]);
        assert_eq!((f.on_question, f.on_latest_question), (1, 0));
        assert_eq!((f.precision(), f.strict_precision()), (1.0, 0.0));
    }

    #[test]
    fn a_post_in_a_two_person_exchange_is_an_intrusion() {
        let people = [
            said("UA", 0, "so the build broke", None),
            said("UB", 10, "since monday", Some(0)),
            said("UA", 20, "I will look", Some(0)),
            said("UB", 30, "thanks", Some(0)),
        ];
        let f = only(&people, &[post(15, Some(0), true)]);
        assert_eq!((f.exchanges, f.intruded), (1, 1));
        assert_eq!((f.unprompted, f.on_question), (1, 0));
        // A prompted post (they called it) is not an intrusion.
        let f = only(&people, &[post(15, Some(0), false)]);
        assert_eq!((f.exchanges, f.intruded, f.unprompted), (1, 0, 0));
    }

    #[test]
    fn an_exchange_ending_on_a_question_or_with_three_people_is_not_one() {
        let ends_asking = [
            said("UA", 0, "so the build broke", None),
            said("UB", 10, "since monday", Some(0)),
            said("UA", 20, "I will look", Some(0)),
            said("UB", 30, "can you check the logs too?", Some(0)),
        ];
        assert_eq!(only(&ends_asking, &[]).exchanges, 0);
        let three = [
            said("UA", 0, "so the build broke", None),
            said("UB", 10, "since monday", Some(0)),
            said("UC", 20, "I will look", Some(0)),
            said("UB", 30, "thanks", Some(0)),
        ];
        assert_eq!(only(&three, &[]).exchanges, 0);
    }

    #[test]
    fn rates_per_hour_and_empty_totals_are_zero_safe() {
        let people = [said("UA", 0, "hello", None), said("UB", 7200, "hi", None)];
        let f = only(&people, &[post(100, None, true)]);
        assert_eq!(f.hours, 2.0);
        assert_eq!(f.per_hour(), 0.5);
        let none = Figures::default();
        assert_eq!(
            (
                none.join_rate(),
                none.intrusion_rate(),
                none.precision(),
                none.per_hour()
            ),
            (0.0, 0.0, 0.0, 0.0)
        );
    }

    #[test]
    fn a_post_another_person_follows_within_thirty_minutes_is_preempted() {
        let people = [
            said("UA", 0, "how do I mount a usb stick?", None),
            said("UB", 900, "use the files app", Some(0)),
        ];
        let f = only(&people, &[post(400, Some(0), true)]);
        assert_eq!((f.unprompted, f.preempted), (1, 1));
        assert_eq!(f.preempted_rate(), 1.0);
        // Only the asker spoke after it, or the other came too late: not.
        let asker = [
            said("UA", 0, "how do I mount a usb stick?", None),
            said("UA", 900, "thanks, that worked", Some(0)),
        ];
        assert_eq!(only(&asker, &[post(400, Some(0), true)]).preempted, 0);
        let late = [
            said("UA", 0, "how do I mount a usb stick?", None),
            said("UB", 3000, "use the files app", Some(0)),
        ];
        assert_eq!(only(&late, &[post(400, Some(0), true)]).preempted, 0);
    }

    #[test]
    fn engaged_answers_are_counted_in_runs_that_a_call_ends() {
        let people = [said("UA", 0, "how do I mount a usb stick?", None)];
        let posts = [
            post(100, Some(0), true),
            engaged(200, 0),
            engaged(300, 0),
            post(400, Some(0), false),
            engaged(500, 0),
            engaged(600, 7),
        ];
        let f = only(&people, &posts);
        assert_eq!((f.unprompted, f.engaged, f.longest_engaged_run), (1, 4, 2));
        assert_eq!(f.engaged_per_unprompted(), 4.0);
    }
}
