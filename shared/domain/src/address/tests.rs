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
