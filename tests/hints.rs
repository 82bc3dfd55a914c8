//! Takes a hint like a member: a reaction on its post, or words to it, is a
//! label kept per person and post, and tunes that channel's judgments;
//! "not now" mutes its unprompted posts there a while, never its answers
//! to mentions. Over the real ingest, judgment and response code, DynamoDB
//! on the emulator, and the LLM and Slack stubs.

use myao_aws::dynamodb::DynamoStore;
use myao_core::app::ingest::{IgnoreReason, Outcome};
use myao_core::ports::LabelRecords;
use myao_domain::hints::Hint;
use myao_domain::labels::Source;
use myao_domain::rules::{Chattiness, Gate};
use myao_domain::{Job, Reply, Settings, Ts};
use myao_services::jobs::JobOutcome;
use myao_services::judgment::JudgmentOutcome;
use myao_services::response::ResponseOutcome;
use myao_testkit::ids::channel;
use myao_tests::stubs::{message, ts, verdict, Bed, ALICE, BOB, BOT, GENERAL, RANDOM};
use serde_json::{json, Value};

async fn bed(tweak: impl FnOnce(&mut Settings)) -> Bed<DynamoStore> {
    Bed::on_emulator(tweak).await
}

/// `user`'s reaction `emoji` on the message `on` of `author` in #general.
fn reaction(added: bool, user: &str, emoji: &str, on: Ts, author: &str) -> Value {
    json!({
        "type": if added { "reaction_added" } else { "reaction_removed" },
        "user": user, "reaction": emoji, "item_user": author,
        "item": {"type": "message", "channel": GENERAL, "ts": on.to_string()},
        "event_ts": ts(0).to_string(),
    })
}

fn judgment(ch: &str, newest: i64) -> Job {
    Job::Judgment {
        channel: channel(ch),
        thread_ts: None,
        newest_ts: ts(newest),
    }
}

fn mention(newest: i64) -> Job {
    Job::Response {
        channel: channel(GENERAL),
        thread_ts: None,
        newest_ts: ts(newest),
        mention: true,
        reply: Reply::Full,
        seen_ts: None,
        grounds: None,
    }
}

/// The thresholds a judgment of `job` was held to (it must have scored).
async fn thresholds_of(bed: &Bed<DynamoStore>, job: &Job) -> (i32, i32) {
    let outcome = bed.run(job).await;
    let JobOutcome::Judgment(judged) = &outcome else {
        panic!("a judgment: {outcome:?}");
    };
    let ruling = judged
        .ruling()
        .unwrap_or_else(|| panic!("scored: {judged:?}"));
    (ruling.thresholds.low, ruling.thresholds.high)
}

#[tokio::test]
async fn a_thumbs_down_on_its_post_is_stored_once_and_raises_that_channels_thresholds_only() {
    // The level's thresholds (the bed asks the LLM at any score otherwise).
    let bed = bed(|s| s.rule_thresholds = None).await;
    bed.script.set_judgment(verdict(false, None));
    let post = ts(-7200);
    bed.seed(&[
        message(
            GENERAL,
            BOT,
            post,
            None,
            "here is the summary you asked for",
        ),
        message(GENERAL, ALICE, ts(-7000), None, "ok"),
    ])
    .await;

    let first = bed.deliver(reaction(true, ALICE, "-1", post, BOT)).await;
    assert_eq!(
        first,
        Outcome::Hinted {
            added: true,
            new: true
        }
    );
    let again = bed
        .deliver(reaction(true, ALICE, "-1::skin-tone-3", post, BOT))
        .await;
    assert_eq!(
        again,
        Outcome::Hinted {
            added: true,
            new: false
        },
        "counted once"
    );
    let on_a_person = bed
        .deliver(reaction(true, BOB, "-1", ts(-7000), ALICE))
        .await;
    assert_eq!(on_a_person, Outcome::Ignored(IgnoreReason::NotItsPost));
    let no_hint = bed.deliver(reaction(true, BOB, "eyes", post, BOT)).await;
    assert_eq!(no_hint, Outcome::Ignored(IgnoreReason::NotAHint));

    let labels = bed.store.labels(&channel(GENERAL)).await.expect("labels");
    assert_eq!(labels.len(), 1, "{labels:?}");
    assert_eq!(labels[0].hint, Hint::Negative);
    assert_eq!(labels[0].post, post);
    assert!(matches!(&labels[0].source, Source::Reaction(e) if e.as_str() == "-1"));
    assert!(bed
        .store
        .labels(&channel(RANDOM))
        .await
        .expect("labels")
        .is_empty());

    // The next judgment in #general is held to higher thresholds; #random's
    // to its level's.
    bed.seed(&[
        message(
            GENERAL,
            BOB,
            ts(-300),
            None,
            "does anyone know why the build is red?",
        ),
        message(
            RANDOM,
            BOB,
            ts(-300),
            None,
            "does anyone know why the build is red?",
        ),
    ])
    .await;
    let normal = Chattiness::Normal.thresholds().expect("normal");
    let (low, high) = thresholds_of(&bed, &judgment(GENERAL, -300)).await;
    assert!(
        low > normal.low && high > normal.high,
        "raised: {low}..{high}"
    );
    let (low, high) = thresholds_of(&bed, &judgment(RANDOM, -300)).await;
    assert_eq!(
        (low, high),
        (normal.low, normal.high),
        "another channel is untouched"
    );
}

#[tokio::test]
async fn a_withdrawn_reaction_takes_its_hint_back() {
    let bed = bed(|_| {}).await;
    let post = ts(-600);
    bed.seed(&[message(GENERAL, BOT, post, None, "a summary")])
        .await;
    bed.deliver(reaction(true, ALICE, "pray", post, BOT)).await;
    assert_eq!(
        bed.store
            .labels(&channel(GENERAL))
            .await
            .expect("labels")
            .len(),
        1
    );
    let withdrawn = bed.deliver(reaction(false, ALICE, "pray", post, BOT)).await;
    assert_eq!(
        withdrawn,
        Outcome::Hinted {
            added: false,
            new: false
        }
    );
    assert!(bed
        .store
        .labels(&channel(GENERAL))
        .await
        .expect("labels")
        .is_empty());
}

#[tokio::test]
async fn a_reaction_whose_author_slack_left_out_is_checked_against_the_stored_post() {
    let bed = bed(|_| {}).await;
    let post = ts(-600);
    bed.seed(&[message(GENERAL, BOT, post, None, "a summary")])
        .await;
    let mut event = reaction(true, ALICE, "+1", post, BOT);
    event
        .as_object_mut()
        .expect("an object")
        .remove("item_user");
    assert_eq!(
        bed.deliver(event).await,
        Outcome::Hinted {
            added: true,
            new: true
        }
    );
}

#[tokio::test]
async fn not_now_mutes_unprompted_posts_but_mentions_are_still_answered() {
    let bed = bed(|_| {}).await;
    bed.seed(&[message(
        GENERAL,
        ALICE,
        ts(-60),
        None,
        &format!("<@{BOT}> not now"),
    )])
    .await;
    let acknowledged = bed.run(&mention(-60)).await;
    assert!(
        matches!(
            &acknowledged,
            JobOutcome::Response(ResponseOutcome::Reacted { ts: on, .. }) if *on == ts(-60)
        ),
        "{acknowledged:?}"
    );
    assert!(bed.posts().await.is_empty(), "no words in answer");
    assert!(bed.llm_calls().await.is_empty(), "no LLM call");
    let labels = bed.store.labels(&channel(GENERAL)).await.expect("labels");
    assert!(
        matches!(labels[..], [ref l] if matches!(l.hint, Hint::Mute { .. }) && l.source == Source::Words)
    );

    // A question left to the room: no unprompted answer while muted.
    bed.seed(&[message(
        GENERAL,
        BOB,
        ts(-30),
        None,
        "does anyone know why the build is red?",
    )])
    .await;
    let held = bed.run(&judgment(GENERAL, -30)).await;
    assert!(
        matches!(
            held,
            JobOutcome::Judgment(JudgmentOutcome::Held(Gate::Muted))
        ),
        "{held:?}"
    );

    // A mention is still answered.
    bed.seed(&[message(
        GENERAL,
        BOB,
        ts(-10),
        None,
        &format!("<@{BOT}> why is the build red?"),
    )])
    .await;
    let answered = bed.run(&mention(-10)).await;
    assert!(
        matches!(
            answered,
            JobOutcome::Response(ResponseOutcome::Posted { .. })
        ),
        "{answered:?}"
    );
}
