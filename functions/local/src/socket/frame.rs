//! The frames of a Socket Mode connection: what Slack sends ([`Frame`],
//! read by [`parse_frame`]) and the acknowledgement sent back ([`ack`]).

use serde_json::{json, Value};

/// One message from Slack over the socket.
#[derive(Debug, Clone, PartialEq)]
pub enum Frame {
    /// The connection is ready.
    Hello,
    /// An envelope: to acknowledge by `id`, then to act on its content.
    Envelope {
        id: String,
        /// 0 on the first delivery.
        retry_attempt: u64,
        content: Content,
    },
    /// Slack is about to close the connection, for this reason.
    Disconnect(Reason),
    /// A message of another `type`.
    Other(String),
}

/// What an envelope carries.
#[derive(Debug, Clone, PartialEq)]
pub enum Content {
    /// An Events API body, as HTTP would have posted it.
    Event(Vec<u8>),
    /// An interaction's JSON (`interactive`: a click of the feedback
    /// buttons, ...), as HTTP would have posted it in its form.
    Interaction(Vec<u8>),
    /// Another envelope type (`slash_commands`, ...), or an `events_api` or
    /// `interactive` envelope without a payload: acknowledged, ignored.
    Ignored(String),
}

/// Why Slack disconnects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reason {
    /// The connection will be closed in a few seconds.
    Warning,
    /// Slack asks for a new connection.
    RefreshRequested,
    /// Socket Mode was switched off for the app.
    LinkDisabled,
    Other(String),
}

/// What a `disconnect` calls for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Open a new connection now, and close the old one once it is open.
    Replace,
    /// Stop serving: no connection can be opened.
    Stop,
}

impl Reason {
    fn parse(text: &str) -> Reason {
        match text {
            "warning" => Reason::Warning,
            "refresh_requested" => Reason::RefreshRequested,
            "link_disabled" => Reason::LinkDisabled,
            other => Reason::Other(other.to_owned()),
        }
    }

    /// What to do about it. An unknown reason is taken as a warning: a
    /// connection Slack means to close is best replaced before it is.
    pub fn next(&self) -> Next {
        match self {
            Reason::LinkDisabled => Next::Stop,
            Reason::Warning | Reason::RefreshRequested | Reason::Other(_) => Next::Replace,
        }
    }

    pub(super) fn as_str(&self) -> &str {
        match self {
            Reason::Warning => "warning",
            Reason::RefreshRequested => "refresh_requested",
            Reason::LinkDisabled => "link_disabled",
            Reason::Other(other) => other,
        }
    }
}

/// A message that is not one of Slack's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    /// Not a JSON object. (What the parser said may quote the message, so
    /// it is not kept: conversations stay out of the logs.)
    #[error("not a JSON object")]
    NotJson,
    #[error("an envelope without an envelope_id")]
    NoEnvelopeId,
}

/// Reads one text message from Slack.
pub fn parse_frame(text: &str) -> Result<Frame, FrameError> {
    let frame: Value = serde_json::from_str(text).map_err(|_| FrameError::NotJson)?;
    if !frame.is_object() {
        return Err(FrameError::NotJson);
    }
    let field = |name: &str| frame.get(name).and_then(Value::as_str);
    let kind = field("type").unwrap_or_default();
    if let Some(id) = field("envelope_id") {
        // Written back as the HTTP body it stands for, for the parser
        // ingest uses. It was JSON: it serializes.
        let body = |payload: &Value| serde_json::to_vec(payload).unwrap_or_default();
        let content = match frame.get("payload") {
            Some(payload) if kind == "events_api" && payload.is_object() => {
                Content::Event(body(payload))
            }
            Some(payload) if kind == "interactive" && payload.is_object() => {
                Content::Interaction(body(payload))
            }
            _ => Content::Ignored(kind.to_owned()),
        };
        return Ok(Frame::Envelope {
            id: id.to_owned(),
            retry_attempt: frame
                .get("retry_attempt")
                .and_then(Value::as_u64)
                .unwrap_or(0),
            content,
        });
    }
    match kind {
        "hello" => Ok(Frame::Hello),
        "disconnect" => Ok(Frame::Disconnect(Reason::parse(
            field("reason").unwrap_or_default(),
        ))),
        "events_api" | "slash_commands" | "interactive" => Err(FrameError::NoEnvelopeId),
        other => Ok(Frame::Other(other.to_owned())),
    }
}

/// The acknowledgement of the envelope `id`.
pub fn ack(id: &str) -> String {
    json!({ "envelope_id": id }).to_string()
}
