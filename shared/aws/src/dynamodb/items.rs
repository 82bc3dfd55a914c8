//! Items: what each kind of record is written as, and how an item is read
//! back. Every read failure names the item's key.

use std::collections::HashMap;
use std::fmt::Display;
use std::str::FromStr;

use aws_sdk_dynamodb::types::AttributeValue;
use chrono::{DateTime, SecondsFormat, Utc};

use super::schema::{
    conversation_pk, thread_memory_pk, Key, COUNT_ATTRIBUTE, GSI1_PK, GSI1_SK, PK, SK,
    TTL_ATTRIBUTE,
};
use super::table::SERVICE;
use myao_core::ports::{ChannelRecord, PortError};
use myao_domain::answer_times::AnswerTimes;
use myao_domain::digest::Backoff;
use myao_domain::facts::Fact;
use myao_domain::grounds::PostGrounds;
use myao_domain::install::{Home, Installation};
use myao_domain::labels::Label;
use myao_domain::people::Profile;
use myao_domain::sketch::Sketch;
use myao_domain::{
    Channel, ChannelId, ChannelKind, Forget, Memory, MemoryKind, MemoryScope, Message, Ts, User,
    Visibility,
};

pub(super) type Item = HashMap<String, AttributeValue>;

// ---- attribute values -----------------------------------------------------

pub(super) fn s(value: impl Into<String>) -> AttributeValue {
    AttributeValue::S(value.into())
}

pub(super) fn n(value: i64) -> AttributeValue {
    AttributeValue::N(value.to_string())
}

pub(super) fn b(value: bool) -> AttributeValue {
    AttributeValue::Bool(value)
}

/// A time as fixed-width RFC 3339 with nanoseconds: lossless, and it sorts
/// (and compares in a filter) like the time it names.
pub(super) fn time_text(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Nanos, true)
}

/// Whether an item's `expires_at` has passed (an item without one lives on).
pub(super) fn expired(item: &Item, now: i64) -> bool {
    matches!(item.get(TTL_ATTRIBUTE), Some(AttributeValue::N(v)) if v.parse::<i64>().is_ok_and(|e| e <= now))
}

/// When an item expires, if it says.
pub(super) fn expires_at(item: &Item) -> Option<DateTime<Utc>> {
    match item.get(TTL_ATTRIBUTE) {
        Some(AttributeValue::N(v)) => v
            .parse::<i64>()
            .ok()
            .and_then(|secs| DateTime::from_timestamp(secs, 0)),
        _ => None,
    }
}

/// The key attributes alone: a key to read or write by, or the start of an
/// item.
impl From<Key> for Item {
    fn from(key: Key) -> Item {
        HashMap::from([(PK.to_owned(), s(key.pk)), (SK.to_owned(), s(key.sk))])
    }
}

/// The start of an item that lives until `expires_at`: its key and TTL.
fn expiring(key: Key, expires_at: DateTime<Utc>) -> Item {
    let mut item = Item::from(key);
    item.insert(TTL_ATTRIBUTE.into(), n(expires_at.timestamp()));
    item
}

// ---- reading ------------------------------------------------------------------

/// A record read back from its item.
pub(super) trait FromItem: Sized {
    fn from_item(item: &Item) -> Result<Self, PortError>;
}

/// Reads the attributes of one item; every failure names the item's key.
struct Reader<'a> {
    item: &'a Item,
}

impl<'a> Reader<'a> {
    fn new(item: &'a Item) -> Reader<'a> {
        Reader { item }
    }

    fn key(&self) -> String {
        let part = |k: &str| match self.item.get(k) {
            Some(AttributeValue::S(v)) => v.as_str(),
            _ => "?",
        };
        format!("{}/{}", part(PK), part(SK))
    }

    fn corrupt(&self, attr: &str, problem: impl Display) -> PortError {
        PortError::refused(
            SERVICE,
            format!("corrupt item {}: attribute {attr} {problem}", self.key()),
        )
    }

    fn opt_s(&self, attr: &str) -> Result<Option<&'a str>, PortError> {
        match self.item.get(attr) {
            None | Some(AttributeValue::Null(_)) => Ok(None),
            Some(AttributeValue::S(v)) => Ok(Some(v.as_str())),
            Some(_) => Err(self.corrupt(attr, "is not a string")),
        }
    }

    fn s(&self, attr: &str) -> Result<&'a str, PortError> {
        self.opt_s(attr)?
            .ok_or_else(|| self.corrupt(attr, "is missing"))
    }

    fn opt_bool(&self, attr: &str) -> Result<Option<bool>, PortError> {
        match self.item.get(attr) {
            None | Some(AttributeValue::Null(_)) => Ok(None),
            Some(AttributeValue::Bool(v)) => Ok(Some(*v)),
            Some(_) => Err(self.corrupt(attr, "is not a boolean")),
        }
    }

    fn bool(&self, attr: &str) -> Result<bool, PortError> {
        self.opt_bool(attr)?
            .ok_or_else(|| self.corrupt(attr, "is missing"))
    }

    fn opt_i64(&self, attr: &str) -> Result<Option<i64>, PortError> {
        match self.item.get(attr) {
            None | Some(AttributeValue::Null(_)) => Ok(None),
            Some(AttributeValue::N(v)) => v
                .parse()
                .map(Some)
                .map_err(|_| self.corrupt(attr, format!("{v:?} is not an integer"))),
            Some(_) => Err(self.corrupt(attr, "is not a number")),
        }
    }

    fn opt_parse<T>(&self, attr: &str) -> Result<Option<T>, PortError>
    where
        T: FromStr,
        T::Err: Display,
    {
        self.opt_s(attr)?
            .map(|v| {
                v.parse()
                    .map_err(|e| self.corrupt(attr, format!("{v:?}: {e}")))
            })
            .transpose()
    }

    fn parse<T>(&self, attr: &str) -> Result<T, PortError>
    where
        T: FromStr,
        T::Err: Display,
    {
        self.opt_parse(attr)?
            .ok_or_else(|| self.corrupt(attr, "is missing"))
    }

    fn time(&self, attr: &str) -> Result<DateTime<Utc>, PortError> {
        let v = self.s(attr)?;
        DateTime::parse_from_rfc3339(v)
            .map(|t| t.with_timezone(&Utc))
            .map_err(|e| self.corrupt(attr, format!("{v:?}: {e}")))
    }

    /// A time in epoch milliseconds.
    fn opt_millis(&self, attr: &str) -> Result<Option<DateTime<Utc>>, PortError> {
        self.opt_i64(attr)?
            .map(|ms| {
                DateTime::from_timestamp_millis(ms)
                    .ok_or_else(|| self.corrupt(attr, format!("{ms} is out of range")))
            })
            .transpose()
    }
}

// ---- messages -------------------------------------------------------------------

/// A stored message, its tombstone, or an edit waiting for it.
pub(super) struct MessageRow {
    pub routed: bool,
    pub deleted: bool,
    expires_at: Option<i64>,
    /// The text of an edit that came before its message.
    pub pending_text: Option<String>,
    /// `None` for a tombstone or a waiting edit, which are no message.
    pub message: Option<Message>,
}

impl MessageRow {
    pub fn live(self, now: i64) -> Option<Message> {
        if self.deleted || self.expires_at.is_some_and(|e| e <= now) {
            return None;
        }
        self.message
    }
}

impl FromItem for MessageRow {
    fn from_item(item: &Item) -> Result<MessageRow, PortError> {
        let r = Reader::new(item);
        let deleted = r.opt_bool("deleted")?.unwrap_or(false);
        let pending_text = r.opt_s("pending_text")?.map(str::to_owned);
        let message = if deleted || (pending_text.is_some() && r.opt_s("user")?.is_none()) {
            None
        } else {
            let mut message = Message::new(
                r.parse("channel")?,
                r.parse("user")?,
                r.s("text")?,
                r.parse("ts")?,
                r.opt_parse("thread_ts")?,
                r.bool("is_bot")?,
            );
            message.bot_reaction = r.opt_parse("bot_reaction")?;
            if let Some(files) = r.opt_s("files")? {
                message.files = serde_json::from_str(files).map_err(|e| r.corrupt("files", e))?;
            }
            Some(message)
        };
        Ok(MessageRow {
            routed: r.opt_bool("routed")?.unwrap_or(false),
            deleted,
            expires_at: r.opt_i64(TTL_ATTRIBUTE)?,
            pending_text,
            message,
        })
    }
}

/// The item of a message, in its conversation in [`GSI1`](super::GSI1).
pub(super) fn message_item(message: &Message, routed: bool, expires_at: DateTime<Utc>) -> Item {
    let mut item = message_ref_item(&message.channel, message.ts, expires_at);
    item.insert("user".into(), s(message.user.as_str()));
    item.insert("text".into(), s(&message.text));
    if let Some(root) = message.thread_ts {
        item.insert("thread_ts".into(), s(root.to_string()));
    }
    item.insert("is_bot".into(), b(message.is_bot));
    if let Some(emoji) = &message.bot_reaction {
        item.insert("bot_reaction".into(), s(emoji.as_str()));
    }
    if !message.files.is_empty() {
        // Kept as JSON: read whole with the message, never queried.
        let files = serde_json::to_string(&message.files).unwrap_or_default();
        item.insert("files".into(), s(files));
    }
    item.insert("routed".into(), b(routed));
    item.insert(
        GSI1_PK.into(),
        s(conversation_pk(&message.channel, message.thread_ts)),
    );
    item.insert(GSI1_SK.into(), s(message.ts.sort_key()));
    item
}

/// The item of an edit that came before its message: the new text waits
/// there (out of [`GSI1`](super::GSI1), with no `user`) for the message.
pub(super) fn pending_edit_item(
    channel: &ChannelId,
    ts: Ts,
    text: &str,
    expires_at: DateTime<Utc>,
) -> Item {
    let mut item = message_ref_item(channel, ts, expires_at);
    item.insert("pending_text".into(), s(text));
    item
}

/// The start of every item of a message: its key, channel, ts and TTL.
fn message_ref_item(channel: &ChannelId, ts: Ts, expires_at: DateTime<Utc>) -> Item {
    let mut item = expiring(Key::message(channel, ts), expires_at);
    item.insert("channel".into(), s(channel.as_str()));
    item.insert("ts".into(), s(ts.to_string()));
    item
}

// ---- channels and users -----------------------------------------------------------

impl FromItem for ChannelRecord {
    fn from_item(item: &Item) -> Result<ChannelRecord, PortError> {
        let r = Reader::new(item);
        let id: ChannelId = r.parse("channel")?;
        Ok(ChannelRecord {
            channel: Channel {
                name: r.opt_s("name")?.unwrap_or(id.as_str()).to_owned(),
                id,
                visibility: Visibility {
                    kind: ChannelKind::from_name(r.opt_s("kind")?.unwrap_or_default()),
                    external: r.opt_bool("external")?.unwrap_or(false),
                },
            },
            last_active: r.opt_millis("last_active")?.unwrap_or(DateTime::UNIX_EPOCH),
            checked_at: r.opt_millis("checked_at")?,
            // A line this version cannot read starts the learning again.
            answer_times: r.opt_s(ANSWER_TIMES)?.and_then(AnswerTimes::parse),
            digest_backoff: r.opt_s(DIGEST_BACKOFF)?.and_then(Backoff::parse),
        })
    }
}

/// The attribute of a channel record holding [`AnswerTimes::to_text`].
pub(super) const ANSWER_TIMES: &str = "answer_times";
/// The attribute of a channel record holding [`Backoff::to_text`].
pub(super) const DIGEST_BACKOFF: &str = "digest_backoff";

/// The record of a channel first seen active at `at` (never checked).
pub(super) fn channel_item(
    channel: &Channel,
    at: DateTime<Utc>,
    expires_at: DateTime<Utc>,
) -> Item {
    let mut item = expiring(Key::channel(&channel.id), expires_at);
    item.insert("channel".into(), s(channel.id.as_str()));
    item.insert("name".into(), s(&channel.name));
    item.insert("kind".into(), s(channel.visibility.kind.as_str()));
    item.insert("external".into(), b(channel.visibility.external));
    item.insert("last_active".into(), n(at.timestamp_millis()));
    item
}

/// A cached user and when it was fetched.
impl FromItem for (User, DateTime<Utc>) {
    fn from_item(item: &Item) -> Result<(User, DateTime<Utc>), PortError> {
        let r = Reader::new(item);
        let user = User {
            id: r.parse("user")?,
            name: r.s("name")?.to_owned(),
            is_bot: r.bool("is_bot")?,
        };
        Ok((user, r.time("fetched_at")?))
    }
}

pub(super) fn user_item(user: &User, fetched_at: DateTime<Utc>, expires_at: DateTime<Utc>) -> Item {
    let mut item = expiring(Key::user(&user.id), expires_at);
    item.insert("user".into(), s(user.id.as_str()));
    item.insert("name".into(), s(&user.name));
    item.insert("is_bot".into(), b(user.is_bot));
    item.insert("fetched_at".into(), s(time_text(fetched_at)));
    item
}

// ---- memories and forgets ---------------------------------------------------------

impl FromItem for Memory {
    fn from_item(item: &Item) -> Result<Memory, PortError> {
        let r = Reader::new(item);
        let scope = match r.s("scope")? {
            "workspace" => MemoryScope::Workspace,
            "channel" => MemoryScope::Channel {
                channel: r.parse("channel")?,
            },
            "thread" => MemoryScope::Thread {
                channel: r.parse("channel")?,
                thread_ts: r.parse("thread_ts")?,
            },
            other => return Err(r.corrupt("scope", format!("{other:?} is unknown"))),
        };
        let kind = match r.s("kind")? {
            "long" => MemoryKind::Long,
            "short" => MemoryKind::Short,
            other => return Err(r.corrupt("kind", format!("{other:?} is unknown"))),
        };
        Ok(Memory {
            scope,
            kind,
            content: r.s("content")?.to_owned(),
            updated_at: r.time("updated_at")?,
            newest_ts: r.opt_parse("newest_ts")?,
        })
    }
}

/// The item of a memory; a thread's memory is in [`GSI1`](super::GSI1) by
/// its update time.
pub(super) fn memory_item(memory: &Memory, expires_at: DateTime<Utc>) -> Item {
    let mut item = expiring(Key::memory(&memory.scope, memory.kind), expires_at);
    let scope = match &memory.scope {
        MemoryScope::Workspace => "workspace",
        MemoryScope::Channel { channel } => {
            item.insert("channel".into(), s(channel.as_str()));
            "channel"
        }
        MemoryScope::Thread { channel, thread_ts } => {
            item.insert("channel".into(), s(channel.as_str()));
            item.insert("thread_ts".into(), s(thread_ts.to_string()));
            item.insert(GSI1_PK.into(), s(thread_memory_pk(channel)));
            item.insert(GSI1_SK.into(), s(time_text(memory.updated_at)));
            "thread"
        }
    };
    item.insert("scope".into(), s(scope));
    item.insert("kind".into(), s(memory.kind.as_str()));
    item.insert("content".into(), s(&memory.content));
    item.insert("updated_at".into(), s(time_text(memory.updated_at)));
    if let Some(ts) = memory.newest_ts {
        item.insert("newest_ts".into(), s(ts.to_string()));
    }
    item
}

impl FromItem for Forget {
    fn from_item(item: &Item) -> Result<Forget, PortError> {
        let r = Reader::new(item);
        Ok(Forget {
            channel: r.parse("channel")?,
            ts: r.parse("ts")?,
            thread_ts: r.opt_parse("thread_ts")?,
            at: r.time("at")?,
        })
    }
}

pub(super) fn forget_item(forget: &Forget, expires_at: DateTime<Utc>) -> Item {
    let mut item = expiring(Key::forget(&forget.channel, forget.ts), expires_at);
    item.insert("channel".into(), s(forget.channel.as_str()));
    item.insert("ts".into(), s(forget.ts.to_string()));
    if let Some(root) = forget.thread_ts {
        item.insert("thread_ts".into(), s(root.to_string()));
    }
    item.insert("at".into(), s(time_text(forget.at)));
    item
}

// ---- labels ---------------------------------------------------------------------------

/// A label: its JSON in one attribute (it is read and written whole; it
/// holds no word of the conversation).
pub(super) fn label_item(label: &Label) -> Result<Item, PortError> {
    let key = Key::label(&label.channel, &label.key());
    let mut item = expiring(key, label.expires_at());
    let body = serde_json::to_string(label).map_err(|e| PortError::refused_by(SERVICE, e))?;
    item.insert("label".into(), s(body));
    Ok(item)
}

/// The attribute of an installation's token expiry (RFC 3339), which a
/// renewal's condition compares.
pub(super) const TOKEN_EXPIRES: &str = "token_expires";

/// An installation: its JSON (the tokens in it are encrypted at rest with
/// the table), and under rotation its token's expiry apart, for the
/// renewal's condition. It does not expire: an uninstall removes it.
pub(super) fn installation_item(installation: &Installation) -> Result<Item, PortError> {
    let mut item = Item::from(Key::installation(&installation.team));
    let body =
        serde_json::to_string(installation).map_err(|e| PortError::refused_by(SERVICE, e))?;
    item.insert("installation".into(), s(body));
    if let Some(rotation) = &installation.rotation {
        item.insert(TOKEN_EXPIRES.into(), s(time_text(rotation.expires_at)));
    }
    Ok(item)
}

impl FromItem for Installation {
    fn from_item(item: &Item) -> Result<Installation, PortError> {
        let r = Reader::new(item);
        // The error names the item and serde's complaint, never the text.
        serde_json::from_str(r.s("installation")?).map_err(|e| {
            let at = format!("{:?} at column {}", e.classify(), e.column());
            r.corrupt("installation", at)
        })
    }
}

/// The stack's own workspace: its JSON. It does not expire.
pub(super) fn home_item(home: &Home) -> Result<Item, PortError> {
    let mut item = Item::from(Key::home());
    let body = serde_json::to_string(home).map_err(|e| PortError::refused_by(SERVICE, e))?;
    item.insert("home".into(), s(body));
    Ok(item)
}

impl FromItem for Home {
    fn from_item(item: &Item) -> Result<Home, PortError> {
        let r = Reader::new(item);
        serde_json::from_str(r.s("home")?).map_err(|e| r.corrupt("home", &e))
    }
}

/// An install link's state, until `expires_at`.
pub(super) fn oauth_state_item(state: &str, expires_at: DateTime<Utc>) -> Item {
    expiring(Key::oauth_state(state), expires_at)
}

/// A post's grounds: the JSON of [`PostGrounds`], expiring with its labels.
pub(super) fn grounds_item(grounds: &PostGrounds) -> Result<Item, PortError> {
    let key = Key::grounds(&grounds.channel, grounds.post);
    let mut item = expiring(key, grounds.expires_at());
    let body = serde_json::to_string(grounds).map_err(|e| PortError::refused_by(SERVICE, e))?;
    item.insert("grounds".into(), s(body));
    Ok(item)
}

impl FromItem for PostGrounds {
    fn from_item(item: &Item) -> Result<PostGrounds, PortError> {
        let r = Reader::new(item);
        serde_json::from_str(r.s("grounds")?).map_err(|e| r.corrupt("grounds", &e))
    }
}

impl FromItem for Label {
    fn from_item(item: &Item) -> Result<Label, PortError> {
        let r = Reader::new(item);
        serde_json::from_str(r.s("label")?).map_err(|e| r.corrupt("label", &e))
    }
}

// ---- facts and profiles -------------------------------------------------------------

/// A value kept as its JSON (`body`) in one `attribute`, read and
/// written whole, under `key` until `expires_at`.
fn json_item(
    key: Key,
    attribute: &str,
    body: serde_json::Result<String>,
    expires_at: DateTime<Utc>,
) -> Result<Item, PortError> {
    let mut item = expiring(key, expires_at);
    let body = body.map_err(|e| PortError::refused_by(SERVICE, e))?;
    item.insert(attribute.into(), s(body));
    Ok(item)
}

/// A fact.
pub(super) fn fact_item(fact: &Fact, expires_at: DateTime<Utc>) -> Result<Item, PortError> {
    json_item(
        Key::fact(&fact.channel, &fact.id),
        "fact",
        serde_json::to_string(fact),
        expires_at,
    )
}

impl FromItem for Fact {
    fn from_item(item: &Item) -> Result<Fact, PortError> {
        let r = Reader::new(item);
        serde_json::from_str(r.s("fact")?).map_err(|e| r.corrupt("fact", &e))
    }
}

/// A person's sketch in a channel.
pub(super) fn sketch_item(sketch: &Sketch, expires_at: DateTime<Utc>) -> Result<Item, PortError> {
    json_item(
        Key::sketch(&sketch.channel, &sketch.user),
        "sketch",
        serde_json::to_string(sketch),
        expires_at,
    )
}

impl FromItem for Sketch {
    fn from_item(item: &Item) -> Result<Sketch, PortError> {
        let r = Reader::new(item);
        serde_json::from_str(r.s("sketch")?).map_err(|e| r.corrupt("sketch", &e))
    }
}

impl FromItem for Profile {
    fn from_item(item: &Item) -> Result<Profile, PortError> {
        let r = Reader::new(item);
        let count = |attr: &str| -> Result<u64, PortError> {
            Ok(r.opt_i64(attr)?
                .map_or(0, |v| u64::try_from(v).unwrap_or(0)))
        };
        let topics = match r.opt_s("topics")? {
            Some(json) => serde_json::from_str(json).map_err(|e| r.corrupt("topics", &e))?,
            None => Vec::new(),
        };
        Ok(Profile {
            user: r.parse("user")?,
            messages: count("messages")?,
            interactions: count("interactions")?,
            first_seen: r.time("first_seen")?,
            last_seen: r.time("last_seen")?,
            topics,
        })
    }
}

/// A mark: how far something read (reflection, in a conversation).
pub(super) fn mark_item(key: Key, ts: Ts, expires_at: DateTime<Utc>) -> Item {
    let mut item = expiring(key, expires_at);
    item.insert("ts".into(), s(ts.to_string()));
    item
}

pub(super) struct MarkRow {
    pub ts: Ts,
}

impl FromItem for MarkRow {
    fn from_item(item: &Item) -> Result<MarkRow, PortError> {
        Ok(MarkRow {
            ts: Reader::new(item).parse("ts")?,
        })
    }
}

// ---- claims and counters ------------------------------------------------------------

pub(super) fn claim_item(key: &str, expires_at: DateTime<Utc>) -> Item {
    expiring(Key::claim(key), expires_at)
}

/// The attribute of a draft item holding its text.
pub(super) const DRAFT_TEXT: &str = "text";

/// A job's written work, kept apart from its claim until `expires_at`.
pub(super) fn draft_item(key: &str, text: &str, expires_at: DateTime<Utc>) -> Item {
    let mut item = expiring(Key::draft(key), expires_at);
    item.insert(DRAFT_TEXT.into(), s(text));
    item
}

/// A counter started afresh, with its first count.
pub(super) fn counter_item(key: &str, expires_at: DateTime<Utc>) -> Item {
    let mut item = expiring(Key::counter(key), expires_at);
    item.insert(COUNT_ATTRIBUTE.into(), n(1));
    item
}

#[cfg(test)]
mod tests {
    use super::*;
    use myao_domain::UserId;

    fn ts(v: &str) -> Ts {
        Ts::parse(v).expect("a valid ts")
    }

    fn message(thread: Option<&str>) -> Message {
        Message::new(
            ChannelId::parse("C1").expect("id"),
            UserId::parse("U1").expect("id"),
            "hello",
            ts("1712345678.000100"),
            thread.map(ts),
            false,
        )
    }

    #[test]
    fn a_message_round_trips_through_its_item() {
        let expires = DateTime::from_timestamp(2_000_000_000, 0).expect("time");
        for m in [message(None), message(Some("1712345600.5"))] {
            let item = message_item(&m, true, expires);
            let row = MessageRow::from_item(&item).expect("a valid item");
            assert!(row.routed);
            assert_eq!(row.live(0), Some(m));
        }
    }

    #[test]
    fn replies_and_top_level_messages_go_to_their_conversations() {
        let expires = DateTime::from_timestamp(2_000_000_000, 0).expect("time");
        let top = message_item(&message(None), false, expires);
        let reply = message_item(&message(Some("1712345600.5")), false, expires);
        assert_eq!(top.get("gsi1pk"), Some(&s("CONV#C1#top")));
        assert_eq!(
            reply.get("gsi1pk"),
            Some(&s("CONV#C1#0000001712345600.500000"))
        );
        assert_eq!(top.get("sk"), Some(&s("M#0000001712345678.000100")));
    }

    #[test]
    fn expired_and_deleted_rows_are_not_live() {
        let expires = DateTime::from_timestamp(1_000, 0).expect("time");
        let item = message_item(&message(None), false, expires);
        let row = || MessageRow::from_item(&item).expect("valid");
        assert!(row().live(999).is_some());
        assert!(row().live(1_000).is_none(), "expired at its expires_at");
        let mut tomb = Item::from(Key::new("CH#C1", "M#x"));
        tomb.insert("deleted".into(), b(true));
        assert!(MessageRow::from_item(&tomb)
            .expect("valid")
            .live(0)
            .is_none());
    }

    #[test]
    fn a_corrupt_item_is_refused_with_its_key() {
        let mut item = message_item(&message(None), false, Utc::now());
        item.insert("ts".into(), n(5));
        let err = MessageRow::from_item(&item).err().expect("refused");
        assert!(!err.is_retryable());
        let text = err.to_string();
        assert!(text.contains("CH#C1/M#0000001712345678.000100"), "{text}");
        assert!(text.contains("ts"), "{text}");

        item.insert("ts".into(), s("nope"));
        assert!(MessageRow::from_item(&item).is_err());
        item.remove("ts");
        assert!(MessageRow::from_item(&item).is_err());
    }

    #[test]
    fn memories_round_trip_for_every_scope() {
        let at = DateTime::parse_from_rfc3339("2024-03-01T10:00:00.123456789Z")
            .expect("time")
            .with_timezone(&Utc);
        let channel = ChannelId::parse("C1").expect("id");
        for scope in [
            MemoryScope::Workspace,
            MemoryScope::Channel {
                channel: channel.clone(),
            },
            MemoryScope::Thread {
                channel: channel.clone(),
                thread_ts: ts("5.5"),
            },
        ] {
            let m = Memory {
                scope,
                kind: MemoryKind::Short,
                content: "c".into(),
                updated_at: at,
                newest_ts: Some(ts("6.0")),
            };
            let item = memory_item(&m, at);
            assert_eq!(item.get(TTL_ATTRIBUTE), Some(&n(at.timestamp())));
            let back = Memory::from_item(&item).expect("valid");
            assert_eq!(back, m);
        }
    }

    #[test]
    fn time_text_is_fixed_width_and_sorts() {
        let a = time_text(DateTime::from_timestamp(1, 0).expect("time"));
        let b = time_text(DateTime::from_timestamp(1, 5).expect("time"));
        assert_eq!(a, "1970-01-01T00:00:01.000000000Z");
        assert_eq!(a.len(), b.len());
        assert!(a < b);
    }
}
