//! Installed in many workspaces (issue 46, first steps): the installations
//! kept by team and their rotating tokens renewed ahead of expiry, once,
//! over the real DynamoDB adapter on the emulator and Slack's
//! `oauth.v2.access` as a local stub behind the real OAuth adapter.

use chrono::{Duration, Utc};
use myao_core::ports::Installations;
use myao_domain::install::{Installation, Rotation, Token};
use myao_domain::{TeamId, UserId};
use myao_services::tokens::renew_due;
use myao_slack_api::oauth::SlackOAuthApi;
use myao_tests::fresh_store;
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
            refresh_token: Token::new(format!("xoxe-1-{token}")),
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
        .and(body_string_contains("refresh_token=xoxe-1-acme"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "ok": true, "access_token": "xoxe.xoxb-acme2", "refresh_token": "xoxe-1-acme2",
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
