//! Taking part in a conversation (issue 4): judgment and response jobs run
//! through `myao_services::jobs::run` with the real LLM and Slack adapters
//! against stub servers and the in-process AWS twins (`myao_tests::stubs`).
//!
//! - a yes without delay is one reply in the right thread, and the judgment
//!   prompt's sections are in order: `a_judged_yes_without_delay_*`
//! - a delay of 120 s is a named schedule: `a_judged_yes_with_a_delay_*`
//! - a no, an unreadable verdict, an LLM 500 or timeout are silence:
//!   `a_judgment_that_declines_*`, `an_unreadable_verdict_*`,
//!   `an_llm_500_*`, `an_llm_timeout_*`
//! - stale jobs cost no LLM call: `a_stale_*`
//! - a mention is answered without judgment and remembered: `a_mention_*`
//! - a job run twice posts once: `the_same_response_job_*`; a job that
//!   failed before posting is answered on redelivery: `a_response_that_fails_*`
//! - a reply that fails comes back within its quick delay, through SQS on
//!   the emulator, and ends in the dead-letter queue when it never
//!   succeeds: `a_mention_whose_reply_fails_once_*`,
//!   `a_reply_that_always_fails_*`
//! - a reply is held to `max_reply_chars` at a sentence, and no post
//!   unfurls its links: `a_reply_fifty_thousand_characters_long_*`
//! - Slack's 429 is waited out: `a_slack_429_*`
//! - the bot having spoken last: `no_llm_call_when_the_bot_spoke_last`
//! - display names in prompts: `prompts_show_display_names_*`

use myao_core::ports::{MemoryRecords, Messages, UserCache};
use std::time::{Duration as StdDuration, Instant};

use chrono::Duration;
use myao_core::ports::{Claims, Clock, PortError, ScheduledJob};
use myao_core::schedule::ScheduleName;
use myao_domain::grounds::Spoke;
use myao_domain::rules::Gate;
use myao_domain::Reply;
use myao_domain::{
    Conversation, Job, JobKind, JudgmentJob, Memory, MemoryKind, MemoryScope, ResponseJob,
};
use myao_jobs::payload::Answer;
use myao_services::jobs::JobOutcome;
use myao_services::judgment::{JudgmentOutcome, Unusable};
use myao_services::response::{NoReply, ResponseOutcome, LOST_POST_SECONDS};
use myao_testkit::http::{completion, mount_once};
use myao_testkit::ids::{channel, user};
use myao_tests::stubs::{
    assert_in_order, message, ts, verdict, Bed, PromptKind, Sequence, ALICE, BOB, BOT, GENERAL,
    JUDGMENT_MARK, RESPONSE_MARK,
};
use serde_json::{json, Value};
use wiremock::matchers::{method, path};
use wiremock::{Mock, ResponseTemplate};

pub(crate) fn judgment(thread: Option<i64>, newest: i64) -> Job {
    Job::Judgment(JudgmentJob {
        channel: channel(GENERAL),
        thread_ts: thread.map(ts),
        newest_ts: ts(newest),
    })
}

pub(crate) fn response(thread: Option<i64>, newest: i64, mention: bool) -> Job {
    Job::Response(ResponseJob {
        channel: channel(GENERAL),
        thread_ts: thread.map(ts),
        newest_ts: ts(newest),
        mention,
        reply: Reply::Full,
        seen_ts: None,
        grounds: None,
    })
}

/// `job` without the judgment's grounds it carries (asserted apart), to
/// compare with [`response`]'s.
fn ungrounded(job: &Job) -> Job {
    let mut job = job.clone();
    if let Job::Response(ResponseJob { grounds, .. }) = &mut job {
        assert!(
            grounds.as_ref().is_some_and(|g| g.outcome == Spoke::LlmYes),
            "a judged answer carries its grounds: {grounds:?}"
        );
        *grounds = None;
    }
    job
}

/// Has Slack answer the next `chat.postMessage` with `answer` (then the
/// bed's own responder, which posts).
async fn answer_next_post(bed: &Bed, answer: ResponseTemplate) {
    mount_once(&bed.slack_server, "POST", "/api/chat.postMessage", answer).await;
}

fn judged(outcome: JobOutcome) -> JudgmentOutcome {
    match outcome {
        JobOutcome::Judgment(o) => o,
        other => panic!("not a judgment outcome: {other:?}"),
    }
}

fn responded(outcome: JobOutcome) -> ResponseOutcome {
    match outcome {
        JobOutcome::Response(o) => o,
        other => panic!("not a response outcome: {other:?}"),
    }
}

/// Nothing posted, nothing scheduled or queued.
async fn assert_nothing_done(bed: &Bed) {
    assert!(
        bed.posts().await.is_empty(),
        "posted: {:?}",
        bed.posts().await
    );
    assert!(
        bed.board.scheduled().is_empty(),
        "{:?}",
        bed.board.scheduled()
    );
    assert!(bed.board.queued().is_empty(), "{:?}", bed.board.queued());
    assert_eq!(bed.board.call_counts(), (0, 0));
}

#[tokio::test]
async fn a_judged_yes_without_delay_replies_once_in_its_thread_after_a_prompt_in_section_order() {
    let bed = Bed::new().await;
    let general = channel(GENERAL);
    // Another thread, with its memory, and the thread being judged.
    bed.seed(&[
        message(GENERAL, BOB, ts(-3000), None, "週末どこか行く?"),
        message(GENERAL, ALICE, ts(-2900), Some(ts(-3000)), "山に行くよ"),
        message(
            GENERAL,
            ALICE,
            ts(-900),
            None,
            "ビルドが linker error で落ちる",
        ),
        message(GENERAL, BOB, ts(-600), Some(ts(-900)), "どのエラー?"),
        message(
            GENERAL,
            ALICE,
            ts(-300),
            Some(ts(-900)),
            "undefined reference です、誰か助けて",
        ),
    ])
    .await;
    for (scope, kind, content) in [
        (
            MemoryScope::Workspace,
            MemoryKind::Long,
            "WORKSPACE-HISTORY",
        ),
        (
            MemoryScope::Channel {
                channel: general.clone(),
            },
            MemoryKind::Short,
            "GENERAL-RECENT",
        ),
        (
            MemoryScope::Thread {
                channel: general.clone(),
                thread_ts: ts(-3000),
            },
            MemoryKind::Short,
            "OTHER-THREAD-MEMORY",
        ),
    ] {
        bed.store
            .put_memory(
                &Memory {
                    scope,
                    kind,
                    content: content.to_owned(),
                    updated_at: bed.now(),
                    newest_ts: Some(ts(-2900)),
                },
                bed.now() + Duration::days(90),
            )
            .await
            .expect("memory");
    }

    let outcome = judged(bed.run(&judgment(Some(-900), -300)).await);

    match outcome {
        JudgmentOutcome::Respond { result, at, .. } => {
            assert!(result.should_respond);
            assert_eq!(at, bed.now());
        }
        other => panic!("expected a response job, got {other:?}"),
    }
    let calls = bed.llm_calls().await;
    assert_eq!(calls.len(), 1, "one judgment call");
    let call = &calls[0];
    assert_eq!(call.kind, Some(PromptKind::Judgment));
    assert_eq!(call.body["response_format"], json!({"type": "json_object"}));
    let messages = call.body["messages"].as_array().expect("messages");
    assert_eq!(messages.len(), 1, "only a system message: {messages:?}");
    assert_eq!(messages[0]["role"], "system");
    let prompt = &call.system;
    assert!(
        prompt.starts_with(&bed.settings.persona_system_prompt),
        "the persona first:\n{prompt}"
    );
    let thread_heading = format!("## 判定対象スレッド: {}", ts(-900));
    assert_in_order(
        prompt,
        &[
            &bed.settings.persona_system_prompt,
            "## 記憶",
            "### ワークスペースの歴史",
            "WORKSPACE-HISTORY",
            "## チャンネル情報",
            "- #general",
            "## 各チャンネルの記憶",
            "### #general",
            "GENERAL-RECENT",
            "## 現在のスレッド一覧",
            &format!("### スレッド: {}", ts(-3000)),
            "OTHER-THREAD-MEMORY",
            "## 現在の会話",
            "現在は、#general チャンネルにいます。",
            "週末どこか行く?",
            "山に行くよ",
            &thread_heading,
            "ビルドが linker error で落ちる",
            "どのエラー?",
            "undefined reference です、誰か助けて",
            "---",
            "現在時刻: 2026-01-05 08:00:00 UTC",
            JUDGMENT_MARK,
        ],
    );

    // Delay 0 goes to the queue (under a minute), due now, beside the
    // memory refresh of the thread that went quiet.
    assert!(
        bed.board.scheduled().is_empty(),
        "{:?}",
        bed.board.scheduled()
    );
    let reply_job = response(Some(-900), -300, false);
    let queued = bed.board.queued();
    assert_eq!(
        queued
            .iter()
            .filter(|(_, j)| j.kind() == JobKind::Response)
            .map(|(at, j)| (*at, ungrounded(j)))
            .collect::<Vec<_>>(),
        vec![(bed.now(), reply_job.clone())]
    );

    let done = bed.run_due().await;
    let (_, outcome) = done
        .into_iter()
        .find(|(job, _)| ungrounded(job) == reply_job)
        .expect("the response job ran");
    let posted_ts = match responded(outcome) {
        ResponseOutcome::Posted { ts, text } => {
            assert_eq!(text, bed.script.reply());
            ts
        }
        other => panic!("expected a post, got {other:?}"),
    };
    assert_eq!(
        bed.posts().await,
        vec![json!({
            "channel": GENERAL,
            "thread_ts": ts(-900).to_string(),
            "text": bed.script.reply(),
            "unfurl_links": false,
            "unfurl_media": false,
            // The job's mark, to find the post should its answer be lost.
            "metadata": {"event_type": "myao_reply", "event_payload": {"key": reply_job.claim_key()}},
        })]
    );
    assert_eq!(bed.llm_calls_of(PromptKind::Judgment).await.len(), 1);
    assert_eq!(bed.llm_calls_of(PromptKind::Response).await.len(), 1);
    assert!(
        bed.slack_requests("assistant.threads.setStatus")
            .await
            .is_empty(),
        "an unprompted reply announces nothing"
    );
    let stored = bed
        .store
        .get_message(&general, posted_ts)
        .await
        .expect("read")
        .expect("the bot's reply is stored");
    assert_eq!(stored.thread_ts, Some(ts(-900)));
    assert!(stored.is_bot);
}

#[tokio::test]
async fn a_judged_yes_with_a_delay_of_120_s_is_scheduled_under_the_conversation_name() {
    let bed = Bed::new().await;
    bed.script.set_judgment(verdict(true, Some(120)));
    bed.seed_top_level_question().await;
    let t0 = bed.now();

    let outcome = judged(bed.run(&judgment(None, -300)).await);

    assert!(
        matches!(outcome, JudgmentOutcome::Respond { at, .. } if at == t0 + Duration::seconds(120)),
        "{outcome:?}"
    );
    let conversation = Conversation::top_level(channel(GENERAL));
    let scheduled: Vec<ScheduledJob> = bed
        .board
        .scheduled()
        .into_iter()
        .map(|s| ScheduledJob {
            job: ungrounded(&s.job),
            ..s
        })
        .collect();
    assert_eq!(
        scheduled,
        vec![ScheduledJob {
            name: ScheduleName::for_conversation(JobKind::Response, &conversation),
            at: t0 + Duration::seconds(120),
            job: response(None, -300, false),
        }]
    );
    assert!(bed.board.queued().is_empty(), "{:?}", bed.board.queued());
    assert!(
        bed.posts().await.is_empty(),
        "nothing posted before the delay"
    );

    bed.clock.advance(Duration::seconds(119));
    assert!(bed.run_due().await.is_empty(), "not due before 120 s");
    bed.clock.advance(Duration::seconds(1));
    let done = bed.run_due().await;
    assert_eq!(done.len(), 1);
    assert!(
        matches!(
            &done[0].1,
            JobOutcome::Response(ResponseOutcome::Posted { .. })
        ),
        "{:?}",
        done[0].1
    );
    assert_eq!(
        bed.posts().await,
        vec![json!({
            "channel": GENERAL,
            "text": bed.script.reply(),
            "unfurl_links": false,
            "unfurl_media": false,
            "metadata": {"event_type": "myao_reply", "event_payload": {"key": done[0].0.claim_key()}},
        })],
        "a top-level reply carries no thread_ts"
    );
}

#[tokio::test]
async fn a_judgment_that_declines_posts_nothing_and_makes_no_job() {
    let bed = Bed::new().await;
    bed.script.set_judgment(verdict(false, None));
    bed.seed_top_level_question().await;

    let outcome = judged(bed.run(&judgment(None, -300)).await);

    assert!(
        matches!(&outcome, JudgmentOutcome::Declined(_, r) if !r.should_respond),
        "{outcome:?}"
    );
    assert_eq!(bed.llm_calls().await.len(), 1);
    assert_nothing_done(&bed).await;
}

#[tokio::test]
async fn an_unreadable_verdict_is_silence() {
    for answer in [
        "はい、返答すべきだと思います。",
        r#"{"should_respond": "yes", "reason": "質問"}"#,
        r#"{"should_respond": true, "reason": "#,
    ] {
        let bed = Bed::new().await;
        bed.script.set_judgment(answer);
        bed.seed_top_level_question().await;

        let outcome = judged(bed.run(&judgment(None, -300)).await);

        assert!(
            matches!(outcome, JudgmentOutcome::Silent { .. }),
            "{answer}: {outcome:?}"
        );
        assert_eq!(bed.llm_calls().await.len(), 1, "{answer}");
        assert_nothing_done(&bed).await;
    }
}

#[tokio::test]
async fn an_llm_500_during_judgment_is_silence_after_the_retries() {
    let bed = Bed::with_settings(|s| s.llm_max_retries = 1).await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(500).set_body_string("upstream exploded"))
        .with_priority(1)
        .mount(&bed.llm_server)
        .await;
    bed.seed_top_level_question().await;

    let outcome = judged(bed.run(&judgment(None, -300)).await);

    match &outcome {
        // A 5xx after the retries: the LLM unavailable.
        JudgmentOutcome::Silent {
            why: Unusable::Llm(PortError::Unavailable { .. }),
            ..
        } => {}
        other => panic!("expected silence, got {other:?}"),
    }
    assert_eq!(
        bed.llm_calls().await.len(),
        2,
        "the first attempt and one retry"
    );
    assert_nothing_done(&bed).await;
}

#[tokio::test]
async fn an_llm_timeout_during_judgment_is_silence() {
    let bed = Bed::with_settings(|s| {
        s.llm_timeout_seconds = 1;
        s.llm_max_retries = 0;
    })
    .await;
    Mock::given(method("POST"))
        .respond_with(completion(&verdict(true, Some(0))).set_delay(StdDuration::from_secs(5)))
        .with_priority(1)
        .mount(&bed.llm_server)
        .await;
    bed.seed_top_level_question().await;

    let started = Instant::now();
    let outcome = judged(bed.run(&judgment(None, -300)).await);

    match &outcome {
        JudgmentOutcome::Silent {
            why: Unusable::Llm(PortError::Unavailable { .. }),
            ..
        } => {}
        other => panic!("expected silence, got {other:?}"),
    }
    assert!(
        started.elapsed() < StdDuration::from_secs(4),
        "cut at the timeout, not answered late: {:?}",
        started.elapsed()
    );
    assert_eq!(bed.llm_calls().await.len(), 1);
    assert_nothing_done(&bed).await;
}

/// A thread whose newest reply (`-100`) came after a job made at `-300`.
async fn seed_thread_with_a_newer_reply(bed: &Bed) {
    bed.seed(&[
        message(GENERAL, ALICE, ts(-900), None, "デプロイ失敗した"),
        message(GENERAL, ALICE, ts(-300), Some(ts(-900)), "ログ貼るね"),
        message(GENERAL, BOB, ts(-100), Some(ts(-900)), "見てみる"),
    ])
    .await;
}

#[tokio::test]
async fn a_stale_judgment_job_makes_no_llm_call() {
    let bed = Bed::new().await;
    seed_thread_with_a_newer_reply(&bed).await;

    let outcome = judged(bed.run(&judgment(Some(-900), -300)).await);

    assert_eq!(outcome, JudgmentOutcome::Stale);
    assert_eq!(bed.llm_calls().await.len(), 0);
    // A stale job fires only when an older delivery's upsert overwrote the
    // newer one's (a race between two deliveries): the judgment of the newer
    // message is made again, never moving back in time.
    let scheduled = bed.board.scheduled();
    assert_eq!(scheduled.len(), 1, "{scheduled:?}");
    assert_eq!(scheduled[0].job, judgment(Some(-900), -100));
    assert!(scheduled[0].at >= bed.clock.now());
    assert!(bed.posts().await.is_empty());
}

#[tokio::test]
async fn a_stale_response_job_makes_no_llm_call_and_posts_nothing() {
    let bed = Bed::new().await;
    seed_thread_with_a_newer_reply(&bed).await;

    let outcome = responded(bed.run(&response(Some(-900), -300, false)).await);

    assert_eq!(outcome, ResponseOutcome::Stale);
    assert_eq!(bed.llm_calls().await.len(), 0);
    let slack = bed
        .slack_server
        .received_requests()
        .await
        .unwrap_or_default();
    assert!(slack.is_empty(), "no Slack call at all: {slack:?}");
    assert_nothing_done(&bed).await;
}

#[tokio::test]
async fn a_mention_is_answered_without_judgment_and_the_reply_is_remembered() {
    let bed = Bed::new().await;
    let general = channel(GENERAL);
    bed.seed(&[
        message(GENERAL, ALICE, ts(-600), None, "猫の話しよう"),
        message(
            GENERAL,
            BOB,
            ts(-60),
            Some(ts(-600)),
            "<@UBOT> 好きな食べ物は?",
        ),
    ])
    .await;

    let outcome = responded(bed.run(&response(Some(-600), -60, true)).await);

    let first_reply = bed.script.reply();
    let posted_ts = match outcome {
        ResponseOutcome::Posted { ts, text } => {
            assert_eq!(text, first_reply);
            ts
        }
        other => panic!("expected a post, got {other:?}"),
    };
    let calls = bed.llm_calls().await;
    assert_eq!(calls.len(), 1, "the reply only, no judgment");
    // It showed it was writing, in the thread the reply went to (which the
    // post cleared: no second call).
    let statuses = bed.slack_requests("assistant.threads.setStatus").await;
    assert_eq!(statuses.len(), 1);
    let status: Value = statuses[0].body_json().expect("json");
    assert_eq!(status["thread_ts"], json!(ts(-600).to_string()));
    let prompt = &calls[0].system;
    assert!(prompt.contains(RESPONSE_MARK), "{prompt}");
    assert!(!prompt.contains("判断"), "{prompt}");
    assert!(prompt.contains("@myao 好きな食べ物は?"), "{prompt}");
    assert!(
        calls[0].body.get("response_format").is_none(),
        "{}",
        calls[0].body
    );
    assert_eq!(
        bed.posts().await,
        vec![json!({
            "channel": GENERAL,
            "thread_ts": ts(-600).to_string(),
            "text": first_reply,
            "unfurl_links": false,
            "unfurl_media": false,
            "metadata": {"event_type": "myao_reply",
                         "event_payload": {"key": response(Some(-600), -60, true).claim_key()}},
        })]
    );
    let stored = bed
        .store
        .get_message(&general, posted_ts)
        .await
        .expect("read")
        .expect("the bot's reply is stored");
    assert_eq!(
        (stored.user.clone(), stored.is_bot, stored.thread_ts),
        (user(BOT), true, Some(ts(-600)))
    );
    assert_eq!(stored.text, first_reply);

    // A later mention in the thread: the prompt shows the bot's own reply,
    // by its persona's name, before the new question.
    bed.clock.advance(Duration::seconds(60));
    bed.script.set_reply("マグロも好きだにゃ");
    bed.seed(&[message(
        GENERAL,
        ALICE,
        ts(30),
        Some(ts(-600)),
        "<@UBOT> 他には?",
    )])
    .await;
    let outcome = responded(bed.run(&response(Some(-600), 30, true)).await);
    assert!(
        matches!(outcome, ResponseOutcome::Posted { .. }),
        "{outcome:?}"
    );
    let replies = bed.llm_calls_of(PromptKind::Response).await;
    assert_eq!(replies.len(), 2);
    assert_in_order(
        &replies[1].system,
        &[
            "好きな食べ物は?",
            &format!("myao:\n{first_reply}"),
            "alice:\n@myao 他には?",
            RESPONSE_MARK,
        ],
    );
    assert_eq!(bed.llm_calls_of(PromptKind::Judgment).await.len(), 0);
    assert_eq!(bed.posts().await.len(), 2);
}

#[tokio::test]
async fn the_same_response_job_run_twice_posts_once() {
    let bed = Bed::new().await;
    bed.seed(&[message(GENERAL, ALICE, ts(-60), None, "<@UBOT> こんにちは")])
        .await;
    let job = response(None, -60, true);

    let first = responded(bed.run(&job).await);
    let second = responded(bed.run(&job).await);

    assert!(matches!(first, ResponseOutcome::Posted { .. }), "{first:?}");
    assert_eq!(second, ResponseOutcome::AlreadyDone);
    assert_eq!(bed.posts().await.len(), 1);
    assert_eq!(bed.llm_calls().await.len(), 1);
}

#[tokio::test]
async fn a_job_as_the_previous_version_wrote_it_is_run() {
    // The JSON of jobs written before jobs were named structs, as a
    // schedule hands them to the function: read, run, answered.
    let bed = Bed::new().await;
    bed.seed(&[message(GENERAL, ALICE, ts(-60), None, "<@UBOT> こんにちは")])
        .await;
    let mention = format!(
        r#"{{"kind":"response","channel":"{GENERAL}","thread_ts":null,"newest_ts":"{}","mention":true}}"#,
        ts(-60)
    );
    let answer = myao_jobs::payload::handle_payload(
        &bed.services,
        &[JobKind::Response],
        serde_json::from_str(&mention).expect("JSON"),
    )
    .await
    .expect("handled");
    assert_eq!(answer, Answer::Done {});
    assert_eq!(bed.posts().await.len(), 1, "the mention is answered");
    assert_eq!(
        bed.board.call_counts(),
        (0, 0),
        "nothing scheduled or queued"
    );
    // The same job again, as this version writes it: already answered.
    assert_eq!(
        serde_json::to_string(&response(None, -60, true)).expect("JSON"),
        mention
    );
    assert_eq!(
        responded(bed.run(&response(None, -60, true)).await),
        ResponseOutcome::AlreadyDone
    );
}

#[tokio::test]
async fn the_same_response_job_run_twice_at_once_posts_once() {
    // Both copies pass the staleness check before either has posted: only
    // the claim keeps the second from answering too.
    let bed = Bed::new().await;
    bed.seed_top_level_question().await;
    let job = response(None, -300, false);

    let (a, b) = tokio::join!(bed.run(&job), bed.run(&job));

    let mut outcomes = [responded(a), responded(b)];
    outcomes.sort_by_key(|o| matches!(o, ResponseOutcome::Posted { .. }));
    assert_eq!(outcomes[0], ResponseOutcome::AlreadyDone);
    assert!(
        matches!(outcomes[1], ResponseOutcome::Posted { .. }),
        "{:?}",
        outcomes[1]
    );
    assert_eq!(bed.posts().await.len(), 1);
    assert_eq!(bed.llm_calls().await.len(), 1);
}

#[tokio::test]
async fn a_slack_429_on_post_message_is_posted_once_after_retry_after() {
    let bed = Bed::new().await;
    let (sequence, arrivals) = Sequence::new(vec![
        ResponseTemplate::new(429)
            .insert_header("retry-after", "1")
            .set_body_json(json!({"ok": false, "error": "ratelimited"})),
        ResponseTemplate::new(200).set_body_json(json!({
            "ok": true, "channel": GENERAL, "ts": ts(1).to_string()
        })),
    ]);
    Mock::given(method("POST"))
        .and(path("/api/chat.postMessage"))
        .respond_with(sequence)
        .with_priority(1)
        .mount(&bed.slack_server)
        .await;
    bed.seed(&[message(GENERAL, ALICE, ts(-60), None, "<@UBOT> いる?")])
        .await;

    let outcome = responded(bed.run(&response(None, -60, true)).await);

    assert_eq!(
        outcome,
        ResponseOutcome::Posted {
            ts: ts(1),
            text: bed.script.reply()
        }
    );
    let posts: Vec<Value> = bed.posts().await;
    assert_eq!(posts.len(), 2, "the refused attempt and the post");
    assert_eq!(posts[0], posts[1], "the same message sent again");
    let arrivals = arrivals.lock().expect("arrivals").clone();
    assert_eq!(arrivals.len(), 2);
    let gap = arrivals[1] - arrivals[0];
    assert!(gap >= StdDuration::from_secs(1), "retried after {gap:?}");
    let bot_messages: Vec<_> = bed
        .store
        .all_messages()
        .into_iter()
        .filter(|m| m.is_bot)
        .collect();
    assert_eq!(bot_messages.len(), 1, "{bot_messages:?}");
    assert_eq!(bot_messages[0].ts, ts(1));
}

#[tokio::test]
async fn no_llm_call_when_the_bot_spoke_last() {
    let bed = Bed::new().await;
    bed.seed(&[
        message(GENERAL, ALICE, ts(-600), None, "今日も寒いね"),
        message(GENERAL, BOT, ts(-300), Some(ts(-600)), "ほんとにゃ"),
    ])
    .await;

    let outcome = judged(bed.run(&judgment(Some(-600), -300)).await);

    assert_eq!(outcome, JudgmentOutcome::Held(Gate::BotSpokeLast));
    assert_eq!(bed.llm_calls().await.len(), 0);
    assert!(bed.posts().await.is_empty());
    assert!(bed.board.scheduled().is_empty());
    assert!(
        bed.board.queued().is_empty(),
        "no job: {:?}",
        bed.board.queued()
    );
}

#[tokio::test]
async fn prompts_show_display_names_not_user_ids() {
    let bed = Bed::new().await;
    bed.script.set_judgment(verdict(false, None));
    bed.seed(&[
        message(
            GENERAL,
            ALICE,
            ts(-600),
            None,
            "<@UBOB> デプロイ手順どこだっけ?",
        ),
        message(GENERAL, BOB, ts(-300), None, "<@UALICE> wiki にあるよ"),
    ])
    .await;

    bed.run(&judgment(None, -300)).await;

    let calls = bed.llm_calls_of(PromptKind::Judgment).await;
    assert_eq!(calls.len(), 1);
    let prompt = &calls[0].system;
    assert_in_order(
        prompt,
        &[
            "alice:\n@bob デプロイ手順どこだっけ?",
            "bob:\n@alice wiki にあるよ",
        ],
    );
    for id in [ALICE, BOB] {
        assert!(!prompt.contains(id), "{id} shown in:\n{prompt}");
    }
    let asked: Vec<String> = bed
        .slack_requests("users.info")
        .await
        .iter()
        .filter_map(|r| {
            r.url
                .query_pairs()
                .find(|(k, _)| k == "user")
                .map(|(_, v)| v.into_owned())
        })
        .collect();
    assert!(
        asked.contains(&ALICE.to_owned()) && asked.contains(&BOB.to_owned()),
        "{asked:?}"
    );
    let (cached, _) = bed
        .store
        .get_user(&user(ALICE))
        .await
        .expect("read")
        .expect("alice is cached");
    assert_eq!(cached.name, "alice");
}

#[tokio::test]
async fn a_response_that_fails_before_posting_is_answered_on_redelivery() {
    // Regression: the claim was taken before the bot's id and the context
    // were read, and kept when that failed; the redelivery the retryable
    // error asks for then found the job "already done" and the mention was
    // never answered.
    let bed = Bed::with_settings(|s| s.slack_max_retries = 0).await;
    let unavailable = ResponseTemplate::new(503);
    mount_once(&bed.slack_server, "GET", "/api/auth.test", unavailable).await;
    bed.seed(&[message(GENERAL, ALICE, ts(-60), None, "<@UBOT> 起きてる?")])
        .await;
    let job = response(None, -60, true);

    let failed = myao_services::jobs::run(&bed.services, &job).await;

    match failed {
        Err(error) => assert!(error.is_retryable(), "{error}"),
        Ok(outcome) => panic!("expected a retryable failure, got {outcome:?}"),
    }
    assert!(bed.posts().await.is_empty());
    let outcome = responded(bed.run(&job).await);
    assert!(
        matches!(outcome, ResponseOutcome::Posted { .. }),
        "{outcome:?}"
    );
    assert_eq!(bed.posts().await.len(), 1);
    assert_eq!(bed.llm_calls().await.len(), 1);
}

/// Regression: a CI bot's message after a person's question used to make the
/// pending judgment stale, and a bot's message schedules no judgment of its
/// own, so the question was never judged.
#[tokio::test]
async fn another_bots_message_after_the_job_does_not_cancel_the_judgment() {
    let bed = Bed::new().await;
    let mut ci = message(
        GENERAL,
        "UCIBOT",
        ts(-100),
        Some(ts(-900)),
        "build #41 failed",
    );
    ci.is_bot = true;
    bed.seed(&[
        message(GENERAL, ALICE, ts(-900), None, "デプロイ失敗した"),
        message(GENERAL, ALICE, ts(-300), Some(ts(-900)), "誰かわかる?"),
        ci,
    ])
    .await;

    let outcome = judged(bed.run(&judgment(Some(-900), -300)).await);

    assert!(
        matches!(outcome, JudgmentOutcome::Respond { .. }),
        "{outcome:?}"
    );
    let calls = bed.llm_calls_of(PromptKind::Judgment).await;
    assert_eq!(calls.len(), 1);
    assert!(
        calls[0].system.contains("build #41 failed"),
        "the bot's message is in the judged thread"
    );
    // and the reply it leads to is not stale either
    let replies = bed.run_due().await;
    assert!(
        replies
            .iter()
            .any(|(_, o)| matches!(o, JobOutcome::Response(ResponseOutcome::Posted { .. }))),
        "{replies:?}"
    );
}

/// Issue 43: a helper bot that answers the question while myao's decided
/// answer waits out its delay is an answer, as a person's would be.
#[tokio::test]
async fn another_apps_answer_after_the_judgment_stands_the_decided_answer_down() {
    let bed = Bed::new().await;
    bed.seed(&[
        message(GENERAL, ALICE, ts(-900), None, "デプロイ失敗した"),
        message(GENERAL, ALICE, ts(-300), Some(ts(-900)), "誰かわかる?"),
    ])
    .await;
    let outcome = judged(bed.run(&judgment(Some(-900), -300)).await);
    assert!(
        matches!(outcome, JudgmentOutcome::Respond { .. }),
        "{outcome:?}"
    );
    let mut helper = message(
        GENERAL,
        "UHELPER",
        ts(-5),
        Some(ts(-900)),
        "Re-run the deploy with --force",
    );
    helper.is_bot = true;
    bed.seed(&[helper]).await;
    bed.clock.advance(Duration::minutes(10));

    let replies = bed.run_due().await;

    assert!(
        matches!(
            replies.as_slice(),
            [(_, JobOutcome::Response(ResponseOutcome::Stale))]
        ),
        "{replies:?}"
    );
    assert!(bed.posts().await.is_empty());
}

#[tokio::test]
async fn a_response_job_is_stale_once_the_bot_itself_has_spoken() {
    let bed = Bed::new().await;
    let mut own = message(GENERAL, BOT, ts(-100), Some(ts(-900)), "もう答えたにゃ");
    own.is_bot = true;
    bed.seed(&[
        message(GENERAL, ALICE, ts(-900), None, "デプロイ失敗した"),
        message(GENERAL, ALICE, ts(-300), Some(ts(-900)), "誰かわかる?"),
        own,
    ])
    .await;

    let outcome = responded(bed.run(&response(Some(-900), -300, false)).await);

    assert_eq!(outcome, ResponseOutcome::Stale);
    assert!(bed.posts().await.is_empty());
}

#[tokio::test]
async fn a_post_rate_limited_past_its_retries_is_answered_on_redelivery() {
    let bed = Bed::with_settings(|s| s.slack_max_retries = 0).await;
    answer_next_post(
        &bed,
        ResponseTemplate::new(429)
            .insert_header("retry-after", "1")
            .set_body_json(json!({"ok": false, "error": "ratelimited"})),
    )
    .await;
    bed.seed(&[message(GENERAL, ALICE, ts(-60), None, "<@UBOT> いる?")])
        .await;
    let job = response(None, -60, true);

    // Slack surely did not post: the claim is given back and the error asks
    // for a redelivery (SQS, or Lambda's retries of a scheduled job).
    let first = myao_services::jobs::run(&bed.services, &job).await;
    assert!(matches!(&first, Err(e) if e.is_retryable()), "{first:?}");
    let second = responded(bed.run(&job).await);

    assert!(
        matches!(second, ResponseOutcome::Posted { .. }),
        "{second:?}"
    );
    let bot_messages = bed
        .store
        .all_messages()
        .into_iter()
        .filter(|m| m.is_bot)
        .count();
    assert_eq!(bot_messages, 1);
    // Issue 45: the redelivery posted the reply the first try wrote; the
    // LLM was asked once.
    assert_eq!(bed.llm_calls_of(PromptKind::Response).await.len(), 1);
}

#[tokio::test]
async fn a_reply_cannot_notify_the_channel() {
    let bed = Bed::new().await;
    bed.script.set_reply("<!channel> みんな見て <@UALICE> & co");
    bed.seed(&[message(GENERAL, BOB, ts(-60), None, "<@UBOT> 全員呼んで")])
        .await;

    responded(bed.run(&response(None, -60, true)).await);

    let posts = bed.posts().await;
    assert_eq!(posts.len(), 1);
    assert_eq!(
        posts[0]["text"],
        "&lt;!channel&gt; みんな見て &lt;@UALICE&gt; &amp; co"
    );
}

#[tokio::test]
async fn a_reply_fifty_thousand_characters_long_is_posted_cut_at_a_sentence_unfurling_nothing() {
    let bed = Bed::with_settings(|s| s.max_reply_chars = 3_000).await;
    let sentence = "The cache key changed, see https://example.com/x.png?q=secret. ";
    bed.script
        .set_reply(sentence.repeat(50_000 / sentence.len() + 1));
    bed.seed(&[message(
        GENERAL,
        ALICE,
        ts(0),
        None,
        "<@UBOT> why is CI red?",
    )])
    .await;

    let outcome = responded(bed.run(&response(None, 0, true)).await);

    assert!(
        matches!(outcome, ResponseOutcome::Posted { .. }),
        "{outcome:?}"
    );
    let posts = bed.posts().await;
    assert_eq!(posts.len(), 1);
    let text = posts[0]["text"].as_str().expect("a text");
    assert!(
        text.chars().count() <= 3_000,
        "{} chars",
        text.chars().count()
    );
    assert!(
        text.chars().count() > 2_900,
        "cut at the last sentence within"
    );
    assert!(
        text.ends_with("q=secret."),
        "at a sentence: {:?}",
        &text[text.len() - 40..]
    );
    assert_eq!(posts[0]["unfurl_links"], json!(false));
    assert_eq!(posts[0]["unfurl_media"], json!(false));
}

/// A Slack stub answering `conversations.replies` and `.history` with one
/// message of the bot's, `ts` 1767600000.900000, marked with `marker` when
/// given.
async fn mount_marked_history(bed: &Bed, marker: Option<&str>) {
    let mut message =
        json!({"type": "message", "user": BOT, "text": "earlier", "ts": "1767600000.900000"});
    if let Some(key) = marker {
        message["metadata"] = json!({"event_type": "myao_reply", "event_payload": {"key": key}});
    }
    for method_path in ["/api/conversations.replies", "/api/conversations.history"] {
        Mock::given(method("GET"))
            .and(path(method_path))
            .respond_with(
                ResponseTemplate::new(200)
                    .set_body_json(json!({"ok": true, "messages": [message.clone()]})),
            )
            .mount(&bed.slack_server)
            .await;
    }
}

/// Issue 45: a post whose answer was lost (Slack's 5xx) is looked for by
/// its marker: found, it is the answer, and nothing is posted twice. Not
/// found, the job comes back (issue 56: Slack may show a slow post only
/// later) and posts it again, once, when a try after
/// `LOST_POST_SECONDS` does not find it either. Either way the LLM wrote it
/// once.
#[tokio::test]
async fn a_mention_whose_post_got_a_5xx_is_answered_once_whether_or_not_it_posted() {
    for posted in [true, false] {
        let bed = Bed::new().await;
        answer_next_post(&bed, ResponseTemplate::new(500)).await;
        bed.seed(&[message(GENERAL, ALICE, ts(0), None, "<@UBOT> status?")])
            .await;
        let job = response(None, 0, true);
        let marker = job.claim_key();
        mount_marked_history(&bed, posted.then_some(marker.as_str())).await;

        let outcome = match posted {
            true => responded(bed.run(&job).await),
            false => {
                let first = myao_services::jobs::run(&bed.services, &job).await;
                assert!(first.as_ref().is_err_and(|e| e.is_retryable()), "{first:?}");
                assert_eq!(bed.posts().await.len(), 1, "not posted again at once");
                bed.clock.advance(Duration::seconds(LOST_POST_SECONDS + 1));
                responded(bed.run(&job).await)
            }
        };

        let ResponseOutcome::Posted { ts: at, .. } = outcome else {
            panic!("posted={posted}: {outcome:?}");
        };
        let posts = bed.posts().await;
        assert!(
            posts
                .iter()
                .all(|p| p["metadata"]["event_payload"]["key"] == json!(marker)),
            "every try carries the marker: {posts:?}"
        );
        if posted {
            assert_eq!(posts.len(), 1, "found: not posted again");
            assert_eq!(at.to_string(), "1767600000.900000");
        } else {
            assert_eq!(posts.len(), 2, "not found: posted once more");
        }
        assert_eq!(bed.llm_calls_of(PromptKind::Response).await.len(), 1);
    }
}

/// Issue 56: a post Slack answers with a 5xx and shows only 30 s later is
/// not posted twice: the try that lost it, and the try 10 s later, find it
/// nowhere and post nothing; the try after finds it, and it is the answer.
#[tokio::test]
async fn a_post_slack_shows_only_30_s_later_is_not_posted_twice() {
    let bed = Bed::new().await;
    answer_next_post(&bed, ResponseTemplate::new(500)).await;
    bed.seed(&[message(GENERAL, ALICE, ts(0), None, "<@UBOT> status?")])
        .await;
    let job = response(None, 0, true);
    let marker = job.claim_key();

    for wait in [0, 10] {
        bed.clock.advance(Duration::seconds(wait));
        let tried = myao_services::jobs::run(&bed.services, &job).await;
        assert!(tried.as_ref().is_err_and(|e| e.is_retryable()), "{tried:?}");
        assert_eq!(
            bed.posts().await.len(),
            1,
            "after {wait} s: not posted again"
        );
    }
    // It shows now.
    mount_marked_history(&bed, Some(&marker)).await;
    bed.clock.advance(Duration::seconds(30));
    let outcome = responded(bed.run(&job).await);
    assert_the_landed_post_answered(&bed, outcome).await;
}

/// The post that landed (`mount_marked_history`'s) is the answer, posted
/// once and written once.
async fn assert_the_landed_post_answered(bed: &Bed, outcome: ResponseOutcome) {
    let ResponseOutcome::Posted { ts: at, .. } = outcome else {
        panic!("{outcome:?}");
    };
    assert_eq!(at.to_string(), "1767600000.900000", "the post that landed");
    assert_eq!(bed.posts().await.len(), 1, "posted once");
    assert_eq!(bed.llm_calls_of(PromptKind::Response).await.len(), 1);
}

/// Issue 56 (review): a try that lost its post and could not keep its
/// reply leaves only the hold; the next try, writing the reply again,
/// looks for the lost post first, finds it, and posts nothing.
#[tokio::test]
async fn a_try_after_a_lost_post_whose_reply_was_not_kept_looks_for_it_first() {
    let bed = Bed::new().await;
    bed.seed(&[message(GENERAL, ALICE, ts(0), None, "<@UBOT> status?")])
        .await;
    let job = response(None, 0, true);
    let marker = job.claim_key();
    mount_marked_history(&bed, Some(&marker)).await;
    // What the earlier try left: the hold, and no kept reply.
    let until = bed.now() + Duration::seconds(LOST_POST_SECONDS);
    assert!(bed
        .store
        .claim(&format!("lost:{marker}"), until)
        .await
        .unwrap());

    let outcome = responded(bed.run(&job).await);
    let ResponseOutcome::Posted { ts: at, .. } = outcome else {
        panic!("{outcome:?}");
    };
    assert_eq!(at.to_string(), "1767600000.900000", "the post that landed");
    assert!(bed.posts().await.is_empty(), "nothing posted");
}

/// Issue 45 (review): a post whose answer was lost, and whose search for it
/// failed too, is looked for again by the redelivery before it posts the
/// kept reply: the post had landed, so nothing is posted twice.
#[tokio::test]
async fn a_redelivery_finds_the_post_an_earlier_try_lost_track_of_and_posts_nothing() {
    let bed = Bed::with_settings(|s| s.slack_max_retries = 0).await;
    answer_next_post(&bed, ResponseTemplate::new(500)).await;
    for api in ["/api/conversations.replies", "/api/conversations.history"] {
        Mock::given(path(api))
            .respond_with(ResponseTemplate::new(503))
            .up_to_n_times(1)
            .with_priority(1)
            .mount(&bed.slack_server)
            .await;
    }
    bed.seed(&[message(GENERAL, ALICE, ts(0), None, "<@UBOT> status?")])
        .await;
    let job = response(None, 0, true);
    let marker = job.claim_key();
    mount_marked_history(&bed, Some(&marker)).await;

    let first = myao_services::jobs::run(&bed.services, &job).await;
    assert!(first.as_ref().is_err_and(|e| e.is_retryable()), "{first:?}");
    let second = responded(bed.run(&job).await);
    assert_the_landed_post_answered(&bed, second).await;
}

/// Issue 45: a Slack outage of 10 minutes (every post and read 503s) ends
/// with exactly one answer and one LLM call: the tries come back after
/// `retry_delays_seconds` (the queue's part, played here by running the job
/// again at each delay), each posting the reply the first one wrote.
#[tokio::test]
async fn a_slack_outage_of_ten_minutes_ends_with_one_answer_and_one_llm_call() {
    let bed = Bed::with_settings(|s| s.slack_max_retries = 0).await;
    let outage_ends = bed.now() + Duration::minutes(10);
    for api in [
        "/api/chat.postMessage",
        "/api/conversations.replies",
        "/api/conversations.history",
    ] {
        let clock = bed.clock.clone();
        // Matches only while Slack is down; after, the bed's own responders.
        let during_outage = move |_: &wiremock::Request| clock.now() < outage_ends;
        Mock::given(path(api))
            .and(during_outage)
            .respond_with(ResponseTemplate::new(503))
            .with_priority(1)
            .mount(&bed.slack_server)
            .await;
    }
    bed.seed(&[message(
        GENERAL,
        ALICE,
        ts(0),
        None,
        "<@UBOT> is the deploy done?",
    )])
    .await;
    let job = response(None, 0, true);
    let delays = myao_domain::Settings::default().retry_delays_seconds;

    let mut outcome = myao_services::jobs::run(&bed.services, &job).await;
    for delay in &delays {
        if outcome.is_ok() {
            break;
        }
        let error = outcome.expect_err("failed");
        assert!(error.is_retryable(), "{error}");
        bed.clock.advance(Duration::seconds(i64::from(*delay)));
        outcome = myao_services::jobs::run(&bed.services, &job).await;
    }

    let outcome = responded(outcome.expect("answered after the outage"));
    assert!(
        matches!(outcome, ResponseOutcome::Posted { .. }),
        "{outcome:?}"
    );
    assert!(bed.now() >= outage_ends, "answered after the outage");
    assert_eq!(bed.llm_calls_of(PromptKind::Response).await.len(), 1);
    let bot_messages = bed
        .store
        .all_messages()
        .into_iter()
        .filter(|m| m.is_bot)
        .count();
    assert_eq!(bot_messages, 1, "one answer");
}

/// A bed whose first mention's post Slack refused as `token_revoked`:
/// the token breaker is open.
async fn a_bed_whose_token_slack_refused() -> Bed {
    let bed = Bed::new().await;
    answer_next_post(
        &bed,
        ResponseTemplate::new(200).set_body_json(json!({"ok": false, "error": "token_revoked"})),
    )
    .await;
    bed.seed(&[message(
        GENERAL,
        ALICE,
        ts(0),
        None,
        "<@UBOT> are you there?",
    )])
    .await;
    let refused = responded(bed.run(&response(None, 0, true)).await);
    assert!(
        matches!(refused, ResponseOutcome::PostFailed(_)),
        "{refused:?}"
    );
    bed
}

/// Issue 45: once Slack refuses the bot token, replies cost no LLM call
/// while it is refused. Issue 56: a mention then waits for the token, not
/// dropped: each of its tries asks Slack whether the token works again, and
/// the first that hears yes closes the breaker and answers.
#[tokio::test]
async fn a_mention_while_the_token_is_refused_waits_and_is_answered_when_it_works_again() {
    let bed = a_bed_whose_token_slack_refused().await;
    // Slack still refuses the token for two more asks.
    for _ in 0..2 {
        mount_once(
            &bed.slack_server,
            "GET",
            "/api/auth.test",
            ResponseTemplate::new(200)
                .set_body_json(json!({"ok": false, "error": "token_revoked"})),
        )
        .await;
    }
    bed.seed(&[message(GENERAL, ALICE, ts(30), None, "<@UBOT> hello?")])
        .await;
    let job = response(None, 30, true);
    let asked_before = bed.slack_requests("auth.test").await.len();
    for wait in [10, 30] {
        bed.clock.advance(Duration::seconds(wait));
        let waiting = myao_services::jobs::run(&bed.services, &job).await;
        assert!(
            waiting.as_ref().is_err_and(|e| e.is_retryable()),
            "it comes back: {waiting:?}"
        );
    }
    assert_eq!(bed.llm_calls_of(PromptKind::Response).await.len(), 1);
    assert_eq!(
        bed.posts().await.len(),
        1,
        "no post tried but the refused one"
    );
    // The token works again (within the breaker's minutes): the next try
    // answers, once, and the breaker is closed for the next mention.
    bed.clock.advance(Duration::seconds(90));
    let answered = responded(bed.run(&job).await);
    assert!(
        matches!(answered, ResponseOutcome::Posted { .. }),
        "{answered:?}"
    );
    assert_eq!(
        bed.posts().await.len(),
        2,
        "the refused one, then the answer"
    );
    let asked = bed.slack_requests("auth.test").await.len();
    assert_eq!(asked - asked_before, 3, "asked at each try: no, no, yes");
    let later = (bed.now() - myao_tests::stubs::at(0)).num_seconds();
    bed.seed(&[message(GENERAL, ALICE, ts(later), None, "<@UBOT> now?")])
        .await;
    let next = responded(bed.run(&response(None, later, true)).await);
    assert!(matches!(next, ResponseOutcome::Posted { .. }), "{next:?}");
    assert_eq!(bed.llm_calls_of(PromptKind::Response).await.len(), 3);
    assert_eq!(
        bed.slack_requests("auth.test").await.len(),
        asked,
        "the breaker closed: not asked again"
    );
}

/// Issue 45: an unprompted reply while the token is refused is no LLM call
/// and no answer (nobody waits for it).
#[tokio::test]
async fn an_unprompted_reply_while_the_token_is_refused_is_no_reply() {
    let bed = a_bed_whose_token_slack_refused().await;
    bed.seed(&[message(
        GENERAL,
        BOB,
        ts(10),
        None,
        "anyone know how to rebase?",
    )])
    .await;
    let outcome = responded(bed.run(&response(None, 10, false)).await);
    assert!(
        matches!(outcome, ResponseOutcome::NoReply(NoReply::TokenRefused)),
        "{outcome:?}"
    );
    assert_eq!(bed.llm_calls_of(PromptKind::Response).await.len(), 1);
}

/// Issue 45: a reply Slack refuses as `msg_too_long` is posted once more,
/// held to 4,000 characters after escaping, rather than lost.
#[tokio::test]
async fn a_reply_slack_refuses_as_too_long_is_posted_once_more_shorter() {
    let bed = Bed::with_settings(|s| s.max_reply_chars = 40_000).await;
    answer_next_post(
        &bed,
        ResponseTemplate::new(200).set_body_json(json!({"ok": false, "error": "msg_too_long"})),
    )
    .await;
    bed.script
        .set_reply("Use a < b & c > d here. ".repeat(1_000));
    bed.seed(&[message(GENERAL, ALICE, ts(0), None, "<@UBOT> how?")])
        .await;

    let outcome = responded(bed.run(&response(None, 0, true)).await);

    assert!(
        matches!(outcome, ResponseOutcome::Posted { .. }),
        "{outcome:?}"
    );
    let posts = bed.posts().await;
    assert_eq!(posts.len(), 2, "the refused post and one shorter");
    let text = posts[1]["text"].as_str().expect("a text");
    assert!(text.chars().count() <= 4_000, "{}", text.chars().count());
    assert!(text.chars().count() > 3_900, "{}", text.chars().count());
    assert!(text.ends_with("here."), "{:?}", &text[text.len() - 20..]);
    assert_eq!(
        bed.llm_calls_of(PromptKind::Response).await.len(),
        1,
        "written once"
    );
}

#[tokio::test]
async fn a_file_shared_before_a_mention_is_named_in_the_reply_prompt() {
    let bed = Bed::new().await;
    bed.deliver(json!({
        "type": "message", "subtype": "file_share", "channel": GENERAL,
        "channel_type": "channel", "user": ALICE, "ts": ts(-60).to_string(),
        "text": "here is the failing build log",
        "files": [{"name": "build-7781.log", "filetype": "text", "size": 18_000}]
    }))
    .await;
    bed.seed(&[message(
        GENERAL,
        ALICE,
        ts(0),
        None,
        "<@UBOT> can you see what failed?",
    )])
    .await;

    responded(bed.run(&response(None, 0, true)).await);

    let prompts = bed.llm_calls_of(PromptKind::Response).await;
    let prompt = &prompts.first().expect("a reply prompt").system;
    assert!(
        prompt.contains("[file: build-7781.log, text, 18 KB, not opened]"),
        "{prompt}"
    );
}

/// A PNG's first bytes and a little more: what the stub serves as an image.
const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR-the-rest-of-a-small-image";

/// A message of Alice's at `offset` sharing `files` (Slack's `file_share`).
async fn share(bed: &Bed, offset: i64, thread: Option<i64>, files: Value) {
    let mut event = json!({
        "type": "message", "subtype": "file_share", "channel": GENERAL,
        "channel_type": "channel", "user": ALICE, "ts": ts(offset).to_string(),
        "text": "what do you make of this?", "files": files
    });
    if let Some(root) = thread {
        event["thread_ts"] = json!(ts(root).to_string());
    }
    bed.deliver(event).await;
}

/// A file at `file_path` of the Slack stub (whose origin is the API's, as
/// `files.slack.com` is Slack's), answered with `answer`.
async fn serve_file(bed: &Bed, file_path: &str, answer: ResponseTemplate) {
    Mock::given(method("GET"))
        .and(path(file_path))
        .respond_with(answer)
        .mount(&bed.slack_server)
        .await;
}

/// The requests for files the Slack stub received.
async fn downloads(bed: &Bed) -> Vec<wiremock::Request> {
    bed.slack_server
        .received_requests()
        .await
        .unwrap_or_default()
        .into_iter()
        .filter(|r| r.url.path().starts_with("/files-pri/"))
        .collect()
}

/// A shared image as Slack describes it, downloadable at `file_path`.
fn image(bed: &Bed, name: &str, size: u64, file_path: &str) -> Value {
    json!({"name": name, "filetype": "png", "mimetype": "image/png", "size": size,
           "url_private": format!("{}{file_path}", bed.slack_server.uri())})
}

/// Alice's mention at 0 in `thread` (or the top level), answered; the reply's LLM call.
async fn answer_mention(bed: &Bed, thread: Option<i64>) -> myao_tests::stubs::LlmCall {
    bed.seed(&[message(
        GENERAL,
        ALICE,
        ts(0),
        thread.map(ts),
        "<@UBOT> can you see it?",
    )])
    .await;
    let outcome = responded(bed.run(&response(thread, 0, true)).await);
    assert!(
        matches!(outcome, ResponseOutcome::Posted { .. }),
        "{outcome:?}"
    );
    let calls = bed.llm_calls_of(PromptKind::Response).await;
    calls.into_iter().next().expect("a reply prompt")
}

#[tokio::test]
async fn with_vision_a_shared_image_reaches_the_model_as_an_image() {
    let bed = Bed::with_settings(|s| s.vision = true).await;
    serve_file(
        &bed,
        "/files-pri/T1-F1/chart.png",
        ResponseTemplate::new(200)
            .insert_header("content-type", "image/png")
            .set_body_bytes(PNG),
    )
    .await;
    let chart = image(
        &bed,
        "chart.png",
        PNG.len() as u64,
        "/files-pri/T1-F1/chart.png",
    );
    share(
        &bed,
        -60,
        None,
        json!([chart, {"name": "notes.txt", "filetype": "text", "size": 900}]),
    )
    .await;

    let call = answer_mention(&bed, None).await;

    // Named in the prompt as the image it is given as; the text file is not opened.
    assert!(
        call.system.contains(&format!(
            "[file: chart.png, png, {} B, image 1 attached]",
            PNG.len()
        )),
        "{}",
        call.system
    );
    assert!(
        call.system
            .contains("[file: notes.txt, text, 900 B, not opened]"),
        "{}",
        call.system
    );
    // The image goes as a data URL in a user turn after the system prompt.
    let turn = &call.body["messages"][1];
    assert_eq!(turn["role"], "user");
    use base64::Engine as _;
    let url = format!(
        "data:image/png;base64,{}",
        base64::engine::general_purpose::STANDARD.encode(PNG)
    );
    assert_eq!(
        turn["content"][1],
        json!({"type": "image_url", "image_url": {"url": url}})
    );
    // Downloaded with the bot token.
    let downloads = downloads(&bed).await;
    assert_eq!(downloads.len(), 1);
    assert_eq!(
        downloads[0]
            .headers
            .get("authorization")
            .and_then(|v| v.to_str().ok()),
        Some("Bearer xoxb-test")
    );
}

#[tokio::test]
async fn an_image_that_cannot_be_read_is_named_so_and_the_reply_still_goes() {
    let bed = Bed::with_settings(|s| {
        s.vision = true;
        s.vision_max_bytes = 1_000;
    })
    .await;
    // No files:read: Slack serves its sign-in page instead of the file.
    serve_file(
        &bed,
        "/files-pri/T1-F2/login.png",
        ResponseTemplate::new(200).set_body_raw(
            "<!DOCTYPE html><html>sign in</html>",
            "text/html; charset=utf-8",
        ),
    )
    .await;
    // A 404, and bytes that are no image whatever the name says.
    serve_file(
        &bed,
        "/files-pri/T1-F3/gone.png",
        ResponseTemplate::new(404),
    )
    .await;
    serve_file(
        &bed,
        "/files-pri/T1-F4/fake.png",
        ResponseTemplate::new(200)
            .insert_header("content-type", "image/png")
            .set_body_bytes(b"not an image at all".to_vec()),
    )
    .await;
    let files = json!([
        image(&bed, "login.png", 500, "/files-pri/T1-F2/login.png"),
        image(&bed, "gone.png", 500, "/files-pri/T1-F3/gone.png"),
        image(&bed, "fake.png", 500, "/files-pri/T1-F4/fake.png"),
        image(&bed, "huge.png", 5_000_000, "/files-pri/T1-F5/huge.png"),
    ]);
    share(&bed, -60, None, files).await;

    let call = answer_mention(&bed, None).await;

    for name in ["login.png", "gone.png", "fake.png"] {
        assert!(
            call.system
                .contains(&format!("[file: {name}, png, 500 B, could not be read]")),
            "{name}: {}",
            call.system
        );
    }
    assert!(
        call.system
            .contains("[file: huge.png, png, 4.8 MB, too large to open]"),
        "{}",
        call.system
    );
    // No image went; only the system message.
    assert_eq!(call.body["messages"].as_array().map(Vec::len), Some(1));
    // Too large by Slack's word: never downloaded.
    assert_eq!(downloads(&bed).await.len(), 3);
    assert_eq!(bed.posts().await.len(), 1, "the reply still went");
}

#[tokio::test]
async fn a_model_that_refuses_the_images_still_replies_without_them() {
    let bed = Bed::with_settings(|s| s.vision = true).await;
    serve_file(
        &bed,
        "/files-pri/T1-F8/anim.png",
        ResponseTemplate::new(200).set_body_bytes(PNG),
    )
    .await;
    // The model refuses any request with an image (a kind or size it does
    // not take), and answers one without.
    Mock::given(method("POST"))
        .and(wiremock::matchers::body_string_contains("image_url"))
        .respond_with(ResponseTemplate::new(400).set_body_json(
            json!({"error": {"message": "Invalid image.", "type": "invalid_request_error"}}),
        ))
        .with_priority(1)
        .mount(&bed.llm_server)
        .await;
    let anim = image(&bed, "anim.png", 44, "/files-pri/T1-F8/anim.png");
    share(&bed, -60, None, json!([anim])).await;

    let call = answer_mention(&bed, None).await;

    assert!(call.system.contains("image 1 attached"), "{}", call.system);
    let calls = bed.llm_calls_of(PromptKind::Response).await;
    assert_eq!(calls.len(), 2, "the reply written again without the image");
    assert!(
        calls[1]
            .system
            .contains("[file: anim.png, png, 44 B, could not be read]"),
        "{}",
        calls[1].system
    );
    assert_eq!(calls[1].body["messages"].as_array().map(Vec::len), Some(1));
    assert_eq!(bed.posts().await.len(), 1);
}

#[tokio::test]
async fn an_image_an_edit_took_away_is_not_opened() {
    let bed = Bed::with_settings(|s| s.vision = true).await;
    serve_file(
        &bed,
        "/files-pri/T1-F9/gone.png",
        ResponseTemplate::new(200).set_body_bytes(PNG),
    )
    .await;
    let gone = image(&bed, "gone.png", 44, "/files-pri/T1-F9/gone.png");
    share(&bed, -60, None, json!([gone])).await;
    // The file is taken off the message (its text unchanged).
    bed.deliver(json!({
        "type": "message", "subtype": "message_changed", "channel": GENERAL,
        "channel_type": "channel", "ts": ts(-30).to_string(),
        "message": {"type": "message", "user": ALICE, "ts": ts(-60).to_string(),
                    "text": "what do you make of this?", "files": []},
        "previous_message": {"type": "message", "user": ALICE, "ts": ts(-60).to_string(),
                    "text": "what do you make of this?", "files": [gone]}
    }))
    .await;

    let call = answer_mention(&bed, None).await;

    assert!(!call.system.contains("gone.png"), "{}", call.system);
    assert_eq!(call.body["messages"].as_array().map(Vec::len), Some(1));
    assert!(downloads(&bed).await.is_empty());
}

#[tokio::test]
async fn only_the_answered_conversations_images_are_opened_and_none_without_vision() {
    // An image in a thread is not the top level's: a top-level mention
    // opens none of it.
    let bed = Bed::with_settings(|s| s.vision = true).await;
    serve_file(
        &bed,
        "/files-pri/T1-F6/side.png",
        ResponseTemplate::new(200).set_body_bytes(PNG),
    )
    .await;
    share(&bed, -120, None, json!([])).await;
    let side = image(&bed, "side.png", 44, "/files-pri/T1-F6/side.png");
    share(&bed, -60, Some(-120), json!([side])).await;
    let call = answer_mention(&bed, None).await;
    assert_eq!(call.body["messages"].as_array().map(Vec::len), Some(1));

    // Vision off (the default): named, not opened, not downloaded.
    let bed = Bed::new().await;
    serve_file(
        &bed,
        "/files-pri/T1-F7/chart.png",
        ResponseTemplate::new(200).set_body_bytes(PNG),
    )
    .await;
    let chart = image(&bed, "chart.png", 44, "/files-pri/T1-F7/chart.png");
    share(&bed, -60, None, json!([chart])).await;
    let call = answer_mention(&bed, None).await;
    assert!(
        call.system
            .contains("[file: chart.png, png, 44 B, not opened]"),
        "{}",
        call.system
    );
    assert_eq!(call.body["messages"].as_array().map(Vec::len), Some(1));
    assert!(downloads(&bed).await.is_empty());
}

// ---- A failed reply comes back soon (SQS on the emulator) ---------------------

/// The response queue on the emulator, as the template makes it: messages
/// come back after `visibility` seconds, and go to a dead-letter queue
/// (its URL second) once received `max_receives` times. The bed's queue
/// port is put on it.
async fn response_queue_on_sqs(
    bed: &mut Bed,
    visibility: u32,
    max_receives: u32,
) -> (myao_aws::sqs::SqsQueue, String) {
    use aws_sdk_sqs::types::QueueAttributeName;
    let client = myao_tests::sqs_client().await;
    let dlq = myao_aws::sqs::create_queue(&client, &myao_tests::unique("myao-dlq"))
        .await
        .expect("a dead-letter queue");
    let dlq_arn = client
        .get_queue_attributes()
        .queue_url(&dlq)
        .attribute_names(QueueAttributeName::QueueArn)
        .send()
        .await
        .expect("its attributes")
        .attributes
        .and_then(|a| a.get(&QueueAttributeName::QueueArn).cloned())
        .expect("its ARN");
    let url = client
        .create_queue()
        .queue_name(myao_tests::unique("myao-response"))
        .attributes(
            QueueAttributeName::VisibilityTimeout,
            visibility.to_string(),
        )
        .attributes(
            QueueAttributeName::RedrivePolicy,
            json!({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": max_receives}).to_string(),
        )
        .send()
        .await
        .expect("a response queue")
        .queue_url
        .expect("its URL");
    let queue = myao_aws::sqs::SqsQueue {
        client,
        response_queue_url: url,
        memory_queue_url: None,
        team: None,
    };
    bed.services.ports.queue = std::sync::Arc::new(queue.clone());
    (queue, dlq)
}

/// What Lambda's event source mapping does once: receives a message
/// (waiting up to `wait_seconds`), hands it to the response function's
/// handler as an SQS event, and deletes it unless it is reported in
/// `batchItemFailures`. Returns its receive count and whether it failed,
/// or `None` when nothing came.
async fn poll_once(
    bed: &Bed,
    queue: &myao_aws::sqs::SqsQueue,
    wait_seconds: i32,
) -> Option<(u32, bool)> {
    use aws_sdk_sqs::types::MessageSystemAttributeName;
    let received = queue
        .client
        .receive_message()
        .queue_url(&queue.response_queue_url)
        .max_number_of_messages(1)
        .wait_time_seconds(wait_seconds)
        .message_system_attribute_names(MessageSystemAttributeName::ApproximateReceiveCount)
        .send()
        .await
        .expect("received");
    let message = received.messages.unwrap_or_default().into_iter().next()?;
    let count = message
        .attributes()
        .and_then(|a| a.get(&MessageSystemAttributeName::ApproximateReceiveCount))
        .cloned()
        .unwrap_or_else(|| "1".to_owned());
    let id = message.message_id().expect("an id").to_owned();
    let receipt = message.receipt_handle().expect("a receipt").to_owned();
    let event = json!({"Records": [{
        "messageId": id,
        "receiptHandle": receipt,
        "body": message.body().expect("a body"),
        "attributes": {"ApproximateReceiveCount": count},
        "eventSource": "aws:sqs",
    }]});
    let answer = myao_jobs::payload::handle_payload(&bed.services, &[JobKind::Response], event)
        .await
        .expect("handled");
    let Answer::Batch(batch) = &answer else {
        panic!("an SQS batch's answer: {answer:?}");
    };
    assert_eq!(
        serde_json::to_value(&answer).expect("JSON")["batchItemFailures"]
            .as_array()
            .map(Vec::len),
        Some(batch.batch_item_failures.len()),
        "Lambda reads batchItemFailures"
    );
    let failed = !batch.batch_item_failures.is_empty();
    if !failed {
        queue
            .client
            .delete_message()
            .queue_url(&queue.response_queue_url)
            .receipt_handle(&receipt)
            .send()
            .await
            .expect("deleted");
    }
    Some((count.parse().expect("a count"), failed))
}

/// A bed whose quick retries wait `delays`, whose model answers 500 to
/// the first `failures` calls (`None`: to all), with its response queue on
/// the emulator (see [`response_queue_on_sqs`]) and Alice's mention's reply
/// job on it; the queue and its dead-letter queue's URL beside it.
async fn a_mention_on_sqs(
    delays: &[u32],
    visibility: u32,
    max_receives: u32,
    failures: Option<u64>,
) -> (Bed, myao_aws::sqs::SqsQueue, String) {
    let mut bed = Bed::with_settings(|s| {
        s.llm_max_retries = 0;
        s.retry_delays_seconds = delays.to_vec();
    })
    .await;
    let (queue, dlq) = response_queue_on_sqs(&mut bed, visibility, max_receives).await;
    let outage = Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(500).set_body_string("down"))
        .with_priority(1);
    match failures {
        Some(n) => outage.up_to_n_times(n).mount(&bed.llm_server).await,
        None => outage.mount(&bed.llm_server).await,
    }
    a_mention_on_the_queue(&bed, &queue).await;
    (bed, queue, dlq)
}

/// Alice's mention, stored, and its reply job on the queue.
async fn a_mention_on_the_queue(bed: &Bed, queue: &myao_aws::sqs::SqsQueue) {
    use myao_core::ports::Queue;
    bed.seed(&[message(
        GENERAL,
        ALICE,
        ts(0),
        None,
        "<@UBOT> are you there?",
    )])
    .await;
    queue
        .send(&response(None, 0, true), 0)
        .await
        .expect("queued");
}

#[tokio::test]
async fn a_mention_whose_reply_fails_once_comes_back_within_its_first_delay_and_is_posted_once() {
    // The queue's own redelivery would take 60 s; the first quick delay is 2.
    let (bed, queue, _) = a_mention_on_sqs(&[2, 4], 60, 5, Some(1)).await;

    assert_eq!(poll_once(&bed, &queue, 1).await, Some((1, true)), "the 500");
    let failed_at = Instant::now();
    // Not at once: it waits out its delay...
    assert_eq!(poll_once(&bed, &queue, 0).await, None);
    // ...and comes back then, far sooner than the queue's 60 s.
    assert_eq!(poll_once(&bed, &queue, 10).await, Some((2, false)));
    assert!(failed_at.elapsed() < StdDuration::from_secs(30));
    assert_eq!(bed.posts().await.len(), 1);
    assert_eq!(poll_once(&bed, &queue, 1).await, None, "done: deleted");

    // The same job delivered twice more still posts once.
    use myao_core::ports::Queue;
    for _ in 0..2 {
        queue
            .send(&response(None, 0, true), 0)
            .await
            .expect("queued");
    }
    assert_eq!(poll_once(&bed, &queue, 1).await, Some((1, false)));
    assert_eq!(poll_once(&bed, &queue, 1).await, Some((1, false)));
    assert_eq!(bed.posts().await.len(), 1);
}

#[tokio::test]
async fn a_reply_that_always_fails_ends_in_the_dead_letter_queue_after_its_tries() {
    // Three receives: two quick delays, then the queue's own 2 s.
    let (bed, queue, dlq) = a_mention_on_sqs(&[1, 1], 2, 3, None).await;

    let mut tries = Vec::new();
    while let Some(try_) = poll_once(&bed, &queue, 5).await {
        tries.push(try_);
        assert!(tries.len() <= 3, "past maxReceiveCount: {tries:?}");
    }
    assert_eq!(tries, [(1, true), (2, true), (3, true)]);
    let dead = queue
        .client
        .receive_message()
        .queue_url(&dlq)
        .wait_time_seconds(2)
        .send()
        .await
        .expect("received")
        .messages
        .unwrap_or_default();
    assert_eq!(dead.len(), 1, "in the dead-letter queue");
    assert!(bed.posts().await.is_empty());
}
