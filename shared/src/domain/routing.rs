//! What a new message sets in motion.

use chrono::{DateTime, Duration, Utc};

use super::ids::{Ts, UserId};
use super::job::Job;
use super::message::Message;
use super::reply::{closing, Reply};
use super::settings::Settings;

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

/// Whether `text` mentions `bot` the way Slack encodes it (`<@U123>` or `<@U123|name>`).
pub fn mentions(text: &str, bot: &UserId) -> bool {
    let plain = format!("<@{bot}>");
    let labelled = format!("<@{bot}|");
    text.contains(&plain) || text.contains(&labelled)
}

/// Why a message is addressed to the bot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Addressed {
    /// `<@bot>`, or delivered as `app_mention`.
    Mention,
    /// Written in a direct message with the bot.
    Direct,
    /// The bot's name (`persona_name`, `name_aliases`) is in the text.
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
    if app_mention || bot.is_some_and(|b| mentions(&message.text, b)) {
        return Some(Addressed::Mention);
    }
    if direct {
        return Some(Addressed::Direct);
    }
    if message.text.contains("<@") {
        return None;
    }
    settings
        .names()
        .into_iter()
        .any(|name| names(&message.text, name))
        .then_some(Addressed::Name)
}

/// Whether `text` calls `name`: case-insensitive; for a name in Latin
/// script, a whole word among Latin letters and digits ("myao," and
/// "ねえmyao" yes, "myaomyao" no); for one in another script, anywhere
/// (Japanese has no spaces between words).
pub fn names(text: &str, name: &str) -> bool {
    let name = name.trim().to_lowercase();
    if name.is_empty() {
        return false;
    }
    let text = text.to_lowercase();
    if !name.is_ascii() {
        return text.contains(&name);
    }
    // Latin letters and digits make a word; a Japanese neighbour does not.
    let word_char = |c: char| c.is_ascii_alphanumeric() || c == '_';
    text.match_indices(&name).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + name.len()..].chars().next();
        !before.is_some_and(word_char) && !after.is_some_and(word_char)
    })
}

/// Whether `message`, not otherwise addressed, replies in a thread where
/// `bot` spoke within `window` before it: `thread` holds that thread's
/// recent messages. A message that @-mentions someone is addressed to them.
pub fn engaged(message: &Message, thread: &[Message], bot: &UserId, window: Duration) -> bool {
    may_be_engaged(message)
        && thread
            .iter()
            .any(|m| m.user == *bot && spoke_within(m.ts, message, window))
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
    let mentioned = mentioned || bot.is_some_and(|b| mentions(&message.text, b));
    if mentioned {
        return Route::RespondNow(Job::Response {
            channel: message.channel.clone(),
            thread_ts: message.thread_ts,
            newest_ts: message.ts,
            mention: true,
            reply: addressed_reply(&message.text, settings),
        });
    }
    if settings.thresholds_in(&message.channel).is_none() {
        return Route::Nothing;
    }
    Route::JudgeAt {
        at: now + jittered_wait(settings.min_wait_seconds, settings.jitter_ratio, unit),
        job: Job::Judgment {
            channel: message.channel.clone(),
            thread_ts: message.thread_ts,
            newest_ts: message.ts,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::ids::{ChannelId, Ts};

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

    #[test]
    fn its_name_is_a_whole_word_in_latin_script_and_anywhere_in_japanese() {
        assert!(names("myao, what do you think?", "myao"));
        assert!(names("What do you think, Myao?", "myao"));
        assert!(names("@myao hi", "myao"));
        assert!(!names("the myaomyao crate", "myao"));
        assert!(!names("xmyao", "myao"));
        assert!(names("ねえみゃおどう思う?", "みゃお"));
        assert!(names("ミャオちゃん", "ミャオ"));
        assert!(!names("anything", "  "));
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
            Route::RespondNow(Job::Response {
                channel: m.channel.clone(),
                thread_ts: m.thread_ts,
                newest_ts: m.ts,
                mention: true,
                reply: Reply::Full,
            })
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
            Route::RespondNow(Job::Response { reply, .. }) => reply,
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
                emoji: crate::domain::EmojiName::wave()
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
                    Job::Judgment {
                        channel: m.channel.clone(),
                        thread_ts: None,
                        newest_ts: m.ts
                    }
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
        assert!(mentions("<@UBOT>", &bot()));
        assert!(!mentions("<@UBOT2>", &bot()));
        assert!(!mentions("@UBOT", &bot()));
    }
}
