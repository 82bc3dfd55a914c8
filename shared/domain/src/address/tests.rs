//! The address table: what each message does with the bot's names.

// A table of cases reads best whole (clippy.toml holds production code
// to 80 lines).
#![allow(clippy::too_many_lines)]

use super::*;

/// What each message does with the names `myao`, `みゃお`, `ミャオ`
/// (and `max`, a name that is also a common word, where said).
#[test]
fn a_call_is_told_from_talk_about_it_and_from_no_use_at_all() {
    use NameUse::{Call, Talk};
    let myao = ["myao", "みゃお", "ミャオ"];
    let max = ["max"];
    let cases: &[(&str, &[&str], Option<NameUse>)] = &[
        // Calls, English.
        ("myao, what's the max batch size?", &myao, Some(Call)),
        ("myao: can you summarize this?", &myao, Some(Call)),
        ("hey myao", &myao, Some(Call)),
        ("hey myao, any ideas?", &myao, Some(Call)),
        ("Hi Myao!", &myao, Some(Call)),
        ("what do you think, myao?", &myao, Some(Call)),
        ("thanks, myao", &myao, Some(Call)),
        ("thanks myao!", &myao, Some(Call)),
        ("can myao summarize this thread?", &myao, Some(Call)),
        ("@myao help", &myao, Some(Call)),
        ("myao?", &myao, Some(Call)),
        ("Myao summarize this thread please", &myao, Some(Call)),
        ("myao can you check the logs", &myao, Some(Call)),
        ("ok myao, go ahead", &myao, Some(Call)),
        ("what do you think myao?", &myao, Some(Call)),
        ("hey, myao, can you help?", &myao, Some(Call)),
        ("myao\nwhat is this error?", &myao, Some(Call)),
        ("so myao, what now?", &myao, Some(Call)),
        ("Got it. Myao, can you write it up?", &myao, Some(Call)),
        ("Max, what's the max batch size?", &max, Some(Call)),
        ("hey max", &max, Some(Call)),
        // Calls, Japanese.
        ("みゃお、これ教えて", &myao, Some(Call)),
        ("ねえみゃお", &myao, Some(Call)),
        ("ねえ、みゃお、元気？", &myao, Some(Call)),
        ("みゃおさん、今日の予定は？", &myao, Some(Call)),
        ("みゃおちゃん教えて", &myao, Some(Call)),
        ("ミャオ元気?", &myao, Some(Call)),
        ("みゃお！", &myao, Some(Call)),
        ("おいミャオ、起きて", &myao, Some(Call)),
        ("ねえみゃおどう思う?", &myao, Some(Call)),
        ("ありがとうみゃお", &myao, Some(Call)),
        // Talk about it.
        ("myao is down again?", &myao, Some(Talk)),
        ("I asked myao yesterday and it was wrong", &myao, Some(Talk)),
        ("should we turn myao off", &myao, Some(Talk)),
        ("ask myao", &myao, Some(Talk)),
        ("myao's answer was wrong", &myao, Some(Talk)),
        ("did anyone ask myao?", &myao, Some(Talk)),
        ("have you tried myao?", &myao, Some(Talk)),
        ("did you ask myao?", &myao, Some(Talk)),
        ("hey, myao is down again", &myao, Some(Talk)),
        ("みゃお壊れてる", &myao, Some(Talk)),
        ("myao can summarize threads now", &myao, Some(Talk)),
        ("myao crashed again", &myao, Some(Talk)),
        ("is myao down?", &myao, Some(Talk)),
        ("myao works fine for me", &myao, Some(Talk)),
        ("みゃおって誰が作ったの？", &myao, Some(Talk)),
        ("みゃおに聞いても無駄だよ", &myao, Some(Talk)),
        ("みゃおは賢い", &myao, Some(Talk)),
        ("みゃおさんは今日いないの？", &myao, Some(Talk)),
        ("昨日ミャオが変なこと言ってた", &myao, Some(Talk)),
        ("what is the max batch size", &max, Some(Talk)),
        ("set the retries to max", &max, Some(Talk)),
        ("is the max 10?", &max, Some(Talk)),
        // Not the name at all.
        ("run `myao replay`", &myao, None),
        ("<https://github.com/acme/myao/issues/42>", &myao, None),
        ("see <#C0MYAODEV|myao-dev>", &myao, None),
        ("the myao-bot deploy is green", &myao, None),
        ("myao.example.com is down", &myao, None),
        ("```myao eval --html```", &myao, None),
        ("&gt; myao, stop\nlol", &myao, None),
        ("he said \"myao, stop\" lol", &myao, None),
        ("the myaomyao crate", &myao, None),
        ("myao-sandbox is up", &myao, None),
        ("see https://myao.dev/docs", &myao, None),
        ("acme/myao has a new release", &myao, None),
        ("join #myao for news", &myao, None),
        (
            "new logo\n[file: myao.png, png, 2 KB, not opened]",
            &myao,
            None,
        ),
        ("anything", &["  "], None),
        ("maximum batch size?", &max, None),
    ];
    let wrong: Vec<String> = cases
        .iter()
        .filter(|(text, names, want)| name_use(text, names) != *want)
        .map(|(text, names, want)| format!("{text:?}: {:?}, want {want:?}", name_use(text, names)))
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
fn calls_is_a_call_only() {
    assert!(calls("myao, help", &["myao"]));
    assert!(!calls("myao is down", &["myao"]));
    assert!(!calls("nothing here", &["myao"]));
}

/// Issue 56: talk about the bot answered at once (irregular past tenses,
/// a noun or a place after the name, "@myao" after a verb), calls missed
/// (a question ending with the name, an emoji greeting, a question word
/// after the name, "-san"), and a name that is a common word (`max`)
/// heard in ordinary sentences.
#[test]
fn a_call_is_a_call_and_what_the_rules_cannot_place_is_no_call() {
    use NameUse::{Call, Talk};
    let myao = ["myao", "みゃお", "ミャオ"];
    let max = ["max"];
    let cases: &[(&str, &[&str], NameUse)] = &[
        // Talk, English: past tenses, nouns and places after the name, and
        // a name after a verb or a preposition.
        ("myao made a mistake in the summary", &myao, Talk),
        ("myao in prod is slow today", &myao, Talk),
        ("I pinged @myao yesterday", &myao, Talk),
        ("so myao wrote the wrong date again", &myao, Talk),
        ("myao thought it was Friday", &myao, Talk),
        ("myao gave me a weird answer", &myao, Talk),
        ("myao left a reply in the wrong thread", &myao, Talk),
        ("myao on staging answers twice", &myao, Talk),
        ("myao summary was off this morning", &myao, Talk),
        ("yesterday I asked @myao about the deploy", &myao, Talk),
        ("we told @myao to stop", &myao, Talk),
        ("who wrote myao?", &myao, Talk),
        ("what's wrong with myao?", &myao, Talk),
        ("anyone else using myao?", &myao, Talk),
        ("can myao be turned off in this channel?", &myao, Talk),
        ("ok myao made it worse", &myao, Talk),
        ("the answer from @myao was wrong", &myao, Talk),
        ("is this myao?", &myao, Talk),
        ("fyi myao is down", &myao, Talk),
        ("myao-san is out today", &myao, Talk),
        // Talk, Japanese: its state asked about, with no pause.
        ("みゃお今日遅くない？", &myao, Talk),
        ("みゃお落ちてる？", &myao, Talk),
        ("みゃおまた止まってるの？", &myao, Talk),
        ("昨日@みゃおに聞いたら変な答えだった", &myao, Talk),
        ("ミャオ重いね", &myao, Talk),
        // Calls, English.
        ("thoughts myao?", &myao, Call),
        ("👋 myao, got a sec?", &myao, Call),
        ("yo myao what's up", &myao, Call),
        ("myao-san, help", &myao, Call),
        ("myao-chan, are you awake?", &myao, Call),
        (":wave: myao", &myao, Call),
        (":wave::skin-tone-3: myao quick question", &myao, Call),
        ("🙏 myao", &myao, Call),
        ("any ideas myao?", &myao, Call),
        ("how's it going myao?", &myao, Call),
        ("you there myao?", &myao, Call),
        ("myao you there?", &myao, Call),
        ("myao what do you think?", &myao, Call),
        ("myao any thoughts on this?", &myao, Call),
        ("myao how do I rotate the token?", &myao, Call),
        ("sup myao", &myao, Call),
        ("cc @myao can you take a look", &myao, Call),
        ("what's the plan myao?", &myao, Call),
        ("what's up myao", &myao, Call),
        ("myao thanks", &myao, Call),
        ("myao 👋", &myao, Call),
        // Calls, Japanese.
        ("👋みゃお", &myao, Call),
        ("みゃおはどう思う？", &myao, Call),
        ("みゃおさんはどう思いますか？", &myao, Call),
        ("おつかれみゃお", &myao, Call),
        ("もしもしミャオ", &myao, Call),
        ("やっほーみゃお、元気？", &myao, Call),
        ("お疲れさまみゃお", &myao, Call),
        ("みゃお、落ちてる？", &myao, Call),
        ("みゃおさーん", &myao, Call),
        ("ミャオ君おはよう", &myao, Call),
        // A name that is also a common word: ordinary sentences are no
        // call; only a call set off by a pause, a greeting, "@" or a
        // request form is.
        ("max batch size?", &max, Talk),
        ("Max out the cache before the release", &max, Talk),
        ("max retries per job?", &max, Talk),
        ("max 10 items please", &max, Talk),
        ("max of three runs, right?", &max, Talk),
        ("Max is on leave this week", &max, Talk),
        ("did we hit max?", &max, Talk),
        ("max: 5 per hour", &max, Talk),
        ("max what's the limit?", &max, Talk),
        ("hey max the build broke", &max, Talk),
        ("can max be zero?", &max, Talk),
        ("max can you check the logs?", &max, Call),
        ("@max help", &max, Call),
        ("thanks, max", &max, Call),
        ("what do you think, max?", &max, Call),
        ("👋 max, got a sec?", &max, Call),
        ("Max! you there?", &max, Call),
    ];
    let wrong: Vec<String> = cases
        .iter()
        .filter(|(text, names, want)| name_use(text, names) != Some(*want))
        .map(|(text, names, want)| format!("{text:?}: {:?}, want {want:?}", name_use(text, names)))
        .collect();
    assert!(
        wrong.is_empty(),
        "{} of {} wrong:\n{}",
        wrong.len(),
        cases.len(),
        wrong.join("\n")
    );
}
