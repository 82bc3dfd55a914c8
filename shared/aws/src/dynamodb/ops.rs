//! The table's operations the store is written with: conditional puts and
//! updates, reads of live items (not expired), queries, and the outcome of a
//! conditional write.

use aws_sdk_dynamodb::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_dynamodb::operation::delete_item::builders::DeleteItemFluentBuilder;
use aws_sdk_dynamodb::operation::put_item::builders::PutItemFluentBuilder;
use aws_sdk_dynamodb::operation::query::builders::QueryFluentBuilder;
use aws_sdk_dynamodb::operation::update_item::builders::UpdateItemFluentBuilder;

use super::items::{b, expired, n, s, FromItem, Item, MessageRow};
use super::schema::{team_pk, Key, GSI1_PK, PK, TTL_ATTRIBUTE};
use super::table::{DynamoStore, SERVICE};
use crate::errors::{expecting, port_error};
use aws_sdk_dynamodb::types::AttributeValue;
use myao_core::ports::PortError;
use myao_domain::{Channel, Message};

/// The error of a write whose condition failed.
pub(super) const CONDITION_FAILED: &str = "ConditionalCheckFailedException";

/// No live item is there: an expired one counts as absent, as it does for
/// reads (TTL deletion or not).
pub(super) const NO_LIVE_ITEM: &str = "attribute_not_exists(pk) OR #exp <= :now";

/// A live item is there (the opposite of [`NO_LIVE_ITEM`]).
pub(super) const LIVE_ITEM: &str = "attribute_exists(pk) AND #exp > :now";

/// What a conditional write came to.
pub(super) enum Written {
    /// It was made.
    Made,
    /// Its condition failed; the item as it was, when DynamoDB sent it back.
    Refused(Option<Item>),
}

impl Written {
    pub(super) fn made(&self) -> bool {
        matches!(self, Written::Made)
    }
}

/// A conditional write's result: made, refused by its condition, or (any
/// other failure) a [`PortError`].
pub(super) fn written<T, E>(
    operation: &str,
    result: Result<T, SdkError<E>>,
) -> Result<Written, PortError>
where
    E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
    aws_sdk_dynamodb::Error: From<SdkError<E>>,
{
    Ok(
        match expecting(SERVICE, operation, CONDITION_FAILED, result)? {
            Ok(_) => Written::Made,
            Err(refused) => match aws_sdk_dynamodb::Error::from(refused) {
                aws_sdk_dynamodb::Error::ConditionalCheckFailedException(c) => {
                    Written::Refused(c.item)
                }
                _ => Written::Refused(None),
            },
        },
    )
}

/// An update that names a channel's record attributes (`#channel`, `#name`,
/// `#kind`, `#external`) and gives `channel`'s values for them.
pub(super) fn with_channel(
    update: UpdateItemFluentBuilder,
    channel: &Channel,
) -> UpdateItemFluentBuilder {
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

impl DynamoStore {
    pub(super) fn now(&self) -> i64 {
        self.clock.now().timestamp()
    }

    /// `pk` where this store keeps it: in its team's part of the table,
    /// or as it is on the stack's own store.
    pub(super) fn scoped(&self, pk: String) -> String {
        match &self.team {
            Some(team) => team_pk(team, pk),
            None => pk,
        }
    }

    /// The value of a query's partition `pk`, in this store's part of the
    /// table: every query's key condition takes its partition from here.
    pub(super) fn partition(&self, pk: impl Into<String>) -> AttributeValue {
        s(self.scoped(pk.into()))
    }

    fn scoped_key(&self, key: Key) -> Key {
        Key {
            pk: self.scoped(key.pk),
            sk: key.sk,
        }
    }

    /// `item` with its partition and [`GSI1`](super::GSI1) partition in this
    /// store's part of the table.
    fn scoped_item(&self, mut item: Item) -> Item {
        if self.team.is_some() {
            for name in [PK, GSI1_PK] {
                if let Some(AttributeValue::S(pk)) = item.remove(name) {
                    item.insert(name.to_owned(), s(self.scoped(pk)));
                }
            }
        }
        item
    }

    pub(super) fn put(&self, item: Item) -> PutItemFluentBuilder {
        self.client
            .put_item()
            .table_name(&self.table)
            .set_item(Some(self.scoped_item(item)))
    }

    /// A put on `condition`, which names the item's expiry `#exp` and the
    /// time `:now` (`now`).
    pub(super) fn put_if(&self, item: Item, condition: &str, now: i64) -> PutItemFluentBuilder {
        self.put(item)
            .condition_expression(condition)
            .expression_attribute_names("#exp", TTL_ATTRIBUTE)
            .expression_attribute_values(":now", n(now))
    }

    pub(super) fn update(&self, key: Key) -> UpdateItemFluentBuilder {
        self.client
            .update_item()
            .table_name(&self.table)
            .set_key(Some(self.scoped_key(key).into()))
    }

    pub(super) fn delete(&self, key: Key) -> DeleteItemFluentBuilder {
        self.client
            .delete_item()
            .table_name(&self.table)
            .set_key(Some(self.scoped_key(key).into()))
    }

    pub(super) fn query(&self) -> QueryFluentBuilder {
        self.client.query().table_name(&self.table)
    }

    /// Writes `item`, whatever was there.
    pub(super) async fn put_item(&self, item: Item) -> Result<(), PortError> {
        self.put(item)
            .send()
            .await
            .map_err(|e| port_error(SERVICE, "PutItem", e))?;
        Ok(())
    }

    /// Deletes the item at `key`, if any.
    pub(super) async fn delete_item(&self, key: Key) -> Result<(), PortError> {
        self.delete(key)
            .send()
            .await
            .map_err(|e| port_error(SERVICE, "DeleteItem", e))?;
        Ok(())
    }

    pub(super) async fn get_item(&self, key: Key) -> Result<Option<Item>, PortError> {
        let out = self
            .client
            .get_item()
            .table_name(&self.table)
            .set_key(Some(self.scoped_key(key).into()))
            .consistent_read(true)
            .send()
            .await
            .map_err(|e| port_error(SERVICE, "GetItem", e))?;
        Ok(out.item)
    }

    /// The item a write was refused over: the one DynamoDB sent back, else
    /// the one at `key` now (not every DynamoDB, nor the emulator, sends it).
    pub(super) async fn refused_over(
        &self,
        sent: Option<Item>,
        key: Key,
    ) -> Result<Option<Item>, PortError> {
        match sent {
            Some(item) => Ok(Some(item)),
            None => self.get_item(key).await,
        }
    }

    /// The record at `key`, unless it is missing or expired.
    pub(super) async fn get_live<T: FromItem>(&self, key: Key) -> Result<Option<T>, PortError> {
        let now = self.now();
        self.get_item(key)
            .await?
            .filter(|item| !expired(item, now))
            .map(|item| T::from_item(&item))
            .transpose()
    }

    /// The records a query finds, over all pages, but the expired ones.
    pub(super) async fn query_live<T: FromItem>(
        &self,
        query: QueryFluentBuilder,
    ) -> Result<Vec<T>, PortError> {
        let now = self.now();
        let items: Vec<Item> = query
            .into_paginator()
            .items()
            .send()
            .try_collect()
            .await
            .map_err(|e| port_error(SERVICE, "Query", e))?;
        items
            .iter()
            .filter(|item| !expired(item, now))
            .map(T::from_item)
            .collect()
    }

    /// The newest `limit` live messages a query finds, oldest first. The
    /// query must read newest first; pages go on until `limit` live ones are
    /// found, since tombstones and expired items leave a page short.
    pub(super) async fn newest_messages(
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
                if let Some(m) = MessageRow::from_item(item)?.live(now) {
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
}
