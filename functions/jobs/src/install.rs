//! The install function: "Add to Slack" on a Function URL of its own
//! ([`Installer`]). The events' ingest never loads the OAuth client: it
//! stays as lean as it was, and the install pages, asked for a few times
//! per workspace, pay for their own cold start. A Function URL's request
//! and answer (payload format 2.0) are read and written here.

use lambda_runtime::{service_fn, Error, LambdaEvent};
use serde_json::{json, Value};

use myao_core::app::install::{Installer, Page};

/// Runs the install function: its [`Installer`] built once from the
/// environment, then each Function URL request answered.
pub async fn serve() -> Result<(), Error> {
    myao_core::telemetry::init(myao_core::telemetry::lambda_wants_json());
    let installer = myao_wire::aws::installer().await?;
    let installer = &installer;
    lambda_runtime::run(service_fn(move |event: LambdaEvent<Value>| async move {
        Ok::<_, Error>(answer(installer, &event.payload).await)
    }))
    .await
}

/// The answer to a Function URL request `request`: the install page its
/// path asks for (any method: only `GET` links lead here).
pub async fn answer(installer: &Installer, request: &Value) -> Value {
    let text = |pointer: &str| request.pointer(pointer).and_then(Value::as_str);
    let path = text("/rawPath").unwrap_or("/");
    let query = text("/rawQueryString").unwrap_or_default();
    // Function URLs give the cookies as a list, not a `Cookie` header.
    let cookies: Option<String> = request
        .get("cookies")
        .and_then(Value::as_array)
        .map(|all| {
            all.iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join("; ")
        })
        .or_else(|| text("/headers/cookie").map(str::to_owned));
    let page = installer.answer(path, query, cookies.as_deref()).await;
    tracing::info!(path, status = page.status, "install page");
    response(page)
}

/// A page as a Function URL's answer.
fn response(page: Page) -> Value {
    let mut headers = json!({
        "content-type": "text/html; charset=utf-8",
        "cache-control": "no-store",
    });
    if let Some(location) = page.location {
        headers["location"] = json!(location);
    }
    let cookies: Vec<String> = page.cookie.into_iter().collect();
    json!({
        "statusCode": page.status,
        "headers": headers,
        "cookies": cookies,
        "body": page.body,
    })
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use myao_core::adapters::system::{FixedSettings, ManualClock, OsUnguessable, StaticSecrets};
    use myao_core::adapters::twins::MemoryStore;
    use myao_core::ports::Installations;
    use myao_domain::Settings;
    use myao_slack_api::oauth::ConfiguredOAuth;
    use wiremock::matchers::{body_string_contains, method, path};
    use wiremock::{Mock, MockServer, ResponseTemplate};

    const SECRET_NAME: &str = "/myao/test/secrets/slack_client_secret";

    fn installer(slack: &MockServer, client_id: Option<&str>) -> (Installer, Arc<MemoryStore>) {
        let clock = Arc::new(ManualClock::new(chrono::Utc::now()));
        let store = Arc::new(MemoryStore::new(clock.clone()));
        let settings = Arc::new(FixedSettings::new(Settings {
            slack_client_id: client_id.map(str::to_owned),
            slack_api_base_url: format!("{}/api", slack.uri()),
            ..Settings::default()
        }));
        let secrets = Arc::new(StaticSecrets::new().with(SECRET_NAME, "the-client-secret"));
        let oauth = ConfiguredOAuth::new(
            myao_http::http_client(),
            settings.clone(),
            secrets,
            SECRET_NAME,
        );
        let installer = Installer {
            store: store.clone(),
            oauth: Arc::new(oauth),
            clock,
            unguessable: Arc::new(OsUnguessable::default()),
            settings,
        };
        (installer, store)
    }

    /// A Function URL's `GET` request (payload format 2.0).
    fn get(path: &str, query: &str, cookies: &[&str]) -> Value {
        json!({
            "version": "2.0", "rawPath": path, "rawQueryString": query,
            "cookies": cookies, "headers": {"host": "abc.lambda-url.us-east-1.on.aws"},
            "requestContext": {"http": {"method": "GET", "path": path}}
        })
    }

    #[tokio::test]
    async fn a_workspace_installs_through_the_function_url_pages() {
        let slack = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path("/api/oauth.v2.access"))
            .and(body_string_contains("client_id=123.456"))
            .and(body_string_contains("client_secret=the-client-secret"))
            .and(body_string_contains("code=c0de"))
            .respond_with(ResponseTemplate::new(200).set_body_json(json!({
                "ok": true, "access_token": "xoxb-acme", "scope": "chat:write",
                "bot_user_id": "U0BOT", "team": {"id": "T0ACME", "name": "Acme"}
            })))
            .expect(1)
            .mount(&slack)
            .await;
        let (installer, store) = installer(&slack, Some("123.456"));

        let started = answer(&installer, &get("/slack/install", "", &[])).await;
        assert_eq!(started["statusCode"], 302, "{started}");
        let location = started["headers"]["location"].as_str().unwrap();
        assert!(location.starts_with("https://slack.com/oauth/v2/authorize?client_id=123.456"));
        assert!(location.contains("chat%3Awrite"), "{location}");
        let state = location.rsplit("state=").next().unwrap();
        let set = started["cookies"][0].as_str().unwrap();
        let cookie = set.split(';').next().unwrap();
        assert!(set.contains("HttpOnly") && set.contains("Secure"), "{set}");

        let query = format!("code=c0de&state={state}");
        // Another browser (no cookie) is refused, and the state still serves.
        let other = answer(&installer, &get("/slack/oauth_redirect", &query, &[])).await;
        assert_eq!(other["statusCode"], 400, "{other}");
        let done = answer(
            &installer,
            &get("/slack/oauth_redirect", &query, &["other=1", cookie]),
        )
        .await;
        assert_eq!(done["statusCode"], 200, "{done}");
        assert!(done["body"].as_str().unwrap().contains("Acme"), "{done}");
        assert!(!done.to_string().contains("xoxb"), "{done}");
        let installed = store.installations().await.unwrap();
        assert_eq!(installed.len(), 1);
        assert_eq!(installed[0].bot_token.expose(), "xoxb-acme");

        let again = answer(&installer, &get("/slack/oauth_redirect", &query, &[cookie])).await;
        assert_eq!(again["statusCode"], 400, "a state serves once: {again}");
        let elsewhere = answer(&installer, &get("/", "", &[])).await;
        assert_eq!(elsewhere["statusCode"], 404);
    }

    #[tokio::test]
    async fn a_stack_without_a_client_id_offers_no_install() {
        let slack = MockServer::start().await;
        let (installer, store) = installer(&slack, None);
        let page = answer(&installer, &get("/slack/install", "", &[])).await;
        assert_eq!(page["statusCode"], 404, "{page}");
        assert!(store.installations().await.unwrap().is_empty());
        assert!(slack.received_requests().await.unwrap().is_empty());
    }
}
