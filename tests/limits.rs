//! Spend limits (issue 13, item 5), enforced before any LLM call: jobs run
//! through `myao_services::jobs::run` with the real LLM and Slack adapters
//! against stub servers and the in-process AWS twins (`myao_tests::stubs`).
//! Every test counts the LLM stub's requests.
//!
//! - mentions over `max_mentions_per_user_per_hour` make no LLM call, and
//!   the notice comes once an hour per person:
//!   `mentions_over_the_per_person_limit_*`; `limit_notice = false`:
//!   `the_limit_notice_can_be_turned_off`
//! - `max_replies_per_channel_per_hour` counts mentions and unprompted
//!   replies alike: `the_per_channel_cap_*`
//! - near `max_llm_calls_per_day`, memories stop first, then judgments,
//!   replies last: `near_the_daily_cap_*`
//! - the same on DynamoDB (the emulator): `on_dynamodb_*`

use myao_core::ports::Store;
use myao_core::ports::{Claims, MemoryRecords};
use myao_domain::limits::{self, Limit, LIMIT_NOTICE};
use myao_domain::Reply;
use myao_domain::{ChannelMemoryJob, Job, JudgmentJob, MemoryKind, MemoryScope, ResponseJob, Ts};
use myao_services::jobs::JobOutcome;
use myao_services::judgment::{JudgmentOutcome, Unusable};
use myao_services::response::ResponseOutcome;
use myao_testkit::ids::channel;
use myao_tests::stubs::{
    at, message, ts, Bed, MemoryTask, PromptKind, ALICE, BOB, DEFAULT_REPLY, GENERAL, RANDOM,
};
use serde_json::Value;

fn mention(ch: &str, newest: Ts, thread: Option<Ts>) -> Job {
    Job::Response(ResponseJob {
        channel: channel(ch),
        thread_ts: thread,
        newest_ts: newest,
        mention: true,
        reply: Reply::Full,
        seen_ts: None,
        grounds: None,
    })
}

fn unprompted(ch: &str, root: i64, newest: i64) -> Job {
    Job::Response(ResponseJob {
        channel: channel(ch),
        thread_ts: Some(ts(root)),
        newest_ts: ts(newest),
        mention: false,
        reply: Reply::Full,
        seen_ts: None,
        grounds: None,
    })
}

fn responded(outcome: JobOutcome) -> ResponseOutcome {
    match outcome {
        JobOutcome::Response(o) => o,
        other => panic!("not a response outcome: {other:?}"),
    }
}

fn judged(outcome: JobOutcome) -> JudgmentOutcome {
    match outcome {
        JobOutcome::Judgment(o) => o,
        other => panic!("not a judgment outcome: {other:?}"),
    }
}

fn posted(outcome: &ResponseOutcome) -> bool {
    matches!(outcome, ResponseOutcome::Posted { .. })
}

/// The `ts` `secs_before` seconds before the bed's clock (a fresh message).
fn now_ts<S: Store + 'static>(bed: &Bed<S>, secs_before: i64) -> Ts {
    Ts::from_parts(
        u64::try_from(bed.now().timestamp() - secs_before).expect("after 1970"),
        100,
    )
}

/// Seeds a top-level mention of the bot by `who`, `secs_before` seconds ago,
/// and runs its response job.
async fn mention_now<S: Store + 'static>(
    bed: &Bed<S>,
    ch: &str,
    who: &str,
    secs_before: i64,
) -> ResponseOutcome {
    let t = now_ts(bed, secs_before);
    bed.seed(&[message(ch, who, t, None, "<@UBOT> ねえねえ")])
        .await;
    responded(bed.run(&mention(ch, t, None)).await)
}

/// The posts whose text is the notice.
async fn notices<S: Store + 'static>(bed: &Bed<S>) -> Vec<Value> {
    bed.posts()
        .await
        .into_iter()
        .filter(|p| p["text"] == LIMIT_NOTICE)
        .collect()
}

#[tokio::test]
async fn mentions_over_the_per_person_limit_make_no_llm_call_and_get_one_notice_an_hour() {
    let bed = Bed::with_settings(|s| s.max_mentions_per_user_per_hour = 2).await;

    let mut outcomes = Vec::new();
    for secs_before in [40, 30, 20, 10] {
        outcomes.push(mention_now(&bed, GENERAL, ALICE, secs_before).await);
    }

    assert!(posted(&outcomes[0]) && posted(&outcomes[1]), "{outcomes:?}");
    let third_ts = now_ts(&bed, 20);
    match &outcomes[2] {
        ResponseOutcome::Limited {
            limit: Limit::MentionsPerUser,
            notice: Some(_),
        } => {}
        other => panic!("the third mention: {other:?}"),
    }
    assert_eq!(
        outcomes[3],
        ResponseOutcome::Limited {
            limit: Limit::MentionsPerUser,
            notice: None
        },
        "one notice an hour"
    );
    assert_eq!(bed.llm_calls().await.len(), 2, "no LLM call over the limit");
    let sent = notices(&bed).await;
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(
        sent[0]["thread_ts"],
        third_ts.to_string(),
        "in the mention's thread"
    );
    assert_eq!(bed.posts().await.len(), 3, "two replies and the notice");

    // A refused job keeps its claim: its redelivery does nothing more.
    let again = responded(bed.run(&mention(GENERAL, third_ts, None)).await);
    assert_eq!(again, ResponseOutcome::AlreadyDone);

    // The limit is per person.
    assert!(posted(&mention_now(&bed, GENERAL, BOB, 5).await));
    assert_eq!(bed.llm_calls_of(PromptKind::Response).await.len(), 3);

    // The next hour: answered again, and once over, noticed again.
    bed.clock.set(at(3_600));
    for secs_before in [3, 2] {
        assert!(posted(
            &mention_now(&bed, GENERAL, ALICE, secs_before).await
        ));
    }
    let over = mention_now(&bed, GENERAL, ALICE, 1).await;
    assert!(
        matches!(
            over,
            ResponseOutcome::Limited {
                limit: Limit::MentionsPerUser,
                notice: Some(_)
            }
        ),
        "{over:?}"
    );
    assert_eq!(bed.llm_calls().await.len(), 5);
    assert_eq!(notices(&bed).await.len(), 2);
}

#[tokio::test]
async fn the_limit_notice_can_be_turned_off() {
    let bed = Bed::with_settings(|s| {
        s.max_mentions_per_user_per_hour = 1;
        s.limit_notice = false;
    })
    .await;

    assert!(posted(&mention_now(&bed, GENERAL, ALICE, 20).await));
    let over = mention_now(&bed, GENERAL, ALICE, 10).await;

    assert_eq!(
        over,
        ResponseOutcome::Limited {
            limit: Limit::MentionsPerUser,
            notice: None
        }
    );
    assert_eq!(bed.llm_calls().await.len(), 1);
    assert_eq!(bed.posts().await.len(), 1, "no notice");
}

#[tokio::test]
async fn the_per_channel_cap_counts_mentions_and_unprompted_replies_alike() {
    let bed = Bed::with_settings(|s| s.max_replies_per_channel_per_hour = 2).await;
    // Two threads the bot would join on its own.
    bed.seed(&[
        message(GENERAL, ALICE, ts(-100), None, "ビルドが落ちる"),
        message(GENERAL, BOB, ts(-90), Some(ts(-100)), "どのエラー?"),
        message(GENERAL, BOB, ts(-80), None, "お昼どうする?"),
        message(GENERAL, ALICE, ts(-70), Some(ts(-80)), "カレーかな"),
    ])
    .await;

    let first = responded(bed.run(&unprompted(GENERAL, -100, -90)).await);
    let second = mention_now(&bed, GENERAL, ALICE, 50).await;
    let third = responded(bed.run(&unprompted(GENERAL, -80, -70)).await);
    let fourth = mention_now(&bed, GENERAL, BOB, 40).await;
    let elsewhere = mention_now(&bed, RANDOM, BOB, 30).await;

    assert!(posted(&first) && posted(&second), "{first:?} {second:?}");
    assert_eq!(
        third,
        ResponseOutcome::Limited {
            limit: Limit::RepliesPerChannel,
            notice: None
        },
        "an unprompted reply gets no notice"
    );
    assert!(
        matches!(
            fourth,
            ResponseOutcome::Limited {
                limit: Limit::RepliesPerChannel,
                notice: Some(_)
            }
        ),
        "{fourth:?}"
    );
    assert!(posted(&elsewhere), "another channel has its own cap");
    let replies = bed.llm_calls_of(PromptKind::Response).await;
    assert_eq!(replies.len(), 3, "none for the refused jobs");
    let texts: Vec<_> = bed
        .posts()
        .await
        .into_iter()
        .map(|p| p["text"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(
        texts,
        [DEFAULT_REPLY, DEFAULT_REPLY, LIMIT_NOTICE, DEFAULT_REPLY]
    );
}

#[tokio::test]
async fn near_the_daily_cap_memories_stop_first_then_judgments_then_replies() {
    // 20 a day: memories stop at 16 calls, judgments at 19, replies at 20.
    let bed = Bed::with_settings(|s| s.max_llm_calls_per_day = 20).await;
    let general = channel(GENERAL);
    bed.seed(&[
        message(GENERAL, ALICE, ts(-300), None, "ビルドが落ちる"),
        message(GENERAL, BOB, ts(-200), Some(ts(-300)), "どのエラー?"),
        message(GENERAL, ALICE, ts(-100), None, "お昼どうする?"),
    ])
    .await;
    // 16 calls already made today.
    let day = limits::llm_calls(bed.now());
    for _ in 0..16 {
        assert!(bed
            .store
            .count(&day.key, u64::MAX, day.expires_at)
            .await
            .expect("count"));
    }
    let thread_memory = Job::ChannelMemory(ChannelMemoryJob {
        channel: general.clone(),
    });
    let judgment = Job::Judgment(JudgmentJob {
        channel: general.clone(),
        thread_ts: None,
        newest_ts: ts(-100),
    });

    bed.run(&thread_memory).await;
    assert!(
        bed.llm_calls().await.is_empty(),
        "memories stop at 80 %: {:?}",
        bed.llm_calls().await.len()
    );
    let mut judgments = Vec::new();
    for _ in 0..4 {
        judgments.push(judged(bed.run(&judgment).await));
    }
    assert!(
        judgments[..3]
            .iter()
            .all(|j| matches!(j, JudgmentOutcome::Respond { .. })),
        "{judgments:?}"
    );
    assert!(
        matches!(
            &judgments[3],
            JudgmentOutcome::Silent {
                why: Unusable::OverBudget,
                ..
            }
        ),
        "judgments stop at 95 %: {:?}",
        judgments[3]
    );
    assert_eq!(bed.llm_calls_of(PromptKind::Judgment).await.len(), 3);

    let answered = mention_now(&bed, GENERAL, ALICE, 20).await;
    let refused = mention_now(&bed, GENERAL, BOB, 10).await;
    assert!(
        posted(&answered),
        "replies may use the whole day: {answered:?}"
    );
    assert!(
        matches!(
            refused,
            ResponseOutcome::Limited {
                limit: Limit::LlmCallsPerDay,
                notice: Some(_)
            }
        ),
        "{refused:?}"
    );
    assert_eq!(bed.llm_calls().await.len(), 4, "3 judgments and 1 reply");
    assert_eq!(notices(&bed).await.len(), 1);

    // The next UTC day starts again from zero.
    let next_day = bed.now().date_naive().succ_opt().expect("a next day");
    bed.clock
        .set(next_day.and_hms_opt(0, 0, 0).expect("midnight").and_utc());
    bed.run(&thread_memory).await;
    assert_eq!(
        bed.llm_calls_of(PromptKind::Memory(MemoryTask::Digest))
            .await
            .len(),
        1
    );
    let scope = MemoryScope::Thread {
        channel: general,
        thread_ts: ts(-300),
    };
    assert!(bed
        .store
        .get_memory(&scope, MemoryKind::Short)
        .await
        .expect("read")
        .is_some());
}

#[tokio::test]
async fn on_dynamodb_the_limits_count_in_the_table_and_the_notice_is_claimed_once() {
    let bed = Bed::on_emulator(|s| {
        s.max_mentions_per_user_per_hour = 1;
        s.max_llm_calls_per_day = 3;
    })
    .await;

    let answered = mention_now(&bed, GENERAL, ALICE, 40).await;
    let over = mention_now(&bed, GENERAL, ALICE, 30).await;
    let again = mention_now(&bed, GENERAL, ALICE, 20).await;
    let bob = mention_now(&bed, GENERAL, BOB, 10).await;

    assert!(posted(&answered), "{answered:?}");
    assert!(
        matches!(
            over,
            ResponseOutcome::Limited {
                limit: Limit::MentionsPerUser,
                notice: Some(_)
            }
        ),
        "{over:?}"
    );
    assert_eq!(
        again,
        ResponseOutcome::Limited {
            limit: Limit::MentionsPerUser,
            notice: None
        }
    );
    assert!(posted(&bob), "{bob:?}");
    assert_eq!(bed.llm_calls().await.len(), 2);
    assert_eq!(notices(&bed).await.len(), 1);
    // 2 of 3 calls made: judgments (95 % of 3, rounded down: 2) stop here.
    let day = limits::llm_calls(bed.now());
    assert!(!bed
        .store
        .count(&day.key, 2, day.expires_at)
        .await
        .expect("count"));
    assert!(bed
        .store
        .count(&day.key, 3, day.expires_at)
        .await
        .expect("count"));
}
