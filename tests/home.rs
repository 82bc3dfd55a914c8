//! Home is known, strangers are refused: a stack learns its own
//! workspace from its own token (`auth.test`, once) and answers it as its
//! own; every other workspace's event needs an installation. A workspace
//! that never installed, or one after its uninstall, is acknowledged and
//! dropped: stored nowhere, answered never, counted
//! (`EventsIngested`, `Kind=not_installed`). Over the real DynamoDB adapter
//! on the emulator and Slack as a local stub.

use chrono::Duration;
use myao_aws::dynamodb::DynamoStore;
use myao_core::app::ingest::{IgnoreReason, Outcome};
use myao_core::ports::Installations;
use myao_domain::install::Home;
use myao_domain::metrics::EVENTS;
use myao_domain::{JobKind, UserId};
use myao_services::jobs::run_carried;
use myao_tests::stubs::{ts, Bed, ALICE, BOT, GENERAL};

use crate::tenants::{installed, team};
use serde_json::{json, Value};

/// `team`'s envelope delivering `event`, as Slack sends it.
fn envelope(team: &str, event_id: &str, event: Value) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "type": "event_callback", "event_id": event_id, "team_id": team, "event": event,
        "authorizations": [{"user_id": BOT, "team_id": team, "is_bot": true}]
    }))
    .expect("json")
}

/// A mention of the bot in #general at `offset`, saying `words`.
fn mention(offset: i64, words: &str) -> Value {
    json!({
        "type": "app_mention", "channel": GENERAL, "user": ALICE,
        "text": format!("<@{BOT}> {words}"), "ts": ts(offset).to_string(),
    })
}

/// What ingest makes of `team`'s `event`, through its whole front door
/// (counted as the function counts it).
async fn ingested(bed: &Bed<DynamoStore>, team: &str, id: &str, event: Value) -> Outcome {
    let body = envelope(team, id, event);
    let parsed = myao_slack::event::parse_envelope(&body).expect("an event");
    let ingest = bed.ingest();
    let answered = ingest.accept(&body, None, bed.now()).await;
    assert_eq!(answered.status, 200, "{answered:?}");
    // The outcome itself, from a second delivery's view: nothing was kept
    // by the first that would make it a duplicate.
    ingest.process(parsed, bed.now()).await.expect("ingest").0
}

/// Whether any item of the table holds `words`, read around the adapter.
async fn kept_anywhere(store: &DynamoStore, words: &str) -> bool {
    let items = crate::install::every_item(store).await;
    items.iter().any(|item| format!("{item:?}").contains(words))
}

fn not_installed(bed: &Bed<DynamoStore>) -> f64 {
    bed.metrics.total(EVENTS, Some(("Kind", "not_installed")))
}

#[tokio::test]
async fn a_strangers_and_an_uninstalled_teams_events_are_stored_nowhere_and_answered_never() {
    // A stack offered to other workspaces, its own one T1 (the bed's token
    // is T1's bot), one workspace installed.
    let bed: Bed<DynamoStore> =
        Bed::on_emulator(|s| s.slack_client_id = Some("123.456".into())).await;
    let home = myao_services::home::learn(&*bed.store, &*bed.services.slack)
        .await
        .expect("learned");
    assert_eq!(home.team, team("T1"));
    bed.store
        .put_installation(&installed("T0ACME"))
        .await
        .expect("installed");

    // A workspace that never installed (an org-wide install refused by the
    // page, a code exchange that failed: Slack still delivers its events).
    let outcome = ingested(&bed, "T0STRANGER", "Ev1", mention(-60, "MARK-STRANGER")).await;
    assert_eq!(outcome, Outcome::Ignored(IgnoreReason::NotInstalled));
    assert!(!kept_anywhere(&bed.store, "MARK-STRANGER").await);
    assert!(bed.board.scheduled().is_empty() && bed.board.queued().is_empty());
    assert_eq!(
        not_installed(&bed),
        1.0,
        "counted once, as the function counts"
    );

    // The installed team uninstalls; what it says after is dropped too,
    // before its purge and after it.
    let gone = envelope("T0ACME", "Ev2", json!({"type": "app_uninstalled"}));
    let answered = bed.ingest().accept(&gone, None, bed.now()).await;
    assert_eq!(answered.status, 200, "{answered:?}");
    assert!(bed
        .store
        .installation(&team("T0ACME"))
        .await
        .expect("read")
        .is_none());
    let later = ingested(&bed, "T0ACME", "Ev3", mention(-50, "MARK-GONE")).await;
    assert_eq!(later, Outcome::Ignored(IgnoreReason::NotInstalled));
    bed.clock.advance(Duration::seconds(120));
    for carried in bed.board.take_due(bed.now()) {
        run_carried(&bed.services, &JobKind::ALL, &carried)
            .await
            .expect("purged");
    }
    let after = ingested(&bed, "T0ACME", "Ev4", mention(60, "MARK-AFTER")).await;
    assert_eq!(after, Outcome::Ignored(IgnoreReason::NotInstalled));
    for words in ["MARK-GONE", "MARK-AFTER"] {
        assert!(!kept_anywhere(&bed.store, words).await, "{words}");
    }

    // The stack's own workspace is answered, and its prompt holds no
    // word of theirs.
    bed.script.set_reply("the build is green again");
    let own = ingested(&bed, "T1", "Ev5", mention(90, "why is the build red?")).await;
    assert!(
        matches!(own, Outcome::Stored { .. } | Outcome::Duplicate),
        "{own:?}"
    );
    bed.clock.advance(Duration::seconds(5));
    bed.run_due().await;
    assert_eq!(bed.posts().await.len(), 1, "answered once");
    let prompts = format!("{:?}", bed.llm_calls().await);
    for words in ["MARK-STRANGER", "MARK-GONE", "MARK-AFTER"] {
        assert!(!prompts.contains(words), "{words} in a prompt");
    }
    assert_eq!(not_installed(&bed), 3.0, "each stranger's delivery counted");
}

#[tokio::test]
async fn an_offered_stack_that_does_not_know_its_own_workspace_yet_takes_no_strangers() {
    let bed: Bed<DynamoStore> =
        Bed::on_emulator(|s| s.slack_client_id = Some("123.456".into())).await;
    let outcome = ingested(&bed, "T0STRANGER", "Ev1", mention(-60, "MARK-STRANGER")).await;
    assert_eq!(outcome, Outcome::Ignored(IgnoreReason::NotInstalled));
    assert!(!kept_anywhere(&bed.store, "MARK-STRANGER").await);

    // The stack's recurring run learns it (once), and then its own
    // workspace's events are the stack's.
    let sweep = myao_domain::TeamJob {
        team: None,
        job: myao_domain::Job::MemorySweep,
    };
    run_carried(&bed.services, &[JobKind::MemorySweep], &sweep)
        .await
        .expect("swept");
    run_carried(&bed.services, &[JobKind::MemorySweep], &sweep)
        .await
        .expect("swept again");
    assert_eq!(
        bed.store.home().await.expect("read"),
        Some(Home {
            team: team("T1"),
            enterprise: None,
            bot_user_id: UserId::parse(BOT).expect("bot"),
        })
    );
    assert_eq!(
        bed.slack_requests("auth.test").await.len(),
        1,
        "learned once"
    );
    let own = ingested(&bed, "T1", "Ev2", mention(-30, "MARK-OWN")).await;
    assert!(
        matches!(own, Outcome::Stored { .. } | Outcome::Duplicate),
        "{own:?}"
    );
    assert!(kept_anywhere(&bed.store, "MARK-OWN").await);
}

/// An org-wide install (Enterprise Grid) is the organisation's: an event
/// from any of its workspaces, delivered to the organisation's
/// installation, is kept in the organisation's part and answered with its
/// token; a workspace of another organisation is a stranger.
#[tokio::test]
async fn an_org_wide_installs_events_from_any_of_its_workspaces_are_the_organisations() {
    let bed: Bed<DynamoStore> =
        Bed::on_emulator(|s| s.slack_client_id = Some("123.456".into())).await;
    let mut org = installed("E0GRID");
    org.enterprise = Some(myao_domain::EnterpriseId::parse("E0GRID").expect("an id"));
    bed.store.put_installation(&org).await.expect("installed");
    let from = |workspace: &str, enterprise: &str, id: &str, words: &str| {
        serde_json::to_vec(&json!({
            "type": "event_callback", "event_id": id, "team_id": workspace,
            "enterprise_id": enterprise, "event": mention(-60, words),
            "authorizations": [{"user_id": BOT, "team_id": null, "enterprise_id": enterprise,
                                "is_enterprise_install": true, "is_bot": true}]
        }))
        .expect("json")
    };

    let body = from("T0WEST", "E0GRID", "Ev1", "MARK-WEST");
    let answered = bed.ingest().accept(&body, None, bed.now()).await;
    assert_eq!(answered.status, 200, "{answered:?}");
    let in_org = bed.store.for_team(&team("E0GRID"));
    let kept = myao_core::ports::Messages::get_message(
        &in_org,
        &myao_testkit::ids::channel(GENERAL),
        ts(-60),
    )
    .await
    .expect("read");
    assert!(
        kept.is_some_and(|m| m.text.contains("MARK-WEST")),
        "kept in the organisation's part"
    );
    bed.script.set_reply("here to help");
    bed.clock.advance(Duration::seconds(5));
    bed.run_due().await;
    let posts = bed.posts().await;
    assert_eq!(posts.len(), 1, "answered once: {posts:?}");

    let other = from("T0EAST", "E0OTHER", "Ev2", "MARK-OTHER");
    let parsed = myao_slack::event::parse_envelope(&other).expect("an event");
    let outcome = bed
        .ingest()
        .process(parsed, bed.now())
        .await
        .expect("ingest")
        .0;
    assert_eq!(outcome, Outcome::Ignored(IgnoreReason::NotInstalled));
    assert!(!kept_anywhere(&bed.store, "MARK-OTHER").await);
}
