//! `myao doctor`: checks a deployed stack from the outside, with the
//! caller's AWS credentials, and says how to fix what is broken. One
//! function per check, each returning a [`Check`]:
//!
//! - [`settings`]: every setting the stack creates is there, and all parse
//!   (with the functions' own parser, `Settings::from_pairs`);
//! - [`names`]: a warning, when one of the bot's names is a common word;
//! - [`secret`]: each secret parameter exists, is a SecureString, and looks
//!   like what it should hold;
//! - [`slack`]: the bot token works (`auth.test`) and has every bot scope of
//!   the app manifest (Slack lists the token's in `x-oauth-scopes`);
//! - [`function_url`]: the ingest function answers a `url_verification`
//!   signed with the signing secret as Slack signs it;
//! - [`llm`]: each configured model answers a one-token request, through
//!   its roles' provider (the OpenAI-compatible endpoint, or Amazon Bedrock);
//! - [`table`], [`schedule_group`]: they exist and are active;
//! - [`queue`]: each queue exists, and the failure queues are empty.
//!
//! Secret values are never printed: the report is scrubbed of them before
//! it is returned.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use aws_sdk_sqs::error::{DisplayErrorContext, ProvideErrorMetadata, SdkError};
use aws_sdk_sqs::types::QueueAttributeName;
use aws_sdk_ssm::types::ParameterType;
use myao_aws::dynamodb::DynamoStore;
use myao_aws::ssm::SsmSettingsSource;
use myao_core::adapters::system::{FixedSettings, StaticSecrets, SystemClock};
use myao_core::ports::{Llm, LlmRequest, LlmRole, SettingsProvider, SettingsSource};
use myao_domain::settings::LlmProvider;
use myao_domain::Settings;
use myao_llm::bedrock::BedrockLlm;
use myao_llm::openai::OpenAiLlm;
use myao_llm::{model_name, provider, LlmRouter};

use crate::stack::{QueueId, Secret, Stack, FUNCTION_URL, SCHEDULE_GROUP, SETTINGS_PATH, TABLE};

mod check;
mod names;
mod slack;

pub use check::{Check, Verdict};
pub use names::names;
pub use slack::{function_url, required_scopes, slack, slack_status};

/// The longest one LLM check waits for its answer.
const LLM_TIMEOUT_SECONDS: u32 = 30;
/// A secret shorter than this is not looked for in the report (it would
/// match ordinary words).
const MIN_REDACTED_LEN: usize = 6;

/// The AWS clients the checks use, from one SDK configuration.
#[derive(Debug, Clone)]
pub struct Clients {
    /// The configuration they were made from, for the Bedrock check.
    pub config: aws_config::SdkConfig,
    pub ssm: aws_sdk_ssm::Client,
    pub dynamodb: aws_sdk_dynamodb::Client,
    pub scheduler: aws_sdk_scheduler::Client,
    pub sqs: aws_sdk_sqs::Client,
}

impl Clients {
    pub fn new(config: &aws_config::SdkConfig) -> Clients {
        Clients {
            config: config.clone(),
            ssm: aws_sdk_ssm::Client::new(config),
            dynamodb: aws_sdk_dynamodb::Client::new(config),
            scheduler: aws_sdk_scheduler::Client::new(config),
            sqs: aws_sdk_sqs::Client::new(config),
        }
    }
}

/// Runs every check on `stack`, in order: settings (and the names' warning,
/// if any), secrets, Slack, the Function URL, the LLM, the table, the
/// schedule group, the queues.
pub async fn run(aws: &Clients, http: &reqwest::Client, stack: &Stack) -> Vec<Check> {
    let stack_name = stack.name().unwrap_or("<stack>");
    let (check, loaded) = settings(&aws.ssm, stack.get(SETTINGS_PATH)).await;
    let mut checks = vec![check];
    let settings = loaded.unwrap_or_default();
    checks.extend(names(&settings));
    let mut values = BTreeMap::new();
    for kind in Secret::ALL {
        if kind == Secret::LlmApiKey && !crate::llm::uses_openai(&settings) {
            checks.push(Check::ok(
                format!("secret {}", kind.leaf()),
                "not needed: every role's provider is bedrock",
            ));
            continue;
        }
        let name = stack.secret_parameter(kind);
        let (check, value) = secret(&aws.ssm, kind, name.as_deref()).await;
        checks.push(check);
        if let (Some(name), Some(value)) = (name, value) {
            values.insert(kind.leaf(), (name, value));
        }
    }
    let known = |kind: Secret| {
        values
            .get(kind.leaf())
            .map(|(n, v)| (n.as_str(), v.as_str()))
    };

    checks.push(slack(http, &settings, known(Secret::BotToken)).await);
    checks.push(slack_status(http, &settings, known(Secret::BotToken)).await);
    checks.push(
        function_url(
            http,
            stack.get(FUNCTION_URL),
            known(Secret::SigningSecret),
            stack_name,
        )
        .await,
    );
    checks.extend(
        llm(
            http,
            &aws.config,
            &settings,
            stack.get(SETTINGS_PATH),
            known(Secret::LlmApiKey),
        )
        .await,
    );
    let table_check = table(&aws.dynamodb, stack.get(TABLE)).await;
    let table_ok = table_check.passed();
    checks.push(table_check);
    let usable = stack.get(TABLE).filter(|_| table_ok);
    checks.push(match usable {
        Some(name) => hints(&aws.dynamodb, name).await,
        // The table's own line tells what is wrong.
        None => Check::ok("hints", "not read: the table is not usable"),
    });
    checks.push(match usable {
        Some(name) => installations(&aws.dynamodb, name).await,
        None => Check::ok("installations", "not read: the table is not usable"),
    });
    checks.push(schedule_group(&aws.scheduler, stack.get(SCHEDULE_GROUP)).await);
    for queue_id in QueueId::ALL {
        checks.push(queue(&aws.sqs, queue_id, stack.queue_url(queue_id), stack_name).await);
    }

    for (_, value) in values.values() {
        let value = value.trim();
        if value.len() >= MIN_REDACTED_LEN {
            checks.iter_mut().for_each(|c| c.redact(value));
        }
    }
    checks
}

/// An AWS error as `Code: message`, or the SDK's own account of it.
pub(crate) fn aws_error<E>(error: &SdkError<E>) -> String
where
    E: ProvideErrorMetadata + std::error::Error + 'static,
{
    match (error.code(), error.message()) {
        (Some(code), Some(message)) => format!("{code}: {message}"),
        (Some(code), None) => code.to_owned(),
        _ => DisplayErrorContext(error).to_string(),
    }
}

/// The fix of an AWS call that failed other than by a missing resource.
const AWS_FIX: &str = "check your AWS credentials (`aws sts get-caller-identity`), that they \
                       may read this stack's resources, and AWS_REGION (the stack's region)";

/// Whether the service answered with one of `codes`.
fn has_code<E: ProvideErrorMetadata>(error: &SdkError<E>, codes: &[&str]) -> bool {
    error.code().is_some_and(|c| codes.contains(&c))
}

/// Every setting the stack creates exists under the settings path, and
/// every parameter there parses. Returns the settings read (for the Slack
/// and LLM checks) when they could be read at all.
pub async fn settings(ssm: &aws_sdk_ssm::Client, path: Option<&str>) -> (Check, Option<Settings>) {
    const NAME: &str = "settings";
    let Some(path) = path else {
        let fix = "give --stack (the stack's description) or --settings-path /myao/prod/";
        return (Check::fail(NAME, "no settings path", fix), None);
    };
    let source = SsmSettingsSource {
        client: ssm.clone(),
        path: path.to_owned(),
    };
    let pairs = match source.load().await {
        Ok(pairs) => pairs,
        Err(error) => {
            let fix = format!(
                "is {path} the stack's SettingsPath output, in this region? `sam deploy` creates \
                 every setting; else {AWS_FIX}"
            );
            return (Check::fail(NAME, error.to_string(), fix), None);
        }
    };
    let (settings, issues) =
        Settings::from_pairs(pairs.iter().map(|(n, v)| (n.as_str(), v.as_str())));
    let present: BTreeSet<&str> = pairs.iter().map(|(n, _)| n.as_str()).collect();
    let missing: Vec<String> = Settings::default_pairs()
        .into_iter()
        .filter(|(name, _)| !present.contains(name))
        .map(|(name, _)| name.to_owned())
        .collect();
    if missing.is_empty() && issues.is_empty() {
        let found = format!("{} under {path}, all valid", pairs.len());
        return (Check::ok(NAME, found), Some(settings));
    }
    let mut problems = Vec::new();
    if !missing.is_empty() {
        problems.push(format!("missing {}", missing.join(", ")));
    }
    // The problem only: a value may be long (a persona), and an unknown
    // name may be a secret stored in the wrong place.
    problems.extend(
        issues
            .iter()
            .map(|i| format!("{} is not valid ({})", i.name, i.problem)),
    );
    let prefix = format!("{}/", path.trim_end_matches('/'));
    let fix = format!(
        "`sam deploy` puts missing settings back (or `myao settings unset NAME --settings-path \
         {prefix}`); correct an invalid one with `myao settings set NAME VALUE --settings-path \
         {prefix}` (docs/settings.md), and delete an unknown one"
    );
    (Check::fail(NAME, problems.join("; "), fix), Some(settings))
}

/// A secret's parameter exists, is a SecureString, and holds something
/// like what it should. Returns its value for the checks that use it.
pub async fn secret(
    ssm: &aws_sdk_ssm::Client,
    kind: Secret,
    name: Option<&str>,
) -> (Check, Option<String>) {
    let check = format!("secret {}", kind.leaf());
    let Some(name) = name else {
        let fix = format!(
            "give --stack, --settings-path or --set {}=NAME",
            kind.stack_parameter()
        );
        return (
            Check::fail(check, "its parameter name is unknown", fix),
            None,
        );
    };
    let put = |overwrite: &str, value: &str| {
        format!(
            "aws ssm put-parameter{overwrite} --type SecureString --name {name} --value '{value}'"
        )
    };
    let answer = ssm
        .get_parameter()
        .name(name)
        .with_decryption(true)
        .send()
        .await;
    let parameter = match answer {
        Ok(out) => out.parameter,
        Err(e) if has_code(&e, &["ParameterNotFound"]) => {
            let mut fix = format!("create it: {} (docs/deploy.md, step 3)", put("", "..."));
            if kind == Secret::LlmApiKey {
                fix.push_str("; for an endpoint that takes no key, store any value, e.g. none");
            }
            return (
                Check::fail(check, format!("{name} does not exist"), fix),
                None,
            );
        }
        Err(e) => {
            let fix = format!("{AWS_FIX}; reading it needs ssm:GetParameter and kms:Decrypt");
            return (
                Check::fail(check, format!("{name}: {}", aws_error(&e)), fix),
                None,
            );
        }
    };
    let kind_of = parameter.as_ref().and_then(|p| p.r#type().cloned());
    let value = parameter
        .and_then(|p| p.value)
        .map(|v| v.trim().to_owned())
        .unwrap_or_default();
    let problem = if kind_of != Some(ParameterType::SecureString) {
        Some((
            format!("{name} is not a SecureString"),
            format!(
                "store it encrypted: `aws ssm delete-parameter --name {name}`, then {}",
                put("", "...")
            ),
        ))
    } else if value.is_empty() {
        Some((format!("{name} is empty"), put(" --overwrite", "...")))
    } else if kind == Secret::BotToken && !value.starts_with("xoxb-") {
        Some((
            format!("{name} does not hold a bot token (xoxb-...)"),
            format!(
                "copy the Bot User OAuth Token from the app's OAuth & Permissions page: {}",
                put(" --overwrite", "xoxb-...")
            ),
        ))
    } else {
        None
    };
    match problem {
        Some((problem, fix)) => (Check::fail(check, problem, fix), None),
        None => (Check::ok(check, format!("{name} is set")), Some(value)),
    }
}

/// Each model of the settings answers a one-token request, through the
/// router the functions use: on the OpenAI-compatible endpoint with the API
/// key (`key`: its parameter name and value), or on Amazon Bedrock with
/// `aws`'s Region and credentials. `path` is the settings path, for the fixes.
pub async fn llm(
    http: &reqwest::Client,
    aws: &aws_config::SdkConfig,
    settings: &Settings,
    path: Option<&str>,
    key: Option<(&str, &str)>,
) -> Vec<Check> {
    let mut checks = Vec::new();
    if key.is_none() && crate::llm::uses_openai(settings) {
        checks.push(Check::fail(
            "llm",
            "not checked: no API key",
            "fix secret llm_api_key first",
        ));
    }
    let (parameter, key) = key.unwrap_or_default();
    let probe = ModelProbe {
        router: router_once(http, aws, settings, parameter, key),
        settings,
        path,
        parameter,
        region: aws
            .region()
            .map_or("(no region)".to_owned(), |r| r.to_string()),
    };
    for ((provider, model), roles) in models(settings) {
        let bedrock = provider == LlmProvider::Bedrock.as_str();
        if !bedrock && key.is_empty() {
            continue;
        }
        checks.push(probe.check(model, bedrock, &roles).await);
    }
    checks
}

/// The models of the settings by provider and name, each with the roles
/// that use it: one check per model, not per role.
fn models(settings: &Settings) -> BTreeMap<(&str, &str), Vec<LlmRole>> {
    let mut models: BTreeMap<(&str, &str), Vec<LlmRole>> = BTreeMap::new();
    for role in crate::llm::ROLES {
        models
            .entry((
                provider(settings, role).as_str(),
                model_name(settings, role),
            ))
            .or_default()
            .push(role);
    }
    models
}

/// The functions' router over both providers, making one attempt with a
/// bounded wait: the configured call otherwise.
fn router_once(
    http: &reqwest::Client,
    aws: &aws_config::SdkConfig,
    settings: &Settings,
    parameter: &str,
    key: &str,
) -> LlmRouter {
    let mut once = settings.clone();
    once.llm_max_retries = 0;
    once.llm_timeout_seconds = once.llm_timeout_seconds.min(LLM_TIMEOUT_SECONDS);
    once.memory_timeout_seconds = once.memory_timeout_seconds.min(LLM_TIMEOUT_SECONDS);
    let once: Arc<dyn SettingsProvider> = Arc::new(FixedSettings::new(once));
    let openai = OpenAiLlm::new(
        http.clone(),
        once.clone(),
        Arc::new(StaticSecrets::new().with(parameter, key)),
        parameter,
    )
    .with_backoff(Duration::from_millis(100));
    let bedrock = BedrockLlm::new(aws, once.clone()).with_backoff(Duration::from_millis(100));
    LlmRouter::new(once, Arc::new(openai)).with_bedrock(Arc::new(bedrock))
}

/// What checking one model needs, the same for every model.
struct ModelProbe<'a> {
    router: LlmRouter,
    settings: &'a Settings,
    /// The settings path, for the fixes.
    path: Option<&'a str>,
    /// The API key's parameter name.
    parameter: &'a str,
    /// Bedrock's Region, as the fixes name it.
    region: String,
}

impl ModelProbe<'_> {
    /// `model` (on Bedrock, or else the OpenAI-compatible endpoint) answers
    /// a one-token request of the first of its `roles`.
    async fn check(&self, model: &str, bedrock: bool, roles: &[LlmRole]) -> Check {
        let name = format!("llm {model}");
        let role_names: Vec<&str> = roles.iter().map(|r| r.as_str()).collect();
        let role = roles.first().copied().unwrap_or(LlmRole::Judgment);
        let request = LlmRequest {
            role,
            system: "Answer with one word: ok".to_owned(),
            json: false,
            max_tokens: Some(1),
            images: Vec::new(),
            stable_prefix: 0,
        };
        let place = if bedrock {
            format!("on Amazon Bedrock in {}", self.region)
        } else {
            format!("at {}", self.settings.llm_base_url)
        };
        match self.router.complete(&request).await {
            Ok(_) => Check::ok(
                name,
                format!("answered {place} ({})", role_names.join(", ")),
            ),
            Err(error) => {
                let detail = error.to_string();
                let fix = self.fix(&detail, model, bedrock, role);
                Check::fail(name, detail, fix)
            }
        }
    }

    /// What to do about `model`, which did not answer `role`'s request.
    fn fix(&self, detail: &str, model: &str, bedrock: bool, role: LlmRole) -> String {
        let base = &self.settings.llm_base_url;
        let parameter = self.parameter;
        let prefix = format!(
            "{}/",
            self.path.unwrap_or("/myao/prod").trim_end_matches('/')
        );
        let set_model = format!(
            "set {}_model (`myao settings set {}_model MODEL --settings-path {prefix}`)",
            role.as_str(),
            role.as_str()
        );
        if bedrock {
            bedrock_fix(detail, model, &self.region, &set_model)
        } else if detail.contains("HTTP 401") || detail.contains("HTTP 403") {
            format!(
                "the key in {parameter} is wrong or expired: `aws ssm put-parameter \
                 --overwrite --type SecureString --name {parameter} --value '...'`"
            )
        } else if detail.contains("HTTP 404") {
            format!("no model {model} at {base}: {set_model}, or llm_base_url")
        } else if detail.contains("HTTP 429") {
            "rate limited or out of credit: see the provider's limits and billing".to_owned()
        } else {
            format!("is llm_base_url ({base}) right and reachable?")
        }
    }
}

/// What to do about a Bedrock model that did not answer.
fn bedrock_fix(detail: &str, model: &str, region: &str, set_model: &str) -> String {
    if detail.contains("AccessDeniedException") {
        format!(
            "no access to {model}: enable model access to it in the Bedrock console \
             ({region}); the functions may invoke only the models of the stack's \
             BedrockModelIds (ids without the geography prefix): add it and deploy again; \
             your own credentials need bedrock:InvokeModel on it too"
        )
    } else if detail.contains("ValidationException") || detail.contains("ResourceNotFound") {
        format!(
            "no model {model} in {region}: {set_model} to a model id or inference profile id \
             Bedrock has there (`aws bedrock list-inference-profiles`, `aws bedrock \
             list-foundation-models`)"
        )
    } else if detail.contains("ThrottlingException") {
        "rate limited: see the account's Bedrock quotas for the model".to_owned()
    } else {
        format!("is Amazon Bedrock reachable in {region} (AWS_REGION), with your credentials?")
    }
}

/// The DynamoDB table exists and is active.
pub async fn table(dynamodb: &aws_sdk_dynamodb::Client, name: Option<&str>) -> Check {
    const NAME: &str = "table";
    let Some(name) = name else {
        return Check::fail(
            NAME,
            "its name is unknown",
            format!("give --stack, or --set {TABLE}=NAME"),
        );
    };
    match dynamodb.describe_table().table_name(name).send().await {
        Ok(out) => {
            let status = out
                .table()
                .and_then(|t| t.table_status())
                .map(|s| s.as_str().to_owned());
            match status.as_deref() {
                Some("ACTIVE") => Check::ok(NAME, format!("{name} is active")),
                other => Check::fail(
                    NAME,
                    format!("{name} is {}", other.unwrap_or("in no known state")),
                    "wait a minute and run doctor again; see the table in the DynamoDB console",
                ),
            }
        }
        Err(e) if has_code(&e, &["ResourceNotFoundException"]) => Check::fail(
            NAME,
            format!("{name} does not exist"),
            format!(
                "is it the stack's {TABLE} output, in this region? A table deleted by hand is not \
                 made again by `sam deploy`: restore it from its point-in-time backup under that \
                 name, or delete the stack and deploy it again"
            ),
        ),
        Err(e) => Check::fail(NAME, format!("{name}: {}", aws_error(&e)), AWS_FIX),
    }
}

/// The channels the people's hints tune (read from the table): told, not
/// judged; only a table that cannot be read fails.
pub async fn hints(dynamodb: &aws_sdk_dynamodb::Client, table: &str) -> Check {
    const NAME: &str = "hints";
    let store = DynamoStore::new(dynamodb.clone(), table, Arc::new(SystemClock));
    match crate::feedback::report(&store, &[], chrono::Utc::now()).await {
        Ok(report) => {
            let lines = crate::feedback::tuning_lines(&report);
            match lines.is_empty() {
                true => Check::ok(NAME, "no channel is tuned: each speaks at its level"),
                false => Check::ok(
                    NAME,
                    format!(
                        "{} (myao feedback for the posts, myao feedback reset --channel ID to undo)",
                        lines.join(", ")
                    ),
                ),
            }
        }
        Err(error) => Check::fail(NAME, format!("cannot read the labels: {error}"), AWS_FIX),
    }
}

/// The workspaces the app is installed in through "Add to Slack", with
/// their scopes and token expiry; a token past its expiry (its renewal
/// did not run) fails.
pub async fn installations(dynamodb: &aws_sdk_dynamodb::Client, table: &str) -> Check {
    use myao_core::ports::Installations;
    const NAME: &str = "installations";
    let store = DynamoStore::new(dynamodb.clone(), table, Arc::new(SystemClock));
    let installed = match store.installations().await {
        Ok(installed) => installed,
        Err(error) => {
            return Check::fail(NAME, format!("cannot read them: {error}"), AWS_FIX);
        }
    };
    if installed.is_empty() {
        return Check::ok(
            NAME,
            "none: the stack serves the workspace of its bot token",
        );
    }
    let now = chrono::Utc::now();
    let expired: Vec<String> = installed
        .iter()
        .filter(|i| i.rotation.as_ref().is_some_and(|r| r.expires_at <= now))
        .map(|i| i.team.to_string())
        .collect();
    let listed: Vec<String> = installed
        .iter()
        .map(|i| {
            let expiry = i.rotation.as_ref().map_or_else(
                || "a token that does not expire".to_owned(),
                |r| format!("token until {}", r.expires_at.format("%Y-%m-%d %H:%M UTC")),
            );
            format!(
                "{} ({}): {} scopes, {expiry}",
                i.team,
                i.team_name,
                i.scopes.len()
            )
        })
        .collect();
    match expired.is_empty() {
        true => Check::ok(NAME, listed.join("; ")),
        false => Check::fail(
            NAME,
            format!("the token of {} has expired", expired.join(", ")),
            "a rotating token is not renewed on a schedule yet: install the app in that workspace again (its Add to Slack link)",
        ),
    }
}

/// The EventBridge Scheduler schedule group exists and is active.
pub async fn schedule_group(scheduler: &aws_sdk_scheduler::Client, name: Option<&str>) -> Check {
    const NAME: &str = "schedule group";
    let Some(name) = name else {
        let fix = format!("give --stack, or --set {SCHEDULE_GROUP}=NAME (the stack's name)");
        return Check::fail(NAME, "its name is unknown", fix);
    };
    match scheduler.get_schedule_group().name(name).send().await {
        Ok(out) => match out.state().map(|s| s.as_str()) {
            Some("ACTIVE") | None => Check::ok(NAME, format!("{name} is active")),
            Some(state) => Check::fail(
                NAME,
                format!("{name} is {state}"),
                "it is being deleted: deploy the stack again (`sam deploy`)",
            ),
        },
        Err(e) if has_code(&e, &["ResourceNotFoundException"]) => Check::fail(
            NAME,
            format!("{name} does not exist"),
            "`sam deploy` makes it again (it is named after the stack)",
        ),
        Err(e) => Check::fail(NAME, format!("{name}: {}", aws_error(&e)), AWS_FIX),
    }
}

/// A queue exists; a failure queue holds no message.
pub async fn queue(
    sqs: &aws_sdk_sqs::Client,
    queue: QueueId,
    url: Option<&str>,
    stack_name: &str,
) -> Check {
    let name = format!("queue {}", queue.logical_id());
    let Some(url) = url else {
        let fix = format!(
            "deploy this version (`sam build && sam deploy`) for the output, and describe the \
             stack again; or give --set {}=URL",
            queue.output()
        );
        return Check::fail(
            name,
            format!("no {} in the stack's description", queue.output()),
            fix,
        );
    };
    let answer = sqs
        .get_queue_attributes()
        .queue_url(url)
        .attribute_names(QueueAttributeName::ApproximateNumberOfMessages)
        .attribute_names(QueueAttributeName::ApproximateNumberOfMessagesNotVisible)
        .attribute_names(QueueAttributeName::ApproximateNumberOfMessagesDelayed)
        .send()
        .await;
    let attributes = match answer {
        Ok(out) => out.attributes.unwrap_or_default(),
        Err(e)
            if has_code(
                &e,
                &[
                    "AWS.SimpleQueueService.NonExistentQueue",
                    "QueueDoesNotExist",
                ],
            ) =>
        {
            let fix = format!(
                "is it the stack's {} output, in this region?",
                queue.output()
            );
            return Check::fail(name, format!("{url} does not exist"), fix);
        }
        Err(e) => return Check::fail(name, aws_error(&e), AWS_FIX),
    };
    let count: u64 = attributes
        .values()
        .filter_map(|v| v.trim().parse::<u64>().ok())
        .sum();
    if !QueueId::FAILURES.contains(&queue) {
        return Check::ok(name, format!("{count} job(s) waiting"));
    }
    if count == 0 {
        return Check::ok(name, "empty");
    }
    Check::fail(
        name,
        format!("{count} failed job(s) kept"),
        format!(
            "read why in the logs (`sam logs --stack-name {stack_name} --filter ERROR --start-time \
             '1 day ago'`), fix the cause, then `myao redrive --stack FILE` (--dry-run first)"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_manifest_scopes_are_read() {
        let scopes = required_scopes().unwrap();
        for scope in ["chat:write", "channels:history", "users:read"] {
            assert!(scopes.iter().any(|s| s == scope), "{scope} in {scopes:?}");
        }
    }

    #[test]
    fn a_line_per_check_with_the_fix_of_a_failure_and_no_secret() {
        let ok = Check::ok("table", "t is active");
        assert_eq!(ok.to_string(), "ok    table: t is active");
        let mut bad = Check::fail(
            "llm gpt",
            "HTTP 401: key fake-key-abc refused",
            "store fake-key-abc again",
        );
        bad.redact("fake-key-abc");
        assert!(!bad.passed());
        assert_eq!(
            bad.to_string(),
            "FAIL  llm gpt: HTTP 401: key [redacted] refused -- fix: store [redacted] again"
        );
    }
}
