//! Every question its own wait (issue 54): a top-level question is judged
//! on a schedule of its own, keyed as its thread is, which other people's
//! top-level messages do not restart; its asker's lines keep it open; one
//! put to someone is theirs; a busy channel's question schedules stay
//! within their bound. Over the real ingest and judgment code, DynamoDB on
//! the emulator and the LLM and Slack stubs, on a virtual clock.

use myao_aws::dynamodb::DynamoStore;
use myao_domain::routing::QUESTION_WAITS_PER_HOUR;
use myao_tests::stubs::{at, ts, Bed, PromptKind, ALICE, BOB, GENERAL};
use serde_json::{json, Value};

const CAROL: &str = "UCAROL";

/// A bed whose #general talks in threads: an hour before, Bob's message and
/// five replies under it, a minute apart.
async fn threading_channel() -> Bed<DynamoStore> {
    threading_channel_at(60).await
}

/// [`threading_channel`] whose replies came `gap` seconds apart: the pace
/// at which its people answer each other.
async fn threading_channel_at(gap: i64) -> Bed<DynamoStore> {
    let bed = Bed::on_emulator(|s| {
        // The product's thresholds (`normal`).
        s.rule_thresholds = None;
    })
    .await;
    bed.seed_thread_habit(gap).await;
    bed
}

/// A message event of #general at `offset` seconds.
fn said(user: &str, offset: i64, thread: Option<i64>, text: &str) -> (i64, Value) {
    let mut event = json!({
        "type": "message", "channel": GENERAL, "channel_type": "channel",
        "user": user, "text": text, "ts": ts(offset).to_string(),
    });
    if let Some(root) = thread {
        event["thread_ts"] = json!(ts(root).to_string());
    }
    (offset, event)
}

/// Runs every job due up to `offset`, each at its due time.
async fn run_until(bed: &Bed<DynamoStore>, offset: i64) {
    let end = at(offset);
    while let Some(due) = bed.board.next_due().filter(|d| *d <= end) {
        bed.clock.set(due.max(bed.now()));
        bed.run_due().await;
    }
    bed.clock.set(end.max(bed.now()));
}

/// Delivers `events` (in time order) at their times, running the jobs due
/// in between, then runs on to `until`.
async fn play(bed: &Bed<DynamoStore>, events: &[(i64, Value)], until: i64) {
    for (offset, event) in events {
        run_until(bed, *offset).await;
        bed.deliver(event.clone()).await;
    }
    run_until(bed, until).await;
}

/// The threads (by offset of their root) the bot posted in; `None` for a
/// post at the top level.
async fn posted_in(bed: &Bed<DynamoStore>) -> Vec<Option<String>> {
    bed.posts()
        .await
        .iter()
        .map(|p| {
            p.get("thread_ts")
                .and_then(Value::as_str)
                .map(str::to_owned)
        })
        .collect()
}

fn thread(offset: i64) -> Option<String> {
    Some(ts(offset).to_string())
}

#[tokio::test]
async fn a_top_level_question_in_a_busy_channel_is_judged_on_its_own_wait_in_its_thread() {
    // The issue's example: a question no one takes, then the channel goes
    // on with other conversations, each message at the top level restarting
    // the top level's wait.
    let bed = threading_channel().await;
    let mut events = vec![said(
        ALICE,
        0,
        None,
        "is there an iptables command to list all chain names?",
    )];
    for i in 1..=25 {
        let root = i * 60;
        events.push(said(BOB, root, None, &format!("deploying build {i}")));
        events.push(said(CAROL, root + 20, Some(root), "looks green"));
        events.push(said(BOB, root + 30, Some(root), "ok, next one"));
    }
    // Judged when its own wait ends (five minutes), not when the top
    // level's ceiling (fifteen) ends the busy top level's wait.
    let (before, after): (Vec<_>, Vec<_>) = events.into_iter().partition(|(t, _)| *t < 600);
    play(&bed, &before, 600).await;
    assert_eq!(posted_in(&bed).await, vec![thread(0)]);
    play(&bed, &after, 1800).await;
    assert_eq!(posted_in(&bed).await, vec![thread(0)], "answered once");
}

/// Alice's and Bob's questions, 3 s apart, at the top level.
fn two_questions() -> Vec<(i64, Value)> {
    vec![
        said(ALICE, 0, None, "does anyone know why the deploy job hangs?"),
        said(
            BOB,
            3,
            None,
            "how do I rotate the staging database password?",
        ),
    ]
}

#[tokio::test]
async fn two_questions_seconds_apart_each_get_their_answer_in_their_own_thread() {
    let bed = threading_channel().await;
    play(&bed, &two_questions(), 1800).await;
    let mut posts = posted_in(&bed).await;
    posts.sort();
    assert_eq!(posts, vec![thread(0), thread(3)]);
    // Each answer's prompt held its own question.
    let prompts = bed.llm_calls_of(PromptKind::Response).await;
    assert_eq!(prompts.len(), 2);
    let holds = |words: &str| prompts.iter().any(|p| p.body.to_string().contains(words));
    assert!(holds("deploy job hangs") && holds("staging database"));
}

#[tokio::test]
async fn a_question_answered_in_its_thread_meanwhile_is_left_to_its_answer() {
    let bed = threading_channel().await;
    let mut events = two_questions();
    events.push(said(
        CAROL,
        120,
        Some(0),
        "the runner is out of disk, I am on it",
    ));
    play(&bed, &events, 1800).await;
    assert_eq!(posted_in(&bed).await, vec![thread(3)]);
}

#[tokio::test]
async fn a_question_followed_by_its_askers_lines_is_still_open() {
    for line in [
        "hmm......",
        "```\nChain INPUT (policy ACCEPT)\ntarget prot opt source\n```",
        "thanks in advance",
        "誰か分かる人いますか",
        "anyone?",
    ] {
        let bed = threading_channel().await;
        let events = [
            said(
                ALICE,
                0,
                None,
                "has anyone had success with the nvidia driver on 8.10?",
            ),
            said(ALICE, 60, Some(0), line),
        ];
        play(&bed, &events, 1800).await;
        assert_eq!(posted_in(&bed).await, vec![thread(0)], "{line}");
    }
}

#[tokio::test]
async fn a_question_put_to_someone_is_theirs() {
    let bed = threading_channel().await;
    let events = [said(ALICE, 0, None, "<@UBOB> can you look at my patch?")];
    play(&bed, &events, 3600).await;
    assert!(posted_in(&bed).await.is_empty());
}

#[tokio::test]
async fn a_channel_of_a_thousand_messages_an_hour_keeps_its_question_schedules_bounded() {
    // One message every 3.6 s for an hour, every fifth a question: 200
    // questions. No job runs, so every schedule made stays pending.
    let bed = threading_channel().await;
    let people = [ALICE, BOB, CAROL];
    let mut most = 0;
    for i in 0..1000_i64 {
        let offset = i * 36 / 10;
        let who = people[usize::try_from(i % 3).expect("small")];
        let text = if i % 5 == 0 {
            format!("does anyone know how to fix build {i}?")
        } else {
            format!("build {i} is running")
        };
        bed.clock.set(at(offset));
        bed.deliver(said(who, offset, None, &text).1).await;
        most = most.max(bed.board.scheduled().len());
    }
    let names: Vec<String> = bed
        .board
        .scheduled()
        .iter()
        .map(|s| s.name.as_str().to_owned())
        .collect();
    let own = names.iter().filter(|n| !n.ends_with("-top")).count();
    assert_eq!(own as u64, QUESTION_WAITS_PER_HOUR, "{names:?}");
    assert_eq!(
        most as u64,
        QUESTION_WAITS_PER_HOUR + 1,
        "and the top level's"
    );
}

#[tokio::test]
async fn its_askers_next_line_does_not_push_a_questions_judgment_past_its_wait() {
    // People here answer each other four minutes apart: a question is left
    // to the room after three of those (720 s). Judged at 300 s, it is not
    // left yet; the asker's line at 600 s would wait five minutes more
    // (900 s), but the question's wait ends at 720 s.
    let bed = threading_channel_at(240).await;
    let events = [
        said(ALICE, 0, None, "does anyone know why the deploy job hangs?"),
        said(ALICE, 600, Some(0), "it hangs at the cache step"),
    ];
    play(&bed, &events, 800).await;
    assert_eq!(posted_in(&bed).await, vec![thread(0)]);
}

#[tokio::test]
async fn an_asker_who_asks_again_is_answered_once_on_the_later_question() {
    let bed = threading_channel().await;
    let events = [
        said(
            ALICE,
            0,
            None,
            "how do I mount a usb disk on the build box?",
        ),
        said(ALICE, 20, None, "is it udisksctl or plain mount?"),
    ];
    play(&bed, &events, 1800).await;
    assert_eq!(posted_in(&bed).await, vec![thread(20)]);
}

#[tokio::test]
async fn where_people_talk_at_the_top_level_a_question_is_answered_once_where_it_was_asked() {
    // No habit of threads: the top level's judgment (moved to the question
    // by the stale check) and the question's own judgment both judge it;
    // they answer it as one, at the top level where it is the newest.
    let bed = Bed::on_emulator(|s| s.rule_thresholds = None).await;
    let events = [
        said(BOB, 0, None, "lunch was great"),
        said(
            ALICE,
            10,
            None,
            "does anyone know why the deploy job hangs?",
        ),
    ];
    play(&bed, &events, 1800).await;
    assert_eq!(posted_in(&bed).await, vec![None]);
}
