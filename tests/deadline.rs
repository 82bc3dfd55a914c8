//! Deadline-aware jobs (issue 13, item 2), through the response function's
//! handler and `myao_services::jobs::run`, with the real LLM and Slack adapters
//! against stub servers and the in-process AWS twins (`myao_tests::stubs`).
//!
//! - an LLM that hangs: the reply job gives its claim back with time to
//!   spare before the invocation's deadline, and the redelivery posts once:
//!   `a_hanging_llm_*`
//! - a mention whose job comes back after `mention_max_age_seconds` is
//!   dropped, not answered late: `a_mention_redelivered_*`

use std::time::{Duration as StdDuration, Instant, SystemTime, UNIX_EPOCH};

use chrono::Duration;
use lambda_runtime::{Context, LambdaEvent};
use myao_domain::Reply;
use myao_domain::{Job, ResponseJob};
use myao_services::jobs::JobOutcome;
use myao_services::response::ResponseOutcome;
use myao_testkit::http::{completion, mount_once};
use myao_testkit::ids::channel;
use myao_tests::stubs::{message, ts, Bed, ALICE, BOB, GENERAL};
use serde_json::{json, Value};
use wiremock::ResponseTemplate;

fn mention(newest: i64) -> Job {
    Job::Response(ResponseJob {
        channel: channel(GENERAL),
        thread_ts: None,
        newest_ts: ts(newest),
        mention: true,
        reply: Reply::Full,
        seen_ts: None,
        grounds: None,
    })
}

/// The context Lambda passes an invocation that must end `budget` from now.
fn lambda_context(budget: StdDuration) -> Context {
    let deadline = (SystemTime::now() + budget)
        .duration_since(UNIX_EPOCH)
        .expect("after 1970");
    let mut context = Context::default();
    context.deadline = u64::try_from(deadline.as_millis()).expect("millis");
    context
}

/// The SQS event that delivers `job` (mentions go through the response queue).
fn sqs_event(job: &Job) -> Value {
    json!({"Records": [{
        "messageId": "m-1",
        "eventSource": "aws:sqs",
        "body": serde_json::to_string(job).expect("job"),
    }]})
}

#[tokio::test]
async fn a_hanging_llm_gives_the_claim_back_before_the_deadline_and_the_redelivery_posts_once() {
    // Each LLM attempt may take 20 s; the invocation has 6 s left.
    let bed = Bed::with_settings(|s| s.llm_timeout_seconds = 20).await;
    let hanging = completion("too late").set_delay(StdDuration::from_secs(60));
    mount_once(&bed.llm_server, "POST", "/v1/chat/completions", hanging).await;
    bed.seed(&[message(GENERAL, ALICE, ts(-10), None, "<@UBOT> 起きてる?")])
        .await;
    let job = mention(-10);
    let budget = StdDuration::from_secs(6);

    let started = Instant::now();
    let first = myao_jobs::handle(
        &bed.services,
        myao_jobs::RESPONSE,
        LambdaEvent::new(sqs_event(&job), lambda_context(budget)),
    )
    .await
    .expect("a batch answer");
    let took = started.elapsed();

    // The job failed retryably, in time to say so: SQS redelivers it.
    assert_eq!(
        serde_json::to_value(&first).expect("JSON"),
        json!({"batchItemFailures": [{"itemIdentifier": "m-1"}]})
    );
    assert!(
        took + StdDuration::from_secs(1) <= budget,
        "returned after {took:?} of {budget:?}"
    );
    assert!(bed.posts().await.is_empty());
    assert_eq!(
        bed.llm_calls().await.len(),
        1,
        "no second attempt without the time for it"
    );

    // The claim was given back: the redelivery answers, once.
    let second = myao_jobs::handle(
        &bed.services,
        myao_jobs::RESPONSE,
        LambdaEvent::new(sqs_event(&job), lambda_context(budget)),
    )
    .await
    .expect("a batch answer");
    assert_eq!(
        serde_json::to_value(&second).expect("JSON"),
        json!({"batchItemFailures": []})
    );
    assert_eq!(bed.posts().await.len(), 1);
    let third = myao_services::jobs::run(&bed.services, &job).await;
    assert!(
        matches!(
            third,
            Ok(JobOutcome::Response(ResponseOutcome::AlreadyDone))
        ),
        "{third:?}"
    );
    assert_eq!(bed.posts().await.len(), 1);
}

#[tokio::test]
async fn a_mention_redelivered_after_its_max_age_is_dropped_not_answered_late() {
    let bed = Bed::with_settings(|s| s.llm_max_retries = 0).await;
    assert_eq!(bed.settings.mention_max_age_seconds, 1_200);
    let llm_down_once = || async {
        let unavailable = ResponseTemplate::new(503);
        mount_once(&bed.llm_server, "POST", "/v1/chat/completions", unavailable).await;
    };
    // The LLM is down when the mention arrives.
    llm_down_once().await;
    bed.seed(&[message(GENERAL, ALICE, ts(0), None, "<@UBOT> 起きてる?")])
        .await;
    let job = mention(0);
    let first = myao_services::jobs::run(&bed.services, &job).await;
    assert!(matches!(&first, Err(e) if e.is_retryable()), "{first:?}");

    // SQS delivers it again once its visibility timeout (18 min) is over:
    // within the default age, so it is answered.
    bed.clock.advance(Duration::seconds(1080));
    let redelivered = bed.run(&job).await;
    assert!(
        matches!(
            redelivered,
            JobOutcome::Response(ResponseOutcome::Posted { .. })
        ),
        "{redelivered:?}"
    );
    assert_eq!(bed.posts().await.len(), 1);

    // A mention that fails twice comes back after 36 minutes: too late.
    llm_down_once().await;
    bed.seed(&[message(GENERAL, BOB, ts(1080), None, "<@UBOT> いる?")])
        .await;
    let late_job = mention(1080);
    let failed = myao_services::jobs::run(&bed.services, &late_job).await;
    assert!(matches!(&failed, Err(e) if e.is_retryable()), "{failed:?}");
    let calls = bed.llm_calls().await.len();
    bed.clock.advance(Duration::seconds(1201));
    let late = bed.run(&late_job).await;
    assert_eq!(late, JobOutcome::Response(ResponseOutcome::TooOld));
    assert_eq!(bed.llm_calls().await.len(), calls, "no LLM call for it");
    assert_eq!(bed.posts().await.len(), 1);
}
