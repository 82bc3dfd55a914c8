//! When what is written expires, out of the module root so that ingest,
//! beneath it, names the rule without leaning on the file declaring it.

use chrono::{DateTime, Duration, Utc};

use myao_domain::Settings;

/// When a stored message expires.
pub fn retention(settings: &Settings, now: DateTime<Utc>) -> DateTime<Utc> {
    now + Duration::days(i64::from(settings.message_retention_days))
}

/// When a memory, a cached user, a channel record or a pending deletion
/// written now expires.
pub fn memory_retention(settings: &Settings, now: DateTime<Utc>) -> DateTime<Utc> {
    now + Duration::days(i64::from(settings.memory_retention_days))
}
