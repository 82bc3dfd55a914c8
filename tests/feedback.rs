//! The labels for people: what the judge knew when it decided a post is
//! kept with the post (no word of the conversation), so that the hints on
//! it can be read with their reasons. Over the real judgment and response
//! code, DynamoDB on the emulator, and the LLM and Slack stubs.

use myao_aws::dynamodb::DynamoStore;
use myao_core::ports::LabelRecords;
use myao_domain::feedback::channel_feedback;
use myao_domain::grounds::{Scored, Spoke};
use myao_domain::rules::{Chattiness, Signal};
use myao_domain::{Job, JudgmentJob, Reply, ResponseJob, Settings};
use myao_services::jobs::JobOutcome;
use myao_services::response::ResponseOutcome;
use myao_testkit::ids::channel;
use myao_tests::stubs::{message, ts, verdict, Bed, ALICE, BOB, BOT, GENERAL};
use serde_json::json;

async fn bed(tweak: impl FnOnce(&mut Settings)) -> Bed<DynamoStore> {
    Bed::on_emulator(tweak).await
}

/// Runs the judgment of #general's top level and then the response job it
/// queued; returns the post's ts.
async fn judged_and_posted(bed: &Bed<DynamoStore>, newest: i64) -> myao_domain::Ts {
    let judged = bed
        .run(&Job::Judgment(JudgmentJob {
            channel: channel(GENERAL),
            thread_ts: None,
            newest_ts: ts(newest),
        }))
        .await;
    let queued = bed
        .board
        .take_queued(|j| matches!(j, Job::Response(ResponseJob { .. })));
    let [response] = &queued[..] else {
        panic!("one response job after {judged:?}: {queued:?}");
    };
    match bed.run(response).await {
        JobOutcome::Response(ResponseOutcome::Posted { ts, .. }) => ts,
        other => panic!("posted: {other:?}"),
    }
}

#[tokio::test]
async fn a_judged_post_keeps_its_grounds_and_the_hints_on_it_read_with_them() {
    let bed = bed(|_| {}).await;
    bed.script.set_judgment(verdict(true, Some(0)));
    bed.seed(&[message(
        GENERAL,
        BOB,
        ts(-600),
        None,
        "does anyone know why the build is red?",
    )])
    .await;
    let post = judged_and_posted(&bed, -600).await;

    let kept = bed.store.grounds(&channel(GENERAL)).await.expect("grounds");
    let [kept] = &kept[..] else {
        panic!("one post's grounds: {kept:?}");
    };
    assert_eq!(kept.post, post);
    let grounds = &kept.grounds;
    assert_eq!(grounds.outcome, Spoke::LlmYes);
    assert_eq!(grounds.level, Chattiness::Normal);
    assert_eq!(grounds.confidence, Some(90), "the verdict's 0.9");
    assert!(
        grounds.score.is_some() && grounds.thresholds.is_some(),
        "{grounds:?}"
    );
    assert!(
        grounds
            .signals
            .iter()
            .any(|s| s == &Scored::of(Signal::UnansweredQuestion)),
        "{grounds:?}"
    );
    let stored = serde_json::to_string(kept).expect("json");
    assert!(
        !stored.contains("build"),
        "no word of the conversation: {stored}"
    );

    // A person's thumbs-down on it is read with what decided it.
    bed.deliver(json!({
        "type": "reaction_added", "user": ALICE, "reaction": "-1", "item_user": BOT,
        "item": {"type": "message", "channel": GENERAL, "ts": post.to_string()},
        "event_ts": ts(0).to_string(),
    }))
    .await;
    let labels = bed.store.labels(&channel(GENERAL)).await.expect("labels");
    let all = bed.store.grounds(&channel(GENERAL)).await.expect("grounds");
    let feedback = channel_feedback(&channel(GENERAL), &labels, &all, bed.now());
    let [labelled] = &feedback.posts[..] else {
        panic!("one labelled post: {feedback:?}");
    };
    assert_eq!(labelled.post, post);
    assert_eq!(labelled.balance(), -1);
    assert_eq!(labelled.grounds.as_ref(), Some(grounds));
    assert_eq!(feedback.offset, 7, "one step up");
}

#[tokio::test]
async fn an_answer_to_a_mention_keeps_mention_as_its_grounds() {
    let bed = bed(|_| {}).await;
    bed.seed(&[message(
        GENERAL,
        ALICE,
        ts(-60),
        None,
        &format!("<@{BOT}> what is the max batch size?"),
    )])
    .await;
    let answered = bed
        .run(&Job::Response(ResponseJob {
            channel: channel(GENERAL),
            thread_ts: None,
            newest_ts: ts(-60),
            mention: true,
            reply: Reply::Full,
            seen_ts: None,
            grounds: None,
        }))
        .await;
    let JobOutcome::Response(ResponseOutcome::Posted { ts: post, .. }) = answered else {
        panic!("posted: {answered:?}");
    };
    let kept = bed.store.grounds(&channel(GENERAL)).await.expect("grounds");
    assert!(
        matches!(&kept[..], [g] if g.post == post && g.grounds.outcome == Spoke::Mention && !g.grounds.unprompted()),
        "{kept:?}"
    );
}
