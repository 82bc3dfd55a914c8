//! Metrics as CloudWatch Embedded Metric Format lines on standard output:
//! on Lambda, CloudWatch Logs turns each into a metric, with no API call
//! and nothing to wait for.

use std::io::Write;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::domain::metrics::{emf, Datum};
use crate::ports::Metrics;

/// Writes each datum as one EMF line in `namespace`, naming the function.
#[derive(Debug, Clone)]
pub struct EmfLog {
    pub namespace: String,
    pub function: &'static str,
}

impl Metrics for EmfLog {
    fn put(&self, datum: Datum) {
        let ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
        let line = emf(&self.namespace, ms, self.function, &datum);
        // A metric lost to a closed stdout is not worth failing the work.
        let _ = writeln!(std::io::stdout().lock(), "{line}");
    }
}

/// No metrics (the local mode's default).
#[derive(Debug, Clone, Copy, Default)]
pub struct NoMetrics;

impl Metrics for NoMetrics {
    fn put(&self, _: Datum) {}
}
