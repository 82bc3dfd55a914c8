//! Richer profiles: the channel's digest sketches each person who wrote its
//! new messages (a few tags, a one-line note, what the last conversation
//! with them was about) in the call it makes anyway; the reply prompt of
//! that channel introduces them with it, no other channel's does; a
//! deleted source message or "forget me" forgets it. Over the real memory
//! and response code, DynamoDB on the emulator (and its twin for the round
//! trip), and the LLM and Slack stubs.

use chrono::Duration;
use myao_aws::dynamodb::DynamoStore;
use myao_core::adapters::twins::MemoryStore;
use myao_core::ports::FactRecords;
use myao_domain::sketch::Sketch;
use myao_domain::{ChannelMemoryJob, Job};
use myao_testkit::ids::{channel, user};
use myao_tests::stubs::{
    assert_in_order, at, message, ts, Bed, MemoryTask, PromptKind, ALICE, BOB, GENERAL, SECRET,
};
use serde_json::json;

use crate::facts::{forget_me, mention_in_general, seed_move_in};

const NOTE: &str = "Backend developer who just moved to Osaka";
const LAST_TALK: &str = "his move to Namba, which alice cheered";

/// The digest's answer beyond its memories: Bob's move as a fact, and a
/// sketch of Bob (and one of a name no message has, which is left out).
fn sketched() -> String {
    json!({
        "facts": [{
            "subject": "Bob", "fact": "Bob moved to Osaka last month, near Namba.",
            "keywords": ["osaka", "namba"], "importance": 4, "shareable": true,
            "sources": [2]
        }],
        "people": [
            {"name": "bob", "tags": ["backend", "Osaka"], "note": NOTE, "last_talk": LAST_TALK},
            {"name": "mallory", "tags": [], "note": "not here", "last_talk": "nothing"}
        ]
    })
    .to_string()
}

/// Bob's move told in `ch`, digested.
async fn sketched_in(ch: &str) -> Bed<DynamoStore> {
    let bed = Bed::on_emulator(|_| {}).await;
    seed_move_in(&bed, ch).await;
    bed.script.set_reflection(sketched());
    bed.run(&Job::ChannelMemory(ChannelMemoryJob {
        channel: channel(ch),
    }))
    .await;
    bed
}

async fn sketches(bed: &Bed<DynamoStore>, ch: &str) -> Vec<Sketch> {
    bed.store.sketches(&channel(ch)).await.expect("sketches")
}

/// Bob mentions the bot in #general; the reply prompt.
async fn bob_asks(bed: &Bed<DynamoStore>) -> String {
    mention_in_general(bed, BOB, "any lunch tips?").await;
    let prompts = bed.llm_calls_of(PromptKind::Response).await;
    prompts.last().expect("a reply prompt").system.clone()
}

#[tokio::test]
async fn the_digest_sketches_who_wrote_and_the_reply_prompt_introduces_them() {
    let bed = sketched_in(GENERAL).await;
    let all = sketches(&bed, GENERAL).await;
    assert_eq!(all.len(), 1, "only Bob wrote new messages: {all:?}");
    let bob = &all[0];
    assert_eq!(bob.user, user(BOB));
    assert_eq!(bob.tags, ["backend", "Osaka"]);
    assert_eq!(
        (bob.note.as_str(), bob.last_talk.as_str()),
        (NOTE, LAST_TALK)
    );
    assert_eq!(bob.read_to, ts(-840), "the newest message the digest read");

    let prompt = bob_asks(&bed).await;
    assert_in_order(
        &prompt,
        &[
            "## ここにいる人",
            "- bob: ",
            NOTE,
            "backend、Osaka",
            LAST_TALK,
        ],
    );

    // The next digest is shown the sketch to revise.
    bed.seed(&[
        message(
            GENERAL,
            BOB,
            ts(60),
            None,
            "the ramen place on my street is great",
        ),
        message(GENERAL, BOB, ts(90), None, "open till 2am too"),
    ])
    .await;
    bed.run(&Job::ChannelMemory(ChannelMemoryJob {
        channel: channel(GENERAL),
    }))
    .await;
    let digests = bed
        .llm_calls_of(PromptKind::Memory(MemoryTask::Digest))
        .await;
    let last = &digests.last().expect("a digest").system;
    assert!(
        last.contains(&format!("bob のこれまでの横顔: {NOTE}")),
        "{last}"
    );
}

#[tokio::test]
async fn a_private_channels_sketch_stays_in_it() {
    let bed = sketched_in(SECRET).await;
    assert_eq!(sketches(&bed, SECRET).await.len(), 1);
    let prompt = bob_asks(&bed).await;
    assert!(prompt.contains("- bob: "), "{prompt}");
    assert!(!prompt.contains(NOTE), "{prompt}");
    assert!(!prompt.contains(LAST_TALK), "{prompt}");
}

/// Bob's sketch may hold anything the digest read, Alice's words too: her
/// deleted message forgets it, and until the forget job has run, no prompt
/// shows it.
#[tokio::test]
async fn a_deleted_message_it_read_forgets_the_sketch_whoever_wrote_it() {
    let bed = sketched_in(GENERAL).await;
    assert_eq!(sketches(&bed, GENERAL).await.len(), 1);
    bed.deliver(
        json!({"type": "message", "subtype": "message_deleted", "channel": GENERAL,
               "ts": ts(0).to_string(), "deleted_ts": ts(-860).to_string()}),
    )
    .await;
    let prompt = bob_asks(&bed).await;
    assert!(prompt.contains("- bob: "), "{prompt}");
    assert!(!prompt.contains(NOTE), "pending, not shown: {prompt}");
    bed.run_due().await;
    assert!(sketches(&bed, GENERAL).await.is_empty());
}

#[tokio::test]
async fn forget_me_forgets_the_persons_sketch() {
    let bed = sketched_in(GENERAL).await;
    assert_eq!(sketches(&bed, GENERAL).await.len(), 1);
    forget_me(&bed, BOB).await;
    assert!(sketches(&bed, GENERAL).await.is_empty());
}

/// Bob's sketch names Alice: her "forget me" forgets it too.
#[tokio::test]
async fn forget_me_forgets_a_sketch_that_names_the_person() {
    let bed = sketched_in(GENERAL).await;
    assert_eq!(sketches(&bed, GENERAL).await.len(), 1);
    forget_me(&bed, ALICE).await;
    assert!(sketches(&bed, GENERAL).await.is_empty());
}

/// A sketch read back whole, replaced by the person's next one, deleted:
/// emulator and twin.
async fn round_trip(store: &dyn FactRecords) {
    let sketch = Sketch {
        channel: channel(GENERAL),
        user: user(BOB),
        tags: vec!["backend".into(), "大阪".into()],
        note: NOTE.into(),
        last_talk: LAST_TALK.into(),
        read_to: ts(-840),
        written_at: at(0),
    };
    let until = at(0) + Duration::days(3_650);
    store.put_sketch(&sketch, until).await.expect("put");
    assert_eq!(
        store.sketches(&channel(GENERAL)).await.expect("read"),
        std::slice::from_ref(&sketch)
    );
    assert!(store
        .sketches(&channel(SECRET))
        .await
        .expect("read")
        .is_empty());
    let next = Sketch {
        last_talk: "ramen".into(),
        ..sketch.clone()
    };
    store.put_sketch(&next, until).await.expect("put");
    assert_eq!(
        store.sketches(&channel(GENERAL)).await.expect("read"),
        [next]
    );
    store
        .delete_sketch(&channel(GENERAL), &user(BOB))
        .await
        .expect("delete");
    assert!(store
        .sketches(&channel(GENERAL))
        .await
        .expect("read")
        .is_empty());
    assert_eq!(store.facts(&channel(GENERAL)).await.expect("facts"), []);
}

#[tokio::test]
async fn a_sketch_survives_the_store_emulator_and_twin() {
    round_trip(&myao_tests::fresh_store().await).await;
    round_trip(&MemoryStore::new(myao_testkit::time::clock_at(at(0)))).await;
}
