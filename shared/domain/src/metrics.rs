//! What the functions count, and how a count is written in CloudWatch's
//! Embedded Metric Format (EMF): a JSON log line that CloudWatch Logs turns
//! into a metric, with no API call.
//!
//! The names below are what the stack's alarms and dashboard watch
//! (`template.yaml`), in the namespace `myao/<stack>`.

use serde_json::{json, Map, Value};

/// Events ingest received, by `Kind`.
pub const EVENTS: &str = "EventsIngested";
/// Slack's `app_rate_limited`: the workspace sent the app more than 30,000
/// events in an hour and Slack holds the rest back (and switches the
/// subscription off when 5 % of its deliveries fail in an hour): no
/// dimension, for the alarm.
pub const SLACK_EVENTS_RATE_LIMITED: &str = "SlackEventsRateLimited";
/// Judgments, by `Outcome`: `rule_silent`, `rule_yes`, `rule_react`,
/// `llm_yes`, `llm_no`, `unusable`, `stale`, `too_old`, `held`, `limited`,
/// `empty`.
pub const JUDGMENTS: &str = "Judgments";
/// Answers posted or added, by `Form`: `full`, `short`, `reaction`,
/// `opener` (a topic the bot opened unasked).
pub const ANSWERS: &str = "Answers";
/// Proactive judgments (whether to open a topic in a quiet channel), by
/// `Outcome`: `open`, `declined`, `unusable`, `stale`, `already_done`, or
/// the hold that stopped it before the LLM (`outside_hours`, `week_full`,
/// `bot_spoke_last`, ...).
pub const PROACTIVE_JUDGMENTS: &str = "ProactiveJudgments";
/// LLM calls, by `Role`.
pub const LLM_CALLS: &str = "LlmCalls";
/// LLM calls that failed after their retries (an expired key, an outage):
/// no dimension, for the alarm.
pub const LLM_FAILURES: &str = "LlmFailures";
/// LLM calls that answered: no dimension, for the alarm (failures with no
/// success beside them).
pub const LLM_SUCCESSES: &str = "LlmSuccesses";
/// Tokens of the prompts and of the answers, by `Role`.
pub const LLM_TOKENS_IN: &str = "LlmTokensIn";
pub const LLM_TOKENS_OUT: &str = "LlmTokensOut";
/// Of the input tokens, those the provider read from its prompt cache, by
/// `Role`.
pub const LLM_TOKENS_CACHED: &str = "LlmTokensCached";
/// An LLM call's time, retries included, by `Role`.
pub const LLM_LATENCY: &str = "LlmLatency";
/// Slack Web API calls that failed after their retries, by `Method`.
pub const SLACK_ERRORS: &str = "SlackErrors";
/// Slack refusing the token (`invalid_auth`, `token_revoked`,
/// `account_inactive`, `not_authed`): no dimension, for the alarm.
pub const SLACK_AUTH_ERRORS: &str = "SlackAuthErrors";
/// Slack calls given up on its rate limit, by `Method`.
pub const SLACK_RATE_LIMITED: &str = "SlackRateLimited";
/// Replies a spend limit refused, by `Limit` (the setting's name).
pub const LIMIT_REFUSALS: &str = "LimitRefusals";

/// Slack's error codes that mean the bot token no longer works.
pub const SLACK_AUTH_CODES: &[&str] = &[
    "invalid_auth",
    "token_revoked",
    "account_inactive",
    "not_authed",
    "token_expired",
];

/// A metric's unit, as EMF names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    Count,
    Milliseconds,
}

impl Unit {
    pub fn as_str(self) -> &'static str {
        match self {
            Unit::Count => "Count",
            Unit::Milliseconds => "Milliseconds",
        }
    }
}

/// One value of one metric, with at most one dimension.
#[derive(Debug, Clone, PartialEq)]
pub struct Datum {
    pub name: &'static str,
    pub unit: Unit,
    pub value: f64,
    pub dimension: Option<(&'static str, String)>,
}

impl Datum {
    /// One occurrence of `name`.
    pub fn count(name: &'static str) -> Datum {
        Datum::counted(name, 1)
    }

    /// `n` occurrences of `name`.
    pub fn counted(name: &'static str, n: u64) -> Datum {
        Datum {
            name,
            unit: Unit::Count,
            value: n as f64,
            dimension: None,
        }
    }

    /// A duration of `ms` milliseconds.
    pub fn millis(name: &'static str, ms: u64) -> Datum {
        Datum {
            name,
            unit: Unit::Milliseconds,
            value: ms as f64,
            dimension: None,
        }
    }

    /// The same, under the dimension `key` = `value`.
    pub fn by(self, key: &'static str, value: impl Into<String>) -> Datum {
        Datum {
            dimension: Some((key, value.into())),
            ..self
        }
    }
}

/// The EMF object of `datum` in `namespace` at `timestamp_ms` (epoch
/// milliseconds): the `_aws` metadata (timestamp, namespace, dimension
/// sets, the metric's name and unit) and, at the root, the metric's value
/// and its dimension's value. `function` is set at the root as a property
/// (searchable in the logs, not a dimension: no metric per function).
pub fn emf(namespace: &str, timestamp_ms: i64, function: &str, datum: &Datum) -> Value {
    let dimensions: Vec<Value> = match &datum.dimension {
        Some((key, _)) => vec![json!([key])],
        None => vec![json!([])],
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
    if let Some((key, value)) = &datum.dimension {
        root.insert((*key).into(), json!(value));
    }
    root.insert(datum.name.into(), json!(datum.value));
    Value::Object(root)
}

#[cfg(test)]
mod tests {
    use super::*;

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
