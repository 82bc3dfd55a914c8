//! The store on DynamoDB: one table, one GSI, TTL on `expires_at`.
//!
//! | item     | pk              | sk                           | gsi1pk / gsi1sk                   |
//! |----------|-----------------|------------------------------|-----------------------------------|
//! | message  | `CH#{channel}`  | `M#{ts sort key}`            | `CONV#{channel}#{root or top}` / ts sort key |
//! | channel  | `CHANNELS`      | `C#{channel}`                |                                   |
//! | user     | `USERS`         | `U#{user}`                   |                                   |
//! | memory   | `MEM`           | `workspace#{kind}`, `channel#{channel}#{kind}` |                 |
//! | thread memory | `TMEM#{channel}` | `T#{root sort key}#{kind}` | `TMEM#{channel}` / `updated_at` |
//! | forget   | `FORGET`        | `{channel}#{ts sort key}`    |                                   |
//! | claim    | `CLAIM#{key}`   | `-`                          |                                   |
//! | counter  | `COUNT#{key}`   | `-`                          |                                   |
//!
//! A deleted message stays as a tombstone (`deleted = true`, no text, out of
//! the GSI) until its `expires_at`; an edit that comes before its message
//! waits as `pending_text` (no `user`, out of the GSI) for the original's
//! insert to take it. Thread memories are in the GSI by their update time,
//! so the recent ones are read without reading the old ones. Every item but
//! a claim-free memory of old has an `expires_at`. TTL deletion is lazy
//! (days on AWS, never on the emulator), so every read drops expired items
//! itself, by the injected clock: an item is live while `expires_at > now`
//! (epoch seconds).

use std::collections::HashMap;
use std::fmt::Display;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use aws_sdk_dynamodb::client::Waiters;
use aws_sdk_dynamodb::error::DisplayErrorContext;
use aws_sdk_dynamodb::operation::put_item::PutItemError;
use aws_sdk_dynamodb::operation::query::builders::QueryFluentBuilder;
use aws_sdk_dynamodb::operation::update_item::builders::UpdateItemFluentBuilder;
use aws_sdk_dynamodb::operation::update_item::UpdateItemError;
use aws_sdk_dynamodb::types::{
    AttributeDefinition, AttributeValue, BillingMode, GlobalSecondaryIndex, KeySchemaElement,
    KeyType, Projection, ProjectionType, ReturnValuesOnConditionCheckFailure, ScalarAttributeType,
    TimeToLiveSpecification, TimeToLiveStatus,
};
use aws_sdk_dynamodb::Client;
use chrono::{DateTime, SecondsFormat, Utc};

use super::port_error;
use crate::domain::{
    Channel, ChannelId, ChannelKind, Conversation, Forget, Memory, MemoryKind, MemoryScope,
    Message, Ts, User, UserId, Visibility, VisibilityChange,
};
use crate::ports::{ChannelRecord, Clock, Edit, Insert, PortError, Store};

const SERVICE: &str = "dynamodb";
/// The one global secondary index: a conversation's messages by time, and a
/// channel's thread memories by update time.
pub const GSI1: &str = "gsi1";
/// The TTL attribute (epoch seconds).
pub const TTL_ATTRIBUTE: &str = "expires_at";

type Item = HashMap<String, AttributeValue>;

/// [`Store`] on one DynamoDB table (see the module docs for the layout).
#[derive(Clone)]
pub struct DynamoStore {
    client: Client,
    table: String,
    clock: Arc<dyn Clock>,
}

impl std::fmt::Debug for DynamoStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DynamoStore")
            .field("table", &self.table)
            .finish_non_exhaustive()
    }
}

/// Creates the table with its key schema, `gsi1` and TTL, and waits until
/// it is active. An existing table is left as it is (its TTL is still
/// switched on), so the local tools may call this at every start.
pub async fn create_table(client: &Client, name: &str) -> Result<(), PortError> {
    let attr = |n: &str| {
        AttributeDefinition::builder()
            .attribute_name(n)
            .attribute_type(ScalarAttributeType::S)
            .build()
            .map_err(|e| PortError::refused_by(SERVICE, e))
    };
    let key = |n: &str, t: KeyType| {
        KeySchemaElement::builder()
            .attribute_name(n)
            .key_type(t)
            .build()
            .map_err(|e| PortError::refused_by(SERVICE, e))
    };
    let gsi = GlobalSecondaryIndex::builder()
        .index_name(GSI1)
        .key_schema(key("gsi1pk", KeyType::Hash)?)
        .key_schema(key("gsi1sk", KeyType::Range)?)
        .projection(
            Projection::builder()
                .projection_type(ProjectionType::All)
                .build(),
        )
        .build()
        .map_err(|e| PortError::refused_by(SERVICE, e))?;
    let created = client
        .create_table()
        .table_name(name)
        .billing_mode(BillingMode::PayPerRequest)
        .attribute_definitions(attr("pk")?)
        .attribute_definitions(attr("sk")?)
        .attribute_definitions(attr("gsi1pk")?)
        .attribute_definitions(attr("gsi1sk")?)
        .key_schema(key("pk", KeyType::Hash)?)
        .key_schema(key("sk", KeyType::Range)?)
        .global_secondary_indexes(gsi)
        .send()
        .await;
    match created {
        Ok(_) => {}
        Err(e)
            if e.as_service_error()
                .is_some_and(|e| e.is_resource_in_use_exception()) =>
        {
            tracing::debug!(table = name, "table exists already");
        }
        Err(e) => return Err(port_error(SERVICE, "CreateTable", e)),
    }
    client
        .wait_until_table_exists()
        .table_name(name)
        .wait(Duration::from_secs(120))
        .await
        .map_err(|e| {
            PortError::unavailable(
                SERVICE,
                format!(
                    "table {name} did not become active: {}",
                    DisplayErrorContext(&e)
                ),
            )
        })?;

    let ttl = client
        .describe_time_to_live()
        .table_name(name)
        .send()
        .await
        .map_err(|e| port_error(SERVICE, "DescribeTimeToLive", e))?;
    let status = ttl
        .time_to_live_description()
        .and_then(|d| d.time_to_live_status());
    if !matches!(
        status,
        Some(TimeToLiveStatus::Enabled | TimeToLiveStatus::Enabling)
    ) {
        let spec = TimeToLiveSpecification::builder()
            .enabled(true)
            .attribute_name(TTL_ATTRIBUTE)
            .build()
            .map_err(|e| PortError::refused_by(SERVICE, e))?;
        client
            .update_time_to_live()
            .table_name(name)
            .time_to_live_specification(spec)
            .send()
            .await
            .map_err(|e| port_error(SERVICE, "UpdateTimeToLive", e))?;
    }
    Ok(())
}

// ---- keys -------------------------------------------------------------

fn channel_pk(channel: &ChannelId) -> String {
    format!("CH#{channel}")
}

fn message_sk(ts: Ts) -> String {
    format!("M#{}", ts.sort_key())
}

fn conversation_pk(channel: &ChannelId, thread_ts: Option<Ts>) -> String {
    match thread_ts {
        Some(root) => format!("CONV#{channel}#{}", root.sort_key()),
        None => format!("CONV#{channel}#top"),
    }
}

const CHANNELS_PK: &str = "CHANNELS";
const USERS_PK: &str = "USERS";
const MEMORY_PK: &str = "MEM";
const FORGET_PK: &str = "FORGET";

fn forget_sk(channel: &ChannelId, ts: Ts) -> String {
    format!("{channel}#{}", ts.sort_key())
}

fn memory_key(scope: &MemoryScope, kind: MemoryKind) -> (String, String) {
    let kind = kind.as_str();
    match scope {
        MemoryScope::Workspace => (MEMORY_PK.to_owned(), format!("workspace#{kind}")),
        MemoryScope::Channel { channel } => {
            (MEMORY_PK.to_owned(), format!("channel#{channel}#{kind}"))
        }
        MemoryScope::Thread { channel, thread_ts } => (
            thread_memory_pk(channel),
            format!("T#{}#{kind}", thread_ts.sort_key()),
        ),
    }
}

fn thread_memory_pk(channel: &ChannelId) -> String {
    format!("TMEM#{channel}")
}

fn claim_pk(key: &str) -> String {
    format!("CLAIM#{key}")
}

fn count_pk(key: &str) -> String {
    format!("COUNT#{key}")
}

/// A counter's number attribute.
const COUNT_ATTRIBUTE: &str = "n";

// ---- attribute values -----------------------------------------------------

fn s(value: impl Into<String>) -> AttributeValue {
    AttributeValue::S(value.into())
}

fn n(value: i64) -> AttributeValue {
    AttributeValue::N(value.to_string())
}

fn b(value: bool) -> AttributeValue {
    AttributeValue::Bool(value)
}

/// A time as fixed-width RFC 3339 with nanoseconds: lossless, and it sorts
/// (and compares in a filter) like the time it names.
fn time_text(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Nanos, true)
}

/// Whether an item's `expires_at` has passed (an item without one lives on).
fn expired(item: &Item, now: i64) -> bool {
    matches!(item.get(TTL_ATTRIBUTE), Some(AttributeValue::N(v)) if v.parse::<i64>().is_ok_and(|e| e <= now))
}

fn key(pk: impl Into<String>, sk: impl Into<String>) -> Item {
    HashMap::from([("pk".to_owned(), s(pk)), ("sk".to_owned(), s(sk))])
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
        format!("{}/{}", part("pk"), part("sk"))
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
}

// ---- item conversions -------------------------------------------------------

/// A stored message, its tombstone, or an edit waiting for it.
struct MessageRow {
    routed: bool,
    deleted: bool,
    expires_at: Option<i64>,
    /// The text of an edit that came before its message.
    pending_text: Option<String>,
    /// `None` for a tombstone or a waiting edit, which are no message.
    message: Option<Message>,
}

impl MessageRow {
    fn live(self, now: i64) -> Option<Message> {
        if self.deleted || self.expires_at.is_some_and(|e| e <= now) {
            return None;
        }
        self.message
    }
}

impl TryFrom<&Item> for MessageRow {
    type Error = PortError;

    fn try_from(item: &Item) -> Result<MessageRow, PortError> {
        let r = Reader::new(item);
        let deleted = r.opt_bool("deleted")?.unwrap_or(false);
        let pending_text = r.opt_s("pending_text")?.map(str::to_owned);
        let message = if deleted || (pending_text.is_some() && r.opt_s("user")?.is_none()) {
            None
        } else {
            Some(Message::new(
                r.parse("channel")?,
                r.parse("user")?,
                r.s("text")?,
                r.parse("ts")?,
                r.opt_parse("thread_ts")?,
                r.bool("is_bot")?,
            ))
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

fn message_item(message: &Message, routed: bool, expires_at: DateTime<Utc>) -> Item {
    let mut item = key(channel_pk(&message.channel), message_sk(message.ts));
    item.insert("channel".into(), s(message.channel.as_str()));
    item.insert("ts".into(), s(message.ts.to_string()));
    item.insert("user".into(), s(message.user.as_str()));
    item.insert("text".into(), s(&message.text));
    if let Some(root) = message.thread_ts {
        item.insert("thread_ts".into(), s(root.to_string()));
    }
    item.insert("is_bot".into(), b(message.is_bot));
    item.insert("routed".into(), b(routed));
    item.insert(TTL_ATTRIBUTE.into(), n(expires_at.timestamp()));
    item.insert(
        "gsi1pk".into(),
        s(conversation_pk(&message.channel, message.thread_ts)),
    );
    item.insert("gsi1sk".into(), s(message.ts.sort_key()));
    item
}

struct ChannelRow(ChannelRecord);

impl TryFrom<&Item> for ChannelRow {
    type Error = PortError;

    fn try_from(item: &Item) -> Result<ChannelRow, PortError> {
        let r = Reader::new(item);
        let millis = |attr: &str| -> Result<Option<DateTime<Utc>>, PortError> {
            r.opt_i64(attr)?
                .map(|ms| {
                    DateTime::from_timestamp_millis(ms)
                        .ok_or_else(|| r.corrupt(attr, format!("{ms} is out of range")))
                })
                .transpose()
        };
        let id: ChannelId = r.parse("channel")?;
        Ok(ChannelRow(ChannelRecord {
            channel: Channel {
                name: r.opt_s("name")?.unwrap_or(id.as_str()).to_owned(),
                id,
                visibility: Visibility {
                    kind: ChannelKind::from_name(r.opt_s("kind")?.unwrap_or_default()),
                    external: r.opt_bool("external")?.unwrap_or(false),
                },
            },
            last_active: millis("last_active")?.unwrap_or(DateTime::UNIX_EPOCH),
            checked_at: millis("checked_at")?,
        }))
    }
}

struct UserRow(User, DateTime<Utc>);

impl TryFrom<&Item> for UserRow {
    type Error = PortError;

    fn try_from(item: &Item) -> Result<UserRow, PortError> {
        let r = Reader::new(item);
        Ok(UserRow(
            User {
                id: r.parse("user")?,
                name: r.s("name")?.to_owned(),
                is_bot: r.bool("is_bot")?,
            },
            r.time("fetched_at")?,
        ))
    }
}

struct MemoryRow(Memory);

impl TryFrom<&Item> for MemoryRow {
    type Error = PortError;

    fn try_from(item: &Item) -> Result<MemoryRow, PortError> {
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
        Ok(MemoryRow(Memory {
            scope,
            kind,
            content: r.s("content")?.to_owned(),
            updated_at: r.time("updated_at")?,
            newest_ts: r.opt_parse("newest_ts")?,
        }))
    }
}

fn memory_item(memory: &Memory, expires_at: DateTime<Utc>) -> Item {
    let (pk, sk) = memory_key(&memory.scope, memory.kind);
    let mut item = key(pk, sk);
    item.insert(TTL_ATTRIBUTE.into(), n(expires_at.timestamp()));
    let scope = match &memory.scope {
        MemoryScope::Workspace => "workspace",
        MemoryScope::Channel { channel } => {
            item.insert("channel".into(), s(channel.as_str()));
            "channel"
        }
        MemoryScope::Thread { channel, thread_ts } => {
            item.insert("channel".into(), s(channel.as_str()));
            item.insert("thread_ts".into(), s(thread_ts.to_string()));
            item.insert("gsi1pk".into(), s(thread_memory_pk(channel)));
            item.insert("gsi1sk".into(), s(time_text(memory.updated_at)));
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

// ---- the store ----------------------------------------------------------------

impl DynamoStore {
    /// The store on `table`; `clock` decides which items have expired.
    pub fn new(client: Client, table: impl Into<String>, clock: Arc<dyn Clock>) -> DynamoStore {
        DynamoStore {
            client,
            table: table.into(),
            clock,
        }
    }

    /// The table's name.
    pub fn table(&self) -> &str {
        &self.table
    }

    /// The SDK client, for tools and tests that look at the table directly.
    pub fn client(&self) -> &Client {
        &self.client
    }

    fn now(&self) -> i64 {
        self.clock.now().timestamp()
    }

    async fn get_item(&self, pk: String, sk: String) -> Result<Option<Item>, PortError> {
        let out = self
            .client
            .get_item()
            .table_name(&self.table)
            .set_key(Some(key(pk, sk)))
            .consistent_read(true)
            .send()
            .await
            .map_err(|e| port_error(SERVICE, "GetItem", e))?;
        Ok(out.item)
    }

    /// The newest `limit` live messages a query finds, oldest first. The
    /// query must read newest first; pages go on until `limit` live ones are
    /// found, since tombstones and expired items leave a page short.
    async fn newest_messages(
        &self,
        query: QueryFluentBuilder,
        limit: usize,
    ) -> Result<Vec<Message>, PortError> {
        let mut found = Vec::new();
        if limit == 0 {
            return Ok(found);
        }
        let now = self.now();
        let mut start: Option<Item> = None;
        loop {
            let want = i32::try_from(limit - found.len()).unwrap_or(i32::MAX);
            let out = query
                .clone()
                .scan_index_forward(false)
                .limit(want)
                .set_exclusive_start_key(start.take())
                .send()
                .await
                .map_err(|e| port_error(SERVICE, "Query", e))?;
            for item in out.items() {
                if let Some(m) = MessageRow::try_from(item)?.live(now) {
                    found.push(m);
                    if found.len() == limit {
                        break;
                    }
                }
            }
            start = out.last_evaluated_key;
            if found.len() == limit || start.is_none() {
                break;
            }
        }
        found.reverse();
        Ok(found)
    }

    /// Every item a query finds, over all pages.
    async fn query_all(&self, query: QueryFluentBuilder) -> Result<Vec<Item>, PortError> {
        let mut items = Vec::new();
        let mut start: Option<Item> = None;
        loop {
            let out = query
                .clone()
                .set_exclusive_start_key(start.take())
                .send()
                .await
                .map_err(|e| port_error(SERVICE, "Query", e))?;
            items.extend(out.items.unwrap_or_default());
            start = out.last_evaluated_key;
            if start.is_none() {
                return Ok(items);
            }
        }
    }

    fn query(&self) -> QueryFluentBuilder {
        self.client.query().table_name(&self.table)
    }
}

/// An update that names a channel's record attributes (`#channel`, `#name`,
/// `#kind`, `#external`) and gives `channel`'s values for them.
fn with_channel(update: UpdateItemFluentBuilder, channel: &Channel) -> UpdateItemFluentBuilder {
    update
        .expression_attribute_names("#channel", "channel")
        .expression_attribute_names("#name", "name")
        .expression_attribute_names("#kind", "kind")
        .expression_attribute_names("#external", "external")
        .expression_attribute_values(":channel", s(channel.id.as_str()))
        .expression_attribute_values(":name", s(&channel.name))
        .expression_attribute_values(":kind", s(channel.visibility.kind.as_str()))
        .expression_attribute_values(":external", b(channel.visibility.external))
}

fn is_conditional_put_failure(e: &aws_sdk_dynamodb::error::SdkError<PutItemError>) -> bool {
    e.as_service_error()
        .is_some_and(|e| e.is_conditional_check_failed_exception())
}

fn is_conditional_update_failure(e: &aws_sdk_dynamodb::error::SdkError<UpdateItemError>) -> bool {
    e.as_service_error()
        .is_some_and(|e| e.is_conditional_check_failed_exception())
}

#[async_trait]
impl Store for DynamoStore {
    async fn insert_message(
        &self,
        message: &Message,
        routed: bool,
        expires_at: DateTime<Utc>,
    ) -> Result<Insert, PortError> {
        let put = self
            .client
            .put_item()
            .table_name(&self.table)
            .set_item(Some(message_item(message, routed, expires_at)))
            // An expired item counts as absent, as it does for reads.
            .condition_expression("attribute_not_exists(pk) OR #exp <= :now")
            .expression_attribute_names("#exp", TTL_ATTRIBUTE)
            .expression_attribute_values(":now", n(self.now()))
            .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld)
            .send()
            .await;
        let err = match put {
            Ok(_) => return Ok(Insert::New),
            Err(e) if is_conditional_put_failure(&e) => e,
            Err(e) => return Err(port_error(SERVICE, "PutItem", e)),
        };
        let returned = match err.into_service_error() {
            PutItemError::ConditionalCheckFailedException(c) => c.item,
            _ => None,
        };
        let existing = match returned {
            Some(item) => item,
            // Not every DynamoDB (nor emulator) returns the old item: read it.
            None => self
                .get_item(channel_pk(&message.channel), message_sk(message.ts))
                .await?
                .ok_or_else(|| {
                    PortError::unavailable(
                        SERVICE,
                        format!(
                            "message {}/{} vanished during its insert",
                            message.channel, message.ts
                        ),
                    )
                })?,
        };
        let row = MessageRow::try_from(&existing)?;
        if row.deleted {
            return Ok(Insert::Deleted);
        }
        let Some(text) = row.pending_text.filter(|_| row.message.is_none()) else {
            return Ok(Insert::Duplicate { routed: row.routed });
        };
        // Its edit came first: store the message with the newer text, unless
        // something changed since it was read (the message arrived, it was
        // deleted, a newer edit came): then a retry decides again.
        let mut edited = message.clone();
        edited.text = text.clone();
        let put = self
            .client
            .put_item()
            .table_name(&self.table)
            .set_item(Some(message_item(&edited, routed, expires_at)))
            .condition_expression(
                "pending_text = :seen AND attribute_not_exists(#user) \
                 AND attribute_not_exists(#deleted)",
            )
            .expression_attribute_names("#user", "user")
            .expression_attribute_names("#deleted", "deleted")
            .expression_attribute_values(":seen", s(text))
            .send()
            .await;
        match put {
            Ok(_) => Ok(Insert::New),
            Err(e) if is_conditional_put_failure(&e) => Err(PortError::unavailable(
                SERVICE,
                format!(
                    "message {}/{} changed during its insert",
                    message.channel, message.ts
                ),
            )),
            Err(e) => Err(port_error(SERVICE, "PutItem", e)),
        }
    }

    async fn mark_routed(&self, channel: &ChannelId, ts: Ts) -> Result<(), PortError> {
        let update = self
            .client
            .update_item()
            .table_name(&self.table)
            .set_key(Some(key(channel_pk(channel), message_sk(ts))))
            .update_expression("SET #routed = :true")
            .condition_expression("attribute_exists(pk)")
            .expression_attribute_names("#routed", "routed")
            .expression_attribute_values(":true", b(true))
            .send()
            .await;
        match update {
            Ok(_) => Ok(()),
            // Unknown (or gone): nothing left to mark, as in the twin.
            Err(e) if is_conditional_update_failure(&e) => {
                tracing::debug!(%channel, %ts, "mark_routed on an unknown message");
                Ok(())
            }
            Err(e) => Err(port_error(SERVICE, "UpdateItem", e)),
        }
    }

    async fn edit_message(
        &self,
        channel: &ChannelId,
        ts: Ts,
        text: &str,
        expires_at: DateTime<Utc>,
    ) -> Result<Edit, PortError> {
        // A stored message takes the text; else the text waits in an item of
        // its own (replacing an older waiting edit or an expired item, never
        // a message or a tombstone). Between the two a message may arrive:
        // then the first step is tried once more.
        for _ in 0..2 {
            let update = self
                .client
                .update_item()
                .table_name(&self.table)
                .set_key(Some(key(channel_pk(channel), message_sk(ts))))
                .update_expression("SET #text = :text")
                .condition_expression(
                    "attribute_exists(#user) AND attribute_not_exists(#deleted) AND #exp > :now",
                )
                .expression_attribute_names("#text", "text")
                .expression_attribute_names("#user", "user")
                .expression_attribute_names("#deleted", "deleted")
                .expression_attribute_names("#exp", TTL_ATTRIBUTE)
                .expression_attribute_values(":text", s(text))
                .expression_attribute_values(":now", n(self.now()))
                .send()
                .await;
            match update {
                Ok(_) => return Ok(Edit::Applied),
                Err(e) if is_conditional_update_failure(&e) => {}
                Err(e) => return Err(port_error(SERVICE, "UpdateItem", e)),
            }
            let mut item = key(channel_pk(channel), message_sk(ts));
            item.insert("channel".into(), s(channel.as_str()));
            item.insert("ts".into(), s(ts.to_string()));
            item.insert("pending_text".into(), s(text));
            item.insert(TTL_ATTRIBUTE.into(), n(expires_at.timestamp()));
            let put = self
                .client
                .put_item()
                .table_name(&self.table)
                .set_item(Some(item))
                .condition_expression(
                    "attribute_not_exists(pk) OR #exp <= :now \
                     OR (attribute_not_exists(#user) AND attribute_not_exists(#deleted))",
                )
                .expression_attribute_names("#user", "user")
                .expression_attribute_names("#deleted", "deleted")
                .expression_attribute_names("#exp", TTL_ATTRIBUTE)
                .expression_attribute_values(":now", n(self.now()))
                .return_values_on_condition_check_failure(
                    ReturnValuesOnConditionCheckFailure::AllOld,
                )
                .send()
                .await;
            match put {
                Ok(_) => return Ok(Edit::Pending),
                Err(e) if is_conditional_put_failure(&e) => {
                    let deleted = match e.into_service_error() {
                        PutItemError::ConditionalCheckFailedException(c) => c
                            .item
                            .as_ref()
                            .map(MessageRow::try_from)
                            .transpose()?
                            .map(|r| r.deleted),
                        _ => None,
                    };
                    if deleted == Some(true) {
                        return Ok(Edit::Deleted);
                    }
                    let row = self
                        .get_item(channel_pk(channel), message_sk(ts))
                        .await?
                        .map(|item| MessageRow::try_from(&item))
                        .transpose()?;
                    if row.is_some_and(|r| r.deleted) {
                        return Ok(Edit::Deleted);
                    }
                }
                Err(e) => return Err(port_error(SERVICE, "PutItem", e)),
            }
        }
        Err(PortError::unavailable(
            SERVICE,
            format!("message {channel}/{ts} kept changing during its edit"),
        ))
    }

    async fn delete_message(
        &self,
        channel: &ChannelId,
        ts: Ts,
        expires_at: DateTime<Utc>,
    ) -> Result<(), PortError> {
        // One unconditional update: it turns a message into its tombstone, or
        // leaves a tombstone where no message was (a delete seen first).
        self.client
            .update_item()
            .table_name(&self.table)
            .set_key(Some(key(channel_pk(channel), message_sk(ts))))
            .update_expression(
                "SET #deleted = :true, #exp = :exp, #channel = :channel, #ts = :ts \
                 REMOVE #text, pending_text, gsi1pk, gsi1sk",
            )
            .expression_attribute_names("#deleted", "deleted")
            .expression_attribute_names("#exp", TTL_ATTRIBUTE)
            .expression_attribute_names("#channel", "channel")
            .expression_attribute_names("#ts", "ts")
            .expression_attribute_names("#text", "text")
            .expression_attribute_values(":true", b(true))
            .expression_attribute_values(":exp", n(expires_at.timestamp()))
            .expression_attribute_values(":channel", s(channel.as_str()))
            .expression_attribute_values(":ts", s(ts.to_string()))
            .send()
            .await
            .map_err(|e| port_error(SERVICE, "UpdateItem", e))?;
        Ok(())
    }

    async fn get_message(&self, channel: &ChannelId, ts: Ts) -> Result<Option<Message>, PortError> {
        let Some(item) = self.get_item(channel_pk(channel), message_sk(ts)).await? else {
            return Ok(None);
        };
        Ok(MessageRow::try_from(&item)?.live(self.now()))
    }

    async fn recent_messages(
        &self,
        channel: &ChannelId,
        limit: usize,
    ) -> Result<Vec<Message>, PortError> {
        // Strongly consistent: a reply to a mention queued a moment ago must
        // see the mention. (An index cannot be read consistently; the
        // context builder reads the job's own message with a GetItem.)
        let query = self
            .query()
            .consistent_read(true)
            .key_condition_expression("pk = :pk AND begins_with(sk, :m)")
            .expression_attribute_values(":pk", s(channel_pk(channel)))
            .expression_attribute_values(":m", s("M#"));
        self.newest_messages(query, limit).await
    }

    async fn conversation_messages(
        &self,
        conversation: &Conversation,
        limit: usize,
    ) -> Result<Vec<Message>, PortError> {
        // The root of a thread is a top-level message: its item sits under
        // CONV#channel#top, so a thread's query finds its replies only.
        let query = self
            .query()
            .index_name(GSI1)
            .key_condition_expression("gsi1pk = :c")
            .expression_attribute_values(
                ":c",
                s(conversation_pk(
                    &conversation.channel,
                    conversation.thread_ts,
                )),
            );
        self.newest_messages(query, limit).await
    }

    async fn messages_after(
        &self,
        channel: &ChannelId,
        after: Option<Ts>,
        limit: usize,
    ) -> Result<Vec<Message>, PortError> {
        let query = self
            .query()
            .consistent_read(true)
            .expression_attribute_values(":pk", s(channel_pk(channel)));
        let query = match after {
            // Only message items live under CH#channel, so `sk >` stays within them.
            Some(after) => query
                .key_condition_expression("pk = :pk AND sk > :after")
                .expression_attribute_values(":after", s(message_sk(after))),
            None => query
                .key_condition_expression("pk = :pk AND begins_with(sk, :m)")
                .expression_attribute_values(":m", s("M#")),
        };
        self.newest_messages(query, limit).await
    }

    async fn touch_channel(
        &self,
        channel: &Channel,
        at: DateTime<Utc>,
        expires_at: DateTime<Utc>,
    ) -> Result<(), PortError> {
        // The latest activity wins (a later one recorded already makes this
        // a no-op); the name and visibility are set only where none is. An
        // expired record counts as absent: it is recorded afresh.
        let key_ = key(CHANNELS_PK, format!("C#{}", channel.id));
        let update = with_channel(self.client.update_item(), channel)
            .table_name(&self.table)
            .set_key(Some(key_.clone()))
            .update_expression(
                "SET #channel = :channel, #name = if_not_exists(#name, :name), \
                 #kind = if_not_exists(#kind, :kind), \
                 #external = if_not_exists(#external, :external), #last = :at, #exp = :exp",
            )
            .condition_expression(
                "attribute_not_exists(pk) OR ((attribute_not_exists(#exp) OR #exp > :now) \
                 AND (attribute_not_exists(#last) OR #last < :at))",
            )
            .expression_attribute_names("#last", "last_active")
            .expression_attribute_names("#exp", TTL_ATTRIBUTE)
            .expression_attribute_values(":at", n(at.timestamp_millis()))
            .expression_attribute_values(":exp", n(expires_at.timestamp()))
            .expression_attribute_values(":now", n(self.now()))
            .send()
            .await;
        match update {
            Ok(_) => return Ok(()),
            Err(e) if is_conditional_update_failure(&e) => {}
            Err(e) => return Err(port_error(SERVICE, "UpdateItem", e)),
        }
        // A newer activity is recorded (nothing to do), or the record expired.
        let mut item = key_;
        item.insert("channel".into(), s(channel.id.as_str()));
        item.insert("name".into(), s(&channel.name));
        item.insert("kind".into(), s(channel.visibility.kind.as_str()));
        item.insert("external".into(), b(channel.visibility.external));
        item.insert("last_active".into(), n(at.timestamp_millis()));
        item.insert(TTL_ATTRIBUTE.into(), n(expires_at.timestamp()));
        let put = self
            .client
            .put_item()
            .table_name(&self.table)
            .set_item(Some(item))
            .condition_expression("attribute_exists(pk) AND #exp <= :now")
            .expression_attribute_names("#exp", TTL_ATTRIBUTE)
            .expression_attribute_values(":now", n(self.now()))
            .send()
            .await;
        match put {
            Ok(_) => Ok(()),
            Err(e) if is_conditional_put_failure(&e) => Ok(()),
            Err(e) => Err(port_error(SERVICE, "PutItem", e)),
        }
    }

    async fn put_channel_info(
        &self,
        channel: &Channel,
        checked_at: DateTime<Utc>,
        expires_at: DateTime<Utc>,
    ) -> Result<(), PortError> {
        with_channel(self.client.update_item(), channel)
            .table_name(&self.table)
            .set_key(Some(key(CHANNELS_PK, format!("C#{}", channel.id))))
            .update_expression(
                "SET #channel = :channel, #name = :name, #kind = :kind, \
                 #external = :external, #checked = :checked, #exp = :exp",
            )
            .expression_attribute_names("#checked", "checked_at")
            .expression_attribute_names("#exp", TTL_ATTRIBUTE)
            .expression_attribute_values(":checked", n(checked_at.timestamp_millis()))
            .expression_attribute_values(":exp", n(expires_at.timestamp()))
            .send()
            .await
            .map_err(|e| port_error(SERVICE, "UpdateItem", e))?;
        Ok(())
    }

    async fn change_visibility(
        &self,
        id: &ChannelId,
        change: VisibilityChange,
    ) -> Result<(), PortError> {
        // The same rule as `Visibility::after`, as one conditional update:
        // a channel not recorded yet stays unknown.
        let set = match change {
            VisibilityChange::ConvertedToPrivate => "SET #kind = :private REMOVE #checked",
            VisibilityChange::SharedExternally => "SET #external = :true REMOVE #checked",
            VisibilityChange::ConvertedToPublic | VisibilityChange::Unshared => {
                "SET #kind = :unknown REMOVE #checked"
            }
        };
        let mut update = self
            .client
            .update_item()
            .table_name(&self.table)
            .set_key(Some(key(CHANNELS_PK, format!("C#{id}"))))
            .update_expression(set)
            .condition_expression("attribute_exists(pk)")
            .expression_attribute_names("#checked", "checked_at");
        update = match change {
            VisibilityChange::ConvertedToPrivate => update
                .expression_attribute_names("#kind", "kind")
                .expression_attribute_values(":private", s(ChannelKind::Private.as_str())),
            VisibilityChange::SharedExternally => update
                .expression_attribute_names("#external", "external")
                .expression_attribute_values(":true", b(true)),
            VisibilityChange::ConvertedToPublic | VisibilityChange::Unshared => update
                .expression_attribute_names("#kind", "kind")
                .expression_attribute_values(":unknown", s(ChannelKind::Unknown.as_str())),
        };
        match update.send().await {
            Ok(_) => Ok(()),
            Err(e) if is_conditional_update_failure(&e) => Ok(()),
            Err(e) => Err(port_error(SERVICE, "UpdateItem", e)),
        }
    }

    async fn get_channel(&self, id: &ChannelId) -> Result<Option<ChannelRecord>, PortError> {
        let now = self.now();
        self.get_item(CHANNELS_PK.to_owned(), format!("C#{id}"))
            .await?
            .filter(|item| !expired(item, now))
            .map(|item| ChannelRow::try_from(&item).map(|r| r.0))
            .transpose()
    }

    async fn channels(&self) -> Result<Vec<ChannelRecord>, PortError> {
        let now = self.now();
        let query = self
            .query()
            .key_condition_expression("pk = :pk")
            .expression_attribute_values(":pk", s(CHANNELS_PK));
        self.query_all(query)
            .await?
            .iter()
            .filter(|item| !expired(item, now))
            .map(|item| ChannelRow::try_from(item).map(|r| r.0))
            .collect()
    }

    async fn get_user(&self, id: &UserId) -> Result<Option<(User, DateTime<Utc>)>, PortError> {
        let now = self.now();
        self.get_item(USERS_PK.to_owned(), format!("U#{id}"))
            .await?
            .filter(|item| !expired(item, now))
            .map(|item| UserRow::try_from(&item).map(|r| (r.0, r.1)))
            .transpose()
    }

    async fn put_user(
        &self,
        user: &User,
        fetched_at: DateTime<Utc>,
        expires_at: DateTime<Utc>,
    ) -> Result<(), PortError> {
        let mut item = key(USERS_PK, format!("U#{}", user.id));
        item.insert("user".into(), s(user.id.as_str()));
        item.insert("name".into(), s(&user.name));
        item.insert("is_bot".into(), b(user.is_bot));
        item.insert("fetched_at".into(), s(time_text(fetched_at)));
        item.insert(TTL_ATTRIBUTE.into(), n(expires_at.timestamp()));
        self.client
            .put_item()
            .table_name(&self.table)
            .set_item(Some(item))
            .send()
            .await
            .map_err(|e| port_error(SERVICE, "PutItem", e))?;
        Ok(())
    }

    async fn put_memory(
        &self,
        memory: &Memory,
        expires_at: DateTime<Utc>,
    ) -> Result<(), PortError> {
        self.client
            .put_item()
            .table_name(&self.table)
            .set_item(Some(memory_item(memory, expires_at)))
            .send()
            .await
            .map_err(|e| port_error(SERVICE, "PutItem", e))?;
        Ok(())
    }

    async fn get_memory(
        &self,
        scope: &MemoryScope,
        kind: MemoryKind,
    ) -> Result<Option<Memory>, PortError> {
        let now = self.now();
        let (pk, sk) = memory_key(scope, kind);
        self.get_item(pk, sk)
            .await?
            .filter(|item| !expired(item, now))
            .map(|item| MemoryRow::try_from(&item).map(|r| r.0))
            .transpose()
    }

    async fn delete_memory(&self, scope: &MemoryScope, kind: MemoryKind) -> Result<(), PortError> {
        let (pk, sk) = memory_key(scope, kind);
        self.client
            .delete_item()
            .table_name(&self.table)
            .set_key(Some(key(pk, sk)))
            .send()
            .await
            .map_err(|e| port_error(SERVICE, "DeleteItem", e))?;
        Ok(())
    }

    async fn thread_memories(
        &self,
        channel: &ChannelId,
        since: DateTime<Utc>,
    ) -> Result<Vec<Memory>, PortError> {
        // The index is ordered by update time: only the recent ones are read.
        let now = self.now();
        let query = self
            .query()
            .index_name(GSI1)
            .key_condition_expression("gsi1pk = :pk AND gsi1sk >= :since")
            .expression_attribute_values(":pk", s(thread_memory_pk(channel)))
            .expression_attribute_values(":since", s(time_text(since)));
        self.query_all(query)
            .await?
            .iter()
            .filter(|item| !expired(item, now))
            .map(|item| MemoryRow::try_from(item).map(|r| r.0))
            .collect()
    }

    async fn record_forget(
        &self,
        forget: &Forget,
        expires_at: DateTime<Utc>,
    ) -> Result<(), PortError> {
        let mut item = key(FORGET_PK, forget_sk(&forget.channel, forget.ts));
        item.insert("channel".into(), s(forget.channel.as_str()));
        item.insert("ts".into(), s(forget.ts.to_string()));
        if let Some(root) = forget.thread_ts {
            item.insert("thread_ts".into(), s(root.to_string()));
        }
        item.insert("at".into(), s(time_text(forget.at)));
        item.insert(TTL_ATTRIBUTE.into(), n(expires_at.timestamp()));
        self.client
            .put_item()
            .table_name(&self.table)
            .set_item(Some(item))
            .send()
            .await
            .map_err(|e| port_error(SERVICE, "PutItem", e))?;
        Ok(())
    }

    async fn forgets(&self) -> Result<Vec<Forget>, PortError> {
        let now = self.now();
        let query = self
            .query()
            .consistent_read(true)
            .key_condition_expression("pk = :pk")
            .expression_attribute_values(":pk", s(FORGET_PK));
        let mut all = self
            .query_all(query)
            .await?
            .iter()
            .filter(|item| !expired(item, now))
            .map(|item| {
                let r = Reader::new(item);
                Ok(Forget {
                    channel: r.parse("channel")?,
                    ts: r.parse("ts")?,
                    thread_ts: r.opt_parse("thread_ts")?,
                    at: r.time("at")?,
                })
            })
            .collect::<Result<Vec<_>, PortError>>()?;
        all.sort_by(|a, b| (a.at, &a.channel, a.ts).cmp(&(b.at, &b.channel, b.ts)));
        Ok(all)
    }

    async fn clear_forget(&self, forget: &Forget) -> Result<(), PortError> {
        let delete = self
            .client
            .delete_item()
            .table_name(&self.table)
            .set_key(Some(key(FORGET_PK, forget_sk(&forget.channel, forget.ts))))
            // A newer deletion or edit of the same message stays pending.
            .condition_expression("#at = :at")
            .expression_attribute_names("#at", "at")
            .expression_attribute_values(":at", s(time_text(forget.at)))
            .send()
            .await;
        match delete {
            Ok(_) => Ok(()),
            Err(e)
                if e.as_service_error()
                    .is_some_and(|e| e.is_conditional_check_failed_exception()) =>
            {
                Ok(())
            }
            Err(e) => Err(port_error(SERVICE, "DeleteItem", e)),
        }
    }

    async fn claim(&self, key_: &str, expires_at: DateTime<Utc>) -> Result<bool, PortError> {
        let mut item = key(claim_pk(key_), "-");
        item.insert(TTL_ATTRIBUTE.into(), n(expires_at.timestamp()));
        let put = self
            .client
            .put_item()
            .table_name(&self.table)
            .set_item(Some(item))
            // An expired claim is free again, TTL deletion or not.
            .condition_expression("attribute_not_exists(pk) OR #exp <= :now")
            .expression_attribute_names("#exp", TTL_ATTRIBUTE)
            .expression_attribute_values(":now", n(self.now()))
            .send()
            .await;
        match put {
            Ok(_) => Ok(true),
            Err(e) if is_conditional_put_failure(&e) => Ok(false),
            Err(e) => Err(port_error(SERVICE, "PutItem", e)),
        }
    }

    async fn release(&self, key_: &str) -> Result<(), PortError> {
        self.client
            .delete_item()
            .table_name(&self.table)
            .set_key(Some(key(claim_pk(key_), "-")))
            .send()
            .await
            .map_err(|e| port_error(SERVICE, "DeleteItem", e))?;
        Ok(())
    }

    async fn count(
        &self,
        key_: &str,
        limit: u64,
        expires_at: DateTime<Utc>,
    ) -> Result<bool, PortError> {
        if limit == 0 {
            return Ok(false);
        }
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        // Normally one UpdateItem. An expired counter (TTL deletion is lazy)
        // is started again by a conditional put; losing that race to another
        // caller means counting on what it wrote.
        for _ in 0..3 {
            let now = self.now();
            let update = self
                .client
                .update_item()
                .table_name(&self.table)
                .set_key(Some(key(count_pk(key_), "-")))
                .update_expression("ADD #n :one SET #exp = if_not_exists(#exp, :exp)")
                .condition_expression("attribute_not_exists(pk) OR (#n < :limit AND #exp > :now)")
                .expression_attribute_names("#n", COUNT_ATTRIBUTE)
                .expression_attribute_names("#exp", TTL_ATTRIBUTE)
                .expression_attribute_values(":one", n(1))
                .expression_attribute_values(":limit", n(limit))
                .expression_attribute_values(":exp", n(expires_at.timestamp()))
                .expression_attribute_values(":now", n(now))
                .return_values_on_condition_check_failure(
                    ReturnValuesOnConditionCheckFailure::AllOld,
                )
                .send()
                .await;
            let err = match update {
                Ok(_) => return Ok(true),
                Err(e) if is_conditional_update_failure(&e) => e,
                Err(e) => return Err(port_error(SERVICE, "UpdateItem", e)),
            };
            let returned = match err.into_service_error() {
                UpdateItemError::ConditionalCheckFailedException(c) => c.item,
                _ => None,
            };
            let existing = match returned {
                Some(item) => Some(item),
                // Not every DynamoDB (nor emulator) returns the old item: read it.
                None => self.get_item(count_pk(key_), "-".to_owned()).await?,
            };
            // Gone since (TTL): the next update starts it. One without a
            // count is being created (an emulator shows that half-made
            // state; DynamoDB never does): count on it.
            let Some(existing) = existing else { continue };
            if !existing.contains_key(COUNT_ATTRIBUTE) {
                continue;
            }
            if !expired(&existing, now) {
                return Ok(false);
            }
            let mut item = key(count_pk(key_), "-");
            item.insert(COUNT_ATTRIBUTE.into(), n(1));
            item.insert(TTL_ATTRIBUTE.into(), n(expires_at.timestamp()));
            let put = self
                .client
                .put_item()
                .table_name(&self.table)
                .set_item(Some(item))
                .condition_expression("attribute_not_exists(pk) OR #exp <= :now")
                .expression_attribute_names("#exp", TTL_ATTRIBUTE)
                .expression_attribute_values(":now", n(now))
                .send()
                .await;
            match put {
                Ok(_) => return Ok(true),
                Err(e) if is_conditional_put_failure(&e) => continue,
                Err(e) => return Err(port_error(SERVICE, "PutItem", e)),
            }
        }
        Err(PortError::unavailable(
            SERVICE,
            format!("counter {key_} kept changing during its count"),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
            let row = MessageRow::try_from(&item).expect("a valid item");
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
        let row = || MessageRow::try_from(&item).expect("valid");
        assert!(row().live(999).is_some());
        assert!(row().live(1_000).is_none(), "expired at its expires_at");
        let mut tomb = key("CH#C1", "M#x");
        tomb.insert("deleted".into(), b(true));
        assert!(MessageRow::try_from(&tomb)
            .expect("valid")
            .live(0)
            .is_none());
    }

    #[test]
    fn a_corrupt_item_is_refused_with_its_key() {
        let mut item = message_item(&message(None), false, Utc::now());
        item.insert("ts".into(), n(5));
        let err = MessageRow::try_from(&item).err().expect("refused");
        assert!(!err.is_retryable());
        let text = err.to_string();
        assert!(text.contains("CH#C1/M#0000001712345678.000100"), "{text}");
        assert!(text.contains("ts"), "{text}");

        item.insert("ts".into(), s("nope"));
        assert!(MessageRow::try_from(&item).is_err());
        item.remove("ts");
        assert!(MessageRow::try_from(&item).is_err());
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
            let back = MemoryRow::try_from(&item).expect("valid").0;
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
