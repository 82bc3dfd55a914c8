//! Knowing the people and remembering what matters: profiles counted from
//! the conversations the memory jobs read, facts written by one reflection
//! when a conversation goes quiet, recalled by a later conversation's
//! words, and forgotten with their message or on request. Over the real
//! memory, judgment and response code, DynamoDB on the emulator, and the
//! LLM and Slack stubs.

use myao_aws::dynamodb::DynamoStore;
use myao_core::ports::{FactRecords, ProfileRecords};
use myao_domain::people::{FamiliarityThresholds, FORGOTTEN_NOTICE};
use myao_domain::{ChannelMemoryJob, Job, JudgmentJob, Reply, ResponseJob, Settings, Ts};
use myao_services::jobs::JobOutcome;
use myao_services::response::ResponseOutcome;
use myao_testkit::ids::{channel, user};
use myao_tests::stubs::{
    assert_in_order, at, message, ts, Bed, PromptKind, ALICE, BOB, BOT, GENERAL, PARTNERS, SECRET,
};
use serde_json::json;

async fn bed(tweak: impl FnOnce(&mut Settings)) -> Bed<DynamoStore> {
    Bed::on_emulator(tweak).await
}

const MOVED: &str = "I moved to Osaka last month, the new flat is near Namba";

/// A thread where Bob tells of his move: Alice's root and three replies.
async fn seed_move(bed: &Bed<DynamoStore>) -> Ts {
    seed_move_in(bed, GENERAL).await
}

/// The same thread in channel `ch`.
pub(crate) async fn seed_move_in(bed: &Bed<DynamoStore>, ch: &str) -> Ts {
    let root = ts(-900);
    bed.seed(&[
        message(ch, ALICE, root, None, "how was everyone's weekend?"),
        message(ch, BOB, ts(-880), Some(root), MOVED),
        message(
            ch,
            ALICE,
            ts(-860),
            Some(root),
            "wow, congrats on the move!",
        ),
        message(
            ch,
            BOB,
            ts(-840),
            Some(root),
            "thanks, still unpacking boxes",
        ),
    ])
    .await;
    root
}

/// What the digest's facts are: one fact from Bob's message (number 2: the
/// thread's root is shown first).
pub(crate) fn the_move() -> String {
    json!({"facts": [{
        "subject": "Bob", "fact": "Bob moved to Osaka last month, near Namba.",
        "keywords": ["osaka", "namba", "move"], "importance": 4, "shareable": true,
        "sources": [2]
    }]})
    .to_string()
}

pub(crate) async fn reflect_on_the_move(bed: &Bed<DynamoStore>) {
    seed_move(bed).await;
    bed.script.set_reflection(the_move());
    bed.run(&digest()).await;
}

pub(crate) async fn facts(bed: &Bed<DynamoStore>) -> Vec<myao_domain::facts::Fact> {
    bed.store.facts(&channel(GENERAL)).await.expect("facts")
}

/// Whether #general has a short-term memory.
async fn memory_of_general(bed: &Bed<DynamoStore>) -> bool {
    use myao_core::ports::MemoryRecords;
    let scope = myao_domain::MemoryScope::Channel {
        channel: channel(GENERAL),
    };
    bed.store
        .get_memory(&scope, myao_domain::MemoryKind::Short)
        .await
        .expect("read")
        .is_some()
}

/// `who`'s profile, if there is one.
async fn profile(bed: &Bed<DynamoStore>, who: &str) -> Option<myao_domain::people::Profile> {
    bed.store.profile(&user(who)).await.expect("read")
}

/// #general's memory job: its digest writes the facts.
pub(crate) fn digest() -> Job {
    Job::ChannelMemory(ChannelMemoryJob {
        channel: channel(GENERAL),
    })
}

/// `who` writes "@myao forget me" in #general, and the mention's reply
/// job runs.
pub(crate) async fn forget_me(bed: &Bed<DynamoStore>, who: &str) -> JobOutcome {
    mention_in_general(bed, who, "forget me").await
}

/// `who` writes "@myao `text`" in #general at the top level, and the
/// mention's reply job runs.
pub(crate) async fn mention_in_general(
    bed: &Bed<DynamoStore>,
    who: &str,
    text: &str,
) -> JobOutcome {
    bed.seed(&[message(
        GENERAL,
        who,
        ts(0),
        None,
        &format!("<@{BOT}> {text}"),
    )])
    .await;
    bed.run(&Job::Response(ResponseJob {
        channel: channel(GENERAL),
        thread_ts: None,
        newest_ts: ts(0),
        mention: true,
        reply: Reply::Full,
        seen_ts: None,
        grounds: None,
    }))
    .await
}

pub(crate) fn judgment(newest_ts: Ts) -> Job {
    Job::Judgment(JudgmentJob {
        channel: channel(GENERAL),
        thread_ts: None,
        newest_ts,
    })
}

#[tokio::test]
async fn a_quiet_thread_makes_one_reflection_that_writes_facts() {
    let bed = bed(|_| {}).await;
    reflect_on_the_move(&bed).await;

    let reflections = bed.fact_asks().await;
    assert_eq!(reflections.len(), 1);
    assert_eq!(
        reflections[0].body["response_format"]["type"],
        "json_object"
    );
    assert!(
        reflections[0].system.contains(MOVED),
        "the new messages are shown"
    );
    let written = facts(&bed).await;
    assert_eq!(written.len(), 1, "{written:?}");
    assert_eq!(written[0].sources, vec![ts(-880)], "message 1 is Bob's");
    assert_eq!(written[0].speakers, vec![user(BOB)]);

    // A digest with nothing new from people: no second ask for facts.
    bed.seed(&[message(GENERAL, BOT, ts(-800), None, "build passed")])
        .await;
    let calls = bed.llm_calls().await.len();
    bed.run(&digest()).await;
    assert_eq!(bed.llm_calls().await.len(), calls + 1, "a digest ran");
    assert_eq!(bed.fact_asks().await.len(), 1);
}

#[tokio::test]
async fn a_garbled_reflection_writes_nothing() {
    let bed = bed(|_| {}).await;
    seed_move(&bed).await;
    bed.script
        .set_reflection(r#"{"facts": [{"subject": "Bob", "fact": "moved", "sources": [9]}]}"#);
    bed.run(&digest()).await;
    assert_eq!(bed.fact_asks().await.len(), 1);
    assert!(facts(&bed).await.is_empty());
}

#[tokio::test]
async fn a_later_conversation_with_matching_words_recalls_the_fact() {
    let bed = bed(|_| {}).await;
    reflect_on_the_move(&bed).await;

    bed.seed(&[message(
        GENERAL,
        ALICE,
        ts(-100),
        None,
        "Bob, is Osaka treating you well?",
    )])
    .await;
    bed.run(&judgment(ts(-100))).await;
    let prompt = &bed.llm_calls_of(PromptKind::Judgment).await[0].system;
    assert_in_order(
        prompt,
        &[
            "## 覚えていること",
            "Bob moved to Osaka last month, near Namba.",
        ],
    );

    // An unrelated conversation: the fact stays out.
    let bed = self::bed(|_| {}).await;
    reflect_on_the_move(&bed).await;
    bed.seed(&[message(
        GENERAL,
        ALICE,
        ts(-100),
        None,
        "the build is red again",
    )])
    .await;
    bed.run(&judgment(ts(-100))).await;
    let prompt = &bed.llm_calls_of(PromptKind::Judgment).await[0].system;
    assert!(!prompt.contains("## 覚えていること"), "{prompt}");
}

#[tokio::test]
async fn a_deleted_source_message_removes_its_fact() {
    let bed = bed(|_| {}).await;
    reflect_on_the_move(&bed).await;
    assert_eq!(facts(&bed).await.len(), 1);

    bed.deliver(
        json!({"type": "message", "subtype": "message_deleted", "channel": GENERAL,
                       "ts": ts(0).to_string(), "deleted_ts": ts(-880).to_string()}),
    )
    .await;
    let done = bed.run_due().await;
    assert!(done.iter().any(|(job, _)| *job == Job::Forget), "{done:?}");
    assert!(facts(&bed).await.is_empty());
}

/// A bed where Bob's move is a fact of #general and two topics of his.
async fn bob_with_topics() -> Bed<DynamoStore> {
    let bed = bed(|_| {}).await;
    reflect_on_the_move(&bed).await;
    let bob = profile(&bed, BOB).await.expect("bob");
    assert_eq!(bob.topics, ["osaka", "namba"]);
    bed
}

/// Runs what is due; whether Bob's profile has no topic left then.
async fn bobs_topics_gone(bed: &Bed<DynamoStore>) -> bool {
    bed.run_due().await;
    profile(bed, BOB).await.expect("bob").topics.is_empty()
}

#[tokio::test]
async fn a_deleted_messages_topic_leaves_the_profile_and_every_later_prompt() {
    let bed = bob_with_topics().await;

    bed.deliver(
        json!({"type": "message", "subtype": "message_deleted", "channel": GENERAL,
                       "ts": ts(0).to_string(), "deleted_ts": ts(-880).to_string()}),
    )
    .await;
    assert!(bobs_topics_gone(&bed).await);

    bed.seed(&[message(GENERAL, BOB, ts(10), None, "lunch anyone?")])
        .await;
    bed.run(&Job::Judgment(JudgmentJob {
        channel: channel(GENERAL),
        thread_ts: None,
        newest_ts: ts(10),
    }))
    .await;
    let prompts = bed.llm_calls_of(PromptKind::Judgment).await;
    let last = &prompts.last().expect("a judgment").system;
    assert!(last.contains("- bob: "), "{last}");
    assert!(!last.to_lowercase().contains("osaka"), "{last}");
}

#[tokio::test]
async fn a_channel_made_private_takes_its_topics_from_the_profiles() {
    let bed = bob_with_topics().await;

    bed.deliver(
        json!({"type": "message", "subtype": "channel_convert_to_private",
                       "channel": GENERAL, "user": ALICE, "ts": ts(0).to_string()}),
    )
    .await;
    assert!(bobs_topics_gone(&bed).await);
    assert_eq!(
        facts(&bed).await.len(),
        1,
        "its own facts stay for its members"
    );
}

#[tokio::test]
async fn forget_me_removes_the_profile_and_the_facts_and_says_so() {
    let bed = bed(|_| {}).await;
    reflect_on_the_move(&bed).await;
    assert!(profile(&bed, BOB).await.is_some());

    let outcome = forget_me(&bed, BOB).await;

    assert!(
        matches!(&outcome, JobOutcome::Response(ResponseOutcome::Posted { text, .. }) if text == FORGOTTEN_NOTICE),
        "{outcome:?}"
    );
    assert!(profile(&bed, BOB).await.is_none());
    assert!(facts(&bed).await.is_empty());
    assert!(
        bed.llm_calls_of(PromptKind::Response).await.is_empty(),
        "no LLM call"
    );
    assert_eq!(bed.posts().await[0]["thread_ts"], ts(0).to_string());
    // Alice's profile stays.
    assert!(profile(&bed, ALICE).await.is_some());
}

#[tokio::test]
async fn profiles_count_interactions_and_the_prompt_shows_familiarity() {
    let bed = bed(|s| {
        s.familiarity_thresholds = FamiliarityThresholds {
            acquaintance: 1,
            friend: 2,
            close: 3,
        }
    })
    .await;
    let root = ts(-900);
    bed.seed(&[
        message(GENERAL, ALICE, root, None, "anyone know why grub fails?"),
        message(GENERAL, ALICE, ts(-880), Some(root), "myao, any idea?"),
        message(GENERAL, BOT, ts(-870), Some(root), "try update-grub"),
        message(GENERAL, ALICE, ts(-860), Some(root), "that fixed it"),
        message(GENERAL, BOB, ts(-850), Some(root), "nice"),
    ])
    .await;
    bed.run(&digest()).await;

    let alice = profile(&bed, ALICE).await.expect("alice");
    // Her root and two replies (the channel's digest counts them all, once):
    // calling it by name, being answered, answering it.
    assert_eq!((alice.messages, alice.interactions), (3, 3));
    let bob = profile(&bed, BOB).await.expect("bob");
    assert_eq!((bob.messages, bob.interactions), (1, 0));

    bed.seed(&[
        message(GENERAL, BOB, ts(-200), None, "lunch anyone?"),
        message(GENERAL, ALICE, ts(-100), None, "sure, where?"),
    ])
    .await;
    bed.run(&judgment(ts(-100))).await;
    let prompt = &bed.llm_calls_of(PromptKind::Judgment).await[0].system;
    assert_in_order(
        prompt,
        &[
            "## ここにいる人",
            "- alice: 親しい友達",
            "- bob: 初対面に近い",
        ],
    );
}

#[tokio::test]
async fn a_memory_written_midway_leaves_its_messages_for_the_reflection() {
    let bed = bed(|_| {}).await;
    let root = ts(-900);
    // The digest writes the channel's memories after a root and one reply:
    // too few for facts (`reflection_min_messages`, 3).
    bed.seed(&[
        message(GENERAL, ALICE, root, None, "how was everyone's weekend?"),
        message(GENERAL, BOB, ts(-880), Some(root), MOVED),
    ])
    .await;
    bed.run(&digest()).await;
    assert!(memory_of_general(&bed).await, "the memory was written");
    assert!(bed.fact_asks().await.is_empty());

    // Two more: four unread for facts in all, the first two included, and
    // shown as such though the memory already covers them.
    bed.seed(&[
        message(GENERAL, ALICE, ts(-860), Some(root), "wow, congrats!"),
        message(
            GENERAL,
            BOB,
            ts(-840),
            Some(root),
            "thanks, still unpacking",
        ),
    ])
    .await;
    bed.script.set_reflection(the_move());
    bed.run(&digest()).await;
    let asks = bed.fact_asks().await;
    assert_eq!(asks.len(), 1);
    assert!(
        asks[0].system.contains("[2]【新】") && asks[0].system.contains(MOVED),
        "the early reply is read"
    );
    assert_eq!(facts(&bed).await[0].sources, vec![ts(-880)]);
}

#[tokio::test]
async fn only_shareable_facts_of_open_channels_become_topics_shown_everywhere() {
    // A profile is shown in every channel: a private channel's fact stays
    // out of its topics.
    let bed = bed(|_| {}).await;
    seed_move_in(&bed, SECRET).await;
    bed.script.set_reflection(the_move());
    bed.run(&Job::ChannelMemory(ChannelMemoryJob {
        channel: channel(SECRET),
    }))
    .await;
    assert_eq!(
        bed.store
            .facts(&channel(SECRET))
            .await
            .expect("facts")
            .len(),
        1
    );
    let bob = profile(&bed, BOB).await.expect("bob");
    assert!(bob.topics.is_empty(), "{:?}", bob.topics);

    // The same shareable fact in a public channel gives topics.
    let bed = self::bed(|_| {}).await;
    reflect_on_the_move(&bed).await;
    let bob = profile(&bed, BOB).await.expect("bob");
    assert_eq!(bob.topics, vec!["osaka", "namba"]);

    // Shown where the open channels may be heard, not in a channel shared
    // with another organisation.
    for ch in [GENERAL, PARTNERS] {
        bed.seed(&[message(ch, BOB, ts(-100), None, "lunch anyone?")])
            .await;
        bed.run(&Job::Judgment(JudgmentJob {
            channel: channel(ch),
            thread_ts: None,
            newest_ts: ts(-100),
        }))
        .await;
    }
    let prompts = bed.llm_calls_of(PromptKind::Judgment).await;
    assert_eq!(prompts.len(), 2);
    assert!(prompts[0]
        .system
        .contains("- bob: 初対面に近い（最近の話題: osaka、namba）"));
    assert!(
        prompts[1].system.contains("- bob: 初対面に近い\n"),
        "{}",
        prompts[1].system
    );
    assert!(!prompts[1].system.contains("osaka"));
}

#[tokio::test]
async fn a_lone_messages_facts_are_asked_for_before_it_leaves_the_window() {
    let bed = bed(|_| {}).await;
    // One message from a person: too few for facts (3), and the channel's
    // first memory is written at once without them.
    bed.seed(&[message(GENERAL, BOB, ts(-600), None, MOVED)])
        .await;
    bed.run(&digest()).await;
    assert!(bed.fact_asks().await.is_empty());
    // Nothing else comes. Half the window later the digest asks for its
    // facts, before the message leaves the window unread.
    let half = i64::from(bed.settings.short_term_window_hours) * 1800;
    bed.clock.set(at(-600 + half - 60));
    bed.run(&digest()).await;
    assert!(bed.fact_asks().await.is_empty(), "not yet");
    bed.clock.set(at(-600 + half + 1));
    bed.script.set_reflection(
        json!({"facts": [{"subject": "Bob", "fact": "Bob moved to Osaka.", "keywords": ["osaka"],
            "importance": 4, "shareable": true, "sources": [1]}]})
        .to_string(),
    );
    bed.run(&digest()).await;
    assert_eq!(bed.fact_asks().await.len(), 1);
    assert_eq!(facts(&bed).await.len(), 1);
}
