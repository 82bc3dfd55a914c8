//! Installed in many workspaces (issue 46, first steps): "Add to Slack"
//! installs teams through the OAuth flow (a state serves once, a forged or
//! expired one installs nothing), and their rotating tokens are renewed
//! ahead of expiry, once; each team's data is apart from every other's
//! and purged alone; over the real DynamoDB adapter on the emulator
//! and Slack's `oauth.v2.access` as a local stub behind the real adapter.

use std::sync::Arc;

use chrono::{Duration, Utc};
use myao_aws::dynamodb::DynamoStore;
use myao_core::adapters::system::{ManualClock, OsUnguessable};
use myao_core::app::install::{InstallFlow, Page};
use myao_core::ports::{Claims, Installations, MemoryRecords, Messages, Teams};
use myao_domain::install::{Installation, Rotation, Token};
use myao_domain::{
    ChannelMemoryJob, Job, Memory, MemoryKind, MemoryScope, TeamId, TeamJob, UserId,
};
use myao_services::tokens::renew_due;
use myao_slack_api::oauth::SlackOAuthApi;
use myao_tests::{fresh_store, fresh_store_with_clock};
use serde_json::json;
use wiremock::matchers::{body_string_contains, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

fn installation(team: &str, token: &str, expires_in: Duration) -> Installation {
    Installation {
        team: TeamId::parse(team).expect("team"),
        enterprise: None,
        team_name: team.to_lowercase(),
        bot_user_id: UserId::parse("U0BOT").expect("user"),
        scopes: vec!["chat:write".into()],
        bot_token: Token::new(format!("xoxe.xoxb-{token}")),
        rotation: Some(Rotation {
            refresh_token: Token::new(format!("xoxe-fake-{token}")),
            expires_at: Utc::now() + expires_in,
        }),
        installed_at: Utc::now() - Duration::days(1),
    }
}

fn oauth(slack: &MockServer) -> SlackOAuthApi {
    SlackOAuthApi::new(
        myao_http::http_client(),
        format!("{}/api", slack.uri()),
        "123.456",
        Token::new("client-secret"),
    )
}

#[tokio::test]
async fn a_token_due_is_renewed_once_when_two_renewals_run_at_once() {
    let store = fresh_store().await;
    let slack = MockServer::start().await;
    // Due (expires in an hour: renewed two hours ahead), and not due.
    store
        .put_installation(&installation("T0ACME", "acme", Duration::hours(1)))
        .await
        .expect("stored");
    store
        .put_installation(&installation("T0BETA", "beta", Duration::hours(11)))
        .await
        .expect("stored");
    Mock::given(method("POST"))
        .and(path("/api/oauth.v2.access"))
        .and(body_string_contains("refresh_token=xoxe-fake-acme"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "ok": true, "access_token": "xoxe.xoxb-acme2", "refresh_token": "xoxe-fake-acme2",
            "expires_in": 43_200, "team": {"id": "T0ACME"}
        })))
        .mount(&slack)
        .await;

    let api = oauth(&slack);
    let now = Utc::now();
    let (one, two) = tokio::join!(renew_due(&store, &api, now), renew_due(&store, &api, now));
    let (one, two) = (one.expect("a round"), two.expect("a round"));
    let renewed = one.renewed.len() + two.renewed.len();
    assert_eq!(renewed, 1, "{one:?} {two:?}");
    assert_eq!(
        one.elsewhere.len() + two.elsewhere.len(),
        1,
        "{one:?} {two:?}"
    );
    assert!(!one.alarming() && !two.alarming());
    let calls = slack.received_requests().await.expect("recorded");
    assert_eq!(calls.len(), 1, "the refresh token is spent once");

    let acme = store
        .installation(&TeamId::parse("T0ACME").expect("team"))
        .await
        .expect("read")
        .expect("kept");
    assert_eq!(acme.bot_token.expose(), "xoxe.xoxb-acme2");
    assert!(!acme.due_for_renewal(Utc::now()), "good for 12 hours again");
    let beta = store
        .installation(&TeamId::parse("T0BETA").expect("team"))
        .await
        .expect("read")
        .expect("kept");
    assert_eq!(
        beta.bot_token.expose(),
        "xoxe.xoxb-beta",
        "not due: untouched"
    );
}

#[tokio::test]
async fn a_refresh_token_slack_refuses_for_good_is_lost_and_an_outage_is_tried_again() {
    let store = fresh_store().await;
    let slack = MockServer::start().await;
    store
        .put_installation(&installation("T0ACME", "acme", Duration::minutes(30)))
        .await
        .expect("stored");
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(503))
        .up_to_n_times(1)
        .mount(&slack)
        .await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(json!({"ok": false, "error": "invalid_grant"})),
        )
        .mount(&slack)
        .await;

    let api = oauth(&slack);
    let first = renew_due(&store, &api, Utc::now()).await.expect("a round");
    assert_eq!(first.failed.len(), 1, "{first:?}");
    assert!(first.alarming());
    // The claim was given back: the next round asks again, and learns the
    // token is gone for good.
    let second = renew_due(&store, &api, Utc::now()).await.expect("a round");
    assert_eq!(second.lost.len(), 1, "{second:?}");
    assert!(second.alarming());
}

/// Slack's OAuth as a stub that installs T0ACME or T0BETA, as the `code`
/// names (`code-T0ACME`), with the token `xoxb-<team>` and the bot U0BOT.
async fn installs_teams(slack: &MockServer) {
    for team in ["T0ACME", "T0BETA"] {
        Mock::given(method("POST"))
            .and(path("/api/oauth.v2.access"))
            .and(body_string_contains(format!("code=code-{team}")))
            .respond_with(ResponseTemplate::new(200).set_body_json(json!({
                "ok": true, "access_token": format!("xoxb-{team}"), "scope": "chat:write",
                "bot_user_id": "U0BOT", "team": {"id": team, "name": team.to_lowercase()}
            })))
            .mount(slack)
            .await;
    }
}

/// The flow over the emulator's table and Slack's OAuth as a stub that
/// installs the team its `code` names; its clock, to let a state expire.
async fn flow(slack: &MockServer) -> (InstallFlow, Arc<DynamoStore>, Arc<ManualClock>) {
    let clock = Arc::new(ManualClock::new(Utc::now()));
    let store = Arc::new(fresh_store_with_clock(clock.clone()).await);
    installs_teams(slack).await;
    let flow = InstallFlow {
        store: store.clone(),
        oauth: Arc::new(oauth(slack)),
        clock: clock.clone(),
        unguessable: Arc::new(OsUnguessable::default()),
        client_id: "123.456".into(),
        scopes: vec!["chat:write".into(), "channels:history".into()],
        redirect_uri: None,
    };
    (flow, store, clock)
}

/// The `Cookie` header a browser sends back after `page`.
fn cookie_of(page: &Page) -> String {
    let set = page.cookie.as_deref().expect("a cookie");
    assert!(
        set.contains("HttpOnly") && set.contains("Secure") && set.contains("SameSite=Lax"),
        "{set}"
    );
    set.split(';').next().expect("name=value").to_owned()
}

/// The state of the consent page's link `page` redirects to.
fn state_of(page: &Page) -> String {
    assert_eq!(page.status, 302, "{page:?}");
    let to = page.location.as_deref().expect("a redirect");
    assert!(
        to.starts_with("https://slack.com/oauth/v2/authorize?client_id=123.456&scope=chat%3Awrite%2Cchannels%3Ahistory&state="),
        "{to}"
    );
    to.rsplit("state=").next().expect("a state").to_owned()
}

/// Issue 56: a code exchange slower than its timeout was a 503 page while
/// Slack may count the app installed; it is tried once more, and installs.
#[tokio::test]
async fn a_code_exchange_that_times_out_once_is_tried_again_and_installs() {
    let slack = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/api/oauth.v2.access"))
        .respond_with(ResponseTemplate::new(200).set_delay(std::time::Duration::from_secs(3)))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&slack)
        .await;
    let (mut flow, store, _) = flow(&slack).await;
    flow.oauth = Arc::new(oauth(&slack).with_timeout(std::time::Duration::from_millis(300)));
    let started = flow.start().await;
    let query = format!("code=code-T0ACME&state={}", state_of(&started));
    let page = flow.finish(&query, Some(&cookie_of(&started))).await;
    assert_eq!(page.status, 200, "{page:?}");
    let acme = TeamId::parse("T0ACME").expect("team");
    let kept = store.installation(&acme).await.expect("read");
    assert_eq!(kept.map(|i| i.bot_token), Some(Token::new("xoxb-T0ACME")));
    let tries = slack.received_requests().await.expect("recorded").len();
    assert_eq!(tries, 2, "once more, and no more");
}

#[tokio::test]
async fn two_teams_install_through_the_flow_and_each_state_serves_once() {
    let slack = MockServer::start().await;
    let (flow, store, _) = flow(&slack).await;
    for team in ["T0ACME", "T0BETA"] {
        let started = flow.start().await;
        let (state, cookie) = (state_of(&started), cookie_of(&started));
        let query = format!("code=code-{team}&state={state}");
        let page = flow.finish(&query, Some(&cookie)).await;
        assert_eq!(page.status, 200, "{page:?}");
        assert!(page.body.contains(&team.to_lowercase()), "{}", page.body);
        assert!(!page.body.contains("xoxb"), "{}", page.body);
        let again = flow.finish(&query, Some(&cookie)).await;
        assert_eq!(again.status, 400, "a state serves once: {again:?}");
    }
    let teams: Vec<String> = store
        .installations()
        .await
        .expect("read")
        .iter()
        .map(|i| format!("{} {}", i.team, i.bot_token.expose()))
        .collect();
    assert_eq!(teams, ["T0ACME xoxb-T0ACME", "T0BETA xoxb-T0BETA"]);
}

/// Issue 56: a cancelled install left its state usable.
#[tokio::test]
async fn a_cancel_spends_its_state() {
    let slack = MockServer::start().await;
    let (flow, store, _) = flow(&slack).await;
    let started = flow.start().await;
    let (state, cookie) = (state_of(&started), cookie_of(&started));
    let cancelled = flow
        .finish(&format!("error=access_denied&state={state}"), Some(&cookie))
        .await;
    assert_eq!(cancelled.status, 400);
    // The same link, with a code and the browser's cookie: refused.
    let query = format!("code=code-T0ACME&state={state}");
    let later = flow.finish(&query, Some(&cookie)).await;
    assert_eq!(later.status, 400, "{later:?}");
    assert!(store.installations().await.expect("read").is_empty());
    let calls = slack.received_requests().await.expect("recorded");
    assert!(calls.is_empty(), "no code exchanged: {}", calls.len());
}

#[tokio::test]
async fn a_forged_expired_or_other_browsers_state_is_refused_and_installs_nothing() {
    let slack = MockServer::start().await;
    let (flow, store, clock) = flow(&slack).await;
    let forged = "0123456789abcdef0123456789abcdef";
    let forged_cookie = format!("myao_install_state={forged}");
    let query = format!("code=code-T0ACME&state={forged}");
    let page = flow.finish(&query, Some(&forged_cookie)).await;
    assert_eq!(page.status, 400);
    assert!(
        page.body.contains("Start again at /slack/install"),
        "{}",
        page.body
    );
    for junk in [
        "code=code-T0ACME&state=<script>",
        "code=code-T0ACME",
        "state=x",
    ] {
        assert_eq!(flow.finish(junk, None).await.status, 400, "{junk}");
    }
    let cancelled = flow.finish("error=access_denied&state=x", None).await;
    assert!(
        cancelled.body.contains("access_denied"),
        "{}",
        cancelled.body
    );

    // A state given to another browser (no cookie, or another's): refused.
    let started = flow.start().await;
    let (state, cookie) = (state_of(&started), cookie_of(&started));
    let query = format!("code=code-T0ACME&state={state}");
    assert_eq!(flow.finish(&query, None).await.status, 400, "no cookie");
    let other = flow.finish(&query, Some(&forged_cookie)).await;
    assert_eq!(other.status, 400, "another browser's cookie");

    clock.advance(Duration::minutes(11));
    let late = flow.finish(&query, Some(&cookie)).await;
    assert_eq!(late.status, 400, "expired: {late:?}");

    assert!(store.installations().await.expect("read").is_empty());
    let calls = slack.received_requests().await.expect("recorded");
    assert!(calls.is_empty(), "no code exchanged: {}", calls.len());
}

/// Delivers `event` of team T1 to an ingest that takes the events of
/// installed workspaces only.
async fn deliver_installed_only(
    bed: &myao_tests::stubs::Bed<DynamoStore>,
    event: serde_json::Value,
) -> myao_core::app::ingest::Outcome {
    let body = serde_json::to_vec(&json!({
        "type": "event_callback", "event_id": "Ev1", "team_id": "T1", "event": event,
        "authorizations": [{"user_id": myao_tests::stubs::BOT, "is_bot": true}]
    }))
    .expect("json");
    let envelope = myao_slack::event::parse_envelope(&body).expect("an event");
    let ingest = bed.ingest().requiring_installations();
    ingest.process(envelope, bed.now()).await.expect("ingest").0
}

#[tokio::test]
async fn an_ingest_of_installed_workspaces_takes_events_of_installed_teams_only() {
    use myao_core::app::ingest::{IgnoreReason, Outcome};
    use myao_core::ports::Messages;
    use myao_domain::ChannelId;
    use myao_tests::stubs::{ts, Bed, ALICE, GENERAL};

    let bed: Bed<DynamoStore> = Bed::on_emulator(|_| {}).await;
    let message = |at: i64| {
        json!({
            "type": "message", "channel": GENERAL, "user": ALICE,
            "text": "does anyone know why the build is red?", "ts": ts(at).to_string(),
        })
    };
    // The bed's events come from team T1, not installed.
    let outcome = deliver_installed_only(&bed, message(-60)).await;
    assert_eq!(outcome, Outcome::Ignored(IgnoreReason::NotInstalled));
    let general = ChannelId::parse(GENERAL).expect("channel");
    assert!(
        bed.store
            .get_message(&general, ts(-60))
            .await
            .expect("read")
            .is_none(),
        "stored nowhere"
    );
    assert!(bed.board.scheduled().is_empty() && bed.board.queued().is_empty());

    // A single-workspace ingest takes it (no installation needed).
    assert!(matches!(
        bed.deliver(message(-50)).await,
        Outcome::Stored { .. }
    ));

    // Installed: taken.
    bed.store
        .put_installation(&installation("T1", "one", Duration::hours(12)))
        .await
        .expect("stored");
    let outcome = deliver_installed_only(&bed, message(-30)).await;
    assert!(matches!(outcome, Outcome::Stored { .. }), "{outcome:?}");

    // Uninstalled: refused again.
    bed.store
        .delete_installation(&TeamId::parse("T1").expect("team"))
        .await
        .expect("deleted");
    let outcome = deliver_installed_only(&bed, message(-10)).await;
    assert_eq!(outcome, Outcome::Ignored(IgnoreReason::NotInstalled));
}

#[tokio::test]
async fn an_uninstall_removes_the_installation_in_either_order_of_slacks_two_events() {
    use myao_core::app::ingest::{IgnoreReason, Outcome};
    use myao_tests::stubs::Bed;

    let bed: Bed<DynamoStore> =
        Bed::on_emulator(|s| s.slack_client_id = Some("123.456".into())).await;
    let team = TeamId::parse("T1").expect("team");
    for first in ["app_uninstalled", "tokens_revoked"] {
        bed.store
            .put_installation(&installation("T1", "one", Duration::hours(12)))
            .await
            .expect("stored");
        let uninstalled = json!({"type": "app_uninstalled"});
        let revoked = json!({"type": "tokens_revoked", "tokens": {"bot": ["UBOT"]}});
        let (one, two) = match first {
            "app_uninstalled" => (uninstalled, revoked),
            _ => (revoked, uninstalled),
        };
        assert_eq!(
            bed.deliver(one).await,
            Outcome::Uninstalled,
            "{first} first"
        );
        assert!(bed.store.installation(&team).await.expect("read").is_none());
        assert_eq!(
            deliver_installed_only(&bed, two).await,
            Outcome::Ignored(IgnoreReason::NotInstalled),
            "the second finds nothing left"
        );
    }
}

/// Every item of the table, read around the adapter.
pub(crate) async fn every_item(
    store: &DynamoStore,
) -> Vec<std::collections::HashMap<String, aws_sdk_dynamodb::types::AttributeValue>> {
    store
        .client()
        .scan()
        .table_name(store.table())
        .into_paginator()
        .items()
        .send()
        .try_collect()
        .await
        .expect("a scan")
}

/// Every item's partition, read around the adapter.
async fn partitions(store: &DynamoStore) -> Vec<String> {
    every_item(store)
        .await
        .iter()
        .filter_map(|item| item.get("pk")?.as_s().ok().cloned())
        .collect()
}

/// Writes `team`'s (or the stack's) message, workspace memory and counter,
/// each carrying `marker`.
async fn write_some(store: &DynamoStore, marker: &str) {
    let later = Utc::now() + Duration::days(1);
    let said = myao_testkit::message::message("C0SAME", "U0AMY", "1700000000.000100", None, marker);
    store
        .insert_message(&said, false, later)
        .await
        .expect("a message");
    let memory = Memory {
        scope: MemoryScope::Workspace,
        kind: MemoryKind::Long,
        content: format!("{marker} is what this workspace talks about"),
        updated_at: Utc::now(),
        newest_ts: None,
    };
    store.put_memory(&memory, later).await.expect("a memory");
    assert!(store.count("llm#day", 10, later).await.expect("a count"));
}

async fn text_of(store: &DynamoStore) -> Option<String> {
    let channel = myao_testkit::ids::channel("C0SAME");
    let at = myao_testkit::ids::ts("1700000000.000100");
    store
        .get_message(&channel, at)
        .await
        .expect("a read")
        .map(|m| m.text)
}

#[tokio::test]
async fn each_team_has_its_own_part_of_the_table_and_an_uninstall_purges_only_its_own() {
    let stack = fresh_store().await;
    let acme_id = TeamId::parse("T0ACME").expect("team");
    let acme = stack.for_team(&acme_id);
    let beta = stack.for_team(&TeamId::parse("T0BETA").expect("team"));
    // The same channel id and ts in each: a single-workspace stack's own
    // data, and two teams'.
    write_some(&stack, "plinth").await;
    write_some(&acme, "quokka").await;
    write_some(&beta, "zephyr").await;
    stack
        .put_installation(&installation("T0ACME", "acme", Duration::hours(11)))
        .await
        .expect("stored");

    assert_eq!(text_of(&stack).await.as_deref(), Some("plinth"));
    assert_eq!(text_of(&acme).await.as_deref(), Some("quokka"));
    assert_eq!(text_of(&beta).await.as_deref(), Some("zephyr"));
    let workspace = |s: &DynamoStore| {
        let s = s.clone();
        async move {
            s.get_memory(&MemoryScope::Workspace, MemoryKind::Long)
                .await
                .expect("a read")
                .map(|m| m.content)
                .unwrap_or_default()
        }
    };
    assert!(workspace(&acme).await.starts_with("quokka"));
    assert!(workspace(&beta).await.starts_with("zephyr"));
    // The stack's own keys are as they were before teams: its data from
    // then is read with nothing migrated.
    let before = partitions(&stack).await;
    for pk in ["CH#C0SAME", "MEM", "COUNT#llm#day", "TEAM#T0ACME#CH#C0SAME"] {
        assert!(before.iter().any(|p| p == pk), "{pk} in {before:?}");
    }
    // A team's installation is the stack's, reached from any team's store.
    assert!(beta.installation(&acme_id).await.expect("a read").is_some());

    let purged = Teams::purge_team(&stack, &acme_id).await.expect("a purge");
    assert_eq!(purged, 3, "the message, the memory and the counter");
    let after = partitions(&stack).await;
    assert!(
        !after.iter().any(|p| p.starts_with("TEAM#T0ACME#")),
        "{after:?}"
    );
    assert_eq!(after.len(), before.len() - 3, "{after:?}");
    assert_eq!(text_of(&acme).await, None);
    assert_eq!(text_of(&beta).await.as_deref(), Some("zephyr"));
    assert_eq!(text_of(&stack).await.as_deref(), Some("plinth"));
    // Its counter starts again from nothing: a reinstall starts clean.
    assert!(acme
        .count("llm#day", 1, Utc::now() + Duration::days(1))
        .await
        .expect("a count"));
    assert!(stack
        .installation(&acme_id)
        .await
        .expect("a read")
        .is_some());
}

/// The stack's own recurring memory run, as its schedule fires it.
async fn stacks_sweep(bed: &myao_tests::stubs::Bed<DynamoStore>) {
    let stacks = TeamJob {
        team: None,
        job: Job::MemorySweep,
    };
    myao_services::jobs::run_carried(&bed.services, &[myao_domain::JobKind::MemorySweep], &stacks)
        .await
        .expect("swept");
}

/// A signed-off envelope of `team` delivering `event` to the bot U0BOT.
fn team_event(team: &str, event_id: &str, event: serde_json::Value) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "type": "event_callback", "event_id": event_id, "team_id": team, "event": event,
        "authorizations": [{"user_id": "U0BOT", "is_bot": true}]
    }))
    .expect("json")
}

/// Each `chat.postMessage` the Slack stub received: its channel, its text
/// and the token it carried.
async fn posts(slack: &MockServer) -> Vec<(String, String, String)> {
    let mut posts: Vec<_> = slack
        .received_requests()
        .await
        .expect("recorded")
        .iter()
        .filter(|r| r.url.path() == "/api/chat.postMessage")
        .map(|r| {
            let body: serde_json::Value = serde_json::from_slice(&r.body).expect("json");
            let auth = r
                .headers
                .get("authorization")
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default();
            (
                body["channel"].as_str().unwrap_or_default().to_owned(),
                body["text"].as_str().unwrap_or_default().to_owned(),
                auth.to_owned(),
            )
        })
        .collect();
    posts.sort();
    posts
}

#[tokio::test]
async fn two_installed_teams_are_answered_each_with_its_own_token_and_an_uninstall_purges_one() {
    use myao_core::app::ingest::{IgnoreReason, Outcome};
    use myao_domain::JobKind;
    use myao_services::jobs::run_carried;
    use myao_tests::stubs::{ts, Bed, ALICE, GENERAL};

    let bed: Bed<DynamoStore> =
        Bed::on_emulator(|s| s.slack_client_id = Some("123.456".into())).await;
    installs_teams(&bed.slack_server).await;
    let flow = InstallFlow {
        store: bed.store.clone(),
        oauth: Arc::new(oauth(&bed.slack_server)),
        clock: bed.clock.clone(),
        unguessable: Arc::new(OsUnguessable::default()),
        client_id: "123.456".into(),
        scopes: vec!["chat:write".into()],
        redirect_uri: None,
    };
    for team in ["T0ACME", "T0BETA"] {
        let started = flow.start().await;
        let query = format!("code=code-{team}&state={}", state_of_any(&started));
        let page = flow.finish(&query, Some(&cookie_of(&started))).await;
        assert_eq!(page.status, 200, "{page:?}");
    }
    bed.script.set_reply("the build is green again");

    // One channel id in both workspaces (a channel they share), each
    // team's member asking the bot there.
    let ingest = bed.ingest().requiring_installations();
    let ask = |team: &str, at: i64, words: &str| {
        team_event(
            team,
            &format!("Ev{team}{at}"),
            json!({
                "type": "app_mention", "channel": GENERAL, "user": ALICE,
                "text": format!("<@U0BOT> {words}"), "ts": ts(at).to_string(),
            }),
        )
    };
    for (team, words) in [
        ("T0ACME", "acme's marmot build?"),
        ("T0BETA", "beta's osprey build?"),
    ] {
        let envelope = myao_slack::event::parse_envelope(&ask(team, -60, words)).expect("event");
        let (outcome, _) = ingest.process(envelope, bed.now()).await.expect("ingest");
        assert!(matches!(outcome, Outcome::Stored { .. }), "{outcome:?}");
    }
    let due = bed.board.take_due(bed.now());
    let teams: Vec<String> = due
        .iter()
        .map(|d| format!("{:?} {}", d.team.as_ref().map(TeamId::as_str), d.job.kind()))
        .collect();
    assert_eq!(
        teams,
        [r#"Some("T0ACME") response"#, r#"Some("T0BETA") response"#]
    );
    for carried in &due {
        run_carried(&bed.services, &[JobKind::Response], carried)
            .await
            .expect("answered");
    }
    let answered = posts(&bed.slack_server).await;
    assert_eq!(
        answered,
        [
            (
                GENERAL.into(),
                "the build is green again".into(),
                "Bearer xoxb-T0ACME".into()
            ),
            (
                GENERAL.into(),
                "the build is green again".into(),
                "Bearer xoxb-T0BETA".into()
            ),
        ]
    );
    // Each team's words in its own part of the table, none in the stack's.
    let acme = bed.store.for_team(&TeamId::parse("T0ACME").expect("team"));
    let beta = bed.store.for_team(&TeamId::parse("T0BETA").expect("team"));
    let general = myao_testkit::ids::channel(GENERAL);
    let said = |s: DynamoStore| {
        let general = general.clone();
        async move {
            s.get_message(&general, ts(-60))
                .await
                .expect("read")
                .map(|m| m.text)
        }
    };
    assert!(said(acme.clone()).await.expect("acme's").contains("marmot"));
    assert!(said(beta.clone()).await.expect("beta's").contains("osprey"));
    assert_eq!(said((*bed.store).clone()).await, None);

    // Acme uninstalls: its installation goes, then everything it kept.
    let gone = team_event("T0ACME", "EvGone", json!({"type": "app_uninstalled"}));
    let envelope = myao_slack::event::parse_envelope(&gone).expect("event");
    let (outcome, _) = ingest.process(envelope, bed.now()).await.expect("ingest");
    assert_eq!(outcome, Outcome::Uninstalled);
    assert!(
        bed.board.take_due(bed.now()).is_empty(),
        "what is under way ends first"
    );
    bed.clock.advance(Duration::seconds(120));
    let purge = bed.board.take_due(bed.now());
    assert_eq!(purge.len(), 1, "{purge:?}");
    assert_eq!(purge[0].job, Job::Purge);
    run_carried(&bed.services, &[JobKind::Purge], &purge[0])
        .await
        .expect("purged");
    let left = partitions(&bed.store).await;
    assert!(
        !left.iter().any(|p| p.starts_with("TEAM#T0ACME#")),
        "{left:?}"
    );
    assert!(left.iter().any(|p| p == "TEAM#T0BETA#CH#C1"), "{left:?}");
    assert!(said(beta).await.is_some());

    // Its events are refused from now on, and stored nowhere.
    let envelope =
        myao_slack::event::parse_envelope(&ask("T0ACME", -30, "still there?")).expect("event");
    let (outcome, _) = ingest.process(envelope, bed.now()).await.expect("ingest");
    assert_eq!(outcome, Outcome::Ignored(IgnoreReason::NotInstalled));
    let left = partitions(&bed.store).await;
    assert!(
        !left.iter().any(|p| p.starts_with("TEAM#T0ACME#")),
        "{left:?}"
    );
    assert!(bed.board.take_due(bed.now()).is_empty());

    // The stack's recurring run starts the installed team's, which digests
    // that team's channel in that team's part.
    stacks_sweep(&bed).await;
    let due = bed.board.take_due(bed.now());
    let teams: Vec<_> = due.iter().map(|d| (d.team.clone(), d.job.kind())).collect();
    let beta_id = TeamId::parse("T0BETA").expect("team");
    assert_eq!(teams, [(Some(beta_id.clone()), JobKind::MemorySweep)]);
    run_carried(&bed.services, &[JobKind::MemorySweep], &due[0])
        .await
        .expect("beta swept");
    let due = bed.board.take_due(bed.now());
    let jobs: Vec<_> = due
        .iter()
        .map(|d| (d.team.clone(), d.job.clone()))
        .collect();
    assert_eq!(
        jobs,
        [(
            Some(beta_id),
            Job::ChannelMemory(ChannelMemoryJob {
                channel: general.clone()
            })
        )]
    );
}

/// The state of the consent page's link `page` redirects to, whatever the scopes.
fn state_of_any(page: &Page) -> String {
    let to = page.location.as_deref().expect("a redirect");
    to.rsplit("state=").next().expect("a state").to_owned()
}

#[tokio::test]
async fn with_a_client_id_an_installed_teams_event_is_its_own_and_the_home_teams_the_stacks() {
    use myao_core::app::ingest::{IgnoreReason, Outcome};
    use myao_tests::stubs::{ts, Bed, ALICE, GENERAL};

    let bed: Bed<DynamoStore> =
        Bed::on_emulator(|s| s.slack_client_id = Some("123.456".into())).await;
    bed.store
        .put_installation(&installation("T0ACME", "acme", Duration::hours(12)))
        .await
        .expect("stored");
    // The stack's own workspace, as it learned it from its token.
    let home = myao_domain::install::Home {
        team: TeamId::parse("T0HOME").expect("team"),
        enterprise: None,
        bot_user_id: UserId::parse("U0BOT").expect("bot"),
    };
    bed.store.put_home(&home).await.expect("stored");
    let said = |team: &str, at: i64| {
        team_event(
            team,
            &format!("Ev{team}{at}"),
            json!({
                "type": "message", "channel": GENERAL, "user": ALICE,
                "text": "does anyone know why the build is red?", "ts": ts(at).to_string(),
            }),
        )
    };
    let ingest = bed.ingest();
    for (team, at) in [("T0ACME", -60), ("T0HOME", -50)] {
        let envelope = myao_slack::event::parse_envelope(&said(team, at)).expect("event");
        let (outcome, _) = ingest.process(envelope, bed.now()).await.expect("ingest");
        assert!(matches!(outcome, Outcome::Stored { .. }), "{outcome:?}");
    }
    let kept = partitions(&bed.store).await;
    assert!(kept.iter().any(|p| p == "TEAM#T0ACME#CH#C1"), "{kept:?}");
    assert!(
        kept.iter().any(|p| p == "CH#C1"),
        "the stack's own: {kept:?}"
    );
    assert!(
        !kept.iter().any(|p| p.starts_with("TEAM#T0HOME")),
        "{kept:?}"
    );
    let teams: Vec<_> = bed
        .board
        .scheduled()
        .iter()
        .map(|s| s.name.to_string())
        .collect();
    assert_eq!(teams.len(), 2, "{teams:?}");
    assert!(
        teams.iter().any(|n| n.starts_with("T0ACME.judgment-C1-")),
        "{teams:?}"
    );

    // Any other workspace's (issue 56): dropped, unstored.
    let envelope = myao_slack::event::parse_envelope(&said("T0ELSE", -45)).expect("event");
    let (outcome, _) = ingest.process(envelope, bed.now()).await.expect("ingest");
    assert_eq!(outcome, Outcome::Ignored(IgnoreReason::NotInstalled));
    assert!(!partitions(&bed.store)
        .await
        .iter()
        .any(|p| p.starts_with("TEAM#T0ELSE")));

    // Installed workspaces only: the home's event is dropped, unstored.
    let mut ports = bed.services.ports.clone();
    ports.settings = Arc::new(myao_core::adapters::system::FixedSettings::new(
        myao_domain::Settings {
            installed_workspaces_only: true,
            ..bed.settings.clone()
        },
    ));
    let ingest = myao_core::app::ingest::Ingest::new(
        ports,
        Arc::new(myao_core::adapters::system::StaticSecrets::new()),
        "unused",
    );
    let envelope = myao_slack::event::parse_envelope(&said("T0HOME", -40)).expect("event");
    let (outcome, _) = ingest.process(envelope, bed.now()).await.expect("ingest");
    assert_eq!(outcome, Outcome::Ignored(IgnoreReason::NotInstalled));
    let general = myao_testkit::ids::channel(GENERAL);
    assert!(bed
        .store
        .get_message(&general, ts(-40))
        .await
        .expect("read")
        .is_none());
}

#[tokio::test]
async fn the_stacks_recurring_run_renews_the_tokens_due_and_counts_what_it_could_not() {
    use myao_domain::metrics::TOKEN_RENEWAL_FAILURES;
    use myao_slack_api::oauth::ConfiguredOAuth;
    use myao_tests::stubs::Bed;

    let mut bed: Bed<DynamoStore> =
        Bed::on_emulator(|s| s.slack_client_id = Some("123.456".into())).await;
    let secrets = myao_core::adapters::system::StaticSecrets::new()
        .with("/myao/test/secrets/slack_client_secret", "client-secret\n");
    let oauth = ConfiguredOAuth::new(
        myao_http::http_client(),
        bed.services.ports.settings.clone(),
        Arc::new(secrets),
        "/myao/test/secrets/slack_client_secret",
    );
    bed.services.renew_tokens_with(Arc::new(oauth));
    let now = bed.now();
    let due = |team: &str, token: &str| Installation {
        rotation: Some(Rotation {
            refresh_token: Token::new(format!("xoxe-fake-{token}")),
            expires_at: now + Duration::hours(1),
        }),
        ..installation(team, token, Duration::hours(1))
    };
    for (team, token) in [("T0ACME", "acme"), ("T0BETA", "beta")] {
        bed.store
            .put_installation(&due(team, token))
            .await
            .expect("stored");
    }
    Mock::given(method("POST"))
        .and(path("/api/oauth.v2.access"))
        .and(body_string_contains("client_secret=client-secret&"))
        .and(body_string_contains("refresh_token=xoxe-fake-acme"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "ok": true, "access_token": "xoxe.xoxb-acme2", "refresh_token": "xoxe-fake-acme2",
            "expires_in": 43_200, "team": {"id": "T0ACME"}
        })))
        .mount(&bed.slack_server)
        .await;
    Mock::given(method("POST"))
        .and(path("/api/oauth.v2.access"))
        .and(body_string_contains("refresh_token=xoxe-fake-beta"))
        .respond_with(ResponseTemplate::new(503))
        .mount(&bed.slack_server)
        .await;

    stacks_sweep(&bed).await;
    let acme = bed
        .store
        .installation(&TeamId::parse("T0ACME").expect("team"))
        .await
        .expect("read")
        .expect("installed");
    assert_eq!(acme.bot_token.expose(), "xoxe.xoxb-acme2");
    let beta = bed
        .store
        .installation(&TeamId::parse("T0BETA").expect("team"))
        .await
        .expect("read")
        .expect("installed");
    assert_eq!(
        beta.bot_token.expose(),
        "xoxe.xoxb-beta",
        "kept for the next run"
    );
    assert_eq!(bed.metrics.total(TOKEN_RENEWAL_FAILURES, None), 1.0);
}
