//! The AWS adapters against the emulator (moto server at
//! `MYAO_TEST_AWS_ENDPOINT`; see `myao_tests::emulator_endpoint`). Every test
//! makes its own table, schedule group, queues or parameter path.
//!
//! - DynamoDB (`DynamoStore`): `store` and `store_expiry`
//! - EventBridge Scheduler (`EventBridgeScheduler`): `scheduler`
//! - SQS (`SqsQueue`): `sqs`
//! - SSM (`SsmSettingsSource`, `SsmSecrets`): `ssm`
//!
//! This file holds what they share: the emulator's clients and the helpers.

use myao_core::ports::{ChannelRecords, Claims, MemoryRecords, Messages, UserCache};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration as StdDuration;

use anyhow::{bail, ensure, Context as _, Result};
// The interceptor types of every SDK are the same (aws-smithy-runtime-api's):
// the scheduler's imports below serve the DynamoDB interceptor too.
use aws_sdk_dynamodb::config::http::{HttpRequest, HttpResponse};
use aws_sdk_dynamodb::config::interceptors::AfterDeserializationInterceptorContextRef;
use aws_sdk_dynamodb::config::RuntimeComponents;
use aws_sdk_dynamodb::operation::put_item::PutItemInput;
use aws_sdk_dynamodb::operation::query::{QueryInput, QueryOutput};
use aws_sdk_dynamodb::types::{AttributeValue, Select};
use aws_sdk_scheduler::config::interceptors::BeforeSerializationInterceptorContextRef;
use aws_sdk_scheduler::config::{ConfigBag, Intercept};
use aws_sdk_scheduler::error::BoxError;
use aws_sdk_scheduler::operation::create_schedule::CreateScheduleInput;
use aws_sdk_scheduler::types::{
    ActionAfterCompletion, FlexibleTimeWindow, FlexibleTimeWindowMode, ScheduleState, Target,
};
use aws_sdk_ssm::types::ParameterType;
use aws_smithy_runtime_api::client::http::{
    HttpConnector, HttpConnectorFuture, HttpConnectorSettings, SharedHttpConnector,
};
use aws_smithy_runtime_api::client::result::ConnectorError;
use aws_smithy_runtime_api::http::StatusCode;
use chrono::{DateTime, Duration, SecondsFormat, Utc};
use myao_aws::dynamodb::DynamoStore;
use myao_aws::scheduler::EventBridgeScheduler;
use myao_aws::ssm::{SsmSecrets, SsmSettingsSource};
use myao_core::adapters::system::SystemClock;
use myao_core::ports::{
    ChannelRecord, Claim, Clock, Edit, Insert, Queue, Scheduler, Secrets, SettingsSource, Store,
};
use myao_core::schedule::ScheduleName;
use myao_domain::files::SharedFile;
use myao_domain::{
    Channel, ChannelId, ChannelKind, Conversation, Forget, Job, Memory, MemoryKind, MemoryScope,
    Message, Settings, Ts, User, Visibility, VisibilityChange,
};
use myao_domain::{JudgmentJob, Reply, ResponseJob};
use myao_testkit::ids::{channel, ts, user};
use myao_testkit::message::message;
use myao_testkit::time::{at, clock_at};
use myao_tests::{
    aws_config, create_table, dynamodb_client, fresh_queues, fresh_scheduler, fresh_store,
    fresh_store_with_clock, function_arn, ssm_client, unique,
};

/// A message of U1.
fn msg(ch: &str, ts_: &str, thread: Option<&str>, text: &str) -> Message {
    message(ch, "U1", ts_, thread, text)
}

/// Far enough ahead that nothing expires during a test.
fn later() -> DateTime<Utc> {
    Utc::now() + Duration::days(30)
}

fn texts(messages: &[Message]) -> Vec<&str> {
    messages.iter().map(|m| m.text.as_str()).collect()
}

async fn insert_all(store: &dyn Store, messages: &[Message]) -> Result<()> {
    for m in messages {
        let inserted = store.insert_message(m, true, later()).await?;
        ensure!(inserted == Insert::New, "{} was {inserted:?}", m.ts);
    }
    Ok(())
}

fn name(text: &str) -> ScheduleName {
    ScheduleName::parse(text).unwrap_or_else(|e| panic!("bad schedule name {text:?}: {e}"))
}

fn judgment(newest: &str) -> Job {
    Job::Judgment(JudgmentJob {
        channel: channel("C1"),
        thread_ts: Some(ts("100.0")),
        newest_ts: ts(newest),
    })
}

fn response(newest: &str) -> Job {
    Job::Response(ResponseJob {
        channel: channel("C1"),
        thread_ts: None,
        newest_ts: ts(newest),
        mention: true,
        reply: Reply::Full,
        seen_ts: None,
        grounds: None,
    })
}

/// The adapter's text for a time in a sort key (fixed-width RFC 3339 with
/// nanoseconds, so that text order is time order).
fn time_text(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Nanos, true)
}

/// A time in whole milliseconds (channel times are stored as epoch millis).
fn at_millis(millis: i64) -> DateTime<Utc> {
    DateTime::from_timestamp_millis(millis).unwrap_or_else(|| panic!("bad time {millis}"))
}

/// `expires_at` as the table holds it: epoch seconds.
fn epoch_seconds(t: DateTime<Utc>) -> AttributeValue {
    AttributeValue::N(t.timestamp().to_string())
}

fn s_attr(text: impl Into<String>) -> AttributeValue {
    AttributeValue::S(text.into())
}

type RawItem = HashMap<String, AttributeValue>;

/// An item as the table holds it, read around the adapter.
async fn raw_item(store: &DynamoStore, pk: &str, sk: &str) -> Result<Option<RawItem>> {
    Ok(store
        .client()
        .get_item()
        .table_name(store.table())
        .key("pk", s_attr(pk))
        .key("sk", s_attr(sk))
        .consistent_read(true)
        .send()
        .await?
        .item)
}

fn message_sk(t: Ts) -> String {
    format!("M#{}", t.sort_key())
}

fn thread_memory(ch: &str, root: &str, content: &str, updated_at: DateTime<Utc>) -> Memory {
    Memory {
        scope: MemoryScope::Thread {
            channel: channel(ch),
            thread_ts: ts(root),
        },
        kind: MemoryKind::Short,
        content: content.into(),
        updated_at,
        newest_ts: Some(ts(root)),
    }
}

fn channel_memory(ch: &str, kind: MemoryKind, content: &str, updated_at: DateTime<Utc>) -> Memory {
    Memory {
        scope: MemoryScope::Channel {
            channel: channel(ch),
        },
        kind,
        content: content.into(),
        updated_at,
        newest_ts: None,
    }
}

fn chan(id: &str, name: &str, visibility: Visibility) -> Channel {
    Channel {
        id: channel(id),
        name: name.into(),
        visibility,
    }
}

mod scheduler;
mod sqs;
mod ssm;
mod store;
mod store_expiry;
