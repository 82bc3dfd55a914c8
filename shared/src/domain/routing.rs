//! What a new message sets in motion.

use chrono::{DateTime, Duration, Utc};

use super::ids::UserId;
use super::job::Job;
use super::message::Message;
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
        });
    }
    if !settings.autonomous_replies {
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
                mention: true
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
