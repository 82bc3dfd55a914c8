//! The store on DynamoDB: each team's part of the table
//! ([`DynamoStore::for_team`]), and its purge when the team uninstalls.

use std::sync::Arc;

use async_trait::async_trait;
use aws_sdk_dynamodb::types::{DeleteRequest, WriteRequest};
use myao_core::ports::{PortError, Store, Teams};
use myao_domain::TeamId;

use super::items::{s, Item};
use super::schema::{team_prefix, PK, SK};
use super::table::{DynamoStore, SERVICE};
use crate::errors::port_error;

/// DynamoDB's most deletes in one `BatchWriteItem`.
const BATCH: usize = 25;
/// How many times a batch's unprocessed deletes are sent again before the
/// purge fails (and is retried whole: what it deleted stays deleted).
const UNPROCESSED_TRIES: usize = 5;

#[async_trait]
impl Teams for DynamoStore {
    fn for_team(&self, team: &TeamId) -> Arc<dyn Store> {
        Arc::new(DynamoStore::for_team(self, team))
    }

    async fn purge_team(&self, team: &TeamId) -> Result<u64, PortError> {
        // A team's items are spread over its many partitions: one scan of
        // the keys alone finds them, each page deleted as it comes, so that
        // a purge cut short has deleted what it read (run again, it goes on
        // with what is left). An uninstall is rare and its purge runs off
        // the events' path (the memory function).
        let mut pages = self
            .client
            .scan()
            .table_name(&self.table)
            .filter_expression("begins_with(#pk, :team)")
            .projection_expression("#pk, #sk")
            .expression_attribute_names("#pk", PK)
            .expression_attribute_names("#sk", SK)
            .expression_attribute_values(":team", s(team_prefix(team)))
            .consistent_read(true)
            .into_paginator()
            .send();
        let mut deleted = 0u64;
        while let Some(page) = pages.next().await {
            let page = page.map_err(|e| port_error(SERVICE, "Scan", e))?;
            for chunk in page.items().chunks(BATCH) {
                self.delete_batch(chunk).await?;
                deleted += chunk.len() as u64;
            }
        }
        Ok(deleted)
    }
}

impl DynamoStore {
    /// Deletes the items at `keys` (at most [`BATCH`]), sending again what
    /// DynamoDB left unprocessed.
    async fn delete_batch(&self, keys: &[Item]) -> Result<(), PortError> {
        let mut requests = keys
            .iter()
            .map(|key| {
                let delete = DeleteRequest::builder()
                    .set_key(Some(key.clone()))
                    .build()
                    .map_err(|e| PortError::refused_by(SERVICE, e))?;
                Ok(WriteRequest::builder().delete_request(delete).build())
            })
            .collect::<Result<Vec<_>, PortError>>()?;
        for _ in 0..UNPROCESSED_TRIES {
            let out = self
                .client
                .batch_write_item()
                .request_items(&self.table, requests)
                .send()
                .await
                .map_err(|e| port_error(SERVICE, "BatchWriteItem", e))?;
            requests = out
                .unprocessed_items
                .and_then(|mut left| left.remove(&self.table))
                .unwrap_or_default();
            if requests.is_empty() {
                return Ok(());
            }
        }
        Err(PortError::unavailable(
            SERVICE,
            "BatchWriteItem left deletes unprocessed; the purge is to be run again",
        ))
    }
}
