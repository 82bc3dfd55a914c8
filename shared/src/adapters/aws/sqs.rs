//! sqs adapter.
