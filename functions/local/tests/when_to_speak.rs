//! When to speak, through the local mode: small exports replayed on the
//! virtual clock over the real ingest, judgment and response code, with an
//! LLM stub (wiremock) that never asks to speak unprompted and writes a
//! placeholder reply. What the bot posts, where and how soon, is read off
//! the timeline.
//!
//! - One question, one answer: a top-level question whose asker goes on in
//!   its thread is answered once, in the thread.
//! - A question its asker answered himself waits for nobody.
//! - Engaged, not captured: after it speaks in a thread, a reply is
//!   answered at once only when it answers the bot, a run of them stops at
//!   `max_engaged_answers`, and a mention is always answered.
//! - Learned per channel: a channel whose people answer in 20 minutes gets
//!   a longer wait before an unanswered question than one where they
//!   answer in 2.
//! - Called, not talked about: "hey myao," and 「ねえみゃお、」 are answered at
//!   once, "myao is down again?" is judged like any message.

use myao_testkit::http::{completion, llm_stub};

use std::path::Path;

use chrono::{DateTime, Duration, Utc};
use myao_domain::Ts;
use myao_local::cli::{self, Command};
use myao_local::export;
use myao_local::replay;
use myao_local::timeline::{EventKind, Recorder};
use serde_json::{json, Value};
use wiremock::{Request, Respond, ResponseTemplate};

/// The day of every export here: 2026-01-05, 09:00 UTC.
const START: i64 = 1_767_603_600;

fn ts(secs: i64) -> String {
    format!("{}.000100", START + secs)
}

fn at(secs: i64) -> DateTime<Utc> {
    Ts::parse(&ts(secs)).expect("ts").to_datetime()
}

/// A message of `user` at `secs`, in the thread of the message at `thread`.
fn said(user: &str, secs: i64, thread: Option<i64>, text: &str) -> Value {
    let mut m = json!({"type": "message", "user": user, "text": text, "ts": ts(secs)});
    if let Some(root) = thread {
        m["thread_ts"] = json!(ts(root));
    }
    m
}

fn write(dir: &Path, rel: &str, text: &str) {
    let path = dir.join(rel);
    std::fs::create_dir_all(path.parent().expect("a folder")).expect("mkdir");
    std::fs::write(path, text).expect("write");
}

/// An export of one channel, #dev, holding `messages`.
fn export_of(messages: &[Value]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    write(
        dir.path(),
        "users.json",
        r#"[{"id": "UANN", "name": "ann"}, {"id": "UBEN", "name": "ben"},
            {"id": "UCAT", "name": "cat"}, {"id": "UDAN", "name": "dan"}]"#,
    );
    write(
        dir.path(),
        "channels.json",
        r#"[{"id": "CDEV", "name": "dev"}]"#,
    );
    write(
        dir.path(),
        "dev/2026-01-05.json",
        &Value::Array(messages.to_vec()).to_string(),
    );
    dir
}

/// Never asks to speak unprompted; writes "ok".
struct Stub;

impl Respond for Stub {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&request.body).expect("json");
        let text = match body["model"].as_str().expect("a model") {
            "judge" => {
                json!({"should_respond": false, "confidence": 0.9, "reason": "no"}).to_string()
            }
            "writer" => "ok".to_owned(),
            _ => "- 2026-01-05 notes".to_owned(),
        };
        completion(&text)
    }
}

/// One post of the bot: when, in which thread, and whether it answered a
/// call (a mention, or a reply engaged with it).
#[derive(Debug, Clone, PartialEq)]
struct Posted {
    at: DateTime<Utc>,
    thread: Option<Ts>,
    called: bool,
}

async fn replay(messages: &[Value], settings: &[(&str, &str)]) -> Vec<Posted> {
    let dir = export_of(messages);
    let (_server, base) = llm_stub(Stub).await;
    let args = match cli::parse(&["replay".to_owned(), dir.path().display().to_string()])
        .expect("arguments")
    {
        Command::Replay(r) => r,
        other => panic!("not a replay: {other:?}"),
    };
    let mut env = vec![
        ("MYAO_LLM_BASE_URL".to_owned(), base),
        ("MYAO_JUDGMENT_MODEL".to_owned(), "judge".to_owned()),
        ("MYAO_RESPONSE_MODEL".to_owned(), "writer".to_owned()),
        ("MYAO_MEMORY_MODEL".to_owned(), "memo".to_owned()),
        ("MYAO_MIN_WAIT_SECONDS".to_owned(), "300".to_owned()),
        ("MYAO_JITTER_RATIO".to_owned(), "0".to_owned()),
        ("MYAO_COOLDOWN_SECONDS".to_owned(), "0".to_owned()),
    ];
    env.extend(
        settings
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned())),
    );
    let config = cli::replay_config(&args, &env).expect("config");
    assert!(config.issues.is_empty(), "{:?}", config.issues);
    let (filter, options) = cli::replay_plan(&args, &config).expect("plan");
    let export = export::read(&args.export, &filter).expect("export");
    let mut rec = Recorder::default();
    replay::run(&export, options, &mut rec)
        .await
        .expect("replayed");
    rec.events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Reply { mention, .. } => Some(Posted {
                at: e.at,
                thread: e.thread_ts,
                called: *mention,
            }),
            _ => None,
        })
        .collect()
}

fn in_thread(posts: &[Posted], root: i64) -> Vec<&Posted> {
    let root = Ts::parse(&ts(root)).expect("ts");
    posts.iter().filter(|p| p.thread == Some(root)).collect()
}

/// Whether the bot answered, at once, a call made at `secs`.
fn answered_at_once(posts: &[Posted], secs: i64) -> bool {
    posts
        .iter()
        .any(|p| p.called && p.at >= at(secs) && p.at - at(secs) <= Duration::seconds(10))
}

#[tokio::test]
async fn a_question_whose_asker_goes_on_in_its_thread_is_answered_once_in_the_thread() {
    let mut messages = vec![
        said("UBEN", 0, None, "morning"),
        said("UANN", 600, None, "anyone know how to mount a usb disk?"),
    ];
    for i in 1..=4 {
        messages.push(said(
            "UANN",
            600 + 20 * i,
            Some(600),
            &format!("still stuck {i}"),
        ));
    }
    let posts = replay(&messages, &[]).await;
    assert_eq!(posts.len(), 1, "one answer: {posts:?}");
    assert_eq!(in_thread(&posts, 600).len(), 1, "in the thread: {posts:?}");
    assert!(!posts[0].called);
}

#[tokio::test]
async fn a_top_level_answer_already_on_its_way_stands_down_for_the_thread() {
    // The top level is judged at 900 s and its answer is due 10-30 s
    // later; the asker writes in the question's thread at 905 s.
    let messages = [
        said("UBEN", 0, None, "morning"),
        said("UANN", 600, None, "anyone know how to mount a usb disk?"),
        said("UANN", 905, Some(600), "it is an ntfs one, still stuck"),
    ];
    let posts = replay(&messages, &[]).await;
    assert_eq!(posts.len(), 1, "one answer: {posts:?}");
    assert_eq!(in_thread(&posts, 600).len(), 1, "in the thread: {posts:?}");
    assert!(
        posts[0].at > at(905 + 300),
        "the thread's judgment: {posts:?}"
    );
}

#[tokio::test]
async fn a_question_its_asker_answered_himself_is_left_alone() {
    let messages = [
        said("UBEN", 0, None, "CI is red on main. anyone looking?"),
        said(
            "UANN",
            200,
            Some(0),
            "looking. probably the flaky payments test again?",
        ),
        said(
            "UANN",
            280,
            Some(0),
            "nope, the lockfile was regenerated. fixing",
        ),
    ];
    let posts = replay(&messages, &[]).await;
    assert!(in_thread(&posts, 0).is_empty(), "{posts:?}");
    // Without his own answer, the same question is joined.
    let posts = replay(&messages[..2], &[]).await;
    assert_eq!(in_thread(&posts, 0).len(), 1, "{posts:?}");
}

/// A thread where Ann calls the bot and it answers, then `after`.
fn called_then(after: &[Value]) -> Vec<Value> {
    let mut messages = vec![
        said("UANN", 0, None, "rebase trouble on the release branch"),
        said("UBEN", 30, Some(0), "again?"),
        said("UANN", 60, Some(0), "<@UMYAO> how do I rebase onto main?"),
    ];
    messages.extend_from_slice(after);
    messages
}

#[tokio::test]
async fn the_asker_answering_the_bot_is_answered_at_once() {
    let posts = replay(
        &called_then(&[said("UANN", 120, Some(0), "and if it conflicts")]),
        &[],
    )
    .await;
    assert!(answered_at_once(&posts, 60), "the mention: {posts:?}");
    assert!(answered_at_once(&posts, 120), "engaged: {posts:?}");
}

/// Eight questions an hour apart, each answered in its thread by another
/// person after `answer_after` seconds, then one nobody answers (at 8 h).
fn answered_history(answer_after: i64) -> Vec<Value> {
    let mut messages = Vec::new();
    for i in 0..8 {
        let t = i * 3600;
        messages.push(said(
            "UANN",
            t,
            None,
            &format!("how do I fix build error {i}?"),
        ));
        messages.push(said("UBEN", t + answer_after, Some(t), "clear the cache"));
    }
    messages.push(said(
        "UCAT",
        8 * 3600,
        None,
        "does anyone know why the tests hang?",
    ));
    messages
}

/// How long after the last question (at 8 h) the bot first answered it.
fn answered_last_after(posts: &[Posted]) -> Duration {
    let asked = at(8 * 3600);
    posts
        .iter()
        .filter(|p| p.at >= asked)
        .map(|p| p.at - asked)
        .min()
        .unwrap_or_else(|| panic!("the last question was not answered: {posts:?}"))
}

#[tokio::test]
async fn a_channel_whose_people_answer_slowly_waits_longer_than_a_quick_one() {
    let slow = answered_last_after(&replay(&answered_history(1200), &[]).await);
    let quick = answered_last_after(&replay(&answered_history(120), &[]).await);
    assert!(
        slow >= quick + Duration::minutes(10),
        "20-minute answers: {slow}, 2-minute answers: {quick}"
    );
    // The quick channel waits the judgment's own wait (min_wait_seconds,
    // 300 s here), and an answer's delay of 10-30 s.
    assert!(quick < Duration::seconds(300 + 60), "{quick}");
    assert!(slow <= rules_ceiling() + Duration::seconds(60), "{slow}");
}

fn rules_ceiling() -> Duration {
    myao_domain::answer_times::CEILING
}

#[tokio::test]
async fn its_name_in_a_call_is_answered_at_once_talk_about_it_is_not() {
    let posts = replay(
        &[
            said("UBEN", 0, None, "morning"),
            said("UANN", 600, None, "myao is down again?"),
            said("UBEN", 1800, None, "should we turn myao off"),
            said("UCAT", 3600, None, "hey myao, what does rebase do?"),
            said("UDAN", 5400, None, "ねえみゃお、これ何？"),
            said("UANN", 7200, None, "the myao-bot deploy is green"),
        ],
        &[],
    )
    .await;
    assert!(!answered_at_once(&posts, 600), "talk: {posts:?}");
    assert!(!answered_at_once(&posts, 1800), "talk: {posts:?}");
    assert!(answered_at_once(&posts, 3600), "a call: {posts:?}");
    assert!(
        answered_at_once(&posts, 5400),
        "a call in Japanese: {posts:?}"
    );
    assert!(!answered_at_once(&posts, 7200), "a compound: {posts:?}");
}

#[tokio::test]
async fn a_third_person_or_someone_addressed_elsewhere_is_judged_not_answered_at_once() {
    // Ben, who is not whom the bot answered, replies after it.
    let posts = replay(
        &called_then(&[said("UBEN", 120, Some(0), "or just merge it")]),
        &[],
    )
    .await;
    assert!(answered_at_once(&posts, 60));
    assert!(!answered_at_once(&posts, 120), "{posts:?}");
    // Ann, but to Ben.
    let posts = replay(
        &called_then(&[said("UANN", 120, Some(0), "<@UBEN> did you try that")]),
        &[],
    )
    .await;
    assert!(!answered_at_once(&posts, 120), "{posts:?}");
    // Ann, after Ben spoke between.
    let posts = replay(
        &called_then(&[
            said("UBEN", 100, Some(0), "or just merge it"),
            said("UANN", 120, Some(0), "hmm maybe"),
        ]),
        &[],
    )
    .await;
    assert!(!answered_at_once(&posts, 120), "{posts:?}");
}

#[tokio::test]
async fn a_run_of_engaged_answers_stops_at_the_limit_and_a_mention_is_always_answered() {
    let mut after: Vec<Value> = (1..=5)
        .map(|i| said("UANN", 60 + 60 * i, Some(0), &format!("and then {i}")))
        .collect();
    after.push(said("UANN", 480, Some(0), "<@UMYAO> one more"));
    let posts = replay(&called_then(&after), &[("MYAO_MAX_ENGAGED_ANSWERS", "3")]).await;
    let engaged: Vec<bool> = (1..=5)
        .map(|i| answered_at_once(&posts, 60 + 60 * i))
        .collect();
    assert_eq!(engaged, [true, true, true, false, false], "{posts:?}");
    assert!(answered_at_once(&posts, 480), "the mention: {posts:?}");
}
