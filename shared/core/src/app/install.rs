//! "Add to Slack": the OAuth flow that installs the app in a workspace
//! (issue 46). `GET /slack/install` sends the person to Slack's consent
//! page with a one-time `state`; `GET /slack/oauth_redirect` brings them
//! back with a `code`, which is exchanged for the workspace's installation
//! only when the `state` is one this stack gave, has not used or let
//! expire, and comes back to the browser it was given to (a short-lived
//! cookie holds it: a link someone else started cannot install their
//! workspace from yours). Each answer is a small page saying what happened.

use std::sync::Arc;

use chrono::Duration;

use crate::ports::{Clock, Installations, SettingsProvider, SlackOAuth, Unguessable};
use myao_domain::install::{authorize_url, is_state, new_state, AccessError, STATE_MINUTES};

/// The path that starts an install.
pub const INSTALL_PATH: &str = "/slack/install";
/// The path Slack's consent page comes back to.
pub const REDIRECT_PATH: &str = "/slack/oauth_redirect";

/// The bot scopes an install asks for: the manifests' (a test holds them
/// to `infra/slack-app-manifest.yaml`).
pub const BOT_SCOPES: &[&str] = &[
    "app_mentions:read",
    "channels:history",
    "channels:read",
    "chat:write",
    "groups:history",
    "groups:read",
    "im:history",
    "im:read",
    "mpim:history",
    "mpim:read",
    "emoji:read",
    "reactions:write",
    "reactions:read",
    "files:read",
    "users:read",
];

/// An answer of the flow: a redirect, or a page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    pub status: u16,
    /// Where a redirect goes.
    pub location: Option<String>,
    /// A `Set-Cookie` header's value to send with it.
    pub cookie: Option<String>,
    /// The page's HTML.
    pub body: String,
}

/// The cookie that ties an install's `state` to the browser it was given to.
pub const STATE_COOKIE: &str = "myao_install_state";

impl Page {
    fn redirect(to: String) -> Page {
        Page {
            status: 302,
            location: Some(to),
            cookie: None,
            body: String::new(),
        }
    }

    /// A page of one heading and one line; `line` is escaped.
    fn saying(status: u16, heading: &str, line: &str) -> Page {
        Page {
            status,
            location: None,
            cookie: None,
            body: format!(
                "<!doctype html><html><head><meta charset=\"utf-8\"><title>myao</title></head>\
                 <body><h1>{}</h1><p>{}</p></body></html>",
                html_escaped(heading),
                html_escaped(line)
            ),
        }
    }
}

/// `text` safe inside HTML.
fn html_escaped(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// What the flow needs: the store of installations and states, Slack's
/// OAuth, the clock and unguessable draws; the app's client id, the bot
/// scopes it asks for, and the redirect URL when the app has several.
pub struct InstallFlow {
    pub store: Arc<dyn Installations>,
    pub oauth: Arc<dyn SlackOAuth>,
    pub clock: Arc<dyn Clock>,
    pub unguessable: Arc<dyn Unguessable>,
    pub client_id: String,
    pub scopes: Vec<String>,
    pub redirect_uri: Option<String>,
}

impl InstallFlow {
    /// `GET /slack/install`: a fresh state kept for [`STATE_MINUTES`], and
    /// the person sent to Slack's consent page with it.
    pub async fn start(&self) -> Page {
        let state = new_state(self.unguessable.draws());
        let until = self.clock.now() + Duration::minutes(STATE_MINUTES);
        if let Err(error) = self.store.put_oauth_state(&state, until).await {
            tracing::error!(%error, "install state not kept");
            return unavailable();
        }
        let scopes: Vec<&str> = self.scopes.iter().map(String::as_str).collect();
        let redirect = self.redirect_uri.as_deref();
        let mut page = Page::redirect(authorize_url(&self.client_id, &scopes, &state, redirect));
        page.cookie = Some(format!(
            "{STATE_COOKIE}={state}; Max-Age={}; Path=/slack; HttpOnly; Secure; SameSite=Lax",
            STATE_MINUTES * 60
        ));
        page
    }

    /// `GET /slack/oauth_redirect?code=...&state=...` (its query): the
    /// state taken back once, then the code exchanged and the
    /// installation kept. A person who cancelled on Slack's page comes
    /// back with `error=access_denied` (and the state, which is spent).
    /// `cookies`: the request's `Cookie` header, which must hold the same
    /// state ([`STATE_COOKIE`]).
    pub async fn finish(&self, query: &str, cookies: Option<&str>) -> Page {
        let field = |name: &str| query_field(query, name);
        if let Some(error) = field("error") {
            // A cancel spends its state: the link cannot serve after it.
            if let Some(state) = field("state").filter(|s| is_state(s)) {
                if let Err(error) = self.store.take_oauth_state(&state).await {
                    tracing::warn!(%error, "a cancelled install's state not spent");
                }
            }
            // Slack's word for a cancel; anything else is not shown back.
            let line = match error.as_str() {
                "access_denied" => {
                    "You cancelled on Slack's page (access_denied). Nothing was installed."
                }
                _ => "Slack did not complete the install. Nothing was installed.",
            };
            return Page::saying(400, "Not installed", line);
        }
        let (Some(code), Some(state)) = (field("code"), field("state")) else {
            return Page::saying(400, "Not installed", "The link is not one of Slack's.");
        };
        if !is_state(&state) || !same_text(cookie(cookies, STATE_COOKIE), Some(&state)) {
            return refused_state();
        }
        match self.store.take_oauth_state(&state).await {
            Ok(true) => {}
            Ok(false) => return refused_state(),
            Err(error) => {
                tracing::error!(%error, "install state not read");
                return unavailable();
            }
        }
        self.exchange(&code).await
    }

    /// The code exchanged and the installation kept. An exchange that
    /// failed on the way (a timeout, Slack's 5xx) is tried once more before
    /// the page says so: Slack may count the app installed already, and the
    /// person is still on the page. Had the first reached Slack, the second
    /// is refused (`invalid_code`) and the page says to start again.
    async fn exchange(&self, code: &str) -> Page {
        let redirect = self.redirect_uri.as_deref().unwrap_or_default();
        let now = self.clock.now();
        let mut exchanged = self.oauth.exchange(code, redirect, now).await;
        if let Some(error) = exchanged.as_ref().err().filter(|e| e.is_retryable()) {
            tracing::warn!(%error, "oauth.v2.access failed; trying once more");
            exchanged = self.oauth.exchange(code, redirect, now).await;
        }
        let installation = match exchanged {
            Ok(Ok(installation)) => installation,
            Ok(Err(refused)) => return refused_by_slack(&refused),
            Err(error) => {
                tracing::error!(%error, "oauth.v2.access failed");
                return unavailable();
            }
        };
        if let Err(error) = self.store.put_installation(&installation).await {
            tracing::error!(%error, "installation not kept");
            return unavailable();
        }
        tracing::info!(team = %installation.team, "installed");
        let name = match installation.team_name.as_str() {
            "" => installation.team.to_string(),
            named => named.to_owned(),
        };
        Page::saying(
            200,
            "myao is installed",
            &format!("myao is in {name} now. Invite it to a channel: /invite @myao"),
        )
    }
}

/// A state this stack did not give, used already, or expired.
fn refused_state() -> Page {
    Page::saying(
        400,
        "Not installed",
        &format!(
            "This link was used already, has expired, or is not ours. Start again at {INSTALL_PATH}."
        ),
    )
}

fn refused_by_slack(refused: &AccessError) -> Page {
    tracing::warn!(%refused, "Slack refused the install");
    Page::saying(
        400,
        "Not installed",
        &format!("{refused}. Start again at {INSTALL_PATH}."),
    )
}

fn unavailable() -> Page {
    Page::saying(
        503,
        "Not installed yet",
        &format!(
            "Something on our side is not answering. Try again in a minute at {INSTALL_PATH}."
        ),
    )
}

/// The value of the cookie `name` in a `Cookie` header, if there.
fn cookie<'a>(header: Option<&'a str>, name: &str) -> Option<&'a str> {
    header?.split(';').find_map(|pair| {
        let (key, value) = pair.trim().split_once('=')?;
        (key == name).then_some(value)
    })
}

/// Whether both are there and the same, in a time that does not tell how
/// much of them matched.
fn same_text(a: Option<&str>, b: Option<&str>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) if a.len() == b.len() => {
            a.bytes()
                .zip(b.bytes())
                .fold(0u8, |diff, (x, y)| diff | (x ^ y))
                == 0
        }
        _ => false,
    }
}

/// The decoded value of `name` in a query string, if there.
fn query_field(query: &str, name: &str) -> Option<String> {
    query.split('&').find_map(|pair| {
        let (key, value) = pair.split_once('=')?;
        (key == name).then(|| percent_decoded(value)).flatten()
    })
}

/// `text` with `+` and `%XX` decoded; `None` when that is not UTF-8 or an
/// escape is broken.
fn percent_decoded(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' => {
                let hex = text.get(i + 1..i + 3)?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 2;
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8(out).ok()
}

/// "Add to Slack" on a deployed stack (the install function's Function
/// URL): the flow as the settings have it at each request, so that setting
/// `slack_client_id` takes no redeploy. Without it, the stack is offered
/// to no other workspace: every path is not found.
pub struct Installer {
    pub store: Arc<dyn Installations>,
    pub oauth: Arc<dyn SlackOAuth>,
    pub clock: Arc<dyn Clock>,
    pub unguessable: Arc<dyn Unguessable>,
    pub settings: Arc<dyn SettingsProvider>,
}

impl Installer {
    /// The page for a `GET` of `path`, with its `query` and its `Cookie`
    /// header.
    pub async fn answer(&self, path: &str, query: &str, cookies: Option<&str>) -> Page {
        let settings = match self.settings.current().await {
            Ok(settings) => settings,
            Err(error) => {
                tracing::error!(%error, "settings unavailable");
                return unavailable();
            }
        };
        let not_found = |line: &str| Page::saying(404, "Not found", line);
        let Some(client_id) = settings.slack_client_id.clone() else {
            return not_found("This myao is not offered to other workspaces.");
        };
        let flow = InstallFlow {
            store: self.store.clone(),
            oauth: self.oauth.clone(),
            clock: self.clock.clone(),
            unguessable: self.unguessable.clone(),
            client_id,
            scopes: BOT_SCOPES.iter().map(|s| (*s).to_owned()).collect(),
            // The app's own redirect URL (its manifest's), which Slack uses
            // when none is sent.
            redirect_uri: None,
        };
        match path {
            INSTALL_PATH => flow.start().await,
            REDIRECT_PATH => flow.finish(query, cookies).await,
            _ => not_found(&format!("Add to Slack is at {INSTALL_PATH}.")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_fields_are_decoded_and_broken_ones_are_none() {
        let q = "code=a%2Fb+c&state=0123&error=";
        assert_eq!(query_field(q, "code").as_deref(), Some("a/b c"));
        assert_eq!(query_field(q, "state").as_deref(), Some("0123"));
        assert_eq!(query_field(q, "error").as_deref(), Some(""));
        assert_eq!(query_field(q, "missing"), None);
        assert_eq!(query_field("code=%zz", "code"), None);
        assert_eq!(query_field("code=%f", "code"), None);
        assert_eq!(query_field("code=%ff", "code"), None, "not UTF-8");
    }

    #[test]
    fn the_state_cookie_is_read_from_the_header_and_compared_whole() {
        let header = Some("a=1; myao_install_state=abc ; b=2");
        assert_eq!(cookie(header, STATE_COOKIE), Some("abc"));
        assert_eq!(cookie(Some("myao_install_statex=abc"), STATE_COOKIE), None);
        assert_eq!(cookie(None, STATE_COOKIE), None);
        assert!(same_text(Some("abc"), Some("abc")));
        assert!(!same_text(Some("abc"), Some("abd")));
        assert!(!same_text(Some("ab"), Some("abc")));
        assert!(!same_text(None, Some("abc")));
    }

    #[test]
    fn a_page_escapes_what_it_says() {
        let page = Page::saying(400, "Not <installed>", "a & b");
        assert!(page.body.contains("Not &lt;installed&gt;") && page.body.contains("a &amp; b"));
    }
}
