//! CloudWatch's twin for the metrics.

use std::collections::BTreeMap;
use std::sync::Mutex;

use crate::ports::Metrics;
use myao_domain::metrics::Datum;

use super::lock::lock;

/// The twin of CloudWatch's metrics: the sum of every metric put, by name
/// and dimension (bounded by the metrics there are, so a long `myao serve`
/// does not grow it).
#[derive(Debug, Default)]
pub struct RecordedMetrics {
    sums: Mutex<BTreeMap<MetricKey, f64>>,
}

/// A metric's name and its dimension, if any.
type MetricKey = (&'static str, Option<(&'static str, String)>);

impl RecordedMetrics {
    /// The sum of the values put for `name`: under `dimension` when given,
    /// else under every dimension and none.
    pub fn total(&self, name: &str, dimension: Option<(&str, &str)>) -> f64 {
        lock(&self.sums)
            .iter()
            .filter(|((n, _), _)| *n == name)
            .filter(|((_, d), _)| {
                dimension
                    .is_none_or(|(k, v)| d.as_ref().is_some_and(|(dk, dv)| *dk == k && dv == v))
            })
            .map(|(_, sum)| sum)
            .sum()
    }
}

impl Metrics for RecordedMetrics {
    fn put(&self, datum: Datum) {
        *lock(&self.sums)
            .entry((datum.name, datum.dimension))
            .or_insert(0.0) += datum.value;
    }
}
