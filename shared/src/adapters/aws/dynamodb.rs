//! dynamodb adapter.
