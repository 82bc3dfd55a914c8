//! What the functions count (CloudWatch EMF on AWS, the `RecordedMetrics`
//! twin here), over the real ingest, judgment and response code and the
//! real LLM and Slack adapters against their stubs: the metrics the alarms
//! watch (`tests/template/mod.rs` checks the alarms watch these names) come
//! from the failures they are meant for.

use std::sync::Arc;

use myao_core::adapters::system::StaticSecrets;
use myao_core::app::ingest::{Ingest, IngestRequest};
use myao_domain::metrics::{
    ANSWERS, EVENTS, JUDGMENTS, LLM_CALLS, LLM_FAILURES, LLM_SUCCESSES, LLM_TOKENS_IN,
    LLM_TOKENS_OUT, SLACK_AUTH_ERRORS, SLACK_ERRORS, SLACK_EVENTS_RATE_LIMITED,
};
use myao_domain::{Job, JudgmentJob, Reply, ResponseJob};
use myao_services::jobs::JobOutcome;
use myao_services::response::ResponseOutcome;
use myao_testkit::ids::channel;
use myao_tests::signed_request_headers;
use myao_tests::stubs::{message, ts, verdict_of, Bed, ALICE, BOB, GENERAL};
use serde_json::json;
use wiremock::matchers::{method, path};
use wiremock::{Mock, ResponseTemplate};

fn mention_reply() -> Job {
    Job::Response(ResponseJob {
        channel: channel(GENERAL),
        thread_ts: None,
        newest_ts: ts(0),
        mention: true,
        reply: Reply::Full,
        seen_ts: None,
        grounds: None,
    })
}

/// A bed whose Slack refuses `chat.postMessage` with `code`, after a
/// mention's reply job ran there.
async fn refused_post(code: &str) -> (Bed, JobOutcome) {
    let bed = Bed::new().await;
    Mock::given(method("POST"))
        .and(path("/api/chat.postMessage"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"ok": false, "error": code})))
        .with_priority(1)
        .mount(&bed.slack_server)
        .await;
    bed.seed(&[message(
        GENERAL,
        ALICE,
        ts(0),
        None,
        "<@UBOT> how do I deploy?",
    )])
    .await;
    let outcome = bed.run(&mention_reply()).await;
    (bed, outcome)
}

#[tokio::test]
async fn a_revoked_token_makes_the_metric_its_alarm_watches() {
    let (bed, outcome) = refused_post("token_revoked").await;

    assert!(
        matches!(
            outcome,
            JobOutcome::Response(ResponseOutcome::PostFailed(_))
        ),
        "{outcome:?}"
    );
    assert_eq!(bed.metrics.total(SLACK_AUTH_ERRORS, None), 1.0);
    assert_eq!(
        bed.metrics
            .total(SLACK_ERRORS, Some(("Method", "chat.postMessage"))),
        1.0
    );
    assert_eq!(bed.metrics.total(ANSWERS, None), 0.0, "nothing posted");
    // Issue 45: a mention given up is counted for its alarm.
    assert_eq!(
        bed.metrics
            .total(myao_domain::metrics::MENTIONS_GIVEN_UP, None),
        1.0
    );
}

#[tokio::test]
async fn another_slack_refusal_is_an_error_but_not_a_token_problem() {
    let (bed, _) = refused_post("channel_not_found").await;
    assert_eq!(bed.metrics.total(SLACK_ERRORS, None), 1.0);
    assert_eq!(bed.metrics.total(SLACK_AUTH_ERRORS, None), 0.0);
}

/// Issue 45: a post Slack refuses for its channel (the bot not invited, the
/// channel gone or archived) counts the metric its alarm watches; another
/// refusal does not.
#[tokio::test]
async fn a_refused_channel_makes_the_metric_its_alarm_watches() {
    use myao_domain::metrics::SLACK_CHANNEL_REFUSALS;
    for code in ["not_in_channel", "channel_not_found", "is_archived"] {
        let (bed, _) = refused_post(code).await;
        assert_eq!(
            bed.metrics.total(SLACK_CHANNEL_REFUSALS, None),
            1.0,
            "{code}"
        );
    }
    let (bed, _) = refused_post("invalid_blocks").await;
    assert_eq!(bed.metrics.total(SLACK_CHANNEL_REFUSALS, None), 0.0);
}

#[tokio::test]
async fn an_expired_llm_key_counts_failures_and_no_success() {
    let bed = Bed::new().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(401).set_body_json(
            json!({"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}}),
        ))
        .with_priority(1)
        .mount(&bed.llm_server)
        .await;
    bed.seed(&[
        message(GENERAL, BOB, ts(-400), None, "morning"),
        message(GENERAL, ALICE, ts(-300), None, "anyone around?"),
    ])
    .await;
    let job = Job::Judgment(JudgmentJob {
        channel: channel(GENERAL),
        thread_ts: None,
        newest_ts: ts(-300),
    });

    bed.run(&job).await;

    assert_eq!(bed.metrics.total(LLM_FAILURES, None), 1.0);
    assert_eq!(bed.metrics.total(LLM_SUCCESSES, None), 0.0);
    assert_eq!(
        bed.metrics.total(JUDGMENTS, Some(("Outcome", "unusable"))),
        1.0
    );
}

#[tokio::test]
async fn judgments_answers_and_llm_calls_are_counted_by_outcome_form_and_role() {
    let bed = Bed::new().await;
    bed.script
        .set_judgment(verdict_of("reaction", Some("tada")));
    bed.seed(&[
        message(GENERAL, BOB, ts(-400), None, "morning"),
        message(GENERAL, ALICE, ts(-300), None, "we shipped it"),
    ])
    .await;
    bed.run(&Job::Judgment(JudgmentJob {
        channel: channel(GENERAL),
        thread_ts: None,
        newest_ts: ts(-300),
    }))
    .await;
    bed.run_due().await;

    let m = &bed.metrics;
    assert_eq!(m.total(JUDGMENTS, Some(("Outcome", "llm_yes"))), 1.0);
    assert_eq!(m.total(ANSWERS, Some(("Form", "reaction"))), 1.0);
    assert_eq!(m.total(ANSWERS, Some(("Form", "full"))), 0.0);
    assert_eq!(m.total(LLM_CALLS, Some(("Role", "judgment"))), 1.0);
    assert_eq!(m.total(LLM_CALLS, Some(("Role", "response"))), 0.0);
    assert_eq!(m.total(LLM_SUCCESSES, None), 1.0);
    // The stub's usage: 100 prompt tokens, 20 completion tokens.
    assert_eq!(m.total(LLM_TOKENS_IN, Some(("Role", "judgment"))), 100.0);
    assert_eq!(m.total(LLM_TOKENS_OUT, Some(("Role", "judgment"))), 20.0);
}

#[tokio::test]
async fn ingest_counts_each_request_by_kind_refused_ones_too() {
    let bed = Bed::new().await;
    let ingest = Ingest::new(
        bed.services.ports.clone(),
        Arc::new(StaticSecrets::new().with("signing", "s3cret")),
        "signing",
    );
    let body = serde_json::to_vec(&json!({
        "type": "event_callback", "event_id": "Ev1", "team_id": "T1",
        "authorizations": [{"user_id": "UBOT", "is_bot": true}],
        "event": {"type": "message", "channel": GENERAL, "channel_type": "channel",
                  "user": ALICE, "text": "hello", "ts": ts(0).to_string()}
    }))
    .expect("json");
    let (timestamp, signature) = signed_request_headers("s3cret", &body, bed.now());
    for (signature, status) in [
        (signature.as_str(), 200),
        (signature.as_str(), 200),
        ("v0=forged", 401),
    ] {
        let request = IngestRequest {
            timestamp: Some(&timestamp),
            signature: Some(signature),
            retry_num: None,
            body: &body,
        };
        assert_eq!(ingest.handle(request).await.status, status);
    }

    let m = &bed.metrics;
    assert_eq!(m.total(EVENTS, Some(("Kind", "message"))), 1.0);
    assert_eq!(m.total(EVENTS, Some(("Kind", "duplicate"))), 1.0);
    assert_eq!(m.total(EVENTS, Some(("Kind", "refused"))), 1.0);
    assert_eq!(m.total(SLACK_EVENTS_RATE_LIMITED, None), 0.0);

    // Slack holding the app's events back: acknowledged, and counted for
    // its alarm.
    let body = serde_json::to_vec(&json!({
        "token": "x", "type": "app_rate_limited", "team_id": "T1",
        "minute_rate_limited": 1518467820, "api_app_id": "A1"
    }))
    .expect("json");
    let (timestamp, signature) = signed_request_headers("s3cret", &body, bed.now());
    let request = IngestRequest {
        timestamp: Some(&timestamp),
        signature: Some(&signature),
        retry_num: None,
        body: &body,
    };
    assert_eq!(ingest.handle(request).await.status, 200);
    assert_eq!(m.total(SLACK_EVENTS_RATE_LIMITED, None), 1.0);
    assert_eq!(m.total(EVENTS, Some(("Kind", "app_rate_limited"))), 1.0);
}
