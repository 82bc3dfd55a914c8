//! Privacy: what is said in a channel stays in it, and what is deleted is
//! forgotten. The services run over DynamoDB on the emulator, the real LLM
//! and Slack adapters against stub servers, and ingest for the deletions.
//!
//! The LLM stub repeats every `MARK-...` word of a memory prompt in the
//! memory it writes, as a summary repeats facts; so a fact can be followed
//! through thread, channel and workspace memories into later prompts.
//!
//! - a public channel never hears a private or externally shared one, nor
//!   does the workspace memory: `every_prompt_holds_only_what_its_audience_may_read`
//! - a channel made private stops reaching the others at once:
//!   `a_channel_made_private_stops_reaching_other_channels`
//! - a deleted message is forgotten by every memory:
//!   `a_deleted_message_is_forgotten_by_every_memory_that_covered_it`
//! - an edit that arrives first wins: `an_edit_that_arrives_before_its_message_is_kept`

use myao_core::ports::{MemoryRecords, Messages};
use std::collections::BTreeSet;

use myao_aws::dynamodb::DynamoStore;
use myao_core::app::ingest::Outcome;
use myao_domain::Reply;
use myao_domain::{ChannelMemoryJob, Job, JudgmentJob, MemoryKind, MemoryScope, ResponseJob};
use myao_testkit::http::{completion, mount_once};
use myao_testkit::ids::channel;
use myao_tests::stubs::{
    at, message, ts, verdict, Bed, LlmCall, MemoryTask, PromptKind, ALICE, BOB, GENERAL, PARTNERS,
    RANDOM, SECRET,
};
use serde_json::json;
use wiremock::matchers::{method, path, query_param};
use wiremock::{Mock, ResponseTemplate};

fn marks(text: &str) -> BTreeSet<String> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
        .filter(|w| w.starts_with("MARK-"))
        .map(str::to_owned)
        .collect()
}

/// The LLM calls made while `f` ran.
async fn calls_during<F: std::future::Future>(bed: &Bed<DynamoStore>, f: F) -> Vec<LlmCall> {
    let before = bed.llm_calls().await.len();
    f.await;
    bed.llm_calls().await.into_iter().skip(before).collect()
}

/// Who reads what a call's prompt is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reader {
    General,
    Secret,
    Partners,
    Workspace,
}

impl Reader {
    /// The facts its prompts may hold, and the channel names they may show.
    fn allowed(self) -> (&'static [&'static str], &'static [&'static str]) {
        match self {
            Reader::General | Reader::Workspace => (&["MARK-PUBLIC"], &["general"]),
            Reader::Secret => (
                &["MARK-PUBLIC", "MARK-PRIVATE"],
                &["general", "secret-plans"],
            ),
            Reader::Partners => (&["MARK-EXTERNAL"], &["partners"]),
        }
    }

    fn of_channel(id: &str) -> Reader {
        match id {
            GENERAL => Reader::General,
            SECRET => Reader::Secret,
            PARTNERS => Reader::Partners,
            other => panic!("no reader for {other}"),
        }
    }
}

/// The reader of a memory-run call: the workspace for workspace tasks, else
/// the channel its task names.
fn sweep_reader(call: &LlmCall) -> Reader {
    match call.kind {
        Some(PromptKind::Memory(MemoryTask::WorkspaceShort | MemoryTask::WorkspaceLong)) => {
            Reader::Workspace
        }
        Some(PromptKind::Memory(_)) => {
            for (name, reader) in [
                ("#secret-plans", Reader::Secret),
                ("#partners", Reader::Partners),
                ("#general", Reader::General),
            ] {
                if call.system.contains(name) {
                    return reader;
                }
            }
            panic!("a memory task for no known channel:\n{}", call.system)
        }
        other => panic!("a memory run made a {other:?} call"),
    }
}

fn assert_only_allowed(reader: Reader, call: &LlmCall) {
    let (facts, names) = reader.allowed();
    for mark in marks(&call.system) {
        assert!(
            facts.contains(&mark.as_str()),
            "a {:?} prompt for {reader:?} holds {mark}:\n{}",
            call.kind,
            call.system
        );
    }
    for name in ["general", "secret-plans", "partners"] {
        if !names.contains(&name) {
            assert!(
                !call.system.contains(&format!("#{name}")),
                "a {:?} prompt for {reader:?} names #{name}:\n{}",
                call.kind,
                call.system
            );
        }
    }
}

/// Runs the judgment of `ch`'s thread and every job it leads to (the reply,
/// the thread's memory), checking each call against `ch`'s readers.
async fn converse(bed: &Bed<DynamoStore>, ch: &str, root: i64, newest: i64) -> Vec<LlmCall> {
    let calls = calls_during(bed, async {
        bed.run(&Job::Judgment(JudgmentJob {
            channel: channel(ch),
            thread_ts: Some(ts(root)),
            newest_ts: ts(newest),
        }))
        .await;
        bed.run_due().await;
    })
    .await;
    for call in &calls {
        assert_only_allowed(Reader::of_channel(ch), call);
    }
    calls
}

async fn sweep(bed: &Bed<DynamoStore>) -> Vec<LlmCall> {
    let calls = calls_during(bed, bed.run(&Job::MemorySweep)).await;
    for call in &calls {
        assert_only_allowed(sweep_reader(call), call);
    }
    calls
}

#[tokio::test]
async fn every_prompt_holds_only_what_its_audience_may_read() {
    let bed = Bed::on_emulator(|_| {}).await;
    bed.script.set_judgment(verdict(true, Some(0)));
    // Each channel has a thread with a fact of its own.
    for (ch, offset, fact) in [
        (GENERAL, 0, "MARK-PUBLIC 週末は山に行く"),
        (SECRET, 10, "MARK-PRIVATE 新製品の値段は内緒"),
        (PARTNERS, 20, "MARK-EXTERNAL 契約の条件"),
    ] {
        bed.seed(&[
            message(ch, ALICE, ts(-900 + offset), None, fact),
            message(
                ch,
                BOB,
                ts(-800 + offset),
                Some(ts(-900 + offset)),
                "なるほど",
            ),
        ])
        .await;
    }
    let mut all = Vec::new();
    for (ch, offset) in [(GENERAL, 0), (SECRET, 10), (PARTNERS, 20)] {
        all.extend(converse(&bed, ch, -900 + offset, -800 + offset).await);
    }
    let first_sweep = sweep(&bed).await;

    // A second round: every channel talks again, with memories everywhere.
    bed.clock.set(at(3_600));
    for (ch, offset) in [(GENERAL, 0), (SECRET, 10), (PARTNERS, 20)] {
        bed.seed(&[message(
            ch,
            ALICE,
            ts(3_500 + offset),
            Some(ts(-900 + offset)),
            // (Not a question: one asked a moment ago waits for the
            // conversation's pace before anyone judges it.)
            "ところで最近忙しくて",
        )])
        .await;
    }
    let mut second = Vec::new();
    for (ch, offset) in [(GENERAL, 0), (SECRET, 10), (PARTNERS, 20)] {
        second.push(converse(&bed, ch, -900 + offset, 3_500 + offset).await);
    }
    bed.clock.set(at(7_300));
    let second_sweep = sweep(&bed).await;

    // The facts did travel where they may: the filter is not silence.
    let workspace_calls: Vec<&LlmCall> = first_sweep
        .iter()
        .chain(&second_sweep)
        .filter(|c| sweep_reader(c) == Reader::Workspace)
        .collect();
    assert!(
        !workspace_calls.is_empty(),
        "the workspace memory was written"
    );
    assert!(
        workspace_calls
            .iter()
            .any(|c| c.system.contains("MARK-PUBLIC")),
        "the workspace memory learns the public channel"
    );
    let secret_judgment = second[1]
        .iter()
        .find(|c| c.kind == Some(PromptKind::Judgment))
        .expect("the private channel was judged");
    assert!(
        secret_judgment.system.contains("MARK-PRIVATE"),
        "its own memories"
    );
    assert!(
        secret_judgment.system.contains("MARK-PUBLIC"),
        "a private channel hears the public ones:\n{}",
        secret_judgment.system
    );
    let general_judgment = second[0]
        .iter()
        .find(|c| c.kind == Some(PromptKind::Judgment))
        .expect("the public channel was judged");
    assert!(general_judgment.system.contains("MARK-PUBLIC"));
    let partners_judgment = second[2]
        .iter()
        .find(|c| c.kind == Some(PromptKind::Judgment))
        .expect("the shared channel was judged");
    assert!(partners_judgment.system.contains("MARK-EXTERNAL"));
    assert!(
        !all.is_empty() && second.iter().all(|calls| calls.len() >= 2),
        "judgments and replies ran"
    );
    // The workspace memory itself holds nothing private.
    for kind in [MemoryKind::Short, MemoryKind::Long] {
        let m = bed
            .store
            .get_memory(&MemoryScope::Workspace, kind)
            .await
            .expect("read")
            .expect("a workspace memory");
        assert_eq!(
            marks(&m.content),
            BTreeSet::from(["MARK-PUBLIC".to_owned()])
        );
    }
}

#[tokio::test]
async fn a_channel_made_private_stops_reaching_other_channels() {
    let bed = Bed::on_emulator(|_| {}).await;
    bed.script.set_judgment(verdict(false, None));
    bed.seed(&[
        message(GENERAL, ALICE, ts(-900), None, "MARK-PUBLIC 来週の予定"),
        message(GENERAL, BOB, ts(-800), Some(ts(-900)), "了解"),
        message(RANDOM, ALICE, ts(-700), None, "お昼なににする?"),
    ])
    .await;
    bed.run(&Job::Judgment(JudgmentJob {
        channel: channel(GENERAL),
        thread_ts: Some(ts(-900)),
        newest_ts: ts(-800),
    }))
    .await;
    bed.run(&Job::MemorySweep).await;
    let judge_random = || async {
        calls_during(
            &bed,
            bed.run(&Job::Judgment(JudgmentJob {
                channel: channel(RANDOM),
                thread_ts: None,
                newest_ts: ts(-700),
            })),
        )
        .await
    };
    let before = judge_random().await;
    assert!(
        before.iter().any(|c| c.system.contains("MARK-PUBLIC")),
        "while public, #general's memories reach #random"
    );

    // Slack now says so too.
    Mock::given(method("GET"))
        .and(path("/api/conversations.info"))
        .and(query_param("channel", GENERAL))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "ok": true,
            "channel": {"id": GENERAL, "name": "general", "is_group": true, "is_private": true}
        })))
        .with_priority(1)
        .mount(&bed.slack_server)
        .await;
    let outcome = bed
        .deliver(
            json!({"type": "message", "subtype": "channel_convert_to_private", "channel": GENERAL,
               "user": ALICE, "text": "made this channel private", "ts": ts(-600).to_string()}),
        )
        .await;
    assert_eq!(outcome, Outcome::VisibilityChanged);
    // Ingest queued the job that forgets it; it runs at once.
    let forgot = bed.run_due().await;
    assert!(
        forgot.iter().any(|(job, _)| *job == Job::Forget),
        "{forgot:?}"
    );
    let after = judge_random().await;
    assert!(!after.is_empty());
    for call in &after {
        assert!(
            !call.system.contains("MARK-PUBLIC") && !call.system.contains("#general"),
            "a private #general reached #random:\n{}",
            call.system
        );
    }
}

#[tokio::test]
async fn a_deleted_message_is_forgotten_by_every_memory_that_covered_it() {
    let bed = Bed::on_emulator(|_| {}).await;
    bed.script.set_judgment(verdict(false, None));
    bed.seed(&[
        message(GENERAL, ALICE, ts(-900), None, "MARK-KEEP 合言葉を決めよう"),
        message(
            GENERAL,
            BOB,
            ts(-800),
            Some(ts(-900)),
            "MARK-GONE 合言葉は swordfish",
        ),
        message(GENERAL, ALICE, ts(-700), Some(ts(-900)), "了解"),
    ])
    .await;
    bed.run(&Job::Judgment(JudgmentJob {
        channel: channel(GENERAL),
        thread_ts: Some(ts(-900)),
        newest_ts: ts(-700),
    }))
    .await;
    bed.run_due().await;
    bed.run(&Job::MemorySweep).await;
    let scopes = [
        (
            MemoryScope::Thread {
                channel: channel(GENERAL),
                thread_ts: ts(-900),
            },
            MemoryKind::Short,
        ),
        (
            MemoryScope::Channel {
                channel: channel(GENERAL),
            },
            MemoryKind::Short,
        ),
        (
            MemoryScope::Channel {
                channel: channel(GENERAL),
            },
            MemoryKind::Long,
        ),
        (MemoryScope::Workspace, MemoryKind::Short),
        (MemoryScope::Workspace, MemoryKind::Long),
    ];
    for (scope, kind) in &scopes {
        let m = bed.store.get_memory(scope, *kind).await.expect("read");
        let m = m.unwrap_or_else(|| panic!("no {kind:?} memory of {scope}"));
        assert!(
            m.content.contains("MARK-GONE"),
            "{scope} {kind:?} covered it"
        );
    }

    bed.clock.set(at(600));
    let outcome = bed.deliver(
        json!({"type": "message", "subtype": "message_deleted", "hidden": true, "channel": GENERAL,
               "ts": ts(600).to_string(), "deleted_ts": ts(-800).to_string(),
               "previous_message": {"type": "message", "user": BOB, "text": "MARK-GONE 合言葉は swordfish",
                                    "ts": ts(-800).to_string(), "thread_ts": ts(-900).to_string()}}),
    )
    .await;
    assert_eq!(outcome, Outcome::Deleted);

    // The next memory run rewrites what covered it, from what remains.
    bed.clock.set(at(3_700));
    let calls = calls_during(&bed, bed.run(&Job::MemorySweep)).await;
    assert!(!calls.is_empty(), "the memories were rewritten");
    for (scope, kind) in &scopes {
        let m = bed.store.get_memory(scope, *kind).await.expect("read");
        let m = m.unwrap_or_else(|| panic!("no {kind:?} memory of {scope} after forgetting"));
        assert!(
            !m.content.contains("MARK-GONE"),
            "{scope} {kind:?} still holds the deleted message: {}",
            m.content
        );
        assert!(
            m.content.contains("MARK-KEEP"),
            "{scope} {kind:?} was rewritten from what remains: {}",
            m.content
        );
    }
    assert!(
        bed.store.forgets().await.expect("read").is_empty(),
        "the deletion was handled once"
    );

    // Later conversations: no prompt holds the deleted text.
    bed.seed(&[message(
        GENERAL,
        ALICE,
        ts(3_650),
        None,
        "<@UBOT> 合言葉って何だっけ?",
    )])
    .await;
    let later = calls_during(&bed, async {
        bed.run(&Job::Response(ResponseJob {
            channel: channel(GENERAL),
            thread_ts: None,
            newest_ts: ts(3_650),
            mention: true,
            reply: Reply::Full,
            seen_ts: None,
            grounds: None,
        }))
        .await;
        bed.run(&Job::Judgment(JudgmentJob {
            channel: channel(GENERAL),
            thread_ts: Some(ts(-900)),
            newest_ts: ts(-700),
        }))
        .await;
    })
    .await;
    assert!(!later.is_empty());
    for call in calls.iter().chain(&later) {
        assert!(
            !call.system.contains("MARK-GONE") && !call.system.contains("swordfish"),
            "a {:?} prompt holds the deleted message:\n{}",
            call.kind,
            call.system
        );
    }
}

#[tokio::test]
async fn a_deleted_thread_root_with_replies_is_forgotten_too() {
    // Slack keeps such a root as a tombstone: a `message_changed` whose
    // message has the subtype `tombstone`. It is a deletion, not an edit.
    let bed = Bed::on_emulator(|_| {}).await;
    bed.seed(&[
        message(GENERAL, ALICE, ts(-900), None, "MARK-GONE 極秘の計画"),
        message(GENERAL, BOB, ts(-800), Some(ts(-900)), "MARK-KEEP いいね"),
    ])
    .await;
    bed.run(&Job::ChannelMemory(ChannelMemoryJob {
        channel: channel(GENERAL),
    }))
    .await;
    let outcome = bed.deliver(
        json!({"type": "message", "subtype": "message_changed", "hidden": true, "channel": GENERAL,
               "ts": ts(10).to_string(),
               "message": {"type": "message", "subtype": "tombstone", "user": "USLACKBOT",
                           "text": "This message was deleted.", "ts": ts(-900).to_string(),
                           "thread_ts": ts(-900).to_string(), "reply_count": 1},
               "previous_message": {"type": "message", "user": ALICE, "text": "MARK-GONE 極秘の計画",
                                    "ts": ts(-900).to_string(), "thread_ts": ts(-900).to_string()}}),
    )
    .await;
    assert_eq!(outcome, Outcome::Deleted);
    assert_eq!(
        bed.store
            .get_message(&channel(GENERAL), ts(-900))
            .await
            .expect("read"),
        None
    );
    bed.clock.set(at(3_700));
    bed.run(&Job::MemorySweep).await;
    let thread = bed
        .store
        .get_memory(
            &MemoryScope::Thread {
                channel: channel(GENERAL),
                thread_ts: ts(-900),
            },
            MemoryKind::Short,
        )
        .await
        .expect("read")
        .expect("rewritten from the reply that remains");
    assert!(!thread.content.contains("MARK-GONE"), "{}", thread.content);
    assert!(thread.content.contains("MARK-KEEP"), "{}", thread.content);
}

#[tokio::test]
async fn an_edit_that_arrives_before_its_message_is_kept() {
    let bed = Bed::on_emulator(|_| {}).await;
    let original = ts(-100);
    let edited = bed.deliver(
        json!({"type": "message", "subtype": "message_changed", "hidden": true, "channel": GENERAL,
               "ts": ts(-50).to_string(),
               "message": {"type": "message", "user": ALICE, "text": "the new text",
                           "ts": original.to_string(), "edited": {"user": ALICE, "ts": ts(-50).to_string()}},
               "previous_message": {"type": "message", "user": ALICE, "text": "the old text",
                                    "ts": original.to_string()}}),
    )
    .await;
    assert_eq!(edited, Outcome::Edited);
    let late = bed
        .deliver(
            json!({"type": "message", "channel": GENERAL, "channel_type": "channel", "user": ALICE,
               "text": "the old text", "ts": original.to_string()}),
        )
        .await;
    assert!(matches!(late, Outcome::Stored { .. }), "{late:?}");
    let stored = bed
        .store
        .get_message(&channel(GENERAL), original)
        .await
        .expect("read")
        .expect("stored");
    assert_eq!(stored.text, "the new text");
    // It was routed like any new message: its conversation has a judgment.
    assert!(!bed.board.scheduled().is_empty());
}

#[tokio::test]
async fn an_edit_makes_the_memories_forget_the_replaced_text() {
    let bed = Bed::on_emulator(|_| {}).await;
    bed.seed(&[
        message(GENERAL, ALICE, ts(-900), None, "MARK-KEEP 新しい合言葉"),
        message(GENERAL, BOB, ts(-800), Some(ts(-900)), "MARK-OLD swordfish"),
    ])
    .await;
    bed.run(&Job::ChannelMemory(ChannelMemoryJob {
        channel: channel(GENERAL),
    }))
    .await;
    let thread = MemoryScope::Thread {
        channel: channel(GENERAL),
        thread_ts: ts(-900),
    };
    let memory = |bed: &Bed<DynamoStore>| {
        let scope = thread.clone();
        let store = bed.store.clone();
        async move {
            store
                .get_memory(&scope, MemoryKind::Short)
                .await
                .expect("read")
        }
    };
    assert!(memory(&bed)
        .await
        .expect("written")
        .content
        .contains("MARK-OLD"));

    bed.clock.set(at(60));
    let outcome = bed.deliver(
        json!({"type": "message", "subtype": "message_changed", "channel": GENERAL, "ts": ts(60).to_string(),
               "message": {"type": "message", "user": BOB, "text": "MARK-NEW (秘密なので消した)",
                           "ts": ts(-800).to_string(), "thread_ts": ts(-900).to_string()},
               "previous_message": {"type": "message", "user": BOB, "text": "MARK-OLD swordfish",
                                    "ts": ts(-800).to_string(), "thread_ts": ts(-900).to_string()}}),
    )
    .await;
    assert_eq!(outcome, Outcome::Edited);
    // The forget job ingest queued runs at once.
    let ran = bed.run_due().await;
    assert!(ran.iter().any(|(job, _)| *job == Job::Forget), "{ran:?}");
    let rewritten = memory(&bed).await.expect("rewritten");
    assert!(
        !rewritten.content.contains("MARK-OLD"),
        "{}",
        rewritten.content
    );
    assert!(
        rewritten.content.contains("MARK-NEW"),
        "{}",
        rewritten.content
    );
}

#[tokio::test]
async fn a_memory_written_from_a_read_before_a_deletion_is_not_stored() {
    // A thread's memory job reads the thread, then waits on the LLM; the
    // message is deleted and the forget job runs meanwhile, finding nothing
    // to rewrite yet. The late write must not bring the message back.
    let bed = Bed::on_emulator(|_| {}).await;
    let slow = completion("- 2026-01-05 THREAD MARK-GONE")
        .set_delay(std::time::Duration::from_millis(800));
    mount_once(&bed.llm_server, "POST", "/v1/chat/completions", slow).await;
    bed.seed(&[
        message(GENERAL, ALICE, ts(-900), None, "MARK-KEEP 予定"),
        message(GENERAL, BOB, ts(-800), Some(ts(-900)), "MARK-GONE 秘密"),
    ])
    .await;
    let job = Job::ChannelMemory(ChannelMemoryJob {
        channel: channel(GENERAL),
    });
    let slow_job = bed.run(&job);
    let delete_meanwhile = async {
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        bed.clock.set(at(1));
        bed.deliver(
            json!({"type": "message", "subtype": "message_deleted", "channel": GENERAL,
                   "ts": ts(1).to_string(), "deleted_ts": ts(-800).to_string()}),
        )
        .await;
        bed.run_due().await
    };
    let (_, forgot) = tokio::join!(slow_job, delete_meanwhile);
    assert!(forgot.iter().any(|(job, _)| *job == Job::Forget));
    let thread = bed
        .store
        .get_memory(
            &MemoryScope::Thread {
                channel: channel(GENERAL),
                thread_ts: ts(-900),
            },
            MemoryKind::Short,
        )
        .await
        .expect("read");
    assert!(
        thread
            .as_ref()
            .is_none_or(|m| !m.content.contains("MARK-GONE")),
        "{thread:?}"
    );
}

#[tokio::test]
async fn a_channel_found_private_without_an_event_leaves_the_workspace_memory() {
    let bed = Bed::on_emulator(|_| {}).await;
    bed.script.set_judgment(verdict(false, None));
    bed.seed(&[
        message(GENERAL, ALICE, ts(-900), None, "MARK-PUBLIC 来週の予定"),
        message(RANDOM, ALICE, ts(-700), None, "お昼なににする?"),
    ])
    .await;
    bed.run(&Job::Judgment(JudgmentJob {
        channel: channel(GENERAL),
        thread_ts: None,
        newest_ts: ts(-900),
    }))
    .await;
    bed.run(&Job::MemorySweep).await;
    let workspace = || async {
        bed.store
            .get_memory(&MemoryScope::Workspace, MemoryKind::Short)
            .await
            .expect("read")
    };
    assert!(workspace()
        .await
        .expect("written")
        .content
        .contains("MARK-PUBLIC"));

    // Made private, the event missed: Slack says so at the next check.
    Mock::given(method("GET"))
        .and(path("/api/conversations.info"))
        .and(query_param("channel", GENERAL))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "ok": true,
            "channel": {"id": GENERAL, "name": "general", "is_private": true}
        })))
        .with_priority(1)
        .mount(&bed.slack_server)
        .await;
    bed.clock.set(at(25 * 3600));
    bed.seed(&[message(GENERAL, BOB, ts(25 * 3600 - 60), None, "了解")])
        .await;
    bed.run(&Job::Judgment(JudgmentJob {
        channel: channel(GENERAL),
        thread_ts: None,
        newest_ts: ts(25 * 3600 - 60),
    }))
    .await;
    bed.run_due().await;
    assert!(
        workspace()
            .await
            .is_none_or(|m| !m.content.contains("MARK-PUBLIC")),
        "the workspace memory forgot the now private channel"
    );
    let random = calls_during(
        &bed,
        bed.run(&Job::Judgment(JudgmentJob {
            channel: channel(RANDOM),
            thread_ts: None,
            newest_ts: ts(-700),
        })),
    )
    .await;
    for call in &random {
        assert!(!call.system.contains("MARK-PUBLIC"), "{}", call.system);
    }
}

#[tokio::test]
async fn a_deleted_message_leaves_every_prompt_before_its_forget_job_runs() {
    let bed = Bed::on_emulator(|_| {}).await;
    bed.script.set_judgment(verdict(false, None));
    bed.seed(&[
        message(GENERAL, ALICE, ts(-900), None, "MARK-KEEP 予定"),
        message(GENERAL, BOB, ts(-800), Some(ts(-900)), "MARK-GONE 秘密"),
    ])
    .await;
    bed.run(&Job::ChannelMemory(ChannelMemoryJob {
        channel: channel(GENERAL),
    }))
    .await;
    bed.run(&Job::MemorySweep).await;
    bed.clock.set(at(60));
    bed.deliver(
        json!({"type": "message", "subtype": "message_deleted", "channel": GENERAL,
               "ts": ts(60).to_string(), "deleted_ts": ts(-800).to_string()}),
    )
    .await;
    // The forget job is queued, not run: the memory queue may be busy.
    assert!(bed.board.queued().iter().any(|(_, j)| *j == Job::Forget));
    let calls = calls_during(
        &bed,
        bed.run(&Job::Judgment(JudgmentJob {
            channel: channel(GENERAL),
            thread_ts: Some(ts(-900)),
            newest_ts: ts(-900),
        })),
    )
    .await;
    let judgment = calls
        .iter()
        .find(|c| c.kind == Some(PromptKind::Judgment))
        .expect("judged");
    assert!(
        !judgment.system.contains("MARK-GONE"),
        "{}",
        judgment.system
    );
    assert!(judgment.system.contains("MARK-KEEP"), "the rest stays");
}
