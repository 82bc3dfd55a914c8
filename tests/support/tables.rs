//! Fresh tables and the stores on them, in a module of its own so that the
//! stubs, which build a store on the emulator too, find it beside them
//! rather than in the crate's root.

use std::sync::Arc;

use crate::emulator::{dynamodb_client, unique};
use myao_aws::dynamodb::{schema, DynamoStore};
use myao_core::adapters::system::SystemClock;
use myao_core::ports::Clock;

/// A store on a new table of its own, on the system clock.
pub async fn fresh_store() -> DynamoStore {
    fresh_store_with_clock(Arc::new(SystemClock)).await
}

/// A store on a new table of its own, on `clock` (e.g. a `ManualClock`).
pub async fn fresh_store_with_clock(clock: Arc<dyn Clock>) -> DynamoStore {
    let client = dynamodb_client().await;
    let table = unique("myao");
    create_table(&client, &table)
        .await
        .unwrap_or_else(|e| panic!("cannot create table {table} on the emulator: {e}"));
    DynamoStore::new(client, table, clock)
}

/// Creates a table as the stack does (`template.yaml`), from the store's
/// schema: its key schema, `gsi1` and TTL; and waits until it is active. An
/// existing table is left as it is (its TTL is still switched on).
pub async fn create_table(client: &aws_sdk_dynamodb::Client, name: &str) -> anyhow::Result<()> {
    use aws_sdk_dynamodb::client::Waiters;

    create_unless_there(client, name).await?;
    client
        .wait_until_table_exists()
        .table_name(name)
        .wait(std::time::Duration::from_secs(120))
        .await
        .map_err(|e| failed("waiting for the table", name, &e))?;
    switch_ttl_on(client, name).await
}

/// An error of `what` on table `name`, with the SDK's whole context.
fn failed(what: &str, name: &str, e: &dyn std::error::Error) -> anyhow::Error {
    use aws_sdk_dynamodb::error::DisplayErrorContext;

    anyhow::anyhow!("{what} {name}: {}", DisplayErrorContext(e))
}

/// Creates the table with the store's keys and `gsi1`, unless it exists.
async fn create_unless_there(client: &aws_sdk_dynamodb::Client, name: &str) -> anyhow::Result<()> {
    use aws_sdk_dynamodb::types::{
        AttributeDefinition, BillingMode, GlobalSecondaryIndex, KeySchemaElement, KeyType,
        Projection, ProjectionType, ScalarAttributeType,
    };

    let attr = |n: &str| {
        AttributeDefinition::builder()
            .attribute_name(n)
            .attribute_type(ScalarAttributeType::S)
            .build()
    };
    let key = |n: &str, t: KeyType| {
        KeySchemaElement::builder()
            .attribute_name(n)
            .key_type(t)
            .build()
    };
    let gsi = GlobalSecondaryIndex::builder()
        .index_name(schema::GSI1)
        .key_schema(key(schema::GSI1_PK, KeyType::Hash)?)
        .key_schema(key(schema::GSI1_SK, KeyType::Range)?)
        .projection(
            Projection::builder()
                .projection_type(ProjectionType::All)
                .build(),
        )
        .build()?;
    let created = client
        .create_table()
        .table_name(name)
        .billing_mode(BillingMode::PayPerRequest)
        .attribute_definitions(attr(schema::PK)?)
        .attribute_definitions(attr(schema::SK)?)
        .attribute_definitions(attr(schema::GSI1_PK)?)
        .attribute_definitions(attr(schema::GSI1_SK)?)
        .key_schema(key(schema::PK, KeyType::Hash)?)
        .key_schema(key(schema::SK, KeyType::Range)?)
        .global_secondary_indexes(gsi)
        .send()
        .await;
    match created {
        Ok(_) => Ok(()),
        // It exists already.
        Err(e)
            if e.as_service_error()
                .is_some_and(|e| e.is_resource_in_use_exception()) =>
        {
            Ok(())
        }
        Err(e) => Err(failed("CreateTable", name, &e)),
    }
}

/// Switches the table's TTL on (on `schema::TTL_ATTRIBUTE`), unless it is
/// on or being switched on.
async fn switch_ttl_on(client: &aws_sdk_dynamodb::Client, name: &str) -> anyhow::Result<()> {
    use aws_sdk_dynamodb::types::{TimeToLiveSpecification, TimeToLiveStatus};

    let ttl = client
        .describe_time_to_live()
        .table_name(name)
        .send()
        .await
        .map_err(|e| failed("DescribeTimeToLive", name, &e))?;
    let status = ttl
        .time_to_live_description()
        .and_then(|d| d.time_to_live_status());
    if matches!(
        status,
        Some(TimeToLiveStatus::Enabled | TimeToLiveStatus::Enabling)
    ) {
        return Ok(());
    }
    let spec = TimeToLiveSpecification::builder()
        .enabled(true)
        .attribute_name(schema::TTL_ATTRIBUTE)
        .build()?;
    client
        .update_time_to_live()
        .table_name(name)
        .time_to_live_specification(spec)
        .send()
        .await
        .map_err(|e| failed("UpdateTimeToLive", name, &e))?;
    Ok(())
}
