//! Bounded work: a prompt fits its budget whatever the channel holds, and a
//! message full of mentions cannot make a job outlive its time. The real LLM
//! and Slack adapters talk to stub servers; the store is the in-process twin.
//!
//! - `a_message_full_of_fake_mentions_costs_a_handful_of_lookups`
//! - `huge_messages_and_many_channels_still_fit_every_prompt_budget`

use chrono::Duration;
use myao_core::ports::{ChannelRecords, MemoryRecords};
use myao_domain::budget::estimate_tokens;
use myao_domain::proactive::ProactiveChannels;
use myao_domain::Reply;
use myao_domain::{
    Channel, ChannelMemoryJob, Job, JudgmentJob, Memory, MemoryKind, MemoryScope, ProactiveJob,
    ResponseJob, Ts, Visibility,
};
use myao_services::jobs::JobOutcome;
use myao_services::proactive::ProactiveOutcome;
use myao_testkit::ids::channel;
use myao_tests::stubs::{at, message, opening, ts, verdict, Bed, PromptKind, ALICE, BOB, GENERAL};

#[tokio::test]
async fn a_message_full_of_fake_mentions_costs_a_handful_of_lookups() {
    let bed = Bed::new().await;
    bed.script.set_judgment(verdict(false, None));
    let flood: String = (0..2_000).map(|i| format!("<@UFAKE{i:05}> ")).collect();
    bed.seed(&[
        message(GENERAL, ALICE, ts(-900), None, &flood),
        message(GENERAL, BOB, ts(-800), None, "what was that?"),
    ])
    .await;
    let judge = |newest| {
        Job::Judgment(JudgmentJob {
            channel: channel(GENERAL),
            thread_ts: None,
            newest_ts: ts(newest),
        })
    };
    bed.run(&judge(-800)).await;
    let first = bed.slack_requests("users.info").await.len();
    // Two authors and at most five of the mentioned.
    assert!(first <= 7, "{first} users.info calls");
    let prompt = &bed.llm_calls_of(PromptKind::Judgment).await[0].system;
    assert!(
        prompt.contains("@UFAKE00000"),
        "unknown mentions show as ids"
    );

    // The failed lookups are remembered: the next job asks nothing again.
    bed.clock.set(at(600));
    bed.seed(&[message(GENERAL, BOB, ts(500), None, "anyone?")])
        .await;
    bed.run(&judge(500)).await;
    assert_eq!(bed.slack_requests("users.info").await.len(), first);
    // ... for a while only.
    bed.clock.set(at(600) + Duration::hours(2));
    bed.seed(&[message(GENERAL, BOB, ts(7_800), None, "hello?")])
        .await;
    bed.run(&judge(7_800)).await;
    assert!(bed.slack_requests("users.info").await.len() > first);
}

fn filler(tag: &str, chars: usize) -> String {
    let mut text = format!("{tag} ");
    while text.len() < chars {
        text.push_str("lorem ipsum dolor sit amet ");
    }
    text.truncate(chars);
    text
}

#[tokio::test]
async fn huge_messages_and_many_channels_still_fit_every_prompt_budget() {
    let bed = Bed::new().await;
    bed.script.set_judgment(verdict(false, None));
    let s = &bed.settings;
    // 100 other public channels, each active with long memories.
    for i in 0..100 {
        let c = Channel {
            id: channel(&format!("C9{i:03}")),
            name: format!("team-{i:03}"),
            visibility: Visibility::PUBLIC,
        };
        let later = bed.now() + Duration::days(90);
        bed.store
            .put_channel_info(&c, bed.now(), later)
            .await
            .expect("channel");
        bed.store
            .touch_channel(&c, at(-i * 60), later)
            .await
            .expect("touch");
        for kind in [MemoryKind::Long, MemoryKind::Short] {
            let memory = Memory {
                scope: MemoryScope::Channel {
                    channel: c.id.clone(),
                },
                kind,
                content: filler(&format!("MEMORY-{i:03}"), 3_000),
                updated_at: bed.now(),
                newest_ts: Some(ts(-1)),
            };
            bed.store.put_memory(&memory, later).await.expect("memory");
        }
    }
    // #general: 45 top-level messages and a thread of 5, each 40,000
    // characters (Slack's own cap).
    let mut messages = Vec::new();
    for i in 0..45 {
        messages.push(message(
            GENERAL,
            ALICE,
            ts(-3_000 + i * 10),
            None,
            &filler(&format!("TOP-{i:02}"), 40_000),
        ));
    }
    let root = ts(-2_000);
    messages.push(message(GENERAL, BOB, root, None, &filler("ROOT", 40_000)));
    for i in 0..4 {
        messages.push(message(
            GENERAL,
            ALICE,
            ts(-1_000 + i * 10),
            Some(root),
            &filler(&format!("REPLY-{i}"), 40_000),
        ));
    }
    bed.seed(&messages).await;

    bed.run(&Job::Judgment(JudgmentJob {
        channel: channel(GENERAL),
        thread_ts: Some(root),
        newest_ts: ts(-970),
    }))
    .await;
    let judgment = &bed.llm_calls_of(PromptKind::Judgment).await[0].system;
    let tokens = estimate_tokens(judgment);
    assert!(
        tokens <= s.judgment_prompt_max_tokens as usize,
        "{tokens} tokens over {}",
        s.judgment_prompt_max_tokens
    );
    // The judged conversation is whole (each message capped, visibly).
    for tag in ["ROOT", "REPLY-0", "REPLY-1", "REPLY-2", "REPLY-3"] {
        assert!(judgment.contains(tag), "{tag} was cut");
    }
    assert!(
        judgment.contains("[...]"),
        "long messages are capped visibly"
    );
    assert!(
        !judgment.contains(&filler("REPLY-3", 40_000)),
        "no message goes in whole"
    );
    // (The order of what goes is the prompts module's own test.)

    // A mention's reply prompt, and every memory prompt, fit theirs too.
    bed.seed(&[message(
        GENERAL,
        ALICE,
        ts(-100),
        None,
        "<@UBOT> summary please",
    )])
    .await;
    bed.run(&Job::Response(ResponseJob {
        channel: channel(GENERAL),
        thread_ts: None,
        newest_ts: ts(-100),
        mention: true,
        reply: Reply::Full,
        seen_ts: None,
        grounds: None,
    }))
    .await;
    let reply = &bed.llm_calls_of(PromptKind::Response).await[0].system;
    assert!(estimate_tokens(reply) <= s.response_prompt_max_tokens as usize);
    assert!(reply.contains("summary please"));

    bed.run(&Job::MemorySweep).await;
    let memory_calls: Vec<_> = bed
        .llm_calls()
        .await
        .into_iter()
        .filter(|c| matches!(c.kind, Some(PromptKind::Memory(_))))
        .collect();
    assert!(!memory_calls.is_empty());
    for call in memory_calls {
        let tokens = estimate_tokens(&call.system);
        assert!(
            tokens <= s.memory_prompt_max_tokens as usize,
            "{:?}: {tokens} tokens",
            call.kind
        );
    }
}

#[tokio::test]
async fn a_sweep_over_many_channels_puts_one_job_per_channel_on_the_queue() {
    let bed = Bed::new().await;
    let later = bed.now() + Duration::days(90);
    for i in 0..200 {
        let c = Channel {
            id: channel(&format!("C8{i:03}")),
            name: format!("busy-{i:03}"),
            visibility: Visibility::PUBLIC,
        };
        bed.store
            .touch_channel(&c, bed.now(), later)
            .await
            .expect("touch");
    }
    // Run by itself, as the hourly schedule does (not through the bed,
    // which would run the jobs it fans out).
    let outcome = myao_services::jobs::run(&bed.services, &Job::MemorySweep)
        .await
        .expect("the sweep");
    let myao_services::jobs::JobOutcome::Memory(report) = outcome else {
        panic!("{outcome:?}")
    };
    assert_eq!(report.llm_calls, 0, "the sweep itself asks nothing");
    assert_eq!(report.queued, 201);
    let queued = bed.board.queued();
    let channel_jobs: Vec<_> = queued
        .iter()
        .filter(|(at, j)| {
            matches!(j, Job::ChannelMemory(ChannelMemoryJob { .. })) && *at == bed.now()
        })
        .collect();
    assert_eq!(channel_jobs.len(), 200, "one job per active channel, now");
    let workspace: Vec<_> = queued
        .iter()
        .filter(|(_, j)| *j == Job::WorkspaceMemory)
        .collect();
    assert_eq!(workspace.len(), 1);
    assert_eq!(
        workspace[0].0,
        bed.now() + Duration::seconds(i64::from(myao_services::memory::WORKSPACE_AFTER_SECONDS)),
        "the workspace's after the channels'"
    );
    assert!(bed.llm_calls().await.is_empty());
}

/// Issue 55: a reply reads its conversation once. The response job's scene
/// (the thread, its root, the channel's window and the message it answers)
/// serves its late checks, the mention's words and the reply's context. An
/// unprompted answer in a question's thread and a mention's, the names and
/// the channel cached by an earlier reply, read the store at most this many
/// times each.
#[tokio::test]
async fn a_reply_reads_its_conversation_once() {
    let bed = Bed::new().await;
    bed.seed(&[
        message(GENERAL, ALICE, ts(-900), None, "the deploy failed again"),
        message(
            GENERAL,
            BOB,
            ts(-300),
            None,
            "how do I read the deploy logs?",
        ),
        message(
            GENERAL,
            ALICE,
            ts(-200),
            Some(ts(-900)),
            "<@UBOT> can you look?",
        ),
        message(
            GENERAL,
            ALICE,
            ts(-150),
            Some(ts(-900)),
            "<@UBOT> the second run too?",
        ),
    ])
    .await;
    let reply = |thread: i64, newest: i64, mention: bool| {
        Job::Response(ResponseJob {
            channel: channel(GENERAL),
            thread_ts: Some(ts(thread)),
            newest_ts: ts(newest),
            mention,
            reply: Reply::Full,
            seen_ts: None,
            grounds: None,
        })
    };
    bed.run(&reply(-900, -200, true)).await;
    bed.store.counts().reset();
    bed.run(&reply(-300, -300, false)).await;
    let unprompted = bed.store.counts().reads();
    bed.store.counts().reset();
    bed.run(&reply(-900, -150, true)).await;
    let mention = bed.store.counts().reads();
    assert_eq!(bed.llm_calls_of(PromptKind::Response).await.len(), 3);
    assert!(
        unprompted <= UNPROMPTED_READS && mention <= MENTION_READS,
        "{unprompted} and {mention} store reads"
    );
}

/// The store reads of an unprompted answer and of a mention's, in a thread,
/// the names and the channel cached: the context's memories, people and
/// facts, the claim, and the conversation once (before the scene, when the
/// late checks, the mention's words and the prompt each read it: 24 and
/// 22).
const UNPROMPTED_READS: u64 = 19;
const MENTION_READS: u64 = 21;

/// A proactive judgment reads the channel's last messages once: the
/// silence's holds and the prompt both take what it read (before, each
/// read them: 15 reads).
#[tokio::test]
async fn a_proactive_judgment_reads_the_channel_once() {
    const HOUR: i64 = 3_600;
    let bed = Bed::with_settings(|s| {
        s.proactive = true;
        s.proactive_channels = ProactiveChannels::parse(GENERAL).expect("ids");
    })
    .await;
    bed.seed(&[
        message(
            GENERAL,
            BOB,
            ts(-30 * HOUR),
            None,
            "moving to Osaka next week!",
        ),
        message(
            GENERAL,
            ALICE,
            ts(-30 * HOUR + 60),
            None,
            "good luck with the boxes",
        ),
    ])
    .await;
    bed.script
        .set_proactive(opening(Some("ask Bob how the move went")));
    // Monday 14:00 in the default zone: inside the working hours.
    bed.clock.set(at(6 * HOUR));
    bed.store.counts().reset();
    let job = Job::Proactive(ProactiveJob {
        channel: channel(GENERAL),
        made_at: Ts::from_datetime(at(0)),
    });
    let outcome = bed.run(&job).await;
    let reads = bed.store.counts().reads();
    assert!(
        matches!(
            outcome,
            JobOutcome::Proactive(ProactiveOutcome::Open { .. })
        ),
        "{outcome:?}"
    );
    assert!(reads <= PROACTIVE_READS, "{reads} store reads");
}

/// The store reads of a proactive judgment that opens: the channel, its
/// labels, the messages since the job and the last ones, the week's
/// openings, the claims, the memories, people, sketches and facts.
const PROACTIVE_READS: u64 = 14;

/// A digest asked once more after an answer it could not use reads nothing
/// again: the names its messages show, the forgets and the sketches are
/// read once for all its calls (before, the second call read them again).
#[tokio::test]
async fn a_digest_asked_again_reads_nothing_again() {
    let reads = |garbled: bool| async move {
        let bed = Bed::new().await;
        bed.seed(&[
            message(GENERAL, ALICE, ts(-600), None, "the deploy is red"),
            message(GENERAL, BOB, ts(-500), None, "looking at it"),
        ])
        .await;
        if garbled {
            bed.script
                .set_digest_answer_for("Sure! Here is a summary of the channel: ...", 1);
        }
        bed.store.counts().reset();
        let job = Job::ChannelMemory(ChannelMemoryJob {
            channel: channel(GENERAL),
        });
        let JobOutcome::Memory(report) = bed.run(&job).await else {
            panic!("not a memory report");
        };
        assert!(!report.written.is_empty(), "{report:?}");
        (report.llm_calls, bed.store.counts().reads())
    };
    let (once, read_once) = reads(false).await;
    let (twice, read_twice) = reads(true).await;
    assert_eq!((once, twice), (1, 2), "the second call is the retry");
    assert_eq!(read_twice, read_once, "the retry read the store again");
}
