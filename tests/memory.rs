//! Memory (issue 5): thread, channel and workspace memories written by the
//! LLM through `myao_services::jobs::run`, with the real LLM and Slack adapters
//! against stub servers and the in-process AWS twins (`myao_tests::stubs`).
//!
//! - a thread that went quiet gets a memory, written by its channel's
//!   digest in the same call as the channel's, that the next judgment
//!   shows: `a_quiet_thread_gets_a_memory_*`
//! - the digest waits for enough new messages, or for the oldest to wait
//!   half the window: `a_digest_waits_*`
//! - the recurring run's order, and the response prompt's sections:
//!   `the_recurring_run_writes_*`
//! - nothing new, no LLM call: `a_second_recurring_run_*`
//! - long-term memory waits for its interval: `long_term_memory_*`
//! - deleted messages stay out of later prompts: `a_deleted_message_*`
//! - an unusable digest backs off, and a later good one writes memory:
//!   `an_unusable_digest_backs_off_*`

use chrono::Duration;
use myao_core::ports::{ChannelRecords, MemoryRecords, Messages, UserCache};
use myao_domain::Reply;
use myao_domain::{
    Channel, ChannelMemoryJob, Job, JudgmentJob, Memory, MemoryKind, MemoryScope, ResponseJob,
    ThreadMemoryJob, Visibility,
};
use myao_services::jobs::JobOutcome;
use myao_services::judgment::JudgmentOutcome;
use myao_services::memory::MemoryReport;
use myao_testkit::ids::channel;
use myao_tests::stubs::{
    assert_in_order, at, message, ts, verdict, Bed, MemoryTask, PromptKind, ALICE, BOB, GENERAL,
    RANDOM,
};

fn report(outcome: JobOutcome) -> MemoryReport {
    match outcome {
        JobOutcome::Memory(r) => r,
        other => panic!("not a memory outcome: {other:?}"),
    }
}

fn thread_scope(ch: &str, root: i64) -> MemoryScope {
    MemoryScope::Thread {
        channel: channel(ch),
        thread_ts: ts(root),
    }
}

fn channel_scope(ch: &str) -> MemoryScope {
    MemoryScope::Channel {
        channel: channel(ch),
    }
}

async fn memory(bed: &Bed, scope: &MemoryScope, kind: MemoryKind) -> Memory {
    bed.store
        .get_memory(scope, kind)
        .await
        .expect("read")
        .unwrap_or_else(|| panic!("no {kind:?} memory of {scope}"))
}

/// Records a channel as active, as the judgment and response services do.
async fn touch(bed: &Bed, id: &str, name: &str, offset: i64) {
    bed.store
        .touch_channel(
            &Channel {
                id: channel(id),
                name: name.to_owned(),
                visibility: Visibility::PUBLIC,
            },
            at(offset),
            at(offset) + chrono::Duration::days(90),
        )
        .await
        .expect("touch");
}

/// The kinds of the LLM calls made after the first `skip`.
async fn kinds_after(bed: &Bed, skip: usize) -> Vec<Option<PromptKind>> {
    bed.llm_calls()
        .await
        .into_iter()
        .skip(skip)
        .map(|c| c.kind)
        .collect()
}

#[tokio::test]
async fn a_quiet_thread_gets_a_memory_that_the_next_judgment_of_its_channel_shows() {
    let bed = Bed::new().await;
    bed.script.set_judgment(verdict(false, None));
    bed.seed(&[
        message(GENERAL, ALICE, ts(-900), None, "リリース日どうする?"),
        message(GENERAL, BOB, ts(-600), Some(ts(-900)), "金曜は?"),
        message(GENERAL, ALICE, ts(-300), Some(ts(-900)), "金曜で決まり"),
    ])
    .await;
    let judgment = Job::Judgment(JudgmentJob {
        channel: channel(GENERAL),
        thread_ts: Some(ts(-900)),
        newest_ts: ts(-300),
    });

    // The judgment queues no memory work of its own: the channel's digest
    // writes the thread's memory with the channel's, in one call.
    bed.run(&judgment).await;
    assert!(
        !bed.board
            .queued()
            .iter()
            .any(|(_, j)| matches!(j, Job::ThreadMemory(ThreadMemoryJob { .. }))),
        "{:?}",
        bed.board.queued()
    );
    bed.board.take_due(bed.now());
    let calls_before = bed.llm_calls().await.len();
    let written = report(
        bed.run(&Job::ChannelMemory(ChannelMemoryJob {
            channel: channel(GENERAL),
        }))
        .await,
    );

    assert_eq!(
        written.written,
        vec![
            (channel_scope(GENERAL), MemoryKind::Long),
            (thread_scope(GENERAL, -900), MemoryKind::Short),
            (channel_scope(GENERAL), MemoryKind::Short),
        ]
    );
    assert_eq!(written.llm_calls, 1);
    let calls = bed.llm_calls().await;
    assert_eq!(calls.len(), calls_before + 1);
    let prompt = &calls[calls_before];
    assert_eq!(prompt.kind, Some(PromptKind::Memory(MemoryTask::Digest)));
    assert_in_order(
        &prompt.system,
        &[
            &bed.settings.persona_system_prompt,
            "## 課題: チャンネルの記憶の更新",
            "### threads: スレッドの要約",
            &format!("- スレッド {}", ts(-900)),
            // The root is shown as its thread's too.
            &format!("alice（スレッド {}）:\nリリース日どうする?", ts(-900)),
            &format!("bob（スレッド {}）:\n金曜は?", ts(-900)),
            &format!("alice（スレッド {}）:\n金曜で決まり", ts(-900)),
        ],
    );
    let stored = memory(&bed, &thread_scope(GENERAL, -900), MemoryKind::Short).await;
    assert_eq!(stored.newest_ts, Some(ts(-300)));
    assert_eq!(stored.content, "- 2026-01-05 THREAD-1");

    // Nothing new: the next run asks nothing.
    let again = report(
        bed.run(&Job::ChannelMemory(ChannelMemoryJob {
            channel: channel(GENERAL),
        }))
        .await,
    );
    assert_eq!((again.written.len(), again.llm_calls), (0, 0), "{again:?}");

    // The next judgment of the channel lists the thread with its memory.
    bed.clock.advance(Duration::seconds(60));
    // (Not a question: one asked a minute ago waits for the channel's
    // pace before anyone judges it.)
    bed.seed(&[message(
        GENERAL,
        BOB,
        ts(30),
        None,
        "ところでお昼はカレーにしよう",
    )])
    .await;
    let outcome = bed
        .run(&Job::Judgment(JudgmentJob {
            channel: channel(GENERAL),
            thread_ts: None,
            newest_ts: ts(30),
        }))
        .await;
    assert!(
        matches!(outcome, JobOutcome::Judgment(JudgmentOutcome::Declined(..))),
        "{outcome:?}"
    );
    let judgments = bed.llm_calls_of(PromptKind::Judgment).await;
    let last = judgments.last().expect("a judgment call");
    assert_in_order(
        &last.system,
        &[
            "## 現在のスレッド一覧",
            &format!("### スレッド: {}", ts(-900)),
            &stored.content,
            "## 現在の会話",
            "ところでお昼はカレーにしよう",
        ],
    );
}

/// #general with a thread, #random with one message; both active.
async fn seed_two_channels(bed: &Bed) {
    bed.seed(&[
        message(
            GENERAL,
            ALICE,
            ts(-3600),
            None,
            "来週の勉強会のテーマ決めよう",
        ),
        message(
            GENERAL,
            BOB,
            ts(-3500),
            Some(ts(-3600)),
            "Rust の非同期がいい",
        ),
        message(RANDOM, BOB, ts(-1800), None, "猫の写真貼るね"),
    ])
    .await;
    touch(bed, GENERAL, "general", -3500).await;
    touch(bed, RANDOM, "random", -1800).await;
}

#[tokio::test]
async fn the_recurring_run_writes_channel_then_workspace_memories_and_prompts_show_them() {
    let bed = Bed::new().await;
    seed_two_channels(&bed).await;

    let swept = report(bed.run(&Job::MemorySweep).await);

    assert_eq!(
        swept,
        MemoryReport {
            // One job per channel (its memories, then its threads), the
            // workspace's after them.
            // (The short-term memory, which marks what is covered, last.)
            written: vec![
                (channel_scope(GENERAL), MemoryKind::Long),
                (thread_scope(GENERAL, -3600), MemoryKind::Short),
                (channel_scope(GENERAL), MemoryKind::Short),
                (channel_scope(RANDOM), MemoryKind::Long),
                (channel_scope(RANDOM), MemoryKind::Short),
                (MemoryScope::Workspace, MemoryKind::Short),
                (MemoryScope::Workspace, MemoryKind::Long),
            ],
            // Each channel's memories, and its thread's, in one call.
            llm_calls: 4,
            unusable: 0,
            queued: 3,
            facts: vec![],
            proactive: vec![],
        }
    );
    let calls = bed.llm_calls().await;
    let kinds: Vec<_> = calls.iter().map(|c| c.kind).collect();
    assert_eq!(
        kinds,
        [
            MemoryTask::Digest,
            MemoryTask::Digest,
            MemoryTask::WorkspaceShort,
            MemoryTask::WorkspaceLong,
        ]
        .map(|t| Some(PromptKind::Memory(t)))
    );
    let general_short = memory(&bed, &channel_scope(GENERAL), MemoryKind::Short).await;
    let general_long = memory(&bed, &channel_scope(GENERAL), MemoryKind::Long).await;
    let random_short = memory(&bed, &channel_scope(RANDOM), MemoryKind::Short).await;
    let random_long = memory(&bed, &channel_scope(RANDOM), MemoryKind::Long).await;
    let workspace_short = memory(&bed, &MemoryScope::Workspace, MemoryKind::Short).await;
    let workspace_long = memory(&bed, &MemoryScope::Workspace, MemoryKind::Long).await;
    assert_eq!(general_short.newest_ts, Some(ts(-3500)));
    assert_eq!(random_short.newest_ts, Some(ts(-1800)));
    assert_eq!(workspace_short.newest_ts, Some(ts(-1800)));

    // Each digest holds what it summarises, and asks for every memory of
    // its channel at once: the short-term, the long-term (there is none yet)
    // and the summary of the thread that moved.
    assert_in_order(
        &calls[0].system,
        &[
            "#general の直近 24 時間",
            "### channel: チャンネルの短期記憶",
            "### long: チャンネルの長期記憶",
            "（まだありません）",
            "### threads: スレッドの要約",
            &format!("- スレッド {}", ts(-3600)),
            "来週の勉強会のテーマ決めよう",
            &format!("（スレッド {}）:\nRust の非同期がいい", ts(-3600)),
        ],
    );
    assert!(!calls[0].system.contains("猫の写真"), "{}", calls[0].system);
    assert_in_order(&calls[1].system, &["#random の直近", "猫の写真貼るね"]);
    assert!(!calls[1].system.contains("### threads:"), "no thread moved");
    assert!(general_long.content.contains("CHANNEL-LONG"));
    assert_in_order(
        &calls[2].system,
        &[
            "### #general",
            &general_short.content,
            "### #random",
            &random_short.content,
        ],
    );
    assert!(calls[3].system.contains(&workspace_short.content));

    // A mention in #general: the response prompt shows them all, in place.
    bed.seed(&[message(
        GENERAL,
        ALICE,
        ts(-10),
        None,
        "<@UBOT> 勉強会の件どうなった?",
    )])
    .await;
    let outcome = bed
        .run(&Job::Response(ResponseJob {
            channel: channel(GENERAL),
            thread_ts: None,
            newest_ts: ts(-10),
            mention: true,
            reply: Reply::Full,
            seen_ts: None,
            grounds: None,
        }))
        .await;
    assert!(matches!(outcome, JobOutcome::Response(_)), "{outcome:?}");
    let responses = bed.llm_calls_of(PromptKind::Response).await;
    assert_eq!(responses.len(), 1);
    assert_in_order(
        &responses[0].system,
        &[
            "## 記憶",
            "### ワークスペースの歴史",
            &workspace_long.content,
            "### ワークスペースの最近の出来事",
            &workspace_short.content,
            "## チャンネル情報",
            "## 各チャンネルの記憶",
            "### #general",
            "#### 歴史",
            &general_long.content,
            "#### 最近の出来事",
            &general_short.content,
            "### #random",
            "#### 歴史",
            &random_long.content,
            "#### 最近の出来事",
            &random_short.content,
            "## 現在のスレッド一覧",
            "THREAD-1",
            "## 現在の会話",
            "@myao 勉強会の件どうなった?",
        ],
    );
}

#[tokio::test]
async fn a_second_recurring_run_without_new_messages_makes_no_llm_call() {
    // An interval shorter than the window, so that the second run is past
    // it while the window still holds the messages.
    let bed = Bed::with_settings(|s| s.long_term_update_interval_seconds = 3_600).await;
    seed_two_channels(&bed).await;
    let first = report(bed.run(&Job::MemorySweep).await);
    assert_eq!(first.llm_calls, 4);
    let calls = bed.llm_calls().await.len();
    let memories = bed.store.all_memories();

    // Past the long-term interval too: nothing new is still nothing to write.
    bed.clock.advance(Duration::seconds(
        i64::from(bed.settings.long_term_update_interval_seconds) + 60,
    ));
    let second = report(bed.run(&Job::MemorySweep).await);

    assert_eq!(
        (second.written.len(), second.llm_calls),
        (0, 0),
        "{second:?}"
    );
    assert_eq!(bed.llm_calls().await.len(), calls, "no LLM request");
    assert_eq!(bed.store.all_memories(), memories, "nothing rewritten");
}

#[tokio::test]
async fn long_term_memory_is_not_rewritten_before_its_interval() {
    // (Facts off: two messages' facts would wait for a digest of their own.)
    let bed = Bed::with_settings(|s| s.reflection_min_messages = 0).await;
    let interval = i64::from(bed.settings.long_term_update_interval_seconds);
    bed.seed(&[message(
        GENERAL,
        ALICE,
        ts(-600),
        None,
        "新しいリポジトリ作った",
    )])
    .await;
    touch(&bed, GENERAL, "general", -600).await;
    let first = report(bed.run(&Job::MemorySweep).await);
    assert_eq!(first.llm_calls, 3, "{first:?}");
    let short_1 = memory(&bed, &channel_scope(GENERAL), MemoryKind::Short).await;
    let long_1 = memory(&bed, &channel_scope(GENERAL), MemoryKind::Long).await;
    let workspace_long_1 = memory(&bed, &MemoryScope::Workspace, MemoryKind::Long).await;

    // A new message within the interval: the channel's short-term memory
    // follows it; its long-term memory and the workspace's (whose overview
    // of the channels is on the long-term clock too) wait.
    bed.clock.advance(Duration::seconds(120));
    bed.seed(&[message(GENERAL, BOB, ts(60), None, "README も書いた")])
        .await;
    let calls = bed.llm_calls().await.len();
    let second = report(bed.run(&Job::MemorySweep).await);

    assert_eq!(
        second.written,
        vec![(channel_scope(GENERAL), MemoryKind::Short)]
    );
    assert_eq!(
        kinds_after(&bed, calls).await,
        [Some(PromptKind::Memory(MemoryTask::Digest))]
    );
    assert!(!bed.llm_calls().await[calls].system.contains("### long:"));
    let short_2 = memory(&bed, &channel_scope(GENERAL), MemoryKind::Short).await;
    assert_ne!(short_2.content, short_1.content);
    assert_eq!(short_2.newest_ts, Some(ts(60)));
    assert_eq!(
        memory(&bed, &channel_scope(GENERAL), MemoryKind::Long).await,
        long_1
    );
    assert_eq!(
        memory(&bed, &MemoryScope::Workspace, MemoryKind::Long).await,
        workspace_long_1
    );

    // One second before the interval is over: still nothing to do.
    bed.clock.set(at(interval - 1));
    let calls = bed.llm_calls().await.len();
    let early = report(bed.run(&Job::MemorySweep).await);
    assert_eq!((early.written.len(), early.llm_calls), (0, 0), "{early:?}");
    assert_eq!(bed.llm_calls().await.len(), calls);

    // Past the interval: the long-term memories take the new short-term in.
    bed.clock.set(at(interval + 1));
    let third = report(bed.run(&Job::MemorySweep).await);

    assert_eq!(
        third.written,
        vec![
            (channel_scope(GENERAL), MemoryKind::Long),
            (MemoryScope::Workspace, MemoryKind::Short),
            (MemoryScope::Workspace, MemoryKind::Long),
        ]
    );
    let merge = bed.llm_calls().await;
    assert_eq!(merge.len(), calls + 3);
    assert_eq!(
        merge[calls].kind,
        Some(PromptKind::Memory(MemoryTask::ChannelLong))
    );
    assert_in_order(
        &merge[calls].system,
        &[
            "### これまでの長期記憶",
            &long_1.content,
            "### 新しい短期記憶",
            &short_2.content,
        ],
    );
    let long_2 = memory(&bed, &channel_scope(GENERAL), MemoryKind::Long).await;
    assert_ne!(long_2.content, long_1.content);
    assert_eq!(long_2.newest_ts, Some(ts(60)));
    assert_eq!(long_2.updated_at, at(interval + 1));
}

#[tokio::test]
async fn a_deleted_message_is_in_no_prompt_made_after_its_deletion() {
    const SECRET: &str = "合言葉はPINEAPPLE";
    let bed = Bed::new().await;
    let general = channel(GENERAL);
    bed.seed(&[
        message(GENERAL, ALICE, ts(-900), None, "サーバーの合言葉変えた"),
        message(GENERAL, BOB, ts(-600), Some(ts(-900)), SECRET),
        message(GENERAL, ALICE, ts(-300), Some(ts(-900)), "それ消しといて"),
    ])
    .await;
    touch(&bed, GENERAL, "general", -300).await;
    report(bed.run(&Job::MemorySweep).await);
    // The marker is visible to a prompt while the message lives.
    let before = bed.llm_calls().await;
    assert!(before.iter().any(
        |c| c.kind == Some(PromptKind::Memory(MemoryTask::Digest)) && c.system.contains(SECRET)
    ));

    bed.store
        .delete_message(&general, ts(-600), at(365 * 24 * 3600))
        .await
        .expect("delete");
    bed.clock.set(at(3_700));
    bed.seed(&[message(GENERAL, BOB, ts(3_650), Some(ts(-900)), "消したよ")])
        .await;
    let swept = report(bed.run(&Job::MemorySweep).await);
    bed.run(&Job::ThreadMemory(ThreadMemoryJob {
        channel: general.clone(),
        thread_ts: ts(-900),
    }))
    .await;
    bed.seed(&[message(
        GENERAL,
        ALICE,
        ts(3_680),
        None,
        "<@UBOT> 何の話してた?",
    )])
    .await;
    bed.run(&Job::Response(ResponseJob {
        channel: general.clone(),
        thread_ts: None,
        newest_ts: ts(3_680),
        mention: true,
        reply: Reply::Full,
        seen_ts: None,
        grounds: None,
    }))
    .await;

    // The long-term memories wait for their interval.
    assert_eq!(
        swept.written,
        vec![
            (thread_scope(GENERAL, -900), MemoryKind::Short),
            (channel_scope(GENERAL), MemoryKind::Short),
        ]
    );
    let after: Vec<_> = bed
        .llm_calls()
        .await
        .into_iter()
        .skip(before.len())
        .collect();
    assert_eq!(after.len(), 2, "one digest and one reply");
    for call in &after {
        assert!(
            !call.system.contains("PINEAPPLE"),
            "{:?} holds the deleted message:\n{}",
            call.kind,
            call.system
        );
    }
    let thread_prompt = after
        .iter()
        .find(|c| c.kind == Some(PromptKind::Memory(MemoryTask::Digest)))
        .expect("the thread's memory was rewritten");
    assert_in_order(
        &thread_prompt.system,
        &["サーバーの合言葉変えた", "それ消しといて", "消したよ"],
    );
}

#[tokio::test]
async fn a_channel_short_term_memory_is_cleared_after_a_quiet_window() {
    let bed = Bed::new().await;
    let general = channel(GENERAL);
    bed.seed(&[message(GENERAL, ALICE, ts(-60), None, "リリース準備中")])
        .await;
    bed.store
        .touch_channel(
            &Channel {
                id: general.clone(),
                name: "general".into(),
                visibility: Visibility::PUBLIC,
            },
            bed.now(),
            bed.now() + chrono::Duration::days(90),
        )
        .await
        .expect("touch");
    bed.run(&Job::MemorySweep).await;
    let scope = MemoryScope::Channel {
        channel: general.clone(),
    };
    let short = bed
        .store
        .get_memory(&scope, MemoryKind::Short)
        .await
        .expect("read")
        .expect("written");
    assert!(!short.content.is_empty());

    // A day and a bit later with nothing said, "recent events" are gone from
    // the channel's memory and from the prompts; the long-term one stays.
    bed.clock.advance(Duration::hours(25));
    let calls_before = bed.llm_calls().await.len();
    bed.run(&Job::MemorySweep).await;
    assert_eq!(
        bed.llm_calls().await.len(),
        calls_before,
        "clearing costs no LLM call"
    );
    let short = bed
        .store
        .get_memory(&scope, MemoryKind::Short)
        .await
        .expect("read")
        .expect("kept");
    assert!(short.content.is_empty(), "{short:?}");
    assert!(bed
        .store
        .get_memory(&scope, MemoryKind::Long)
        .await
        .expect("read")
        .is_some());
}

/// Memories, cached names and channel records live `memory_retention_days`
/// after their last write, and are not read after that.
#[tokio::test]
async fn memories_names_and_channel_records_expire_after_the_retention_setting() {
    let bed = Bed::with_settings(|s| s.memory_retention_days = 10).await;
    bed.seed(&[
        message(GENERAL, ALICE, ts(-900), None, "リリースいつ?"),
        message(GENERAL, BOB, ts(-800), Some(ts(-900)), "金曜"),
    ])
    .await;
    bed.run(&Job::ChannelMemory(ChannelMemoryJob {
        channel: channel(GENERAL),
    }))
    .await;
    let scope = thread_scope(GENERAL, -900);
    assert_eq!(
        bed.store.memory_expiry(&scope, MemoryKind::Short),
        Some(bed.now() + Duration::days(10))
    );
    assert!(bed
        .store
        .get_user(&myao_testkit::ids::user(ALICE))
        .await
        .expect("read")
        .is_some());
    assert!(bed
        .store
        .get_channel(&channel(GENERAL))
        .await
        .expect("read")
        .is_some());

    bed.clock.advance(Duration::days(10));
    assert_eq!(
        bed.store
            .get_memory(&scope, MemoryKind::Short)
            .await
            .expect("read"),
        None
    );
    assert!(bed
        .store
        .get_user(&myao_testkit::ids::user(ALICE))
        .await
        .expect("read")
        .is_none());
    assert!(bed
        .store
        .get_channel(&channel(GENERAL))
        .await
        .expect("read")
        .is_none());
}

#[tokio::test]
async fn a_digest_waits_for_enough_new_messages_or_for_the_oldest_to_wait_half_the_window() {
    // (Facts off: the new messages are marked against the memory alone.)
    let bed = Bed::with_settings(|s| {
        s.memory_min_new_messages = 3;
        s.reflection_min_messages = 0;
    })
    .await;
    let half = i64::from(bed.settings.short_term_window_hours) * 1800;
    let run = || async {
        report(
            bed.run(&Job::ChannelMemory(ChannelMemoryJob {
                channel: channel(GENERAL),
            }))
            .await,
        )
        .llm_calls
    };
    let say = |offset: i64, text: &'static str| message(GENERAL, ALICE, ts(offset), None, text);

    // A channel without a memory gets one at once.
    bed.seed(&[say(-60, "おはよう")]).await;
    assert_eq!(run().await, 1, "the first memory");
    // Two new messages: not yet.
    bed.seed(&[say(-50, "ビルド遅い"), say(-40, "キャッシュ消した?")])
        .await;
    assert_eq!(run().await, 0, "two of three");
    // The third: the channel, its threads and its facts in one call.
    bed.seed(&[say(-30, "消したら直った")]).await;
    assert_eq!(run().await, 1, "three new messages");
    let digest = bed.llm_calls().await.pop().expect("the digest");
    assert_in_order(
        &digest.system,
        &[
            "【新】",
            "ビルド遅い",
            "【新】",
            "キャッシュ消した?",
            "【新】",
            "消したら直った",
        ],
    );
    // What the memory already covers is shown, unmarked.
    assert_in_order(&digest.system, &["[1] **", "おはよう", "[2]【新】 **"]);

    // One new message waits, until it has waited half the window.
    bed.seed(&[say(-20, "ありがとう")]).await;
    bed.clock.set(at(-20 + half - 60));
    assert_eq!(run().await, 0, "one message, not waited long enough");
    bed.clock.set(at(-20 + half + 1));
    assert_eq!(run().await, 1, "one message, waited half the window");
    let short = memory(&bed, &channel_scope(GENERAL), MemoryKind::Short).await;
    assert_eq!(short.newest_ts, Some(ts(-20)));
}

#[tokio::test]
async fn a_digest_keeps_the_facts_of_its_new_messages_and_a_garbled_one_writes_nothing() {
    let bed = Bed::with_settings(|s| s.reflection_min_messages = 1).await;
    let facts = |n: u32| {
        serde_json::json!({"facts": [{"subject": "Bob", "fact": "Bob moved to Osaka.",
            "keywords": ["osaka"], "importance": 4, "shareable": true, "sources": [n]}]})
        .to_string()
    };
    bed.seed(&[message(GENERAL, BOB, ts(-60), None, "I moved to Osaka")])
        .await;
    bed.script.set_reflection(facts(1));
    let first = report(
        bed.run(&Job::ChannelMemory(ChannelMemoryJob {
            channel: channel(GENERAL),
        }))
        .await,
    );
    // The facts came in the same call as the memories.
    assert_eq!(first.llm_calls, 1, "{first:?}");
    assert_eq!(first.facts, vec!["Bob moved to Osaka.".to_owned()]);
    let digest = bed.llm_calls().await.pop().expect("the digest");
    assert!(digest.system.contains("### facts: 覚えておくべき事実"));

    // A fact cited from a message the memory already covered is not kept
    // again.
    bed.seed(&[message(GENERAL, ALICE, ts(-30), None, "welcome!")])
        .await;
    let again = report(
        bed.run(&Job::ChannelMemory(ChannelMemoryJob {
            channel: channel(GENERAL),
        }))
        .await,
    );
    assert_eq!((again.llm_calls, again.facts.len()), (1, 0), "{again:?}");

    // An answer out of shape: silence, and the next run asks again.
    let covered = memory(&bed, &channel_scope(GENERAL), MemoryKind::Short).await;
    bed.seed(&[message(
        GENERAL,
        BOB,
        ts(-20),
        None,
        "the boxes are unpacked",
    )])
    .await;
    bed.llm_server.reset().await;
    wiremock::Mock::given(wiremock::matchers::any())
        .respond_with(myao_testkit::http::completion("覚えておきます!"))
        .mount(&bed.llm_server)
        .await;
    let garbled = report(
        bed.run(&Job::ChannelMemory(ChannelMemoryJob {
            channel: channel(GENERAL),
        }))
        .await,
    );
    // Asked once more in the stricter form (issue 45), garbled again.
    assert_eq!(
        (garbled.llm_calls, garbled.written.len()),
        (2, 0),
        "{garbled:?}"
    );
    assert_eq!(
        memory(&bed, &channel_scope(GENERAL), MemoryKind::Short).await,
        covered
    );
}

#[tokio::test]
async fn a_thread_a_digest_left_out_is_summarised_once_its_reply_waited_half_the_window() {
    // (Facts off: their own wait would make the same digest.)
    let bed = Bed::with_settings(|s| {
        s.memory_min_new_messages = 20;
        s.reflection_min_messages = 0;
    })
    .await;
    let half = i64::from(bed.settings.short_term_window_hours) * 1800;
    bed.seed(&[
        message(GENERAL, ALICE, ts(-600), None, "デプロイ手順どこ?"),
        message(GENERAL, BOB, ts(-300), Some(ts(-600)), "wiki にあるよ"),
    ])
    .await;
    let run = || async {
        report(
            bed.run(&Job::ChannelMemory(ChannelMemoryJob {
                channel: channel(GENERAL),
            }))
            .await,
        )
    };
    // The first digest (the channel had no memory) leaves the thread out.
    bed.script.leave_out_threads(true);
    let first = run().await;
    assert_eq!(
        first.written,
        vec![
            (channel_scope(GENERAL), MemoryKind::Long),
            (channel_scope(GENERAL), MemoryKind::Short)
        ]
    );
    bed.script.leave_out_threads(false);

    // Nothing new in the channel, and the reply not waiting long: no call.
    bed.clock.set(at(-300 + half - 60));
    assert_eq!(run().await.llm_calls, 0);
    // The reply waited half the window: the thread gets its summary.
    bed.clock.set(at(-300 + half + 1));
    let late = run().await;
    assert_eq!(late.llm_calls, 1);
    assert!(
        late.written
            .contains(&(thread_scope(GENERAL, -600), MemoryKind::Short)),
        "{late:?}"
    );
}

#[tokio::test]
async fn messages_are_counted_in_profiles_once_even_when_a_deletion_makes_the_memory_again() {
    use myao_core::ports::ProfileRecords;
    let bed = Bed::new().await;
    bed.seed(&[
        message(GENERAL, ALICE, ts(-600), None, "おはよう"),
        message(GENERAL, ALICE, ts(-500), None, "今日はビルド直す"),
    ])
    .await;
    let run = || async {
        bed.run(&Job::ChannelMemory(ChannelMemoryJob {
            channel: channel(GENERAL),
        }))
        .await
    };
    run().await;
    let alice = myao_domain::UserId::parse(ALICE).expect("id");
    let counted = |p: Option<myao_domain::people::Profile>| p.map_or(0, |p| p.messages);
    let before = counted(bed.store.profile(&alice).await.expect("profile"));
    assert_eq!(before, 2);
    // A deletion's forget removes the channel's short-term memory: the next
    // digest writes it again from the whole window, and counts nobody twice.
    bed.store
        .delete_memory(&channel_scope(GENERAL), MemoryKind::Short)
        .await
        .expect("delete");
    bed.seed(&[message(GENERAL, ALICE, ts(-100), None, "直った")])
        .await;
    run().await;
    assert_eq!(
        counted(bed.store.profile(&alice).await.expect("profile")),
        3
    );
}

#[tokio::test]
async fn a_quiet_window_clears_the_short_term_memory_only_once_the_long_term_one_holds_it() {
    let bed = Bed::new().await;
    bed.seed(&[message(GENERAL, ALICE, ts(-600), None, "MARK-ALPHA の件")])
        .await;
    touch(&bed, GENERAL, "general", -600).await;
    let run = || async {
        bed.run(&Job::ChannelMemory(ChannelMemoryJob {
            channel: channel(GENERAL),
        }))
        .await
    };
    run().await;
    // A message the long-term memory lacks (within its interval: not merged).
    bed.clock.advance(Duration::seconds(600));
    bed.seed(&[message(GENERAL, BOB, ts(300), None, "MARK-BETA も")])
        .await;
    run().await;
    let short = memory(&bed, &channel_scope(GENERAL), MemoryKind::Short).await;
    assert_eq!(short.newest_ts, Some(ts(300)));
    assert!(short.content.contains("MARK-BETA"), "{short:?}");

    // The window goes quiet while the memory model is down: nothing cleared.
    let window = i64::from(bed.settings.short_term_window_hours) * 3600;
    bed.clock.set(at(300 + window + 60));
    bed.llm_server.reset().await;
    run().await;
    let kept = memory(&bed, &channel_scope(GENERAL), MemoryKind::Short).await;
    assert!(kept.content.contains("MARK-BETA"), "{kept:?}");
    let long = memory(&bed, &channel_scope(GENERAL), MemoryKind::Long).await;
    assert!(!long.content.contains("MARK-BETA"), "{long:?}");
}

#[tokio::test]
async fn what_leaves_the_window_reaches_the_long_term_memory_whatever_its_interval() {
    let bed = Bed::with_settings(|s| s.long_term_update_interval_seconds = 30 * 86_400).await;
    let run = || async {
        report(
            bed.run(&Job::ChannelMemory(ChannelMemoryJob {
                channel: channel(GENERAL),
            }))
            .await,
        )
    };
    bed.seed(&[message(GENERAL, ALICE, ts(-600), None, "MARK-ONE")])
        .await;
    run().await;
    // Within the interval: the short-term memory alone takes MARK-TWO in.
    bed.clock.set(at(3_600));
    bed.seed(&[message(GENERAL, BOB, ts(3_000), None, "MARK-TWO")])
        .await;
    assert_eq!(
        run().await.written,
        vec![(channel_scope(GENERAL), MemoryKind::Short)]
    );
    let short = memory(&bed, &channel_scope(GENERAL), MemoryKind::Short).await;
    assert!(short.content.contains("MARK-TWO"));

    // A day later MARK-TWO leaves the window: the next digest writes the
    // long-term memory too, from the short-term memory it replaces.
    let window = i64::from(bed.settings.short_term_window_hours) * 3600;
    bed.clock.set(at(3_000 + window + 600));
    bed.seed(&[message(
        GENERAL,
        ALICE,
        ts(3_000 + window + 300),
        None,
        "MARK-THREE",
    )])
    .await;
    let calls = bed.llm_calls().await.len();
    let late = run().await;
    assert!(
        late.written
            .contains(&(channel_scope(GENERAL), MemoryKind::Long)),
        "{late:?}"
    );
    let digest = &bed.llm_calls().await[calls];
    assert_in_order(
        &digest.system,
        &[
            "### long:",
            "これまでの短期記憶",
            &short.content,
            "MARK-THREE",
        ],
    );
    let long = memory(&bed, &channel_scope(GENERAL), MemoryKind::Long).await;
    assert!(long.content.contains("MARK-TWO"), "{long:?}");
}

#[tokio::test]
async fn a_thread_memory_job_of_an_earlier_version_is_dropped_for_the_channels_digest() {
    let bed = Bed::new().await;
    bed.seed(&[
        message(GENERAL, ALICE, ts(-900), None, "リリースいつ?"),
        message(GENERAL, BOB, ts(-800), Some(ts(-900)), "金曜"),
    ])
    .await;
    let dropped = report(
        bed.run(&Job::ThreadMemory(ThreadMemoryJob {
            channel: channel(GENERAL),
            thread_ts: ts(-900),
        }))
        .await,
    );
    assert_eq!(dropped, MemoryReport::default());
    assert!(
        bed.llm_calls().await.is_empty(),
        "no call, no race with the digest"
    );
}

/// Issue 45: a model that answers the digest with prose is asked once more,
/// stricter, then again only as its channel's backoff allows (30 minutes,
/// doubling to a day), not at every half-hourly run; a good answer later
/// writes the memory and ends the backoff.
#[tokio::test]
async fn an_unusable_digest_backs_off_and_a_later_good_one_writes_memory() {
    let bed = Bed::new().await;
    bed.seed(&[
        message(GENERAL, ALICE, ts(-600), None, "the deploy is red"),
        message(GENERAL, BOB, ts(-500), None, "looking at it"),
    ])
    .await;
    bed.script
        .set_digest_answer(Some("Sure! Here is a summary of the channel: ..."));
    let run = || async {
        report(
            bed.run(&Job::ChannelMemory(ChannelMemoryJob {
                channel: channel(GENERAL),
            }))
            .await,
        )
    };
    // A simulated day of half-hourly runs.
    let mut calls = 0;
    let mut unusable = 0;
    for _ in 0..48 {
        let r = run().await;
        calls += r.llm_calls;
        unusable += r.unusable;
        assert!(r.written.is_empty(), "{r:?}");
        bed.clock.advance(Duration::minutes(30));
    }
    // Asked at 0, 0.5, 1.5, 3.5, 7.5 and 15.5 hours (then a day later),
    // each time once more in the stricter form.
    assert_eq!((calls, unusable), (12, 12));
    assert_eq!(
        bed.metrics
            .total(myao_domain::metrics::LLM_UNUSABLE, Some(("Role", "memory"))),
        12.0
    );
    let strict = bed
        .llm_calls()
        .await
        .iter()
        .filter(|c| {
            c.system
                .contains("前回の回答はこの形式のJSONとして読めませんでした")
        })
        .count();
    assert_eq!(strict, 6, "every second call is the stricter one");

    bed.script.set_digest_answer(None);
    bed.clock.advance(Duration::hours(12));
    let now = (bed.now() - at(0)).num_seconds();
    bed.seed(&[message(
        GENERAL,
        ALICE,
        ts(now - 60),
        None,
        "fixed: a stale cache",
    )])
    .await;
    let r = run().await;
    assert!(
        r.written
            .contains(&(channel_scope(GENERAL), MemoryKind::Short)),
        "{r:?}"
    );
    let record = bed
        .store
        .get_channel(&channel(GENERAL))
        .await
        .expect("read")
        .expect("recorded");
    assert_eq!(
        record.digest_backoff, None,
        "a good digest ends the backoff"
    );
}

/// Issue 45: an answer wrapped in prose is asked for once more in the
/// stricter form, whose good answer is used: the memory is written and the
/// channel does not back off.
#[tokio::test]
async fn a_digest_in_prose_is_asked_once_more_and_the_stricter_answer_is_used() {
    let bed = Bed::new().await;
    bed.seed(&[
        message(GENERAL, ALICE, ts(-600), None, "the deploy is red"),
        message(GENERAL, BOB, ts(-500), None, "looking at it"),
    ])
    .await;
    bed.script
        .set_digest_answer_for("Here you go: the channel talked about deploys.", 1);

    let r = report(
        bed.run(&Job::ChannelMemory(ChannelMemoryJob {
            channel: channel(GENERAL),
        }))
        .await,
    );

    assert_eq!((r.llm_calls, r.unusable), (2, 1), "{r:?}");
    assert!(
        r.written
            .contains(&(channel_scope(GENERAL), MemoryKind::Short)),
        "{r:?}"
    );
    let record = bed
        .store
        .get_channel(&channel(GENERAL))
        .await
        .expect("read")
        .expect("recorded");
    assert_eq!(record.digest_backoff, None);
}
