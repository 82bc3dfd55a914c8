//! The hints' tables of cases.

// A table of cases reads best whole (clippy.toml holds production code
// to 80 lines).
#![allow(clippy::too_many_lines)]

use super::*;
use crate::settings::{DEFAULT_NEGATIVE_REACTIONS, DEFAULT_POSITIVE_REACTIONS};
use chrono::Weekday;
use chrono_tz::Tz;

/// What `text` tells the bot with the names `myao`, `みゃお`, `ミャオ` and its
/// user id `UBOT`, with [`TODAY`] minutes left of the day.
fn heard(text: &str) -> Option<Hint> {
    let names = ["myao", "みゃお", "ミャオ", "UBOT"];
    words_hint(text, &names, RestOfDay::minutes(TODAY)).map(|w| w.hint)
}

/// Minutes left of the day in the tables: 7 hours (17:00).
const TODAY: u32 = 7 * 60;

/// What each message, replying to the bot or mentioning it, tells it.
#[test]
fn a_hint_in_words_is_told_from_words_that_only_look_like_one() {
    const HOUR: Option<Hint> = Some(Hint::Mute { minutes: 60 });
    const POS: Option<Hint> = Some(Hint::Positive);
    const NEG: Option<Hint> = Some(Hint::Negative);
    let mute = |minutes| Some(Hint::Mute { minutes });
    let cases: &[(&str, Option<Hint>)] = &[
        // Quiet, English.
        ("not now myao", HOUR),
        ("myao, not now", HOUR),
        ("Not now, thanks!", HOUR),
        ("be quiet", HOUR),
        ("shush", HOUR),
        ("shhh myao", HOUR),
        ("please stop talking", HOUR),
        ("stop talking about the deploy, myao", HOUR),
        ("shut up", HOUR),
        ("can you be quiet for a bit?", HOUR),
        ("quiet for an hour", HOUR),
        ("be quiet for 2 hours please", mute(120)),
        ("go away for 30 minutes", mute(30)),
        ("hey myao, quiet for half an hour", mute(30)),
        ("<@UBOT> stop. for 3h", mute(180)),
        ("mute for a minute", mute(5)),
        ("go away for 3 days", mute(24 * 60)),
        ("thanks, but not now", HOUR),
        // Quiet, Japanese.
        ("みゃお、ちょっと静かにしてて", HOUR),
        ("静かにして", HOUR),
        ("黙って", HOUR),
        ("うるさい", HOUR),
        ("今はいいよ", HOUR),
        ("1時間黙ってて", HOUR),
        ("30分静かに", mute(30)),
        ("２時間だけ静かにしててね", mute(120)),
        ("みゃおちゃん、三十分黙っててください", mute(30)),
        ("ありがとう、でも今はいいや", HOUR),
        // Too much.
        ("you talk too much", NEG),
        ("nobody asked, myao", NEG),
        ("I wasn't talking to you", NEG),
        ("しゃべりすぎ", NEG),
        ("呼んでないよ", NEG),
        // Welcome.
        ("thanks", POS),
        ("thank you!", POS),
        ("thanks, that was it", POS),
        ("that helped", POS),
        ("thanks so much for the summary myao", POS),
        ("ok thx", POS),
        ("<@UBOT> thank you, I'll try that tomorrow", POS),
        ("ありがとう", POS),
        ("助かった", POS),
        ("それだ！", POS),
        ("みゃお、教えてくれてありがとう！", POS),
        ("ありがとうございます", POS),
        ("本当に助かりました", POS),
        // Only looks like one.
        ("thanks to the new cache, the build is faster", None),
        ("don't stop", None),
        ("not now, but tomorrow I'll try it", None),
        ("thanks, but that didn't work", None),
        ("thanks anyway", None),
        ("no thanks", None),
        ("&gt; be quiet\nthat's what she said", None),
        ("he said \"shut up\" lol", None),
        ("run `myao --quiet` to stop it", None),
        ("stop the deploy", None),
        ("I shut up the alarm", None),
        ("thanks <@UALICE>!", None),
        ("<@UALICE> be quiet", None),
        ("Thanks Alice!", None),
        ("quiet week, huh", None),
        ("外がうるさい", None),
        ("黙ってたけど実はそれ知ってた", None),
        ("静かにしてって言われた", None),
        ("それだと動かないよ", None),
        ("田中さんにありがとうって伝えて", None),
        ("what does this error mean?", None),
        ("", None),
    ];
    let wrong: Vec<String> = cases
        .iter()
        .filter(|(text, want)| heard(text) != *want)
        .map(|(text, want)| format!("{text:?}: {:?}, want {want:?}", heard(text)))
        .collect();
    assert!(cases.len() >= 40);
    assert!(
        wrong.is_empty(),
        "{} wrong:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

/// Issue 56: a request verb with a colon quotes what follows ("translate
/// to Japanese: be quiet for an hour" was taken as a mute, the request
/// unanswered); any duration mutes, held to a day ("be quiet for a week",
/// "until tomorrow", 「1週間黙ってて」 were no hint); "be quiet in here" is a
/// mute; "you can talk again", 「もう話していいよ」 welcome it back.
#[test]
fn requests_quote_durations_mute_and_a_mute_is_lifted_in_words() {
    const HOUR: Option<Hint> = Some(Hint::Mute { minutes: 60 });
    const DAY: Option<Hint> = Some(Hint::Mute { minutes: 24 * 60 });
    const REST: Option<Hint> = Some(Hint::Mute { minutes: TODAY });
    const POS: Option<Hint> = Some(Hint::Positive);
    let cases: &[(&str, Option<Hint>)] = &[
        // A request's colon quotes.
        ("translate to Japanese: be quiet for an hour", None),
        ("reply to Bob: not now, I'm busy", None),
        ("how do I tell my cat: not now?", None),
        ("say: shut up", None),
        ("what does this mean: 黙って", None),
        ("英語に訳して：静かにして", None),
        ("「ありがとう」を英語で：thanks", None),
        // A colon after no request, or a request on another line, does not.
        ("myao: be quiet", HOUR),
        ("ok: not now", HOUR),
        ("translate: hello\nbe quiet for an hour", HOUR),
        ("thanks. reply to bob: not now", POS),
        ("myao: translate this: be quiet", None),
        ("ありがとう。英語に訳して：静かにして", POS),
        ("静かに。：。：", HOUR),
        // Any duration, held to a day.
        ("be quiet for a week", DAY),
        ("shush for 2 weeks", DAY),
        ("not now, for a month", DAY),
        ("go away for a year", DAY),
        ("quiet for 1w", DAY),
        ("1週間黙ってて", DAY),
        ("２週間静かにして", DAY),
        ("一ヶ月黙ってて", DAY),
        ("1年静かにしてて", DAY),
        // The rest of the day.
        ("be quiet until tomorrow", REST),
        ("not now, until tomorrow", REST),
        ("quiet for the rest of the day please", REST),
        ("shh, today", REST),
        ("be quiet today", REST),
        ("today, not now", REST),
        (
            "not now until tomorrow morning",
            Some(Hint::Mute {
                minutes: TODAY + 9 * 60,
            }),
        ),
        ("今日はもう黙ってて", REST),
        ("明日まで静かにしてて", REST),
        ("今日いっぱい静かにしてね", REST),
        // In here.
        ("please be quiet in here for an hour", HOUR),
        ("be quiet in here", HOUR),
        ("shush in this channel", HOUR),
        ("ここでは静かにして", HOUR),
        ("be quiet in the meeting", None),
        // Lifted.
        ("you can talk again", POS),
        ("thanks, you can talk again", POS),
        ("ok you can speak again now", POS),
        ("unmute", POS),
        ("もう話していいよ", POS),
        ("話してもいいよ", POS),
        ("you can talk about it later", None),
    ];
    let wrong: Vec<String> = cases
        .iter()
        .filter(|(text, want)| heard(text) != *want)
        .map(|(text, want)| format!("{text:?}: {:?}, want {want:?}", heard(text)))
        .collect();
    assert!(
        wrong.is_empty(),
        "{} wrong:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

/// "Until Monday", 「週末は」: a mute until that day begins where the
/// workspace is, held to a day like any other (and then said so).
#[test]
fn a_day_of_the_week_the_weekend_or_the_week_mutes_until_it_comes() {
    let on = |day: Weekday, text: &str| {
        words_hint(text, &["myao"], RestOfDay::minutes(TODAY).on(day)).map(|w| (w.hint, w.capped))
    };
    let mute = |minutes: u32, capped: bool| Some((Hint::Mute { minutes }, capped));
    let (rest, day) = (mute(TODAY, false), mute(24 * 60, true));
    type Heard = Option<(Hint, bool)>;
    let cases: &[(Weekday, &str, Heard)] = &[
        (Weekday::Sun, "be quiet until monday", rest),
        (Weekday::Sun, "not now, till next Monday", rest),
        (Weekday::Sun, "quiet for the weekend please", rest),
        (Weekday::Sun, "shush until next week", rest),
        (Weekday::Sun, "be quiet this week", rest),
        (Weekday::Sun, "月曜まで静かにして", rest),
        (Weekday::Sun, "来週の月曜まで黙ってて", rest),
        (Weekday::Sun, "週末は静かにしてて", rest),
        (Weekday::Sun, "今週いっぱい黙ってて", rest),
        (Weekday::Wed, "be quiet until thursday", rest),
        (Weekday::Wed, "木曜日まで静かにしてね", rest),
        (Weekday::Fri, "be quiet until the weekend", rest),
        (Weekday::Fri, "週末まで黙ってて", rest),
        (
            Weekday::Wed,
            "not now, until thursday morning",
            mute(TODAY + 9 * 60, false),
        ),
        (
            Weekday::Wed,
            "木曜の朝まで静かにして",
            mute(TODAY + 9 * 60, false),
        ),
        // Longer than a day: held to one, and said.
        (Weekday::Sat, "be quiet for the weekend", day),
        (Weekday::Wed, "quiet until friday", day),
        (Weekday::Mon, "be quiet until monday", day),
        (Weekday::Thu, "土日は黙ってて", day),
        (Weekday::Tue, "quiet until next friday", day),
        (Weekday::Mon, "来週の火曜まで静かにして", day),
        (Weekday::Sat, "not now, till next monday", day),
        (Weekday::Sun, "be quiet till the weekend is over", rest),
        (Weekday::Sun, "今週末は黙ってて", rest),
        (
            Weekday::Wed,
            "stop talking about what we did over the weekend",
            mute(60, false),
        ),
        (Weekday::Sun, "stop talking until monday", rest),
        // Talk about the days is no hint.
        (Weekday::Wed, "monday is a holiday", None),
        (Weekday::Wed, "see you on the weekend", None),
        (Weekday::Wed, "月曜までに終わらせます", None),
    ];
    for (today, text, want) in cases {
        assert_eq!(on(*today, text), *want, "{text} on {today}");
    }
}

#[test]
fn a_day_begins_after_the_rest_of_today_and_the_days_between() {
    let sunday = RestOfDay::minutes(60).on(Weekday::Sun);
    assert_eq!(sunday.until(Weekday::Mon), 60);
    assert_eq!(sunday.until(Weekday::Wed), 60 + 2 * 24 * 60);
    assert_eq!(sunday.until(Weekday::Sun), 60 + 6 * 24 * 60, "a week on");
    let tuesday = RestOfDay::minutes(60).on(Weekday::Tue);
    assert_eq!(tuesday.until_next(Weekday::Fri), 60 + 9 * 24 * 60);
    assert_eq!(tuesday.until_next(Weekday::Mon), 60 + 5 * 24 * 60);
}

#[test]
fn a_mute_asked_for_longer_than_a_day_says_it_was_held() {
    let said = |text: &str| words_hint(text, &["myao"], RestOfDay::minutes(TODAY));
    let capped = |text: &str| said(text).map(|w| w.capped);
    assert_eq!(capped("be quiet for a week"), Some(true));
    assert_eq!(capped("go away for 3 days"), Some(true));
    assert_eq!(capped("1週間黙ってて"), Some(true));
    assert_eq!(capped("be quiet for 24 hours"), Some(false));
    assert_eq!(capped("be quiet until tomorrow"), Some(false));
    assert_eq!(capped("not now"), Some(false));
    assert_eq!(
        capped("mute for a minute"),
        Some(false),
        "held up, not capped"
    );
    assert_eq!(capped("thanks"), Some(false));
}

#[test]
fn the_rest_of_the_day_is_until_midnight_where_the_workspace_is() {
    use chrono::TimeZone;
    let now = chrono::Utc.with_ymd_and_hms(2026, 1, 5, 8, 0, 0).unwrap();
    assert_eq!(RestOfDay::at(now, Tz::UTC).left(), 16 * 60);
    assert_eq!(RestOfDay::at(now, chrono_tz::Asia::Tokyo).left(), 7 * 60);
    assert_eq!(
        RestOfDay::at(now, chrono_tz::America::New_York).left(),
        21 * 60
    );
    // A second before midnight: a minute, not none.
    let late = chrono::Utc
        .with_ymd_and_hms(2026, 1, 5, 23, 59, 59)
        .unwrap();
    assert_eq!(RestOfDay::at(late, Tz::UTC).left(), 1);
    // The day a clock goes back is 25 hours long: at 1:00 after the change,
    // 23 hours are left. Where a midnight is skipped (America/Sao_Paulo
    // until 2019), the day ends an hour on.
    let fall = chrono::Utc.with_ymd_and_hms(2026, 11, 1, 6, 0, 0).unwrap();
    assert_eq!(
        RestOfDay::at(fall, chrono_tz::America::New_York).left(),
        23 * 60
    );
    let skipped = chrono::Utc.with_ymd_and_hms(2018, 11, 3, 12, 0, 0).unwrap();
    assert_eq!(
        RestOfDay::at(skipped, chrono_tz::America::Sao_Paulo).left(),
        15 * 60
    );
}

#[test]
fn the_bots_own_mention_is_told_from_anothers_by_its_id() {
    let hint = |text: &str, names: &[&str]| {
        words_hint(text, names, RestOfDay::minutes(TODAY)).map(|w| w.hint)
    };
    assert_eq!(
        hint("<@UBOT> thanks", &["myao", "UBOT"]),
        Some(Hint::Positive)
    );
    // Without its id every mention may be another's: no hint.
    assert_eq!(hint("<@UBOT> thanks", &["myao"]), None);
    assert_eq!(hint("thanks myao", &[]), None);
    assert_eq!(hint("thanks", &[]), Some(Hint::Positive));
}

#[test]
fn a_reaction_is_a_hint_by_the_lists_with_any_skin_tone() {
    let s = Settings::default();
    let hint = |name: &str| reaction_hint(&reaction_emoji(name).unwrap(), &s);
    assert_eq!(hint("+1"), Some(Hint::Positive));
    assert_eq!(hint("+1::skin-tone-2"), Some(Hint::Positive));
    assert_eq!(hint("pray::skin-tone-5"), Some(Hint::Positive));
    assert_eq!(hint("star-struck"), Some(Hint::Positive));
    assert_eq!(hint("-1"), Some(Hint::Negative));
    assert_eq!(hint("shushing_face"), Some(Hint::Negative));
    assert_eq!(hint("eyes"), None);
    assert_eq!(reaction_emoji("::"), None);
    // Set by the workspace; in both lists, neither.
    let (s, issues) = Settings::from_pairs([
        ("positive_reactions", "arigatou, +1"),
        ("negative_reactions", ":+1:,  dame"),
    ]);
    assert!(issues.is_empty(), "{issues:?}");
    let hint = |name: &str| reaction_hint(&EmojiName::parse(name).unwrap(), &s);
    assert_eq!(hint("arigatou"), Some(Hint::Positive));
    assert_eq!(hint("dame"), Some(Hint::Negative));
    assert_eq!(hint("+1"), None);
    assert_eq!(hint("pray"), None);
}

#[test]
fn the_default_reactions_are_emoji_names() {
    let s = Settings::default();
    assert_eq!(s.positive_reactions.len(), DEFAULT_POSITIVE_REACTIONS.len());
    assert_eq!(s.negative_reactions.len(), DEFAULT_NEGATIVE_REACTIONS.len());
}
