use std::sync::Arc;

use chrono::Duration;
use serde_json::{json, Value};

use super::super::{IngestRequest, MAX_BODY_BYTES};
use super::*;
use crate::adapters::system::{FixedRandom, ManualClock, StaticSecrets};
use crate::ports::{Clock, LabelRecords, Messages};
use crate::wire::Twins;
use myao_domain::hints::Hint;
use myao_domain::metrics;
use myao_domain::Settings;
use myao_domain::{ChannelId, Message, Ts, UserId};
use myao_slack::interaction::{FEEDBACK_ACTION, NEGATIVE, POSITIVE};
use myao_slack::signature::sign;

const SECRET: &str = "test-signing-secret";
const POST: &str = "1767599000.000100";

fn bed(settings: &[(&str, &str)]) -> (Twins, Ingest) {
    let twins = Twins::new(Arc::new(ManualClock::new(
        Ts::parse("1767600000.0").unwrap().to_datetime(),
    )));
    // The buttons on, unless the case says otherwise.
    let pairs = [("feedback_buttons", "true")].iter().chain(settings);
    let (settings, issues) = Settings::from_pairs(pairs.copied());
    assert!(issues.is_empty(), "{issues:?}");
    let ingest = Ingest::new(
        twins.ports(FixedRandom(0.5), settings),
        Arc::new(StaticSecrets::new().with("signing", SECRET)),
        "signing",
    );
    (twins, ingest)
}

/// A click on the feedback buttons under the bot's post `POST` in C1, by
/// `user`, as Slack's interactivity sends it.
fn click(user: &str, value: &str) -> Value {
    json!({
        "type": "block_actions",
        "api_app_id": "A1",
        "team": {"id": "T1"},
        "user": {"id": user},
        "container": {"type": "message", "message_ts": POST, "channel_id": "C1"},
        "channel": {"id": "C1"},
        "message": {"user": "UBOT", "bot_id": "B1", "ts": POST, "text": "a reply"},
        "actions": [{"type": "feedback_buttons", "action_id": FEEDBACK_ACTION, "value": value}],
    })
}

/// `payload` as a URL-encoded form.
fn form(payload: &Value) -> Vec<u8> {
    let mut body = b"payload=".to_vec();
    for b in payload.to_string().bytes() {
        if b.is_ascii_alphanumeric() {
            body.push(b);
        } else {
            body.extend(format!("%{b:02X}").bytes());
        }
    }
    body
}

async fn send(twins: &Twins, ingest: &Ingest, body: &[u8]) -> IngestResponse {
    let ts = twins.clock.now().timestamp().to_string();
    let signature = sign(SECRET.as_bytes(), &ts, body);
    ingest
        .handle(IngestRequest {
            timestamp: Some(&ts),
            signature: Some(&signature),
            retry_num: None,
            body,
        })
        .await
}

async fn labels(twins: &Twins) -> Vec<Label> {
    twins
        .store
        .labels(&ChannelId::parse("C1").unwrap())
        .await
        .unwrap()
}

fn events(twins: &Twins, kind: &str) -> f64 {
    twins.metrics.total(metrics::EVENTS, Some(("Kind", kind)))
}

#[tokio::test]
async fn a_click_on_the_bots_post_is_stored_once_as_a_label() {
    let (twins, ingest) = bed(&[]);
    let up = form(&click("U1", POSITIVE));
    let r = send(&twins, &ingest, &up).await;
    assert_eq!((r.status, r.body.as_str()), (200, ""));
    let stored = labels(&twins).await;
    assert_eq!(stored.len(), 1);
    let label = &stored[0];
    assert_eq!(
        (label.user.as_str(), label.post.to_string().as_str()),
        ("U1", POST)
    );
    assert_eq!(
        (label.hint, &label.source),
        (Hint::Positive, &Source::Button)
    );
    assert_eq!(label.at, twins.clock.now());
    // The same click again is still one label; nothing else was written.
    assert_eq!(send(&twins, &ingest, &up).await.status, 200);
    assert_eq!(labels(&twins).await.len(), 1);
    assert!(twins.store.all_messages().is_empty());
    assert_eq!(twins.board.call_counts(), (0, 0));
    assert_eq!(events(&twins, "hint"), 2.0);
}

#[tokio::test]
async fn the_other_button_later_replaces_the_label() {
    let (twins, ingest) = bed(&[]);
    send(&twins, &ingest, &form(&click("U1", POSITIVE))).await;
    twins.clock.advance(Duration::minutes(5));
    let r = send(&twins, &ingest, &form(&click("U1", NEGATIVE))).await;
    assert_eq!(r.status, 200);
    let stored = labels(&twins).await;
    assert_eq!(stored.len(), 1, "{stored:?}");
    assert_eq!(stored[0].hint, Hint::Negative);
    assert_eq!(stored[0].at, twins.clock.now(), "from the latest click");
    // Another person's click is a label of their own.
    send(&twins, &ingest, &form(&click("U2", NEGATIVE))).await;
    assert_eq!(labels(&twins).await.len(), 2);
}

#[tokio::test]
async fn a_click_on_someone_elses_post_is_ignored() {
    // Slack says a person wrote it.
    let (twins, ingest) = bed(&[]);
    let mut theirs = click("U1", NEGATIVE);
    theirs["message"] = json!({"user": "U2", "ts": POST, "text": "mine"});
    assert_eq!(send(&twins, &ingest, &form(&theirs)).await.status, 200);
    assert!(labels(&twins).await.is_empty());
    assert_eq!(events(&twins, "ignored"), 1.0);

    // With `bot_user_id` set, an app's post is the bot's only when it wrote it.
    let (twins, ingest) = bed(&[("bot_user_id", "UBOT")]);
    let mut other_app = click("U1", NEGATIVE);
    other_app["message"]["user"] = json!("UOTHERBOT");
    send(&twins, &ingest, &form(&other_app)).await;
    assert!(labels(&twins).await.is_empty());
    send(&twins, &ingest, &form(&click("U1", NEGATIVE))).await;
    assert_eq!(labels(&twins).await.len(), 1);
    // The bot clicking its own buttons is no hint.
    send(&twins, &ingest, &form(&click("UBOT", POSITIVE))).await;
    assert_eq!(labels(&twins).await.len(), 1);
}

#[tokio::test]
async fn a_click_without_the_message_is_told_by_the_stored_post() {
    let (twins, ingest) = bed(&[]);
    let channel = ChannelId::parse("C1").unwrap();
    let expires = twins.clock.now() + Duration::days(1);
    let person = Message::new(
        channel.clone(),
        UserId::parse("U2").unwrap(),
        "hi".to_owned(),
        Ts::parse(POST).unwrap(),
        None,
        false,
    );
    twins
        .store
        .insert_message(&person, true, expires)
        .await
        .unwrap();
    let mut bare = click("U1", POSITIVE);
    bare.as_object_mut().unwrap().remove("message");
    send(&twins, &ingest, &form(&bare)).await;
    assert!(labels(&twins).await.is_empty(), "a person's message");

    let (twins, ingest) = bed(&[]);
    let mut bots = person.clone();
    bots.user = UserId::parse("UBOT").unwrap();
    bots.is_bot = true;
    twins
        .store
        .insert_message(&bots, true, expires)
        .await
        .unwrap();
    send(&twins, &ingest, &form(&bare)).await;
    assert_eq!(labels(&twins).await.len(), 1, "the bot's");
    // Neither said nor stored: no label.
    let (twins, ingest) = bed(&[]);
    send(&twins, &ingest, &form(&bare)).await;
    assert!(labels(&twins).await.is_empty());
}

#[tokio::test]
async fn a_forged_or_stale_click_is_refused_and_writes_nothing() {
    let (twins, ingest) = bed(&[]);
    let body = form(&click("U1", NEGATIVE));
    let now = twins.clock.now().timestamp().to_string();
    let stale = (twins.clock.now().timestamp() - 301).to_string();
    let stale_signature = sign(SECRET.as_bytes(), &stale, &body);
    let forged = sign(b"another-secret", &now, &body);
    for (timestamp, signature) in [
        (Some(now.as_str()), Some(forged.as_str())),
        (Some(stale.as_str()), Some(stale_signature.as_str())),
        (Some(now.as_str()), None),
    ] {
        let r = ingest
            .handle(IngestRequest {
                timestamp,
                signature,
                retry_num: None,
                body: &body,
            })
            .await;
        assert_eq!((r.status, r.body.as_str()), (401, ""));
    }
    assert_eq!(twins.store.counts().writes(), 0);
    assert!(labels(&twins).await.is_empty());
    assert_eq!(events(&twins, "refused"), 3.0);
}

#[tokio::test]
async fn other_interactions_are_acknowledged_and_malformed_ones_refused() {
    let (twins, ingest) = bed(&[]);
    let shortcut = form(&json!({"type": "shortcut", "callback_id": "x"}));
    let r = send(&twins, &ingest, &shortcut).await;
    assert_eq!((r.status, r.body.as_str()), (200, ""));
    let mut approve = click("U1", POSITIVE);
    approve["actions"][0]["action_id"] = json!("approve");
    assert_eq!(send(&twins, &ingest, &form(&approve)).await.status, 200);
    assert_eq!(events(&twins, "ignored"), 2.0);
    for bad in [
        b"payload=%7Bnot+json".to_vec(),
        b"payload=%zz".to_vec(),
        form(&json!({"type": "block_actions", "actions": click("U1", POSITIVE)["actions"]})),
    ] {
        let r = send(&twins, &ingest, &bad).await;
        assert_eq!((r.status, r.body.as_str()), (400, "malformed interaction"));
    }
    assert_eq!(events(&twins, "malformed"), 3.0);
    let big = [b"payload=".as_slice(), &vec![b'a'; MAX_BODY_BYTES]].concat();
    assert_eq!(send(&twins, &ingest, &big).await.status, 413);
    assert_eq!(twins.store.counts().writes(), 0);
}

#[tokio::test]
async fn a_click_for_another_app_or_workspace_is_dropped() {
    for (setting, value) in [("slack_app_id", "A2"), ("slack_team_id", "T2")] {
        let (twins, ingest) = bed(&[(setting, value)]);
        let r = send(&twins, &ingest, &form(&click("U1", NEGATIVE))).await;
        assert_eq!(r.status, 200);
        assert!(labels(&twins).await.is_empty(), "{setting}");
    }
    let (twins, ingest) = bed(&[("slack_app_id", "A1"), ("slack_team_id", "T1")]);
    send(&twins, &ingest, &form(&click("U1", NEGATIVE))).await;
    assert_eq!(labels(&twins).await.len(), 1);
}

#[tokio::test]
async fn socket_modes_interaction_is_taken_as_json() {
    let (twins, ingest) = bed(&[]);
    let now = twins.clock.now();
    let payload = click("U1", NEGATIVE).to_string();
    let r = ingest.accept_interaction(payload.as_bytes(), now).await;
    assert_eq!((r.status, r.body.as_str()), (200, ""));
    assert_eq!(labels(&twins).await.len(), 1);
    assert_eq!(ingest.accept_interaction(b"{", now).await.status, 400);
    // A failed write answers 500.
    twins.store.fail_writes(true);
    let other = click("U2", NEGATIVE).to_string();
    assert_eq!(
        ingest
            .accept_interaction(other.as_bytes(), now)
            .await
            .status,
        500
    );
}

/// What ingest made of `payload` (a click's JSON).
async fn outcome_of(twins: &Twins, ingest: &Ingest, payload: &Value) -> Outcome {
    let interaction = parse_interaction(payload.to_string().as_bytes()).unwrap();
    ingest
        .interaction(interaction, twins.clock.now())
        .await
        .unwrap()
}

/// Issue 56: clicks counted while `feedback_buttons` was off.
#[tokio::test]
async fn a_click_while_the_buttons_are_off_is_no_label() {
    let (twins, ingest) = bed(&[("feedback_buttons", "false")]);
    let outcome = outcome_of(&twins, &ingest, &click("U1", NEGATIVE)).await;
    assert_eq!(outcome, Outcome::Ignored(IgnoreReason::FeedbackOff));
    assert_eq!(
        send(&twins, &ingest, &form(&click("U1", NEGATIVE)))
            .await
            .status,
        200
    );
    assert!(labels(&twins).await.is_empty());
    assert_eq!(twins.store.counts().writes(), 0);
}

/// Issue 56: on a stack that installs other workspaces, a click of a team
/// with no installation was kept as the stack's own.
#[tokio::test]
async fn a_click_counts_from_an_installed_team_or_the_home_team_only() {
    use crate::ports::Installations;
    use myao_domain::install::{Installation, Token};
    use myao_domain::TeamId;

    let offering = [("slack_client_id", "123.456")];
    let (twins, ingest) = bed(&offering);
    // T1 has no installation, and the stack does not name its own team.
    let outcome = outcome_of(&twins, &ingest, &click("U1", NEGATIVE)).await;
    assert_eq!(outcome, Outcome::Ignored(IgnoreReason::NotInstalled));
    assert!(labels(&twins).await.is_empty());

    // Installed, T1's click is a label in its own part, on its bot's post.
    let team = TeamId::parse("T1").unwrap();
    let installation = Installation {
        team: team.clone(),
        enterprise: None,
        team_name: "one".into(),
        bot_user_id: UserId::parse("UBOT").unwrap(),
        scopes: vec![],
        bot_token: Token::new("xoxb-1"),
        rotation: None,
        installed_at: twins.clock.now(),
    };
    twins.store.put_installation(&installation).await.unwrap();
    let outcome = outcome_of(&twins, &ingest, &click("U1", NEGATIVE)).await;
    assert_eq!(
        outcome,
        Outcome::Hinted {
            added: true,
            new: true
        }
    );
    let channel = ChannelId::parse("C1").unwrap();
    let its_own = twins.store.for_team(&team).labels(&channel).await.unwrap();
    assert_eq!(its_own.len(), 1);
    assert!(labels(&twins).await.is_empty(), "not the stack's");

    // The home team, named by `slack_team_id`, counts without one.
    let (twins, ingest) = bed(&[offering[0], ("slack_team_id", "T1")]);
    let outcome = outcome_of(&twins, &ingest, &click("U1", NEGATIVE)).await;
    assert_eq!(
        outcome,
        Outcome::Hinted {
            added: true,
            new: true
        }
    );
    assert_eq!(labels(&twins).await.len(), 1);
}
