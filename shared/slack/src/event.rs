//! Slack Events API payloads, parsed into what the bot acts on.

use serde::Deserialize;
use serde_json::Value;

use myao_domain::channel::VisibilityChange;
use myao_domain::files::{self, SharedFile};
use myao_domain::ids::{ChannelId, IdError, Ts, UserId};
use myao_domain::message::Message;
use myao_domain::reply::EmojiName;

/// A request body from the Events API.
// One per request, never held in bulk: boxing the event would only add an
// allocation.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum Envelope {
    /// Slack checking the request URL: answer with the challenge.
    UrlVerification { challenge: String },
    /// An event.
    Event {
        event_id: String,
        /// The bot's own user id, from `authorizations`.
        bot_user_id: Option<UserId>,
        /// The app the event was sent to (`api_app_id`), if given.
        api_app_id: Option<String>,
        /// The workspace the event is delivered for: its bot
        /// authorization's team (in a channel shared between workspaces,
        /// the one that installed the app), else the envelope's `team_id`.
        team_id: Option<String>,
        event: SlackEvent,
    },
    /// Another envelope type (e.g. `app_rate_limited`): acknowledged, ignored.
    Other { kind: String },
}

/// What an event means for the bot.
#[derive(Debug, Clone, PartialEq)]
pub enum SlackEvent {
    /// A new message, from a person or a bot.
    NewMessage {
        message: Message,
        /// Delivered as `app_mention`.
        app_mention: bool,
        /// Written in a direct message with the bot (`channel_type: im`).
        direct: bool,
    },
    /// The text of a stored message changed.
    Edited {
        channel: ChannelId,
        ts: Ts,
        /// Its thread's root, when it is a reply.
        thread_ts: Option<Ts>,
        text: String,
    },
    /// A message was deleted (or a thread's root turned into a tombstone).
    Deleted {
        channel: ChannelId,
        ts: Ts,
        /// Its thread's root, when Slack said.
        thread_ts: Option<Ts>,
    },
    /// Slack said who can read a channel changed.
    VisibilityChanged {
        channel: ChannelId,
        change: VisibilityChange,
    },
    /// Someone added or removed a reaction on a message
    /// (`reaction_added`, `reaction_removed`): a hint when the message is
    /// the bot's.
    Reaction(Reaction),
    /// The app was uninstalled from the workspace (`app_uninstalled`), or
    /// its bot token revoked (`tokens_revoked` naming a bot): Slack sends
    /// either first.
    Uninstalled,
    /// Nothing to store or do (joins, topic changes, unknown subtypes...).
    Ignored { reason: Unhandled },
}

/// A reaction added to, or removed from, a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reaction {
    /// Added (`reaction_added`), or withdrawn (`reaction_removed`).
    pub added: bool,
    /// Who reacted.
    pub user: UserId,
    /// The emoji's name, without a skin tone (`+1::skin-tone-2` is `+1`).
    pub emoji: EmojiName,
    /// The message reacted to.
    pub channel: ChannelId,
    pub ts: Ts,
    /// Who wrote that message, when Slack said (`item_user`).
    pub author: Option<UserId>,
}

/// Why an event is nothing to store or do. Displayed as the `event
/// handled` log line and the replay's skipped events have always named it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unhandled {
    /// An event type the bot does not take (Slack's name for it).
    EventType(String),
    /// A message subtype the bot does not take (Slack's name for it):
    /// joins, topic changes, subtypes Slack adds later.
    MessageSubtype(String),
    /// A `message_changed` that changes neither the text nor the files
    /// (a link preview, a reply count).
    UnchangedText,
}

impl std::fmt::Display for Unhandled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unhandled::EventType(kind) => write!(f, "event type {kind}"),
            Unhandled::MessageSubtype(subtype) => write!(f, "message subtype {subtype}"),
            Unhandled::UnchangedText => f.write_str("message_changed without a text change"),
        }
    }
}

/// Why a body could not be read. Answered with 400. Its text names what
/// is wrong and where, never a value of the payload (which may be words of
/// a conversation): it goes into WARN lines. [`EventParseError::detail`]
/// has the value, for a person reading their own export.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EventParseError {
    #[error("the body is not JSON ({what} at line {line}, column {column})")]
    NotJson {
        /// A syntax error, a field of the wrong type, an early end.
        what: &'static str,
        line: usize,
        column: usize,
    },
    #[error("the payload has no {0}")]
    Missing(&'static str),
    #[error("the payload has a bad {field}")]
    BadId {
        field: &'static str,
        #[source]
        source: IdError,
    },
    /// A timestamp Slack would never send: far ahead of now, or before
    /// Slack's time (see [`check_times`]).
    #[error("the payload's {0} is not a time Slack would send")]
    AbsurdTime(&'static str),
}

impl EventParseError {
    pub(crate) fn not_json(error: &serde_json::Error) -> EventParseError {
        use serde_json::error::Category;
        EventParseError::NotJson {
            what: match error.classify() {
                Category::Syntax => "a syntax error",
                Category::Data => "a field of the wrong type",
                Category::Eof => "an early end",
                Category::Io => "an unreadable body",
            },
            line: error.line(),
            column: error.column(),
        }
    }

    /// What was wrong with the value, quoting it (an id, a timestamp):
    /// for a person reading their own data, never for a log line.
    pub fn detail(&self) -> Option<String> {
        match self {
            EventParseError::BadId { source, .. } => Some(source.to_string()),
            _ => None,
        }
    }
}

/// How far ahead of now a message's time may be (clocks drift a little).
pub const MOST_AHEAD: chrono::Duration = chrono::Duration::hours(1);
/// How far behind now a message's time may be: older than Slack itself.
pub const MOST_BEHIND: chrono::Duration = chrono::Duration::days(20 * 365);

/// Whether every timestamp of `event` is one Slack would send at `now`:
/// within [`MOST_AHEAD`] ahead and [`MOST_BEHIND`] behind. A message from
/// the far future would make every later judgment of its conversation
/// stale, and a zero stands for "the whole channel" in what is forgotten.
pub fn check_times(
    event: &SlackEvent,
    now: chrono::DateTime<chrono::Utc>,
) -> Result<(), EventParseError> {
    let sane = |ts: Ts, field: &'static str| {
        let at = ts.to_datetime();
        if at > now + MOST_AHEAD || at < now - MOST_BEHIND {
            Err(EventParseError::AbsurdTime(field))
        } else {
            Ok(())
        }
    };
    let (ts, thread_ts) = match event {
        SlackEvent::NewMessage { message, .. } => (message.ts, message.thread_ts),
        SlackEvent::Edited { ts, thread_ts, .. } | SlackEvent::Deleted { ts, thread_ts, .. } => {
            (*ts, *thread_ts)
        }
        SlackEvent::Reaction(reaction) => (reaction.ts, None),
        SlackEvent::VisibilityChanged { .. }
        | SlackEvent::Uninstalled
        | SlackEvent::Ignored { .. } => return Ok(()),
    };
    sane(ts, "ts")?;
    thread_ts.map_or(Ok(()), |t| sane(t, "thread_ts"))
}

#[derive(Deserialize)]
struct RawEnvelope {
    #[serde(rename = "type")]
    kind: Option<String>,
    challenge: Option<String>,
    event_id: Option<String>,
    api_app_id: Option<String>,
    team_id: Option<String>,
    event: Option<Value>,
    #[serde(default)]
    authorizations: Vec<RawAuthorization>,
}

#[derive(Deserialize)]
struct RawAuthorization {
    user_id: Option<String>,
    team_id: Option<String>,
    #[serde(default)]
    is_bot: bool,
    enterprise_id: Option<String>,
    #[serde(default)]
    is_enterprise_install: bool,
}

impl RawAuthorization {
    /// The installation it is: an org-wide install's (Enterprise Grid) is
    /// the organisation's, kept under its id; any other, its workspace's.
    fn installation(&self) -> Option<String> {
        match self.is_enterprise_install {
            true => self.enterprise_id.clone(),
            false => self.team_id.clone(),
        }
    }
}

fn str_field<'a>(v: &'a Value, name: &'static str) -> Result<&'a str, EventParseError> {
    v.get(name)
        .and_then(Value::as_str)
        .ok_or(EventParseError::Missing(name))
}

fn opt_str<'a>(v: &'a Value, name: &str) -> Option<&'a str> {
    v.get(name).and_then(Value::as_str)
}

fn channel(v: &Value) -> Result<ChannelId, EventParseError> {
    ChannelId::parse(str_field(v, "channel")?).map_err(|source| EventParseError::BadId {
        field: "channel",
        source,
    })
}

fn ts_field(v: &Value, name: &'static str) -> Result<Ts, EventParseError> {
    Ts::parse(str_field(v, name)?).map_err(|source| EventParseError::BadId {
        field: name,
        source,
    })
}

fn opt_ts(v: &Value, name: &'static str) -> Result<Option<Ts>, EventParseError> {
    opt_str(v, name)
        .map(|s| {
            Ts::parse(s).map_err(|source| EventParseError::BadId {
                field: name,
                source,
            })
        })
        .transpose()
}

/// Parses an Events API body.
pub fn parse_envelope(body: &[u8]) -> Result<Envelope, EventParseError> {
    let raw: RawEnvelope =
        serde_json::from_slice(body).map_err(|e| EventParseError::not_json(&e))?;
    match raw.kind.as_deref() {
        Some("url_verification") => Ok(Envelope::UrlVerification {
            challenge: raw.challenge.ok_or(EventParseError::Missing("challenge"))?,
        }),
        Some("event_callback") => {
            let event = raw.event.ok_or(EventParseError::Missing("event"))?;
            let bot = raw.authorizations.iter().find(|a| a.is_bot);
            let bot_user_id = bot
                .and_then(|a| a.user_id.as_deref())
                .and_then(|id| UserId::parse(id).ok());
            // In a channel shared between workspaces, Slack delivers one
            // event, with the team where it happened outside and the
            // installation it is delivered for in `authorizations`: the
            // latter is whose it is. An org-wide install's events come from
            // any workspace of the organisation: the organisation's.
            let team_id = bot.and_then(RawAuthorization::installation).or(raw.team_id);
            Ok(Envelope::Event {
                event_id: raw.event_id.unwrap_or_default(),
                bot_user_id,
                api_app_id: raw.api_app_id,
                team_id,
                event: parse_event(&event)?,
            })
        }
        Some(other) => Ok(Envelope::Other {
            kind: other.to_owned(),
        }),
        None => Err(EventParseError::Missing("type")),
    }
}

/// Subtypes that carry a message someone wrote.
const MESSAGE_SUBTYPES: &[&str] = &[
    "thread_broadcast",
    "file_share",
    "me_message",
    "bot_message",
];

/// Parses the inner `event` object.
pub fn parse_event(event: &Value) -> Result<SlackEvent, EventParseError> {
    match str_field(event, "type")? {
        "app_mention" => written(event, true),
        "message" => message_event(event),
        "channel_shared" => visibility(event, VisibilityChange::SharedExternally),
        "channel_unshared" => visibility(event, VisibilityChange::Unshared),
        "reaction_added" => reaction(event, true),
        "reaction_removed" => reaction(event, false),
        "app_uninstalled" => Ok(SlackEvent::Uninstalled),
        "tokens_revoked" => Ok(revoked(event)),
        other => Ok(SlackEvent::Ignored {
            reason: Unhandled::EventType(other.to_owned()),
        }),
    }
}

/// `tokens_revoked`: the app is gone from the workspace when a bot token
/// is among them; a person's own tokens alone are none of the bot's.
fn revoked(event: &Value) -> SlackEvent {
    let bots = event
        .get("tokens")
        .and_then(|t| t.get("bot"))
        .and_then(Value::as_array)
        .is_some_and(|b| !b.is_empty());
    match bots {
        true => SlackEvent::Uninstalled,
        false => SlackEvent::Ignored {
            reason: Unhandled::EventType("tokens_revoked".to_owned()),
        },
    }
}

/// A `message` event, by its subtype.
fn message_event(event: &Value) -> Result<SlackEvent, EventParseError> {
    match opt_str(event, "subtype") {
        None => written(event, false),
        Some(s) if MESSAGE_SUBTYPES.contains(&s) => written(event, false),
        Some("message_changed") => changed(event),
        Some("message_deleted") => deleted(event),
        Some("channel_convert_to_private") => {
            visibility(event, VisibilityChange::ConvertedToPrivate)
        }
        Some("channel_convert_to_public") => visibility(event, VisibilityChange::ConvertedToPublic),
        Some(other) => Ok(SlackEvent::Ignored {
            reason: Unhandled::MessageSubtype(other.to_owned()),
        }),
    }
}

/// A message someone wrote; `app_mention` when it came as one.
fn written(event: &Value, app_mention: bool) -> Result<SlackEvent, EventParseError> {
    Ok(SlackEvent::NewMessage {
        message: new_message(event)?,
        app_mention,
        direct: is_direct(event),
    })
}

/// A `message_changed`: an edit, a deletion, or nothing to store.
fn changed(event: &Value) -> Result<SlackEvent, EventParseError> {
    let inner = event
        .get("message")
        .ok_or(EventParseError::Missing("message"))?;
    // A thread's root deleted while it has replies stays as a
    // tombstone (observed, not documented): a deletion.
    if opt_str(inner, "subtype") == Some("tombstone") {
        return Ok(SlackEvent::Deleted {
            channel: channel(event)?,
            ts: ts_field(inner, "ts")?,
            thread_ts: None,
        });
    }
    // Slack also sends message_changed for link previews and reply
    // counts: same text and files, nothing to store. A file taken
    // off the message changes its text's file lines.
    let text = opt_str(inner, "text");
    let previous = event.get("previous_message");
    let before = previous.and_then(|p| opt_str(p, "text"));
    let same_files = previous.is_some_and(|p| files_of(p) == files_of(inner));
    if text.is_some() && text == before && same_files {
        return Ok(SlackEvent::Ignored {
            reason: Unhandled::UnchangedText,
        });
    }
    let ts = ts_field(inner, "ts")?;
    Ok(SlackEvent::Edited {
        channel: channel(event)?,
        ts,
        thread_ts: opt_ts(inner, "thread_ts")?.filter(|root| *root != ts),
        text: with_files(opt_str(inner, "text").unwrap_or_default(), inner),
    })
}

/// A `message_deleted`, with its thread when the previous message says it.
fn deleted(event: &Value) -> Result<SlackEvent, EventParseError> {
    let ts = ts_field(event, "deleted_ts")?;
    let thread_ts = match event.get("previous_message") {
        Some(previous) => opt_ts(previous, "thread_ts")?.filter(|root| *root != ts),
        None => None,
    };
    Ok(SlackEvent::Deleted {
        channel: channel(event)?,
        ts,
        thread_ts,
    })
}

/// A reaction on a message (one on a file or a file comment, or one
/// without its item, is nothing to the bot).
fn reaction(event: &Value, added: bool) -> Result<SlackEvent, EventParseError> {
    let item = match event.get("item") {
        Some(item) if opt_str(item, "type") == Some("message") => item,
        _ => {
            let kind = if added {
                "reaction_added"
            } else {
                "reaction_removed"
            };
            return Ok(SlackEvent::Ignored {
                reason: Unhandled::EventType(kind.to_owned()),
            });
        }
    };
    let name = str_field(event, "reaction")?;
    let base = name.split("::").next().unwrap_or(name);
    let emoji = EmojiName::parse(base).map_err(|_| EventParseError::Missing("reaction"))?;
    Ok(SlackEvent::Reaction(Reaction {
        added,
        user: user_field(event, "user")?,
        emoji,
        channel: channel(item)?,
        ts: ts_field(item, "ts")?,
        author: opt_str(event, "item_user").and_then(|u| UserId::parse(u).ok()),
    }))
}

/// A user id field.
fn user_field(v: &Value, name: &'static str) -> Result<UserId, EventParseError> {
    UserId::parse(str_field(v, name)?).map_err(|source| EventParseError::BadId {
        field: name,
        source,
    })
}

/// A channel's visibility changed.
fn visibility(event: &Value, change: VisibilityChange) -> Result<SlackEvent, EventParseError> {
    Ok(SlackEvent::VisibilityChanged {
        channel: channel(event)?,
        change,
    })
}

/// A message in a direct message with the bot: `channel_type: im`, or
/// (when the event omits it) a `D...` channel id, which only DMs have.
fn is_direct(event: &Value) -> bool {
    match opt_str(event, "channel_type") {
        Some(kind) => kind == "im",
        None => opt_str(event, "channel").is_some_and(|c| c.starts_with('D')),
    }
}

fn new_message(event: &Value) -> Result<Message, EventParseError> {
    let is_bot = event.get("bot_id").is_some_and(|v| !v.is_null())
        || opt_str(event, "subtype") == Some("bot_message");
    // Old-style bot messages may lack `user`; they are kept under the bot id.
    let user = opt_str(event, "user")
        .or_else(|| opt_str(event, "bot_id"))
        .ok_or(EventParseError::Missing("user"))?;
    let user = UserId::parse(user).map_err(|source| EventParseError::BadId {
        field: "user",
        source,
    })?;
    let files = files_of(event);
    let mut message = Message::new(
        channel(event)?,
        user,
        files::with_lines(opt_str(event, "text").unwrap_or_default(), &files),
        ts_field(event, "ts")?,
        opt_ts(event, "thread_ts")?,
        is_bot,
    );
    message.files = files;
    Ok(message)
}

/// The files a message event shares.
fn files_of(event: &Value) -> Vec<SharedFile> {
    event
        .get("files")
        .and_then(Value::as_array)
        .map(|files| files.iter().map(shared_file).collect())
        .unwrap_or_default()
}

/// One of the `files` of a message event.
fn shared_file(file: &Value) -> SharedFile {
    let text = |name: &str| file.get(name).and_then(Value::as_str);
    SharedFile::new(
        text("name").or_else(|| text("title")),
        text("filetype"),
        text("mimetype"),
        file.get("size").and_then(Value::as_u64),
        text("url_private"),
    )
}

/// `text` with a line for each file the message shares, as the prompts
/// show it: "[file: build-7781.log, text, 18 KB, not opened]" (see
/// [`myao_domain::files`]). A file is named rather than left out, so that the bot
/// can say it could not read one.
pub fn with_files(text: &str, event: &Value) -> String {
    files::with_lines(text, &files_of(event))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn wrap(event: Value) -> Vec<u8> {
        serde_json::to_vec(&json!({
            "type": "event_callback",
            "team_id": "T1",
            "event_id": "Ev1",
            "event": event,
            "authorizations": [{"user_id": "UBOT", "is_bot": true}]
        }))
        .unwrap()
    }

    fn event_of(body: &[u8]) -> SlackEvent {
        match parse_envelope(body).unwrap() {
            Envelope::Event {
                event, bot_user_id, ..
            } => {
                assert_eq!(bot_user_id, Some(UserId::parse("UBOT").unwrap()));
                event
            }
            other => panic!("not an event: {other:?}"),
        }
    }

    #[test]
    fn an_events_team_is_the_installation_it_is_delivered_for() {
        let team_of = |body: Value| match parse_envelope(&serde_json::to_vec(&body).unwrap()) {
            Ok(Envelope::Event { team_id, .. }) => team_id,
            other => panic!("{other:?}"),
        };
        let event = json!({"type": "message", "channel": "C1", "user": "U1", "text": "hi",
                           "ts": "1.000100"});
        // A channel shared between workspaces: said in T0ELSE, delivered to
        // the installation in T0ACME.
        let shared = json!({"type": "event_callback", "team_id": "T0ELSE", "event": event,
            "authorizations": [{"user_id": "UBOT", "team_id": "T0ACME", "is_bot": true}]});
        assert_eq!(team_of(shared).as_deref(), Some("T0ACME"));
        let plain = json!({"type": "event_callback", "team_id": "T0ACME", "event": event,
            "authorizations": [{"user_id": "UBOT", "is_bot": true}]});
        assert_eq!(team_of(plain).as_deref(), Some("T0ACME"));
        // An org-wide install (Enterprise Grid): said in any workspace of
        // the organisation, delivered to the organisation's installation.
        let org = json!({"type": "event_callback", "team_id": "T0WEST", "enterprise_id": "E0GRID",
            "event": event, "authorizations": [{"user_id": "UBOT", "team_id": null,
            "enterprise_id": "E0GRID", "is_enterprise_install": true, "is_bot": true}]});
        assert_eq!(team_of(org).as_deref(), Some("E0GRID"));
        // An install in one workspace of an organisation: that workspace's.
        let one = json!({"type": "event_callback", "team_id": "T0WEST", "enterprise_id": "E0GRID",
            "event": event, "authorizations": [{"user_id": "UBOT", "team_id": "T0WEST",
            "enterprise_id": "E0GRID", "is_enterprise_install": false, "is_bot": true}]});
        assert_eq!(team_of(one).as_deref(), Some("T0WEST"));
    }

    #[test]
    fn url_verification() {
        let body = br#"{"type":"url_verification","challenge":"abc123","token":"x"}"#;
        assert_eq!(
            parse_envelope(body).unwrap(),
            Envelope::UrlVerification {
                challenge: "abc123".into()
            }
        );
    }

    #[test]
    fn a_direct_message_is_told_apart() {
        for (event, want) in [
            (
                json!({"type": "message", "channel": "D1", "user": "U1", "text": "hi", "ts": "2.0", "channel_type": "im"}),
                true,
            ),
            (
                json!({"type": "message", "channel": "D1", "user": "U1", "text": "hi", "ts": "2.0"}),
                true,
            ),
            (
                json!({"type": "message", "channel": "G1", "user": "U1", "text": "hi", "ts": "2.0", "channel_type": "mpim"}),
                false,
            ),
            (
                json!({"type": "message", "channel": "C1", "user": "U1", "text": "hi", "ts": "2.0", "channel_type": "channel"}),
                false,
            ),
        ] {
            let SlackEvent::NewMessage { direct, .. } = event_of(&wrap(event.clone())) else {
                panic!("{event}")
            };
            assert_eq!(direct, want, "{event}");
        }
    }

    #[test]
    fn a_reply_in_a_thread() {
        let e = event_of(&wrap(json!({
            "type": "message", "channel": "C1", "user": "U1", "text": "hi",
            "ts": "2.000100", "thread_ts": "1.000000", "channel_type": "channel"
        })));
        let SlackEvent::NewMessage {
            message,
            app_mention,
            direct,
        } = e
        else {
            panic!()
        };
        assert!(!app_mention);
        assert!(!direct);
        assert_eq!(message.thread_ts, Some(Ts::parse("1.0").unwrap()));
        assert_eq!(message.text, "hi");
        assert!(!message.is_bot);
    }

    #[test]
    fn an_app_mention() {
        let e = event_of(&wrap(json!({
            "type": "app_mention", "channel": "C1", "user": "U1", "text": "<@UBOT> hi", "ts": "2.0", "event_ts": "2.0"
        })));
        assert!(matches!(
            e,
            SlackEvent::NewMessage {
                app_mention: true,
                ..
            }
        ));
    }

    #[test]
    fn a_bot_message_is_marked() {
        let e = event_of(&wrap(json!({
            "type": "message", "channel": "C1", "user": "UBOT", "bot_id": "B1", "text": "meow", "ts": "3.0"
        })));
        let SlackEvent::NewMessage { message, .. } = e else {
            panic!()
        };
        assert!(message.is_bot);
        let legacy = event_of(&wrap(json!({
            "type": "message", "subtype": "bot_message", "channel": "C1", "bot_id": "B2", "text": "beep", "ts": "3.0"
        })));
        let SlackEvent::NewMessage { message, .. } = legacy else {
            panic!()
        };
        assert!(message.is_bot);
        assert_eq!(message.user.as_str(), "B2");
    }

    #[test]
    fn an_edit_names_the_edited_message() {
        let e = event_of(&wrap(json!({
            "type": "message", "subtype": "message_changed", "hidden": true, "channel": "C1", "ts": "9.0",
            "message": {"type": "message", "user": "U1", "text": "fixed", "ts": "2.0", "edited": {"user": "U1", "ts": "9.0"}},
            "previous_message": {"text": "fxied", "ts": "2.0"}
        })));
        assert_eq!(
            e,
            SlackEvent::Edited {
                channel: ChannelId::parse("C1").unwrap(),
                ts: Ts::parse("2.0").unwrap(),
                thread_ts: None,
                text: "fixed".into()
            }
        );
        let reply = event_of(&wrap(json!({
            "type": "message", "subtype": "message_changed", "channel": "C1", "ts": "9.0",
            "message": {"type": "message", "user": "U1", "text": "b", "ts": "2.0", "thread_ts": "1.0"},
            "previous_message": {"text": "a", "ts": "2.0", "thread_ts": "1.0"}
        })));
        assert!(matches!(
            reply,
            SlackEvent::Edited { thread_ts: Some(root), .. } if root == Ts::parse("1.0").unwrap()
        ));
    }

    #[test]
    fn a_root_turned_into_a_tombstone_is_a_deletion_not_an_edit() {
        // Whatever the English text Slack puts in it.
        let e = event_of(&wrap(json!({
            "type": "message", "subtype": "message_changed", "hidden": true, "channel": "C1", "ts": "9.0",
            "message": {"type": "message", "subtype": "tombstone", "user": "USLACKBOT",
                        "text": "This message was deleted.", "ts": "2.0", "thread_ts": "2.0", "reply_count": 3},
            "previous_message": {"text": "the secret plan", "ts": "2.0", "thread_ts": "2.0"}
        })));
        assert_eq!(
            e,
            SlackEvent::Deleted {
                channel: ChannelId::parse("C1").unwrap(),
                ts: Ts::parse("2.0").unwrap(),
                thread_ts: None,
            }
        );
    }

    #[test]
    fn visibility_changes_are_read_from_events_and_subtypes() {
        let c1 = ChannelId::parse("C1").unwrap();
        let cases = [
            (
                json!({"type": "message", "subtype": "channel_convert_to_private", "channel": "C1", "user": "U1", "ts": "1.0"}),
                VisibilityChange::ConvertedToPrivate,
            ),
            (
                json!({"type": "message", "subtype": "channel_convert_to_public", "channel": "C1", "user": "U1", "ts": "1.0"}),
                VisibilityChange::ConvertedToPublic,
            ),
            (
                json!({"type": "channel_shared", "connected_team_id": "T2", "channel": "C1", "event_ts": "1.0"}),
                VisibilityChange::SharedExternally,
            ),
            (
                json!({"type": "channel_unshared", "previously_connected_team_id": "T2", "channel": "C1",
                       "is_ext_shared": false, "event_ts": "1.0"}),
                VisibilityChange::Unshared,
            ),
        ];
        for (event, change) in cases {
            assert_eq!(
                event_of(&wrap(event)),
                SlackEvent::VisibilityChanged {
                    channel: c1.clone(),
                    change
                }
            );
        }
    }

    #[test]
    fn an_unfurl_with_the_same_text_is_not_an_edit() {
        let e = event_of(&wrap(json!({
            "type": "message", "subtype": "message_changed", "hidden": true, "channel": "C1", "ts": "9.0",
            "message": {"type": "message", "user": "U1", "text": "see https://x.y", "ts": "2.0", "attachments": [{}]},
            "previous_message": {"text": "see https://x.y", "ts": "2.0"}
        })));
        assert_eq!(
            e,
            SlackEvent::Ignored {
                reason: Unhandled::UnchangedText
            }
        );
    }

    #[test]
    fn a_deletion_names_the_deleted_message() {
        let e = event_of(&wrap(json!({
            "type": "message", "subtype": "message_deleted", "hidden": true, "channel": "C1", "ts": "9.0", "deleted_ts": "2.0"
        })));
        assert_eq!(
            e,
            SlackEvent::Deleted {
                channel: ChannelId::parse("C1").unwrap(),
                ts: Ts::parse("2.0").unwrap(),
                thread_ts: None,
            }
        );
        let reply = event_of(&wrap(json!({
            "type": "message", "subtype": "message_deleted", "channel": "C1", "ts": "9.0", "deleted_ts": "2.0",
            "previous_message": {"type": "message", "user": "U1", "text": "x", "ts": "2.0", "thread_ts": "1.0"}
        })));
        assert!(matches!(
            reply,
            SlackEvent::Deleted { thread_ts: Some(root), .. } if root == Ts::parse("1.0").unwrap()
        ));
    }

    #[test]
    fn joins_and_unknown_subtypes_are_ignored() {
        for subtype in [
            "channel_join",
            "channel_leave",
            "channel_topic",
            "something_new",
        ] {
            let e = event_of(&wrap(json!({
                "type": "message", "subtype": subtype, "channel": "C1", "user": "U1", "text": "x", "ts": "1.0"
            })));
            let SlackEvent::Ignored { reason } = e else {
                panic!("{subtype}: {e:?}");
            };
            assert_eq!(reason, Unhandled::MessageSubtype(subtype.into()));
            assert_eq!(reason.to_string(), format!("message subtype {subtype}"));
        }
        let e = event_of(&wrap(json!({"type": "pin_added", "user": "U1"})));
        let SlackEvent::Ignored { reason } = e else {
            panic!("{e:?}");
        };
        assert_eq!(reason.to_string(), "event type pin_added");
    }

    #[test]
    fn reactions_on_messages_are_read_and_others_ignored() {
        let added = json!({"type": "reaction_added", "user": "U1", "reaction": "-1::skin-tone-2",
            "item_user": "UBOT", "item": {"type": "message", "channel": "C1", "ts": "10.5"},
            "event_ts": "11.0"});
        let SlackEvent::Reaction(r) = event_of(&wrap(added.clone())) else {
            panic!("a reaction");
        };
        assert!(r.added);
        assert_eq!(r.user, UserId::parse("U1").unwrap());
        assert_eq!(r.emoji.as_str(), "-1", "without its skin tone");
        assert_eq!(r.channel, ChannelId::parse("C1").unwrap());
        assert_eq!(r.ts, Ts::parse("10.5").unwrap());
        assert_eq!(r.author, Some(UserId::parse("UBOT").unwrap()));

        let mut removed = added.clone();
        removed["type"] = json!("reaction_removed");
        let SlackEvent::Reaction(r) = event_of(&wrap(removed)) else {
            panic!("a withdrawn reaction");
        };
        assert!(!r.added);

        let on_file = json!({"type": "reaction_added", "user": "U1", "reaction": "+1",
            "item": {"type": "file", "file": "F1"}});
        assert!(matches!(
            event_of(&wrap(on_file)),
            SlackEvent::Ignored { .. }
        ));

        let no_item = json!({"type": "reaction_added", "user": "U1", "reaction": "+1"});
        assert!(matches!(
            event_of(&wrap(no_item)),
            SlackEvent::Ignored { .. }
        ));
        let no_user = json!({"type": "reaction_added", "reaction": "+1",
            "item": {"type": "message", "channel": "C1", "ts": "10.5"}});
        assert!(
            parse_envelope(&wrap(no_user)).is_err(),
            "an error, not a panic"
        );
    }

    #[test]
    fn malformed_payloads_are_errors_not_panics() {
        assert!(matches!(
            parse_envelope(b"not json"),
            Err(EventParseError::NotJson { .. })
        ));
        assert_eq!(parse_envelope(b"{}"), Err(EventParseError::Missing("type")));
        assert_eq!(
            parse_envelope(br#"{"type":"event_callback"}"#),
            Err(EventParseError::Missing("event"))
        );
        assert!(matches!(
            parse_envelope(&wrap(
                json!({"type": "message", "channel": "C1", "user": "U1", "ts": "x"})
            )),
            Err(EventParseError::BadId { field: "ts", .. })
        ));
        assert!(matches!(
            parse_envelope(&wrap(
                json!({"type": "message", "channel": "C1", "ts": "1.0"})
            )),
            Err(EventParseError::Missing("user"))
        ));
        assert!(parse_envelope(b"[1,2]").is_err());
        assert!(parse_envelope(br#"{"type": 5}"#).is_err());
    }

    #[test]
    fn other_envelopes_are_acknowledged() {
        assert_eq!(
            parse_envelope(br#"{"type":"app_rate_limited","minute_rate_limited":1}"#).unwrap(),
            Envelope::Other {
                kind: "app_rate_limited".into()
            }
        );
    }

    #[test]
    fn a_parse_error_names_what_is_wrong_and_quotes_nothing() {
        let body = br#"{"type":"event_callback","event":{},"authorizations":[{"is_bot":"the launch is on friday"}]}"#;
        let error = parse_envelope(body).unwrap_err();
        let shown = error.to_string();
        assert!(shown.contains("a field of the wrong type"), "{shown}");
        assert!(!shown.contains("launch"), "{shown}");
        let bad_user =
            wrap(json!({"type": "message", "channel": "C1", "user": "secret words", "ts": "1.0"}));
        let error = parse_envelope(&bad_user).unwrap_err();
        assert_eq!(error.to_string(), "the payload has a bad user");
        assert!(
            error.detail().is_some_and(|d| d.contains("secret words")),
            "for one's own export"
        );
    }

    #[test]
    fn times_slack_would_not_send_are_refused() {
        let now = Ts::parse("1767600000.0").unwrap().to_datetime();
        let message = |ts: &str, thread: Option<&str>| {
            let mut e =
                json!({"type": "message", "channel": "C1", "user": "U1", "text": "hi", "ts": ts});
            if let Some(t) = thread {
                e["thread_ts"] = json!(t);
            }
            event_of(&wrap(e))
        };
        assert_eq!(
            check_times(&message("1767600000.000100", None), now),
            Ok(())
        );
        assert_eq!(
            check_times(&message("1767603000.0", None), now),
            Ok(()),
            "a clock a little ahead"
        );
        assert_eq!(
            check_times(&message("999999999999.999999", None), now),
            Err(EventParseError::AbsurdTime("ts"))
        );
        assert_eq!(
            check_times(&message("1767600000.000100", Some("0.0")), now),
            Err(EventParseError::AbsurdTime("thread_ts"))
        );
        // An edit of a message years old is fine; a deletion of "0.0" is not.
        let edit = event_of(&wrap(
            json!({"type": "message", "subtype": "message_changed", "channel": "C1",
            "ts": "1767600000.0", "message": {"ts": "1500000000.0", "user": "U1", "text": "new"}}),
        ));
        assert_eq!(check_times(&edit, now), Ok(()));
        let deletion = event_of(&wrap(
            json!({"type": "message", "subtype": "message_deleted", "channel": "C1",
            "ts": "1767600000.0", "deleted_ts": "0.0"}),
        ));
        assert_eq!(
            check_times(&deletion, now),
            Err(EventParseError::AbsurdTime("ts"))
        );
    }

    #[test]
    fn a_shared_file_is_named_in_the_message_not_dropped() {
        let e = event_of(&wrap(
            json!({"type": "message", "subtype": "file_share", "channel": "C1",
            "user": "U1", "text": "here is the failing build log", "ts": "1.0",
            "files": [{"name": "build-7781.log", "filetype": "text", "size": 18_000},
                      {"name": "shot<1>.png", "mimetype": "image/png", "size": 3_500_000},
                      {"title": "odd]\nname"}]}),
        ));
        let SlackEvent::NewMessage { message, .. } = e else {
            panic!("not a message: {e:?}");
        };
        assert_eq!(
            message.text,
            "here is the failing build log\n\
             [file: build-7781.log, text, 18 KB, not opened]\n\
             [file: shot&lt;1&gt;.png, image/png, 3.3 MB, not opened]\n\
             [file: odd  name, unknown kind, not opened]"
        );
        // The files are kept beside the text, for a reply that opens them.
        assert_eq!(message.files.len(), 3);
        assert_eq!(message.files[1].mimetype.as_deref(), Some("image/png"));
        assert_eq!(message.files[2].name, "odd  name", "from its title");
        let with_url = shared_file(&json!({"name": "a.png",
            "url_private": "https://files.slack.com/files-pri/T1-F1/a.png"}));
        assert_eq!(
            with_url.url.as_deref(),
            Some("https://files.slack.com/files-pri/T1-F1/a.png")
        );
        // No files: the text as it was.
        assert_eq!(with_files("hi", &json!({})), "hi");
        assert_eq!(files::size(512), "512 B");
    }
    #[test]
    fn an_uninstall_or_a_revoked_bot_token_is_an_uninstall_and_a_persons_token_is_not() {
        let uninstalled = json!({"type": "app_uninstalled", "event_ts": "1767600000.000100"});
        assert_eq!(event_of(&wrap(uninstalled)), SlackEvent::Uninstalled);
        let bot = json!({"type": "tokens_revoked", "tokens": {"oauth": [], "bot": ["UBOT"]}});
        assert_eq!(event_of(&wrap(bot)), SlackEvent::Uninstalled);
        let person = json!({"type": "tokens_revoked", "tokens": {"oauth": ["U1"]}});
        assert!(matches!(
            event_of(&wrap(person)),
            SlackEvent::Ignored { .. }
        ));
    }
}
