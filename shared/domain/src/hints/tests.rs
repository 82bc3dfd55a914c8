//! The hints' tables of cases.

// A table of cases reads best whole (clippy.toml holds production code
// to 80 lines).
#![allow(clippy::too_many_lines)]

use super::*;
use crate::settings::{DEFAULT_NEGATIVE_REACTIONS, DEFAULT_POSITIVE_REACTIONS};

/// What each message, replying to the bot or mentioning it, tells it,
/// with the names `myao`, `みゃお`, `ミャオ` and its user id `UBOT`.
#[test]
fn a_hint_in_words_is_told_from_words_that_only_look_like_one() {
    const HOUR: Option<Hint> = Some(Hint::Mute { minutes: 60 });
    const POS: Option<Hint> = Some(Hint::Positive);
    const NEG: Option<Hint> = Some(Hint::Negative);
    let mute = |minutes| Some(Hint::Mute { minutes });
    let names = ["myao", "みゃお", "ミャオ", "UBOT"];
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
        .filter(|(text, want)| words_hint(text, &names) != *want)
        .map(|(text, want)| format!("{text:?}: {:?}, want {want:?}", words_hint(text, &names)))
        .collect();
    assert!(cases.len() >= 40);
    assert!(
        wrong.is_empty(),
        "{} wrong:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

#[test]
fn the_bots_own_mention_is_told_from_anothers_by_its_id() {
    assert_eq!(
        words_hint("<@UBOT> thanks", &["myao", "UBOT"]),
        Some(Hint::Positive)
    );
    // Without its id every mention may be another's: no hint.
    assert_eq!(words_hint("<@UBOT> thanks", &["myao"]), None);
    assert_eq!(words_hint("thanks myao", &[]), None);
    assert_eq!(words_hint("thanks", &[]), Some(Hint::Positive));
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
