//! Installations: the app installed in a workspace through Slack's OAuth
//! flow ("Add to Slack"), with the bot token Slack gave for that workspace,
//! and what the flow needs: its install link, its one-time `state`, and
//! reading `oauth.v2.access`'s answer.
//!
//! A token is a [`Token`]: it is never shown by `Debug` or `Display`, so
//! that no log line, error or prompt can carry one by accident.

use std::fmt;

use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{EnterpriseId, TeamId, UserId};

/// How long before its expiry a rotating token is renewed: two hours, as
/// Slack's own SDKs do, so that a renewal that fails has time to be
/// retried (and alarmed) before the token stops working.
pub const RENEW_BEFORE: Duration = Duration::hours(2);
/// How long an install link's `state` stays good: the time a person takes
/// to read Slack's consent page and click.
pub const STATE_MINUTES: i64 = 10;

/// A secret Slack gave (a bot token, a refresh token). Shown as
/// `[redacted]`; [`Token::expose`] is the one way to its text.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Token(String);

impl Token {
    pub fn new(text: impl Into<String>) -> Token {
        Token(text.into())
    }

    /// The token's text, for the one call that sends it to Slack.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[redacted]")
    }
}

impl fmt::Display for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[redacted]")
    }
}

/// The app installed in one workspace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Installation {
    pub team: TeamId,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enterprise: Option<EnterpriseId>,
    /// The workspace's name, for people (doctor, the page after the flow).
    #[serde(default)]
    pub team_name: String,
    /// The bot's user id in that workspace.
    pub bot_user_id: UserId,
    /// The scopes granted, as Slack listed them.
    pub scopes: Vec<String>,
    pub bot_token: Token,
    /// With token rotation on: the refresh token and when the bot token
    /// expires. `None`: a token that does not expire.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rotation: Option<Rotation>,
    pub installed_at: DateTime<Utc>,
}

/// The stack's own workspace: the team of the stack's own bot token, as
/// `auth.test` answers it, learned once and kept. Its events are the
/// stack's; every other team's need an installation of their own.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Home {
    pub team: TeamId,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enterprise: Option<EnterpriseId>,
    /// The stack's bot in it.
    pub bot_user_id: UserId,
}

/// A rotating token's renewal: its refresh token and its expiry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rotation {
    pub refresh_token: Token,
    pub expires_at: DateTime<Utc>,
}

impl Installation {
    /// Whether its token is to be renewed at `now` ([`RENEW_BEFORE`] its
    /// expiry, or past it); never for a token that does not expire.
    pub fn due_for_renewal(&self, now: DateTime<Utc>) -> bool {
        self.rotation
            .as_ref()
            .is_some_and(|r| now >= r.expires_at - RENEW_BEFORE)
    }

    /// Whether it was granted `scope`.
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scopes.iter().any(|s| s == scope)
    }
}

/// Why `oauth.v2.access`'s answer is no installation. Quotes no token.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AccessError {
    /// Slack refused: its error code (`invalid_code`, `invalid_grant`,
    /// `bad_redirect_uri`, ...).
    #[error("Slack refused: {0}")]
    Refused(String),
    #[error("the answer is not JSON")]
    NotJson,
    #[error("the answer has no {0}")]
    Missing(&'static str),
    #[error("the answer's {0} is not valid")]
    Invalid(&'static str),
}

impl AccessError {
    /// Whether the grant is gone for good: a refresh token used twice or
    /// revoked (`invalid_grant`, `invalid_refresh_token`), or the app
    /// uninstalled. Retrying cannot mend it.
    pub fn is_final(&self) -> bool {
        matches!(self, AccessError::Refused(code)
            if matches!(code.as_str(), "invalid_grant" | "invalid_refresh_token" | "token_revoked"))
    }
}

/// Reads `oauth.v2.access`'s answer (an install's code exchanged, or a
/// token refreshed) at `now` into the installation it gives. A refresh's
/// answer names the team too; the caller keeps what it does not renew.
pub fn read_access(body: &[u8], now: DateTime<Utc>) -> Result<Installation, AccessError> {
    let (answer, token) = granted(body)?;
    let text = |field: &'static str| {
        answer
            .get(field)
            .and_then(Value::as_str)
            .ok_or(AccessError::Missing(field))
    };
    let enterprise = match answer.get("enterprise").and_then(|e| e.get("id")) {
        Some(Value::String(id)) => {
            Some(EnterpriseId::parse(id).map_err(|_| AccessError::Invalid("enterprise.id"))?)
        }
        _ => None,
    };
    // An org-wide install (Enterprise Grid) has no team: it is the
    // organisation's, kept under the organisation's id, which its events
    // name (`myao_slack::event`).
    let org_wide = answer
        .get("is_enterprise_install")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let team = match org_wide {
        true => answer
            .get("enterprise")
            .ok_or(AccessError::Missing("enterprise"))?,
        false => answer.get("team").ok_or(AccessError::Missing("team"))?,
    };
    let team_id = team
        .get("id")
        .and_then(Value::as_str)
        .ok_or(match org_wide {
            true => AccessError::Missing("enterprise.id"),
            false => AccessError::Missing("team.id"),
        })?;
    let rotation = read_rotation(&answer, now)?;
    Ok(Installation {
        team: TeamId::parse(team_id).map_err(|_| AccessError::Invalid("team.id"))?,
        enterprise,
        team_name: team
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .chars()
            .take(100)
            .collect(),
        bot_user_id: UserId::parse(text("bot_user_id")?)
            .map_err(|_| AccessError::Invalid("bot_user_id"))?,
        scopes: text("scope")?
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect(),
        bot_token: token,
        rotation,
        installed_at: now,
    })
}

/// Reads the answer to a refresh (`oauth.v2.access` with
/// `grant_type=refresh_token`) at `now` into `current` renewed: the new
/// bot token, refresh token and expiry; the rest stays as installed. A
/// token that no longer rotates (no refresh token in the answer) keeps
/// none.
pub fn read_refresh(
    body: &[u8],
    current: &Installation,
    now: DateTime<Utc>,
) -> Result<Installation, AccessError> {
    let (answer, token) = granted(body)?;
    if let Some(team) = answer
        .get("team")
        .and_then(|t| t.get("id"))
        .and_then(Value::as_str)
    {
        if team != current.team.as_str() {
            return Err(AccessError::Invalid("team.id"));
        }
    }
    let rotation = read_rotation(&answer, now)?;
    Ok(Installation {
        bot_token: token,
        rotation,
        ..current.clone()
    })
}

/// An `oauth.v2.access` answer that granted a bot token: the answer and
/// the token; Slack's refusal (its error code), or a broken answer, else.
fn granted(body: &[u8]) -> Result<(Value, Token), AccessError> {
    let answer: Value = serde_json::from_slice(body).map_err(|_| AccessError::NotJson)?;
    if answer.get("ok").and_then(Value::as_bool) != Some(true) {
        let code = answer
            .get("error")
            .and_then(Value::as_str)
            .unwrap_or("unknown_error");
        // Slack's error codes are short words; anything else is cut.
        return Err(AccessError::Refused(code.chars().take(60).collect()));
    }
    let token = answer
        .get("access_token")
        .and_then(Value::as_str)
        .ok_or(AccessError::Missing("access_token"))?;
    if !token.starts_with("xoxb-") && !token.starts_with("xoxe.xoxb-") {
        return Err(AccessError::Invalid("access_token"));
    }
    let token = Token::new(token);
    Ok((answer, token))
}

/// The refresh token and expiry of an answer, when it has them.
fn read_rotation(answer: &Value, now: DateTime<Utc>) -> Result<Option<Rotation>, AccessError> {
    match (answer.get("refresh_token"), answer.get("expires_in")) {
        (Some(Value::String(refresh)), Some(expires_in)) => {
            let expires_at = expires_in
                .as_i64()
                .filter(|s| *s > 0)
                .and_then(Duration::try_seconds)
                .and_then(|d| now.checked_add_signed(d))
                .ok_or(AccessError::Invalid("expires_in"))?;
            Ok(Some(Rotation {
                refresh_token: Token::new(refresh),
                expires_at,
            }))
        }
        _ => Ok(None),
    }
}

/// A one-time `state` for an install link: 32 hex digits from two random
/// draws (the caller's random source), unguessable and kept with a TTL
/// ([`STATE_MINUTES`]) until the redirect takes it back.
pub fn new_state(draws: [u64; 2]) -> String {
    format!("{:016x}{:016x}", draws[0], draws[1])
}

/// Whether `state` has the shape [`new_state`] gives: a redirect's
/// anything else is refused before any lookup.
pub fn is_state(state: &str) -> bool {
    state.len() == 32 && state.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Slack's authorize page for installing the app with `scopes` (bot
/// scopes), coming back with `state` to `redirect_uri`, or (`None`) to the
/// app's one redirect URL.
pub fn authorize_url(
    client_id: &str,
    scopes: &[&str],
    state: &str,
    redirect_uri: Option<&str>,
) -> String {
    let mut url = format!(
        "https://slack.com/oauth/v2/authorize?client_id={}&scope={}&state={}",
        form_encoded(client_id),
        form_encoded(&scopes.join(",")),
        form_encoded(state),
    );
    if let Some(redirect) = redirect_uri {
        url.push_str("&redirect_uri=");
        url.push_str(&form_encoded(redirect));
    }
    url
}

/// `text` percent-encoded for a query or a form (RFC 3986's unreserved
/// characters kept).
pub fn form_encoded(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                out.push(char::from(b));
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn at(secs: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(secs, 0).unwrap()
    }

    fn access(extra: Value) -> Vec<u8> {
        let mut body = json!({
            "ok": true, "access_token": "xoxb-fake-abc", "token_type": "bot",
            "scope": "app_mentions:read,channels:history,chat:write",
            "bot_user_id": "U0BOT", "app_id": "A0APP",
            "team": {"id": "T0ACME", "name": "Acme"}, "enterprise": null,
            "is_enterprise_install": false
        });
        if let (Some(b), Some(e)) = (body.as_object_mut(), extra.as_object()) {
            b.extend(e.clone());
        }
        serde_json::to_vec(&body).unwrap()
    }

    #[test]
    fn an_install_answer_is_an_installation_whose_token_never_shows() {
        let install = read_access(&access(json!({})), at(1_000)).unwrap();
        assert_eq!(install.team.as_str(), "T0ACME");
        assert_eq!(install.team_name, "Acme");
        assert_eq!(install.bot_user_id.as_str(), "U0BOT");
        assert!(install.has_scope("chat:write") && !install.has_scope("reactions:read"));
        assert_eq!(install.bot_token.expose(), "xoxb-fake-abc");
        assert_eq!(install.rotation, None);
        assert!(
            !install.due_for_renewal(at(10_000_000)),
            "it does not expire"
        );
        let shown = format!("{install:?} {}", install.bot_token);
        assert!(!shown.contains("xoxb"), "{shown}");
        // Kept whole in the store.
        let kept = serde_json::to_string(&install).unwrap();
        assert_eq!(
            serde_json::from_str::<Installation>(&kept).unwrap(),
            install
        );
    }

    /// An org-wide install (Enterprise Grid) has no team: the installation
    /// is the organisation's, under its id and name; an answer that says
    /// org-wide without an organisation is refused.
    #[test]
    fn an_org_wide_install_is_the_organisations() {
        let body = access(json!({
            "team": null, "is_enterprise_install": true,
            "enterprise": {"id": "E0GRID", "name": "Grid Inc"}
        }));
        let install = read_access(&body, at(0)).unwrap();
        assert_eq!(install.team.as_str(), "E0GRID");
        assert_eq!(install.team_name, "Grid Inc");
        assert_eq!(
            install.enterprise.as_ref().map(EnterpriseId::as_str),
            Some("E0GRID")
        );
        let broken = access(json!({"team": null, "is_enterprise_install": true}));
        assert_eq!(
            read_access(&broken, at(0)),
            Err(AccessError::Missing("enterprise.id"))
        );
        // Installed in one workspace of an organisation: that workspace's.
        let one = access(json!({"enterprise": {"id": "E0GRID", "name": "Grid Inc"}}));
        assert_eq!(read_access(&one, at(0)).unwrap().team.as_str(), "T0ACME");
    }

    #[test]
    fn under_rotation_it_is_renewed_two_hours_before_it_expires() {
        let body = access(json!({
            "access_token": "xoxe.xoxb-fake1-rot", "refresh_token": "xoxe-fake-refresh",
            "expires_in": 43_200,
            "enterprise": {"id": "E0GRID", "name": "Grid"}
        }));
        let install = read_access(&body, at(0)).unwrap();
        let rotation = install.rotation.clone().unwrap();
        assert_eq!(rotation.expires_at, at(43_200));
        assert_eq!(
            install.enterprise.as_ref().map(EnterpriseId::as_str),
            Some("E0GRID")
        );
        assert!(!install.due_for_renewal(at(43_200 - 7_201)));
        assert!(install.due_for_renewal(at(43_200 - 7_200)));
        assert!(install.due_for_renewal(at(50_000)), "past it too");
        assert!(!format!("{install:?}").contains("xoxe"), "{install:?}");
    }

    #[test]
    fn refusals_and_broken_answers_are_errors_that_quote_no_token() {
        let refused = br#"{"ok": false, "error": "invalid_grant"}"#;
        let error = read_access(refused, at(0)).unwrap_err();
        assert_eq!(error, AccessError::Refused("invalid_grant".into()));
        assert!(error.is_final());
        let code = read_access(br#"{"ok": false, "error": "invalid_code"}"#, at(0)).unwrap_err();
        assert!(!code.is_final());
        assert_eq!(read_access(b"<html>", at(0)), Err(AccessError::NotJson));
        let user_token = access(json!({"access_token": "xoxp-user"}));
        let error = read_access(&user_token, at(0)).unwrap_err();
        assert_eq!(error, AccessError::Invalid("access_token"));
        assert!(!error.to_string().contains("xoxp"));
        let no_team = access(json!({"team": null}));
        assert_eq!(
            read_access(&no_team, at(0)),
            Err(AccessError::Missing("team.id"))
        );
        for expires_in in [
            json!(-5),
            json!(i64::MAX),
            json!(9_000_000_000_000_i64),
            json!("12h"),
        ] {
            let bad = access(json!({"refresh_token": "r", "expires_in": expires_in}));
            assert_eq!(
                read_access(&bad, at(0)),
                Err(AccessError::Invalid("expires_in")),
                "{expires_in}"
            );
        }
    }

    #[test]
    fn a_refresh_renews_the_tokens_and_keeps_the_rest() {
        let body = access(json!({
            "access_token": "xoxe.xoxb-fake1-rot", "refresh_token": "xoxe-fake-r1", "expires_in": 43_200
        }));
        let installed = read_access(&body, at(0)).unwrap();
        let refreshed = br#"{"ok": true, "access_token": "xoxe.xoxb-fake1-new",
            "refresh_token": "xoxe-fake-r2", "expires_in": 43200, "token_type": "bot",
            "team": {"id": "T0ACME"}}"#;
        let renewed = read_refresh(refreshed, &installed, at(40_000)).unwrap();
        assert_eq!(renewed.bot_token.expose(), "xoxe.xoxb-fake1-new");
        let rotation = renewed.rotation.clone().unwrap();
        assert_eq!(rotation.refresh_token.expose(), "xoxe-fake-r2");
        assert_eq!(rotation.expires_at, at(83_200));
        assert_eq!(
            (
                renewed.team_name.as_str(),
                &renewed.scopes,
                renewed.installed_at
            ),
            ("Acme", &installed.scopes, at(0)),
            "the rest as installed"
        );
        let other_team =
            br#"{"ok": true, "access_token": "xoxe.xoxb-x", "team": {"id": "T0OTHER"}}"#;
        assert_eq!(
            read_refresh(other_team, &installed, at(1)),
            Err(AccessError::Invalid("team.id"))
        );
        let spent = br#"{"ok": false, "error": "invalid_refresh_token"}"#;
        assert!(read_refresh(spent, &installed, at(1))
            .unwrap_err()
            .is_final());
    }

    #[test]
    fn the_install_link_carries_its_state_and_is_encoded() {
        let state = new_state([0x0123_4567_89ab_cdef, 42]);
        assert_eq!(state, "0123456789abcdef000000000000002a");
        assert!(is_state(&state));
        assert!(!is_state("0123") && !is_state(&"g".repeat(32)));
        let url = authorize_url(
            "123.456",
            &["chat:write", "channels:history"],
            &state,
            Some("https://abc.lambda-url.us-east-1.on.aws/slack/oauth_redirect"),
        );
        assert_eq!(
            url,
            "https://slack.com/oauth/v2/authorize?client_id=123.456\
             &scope=chat%3Awrite%2Cchannels%3Ahistory&state=0123456789abcdef000000000000002a\
             &redirect_uri=https%3A%2F%2Fabc.lambda-url.us-east-1.on.aws%2Fslack%2Foauth_redirect"
        );
        let one = authorize_url("1", &["chat:write"], &state, None);
        assert!(!one.contains("redirect_uri"), "{one}");
    }
}
