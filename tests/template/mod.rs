//! Checks on `template.yaml`, the SAM template that deploys myao.
//!
//! The template is read as plain YAML. CloudFormation's short-form tags
//! (`!Sub`, `!Ref`, `!GetAtt`, ...) arrive as tagged values; `cfn::untag` looks
//! through them. Each test gathers every problem before failing, and names the
//! resource and the variable, action or setting concerned.
//!
//! - `every_function_has_the_environment_variables_it_reads`: `myao_core::env::required`
//! - `no_policy_statement_has_a_wildcard_action` and
//!   `function_policies_are_explicit_statements`: least privilege
//! - `no_secret_value_in_parameters_or_outputs`: secrets live in SSM only
//! - `every_setting_has_a_parameter_holding_its_default`: `Settings::default_pairs`
//! - `every_function_builds_its_own_binary`: SAM's cargo-lambda build metadata
//! - `job_functions_have_the_timeouts_the_settings_are_checked_against`:
//!   `JUDGMENT_FUNCTION_TIMEOUT_SECONDS` and its kin
//! - `bedrock_is_invoked_only_on_the_configured_models_by_the_llm_functions`:
//!   the Bedrock IAM policies, evaluated for given stack parameters
//!   (`cfn::Stack`, a small evaluator of the intrinsic functions they use)

use std::path::{Path, PathBuf};

use myao_core::env::{self, Function};
use myao_domain::settings::{Settings, SETTING_NAMES};
use serde_yaml::Value;

mod cfn;
use cfn::*;

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn template() -> Value {
    let path = workspace_root().join("template.yaml");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_yaml::from_str(&text).unwrap_or_else(|e| panic!("cannot parse {}: {e}", path.display()))
}

#[track_caller]
fn fail_if_any(problems: &[String], what: &str) {
    assert!(problems.is_empty(), "{what}:\n  {}", problems.join("\n  "));
}

#[test]
fn every_function_has_the_environment_variables_it_reads() {
    let t = template();
    let globals = keys(at(&t, &["Globals", "Function", "Environment", "Variables"]));
    let mut problems = Vec::new();
    for function in Function::ALL {
        let id = function.logical_id();
        let Some(resource) = at(&t, &["Resources", id]) else {
            problems.push(format!("{id}: no such resource"));
            continue;
        };
        if !is_function(resource) {
            problems.push(format!(
                "{id}: is a {}, not a function",
                resource_type(resource)
            ));
            continue;
        }
        let own = keys(at(resource, &["Properties", "Environment", "Variables"]));
        for variable in env::required(function) {
            if !own.contains(*variable) && !globals.contains(*variable) {
                problems.push(format!("{id}: {variable} is not set"));
            }
        }
    }
    fail_if_any(&problems, "functions lack environment variables they read");
}

/// Walks the whole template; every mapping with a `Statement` is a policy
/// document (function `Policies`, `AWS::IAM::Role` inline and trust policies,
/// `AWS::IAM::Policy`, `AWS::IAM::ManagedPolicy`, queue policies ...).
fn check_statements(value: &Value, trail: &str, problems: &mut Vec<String>) {
    match untag(value) {
        Value::Mapping(map) => {
            if let Some(statements) = map.get("Statement") {
                let list: Vec<&Value> = match untag(statements) {
                    Value::Sequence(items) => items.iter().collect(),
                    single => vec![single],
                };
                for (i, statement) in list.into_iter().enumerate() {
                    let sid = field(statement, "Sid")
                        .and_then(text)
                        .unwrap_or_else(|| format!("#{i}"));
                    let mut actions = Vec::new();
                    if let Some(action) = field(statement, "Action") {
                        strings(action, &mut actions);
                    }
                    for action in actions.iter().filter(|a| a.contains('*')) {
                        problems.push(format!("{trail}: statement {sid}: action {action}"));
                    }
                    if field(statement, "NotAction").is_some() {
                        problems.push(format!(
                            "{trail}: statement {sid}: NotAction grants by exclusion"
                        ));
                    }
                }
            }
            for (k, v) in map {
                let key = text(k).unwrap_or_default();
                check_statements(v, &format!("{trail}/{key}"), problems);
            }
        }
        Value::Sequence(items) => {
            for (i, v) in items.iter().enumerate() {
                check_statements(v, &format!("{trail}/{i}"), problems);
            }
        }
        _ => {}
    }
}

#[test]
fn no_policy_statement_has_a_wildcard_action() {
    let t = template();
    let mut problems = Vec::new();
    for (id, resource) in resources(&t) {
        check_statements(resource, &id, &mut problems);
    }
    fail_if_any(&problems, "IAM statements with a wildcard action");
}

/// Managed policy names and SAM policy templates hide their actions from the
/// check above; the functions use explicit statements only.
#[test]
fn function_policies_are_explicit_statements() {
    let t = template();
    let mut problems = Vec::new();
    for (id, resource) in resources(&t).into_iter().filter(|(_, r)| is_function(r)) {
        let Some(policies) = at(resource, &["Properties", "Policies"]) else {
            continue;
        };
        let list: Vec<&Value> = match untag(policies) {
            Value::Sequence(items) => items.iter().collect(),
            single => vec![single],
        };
        for (i, policy) in list.into_iter().enumerate() {
            if field(policy, "Statement").is_none() {
                let shown = text(policy)
                    .or_else(|| keys(Some(policy)).into_iter().next())
                    .unwrap_or_default();
                problems.push(format!(
                    "{id}: Policies #{i} ({shown}) is not a policy document with a Statement"
                ));
            }
        }
    }
    fail_if_any(&problems, "function policies that cannot be checked");
}

/// A value shaped like a credential: Slack and OpenAI token prefixes, AWS
/// access key ids, a Slack signing secret (32 hex digits) or any long opaque
/// token. Parameter names (`/myao/...`) and URLs are not.
fn looks_like_secret_value(value: &str) -> bool {
    let v = value.trim();
    const PREFIXES: &[&str] = &[
        "xoxb-", "xoxp-", "xoxa-", "xoxr-", "xoxs-", "xoxe", "xapp-", "sk-", "AKIA", "ASIA",
    ];
    if PREFIXES.iter().any(|p| v.starts_with(p)) {
        return true;
    }
    if v.contains("{{resolve:ssm-secure") || v.contains("{{resolve:secretsmanager") {
        return true;
    }
    let opaque = v.len() >= 24
        && !v.starts_with('/')
        && !v.contains("://")
        && v.chars().any(|c| c.is_ascii_digit())
        && v.chars().any(|c| c.is_ascii_alphabetic())
        && v.chars()
            .all(|c| c.is_ascii_alphanumeric() || "+/=_.-".contains(c));
    let hex = v.len() >= 32 && v.chars().all(|c| c.is_ascii_hexdigit());
    opaque || hex
}

fn names_a_secret(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    ["secret", "token", "apikey", "api_key", "password"]
        .iter()
        .any(|w| n.contains(w))
}

#[test]
fn no_secret_value_in_parameters_or_outputs() {
    let t = template();
    let mut problems = Vec::new();

    if let Some(Value::Mapping(parameters)) = field(&t, "Parameters").map(untag) {
        for (name, parameter) in parameters {
            let name = text(name).unwrap_or_default();
            let Some(default) = field(parameter, "Default") else {
                continue;
            };
            let default = text(default).unwrap_or_default();
            if looks_like_secret_value(&default) {
                problems.push(format!(
                    "Parameters/{name}: Default looks like a secret value"
                ));
            }
            // The secret parameters hold the NAME of a SecureString, never its value.
            if names_a_secret(&name) && !default.starts_with('/') {
                problems.push(format!(
                    "Parameters/{name}: Default {default:?} is not an SSM parameter name"
                ));
            }
        }
    }

    if let Some(Value::Mapping(outputs)) = field(&t, "Outputs").map(untag) {
        for (name, output) in outputs {
            let name = text(name).unwrap_or_default();
            if names_a_secret(&name) {
                problems.push(format!("Outputs/{name}: an output named like a secret"));
            }
            let mut found = Vec::new();
            if let Some(value) = field(output, "Value") {
                strings(value, &mut found);
            }
            for s in found {
                if looks_like_secret_value(&s) || names_a_secret(&s) {
                    problems.push(format!("Outputs/{name}: Value mentions a secret ({s:?})"));
                }
            }
        }
    }

    // The template never creates the secrets either: they are made by hand.
    let secret_leaves: Vec<String> = [
        "SlackSigningSecretParameter",
        "SlackBotTokenParameter",
        "SlackClientSecretParameter",
        "LlmApiKeyParameter",
    ]
    .iter()
    .filter_map(|p| at(&t, &["Parameters", p, "Default"]).and_then(text))
    .filter_map(|d| d.rsplit('/').next().map(str::to_owned))
    .collect();
    for (id, resource) in resources(&t) {
        if resource_type(resource) != "AWS::SSM::Parameter" {
            continue;
        }
        let name = at(resource, &["Properties", "Name"])
            .and_then(text)
            .unwrap_or_default();
        let leaf = name.rsplit('/').next().unwrap_or_default();
        if name.contains("/secrets/") || secret_leaves.iter().any(|s| s == leaf) {
            problems.push(format!("{id}: creates the secret parameter {name}"));
        }
    }

    fail_if_any(&problems, "secrets in the template");
}

/// The settings path the functions read, as written in the template
/// (`/myao/${Stage}/`).
fn settings_path(t: &Value) -> Option<String> {
    let var = env::SETTINGS_PATH;
    at(t, &["Globals", "Function", "Environment", "Variables", var])
        .or_else(|| {
            at(
                t,
                &[
                    "Resources",
                    Function::Ingest.logical_id(),
                    "Properties",
                    "Environment",
                    "Variables",
                    var,
                ],
            )
        })
        .and_then(text)
}

#[test]
fn every_setting_has_a_parameter_holding_its_default() {
    let t = template();
    let prefix = settings_path(&t);
    let parameters: Vec<(String, String, &Value)> = resources(&t)
        .into_iter()
        .filter(|(_, r)| resource_type(r) == "AWS::SSM::Parameter")
        .map(|(id, r)| {
            let name = at(r, &["Properties", "Name"])
                .and_then(text)
                .unwrap_or_default();
            (id, name, r)
        })
        .collect();
    let mut problems = Vec::new();

    for (setting, default) in Settings::default_pairs() {
        let suffix = format!("/{setting}");
        let Some((id, name, resource)) = parameters.iter().find(|(_, n, _)| n.ends_with(&suffix))
        else {
            problems.push(format!(
                "{setting}: no AWS::SSM::Parameter named .../{setting}"
            ));
            continue;
        };
        if let Some(prefix) = &prefix {
            if *name != format!("{prefix}{setting}") {
                problems.push(format!(
                    "{id}: Name {name} is not under the settings path {prefix}"
                ));
            }
        }
        let kind = at(resource, &["Properties", "Type"])
            .and_then(text)
            .unwrap_or_default();
        if kind != "String" {
            problems.push(format!("{id}: Type {kind}, expected String"));
        }
        // A stack parameter may hold the default (`Value: !Ref LlmProvider`).
        let value = at(resource, &["Properties", "Value"]);
        let value = match value.and_then(|v| intrinsic(v, "Ref")).and_then(text) {
            Some(parameter) => at(&t, &["Parameters", &parameter, "Default"]),
            None => value,
        };
        match value.map(untag) {
            Some(Value::String(value)) if *value == default => {}
            Some(Value::String(value)) => problems.push(format!(
                "{id}: Value {value:?}, but the default of {setting} is {default:?}"
            )),
            Some(other) => problems.push(format!(
                "{id}: Value {other:?} is not a quoted string (the default of {setting} is {default:?})"
            )),
            None => problems.push(format!("{id}: no Value for {setting}")),
        }
    }

    // Anything else under the settings path would be reported as an unknown setting.
    if let Some(prefix) = &prefix {
        for (id, name, _) in &parameters {
            if let Some(rest) = name.strip_prefix(prefix.as_str()) {
                if !rest.contains('/') && !SETTING_NAMES.contains(&rest) {
                    problems.push(format!("{id}: {name} is not a known setting"));
                }
            }
        }
    }

    fail_if_any(&problems, "settings without a correct parameter");
}

#[test]
fn every_function_builds_its_own_binary() {
    let t = template();
    let global_code_uri = at(&t, &["Globals", "Function", "CodeUri"]).and_then(text);
    let mut problems = Vec::new();
    for function in Function::ALL {
        let id = function.logical_id();
        let Some(resource) = at(&t, &["Resources", id]) else {
            problems.push(format!("{id}: no such resource"));
            continue;
        };
        let name = id.trim_end_matches("Function").to_ascii_lowercase();
        let package = format!("myao-{name}");
        // The job functions are three binaries of one crate.
        let crate_dir = if function == Function::Ingest {
            "ingest"
        } else {
            "jobs"
        };
        let method = at(resource, &["Metadata", "BuildMethod"]).and_then(text);
        if method.as_deref() != Some("rust-cargolambda") {
            problems.push(format!(
                "{id}: Metadata.BuildMethod {method:?}, expected rust-cargolambda"
            ));
        }
        let binary = at(resource, &["Metadata", "BuildProperties", "Binary"]).and_then(text);
        if binary.as_deref() != Some(package.as_str()) {
            problems.push(format!(
                "{id}: Metadata.BuildProperties.Binary {binary:?}, expected {package}"
            ));
        }
        let manifest = workspace_root()
            .join("functions")
            .join(crate_dir)
            .join("Cargo.toml");
        match std::fs::read_to_string(&manifest) {
            Ok(m) if m.contains(&format!("name = \"{package}\"")) => {}
            Ok(_) => problems.push(format!(
                "{id}: {} does not define {package}",
                manifest.display()
            )),
            Err(e) => problems.push(format!("{id}: {}: {e}", manifest.display())),
        }
        // The workspace root (any SAM CLI) or the function's crate (recent SAM
        // CLI releases only, which find the binary in the workspace's target/).
        let code_uri = at(resource, &["Properties", "CodeUri"])
            .and_then(text)
            .or_else(|| global_code_uri.clone());
        let accepted = ["", ".", &format!("functions/{crate_dir}")];
        match code_uri
            .as_deref()
            .map(|u| u.trim_start_matches("./").trim_end_matches('/'))
        {
            Some(u) if accepted.contains(&u) => {}
            other => problems.push(format!(
                "{id}: CodeUri {other:?} is neither the workspace root nor functions/{crate_dir}"
            )),
        }
    }
    fail_if_any(&problems, "functions SAM cannot build");
}

/// The settings refuse LLM and Slack retries that cannot fit in these
/// timeouts, and the local mode gives each job as long: the template must
/// say the same, or the check would guard the wrong limit.
#[test]
fn job_functions_have_the_timeouts_the_settings_are_checked_against() {
    use myao_domain::settings::{
        JUDGMENT_FUNCTION_TIMEOUT_SECONDS, MEMORY_FUNCTION_TIMEOUT_SECONDS,
        RESPONSE_FUNCTION_TIMEOUT_SECONDS,
    };
    let t = template();
    let mut problems = Vec::new();
    for (function, expected) in [
        (Function::Judgment, JUDGMENT_FUNCTION_TIMEOUT_SECONDS),
        (Function::Response, RESPONSE_FUNCTION_TIMEOUT_SECONDS),
        (Function::Memory, MEMORY_FUNCTION_TIMEOUT_SECONDS),
    ] {
        let id = function.logical_id();
        let timeout = at(&t, &["Resources", id, "Properties", "Timeout"])
            .or_else(|| at(&t, &["Globals", "Function", "Timeout"]))
            .map(untag)
            .and_then(Value::as_u64);
        if timeout != Some(u64::from(expected)) {
            problems.push(format!(
                "{id}: Timeout {timeout:?}, but the code counts on {expected}"
            ));
        }
    }
    fail_if_any(&problems, "function timeouts that differ from the code's");
}

/// EventBridge Scheduler invokes its targets asynchronously: without an
/// on-failure destination, a job whose function failed after Lambda's own
/// retries would vanish.
#[test]
fn scheduled_functions_keep_their_failed_jobs() {
    let t = template();
    let mut problems = Vec::new();
    for function in [Function::Judgment, Function::Response, Function::Memory] {
        let id = function.logical_id();
        let on_failure = at(
            &t,
            &[
                "Resources",
                id,
                "Properties",
                "EventInvokeConfig",
                "DestinationConfig",
                "OnFailure",
            ],
        );
        if on_failure.and_then(|d| field(d, "Destination")).is_none() {
            problems.push(format!("{id}: no EventInvokeConfig OnFailure destination"));
        }
    }
    fail_if_any(&problems, "scheduled functions drop failed jobs");
}

/// A failed reply comes back sooner than the response queue's visibility
/// timeout because its handler changes that message's visibility, with the
/// permission Lambda's queue poller needs anyway: a function may change
/// visibility on the queue it reads and no other, and the response queue
/// lets every quick try of `retry_delays_seconds` through before its
/// dead-letter queue.
#[test]
fn a_function_changes_visibility_only_on_the_queue_it_reads() {
    let t = template();
    let mut grants = Vec::new();
    for (id, resource) in resources(&t).into_iter().filter(|(_, r)| is_function(r)) {
        let Some(policies) = at(resource, &["Properties", "Policies"]) else {
            continue;
        };
        let mut found = Vec::new();
        collect_grants(policies, "sqs:ChangeMessageVisibility", &mut found);
        grants.extend(found.into_iter().map(|r| (id.clone(), untag(&r).clone())));
    }
    let arn = |queue: &str| {
        untag(&serde_yaml::from_str::<Value>(&format!("!GetAtt {queue}.Arn")).expect("yaml"))
            .clone()
    };
    assert_eq!(
        grants,
        [
            (
                Function::Response.logical_id().to_owned(),
                arn("ResponseQueue")
            ),
            (Function::Memory.logical_id().to_owned(), arn("MemoryQueue")),
        ]
    );
    let max_receives = at(
        &t,
        &[
            "Resources",
            "ResponseQueue",
            "Properties",
            "RedrivePolicy",
            "maxReceiveCount",
        ],
    )
    .and_then(Value::as_u64)
    .expect("a maxReceiveCount");
    let quick = Settings::default().retry_delays_seconds.len() as u64;
    assert!(
        max_receives > quick,
        "{max_receives} receives for {quick} quick tries"
    );
}

/// The resources of every statement under `value` that grants `action`.
fn collect_grants(value: &Value, action: &str, out: &mut Vec<Value>) {
    match untag(value) {
        Value::Mapping(map) => {
            if let (Some(actions), Some(resource)) = (map.get("Action"), map.get("Resource")) {
                let mut names = Vec::new();
                strings(actions, &mut names);
                if names.iter().any(|a| a == action) {
                    out.push(resource.clone());
                }
            }
            for v in map.values() {
                collect_grants(v, action, out);
            }
        }
        Value::Sequence(items) => {
            for v in items {
                collect_grants(v, action, out);
            }
        }
        _ => {}
    }
}

/// The Slack app asks for what the bot reads: every message of public and
/// private channels, direct and group messages (the Messages tab open for
/// writing), and the events that say who can read a channel.
#[test]
fn the_slack_manifest_subscribes_to_what_privacy_needs() {
    let path = workspace_root().join("infra/slack-app-manifest.yaml");
    let text = std::fs::read_to_string(&path).expect("the manifest");
    let manifest: Value = serde_yaml::from_str(&text).expect("YAML");
    let list = |v: &Value| -> Vec<String> {
        v.as_sequence()
            .map(|s| {
                s.iter()
                    .filter_map(|x| x.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    };
    let events = list(&manifest["settings"]["event_subscriptions"]["bot_events"]);
    for event in [
        "message.channels",
        "message.groups",
        "message.im",
        "message.mpim",
        "channel_shared",
        "channel_unshared",
    ] {
        assert!(events.iter().any(|e| e == event), "no {event}: {events:?}");
    }
    let home = &manifest["features"]["app_home"];
    assert_eq!(home["messages_tab_enabled"], Value::Bool(true));
    assert_eq!(home["messages_tab_read_only_enabled"], Value::Bool(false));
    let scopes = list(&manifest["oauth_config"]["scopes"]["bot"]);
    for scope in [
        "channels:read",
        "groups:read",
        "im:history",
        "im:read",
        "mpim:history",
        "mpim:read",
    ] {
        assert!(scopes.iter().any(|s| s == scope), "no {scope}: {scopes:?}");
    }
}

/// The scopes each Slack Web API method the bot calls needs (any one of a
/// list will do). A method the adapter starts calling fails the test below
/// until its scope is named here and asked for in the manifest.
const METHOD_SCOPES: &[(&str, &[&str])] = &[
    // In any channel with chat:write since March 2026 (before, in AI-app
    // threads with assistant:write only).
    (
        "assistant.threads.setStatus",
        &["chat:write", "assistant:write"],
    ),
    ("auth.test", &[]),
    ("chat.postMessage", &["chat:write"]),
    (
        "conversations.info",
        &["channels:read", "groups:read", "im:read", "mpim:read"],
    ),
    ("emoji.list", &["emoji:read"]),
    // A shared file's `url_private`, with the `vision` setting on.
    ("file download", &["files:read"]),
    ("reactions.add", &["reactions:write"]),
    ("users.info", &["users:read"]),
];

/// The manifest asks for the scope of every method the Slack adapter calls,
/// and the permission table of docs/deploy.md lists exactly the manifest's
/// scopes.
#[test]
fn the_manifest_and_the_readme_ask_for_what_is_called() {
    let adapter = std::fs::read_to_string(workspace_root().join("shared/slack-api/src/lib.rs"))
        .expect("the Slack adapter");
    let called: Vec<&str> = adapter
        .split("const METHOD: &str = \"")
        .skip(1)
        .filter_map(|rest| rest.split('"').next())
        .collect();
    assert!(called.contains(&"reactions.add"), "{called:?}");
    let text = std::fs::read_to_string(workspace_root().join("infra/slack-app-manifest.yaml"))
        .expect("the manifest");
    let manifest: Value = serde_yaml::from_str(&text).expect("YAML");
    let scopes: Vec<&str> = manifest["oauth_config"]["scopes"]["bot"]
        .as_sequence()
        .expect("bot scopes")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    for method in &called {
        let Some((_, needs)) = METHOD_SCOPES.iter().find(|(m, _)| m == method) else {
            panic!("{method}: which scope does it need? (METHOD_SCOPES)");
        };
        assert!(
            needs.is_empty() || needs.iter().any(|n| scopes.contains(n)),
            "{method} needs one of {needs:?}; the manifest asks for {scopes:?}"
        );
    }

    let deploy =
        std::fs::read_to_string(workspace_root().join("docs/deploy.md")).expect("docs/deploy.md");
    let table = deploy
        .split("| Scope | Used for |")
        .nth(1)
        .and_then(|rest| rest.split("\n\n").next())
        .expect("the permission table of docs/deploy.md");
    let listed: Vec<&str> = table
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|w| w.contains(':') && !w.contains('.'))
        .collect();
    let mut listed_sorted = listed.clone();
    listed_sorted.sort_unstable();
    listed_sorted.dedup();
    let mut wanted = scopes.clone();
    wanted.sort_unstable();
    assert_eq!(listed_sorted, wanted, "docs/deploy.md table vs manifest");
}

/// Zero-ops means being told: every queue and every function has an alarm,
/// and the alarms tell the optional `AlarmEmail` (no address: no topic).
#[test]
fn every_queue_and_function_has_an_alarm_and_the_email_is_optional() {
    let t = template();
    let all = resources(&t);
    let alarms: Vec<&Value> = all
        .iter()
        .filter(|(_, r)| resource_type(r) == "AWS::CloudWatch::Alarm")
        .map(|(_, r)| *r)
        .collect();
    let watched = |id: &str| {
        alarms.iter().any(|alarm| {
            let mut names = Vec::new();
            if let Some(dimensions) = at(alarm, &["Properties", "Dimensions"]) {
                strings(dimensions, &mut names);
            }
            names
                .iter()
                .any(|n| n == id || n.starts_with(&format!("{id}.")))
        })
    };
    let mut problems = Vec::new();
    for (id, resource) in &all {
        if (resource_type(resource) == "AWS::SQS::Queue" || is_function(resource)) && !watched(id) {
            problems.push(format!("{id} has no alarm"));
        }
    }
    for alarm in &alarms {
        let condition = at(alarm, &["Properties", "AlarmActions"])
            .map(untag)
            .and_then(|v| v.as_sequence())
            .and_then(|s| s.first())
            .and_then(text);
        if condition.as_deref() != Some("HasAlarmEmail") {
            problems.push(format!(
                "an alarm acts without the email condition: {condition:?}"
            ));
        }
    }
    let email = at(&t, &["Parameters", "AlarmEmail", "Default"]).and_then(text);
    if email.as_deref() != Some("") {
        problems.push(format!("AlarmEmail must default to empty, not {email:?}"));
    }
    let topic = all
        .iter()
        .find(|(_, r)| resource_type(r) == "AWS::SNS::Topic");
    match topic
        .and_then(|(_, r)| field(r, "Condition"))
        .and_then(text)
    {
        Some(c) if c == "HasAlarmEmail" => {}
        other => problems.push(format!("the alarm topic's condition is {other:?}")),
    }
    fail_if_any(&problems, "alarms");
}

/// The functions' metrics reach the alarms and the dashboard: every function
/// writes them in `myao/<stack>` (`MYAO_METRICS_NAMESPACE`), an alarm
/// watches a refused Slack token and an LLM failing with no success in that
/// namespace, under the names the code counts, and the dashboard (valid
/// JSON once substituted) shows every metric.
#[test]
fn the_metrics_feed_the_alarms_and_the_dashboard() {
    use myao_domain::metrics;
    let t = template();
    let namespace = at(
        &t,
        &[
            "Globals",
            "Function",
            "Environment",
            "Variables",
            env::METRICS_NAMESPACE,
        ],
    )
    .and_then(text)
    .expect("the functions' metrics namespace");
    assert_eq!(namespace, "myao/${AWS::StackName}");

    let all = resources(&t);
    let alarm = |id: &str| {
        all.iter()
            .find(|(i, _)| i == id)
            .map(|(_, r)| *r)
            .unwrap_or_else(|| panic!("no {id}"))
    };
    let slack = alarm("SlackAuthAlarm");
    let channels = alarm("SlackChannelAlarm");
    let given_up = alarm("MentionsGivenUpAlarm");
    let events = alarm("SlackRateLimitedAlarm");
    let renewals = alarm("TokenRenewalAlarm");
    for (alarm, metric) in [
        (renewals, metrics::TOKEN_RENEWAL_FAILURES),
        (slack, metrics::SLACK_AUTH_ERRORS),
        (channels, metrics::SLACK_CHANNEL_REFUSALS),
        (given_up, metrics::MENTIONS_GIVEN_UP),
        (events, metrics::SLACK_EVENTS_RATE_LIMITED),
    ] {
        assert_eq!(
            at(alarm, &["Properties", "MetricName"])
                .and_then(text)
                .as_deref(),
            Some(metric)
        );
        assert_eq!(
            at(alarm, &["Properties", "Namespace"]).and_then(text),
            Some(namespace.clone())
        );
    }
    let llm = alarm("LlmFailingAlarm");
    let watched: Vec<(String, String)> = at(llm, &["Properties", "Metrics"])
        .and_then(|m| untag(m).as_sequence())
        .expect("metric math")
        .iter()
        .filter_map(|q| {
            let metric = at(q, &["MetricStat", "Metric"])?;
            Some((
                at(metric, &["Namespace"]).and_then(text)?,
                at(metric, &["MetricName"]).and_then(text)?,
            ))
        })
        .collect();
    assert_eq!(
        watched,
        vec![
            (namespace.clone(), metrics::LLM_FAILURES.to_owned()),
            (namespace.clone(), metrics::LLM_SUCCESSES.to_owned()),
        ]
    );
    for alarm in [slack, channels, given_up, events, renewals, llm] {
        assert!(
            at(alarm, &["Properties", "AlarmActions"]).is_some(),
            "the alarm tells the AlarmEmail topic"
        );
    }

    let body = at(alarm("Dashboard"), &["Properties", "DashboardBody"])
        .and_then(text)
        .expect("a dashboard body");
    // `${...}` substituted by something, as CloudFormation will.
    let mut substituted = String::new();
    let mut rest = body.as_str();
    while let Some(i) = rest.find("${") {
        substituted.push_str(&rest[..i]);
        substituted.push('X');
        rest = rest[i..].split_once('}').map_or("", |(_, after)| after);
    }
    substituted.push_str(rest);
    let json: serde_json::Value = serde_json::from_str(&substituted).expect("the body is JSON");
    assert!(json["widgets"].as_array().is_some_and(|w| !w.is_empty()));
    for name in [
        metrics::EVENTS,
        metrics::JUDGMENTS,
        metrics::ANSWERS,
        metrics::LIMIT_REFUSALS,
        metrics::LLM_CALLS,
        metrics::LLM_FAILURES,
        metrics::LLM_TOKENS_IN,
        metrics::LLM_TOKENS_OUT,
        metrics::LLM_LATENCY,
        metrics::SLACK_ERRORS,
        metrics::SLACK_RATE_LIMITED,
        metrics::SLACK_AUTH_ERRORS,
        metrics::SLACK_CHANNEL_REFUSALS,
        metrics::SLACK_EVENTS_RATE_LIMITED,
        metrics::LLM_UNUSABLE,
        metrics::MENTIONS_GIVEN_UP,
    ] {
        assert!(body.contains(name), "the dashboard lacks {name}");
    }
}

const HAIKU: &str = "anthropic.claude-haiku-4-5-20251001-v1:0";
const NOVA: &str = "amazon.nova-lite-v1:0";

/// The Bedrock policies of a stack deployed with `provider`, the models
/// `HAIKU` and `NOVA`, and `geography`: `(logical id, policy)`.
fn bedrock_policies(
    template: &Value,
    provider: &str,
    geography: &str,
) -> Vec<(String, serde_json::Value)> {
    let stack = Stack {
        template,
        parameters: vec![
            ("LlmProvider", provider.into()),
            ("BedrockModelIds", serde_json::json!([HAIKU, NOVA])),
            ("BedrockGeography", geography.into()),
        ],
        loop_variable: None,
    };
    stack.for_each("BedrockModels")
}

/// bedrock:InvokeModel (the Converse API's action) on the configured models
/// only, by the functions that call the LLM only: in this Region without a
/// geography; with one, the inference profile here and the foundation model
/// in the profile's destination Regions (any Region, through that profile
/// only). Nothing when the provider is OpenAI's.
#[test]
fn bedrock_is_invoked_only_on_the_configured_models_by_the_llm_functions() {
    let t = template();
    assert_eq!(
        at(&t, &["Parameters", "LlmProvider", "Default"]).and_then(text),
        Some("openai".to_owned())
    );
    assert!(bedrock_policies(&t, "openai", "us").is_empty());

    let profile =
        |id: &str| format!("arn:aws:bedrock:{REGION}:{ACCOUNT}:inference-profile/us.{id}");
    let cases = [
        (
            "none",
            vec![
                format!("arn:aws:bedrock:{REGION}::foundation-model/{HAIKU}"),
                format!("arn:aws:bedrock:{REGION}::foundation-model/{NOVA}"),
            ],
        ),
        (
            "us",
            vec![
                profile(HAIKU),
                format!("arn:aws:bedrock:*::foundation-model/{HAIKU}"),
                profile(NOVA),
                format!("arn:aws:bedrock:*::foundation-model/{NOVA}"),
            ],
        ),
    ];
    for (geography, expected) in cases {
        let policies = bedrock_policies(&t, "bedrock", geography);
        assert_eq!(policies.len(), 2, "one policy per model: {policies:?}");
        let mut granted = Vec::new();
        for (id, policy) in &policies {
            assert_eq!(policy["Type"], "AWS::IAM::ManagedPolicy", "{id}");
            let properties = &policy["Properties"];
            assert_eq!(
                properties["Roles"],
                serde_json::json!([
                    "ref:JudgmentFunctionRole",
                    "ref:ResponseFunctionRole",
                    "ref:MemoryFunctionRole"
                ]),
                "{id}: the functions that call the LLM, and only they"
            );
            let statements = properties["PolicyDocument"]["Statement"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            for statement in statements {
                assert_eq!(statement["Effect"], "Allow", "{statement}");
                assert_eq!(statement["Action"], "bedrock:InvokeModel", "{statement}");
                let resource = statement["Resource"].as_str().expect("one ARN").to_owned();
                let model = resource.rsplit('/').next().unwrap_or_default();
                assert!(
                    !model.contains('*') && !model.is_empty(),
                    "a wildcard model: {resource}"
                );
                // A foundation model in every Region only through its profile.
                if resource.contains(":bedrock:*:") {
                    let through =
                        &statement["Condition"]["StringEquals"]["bedrock:InferenceProfileArn"];
                    assert_eq!(*through, serde_json::json!(profile(model)), "{statement}");
                } else {
                    assert!(statement.get("Condition").is_none(), "{statement}");
                }
                granted.push(resource);
            }
        }
        assert_eq!(granted, expected, "geography {geography}");
    }

    // No other statement grants anything of Bedrock (ingest above all).
    let mut problems = Vec::new();
    for (id, resource) in resources(&t) {
        if id.starts_with("Fn::ForEach::") {
            continue;
        }
        let mut found = Vec::new();
        strings(resource, &mut found);
        if found.iter().any(|s| s.starts_with("bedrock:")) {
            problems.push(id);
        }
    }
    fail_if_any(
        &problems,
        "Bedrock permissions outside the Bedrock policies",
    );
}

/// With Amazon Bedrock no LLM key is needed: the key's parameter may be
/// left empty, and then no function is told a name or may read one.
#[test]
fn the_llm_key_is_optional() {
    let t = template();
    let pattern = at(&t, &["Parameters", "LlmApiKeyParameter", "AllowedPattern"])
        .and_then(text)
        .unwrap_or_default();
    assert!(
        pattern.starts_with("^$|"),
        "an empty name is allowed: {pattern}"
    );
    assert!(
        !env::required(Function::Judgment).contains(&env::LLM_API_KEY_PARAM),
        "the functions start without it"
    );
    for function in [Function::Judgment, Function::Response, Function::Memory] {
        let id = function.logical_id();
        for empty in [false, true] {
            let key = if empty {
                ""
            } else {
                "/myao/prod/secrets/llm_api_key"
            };
            let stack = Stack {
                template: &t,
                parameters: vec![("LlmApiKeyParameter", key.into())],
                loop_variable: None,
            };
            let variable = at(
                &t,
                &[
                    "Resources",
                    id,
                    "Properties",
                    "Environment",
                    "Variables",
                    env::LLM_API_KEY_PARAM,
                ],
            )
            .unwrap_or_else(|| panic!("{id}: no {}", env::LLM_API_KEY_PARAM));
            assert_eq!(
                stack.eval(variable),
                (!empty).then(|| key.into()),
                "{id}, key {key:?}"
            );
            let statements = at(&t, &["Resources", id, "Properties", "Policies"])
                .and_then(|p| untag(p).as_sequence())
                .and_then(|p| p.first())
                .and_then(|p| field(p, "Statement"))
                .and_then(|s| stack.eval(s))
                .unwrap_or_default();
            let secrets: Vec<_> = statements
                .as_array()
                .into_iter()
                .flatten()
                .filter(|s| s["Sid"] == "Secrets")
                .flat_map(|s| s["Resource"].as_array().cloned().unwrap_or_default())
                .collect();
            let reads_key = secrets
                .iter()
                .any(|r| r.as_str().is_some_and(|r| r.ends_with("llm_api_key")));
            assert_eq!(reads_key, !empty, "{id}, key {key:?}: {secrets:?}");
        }
    }
}

/// The first hour: the README fits on a few screens and sends the rest to
/// docs/, and no relative link of the README, docs/ or the changelog points
/// at a file that is not there.
#[test]
fn the_readme_is_short_and_every_relative_link_resolves() {
    let root = workspace_root();
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README");
    let lines = readme.lines().count();
    assert!(lines <= 300, "README.md has {lines} lines: at most 300");
    let mut pages = vec![root.join("README.md"), root.join("CHANGELOG.md")];
    let docs = std::fs::read_dir(root.join("docs")).expect("docs/");
    pages.extend(docs.filter_map(Result::ok).map(|e| e.path()));
    let mut broken = Vec::new();
    for page in pages
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
    {
        let text = std::fs::read_to_string(page).expect("a page");
        for link in text
            .split("](")
            .skip(1)
            .filter_map(|rest| rest.split(')').next())
        {
            let target = link.split('#').next().unwrap_or_default();
            if target.is_empty() || target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let dir = page.parent().expect("a folder");
            if !dir.join(target).exists() {
                broken.push(format!("{}: {link}", page.display()));
            }
        }
    }
    assert!(broken.is_empty(), "links to nothing: {broken:#?}");
    for page in [
        "deploy",
        "settings",
        "operations",
        "deciding",
        "privacy",
        "performance",
    ] {
        assert!(
            readme.contains(&format!("docs/{page}.md")),
            "the README links docs/{page}.md"
        );
    }
}

/// "Add to Slack" asks for the manifest's bot scopes, and the manifest of a
/// stack installed in many workspaces is the main one with the install
/// function's Redirect URL and token rotation on.
#[test]
fn the_install_asks_for_the_manifests_scopes_and_the_distributed_manifest_adds_the_redirect() {
    let read = |name: &str| -> Value {
        let text =
            std::fs::read_to_string(workspace_root().join("infra").join(name)).expect("a manifest");
        serde_yaml::from_str(&text).expect("YAML")
    };
    let (main, distributed) = (
        read("slack-app-manifest.yaml"),
        read("slack-app-manifest.distributed.yaml"),
    );
    let scopes: Vec<&str> = main["oauth_config"]["scopes"]["bot"]
        .as_sequence()
        .expect("bot scopes")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(scopes, myao_core::app::install::BOT_SCOPES);
    for part in [
        &["oauth_config", "scopes", "bot"][..],
        &["settings", "event_subscriptions"],
        &["settings", "interactivity"],
        &["features"],
        &["settings", "socket_mode_enabled"],
    ] {
        let at = |m: &Value| part.iter().fold(m.clone(), |v, k| v[*k].clone());
        assert_eq!(at(&distributed), at(&main), "{part:?}");
    }
    let redirects = distributed["oauth_config"]["redirect_urls"]
        .as_sequence()
        .expect("redirect URLs");
    assert_eq!(redirects.len(), 1);
    let redirect = redirects[0].as_str().expect("a URL");
    assert!(
        redirect.ends_with(myao_core::app::install::REDIRECT_PATH),
        "{redirect}"
    );
    assert_eq!(
        distributed["settings"]["token_rotation_enabled"],
        Value::Bool(true)
    );
    assert_eq!(
        main["settings"]["token_rotation_enabled"],
        Value::Bool(false)
    );
}
