//! What a new message sets in motion.

use crate::job::{JudgmentJob, ResponseJob};
use chrono::{DateTime, Duration, Utc};

use super::address::calls;
use super::ids::{Ts, UserId};
use super::job::Job;
use super::message::Message;
use super::reply::{closing, Reply};
pub use super::rules::{waits_on_its_own, QUESTION_WAITS_PER_HOUR};
use super::settings::Settings;
use super::text::mentions_user;

/// The wait before judging: `min_wait` varied by +-`jitter_ratio`, with
/// `unit` drawn uniformly from [0, 1) by the caller's random source.
pub fn jittered_wait(min_wait_seconds: u32, jitter_ratio: f64, unit: f64) -> Duration {
    let unit = if unit.is_finite() {
        unit.clamp(0.0, 1.0)
    } else {
        0.5
    };
    let ratio = jitter_ratio.clamp(0.0, 1.0);
    let factor = 1.0 + ratio * (2.0 * unit - 1.0);
    let millis = (f64::from(min_wait_seconds) * 1000.0 * factor)
        .round()
        .max(0.0);
    // At most 2 * 86_400_000 ms, far inside i64.
    Duration::milliseconds(millis as i64)
}

/// Why a message is addressed to the bot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Addressed {
    /// `<@bot>`, or delivered as `app_mention`.
    Mention,
    /// Written in a direct message with the bot.
    Direct,
    /// The message calls the bot by a name (`persona_name`,
    /// `name_aliases`): "myao, ...", "hey myao", 「ねえみゃお」. Talk about
    /// it ("myao is down") is no call ([`super::address`]).
    Name,
    /// A reply in a thread where the bot spoke within
    /// `engagement_window_seconds`: the conversation is with it.
    Engaged,
}

/// Whether `message` is addressed to the bot, and why. A message that
/// @-mentions someone else and not the bot is addressed to them, whatever
/// names it holds.
pub fn addressed(
    message: &Message,
    bot: Option<&UserId>,
    app_mention: bool,
    direct: bool,
    settings: &Settings,
) -> Option<Addressed> {
    if app_mention || bot.is_some_and(|b| mentions_user(&message.text, b)) {
        return Some(Addressed::Mention);
    }
    if direct {
        return Some(Addressed::Direct);
    }
    if message.text.contains("<@") {
        return None;
    }
    calls(&message.text, &settings.names()).then_some(Addressed::Name)
}

/// What makes a thread reply an answer to the bot ([`engaged`]).
#[derive(Debug, Clone, Copy)]
pub struct Engagement<'a> {
    pub bot: &'a UserId,
    /// `engagement_window_seconds`: the bot spoke this recently.
    pub window: Duration,
    /// The bot's names (`persona_name`, `name_aliases`): a message calling
    /// it by one starts a new run.
    pub names: &'a [&'a str],
    /// `max_engaged_answers`: the bot answers this many replies in a row in
    /// one thread without being called again.
    pub run_limit: u32,
}

/// Whether `message`, not otherwise addressed, answers the bot: a reply in
/// a thread where the bot spoke within the window (`thread` holds the
/// thread's recent messages, its root among them when it was read), that
///
/// - comes from the person the bot answered (the last person before the
///   bot's message), or from the thread's only person besides the bot;
/// - follows the bot's message with no other person's message between;
/// - is not addressed to someone else: no @-mention, no quote of another
///   person's words;
/// - is within the run: the bot has written at most `run_limit` messages
///   in the thread since it was last mentioned or named there (the first
///   of them the one that opened the run).
///
/// People who talk to each other under the bot's message are not talking
/// to it: their replies are judged like any other message.
pub fn engaged(message: &Message, thread: &[Message], e: &Engagement<'_>) -> bool {
    if !may_be_engaged(message) {
        return false;
    }
    let mut before: Vec<&Message> = thread.iter().filter(|m| m.ts < message.ts).collect();
    before.sort_by_key(|m| m.ts);
    before.dedup_by_key(|m| m.ts);
    let Some(spoke) = before.iter().rposition(|m| m.user == *e.bot) else {
        return false;
    };
    if !spoke_within(before[spoke].ts, message, e.window) {
        return false;
    }
    let person = |m: &&&Message| !m.is_bot && m.user != *e.bot;
    if before[spoke + 1..]
        .iter()
        .filter(person)
        .any(|m| m.user != message.user)
    {
        return false;
    }
    let answered = before[..spoke].iter().rev().find(person);
    let only_other = before.iter().filter(person).all(|m| m.user == message.user);
    if !(only_other || answered.is_some_and(|a| a.user == message.user)) {
        return false;
    }
    if quotes_another(message, &before, e.bot) {
        return false;
    }
    let calls =
        |m: &&Message| !m.is_bot && (mentions_user(&m.text, e.bot) || calls(&m.text, e.names));
    let run_start = before.iter().rposition(calls).map_or(0, |i| i + 1);
    let answers = before[run_start..]
        .iter()
        .filter(|m| m.user == *e.bot)
        .count();
    answers <= e.run_limit as usize
}

/// Whether `message` quotes (a `>` line, as Slack writes it: `&gt;`) words
/// of a person other than its author and the bot, among `before`.
fn quotes_another(message: &Message, before: &[&Message], bot: &UserId) -> bool {
    message
        .text
        .lines()
        .filter_map(|l| {
            let l = l.trim_start();
            l.strip_prefix("&gt;").or_else(|| l.strip_prefix('>'))
        })
        .map(str::trim)
        .filter(|q| !q.is_empty())
        .any(|q| {
            before
                .iter()
                .any(|m| m.user != message.user && m.user != *bot && m.text.contains(q))
        })
}

/// Whether [`engaged`] could hold for `message` at all: a thread reply that
/// @-mentions nobody. Else its thread need not be read.
pub fn may_be_engaged(message: &Message) -> bool {
    message.thread_ts.is_some() && !message.text.contains("<@")
}

/// Whether a message written at `ts` came within `window` before `message`.
/// A thread's root older than that cannot make the reply engaged, whoever
/// wrote it: it need not be read.
pub fn spoke_within(ts: Ts, message: &Message, window: Duration) -> bool {
    ts < message.ts && message.ts.to_datetime() - window <= ts.to_datetime()
}

/// The form of the answer to a message addressed to the bot: words (the
/// reply model decides how many), unless the message only thanks or greets
/// it, which earns a reaction.
pub fn addressed_reply(text: &str, settings: &Settings) -> Reply {
    match closing(text, &settings.names()) {
        Some(kind) => Reply::Reaction {
            emoji: kind.emoji(&settings.default_reaction),
        },
        None => Reply::Full,
    }
}

/// The routing of a new message.
#[derive(Debug, Clone, PartialEq)]
pub enum Route {
    /// Reply now, without judgment (a mention).
    RespondNow(Job),
    /// Judge the conversation at `at`; an earlier pending judgment of the
    /// same conversation is replaced.
    JudgeAt { at: DateTime<Utc>, job: Job },
    /// Nothing to do (a bot wrote it, or autonomous replies are off).
    Nothing,
}

/// Decides what a newly stored message triggers. `mentioned` is true when the
/// event itself was an `app_mention`; a `<@bot>` in the text counts too.
pub fn route(
    message: &Message,
    bot: Option<&UserId>,
    mentioned: bool,
    settings: &Settings,
    now: DateTime<Utc>,
    unit: f64,
) -> Route {
    if message.is_bot || bot.is_some_and(|b| *b == message.user) {
        return Route::Nothing;
    }
    let mentioned = mentioned || bot.is_some_and(|b| mentions_user(&message.text, b));
    if mentioned {
        return Route::RespondNow(Job::Response(ResponseJob {
            channel: message.channel.clone(),
            thread_ts: message.thread_ts,
            newest_ts: message.ts,
            mention: true,
            reply: addressed_reply(&message.text, settings),
            seen_ts: None,
            grounds: None,
        }));
    }
    if settings.thresholds_in(&message.channel).is_none() {
        return Route::Nothing;
    }
    // A question gets a wait of its own, under its thread's key: the
    // channel's other top-level messages do not restart it, a reply in
    // its thread does (`ingest` bounds how many a channel gets).
    let thread_ts = match message.thread_ts {
        Some(root) => Some(root),
        None => waits_on_its_own(message).then_some(message.ts),
    };
    Route::JudgeAt {
        at: now + jittered_wait(settings.min_wait_seconds, settings.jitter_ratio, unit),
        job: Job::Judgment(JudgmentJob {
            channel: message.channel.clone(),
            thread_ts,
            newest_ts: message.ts,
        }),
    }
}

/// The same judgment on the top level's wait: a question over the
/// channel's [`QUESTION_WAITS_PER_HOUR`].
pub fn on_the_top_level(route: Route) -> Route {
    match route {
        Route::JudgeAt {
            at,
            job:
                Job::Judgment(JudgmentJob {
                    channel,
                    thread_ts: _,
                    newest_ts,
                }),
        } => Route::JudgeAt {
            at,
            job: Job::Judgment(JudgmentJob {
                channel,
                thread_ts: None,
                newest_ts,
            }),
        },
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{ChannelId, Ts};
    use crate::job::{JudgmentJob, ResponseJob};

    fn bot() -> UserId {
        UserId::parse("UBOT").unwrap()
    }

    fn message(user: &str, text: &str, thread: Option<&str>) -> Message {
        Message::new(
            ChannelId::parse("C1").unwrap(),
            UserId::parse(user).unwrap(),
            text,
            Ts::parse("100.0").unwrap(),
            thread.map(|t| Ts::parse(t).unwrap()),
            false,
        )
    }

    fn now() -> DateTime<Utc> {
        Ts::parse("100.0").unwrap().to_datetime()
    }

    fn judged(route: Route) -> Job {
        match route {
            Route::JudgeAt { job, .. } => job,
            other => panic!("not a judgment: {other:?}"),
        }
    }

    fn thread_of(job: &Job) -> Option<Ts> {
        match job {
            Job::Judgment(JudgmentJob { thread_ts, .. }) => *thread_ts,
            other => panic!("not a judgment: {other:?}"),
        }
    }

    #[test]
    fn a_top_level_question_waits_on_its_own_under_its_threads_key() {
        let s = Settings::default();
        let route_of = |m: &Message| route(m, Some(&bot()), false, &s, now(), 0.5);
        // A question: its own wait, keyed as its thread is.
        let q = message("U1", "is there a command to list the chains?", None);
        let job = judged(route_of(&q));
        assert_eq!(thread_of(&job), Some(q.ts));
        assert!(waits_on_its_own(&q));
        // Anything else at the top level waits with the top level.
        let chat = message("U1", "lunch was great", None);
        assert_eq!(thread_of(&judged(route_of(&chat))), None);
        // A question put to someone by an @-mention is theirs: the top level.
        let put = message("U1", "<@UBOB> can you review my patch?", None);
        assert_eq!(thread_of(&judged(route_of(&put))), None);
        // A reply waits with its thread, question or not.
        let reply = message("U1", "does it list the nat table too?", Some("50.0"));
        assert_eq!(
            thread_of(&judged(route_of(&reply))),
            Some(Ts::parse("50.0").unwrap())
        );
        assert!(!waits_on_its_own(&reply));
        // Over the channel's bound it waits with the top level.
        let over = on_the_top_level(route_of(&q));
        assert_eq!(thread_of(&judged(over)), None);
    }

    #[test]
    fn a_file_named_after_the_bot_does_not_call_it() {
        let s = Settings {
            persona_name: "myao".into(),
            ..Settings::default()
        };
        let upload = message(
            "U1",
            "new logo draft\n[file: myao.png, png, 2 KB, not opened]",
            None,
        );
        assert_eq!(addressed(&upload, Some(&bot()), false, false, &s), None);
        let called = message(
            "U1",
            "myao, look\n[file: logo.png, png, 2 KB, not opened]",
            None,
        );
        assert_eq!(
            addressed(&called, Some(&bot()), false, false, &s),
            Some(Addressed::Name)
        );
    }

    #[test]
    fn talk_about_the_bot_is_not_addressed_to_it_a_call_is() {
        let s = Settings::default();
        let m = |text: &str| message("U1", text, None);
        for talk in [
            "myao is down again?",
            "should we turn myao off",
            "みゃおって誰が作ったの？",
        ] {
            assert_eq!(
                addressed(&m(talk), Some(&bot()), false, false, &s),
                None,
                "{talk}"
            );
        }
        for call in [
            "hey myao",
            "myao, is the build green?",
            "ねえみゃお、これ何？",
        ] {
            assert_eq!(
                addressed(&m(call), Some(&bot()), false, false, &s),
                Some(Addressed::Name),
                "{call}"
            );
        }
    }

    #[test]
    fn a_message_is_addressed_by_a_mention_a_dm_or_a_name_not_to_someone_else() {
        let s = Settings {
            persona_name: "myao".into(),
            name_aliases: vec!["ミャオ".into()],
            ..Settings::default()
        };
        let b = bot();
        let m = |text: &str| message("U1", text, None);
        assert_eq!(
            addressed(&m("<@UBOT> hi"), Some(&b), false, false, &s),
            Some(Addressed::Mention)
        );
        assert_eq!(
            addressed(&m("hi"), Some(&b), true, false, &s),
            Some(Addressed::Mention)
        );
        assert_eq!(
            addressed(&m("hi"), Some(&b), false, true, &s),
            Some(Addressed::Direct)
        );
        assert_eq!(
            addressed(&m("<@U2> see this"), Some(&b), false, true, &s),
            Some(Addressed::Direct),
            "in a DM everything is for the bot"
        );
        assert_eq!(
            addressed(&m("myao?"), Some(&b), false, false, &s),
            Some(Addressed::Name)
        );
        assert_eq!(
            addressed(&m("ミャオ元気?"), Some(&b), false, false, &s),
            Some(Addressed::Name)
        );
        assert_eq!(
            addressed(&m("<@U2> myao said so"), Some(&b), false, false, &s),
            None,
            "a message to someone else"
        );
        assert_eq!(addressed(&m("hello all"), Some(&b), false, false, &s), None);
    }

    #[test]
    fn jitter_spans_the_documented_range() {
        assert_eq!(jittered_wait(300, 0.3, 0.0), Duration::seconds(210));
        assert_eq!(jittered_wait(300, 0.3, 0.5), Duration::seconds(300));
        assert_eq!(
            jittered_wait(300, 0.3, 0.99),
            Duration::milliseconds(388_200)
        );
        assert!(
            jittered_wait(300, 0.3, 0.999_999) < Duration::seconds(390) + Duration::milliseconds(1)
        );
        assert_eq!(jittered_wait(300, 0.0, 0.9), Duration::seconds(300));
        assert_eq!(jittered_wait(0, 0.3, 0.9), Duration::zero());
        assert_eq!(jittered_wait(300, 0.3, f64::NAN), Duration::seconds(300));
    }

    #[test]
    fn a_mention_is_answered_now_without_judgment() {
        let m = message("U1", "hey <@UBOT> what's up", Some("50.0"));
        let r = route(&m, Some(&bot()), false, &Settings::default(), now(), 0.5);
        assert_eq!(
            r,
            Route::RespondNow(Job::Response(ResponseJob {
                channel: m.channel.clone(),
                thread_ts: m.thread_ts,
                newest_ts: m.ts,
                mention: true,
                reply: Reply::Full,
                seen_ts: None,
                grounds: None,
            }))
        );
        let labelled = message("U1", "<@UBOT|myao> hi", None);
        assert!(matches!(
            route(
                &labelled,
                Some(&bot()),
                false,
                &Settings::default(),
                now(),
                0.5
            ),
            Route::RespondNow(_)
        ));
        let app_mention = message("U1", "no tag here", None);
        assert!(matches!(
            route(&app_mention, None, true, &Settings::default(), now(), 0.5),
            Route::RespondNow(_)
        ));
    }

    #[test]
    fn a_plain_thanks_or_greeting_to_the_bot_earns_a_reaction_not_words() {
        let settings = Settings::default();
        let reply = |text: &str| match route(
            &message("U1", text, None),
            Some(&bot()),
            false,
            &settings,
            now(),
            0.5,
        ) {
            Route::RespondNow(Job::Response(ResponseJob { reply, .. })) => reply,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            reply("<@UBOT> thanks!"),
            Reply::Reaction {
                emoji: settings.default_reaction.clone()
            }
        );
        assert_eq!(
            reply("おはよう <@UBOT>"),
            Reply::Reaction {
                emoji: crate::EmojiName::wave()
            }
        );
        assert_eq!(reply("<@UBOT> thanks, and one more thing?"), Reply::Full);
    }

    #[test]
    fn another_message_schedules_a_judgment_after_the_jittered_wait() {
        let m = message("U1", "anyone around?", None);
        match route(&m, Some(&bot()), false, &Settings::default(), now(), 0.0) {
            Route::JudgeAt { at, job } => {
                assert_eq!(at, now() + Duration::seconds(210));
                assert_eq!(
                    job,
                    Job::Judgment(JudgmentJob {
                        channel: m.channel.clone(),
                        thread_ts: None,
                        newest_ts: m.ts
                    })
                );
            }
            other => panic!("expected a judgment, got {other:?}"),
        }
    }

    #[test]
    fn bots_never_trigger_anything() {
        let own = message("UBOT", "<@UBOT> talking to myself", None);
        assert_eq!(
            route(&own, Some(&bot()), true, &Settings::default(), now(), 0.5),
            Route::Nothing
        );
        let mut other = message("UOTHER", "beep", None);
        other.is_bot = true;
        assert_eq!(
            route(
                &other,
                Some(&bot()),
                false,
                &Settings::default(),
                now(),
                0.5
            ),
            Route::Nothing
        );
    }

    #[test]
    fn with_autonomous_replies_off_only_mentions_are_answered() {
        let settings = Settings {
            autonomous_replies: false,
            ..Settings::default()
        };
        let plain = message("U1", "hello", None);
        assert_eq!(
            route(&plain, Some(&bot()), false, &settings, now(), 0.5),
            Route::Nothing
        );
        let mention = message("U1", "<@UBOT> hello", None);
        assert!(matches!(
            route(&mention, Some(&bot()), false, &settings, now(), 0.5),
            Route::RespondNow(_)
        ));
    }

    #[test]
    fn mention_detection_is_exact() {
        assert!(mentions_user("<@UBOT>", &bot()));
        assert!(!mentions_user("<@UBOT2>", &bot()));
        assert!(!mentions_user("@UBOT", &bot()));
    }

    fn said(user: &str, secs: i64, text: &str) -> Message {
        Message::new(
            ChannelId::parse("C1").unwrap(),
            UserId::parse(user).unwrap(),
            text,
            Ts::from_parts(1_000 + secs as u64, 0),
            Some(Ts::from_parts(1_000, 0)),
            user == "UBOT",
        )
    }

    fn answers_bot(thread: &[Message], reply: &Message, run_limit: u32) -> bool {
        let b = bot();
        engaged(
            reply,
            thread,
            &Engagement {
                bot: &b,
                window: Duration::seconds(300),
                names: &["myao"],
                run_limit,
            },
        )
    }

    #[test]
    fn a_reply_answers_the_bot_when_it_comes_from_the_person_it_answered() {
        let mut root = said("UA", 0, "anyone know how to mount a usb disk?");
        root.thread_ts = None;
        let thread = [root, said("UBOT", 60, "try udisksctl mount")];
        assert!(answers_bot(
            &thread,
            &said("UA", 120, "it says not authorized"),
            3
        ));
        // A third person is talking to the asker, not to the bot.
        assert!(!answers_bot(
            &thread,
            &said("UC", 120, "you need polkit"),
            3
        ));
        // Someone else spoke in between: the reply may be to them.
        let busy = [
            thread[0].clone(),
            thread[1].clone(),
            said("UC", 90, "or use the gui"),
        ];
        assert!(!answers_bot(&busy, &said("UA", 120, "which one"), 3));
        // Addressed to someone else: a mention, or a quote of their words.
        assert!(!answers_bot(&thread, &said("UA", 120, "<@UC> did you?"), 3));
        let quoting = said("UA", 120, "&gt; anyone know how\nnot me");
        assert!(answers_bot(&thread, &quoting, 3), "quoting himself");
        let mut asked = [
            thread[0].clone(),
            said("UC", 20, "use the gui"),
            said("UA", 30, "which gui?"),
            said("UBOT", 60, "the files app"),
        ];
        asked[0].thread_ts = None;
        assert!(answers_bot(&asked, &said("UA", 120, "where is it?"), 3));
        let quoting = said("UA", 120, "&gt; use the gui\nwhere is it?");
        assert!(!answers_bot(&asked, &quoting, 3), "quotes another");
        // Past the window, or the bot never spoke: judged.
        assert!(!answers_bot(&thread, &said("UA", 400, "still there?"), 3));
        assert!(!answers_bot(&thread[..1], &said("UA", 120, "hello?"), 3));
    }

    #[test]
    fn the_threads_only_other_person_answers_the_bots_own_thread() {
        let mut own = said("UBOT", 0, "lunch is at noon");
        own.thread_ts = None;
        assert!(answers_bot(
            std::slice::from_ref(&own),
            &said("UB", 60, "thanks!"),
            3
        ));
        let thread = [
            own,
            said("UB", 60, "thanks!"),
            said("UBOT", 70, "you're welcome"),
        ];
        assert!(!answers_bot(&thread, &said("UC", 90, "where?"), 3));
    }

    #[test]
    fn a_run_of_engaged_answers_stops_at_the_limit_until_the_bot_is_called() {
        let mut root = said("UA", 0, "how do I rebase?");
        root.thread_ts = None;
        // The bot's first post opened the run; two engaged answers since.
        let mut thread = vec![
            root,
            said("UBOT", 10, "like this"),
            said("UA", 20, "and then?"),
            said("UBOT", 30, "then this"),
            said("UA", 40, "and then?"),
            said("UBOT", 50, "then this"),
        ];
        assert!(answers_bot(&thread, &said("UA", 60, "and then?"), 3));
        assert!(!answers_bot(&thread, &said("UA", 60, "and then?"), 2));
        thread.push(said("UA", 60, "and then?"));
        thread.push(said("UBOT", 70, "then this"));
        assert!(!answers_bot(&thread, &said("UA", 80, "and then?"), 3));
        // A name call starts a new run.
        thread.push(said("UA", 85, "myao, one more thing"));
        thread.push(said("UBOT", 88, "sure"));
        assert!(answers_bot(&thread, &said("UA", 95, "great, and?"), 3));
    }
}
