//! The Slack side of `myao doctor`: the bot token and its scopes, the sign
//! of life, and the Function URL answering as Slack's own check expects.

use std::collections::BTreeSet;

use myao_domain::Settings;
use myao_slack::signature;
use serde_json::{json, Value};

use super::check::Check;
use crate::stack::FUNCTION_URL;

/// The Slack app manifest: the token must have every bot scope it asks for.
const MANIFEST: &str = include_str!("../../../../infra/slack-app-manifest.yaml");
/// The scope that downloads shared files, needed with `vision` on only.
const VISION_SCOPE: &str = "files:read";

/// The bot scopes the app manifest asks for.
pub fn required_scopes() -> Result<Vec<String>, serde_yaml::Error> {
    let manifest: serde_yaml::Value = serde_yaml::from_str(MANIFEST)?;
    Ok(manifest["oauth_config"]["scopes"]["bot"]
        .as_sequence()
        .into_iter()
        .flatten()
        .filter_map(|s| s.as_str().map(str::to_owned))
        .collect())
}

/// The Slack error codes that mean the token itself is no good.
const BAD_TOKEN: &[&str] = &[
    "invalid_auth",
    "not_authed",
    "token_revoked",
    "token_expired",
    "account_inactive",
];

/// A Slack check that cannot run without the bot token.
fn no_token(name: &str) -> Check {
    Check::fail(
        name,
        "not checked: no bot token",
        "fix secret slack_bot_token first",
    )
}

/// The Web API's base URL, and the fix of a call that did not reach it.
fn slack_base(settings: &Settings) -> (&str, String) {
    let base = settings.slack_api_base_url.trim_end_matches('/');
    (
        base,
        format!("is slack_api_base_url ({base}) right and reachable?"),
    )
}

/// The bot token works (`auth.test`), has every scope of the manifest, and
/// belongs to the workspace and bot the settings name, if they name one.
/// `token` is the secret's parameter name and value.
pub async fn slack(
    http: &reqwest::Client,
    settings: &Settings,
    token: Option<(&str, &str)>,
) -> Check {
    let Some((parameter, token)) = token else {
        return no_token(SLACK);
    };
    // Each step passes, or is the failed check.
    let checked = async {
        let auth = auth_test(http, settings, parameter, token).await?;
        let scopes = manifest_scopes(settings, auth.granted.as_ref())?;
        let (team_id, user_id) = (auth.text("team_id"), auth.text("user_id"));
        same_identity(settings, &team_id, &user_id)?;
        Ok::<_, Check>(Check::ok(
            SLACK,
            format!(
                "auth.test: bot {user_id} in {} ({team_id}), with the manifest's {scopes} scopes",
                auth.text("team")
            ),
        ))
    };
    checked.await.unwrap_or_else(|failed| failed)
}

/// The name of the token's check.
const SLACK: &str = "slack";

/// What `auth.test` answered, when it said `ok`.
struct AuthTest {
    /// The scopes of its `x-oauth-scopes` header, if it sent one.
    granted: Option<BTreeSet<String>>,
    body: Value,
}

impl AuthTest {
    /// A string of the answer, empty when it has none.
    fn text(&self, key: &str) -> String {
        self.body
            .get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    }
}

/// Asks `auth.test` with the token; a failed check where it is not
/// answered `ok`, with the fix for a token Slack refuses (`parameter` is
/// the secret's name).
async fn auth_test(
    http: &reqwest::Client,
    settings: &Settings,
    parameter: &str,
    token: &str,
) -> Result<AuthTest, Check> {
    let (base, reached) = slack_base(settings);
    let response = match http
        .get(format!("{base}/auth.test"))
        .bearer_auth(token)
        .send()
        .await
    {
        Ok(r) => r,
        Err(e) => {
            return Err(Check::fail(
                SLACK,
                format!("auth.test: {}", e.without_url()),
                reached,
            ))
        }
    };
    let status = response.status();
    let granted: Option<BTreeSet<String>> = response
        .headers()
        .get("x-oauth-scopes")
        .and_then(|h| h.to_str().ok())
        .map(|h| {
            h.split(',')
                .map(|s| s.trim().to_owned())
                .filter(|s| !s.is_empty())
                .collect()
        });
    let auth = AuthTest {
        granted,
        body: response.json().await.unwrap_or(Value::Null),
    };
    if !status.is_success() {
        return Err(Check::fail(
            SLACK,
            format!("auth.test answered HTTP {}", status.as_u16()),
            reached,
        ));
    }
    if auth.body.get("ok").and_then(Value::as_bool) != Some(true) {
        let code = match auth.text("error") {
            c if c.is_empty() => "no answer".to_owned(),
            c => c.chars().take(80).collect(),
        };
        let fix = if BAD_TOKEN.contains(&code.as_str()) {
            format!(
                "the token was revoked or the app uninstalled: reinstall the app (Install App), \
                 copy its Bot User OAuth Token, and `aws ssm put-parameter --overwrite --type \
                 SecureString --name {parameter} --value 'xoxb-...'`"
            )
        } else {
            reached
        };
        return Err(Check::fail(SLACK, format!("auth.test: {code}"), fix));
    }
    Ok(auth)
}

/// The token has every scope the manifest asks for (the files' one only
/// with `vision` on): how many the manifest asks for, or a failed check.
fn manifest_scopes(
    settings: &Settings,
    granted: Option<&BTreeSet<String>>,
) -> Result<usize, Check> {
    let required = required_scopes().map_err(|e| {
        Check::fail(
            SLACK,
            format!("the app manifest: {e}"),
            "fix infra/slack-app-manifest.yaml",
        )
    })?;
    let Some(granted) = granted else {
        return Err(Check::fail(
            SLACK,
            "auth.test sent no x-oauth-scopes header: the token's scopes are unknown",
            slack_base(settings).1,
        ));
    };
    // The files' scope serves `vision` alone: a token without it does all
    // the rest, and each image is then named as unreadable.
    let missing: Vec<&str> = required
        .iter()
        .map(String::as_str)
        .filter(|s| !granted.contains(*s))
        .filter(|s| settings.vision || *s != VISION_SCOPE)
        .collect();
    if !missing.is_empty() {
        let fix = "add them on the app's OAuth & Permissions page (or paste \
                   infra/slack-app-manifest.yaml in App Manifest), then reinstall the app to the \
                   workspace";
        return Err(Check::fail(
            SLACK,
            format!("the token lacks the scope(s) {}", missing.join(", ")),
            fix,
        ));
    }
    Ok(required.len())
}

/// The token is of the workspace and bot the settings name, if they name
/// one: a token of another workspace has every event dropped.
fn same_identity(settings: &Settings, team_id: &str, user_id: &str) -> Result<(), Check> {
    if let Some(configured) = settings.slack_team_id.as_deref().filter(|t| *t != team_id) {
        let fix =
            format!("set slack_team_id to {team_id}, or store the token of workspace {configured}");
        return Err(Check::fail(
            SLACK,
            format!("the token is for workspace {team_id}, slack_team_id is {configured}: every event is dropped"),
            fix,
        ));
    }
    if let Some(configured) = settings
        .bot_user_id
        .as_ref()
        .filter(|b| b.as_str() != user_id)
    {
        return Err(Check::fail(
            SLACK,
            format!("the token is bot {user_id}'s, bot_user_id is {configured}"),
            format!("set bot_user_id to {user_id}, or delete it (the functions ask auth.test)"),
        ));
    }
    Ok(())
}

/// The channel of the sign of life's test call: no channel has this id.
const NO_CHANNEL: &str = "C0MYAODOCTOR";

/// The sign of life while a reply is written (`assistant.threads.setStatus`)
/// can be set with the bot token: a call on a thread that does not exist is
/// refused for the thread (`channel_not_found`, ...), not for the method or
/// the token's scopes. Where the workspace does not offer the method, the
/// check passes and says so: replies are posted without the sign.
pub async fn slack_status(
    http: &reqwest::Client,
    settings: &Settings,
    token: Option<(&str, &str)>,
) -> Check {
    const NAME: &str = "slack status";
    const METHOD: &str = "assistant.threads.setStatus";
    let Some((_, token)) = token else {
        return no_token(NAME);
    };
    let (base, reached) = slack_base(settings);
    let body = json!({"channel_id": NO_CHANNEL, "thread_ts": "1000000000.000100", "status": ""});
    let response = match http
        .post(format!("{base}/{METHOD}"))
        .bearer_auth(token)
        .json(&body)
        .send()
        .await
    {
        Ok(r) if r.status().is_success() => r,
        Ok(r) => {
            let problem = format!("{METHOD} answered HTTP {}", r.status().as_u16());
            return Check::fail(NAME, problem, reached);
        }
        Err(e) => return Check::fail(NAME, format!("{METHOD}: {}", e.without_url()), reached),
    };
    let answer: Value = response.json().await.unwrap_or(Value::Null);
    let error = answer
        .get("error")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let works = "replies to mentions show a status in their thread while they are written";
    match (answer.get("ok").and_then(Value::as_bool), error) {
        (Some(true), _) => Check::ok(NAME, works),
        (Some(false), "missing_scope") => Check::fail(
            NAME,
            format!("{METHOD}: missing_scope: no sign of life while a reply is written"),
            "the app needs chat:write (since March 2026 enough for this method; before, an AI \
             app's assistant:write): reinstall the app to the workspace",
        ),
        (Some(false), refused) if BAD_TOKEN.contains(&refused) => Check::fail(
            NAME,
            format!("not checked: the token was refused ({refused})"),
            "fix the slack check first",
        ),
        (Some(false), "unknown_method" | "method_deprecated" | "not_allowed_token_type") => {
            Check::ok(
                NAME,
                format!(
                    "not offered here ({METHOD}: {error}): replies are posted without a sign of life"
                ),
            )
        }
        (Some(false), refused) if !refused.is_empty() => Check::ok(
            NAME,
            format!("{works} (a test call on no thread was refused for the thread: {refused})"),
        ),
        _ => Check::fail(NAME, format!("{METHOD}: no answer"), reached),
    }
}

/// The ingest function's URL answers a `url_verification` signed with the
/// signing secret (parameter name and value) exactly as Slack signs it.
pub async fn function_url(
    http: &reqwest::Client,
    url: Option<&str>,
    secret: Option<(&str, &str)>,
    stack_name: &str,
) -> Check {
    const NAME: &str = "function url";
    let Some(url) = url else {
        let fix = format!("give --stack, or --set {FUNCTION_URL}=URL");
        return Check::fail(NAME, "its URL is unknown", fix);
    };
    let Some((parameter, secret)) = secret else {
        return Check::fail(
            NAME,
            "not checked: no signing secret",
            "fix secret slack_signing_secret first",
        );
    };
    let now = chrono::Utc::now();
    let challenge = format!(
        "myao-doctor-{}",
        now.timestamp_nanos_opt().unwrap_or_default()
    );
    let body = json!({"token": "myao-doctor", "challenge": challenge, "type": "url_verification"})
        .to_string();
    let timestamp = now.timestamp().to_string();
    let signed = signature::sign(secret.as_bytes(), &timestamp, body.as_bytes());
    let sent = http
        .post(url)
        .header("content-type", "application/json")
        .header("x-slack-request-timestamp", &timestamp)
        .header("x-slack-signature", signed)
        .body(body)
        .send()
        .await;
    let response = match sent {
        Ok(r) => r,
        Err(e) => {
            let fix = format!("is {url} the stack's {FUNCTION_URL} output?");
            return Check::fail(NAME, format!("{url}: {}", e.without_url()), fix);
        }
    };
    let status = response.status().as_u16();
    let answer = response.text().await.unwrap_or_default();
    let logs = format!(
        "read why in the ingest logs: `sam logs --stack-name {stack_name} -n IngestFunction \
         --start-time '10 minutes ago'`"
    );
    match status {
        200 if answer.trim() == challenge => {
            Check::ok(NAME, format!("{url} answered a signed url_verification"))
        }
        200 => Check::fail(
            NAME,
            format!("{url} answered 200 without the challenge"),
            logs,
        ),
        401 => Check::fail(
            NAME,
            format!("{url} refused the signature (HTTP 401)"),
            format!(
                "the signing secret in {parameter} is not this app's: copy Basic Information > \
                 Signing Secret into it (`aws ssm put-parameter --overwrite --type SecureString \
                 --name {parameter} --value '...'`); the function reads it again within 5 minutes"
            ),
        ),
        _ => Check::fail(NAME, format!("{url} answered HTTP {status}"), logs),
    }
}
