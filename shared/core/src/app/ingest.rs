//! The front door: a Slack Events API request in, stored and routed.
//!
//! Slack wants an answer within 3 seconds and retries otherwise, so this
//! does the least that is safe: verify, store with a conditional write, and
//! make one job (a judgment schedule or a queued reply).

mod http;
mod interaction;
mod outcome;
mod refusal;
mod service;

pub use http::{IngestRequest, IngestResponse, MAX_BODY_BYTES};
pub use outcome::{IgnoreReason, Outcome};
pub use service::Ingest;

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::adapters::system::{FixedRandom, FixedSettings, ManualClock, StaticSecrets};
    use crate::adapters::twins::{JobBoard, MemoryStore};
    use crate::ports::Clock;
    use crate::wire::Twins;
    use chrono::Duration;
    use myao_domain::metrics;
    use myao_domain::routing::QUESTION_WAITS_PER_HOUR;
    use myao_domain::{ChannelId, Job, JudgmentJob, ResponseJob, Settings, Ts};
    use myao_slack::event::parse_envelope;
    use myao_slack::signature::sign;
    use serde_json::{json, Value};

    const SECRET: &str = "test-signing-secret";

    struct Bed {
        clock: Arc<ManualClock>,
        store: Arc<MemoryStore>,
        board: Arc<JobBoard>,
        ingest: Ingest,
    }

    fn bed() -> Bed {
        let twins = Twins::new(Arc::new(ManualClock::new(
            Ts::parse("1767600000.0").unwrap().to_datetime(),
        )));
        let ingest = Ingest::new(
            twins.ports(FixedRandom(0.5), Settings::default()),
            Arc::new(StaticSecrets::new().with("signing", SECRET)),
            "signing",
        );
        Bed {
            clock: twins.clock,
            store: twins.store,
            board: twins.board,
            ingest,
        }
    }

    fn message_event(ts: &str, thread: Option<&str>, text: &str, kind: &str) -> Vec<u8> {
        let mut event =
            json!({"type": kind, "channel": "C1", "user": "U1", "text": text, "ts": ts});
        if let Some(t) = thread {
            event["thread_ts"] = json!(t);
        }
        serde_json::to_vec(&json!({
            "type": "event_callback", "event_id": format!("Ev{ts}{kind}"), "event": event,
            "authorizations": [{"user_id": "UBOT", "is_bot": true}]
        }))
        .unwrap()
    }

    async fn send(bed: &Bed, body: &[u8]) -> IngestResponse {
        let ts = bed.clock.now().timestamp().to_string();
        let sig = sign(SECRET.as_bytes(), &ts, body);
        bed.ingest
            .handle(IngestRequest {
                timestamp: Some(&ts),
                signature: Some(&sig),
                retry_num: None,
                body,
            })
            .await
    }

    #[tokio::test]
    async fn url_verification_answers_the_challenge() {
        let b = bed();
        let r = send(&b, br#"{"type":"url_verification","challenge":"xyz"}"#).await;
        assert_eq!((r.status, r.body.as_str()), (200, "xyz"));
    }

    #[tokio::test]
    async fn a_message_is_stored_and_its_conversation_judged_after_the_wait() {
        let b = bed();
        let r = send(
            &b,
            &message_event("1767600000.000100", None, "hello", "message"),
        )
        .await;
        assert_eq!(r.status, 200);
        assert_eq!(b.store.all_messages().len(), 1);
        let scheduled = b.board.scheduled();
        assert_eq!(scheduled.len(), 1);
        assert_eq!(scheduled[0].at, b.clock.now() + Duration::seconds(300));
        assert_eq!(scheduled[0].name.as_str(), "judgment-C1-top");
        assert_eq!(
            scheduled[0].job,
            Job::Judgment(JudgmentJob {
                channel: ChannelId::parse("C1").unwrap(),
                thread_ts: None,
                newest_ts: Ts::parse("1767600000.000100").unwrap()
            })
        );
        // one write for the message, one opening its conversation's window
        // (`max_wait_seconds`), one for its routing record; one scheduler call
        assert_eq!(b.store.counts().writes(), 3);
        assert_eq!(b.board.call_counts(), (1, 0));
    }

    #[tokio::test]
    async fn a_question_waits_on_its_own_within_the_channels_bound_and_costs_one_count() {
        let b = bed();
        let asked = |i: u64| format!("17676000{:02}.000100", i);
        let r = send(
            &b,
            &message_event(
                &asked(0),
                None,
                "is there a command to list the chains?",
                "message",
            ),
        )
        .await;
        assert_eq!(r.status, 200);
        let scheduled = b.board.scheduled();
        assert_eq!(scheduled.len(), 1);
        assert_eq!(scheduled[0].name.as_str(), "judgment-C1-1767600000.000100");
        // As a plain message's three writes, and one count of the bound.
        assert_eq!(b.store.counts().writes(), 4);
        // The bound's first QUESTION_WAITS_PER_HOUR questions of the hour
        // wait on their own; the next waits with the top level.
        for i in 1..=QUESTION_WAITS_PER_HOUR {
            let text = format!("question {i}: does anyone know the flag for this?");
            send(&b, &message_event(&asked(i), None, &text, "message")).await;
        }
        let names: Vec<String> = b
            .board
            .scheduled()
            .iter()
            .map(|s| s.name.as_str().to_owned())
            .collect();
        let own = names.iter().filter(|n| *n != "judgment-C1-top").count();
        assert_eq!(own as u64, QUESTION_WAITS_PER_HOUR, "{names:?}");
        assert!(names.iter().any(|n| n == "judgment-C1-top"), "{names:?}");
    }

    #[tokio::test]
    async fn a_retry_of_a_handled_delivery_does_nothing_more() {
        let b = bed();
        let body = message_event("1767600000.000100", None, "hello", "message");
        send(&b, &body).await;
        b.store.counts().reset();
        for _ in 0..3 {
            assert_eq!(send(&b, &body).await.status, 200);
        }
        assert_eq!(b.store.all_messages().len(), 1);
        assert_eq!(b.board.call_counts(), (1, 0), "no new scheduler call");
        assert_eq!(
            b.store.counts().writes(),
            3,
            "one conditional write per duplicate"
        );
    }

    #[tokio::test]
    async fn a_mention_delivered_twice_is_queued_once_without_judgment() {
        let b = bed();
        let ts = "1767600000.000200";
        send(
            &b,
            &message_event(ts, Some("1767600000.000100"), "<@UBOT> help?", "message"),
        )
        .await;
        send(
            &b,
            &message_event(
                ts,
                Some("1767600000.000100"),
                "<@UBOT> help?",
                "app_mention",
            ),
        )
        .await;
        assert_eq!(b.store.all_messages().len(), 1);
        assert!(b.board.scheduled().is_empty());
        let queued = b.board.queued();
        assert_eq!(queued.len(), 1);
        assert!(matches!(
            queued[0].1,
            Job::Response(ResponseJob { mention: true, .. })
        ));
    }

    /// A top-level message the bot wrote at `ts`.
    fn bot_message(ts: &str) -> Vec<u8> {
        let mut body: Value =
            serde_json::from_slice(&message_event(ts, None, "an answer", "message")).unwrap();
        body["event"]["user"] = json!("UBOT");
        serde_json::to_vec(&body).unwrap()
    }

    /// The store reads ingest made for `body`.
    async fn reads_for(b: &Bed, body: &[u8]) -> u64 {
        b.store.counts().reset();
        assert_eq!(send(b, body).await.status, 200);
        b.store.counts().reads()
    }

    #[tokio::test]
    async fn an_event_of_a_known_sender_is_accepted_and_counted_without_a_signature() {
        let twins = Twins::new(Arc::new(ManualClock::new(
            Ts::parse("1767600000.0").unwrap().to_datetime(),
        )));
        // No signing secret at all: `accept` never asks for one.
        let ingest = Ingest::new(
            twins.ports(FixedRandom(0.5), Settings::default()),
            Arc::new(StaticSecrets::new()),
            "none",
        );
        let now = twins.clock.now();
        let body = message_event("1767600000.000100", None, "hello", "message");
        assert_eq!(ingest.accept(&body, None, now).await.status, 200);
        assert_eq!(ingest.accept(&body, Some("1"), now).await.status, 200);
        assert_eq!(ingest.accept(b"{", None, now).await.status, 400);
        assert_eq!(twins.store.all_messages().len(), 1);
        let events = |kind| twins.metrics.total(metrics::EVENTS, Some(("Kind", kind)));
        assert_eq!(
            (events("message"), events("duplicate"), events("malformed")),
            (1.0, 1.0, 1.0)
        );
    }

    #[tokio::test]
    async fn a_thread_reply_reads_its_root_only_when_the_root_is_recent_enough_to_count() {
        let b = bed();
        // The bot answered at the top level two minutes ago (the engagement
        // window is five): the thread and its root are read, and the reply
        // is answered at once.
        let recent = "1767599880.000100";
        send(&b, &bot_message(recent)).await;
        let reply = message_event(
            "1767600000.000200",
            Some(recent),
            "thanks, and why?",
            "message",
        );
        assert_eq!(reads_for(&b, &reply).await, 2);
        assert_eq!(
            b.board.queued().len(),
            1,
            "engaged: answered like a mention"
        );

        // A root older than the window cannot make a reply engaged: only
        // the thread is read.
        let old = "1767599000.000100";
        send(&b, &bot_message(old)).await;
        let reply = message_event("1767600000.000300", Some(old), "and this?", "message");
        assert_eq!(reads_for(&b, &reply).await, 1);
        assert_eq!(b.board.queued().len(), 1, "judged later, not answered now");

        // A reply that @-mentions a person is addressed to them: nothing read.
        let reply = message_event(
            "1767600000.000400",
            Some(recent),
            "<@U2> over to you",
            "message",
        );
        assert_eq!(reads_for(&b, &reply).await, 0);
    }

    #[tokio::test]
    async fn a_message_inside_an_open_window_costs_one_write_for_the_window() {
        let b = bed();
        send(
            &b,
            &message_event("1767600000.000100", None, "first", "message"),
        )
        .await;
        b.store.counts().reset();
        send(
            &b,
            &message_event("1767600000.000200", None, "second", "message"),
        )
        .await;
        // The message, the refused window claim (which brings the window's
        // end back), the routing record; nothing read.
        assert_eq!(
            (b.store.counts().writes(), b.store.counts().reads()),
            (3, 0)
        );
    }

    /// A body in a channel other than C1, with `channel_type`.
    fn event_in(channel: &str, channel_type: &str, ts: &str, text: &str) -> Vec<u8> {
        serde_json::to_vec(&json!({
            "type": "event_callback", "event_id": format!("Ev{ts}"),
            "event": {"type": "message", "channel": channel, "channel_type": channel_type,
                      "user": "U1", "text": text, "ts": ts},
            "authorizations": [{"user_id": "UBOT", "is_bot": true}]
        }))
        .unwrap()
    }

    #[tokio::test]
    async fn a_name_call_and_a_direct_message_are_answered_like_mentions() {
        let cases = [
            ("C1", "channel", "myao, what do you think?", true),
            ("C1", "channel", "ねえMYAOどう思う?", true),
            ("D1", "im", "hello", true),
            // Its name in another word, or a message to someone else: not
            // addressed; judged after the wait as channel chatter.
            ("C1", "channel", "the myaomyao library", false),
            ("C1", "channel", "<@U2> ask myao later", false),
        ];
        for (i, (channel, kind, text, answered)) in cases.into_iter().enumerate() {
            let b = bed();
            let ts = format!("1767600000.{:06}", 100 + i);
            assert_eq!(
                send(&b, &event_in(channel, kind, &ts, text)).await.status,
                200
            );
            let queued = b.board.queued();
            if answered {
                assert!(b.board.scheduled().is_empty(), "{text}: no judgment wait");
                assert_eq!(queued.len(), 1, "{text}");
                assert_eq!(queued[0].0, b.clock.now(), "{text}: at once");
                assert!(
                    matches!(&queued[0].1, Job::Response(ResponseJob { mention: true, channel: c, .. }) if c.as_str() == channel),
                    "{text}: {queued:?}"
                );
            } else {
                assert!(queued.is_empty(), "{text}: {queued:?}");
                assert_eq!(b.board.scheduled().len(), 1, "{text}: judged later");
            }
        }
    }

    #[tokio::test]
    async fn a_scheduling_failure_answers_500_and_the_retry_finishes_the_routing() {
        let b = bed();
        let body = message_event("1767600000.000100", None, "hello", "message");
        b.board.fail_scheduler(true);
        assert_eq!(send(&b, &body).await.status, 500);
        assert_eq!(b.store.all_messages().len(), 1, "stored before the failure");
        assert!(b.board.scheduled().is_empty());
        b.board.fail_scheduler(false);
        assert_eq!(send(&b, &body).await.status, 200);
        assert_eq!(b.board.scheduled().len(), 1);
        assert_eq!(b.store.all_messages().len(), 1);
    }

    #[tokio::test]
    async fn a_storage_failure_answers_500_and_schedules_nothing() {
        let b = bed();
        b.store.fail_writes(true);
        let r = send(
            &b,
            &message_event("1767600000.000100", None, "hello", "message"),
        )
        .await;
        assert_eq!(r.status, 500);
        assert!(b.board.scheduled().is_empty());
    }

    #[tokio::test]
    async fn a_retry_after_a_newer_message_keeps_the_newer_job() {
        let b = bed();
        let old = message_event(
            "1767600000.000100",
            Some("1767600000.000001"),
            "first",
            "message",
        );
        let new = message_event(
            "1767600000.000300",
            Some("1767600000.000001"),
            "second",
            "message",
        );
        b.board.fail_scheduler(true);
        assert_eq!(send(&b, &old).await.status, 500);
        b.board.fail_scheduler(false);
        assert_eq!(send(&b, &new).await.status, 200);
        assert_eq!(
            send(&b, &old).await.status,
            200,
            "Slack's retry of the first"
        );
        let scheduled = b.board.scheduled();
        assert_eq!(scheduled.len(), 1);
        assert!(
            matches!(&scheduled[0].job, Job::Judgment(JudgmentJob { newest_ts, .. }) if newest_ts.to_string() == "1767600000.000300")
        );
    }

    #[tokio::test]
    async fn bad_requests_are_refused_and_write_nothing() {
        let b = bed();
        let body = message_event("1767600000.000100", None, "hello", "message");
        let ts = b.clock.now().timestamp().to_string();
        let good = sign(SECRET.as_bytes(), &ts, &body);
        let stale_ts = (b.clock.now().timestamp() - 301).to_string();
        let stale = sign(SECRET.as_bytes(), &stale_ts, &body);
        let cases: Vec<(Option<&str>, Option<&str>, Vec<u8>)> = vec![
            (
                Some(&ts),
                Some("v0=0000000000000000000000000000000000000000000000000000000000000000"),
                body.clone(),
            ),
            (Some(&stale_ts), Some(&stale), body.clone()),
            (None, Some(&good), body.clone()),
            (Some(&ts), None, body.clone()),
            (Some(&ts), Some(&good), [body.as_slice(), b" "].concat()),
        ];
        for (timestamp, signature, body) in cases {
            let r = b
                .ingest
                .handle(IngestRequest {
                    timestamp,
                    signature,
                    retry_num: None,
                    body: &body,
                })
                .await;
            assert_eq!((r.status, r.body.as_str()), (401, ""));
        }
        assert_eq!(b.store.counts().writes(), 0);
        assert_eq!(b.board.call_counts(), (0, 0));
    }

    #[tokio::test]
    async fn malformed_and_oversized_bodies() {
        let b = bed();
        assert_eq!(send(&b, b"{not json").await.status, 400);
        assert_eq!(send(&b, br#"{"type":"event_callback","event":{"type":"message","channel":"C1","ts":"x","user":"U1"}}"#).await.status, 400);
        let big = vec![b' '; MAX_BODY_BYTES + 1];
        assert_eq!(send(&b, &big).await.status, 413);
        assert_eq!(b.store.counts().writes(), 0);
    }

    #[tokio::test]
    async fn edits_and_deletions_change_the_stored_message() {
        let b = bed();
        send(
            &b,
            &message_event("1767600000.000100", None, "helo", "message"),
        )
        .await;
        let edit = serde_json::to_vec(&json!({"type": "event_callback", "event": {
            "type": "message", "subtype": "message_changed", "channel": "C1", "ts": "1767600001.0",
            "message": {"user": "U1", "text": "hello", "ts": "1767600000.000100"}}}))
        .unwrap();
        assert_eq!(send(&b, &edit).await.status, 200);
        assert_eq!(b.store.all_messages()[0].text, "hello");
        let delete = serde_json::to_vec(&json!({"type": "event_callback", "event": {
            "type": "message", "subtype": "message_deleted", "channel": "C1", "ts": "1767600002.0",
            "deleted_ts": "1767600000.000100"}}))
        .unwrap();
        assert_eq!(send(&b, &delete).await.status, 200);
        assert!(b.store.all_messages().is_empty());
        // a late redelivery of the deleted message does not bring it back
        send(
            &b,
            &message_event("1767600000.000100", None, "hello", "message"),
        )
        .await;
        assert!(b.store.all_messages().is_empty());
    }

    #[tokio::test]
    async fn bots_and_joins_trigger_nothing() {
        let b = bed();
        let own = serde_json::to_vec(&json!({"type": "event_callback", "event": {
            "type": "message", "channel": "C1", "user": "UBOT", "bot_id": "B1", "text": "meow", "ts": "1767600000.000100"},
            "authorizations": [{"user_id": "UBOT", "is_bot": true}]})).unwrap();
        let other = serde_json::to_vec(&json!({"type": "event_callback", "event": {
            "type": "message", "channel": "C1", "user": "UOTHER", "bot_id": "B2", "text": "beep", "ts": "1767600000.000200"}})).unwrap();
        let join = serde_json::to_vec(&json!({"type": "event_callback", "event": {
            "type": "message", "subtype": "channel_join", "channel": "C1", "user": "U2", "text": "joined", "ts": "1767600000.000300"}})).unwrap();
        for body in [own, other, join] {
            assert_eq!(send(&b, &body).await.status, 200);
        }
        assert_eq!(
            b.store.all_messages().len(),
            2,
            "bot messages are kept as context, joins are not"
        );
        assert!(b.store.all_messages().iter().all(|m| m.is_bot));
        assert_eq!(b.board.call_counts(), (0, 0));
    }

    #[tokio::test]
    async fn three_messages_in_a_thread_make_one_schedule_after_the_last() {
        let b = bed();
        for (i, ts) in [
            "1767600000.000100",
            "1767600030.000100",
            "1767600090.000100",
        ]
        .iter()
        .enumerate()
        {
            b.clock.set(Ts::parse(ts).unwrap().to_datetime());
            send(
                &b,
                &message_event(ts, Some("1767600000.000001"), &format!("m{i}"), "message"),
            )
            .await;
        }
        send(
            &b,
            &message_event(
                "1767600091.000100",
                Some("1767600000.000999"),
                "other thread",
                "message",
            ),
        )
        .await;
        let s = b.board.scheduled();
        assert_eq!(s.len(), 2);
        let first = s
            .iter()
            .find(|j| j.name.as_str() == "judgment-C1-1767600000.000001")
            .unwrap();
        assert_eq!(
            first.at,
            Ts::parse("1767600090.000100").unwrap().to_datetime() + Duration::seconds(300)
        );
    }

    #[tokio::test]
    async fn a_signing_secret_stored_with_a_trailing_newline_still_verifies() {
        let mut b = bed();
        b.ingest.secrets = Arc::new(StaticSecrets::new().with("signing", &format!("{SECRET}\n")));
        let r = send(
            &b,
            &message_event("1767600000.000100", None, "hello", "message"),
        )
        .await;
        assert_eq!(r.status, 200);
        assert_eq!(b.store.all_messages().len(), 1);
    }

    #[tokio::test]
    async fn a_blank_signing_secret_verifies_nothing() {
        let mut b = bed();
        b.ingest.secrets = Arc::new(StaticSecrets::new().with("signing", " \n"));
        let body = message_event("1767600000.000100", None, "hello", "message");
        let ts = b.clock.now().timestamp().to_string();
        let sig = sign(b"", &ts, &body);
        let r = b
            .ingest
            .handle(IngestRequest {
                timestamp: Some(&ts),
                signature: Some(&sig),
                retry_num: None,
                body: &body,
            })
            .await;
        assert_eq!(r.status, 500);
        assert_eq!(b.store.counts().writes(), 0);
        assert_eq!(b.board.call_counts(), (0, 0));
    }

    /// A bed whose settings name the app and the workspace.
    fn bed_for(name: &str, value: &str) -> Bed {
        let mut b = bed();
        let (settings, issues) = Settings::from_pairs([(name, value)]);
        assert!(issues.is_empty(), "{issues:?}");
        b.ingest.ports.settings = Arc::new(FixedSettings::new(settings));
        b
    }

    /// `body` with `key` set at the envelope's top level.
    fn with_field(body: &[u8], key: &str, value: &str) -> Vec<u8> {
        let mut v: serde_json::Value = serde_json::from_slice(body).unwrap();
        v[key] = json!(value);
        serde_json::to_vec(&v).unwrap()
    }

    async fn only_own_events_are_stored(setting: &str, field: &str, own: &str, other: &str) {
        let b = bed_for(setting, own);
        let first = message_event("1767600000.000100", None, "hello", "message");
        let r = send(&b, &with_field(&first, field, other)).await;
        assert_eq!((r.status, r.body.as_str()), (200, ""));
        assert!(b.store.all_messages().is_empty());
        assert_eq!(b.store.counts().writes(), 0);
        assert_eq!(b.board.call_counts(), (0, 0));
        let second = message_event("1767600000.000200", None, "hello", "message");
        assert_eq!(send(&b, &with_field(&second, field, own)).await.status, 200);
        assert_eq!(b.store.all_messages().len(), 1);
        assert_eq!(b.board.scheduled().len(), 1);
        // an envelope that names none is accepted
        let third = message_event("1767600000.000300", None, "hello", "message");
        assert_eq!(send(&b, &third).await.status, 200);
        assert_eq!(b.store.all_messages().len(), 2);
        // Slack's URL check names no app: it is answered
        let r = send(&b, br#"{"type":"url_verification","challenge":"xyz"}"#).await;
        assert_eq!((r.status, r.body.as_str()), (200, "xyz"));
    }

    #[tokio::test]
    async fn events_from_another_team_are_acknowledged_and_dropped() {
        only_own_events_are_stored("slack_team_id", "team_id", "T1", "T2").await;
        let b = bed_for("slack_team_id", "T1");
        let body = with_field(
            &message_event("1767600000.000100", None, "hello", "message"),
            "team_id",
            "T2",
        );
        let envelope = parse_envelope(&body).unwrap();
        let (outcome, _) = b.ingest.process(envelope, b.clock.now()).await.unwrap();
        assert_eq!(outcome, Outcome::Ignored(IgnoreReason::AnotherTeam));
        assert_eq!(
            format!("{outcome:?}"),
            r#"Ignored("event for another team")"#,
            "the event handled line shows it as it always has"
        );
    }

    #[tokio::test]
    async fn events_for_another_app_are_acknowledged_and_dropped() {
        only_own_events_are_stored("slack_app_id", "api_app_id", "A1", "A2").await;
        let b = bed_for("slack_app_id", "A1");
        let body = with_field(
            &message_event("1767600000.000100", None, "hello", "message"),
            "api_app_id",
            "A2",
        );
        let envelope = parse_envelope(&body).unwrap();
        let (outcome, _) = b.ingest.process(envelope, b.clock.now()).await.unwrap();
        assert_eq!(outcome, Outcome::Ignored(IgnoreReason::AnotherApp));
        assert_eq!(
            IgnoreReason::AnotherApp.to_string(),
            "event for another app"
        );
    }
}
