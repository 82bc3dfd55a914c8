//! Metrics as CloudWatch Embedded Metric Format lines on standard output:
//! on Lambda, CloudWatch Logs turns each into a metric, with no API call
//! and nothing to wait for.

use std::io::Write;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{json, Map, Value};

use crate::ports::Metrics;
use myao_domain::metrics::Datum;

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

/// The EMF object of `datum` in `namespace` at `timestamp_ms` (epoch
/// milliseconds): the `_aws` metadata (timestamp, namespace, dimension
/// sets, the metric's name and unit) and, at the root, the metric's value
/// and its dimension's value. `function` is set at the root as a property
/// (searchable in the logs, not a dimension: no metric per function).
pub fn emf(namespace: &str, timestamp_ms: i64, function: &str, datum: &Datum) -> Value {
    let dimensions: Vec<Value> = match (&datum.dimension, &datum.detail) {
        (Some((key, _)), Some((detail, _))) => vec![json!([key]), json!([key, detail])],
        (Some((key, _)), None) => vec![json!([key])],
        (None, _) => vec![json!([])],
    };
    let mut root = Map::new();
    root.insert(
        "_aws".into(),
        json!({
            "Timestamp": timestamp_ms,
            "CloudWatchMetrics": [{
                "Namespace": namespace,
                "Dimensions": dimensions,
                "Metrics": [{"Name": datum.name, "Unit": datum.unit.as_str()}],
            }],
        }),
    );
    root.insert("function".into(), json!(function));
    for (key, value) in datum.dimension.iter().chain(&datum.detail) {
        root.insert((*key).into(), json!(value));
    }
    root.insert(datum.name.into(), json!(datum.value));
    Value::Object(root)
}

#[cfg(test)]
mod tests {
    use super::*;
    use myao_domain::metrics::{ANSWERS, JUDGMENTS, LLM_LATENCY, SLACK_AUTH_ERRORS};

    /// The EMF specification's rules for one object: `_aws` with an integer
    /// `Timestamp` and a non-empty `CloudWatchMetrics`, each directive with
    /// a `Namespace`, `Dimensions` (arrays of at most 30 names, each a root
    /// member holding a string) and `Metrics` (each a `Name` that is a root
    /// member holding a number, and a valid `Unit`).
    fn check_emf(v: &Value) -> Result<(), String> {
        let aws = v.get("_aws").ok_or("no _aws")?;
        aws.get("Timestamp")
            .and_then(Value::as_i64)
            .ok_or("Timestamp is not an integer")?;
        let directives = aws
            .get("CloudWatchMetrics")
            .and_then(Value::as_array)
            .filter(|d| !d.is_empty())
            .ok_or("no CloudWatchMetrics")?;
        for d in directives {
            let ns = d.get("Namespace").and_then(Value::as_str).unwrap_or("");
            if ns.is_empty() || ns.len() > 255 {
                return Err(format!("bad Namespace {ns:?}"));
            }
            for set in d
                .get("Dimensions")
                .and_then(Value::as_array)
                .ok_or("no Dimensions")?
            {
                let set = set.as_array().ok_or("a dimension set is not an array")?;
                if set.len() > 30 {
                    return Err("more than 30 dimensions".into());
                }
                for key in set {
                    let key = key.as_str().ok_or("a dimension name is not a string")?;
                    v.get(key)
                        .and_then(Value::as_str)
                        .ok_or(format!("dimension {key} has no string value at the root"))?;
                }
            }
            for m in d
                .get("Metrics")
                .and_then(Value::as_array)
                .ok_or("no Metrics")?
            {
                let name = m.get("Name").and_then(Value::as_str).ok_or("no Name")?;
                v.get(name)
                    .and_then(Value::as_f64)
                    .ok_or(format!("metric {name} has no number at the root"))?;
                let unit = m.get("Unit").and_then(Value::as_str).unwrap_or("None");
                if !["Count", "Milliseconds", "None"].contains(&unit) {
                    return Err(format!("unit {unit}"));
                }
            }
        }
        Ok(())
    }

    #[test]
    fn a_count_with_a_dimension_is_valid_emf() {
        let d = Datum::count(JUDGMENTS).by("Outcome", "rule_silent");
        let v = emf("myao/prod", 1_767_600_000_000, "judgment", &d);
        assert_eq!(check_emf(&v), Ok(()));
        assert_eq!(v["Outcome"], "rule_silent");
        assert_eq!(v[JUDGMENTS], 1.0);
        assert_eq!(v["function"], "judgment");
        assert_eq!(
            v["_aws"]["CloudWatchMetrics"][0]["Dimensions"],
            json!([["Outcome"]])
        );
    }

    #[test]
    fn a_detail_is_a_second_dimension_set_beside_the_first() {
        let d = Datum::count(JUDGMENTS)
            .by("Outcome", "rule_yes")
            .detailed("Tuning", "raised");
        let v = emf("myao/prod", 0, "judgment", &d);
        assert_eq!(check_emf(&v), Ok(()));
        assert_eq!(v["Outcome"], "rule_yes");
        assert_eq!(v["Tuning"], "raised");
        assert_eq!(
            v["_aws"]["CloudWatchMetrics"][0]["Dimensions"],
            json!([["Outcome"], ["Outcome", "Tuning"]]),
            "the metric by Outcome alone stays whole"
        );
        let bare = Datum::count(JUDGMENTS).detailed("Tuning", "raised");
        assert_eq!(bare.detail, None, "no detail without a dimension");
    }

    #[test]
    fn a_metric_without_dimension_has_one_empty_set() {
        let v = emf("myao/prod", 0, "response", &Datum::count(SLACK_AUTH_ERRORS));
        assert_eq!(check_emf(&v), Ok(()));
        assert_eq!(v["_aws"]["CloudWatchMetrics"][0]["Dimensions"], json!([[]]));
        let latency = Datum::millis(LLM_LATENCY, 1234).by("Role", "judgment");
        let v = emf("myao/prod", 0, "judgment", &latency);
        assert_eq!(check_emf(&v), Ok(()));
        assert_eq!(v[LLM_LATENCY], 1234.0);
        assert_eq!(
            v["_aws"]["CloudWatchMetrics"][0]["Metrics"][0]["Unit"],
            "Milliseconds"
        );
    }

    #[test]
    fn the_checker_refuses_what_the_spec_refuses() {
        let good = emf("ns", 0, "f", &Datum::count(ANSWERS).by("Form", "short"));
        let mut no_value = good.clone();
        no_value.as_object_mut().unwrap().remove(ANSWERS);
        assert!(check_emf(&no_value).is_err());
        let mut no_dimension = good.clone();
        no_dimension.as_object_mut().unwrap().remove("Form");
        assert!(check_emf(&no_dimension).is_err());
        let mut no_namespace = good;
        no_namespace["_aws"]["CloudWatchMetrics"][0]["Namespace"] = json!("");
        assert!(check_emf(&no_namespace).is_err());
    }
}
