//! Slack's interactivity: the feedback buttons under the bot's unprompted
//! posts ([`feedback_blocks`]), and a click on them as Slack sends it back
//! ([`form_interaction`], [`parse_interaction`]).
//!
//! Slack posts an interaction to the request URL of the app's
//! interactivity as a form, `payload=<JSON>` URL-encoded, signed like an
//! event; Socket Mode delivers the same JSON in an `interactive` envelope.

use serde_json::{json, Value};

use myao_domain::hints::Hint;
use myao_domain::ids::{ChannelId, IdError, Ts, UserId};

use crate::event::EventParseError;

/// The `action_id` of the bot's feedback buttons: a click of any other
/// action is not a hint.
pub const FEEDBACK_ACTION: &str = "myao_feedback";
/// The value of the button that welcomes the post.
pub const POSITIVE: &str = "positive";
/// The value of the button that finds it too much.
pub const NEGATIVE: &str = "negative";

/// The most characters (UTF-16 code units, as Slack counts them) of a
/// section block's text.
pub const SECTION_MAX: usize = 3_000;

/// The blocks of a post with feedback buttons: `text` (mrkdwn, escaped
/// already) in sections of at most [`SECTION_MAX`] characters, cut at a
/// line or a space and never inside an escape or a `<...>` link, then
/// Slack's feedback buttons (a `context_actions` block). The sections are
/// `verbatim`: Slack reads their text as it reads a message's `text`, and
/// links or mentions nobody, as the escaping meant.
pub fn feedback_blocks(text: &str) -> Value {
    let mut blocks: Vec<Value> = sections(text)
        .into_iter()
        .map(|part| {
            json!({
                "type": "section",
                "text": {"type": "mrkdwn", "text": part, "verbatim": true},
            })
        })
        .collect();
    let button = |emoji: &str, value: &str, label: &str| {
        json!({
            "text": {"type": "plain_text", "text": emoji, "emoji": true},
            "value": value,
            "accessibility_label": label,
        })
    };
    blocks.push(json!({
        "type": "context_actions",
        "elements": [{
            "type": "feedback_buttons",
            "action_id": FEEDBACK_ACTION,
            "positive_button": button("👍", POSITIVE, "Good to hear from myao here"),
            "negative_button": button("👎", NEGATIVE, "Too much from myao here"),
        }],
    }));
    Value::Array(blocks)
}

/// `text` in parts of at most [`SECTION_MAX`] UTF-16 code units (none for
/// an empty text: a section's text may not be empty).
fn sections(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut rest = text.trim();
    while !rest.is_empty() {
        let cut = cut_at(rest, SECTION_MAX);
        let (part, after) = rest.split_at(cut);
        if !part.trim().is_empty() {
            parts.push(part.trim_end());
        }
        rest = after.trim_start();
    }
    parts
}

/// Where to cut `text` so that what comes before holds at most `max`
/// UTF-16 code units: at its end when it fits; else after the last line
/// break, or else the last space, of the part that fits, never inside an
/// escape (`&amp;`) or a link (`<@U123>`); else where it stops fitting.
/// Always past 0 for a text that is not empty.
fn cut_at(text: &str, max: usize) -> usize {
    let mut units = 0;
    let mut fits = text.len();
    for (at, c) in text.char_indices() {
        units += c.len_utf16();
        if units > max {
            fits = at;
            break;
        }
    }
    if fits == text.len() {
        return fits;
    }
    let head = &text[..fits];
    // An escape or a link left open at the end is cut before it.
    let open = [('&', ';'), ('<', '>')]
        .iter()
        .filter_map(|&(start, end)| {
            let at = head.rfind(start)?;
            (!head[at..].contains(end)).then_some(at)
        })
        .min();
    let head = open.map_or(head, |at| &head[..at]);
    let cut = head
        .rfind('\n')
        .or_else(|| head.rfind(' '))
        .filter(|at| *at > 0)
        .unwrap_or(head.len());
    // Nothing to cut at (one link longer than a section): where it stops
    // fitting.
    if cut == 0 {
        fits
    } else {
        cut
    }
}

/// An interaction Slack sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Interaction {
    /// A click on the bot's feedback buttons.
    Feedback(Feedback),
    /// Anything else (Slack's `type` for it; `block_actions` for another
    /// action): acknowledged, nothing done.
    Other { kind: String },
}

/// A click on one of the bot's feedback buttons.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Feedback {
    /// Who clicked.
    pub user: UserId,
    /// The post it is under.
    pub channel: ChannelId,
    pub post: Ts,
    /// [`Hint::Positive`] or [`Hint::Negative`].
    pub hint: Hint,
    /// Who wrote the post, when the payload carries it (`message.user`).
    pub author: Option<UserId>,
    /// Whether the payload says an app wrote it (`message.bot_id`).
    pub by_app: bool,
    /// The app it was sent to (`api_app_id`), if given.
    pub api_app_id: Option<String>,
    /// The installation it comes through: the workspace's (`team.id`), or
    /// for an org-wide install the organisation's (`enterprise.id`).
    pub team_id: Option<String>,
}

/// Why an interaction could not be read: answered with 400. Its text
/// never quotes the payload.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InteractionError {
    #[error("the interaction's form is not URL-encoded UTF-8")]
    BadForm,
    #[error("the interaction's payload: {0}")]
    Payload(#[from] EventParseError),
}

/// The interaction a request body carries, when it is a form with a
/// `payload` field (Slack's interactivity), or `None` for any other body
/// (an Events API body is JSON).
pub fn form_interaction(body: &[u8]) -> Option<Result<Interaction, InteractionError>> {
    let start = body.iter().position(|b| !b.is_ascii_whitespace())?;
    if body[start] == b'{' {
        return None;
    }
    let payload = body
        .split(|b| *b == b'&')
        .find_map(|pair| pair.strip_prefix(b"payload="))?;
    Some(
        form_decoded(payload)
            .ok_or(InteractionError::BadForm)
            .and_then(|json| parse_interaction(json.as_bytes())),
    )
}

/// A form value decoded: `+` is a space, `%XX` a byte; `None` when an
/// escape is broken or the bytes are not UTF-8.
fn form_decoded(value: &[u8]) -> Option<String> {
    let mut bytes = Vec::with_capacity(value.len());
    let mut rest = value;
    while let Some((&b, tail)) = rest.split_first() {
        rest = tail;
        match b {
            b'+' => bytes.push(b' '),
            b'%' => {
                let hex = rest.get(..2)?;
                let text = std::str::from_utf8(hex).ok()?;
                bytes.push(u8::from_str_radix(text, 16).ok()?);
                rest = &rest[2..];
            }
            b => bytes.push(b),
        }
    }
    String::from_utf8(bytes).ok()
}

/// Parses an interaction's JSON payload: a `block_actions` payload whose
/// actions hold a click of [`FEEDBACK_ACTION`] (`positive` or `negative`)
/// is [`Interaction::Feedback`], and needs who clicked (`user.id`) and the
/// post (`channel.id` or `container.channel_id`, `container.message_ts` or
/// `message.ts`); any other payload is [`Interaction::Other`].
pub fn parse_interaction(payload: &[u8]) -> Result<Interaction, InteractionError> {
    let v: Value = serde_json::from_slice(payload).map_err(|e| EventParseError::not_json(&e))?;
    let kind = v
        .get("type")
        .and_then(Value::as_str)
        .ok_or(EventParseError::Missing("type"))?;
    let hint = match kind {
        "block_actions" => clicked(&v),
        _ => None,
    };
    let Some(hint) = hint else {
        return Ok(Interaction::Other {
            kind: kind.to_owned(),
        });
    };
    let message = v.get("message");
    let container = v.get("container");
    Ok(Interaction::Feedback(Feedback {
        user: id_at(&v, &["user", "id"], UserId::parse, "user.id")?,
        channel: first_id(
            &v,
            &[&["channel", "id"], &["container", "channel_id"]],
            ChannelId::parse,
            "channel.id",
        )?,
        post: first_id(
            &v,
            &[&["container", "message_ts"], &["message", "ts"]],
            Ts::parse,
            "container.message_ts",
        )?,
        hint,
        author: message
            .and_then(|m| m.get("user"))
            .and_then(Value::as_str)
            .and_then(|u| UserId::parse(u).ok()),
        by_app: message.is_some_and(|m| m.get("bot_id").is_some_and(|b| !b.is_null()))
            || container.is_some_and(|c| c.get("type").and_then(Value::as_str) == Some("bot")),
        api_app_id: text_at(&v, &["api_app_id"]).map(str::to_owned),
        team_id: installation_of(&v),
    }))
}

/// The installation a payload comes through: an org-wide install's
/// (Enterprise Grid) is the organisation's, kept under its id, as its
/// events are ([`crate::event`]); any other, the workspace's (`team.id`).
fn installation_of(v: &Value) -> Option<String> {
    let org_wide = v.get("is_enterprise_install").and_then(Value::as_bool) == Some(true);
    match org_wide {
        true => text_at(v, &["enterprise", "id"]),
        false => text_at(v, &["team", "id"]),
    }
    .map(str::to_owned)
}

/// The hint of the first click of the bot's feedback buttons among a
/// payload's actions.
fn clicked(payload: &Value) -> Option<Hint> {
    payload
        .get("actions")?
        .as_array()?
        .iter()
        .filter(|a| a.get("action_id").and_then(Value::as_str) == Some(FEEDBACK_ACTION))
        .find_map(|a| match a.get("value").and_then(Value::as_str)? {
            POSITIVE => Some(Hint::Positive),
            NEGATIVE => Some(Hint::Negative),
            _ => None,
        })
}

/// The string at `path` of `v`.
fn text_at<'a>(v: &'a Value, path: &[&str]) -> Option<&'a str> {
    path.iter()
        .try_fold(v, |at, key| at.get(key))
        .and_then(Value::as_str)
}

/// The id at `path`, read with `parse`; `field` names it in an error.
fn id_at<T>(
    v: &Value,
    path: &[&str],
    parse: impl Fn(&str) -> Result<T, IdError>,
    field: &'static str,
) -> Result<T, EventParseError> {
    let text = text_at(v, path).ok_or(EventParseError::Missing(field))?;
    parse(text).map_err(|source| EventParseError::BadId { field, source })
}

/// The id at the first of `paths` the payload has.
fn first_id<T>(
    v: &Value,
    paths: &[&[&str]],
    parse: impl Fn(&str) -> Result<T, IdError>,
    field: &'static str,
) -> Result<T, EventParseError> {
    let path = paths
        .iter()
        .find(|p| text_at(v, p).is_some())
        .ok_or(EventParseError::Missing(field))?;
    id_at(v, path, parse, field)
}

#[cfg(test)]
mod tests;
