//! The ingest function: Slack's Events API behind a Lambda Function URL.

pub mod handler;
