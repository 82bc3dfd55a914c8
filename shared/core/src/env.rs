//! The environment variables the Lambda functions read, in one place.
//!
//! `template.yaml` must define every variable a function reads; a test in
//! `tests/` parses the template and compares it with [`required`].

/// SSM path prefix under which the settings live, e.g. `/myao/prod/`.
pub const SETTINGS_PATH: &str = "MYAO_SETTINGS_PATH";
/// The DynamoDB table.
pub const TABLE: &str = "MYAO_TABLE";
/// Name of the SSM SecureString holding Slack's signing secret.
pub const SLACK_SIGNING_SECRET_PARAM: &str = "MYAO_SLACK_SIGNING_SECRET_PARAM";
/// Name of the SSM SecureString holding the Slack bot token (`xoxb-...`).
pub const SLACK_BOT_TOKEN_PARAM: &str = "MYAO_SLACK_BOT_TOKEN_PARAM";
/// Name of the SSM SecureString holding the LLM API key of the
/// OpenAI-compatible provider. Optional (the job functions read it, but
/// start without it): unset or empty, no key is sent, as Amazon Bedrock
/// (reached with the function's role) and a local endpoint need none.
pub const LLM_API_KEY_PARAM: &str = "MYAO_LLM_API_KEY_PARAM";
/// Name of the SSM SecureString holding the Slack app's Client Secret.
/// Optional (the memory function reads it): set, its recurring run renews
/// the installed workspaces' rotating tokens.
pub const SLACK_CLIENT_SECRET_PARAM: &str = "MYAO_SLACK_CLIENT_SECRET_PARAM";
/// The EventBridge Scheduler schedule group of this stage.
pub const SCHEDULE_GROUP: &str = "MYAO_SCHEDULE_GROUP";
/// The role EventBridge Scheduler assumes to invoke the target functions.
pub const SCHEDULER_ROLE_ARN: &str = "MYAO_SCHEDULER_ROLE_ARN";
/// The standard SQS queue receiving schedule deliveries that failed.
pub const SCHEDULE_DLQ_ARN: &str = "MYAO_SCHEDULE_DLQ_ARN";
/// Target of judgment schedules.
pub const JUDGMENT_FUNCTION_ARN: &str = "MYAO_JUDGMENT_FUNCTION_ARN";
/// Target of response schedules.
pub const RESPONSE_FUNCTION_ARN: &str = "MYAO_RESPONSE_FUNCTION_ARN";
/// Queue of immediate (or short-delay) response jobs, read by the response function.
pub const RESPONSE_QUEUE_URL: &str = "MYAO_RESPONSE_QUEUE_URL";
/// Queue of memory jobs, read by the memory function.
pub const MEMORY_QUEUE_URL: &str = "MYAO_MEMORY_QUEUE_URL";

/// The CloudWatch namespace of the functions' metrics (`myao/<stack>`).
pub const METRICS_NAMESPACE: &str = "MYAO_METRICS_NAMESPACE";

/// Which Lambda function a process is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Function {
    Ingest,
    Judgment,
    Response,
    Memory,
    /// "Add to Slack": the install pages, on a Function URL of their own.
    Install,
}

impl Function {
    /// All five functions.
    pub const ALL: [Function; 5] = [
        Function::Ingest,
        Function::Judgment,
        Function::Response,
        Function::Memory,
        Function::Install,
    ];

    /// `ingest`, `judgment`, `response`, `memory` or `install`: its name in
    /// logs and metrics.
    pub fn name(self) -> &'static str {
        match self {
            Function::Ingest => "ingest",
            Function::Judgment => "judgment",
            Function::Response => "response",
            Function::Memory => "memory",
            Function::Install => "install",
        }
    }

    /// The logical id of the function in `template.yaml`.
    pub fn logical_id(self) -> &'static str {
        match self {
            Function::Ingest => "IngestFunction",
            Function::Judgment => "JudgmentFunction",
            Function::Response => "ResponseFunction",
            Function::Memory => "MemoryFunction",
            Function::Install => "InstallFunction",
        }
    }
}

/// The environment variables `function` needs at start.
pub fn required(function: Function) -> &'static [&'static str] {
    match function {
        // Ingest stores, schedules judgments, queues mention replies and
        // forget jobs.
        Function::Ingest => &[
            SETTINGS_PATH,
            TABLE,
            METRICS_NAMESPACE,
            SLACK_SIGNING_SECRET_PARAM,
            SCHEDULE_GROUP,
            SCHEDULER_ROLE_ARN,
            SCHEDULE_DLQ_ARN,
            JUDGMENT_FUNCTION_ARN,
            RESPONSE_QUEUE_URL,
            MEMORY_QUEUE_URL,
        ],
        // Judgment reads, calls the LLM, schedules or queues a response, and
        // queues thread-memory jobs.
        Function::Judgment => &[
            SETTINGS_PATH,
            TABLE,
            METRICS_NAMESPACE,
            SLACK_BOT_TOKEN_PARAM,
            SCHEDULE_GROUP,
            SCHEDULER_ROLE_ARN,
            SCHEDULE_DLQ_ARN,
            RESPONSE_FUNCTION_ARN,
            RESPONSE_QUEUE_URL,
            MEMORY_QUEUE_URL,
        ],
        // Response reads and posts; a channel it finds less visible queues
        // a forget job.
        Function::Response => &[
            SETTINGS_PATH,
            TABLE,
            METRICS_NAMESPACE,
            SLACK_BOT_TOKEN_PARAM,
            MEMORY_QUEUE_URL,
        ],
        // The memory function writes memories, fans the recurring run out on
        // the memory queue, and schedules proactive judgments (issue 17).
        Function::Memory => &[
            SETTINGS_PATH,
            TABLE,
            METRICS_NAMESPACE,
            SLACK_BOT_TOKEN_PARAM,
            MEMORY_QUEUE_URL,
            SCHEDULE_GROUP,
            SCHEDULER_ROLE_ARN,
            SCHEDULE_DLQ_ARN,
            JUDGMENT_FUNCTION_ARN,
        ],
        // The install pages keep states and installations, and exchange a
        // code with the app's Client Secret.
        Function::Install => &[
            SETTINGS_PATH,
            TABLE,
            METRICS_NAMESPACE,
            SLACK_CLIENT_SECRET_PARAM,
        ],
    }
}
