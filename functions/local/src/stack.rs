//! What `myao doctor` and `myao redrive` know of a deployed stack: the names
//! of its table, schedule group, queues, settings path, Function URL and
//! secret parameters. They come from the stack's description, the JSON of
//! `aws cloudformation describe-stacks` (its outputs and parameters) or of
//! `sam list stack-outputs --output json`, and from flags; the table and the
//! queues have generated names that only the stack's outputs tell.

use std::collections::BTreeMap;

use myao_domain::JobKind;
use serde_json::Value;

/// The output holding the ingest function's URL.
pub const FUNCTION_URL: &str = "SlackRequestUrl";
/// The output holding the DynamoDB table's name.
pub const TABLE: &str = "TableName";
/// The output holding the settings' Parameter Store path.
pub const SETTINGS_PATH: &str = "SettingsPath";
/// The output holding the EventBridge Scheduler schedule group's name.
pub const SCHEDULE_GROUP: &str = "ScheduleGroupName";

/// One of the stack's queues, named by its logical id in `template.yaml`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum QueueId {
    Response,
    Memory,
    ResponseDeadLetter,
    MemoryDeadLetter,
    ScheduleDeadLetter,
    AsyncFailure,
}

impl QueueId {
    pub const ALL: [QueueId; 6] = [
        QueueId::Response,
        QueueId::Memory,
        QueueId::ResponseDeadLetter,
        QueueId::MemoryDeadLetter,
        QueueId::ScheduleDeadLetter,
        QueueId::AsyncFailure,
    ];

    /// The queues that keep work which failed for good: empty on a healthy
    /// stack, and what `myao redrive` empties.
    pub const FAILURES: [QueueId; 4] = [
        QueueId::ResponseDeadLetter,
        QueueId::MemoryDeadLetter,
        QueueId::ScheduleDeadLetter,
        QueueId::AsyncFailure,
    ];

    /// Its logical id in `template.yaml`.
    pub fn logical_id(self) -> &'static str {
        match self {
            QueueId::Response => "ResponseQueue",
            QueueId::Memory => "MemoryQueue",
            QueueId::ResponseDeadLetter => "ResponseDeadLetterQueue",
            QueueId::MemoryDeadLetter => "MemoryDeadLetterQueue",
            QueueId::ScheduleDeadLetter => "ScheduleDeadLetterQueue",
            QueueId::AsyncFailure => "AsyncFailureQueue",
        }
    }

    /// The stack output holding its URL.
    pub fn output(self) -> &'static str {
        match self {
            QueueId::Response => "ResponseQueueUrl",
            QueueId::Memory => "MemoryQueueUrl",
            QueueId::ResponseDeadLetter => "ResponseDeadLetterQueueUrl",
            QueueId::MemoryDeadLetter => "MemoryDeadLetterQueueUrl",
            QueueId::ScheduleDeadLetter => "ScheduleDeadLetterQueueUrl",
            QueueId::AsyncFailure => "AsyncFailureQueueUrl",
        }
    }

    /// The queue a job of `kind` runs from: the response function's or the
    /// memory function's. A judgment has none: it is always scheduled.
    pub fn for_job(kind: JobKind) -> Option<QueueId> {
        match kind {
            JobKind::Response => Some(QueueId::Response),
            JobKind::ThreadMemory
            | JobKind::MemorySweep
            | JobKind::ChannelMemory
            | JobKind::WorkspaceMemory
            | JobKind::Forget
            | JobKind::Purge => Some(QueueId::Memory),
            JobKind::Judgment | JobKind::Proactive => None,
        }
    }
}

/// One of the three secrets, whose SSM parameter names the stack's
/// parameters hold (never their values).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Secret {
    SigningSecret,
    BotToken,
    LlmApiKey,
}

impl Secret {
    pub const ALL: [Secret; 3] = [Secret::SigningSecret, Secret::BotToken, Secret::LlmApiKey];

    /// The stack parameter holding the secret's parameter name.
    pub fn stack_parameter(self) -> &'static str {
        match self {
            Secret::SigningSecret => "SlackSigningSecretParameter",
            Secret::BotToken => "SlackBotTokenParameter",
            Secret::LlmApiKey => "LlmApiKeyParameter",
        }
    }

    /// The last part of its default name, `<settings path>secrets/<leaf>`.
    pub fn leaf(self) -> &'static str {
        match self {
            Secret::SigningSecret => "slack_signing_secret",
            Secret::BotToken => "slack_bot_token",
            Secret::LlmApiKey => "llm_api_key",
        }
    }
}

/// A description that is not a stack's.
#[derive(Debug, thiserror::Error)]
pub enum StackError {
    /// Its reason is the source, shown after it (not twice).
    #[error("not JSON")]
    NotJson(#[from] serde_json::Error),
    #[error(
        "no outputs in it: give the JSON of `aws cloudformation describe-stacks --stack-name NAME` \
         or of `sam list stack-outputs --stack-name NAME --output json`"
    )]
    NoOutputs,
}

/// The names of a stack's parts, by output key (`TableName`) or parameter
/// key (`SlackBotTokenParameter`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stack {
    name: Option<String>,
    names: BTreeMap<String, String>,
}

impl Stack {
    /// Reads a stack's description: `describe-stacks`' whole answer
    /// (`{"Stacks": [...]}`, the first stack), one stack of it, or a list of
    /// outputs (`[{"OutputKey", "OutputValue"}]`, as `sam list stack-outputs`
    /// and `--query 'Stacks[0].Outputs'` print).
    pub fn from_json(text: &str) -> Result<Stack, StackError> {
        let value: Value = serde_json::from_str(text)?;
        let stack = value
            .get("Stacks")
            .and_then(Value::as_array)
            .and_then(|stacks| stacks.first())
            .unwrap_or(&value);
        let (outputs, parameters) = match stack {
            Value::Array(_) => (Some(stack), None),
            _ => (stack.get("Outputs"), stack.get("Parameters")),
        };
        let outputs = outputs
            .filter(|o| o.is_array())
            .ok_or(StackError::NoOutputs)?;
        let mut out = Stack {
            name: stack
                .get("StackName")
                .and_then(Value::as_str)
                .map(str::to_owned),
            names: BTreeMap::new(),
        };
        let pairs = |list: Option<&Value>, key: &str, value: &str| -> Vec<(String, String)> {
            let text = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).map(str::to_owned);
            list.and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|item| Some((text(item, key)?, text(item, value)?)))
                .collect()
        };
        for (key, value) in pairs(parameters, "ParameterKey", "ParameterValue")
            .into_iter()
            .chain(pairs(Some(outputs), "OutputKey", "OutputValue"))
        {
            out.set(key, value);
        }
        Ok(out)
    }

    /// Sets a name (a flag's, over the description's).
    pub fn set(&mut self, key: impl Into<String>, value: impl Into<String>) {
        self.names.insert(key.into(), value.into());
    }

    /// The name or URL under `key`, if known and not blank.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.names
            .get(key)
            .map(|v| v.trim())
            .filter(|v| !v.is_empty())
    }

    /// The stack's name, when the description gave it.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// The URL of one of its queues.
    pub fn queue_url(&self, queue: QueueId) -> Option<&str> {
        self.get(queue.output())
    }

    /// The name of a secret's SSM parameter: the stack's parameter, else
    /// `secrets/<leaf>` under the settings path (the template's default for
    /// `/myao/prod/`, and docs/deploy.md's for another stage).
    pub fn secret_parameter(&self, secret: Secret) -> Option<String> {
        if let Some(name) = self.get(secret.stack_parameter()) {
            return Some(name.to_owned());
        }
        let path = self.get(SETTINGS_PATH)?.trim_end_matches('/');
        Some(format!("{path}/secrets/{}", secret.leaf()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DESCRIBE_STACKS: &str = r#"{"Stacks": [{
        "StackName": "myao",
        "Parameters": [
            {"ParameterKey": "Stage", "ParameterValue": "prod"},
            {"ParameterKey": "SlackBotTokenParameter", "ParameterValue": "/elsewhere/token"}
        ],
        "Outputs": [
            {"OutputKey": "TableName", "OutputValue": "myao-Table-ABC", "Description": "d"},
            {"OutputKey": "SettingsPath", "OutputValue": "/myao/prod/"},
            {"OutputKey": "ResponseDeadLetterQueueUrl", "OutputValue": "https://sqs/q"}
        ]
    }]}"#;

    #[test]
    fn a_describe_stacks_answer_gives_outputs_parameters_and_name() {
        let stack = Stack::from_json(DESCRIBE_STACKS).unwrap();
        assert_eq!(stack.name(), Some("myao"));
        assert_eq!(stack.get(TABLE), Some("myao-Table-ABC"));
        assert_eq!(
            stack.queue_url(QueueId::ResponseDeadLetter),
            Some("https://sqs/q")
        );
        assert_eq!(stack.queue_url(QueueId::Memory), None);
        assert_eq!(
            stack.secret_parameter(Secret::BotToken).as_deref(),
            Some("/elsewhere/token")
        );
        assert_eq!(
            stack.secret_parameter(Secret::SigningSecret).as_deref(),
            Some("/myao/prod/secrets/slack_signing_secret")
        );
    }

    #[test]
    fn a_list_of_outputs_and_one_stack_are_read_too() {
        let list = r#"[{"OutputKey": "SettingsPath", "OutputValue": "/myao/dev"}]"#;
        let stack = Stack::from_json(list).unwrap();
        assert_eq!(stack.name(), None);
        assert_eq!(
            stack.secret_parameter(Secret::LlmApiKey).as_deref(),
            Some("/myao/dev/secrets/llm_api_key")
        );
        let one =
            r#"{"StackName": "x", "Outputs": [{"OutputKey": "TableName", "OutputValue": "t"}]}"#;
        assert_eq!(Stack::from_json(one).unwrap().get(TABLE), Some("t"));
    }

    #[test]
    fn flags_win_and_what_is_not_a_stack_is_refused() {
        let mut stack = Stack::from_json(DESCRIBE_STACKS).unwrap();
        stack.set(TABLE, "other");
        stack.set(SCHEDULE_GROUP, "  ");
        assert_eq!(stack.get(TABLE), Some("other"));
        assert_eq!(stack.get(SCHEDULE_GROUP), None, "blank is unknown");
        for bad in ["{", "{}", r#"{"Stacks": []}"#, "42", r#"{"Outputs": 1}"#] {
            assert!(Stack::from_json(bad).is_err(), "{bad}");
        }
        assert_eq!(Stack::default().secret_parameter(Secret::BotToken), None);
    }

    #[test]
    fn every_job_that_has_a_queue_finds_it() {
        assert_eq!(QueueId::for_job(JobKind::Response), Some(QueueId::Response));
        assert_eq!(QueueId::for_job(JobKind::Forget), Some(QueueId::Memory));
        assert_eq!(QueueId::for_job(JobKind::Judgment), None);
        for q in QueueId::ALL {
            assert_eq!(q.output(), format!("{}Url", q.logical_id()));
        }
    }
}
