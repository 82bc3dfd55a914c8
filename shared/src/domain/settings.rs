//! Settings: every timing, limit and prompt knob, with the documented defaults.
//!
//! Values arrive as `(name, text)` pairs from SSM Parameter Store (on AWS) or
//! from a TOML file and `MYAO_*` environment variables (local mode). A missing
//! name keeps its default; a malformed or out-of-range value is reported as a
//! [`SettingIssue`] and also keeps its default, so a typo in a parameter never
//! stops the bot.

use std::collections::BTreeMap;
use std::fmt;

use chrono_tz::Tz;

use super::ids::{ChannelId, IdError, UserId};
use super::people::FamiliarityThresholds;
use super::proactive::{ProactiveChannels, WorkingDays, WorkingHours};
use super::reply::EmojiName;
use super::rules::{Chattiness, Thresholds};

/// The persona's default system prompt.
pub const DEFAULT_PERSONA_PROMPT: &str = "あなたは「myao」という名前の猫のキャラクターです。\
このワークスペースのメンバーの一人として、友達のように気さくに、短めの自然な口調で話します。\
知らないことは知らないと言い、話を作りません。";

/// The `Timeout` of the functions that run jobs, in seconds, as
/// `template.yaml` sets them (a test there compares the two): a job's LLM
/// and Slack calls must fit in them (see [`Settings::worst_case_call_seconds`]),
/// and the local mode gives each job as long.
pub const JUDGMENT_FUNCTION_TIMEOUT_SECONDS: u32 = 180;
pub const RESPONSE_FUNCTION_TIMEOUT_SECONDS: u32 = 180;
pub const MEMORY_FUNCTION_TIMEOUT_SECONDS: u32 = 600;
/// Each Slack Web API attempt's time limit (the Slack adapter's).
pub const SLACK_ATTEMPT_TIMEOUT_SECONDS: u32 = 10;
/// What a job keeps, in its function's timeout, for everything besides one
/// LLM call and one Slack call: the store, the settings, giving a claim back.
pub const JOB_MARGIN_SECONDS: u32 = 10;

/// The service an LLM call goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LlmProvider {
    /// An OpenAI-compatible chat-completions endpoint (`llm_base_url`),
    /// with the API key of the LLM key parameter.
    #[default]
    OpenAi,
    /// Amazon Bedrock's Converse API in the functions' region, with their
    /// IAM role: no API key.
    Bedrock,
}

impl LlmProvider {
    /// `openai` or `bedrock` (any case, trimmed).
    pub fn parse(value: &str) -> Option<LlmProvider> {
        match value.trim().to_ascii_lowercase().as_str() {
            "openai" => Some(LlmProvider::OpenAi),
            "bedrock" => Some(LlmProvider::Bedrock),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            LlmProvider::OpenAi => "openai",
            LlmProvider::Bedrock => "bedrock",
        }
    }
}

impl fmt::Display for LlmProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One model role's parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelSettings {
    /// The model's name at its provider: for Bedrock a model id or an
    /// inference profile id (`us.anthropic.claude-haiku-4-5-20251001-v1:0`).
    pub model: String,
    pub temperature: f64,
    pub max_tokens: u32,
    /// The role's own provider (`judgment_provider`, ...); `None`: `llm_provider`.
    pub provider: Option<LlmProvider>,
}

/// All settings. Construct with [`Settings::default`] or [`Settings::from_pairs`].
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// Base wait before judging a conversation that went quiet.
    pub min_wait_seconds: u32,
    /// The wait varies by +- this ratio.
    pub jitter_ratio: f64,
    /// Messages of the current channel put into a prompt.
    pub channel_messages_limit: u32,
    /// A channel with a message within this many days is active.
    pub active_channel_days: u32,
    /// Thread memories younger than this go into prompts.
    pub thread_memory_days: u32,
    /// Messages of the judged conversation considered at most.
    pub message_limit: u32,
    /// A conversation whose newest message is older than this is not judged.
    pub max_message_age_seconds: u32,
    /// A mention's reply job run later than this after the mention (a
    /// redelivery after failures) is dropped: a late answer is worse than
    /// none. The default (20 min) lets one SQS redelivery through: the
    /// response queue's visibility timeout is 1,080 s (six times the
    /// function's), so a shorter age would drop every retried mention.
    pub mention_max_age_seconds: u32,
    /// A reply job that failed retryably (the model or Slack down a moment)
    /// comes back after these many seconds, one per try, before the
    /// queue's own visibility timeout takes over: 10, 30, 90 by default
    /// ([`super::job::retry_delay`]). Empty: the queue's timeout only.
    pub retry_delays_seconds: Vec<u32>,
    /// Long-term memories are rewritten at most this often.
    pub long_term_update_interval_seconds: u32,
    /// Short-term memories cover this many hours.
    pub short_term_window_hours: u32,
    pub long_term_max_tokens: u32,
    pub short_term_max_tokens: u32,
    /// The most tokens (estimated) a judgment prompt may take; over it, the
    /// least needed context is cut (never the judged conversation).
    pub judgment_prompt_max_tokens: u32,
    /// The same for a reply prompt.
    pub response_prompt_max_tokens: u32,
    /// The same for a memory prompt.
    pub memory_prompt_max_tokens: u32,
    /// A message longer than this many characters is cut in prompts.
    pub max_message_chars: u32,
    /// `false` is `chattiness = mentions_only` (the older name of the dial).
    pub autonomous_replies: bool,
    /// How readily the bot speaks unprompted: the rule stage's thresholds.
    pub chattiness: Chattiness,
    /// Per-channel levels that override `chattiness` (and
    /// `autonomous_replies`) in those channels.
    pub channel_chattiness: BTreeMap<ChannelId, Chattiness>,
    /// The rule stage's low and high scores, instead of those of the
    /// chattiness level (for tuning, and for tests of the LLM judgment).
    pub rule_thresholds: Option<Thresholds>,
    /// Words of the persona's interests; a conversation holding one scores
    /// higher (lower case).
    pub interest_keywords: Vec<String>,
    /// A reply in a thread where the bot spoke within this many seconds is
    /// addressed to it, like a mention, when it answers the bot
    /// ([`super::routing::engaged`]).
    pub engagement_window_seconds: u32,
    /// The most such replies the bot answers in a row in one thread, until
    /// someone mentions or names it again.
    pub max_engaged_answers: u32,
    /// A conversation that keeps talking is judged no later than this after
    /// the first message its pending judgment covers.
    pub max_wait_seconds: u32,
    /// No unprompted reply within this many seconds of the bot's last
    /// message in the channel.
    pub cooldown_seconds: u32,
    /// Unprompted replies one channel gets in an hour, at most.
    pub max_unprompted_per_channel_hour: u32,
    /// After this many LLM declines in a row in a channel, its judgments
    /// are skipped for `backoff_seconds` (0: never).
    pub backoff_after_declines: u32,
    pub backoff_seconds: u32,
    /// The emoji of a reaction whose own emoji the workspace does not have,
    /// and of the reaction to a thanks.
    pub default_reaction: EmojiName,
    /// The most tokens a short answer ("nice!") may take.
    pub short_max_tokens: u32,
    /// The most characters a reply is posted with: a longer one is cut at
    /// its last sentence within them ([`super::text::held_to`]).
    pub max_reply_chars: u32,
    /// A fact's strength halves every this many days.
    pub fact_half_life_days: u32,
    /// Facts one channel keeps, at most (the strongest).
    pub max_facts_per_channel: u32,
    /// New human messages a quiet conversation needs for a reflection
    /// (one LLM call that writes facts); 0: no reflection.
    pub reflection_min_messages: u32,
    /// Interactions from which someone is an acquaintance, a friend, close.
    pub familiarity_thresholds: FamiliarityThresholds,
    /// Whether the bot now and then opens a topic in a channel gone quiet
    /// (`domain::proactive`).
    pub proactive: bool,
    /// The channels it may open a topic in: ids, and `public` for every
    /// public channel not shared outside. Empty: none.
    pub proactive_channels: ProactiveChannels,
    /// Hours of silence in a channel before the bot may open a topic there.
    pub proactive_after_hours: u32,
    /// The hours (in `timezone`) and days in which it may.
    pub proactive_hours: WorkingHours,
    pub proactive_days: WorkingDays,
    /// Topics it opens in one channel in a (UTC, ISO) week, at most.
    pub max_proactive_per_channel_week: u32,
    /// Replies (mentions and unprompted) one channel gets in an hour, at most.
    pub max_replies_per_channel_per_hour: u32,
    /// Mentions of one person answered in an hour, at most.
    pub max_mentions_per_user_per_hour: u32,
    /// LLM calls of the whole workspace in a (UTC) day, at most; memories
    /// stop at 80 % of it and judgments at 95 % (`domain::limits`).
    pub max_llm_calls_per_day: u32,
    /// A mention over a limit gets a short fixed notice (once an hour per person).
    pub limit_notice: bool,
    pub persona_name: String,
    /// Other names the bot answers to, besides `persona_name` (e.g. ミャオ).
    pub name_aliases: Vec<String>,
    pub persona_system_prompt: String,
    /// Time zone of the times shown in prompts.
    pub timezone: Tz,
    /// Where the LLM calls go, unless a role has a provider of its own.
    pub llm_provider: LlmProvider,
    /// An OpenAI-compatible chat-completions base URL (ending before `/chat/completions`).
    pub llm_base_url: String,
    pub judgment: ModelSettings,
    pub response: ModelSettings,
    pub memory: ModelSettings,
    pub llm_timeout_seconds: u32,
    /// Retries after the first attempt, on 429, 5xx and transport errors.
    pub llm_max_retries: u32,
    pub slack_api_base_url: String,
    /// Retries of a Slack Web API call after a 429 or a transport error.
    pub slack_max_retries: u32,
    /// Fallback bot user id when events carry none (they normally do).
    pub bot_user_id: Option<UserId>,
    /// When set, ingest ignores events sent to another Slack app.
    pub slack_app_id: Option<String>,
    /// When set, ingest ignores events from another Slack workspace.
    pub slack_team_id: Option<String>,
    /// Stored messages expire after this many days (DynamoDB TTL).
    pub message_retention_days: u32,
    /// Memories, cached users and channel records expire after this many
    /// days without a rewrite (DynamoDB TTL).
    pub memory_retention_days: u32,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            min_wait_seconds: 300,
            jitter_ratio: 0.3,
            channel_messages_limit: 50,
            active_channel_days: 7,
            thread_memory_days: 7,
            message_limit: 20,
            max_message_age_seconds: 43_200,
            mention_max_age_seconds: 1_200,
            retry_delays_seconds: vec![10, 30, 90],
            long_term_update_interval_seconds: 3_600,
            short_term_window_hours: 24,
            long_term_max_tokens: 500,
            short_term_max_tokens: 300,
            judgment_prompt_max_tokens: 16_000,
            response_prompt_max_tokens: 24_000,
            memory_prompt_max_tokens: 24_000,
            max_message_chars: 4_000,
            autonomous_replies: true,
            chattiness: Chattiness::Normal,
            channel_chattiness: BTreeMap::new(),
            rule_thresholds: None,
            interest_keywords: Vec::new(),
            engagement_window_seconds: 300,
            max_engaged_answers: 3,
            max_wait_seconds: 900,
            cooldown_seconds: 120,
            max_unprompted_per_channel_hour: 4,
            backoff_after_declines: 3,
            backoff_seconds: 1_800,
            default_reaction: EmojiName::parse("+1").expect("a valid emoji name"),
            short_max_tokens: 80,
            max_reply_chars: 3_000,
            fact_half_life_days: 30,
            max_facts_per_channel: 100,
            reflection_min_messages: 3,
            familiarity_thresholds: FamiliarityThresholds::default(),
            proactive: false,
            proactive_channels: ProactiveChannels::default(),
            proactive_after_hours: 24,
            proactive_hours: WorkingHours::default(),
            proactive_days: WorkingDays::default(),
            max_proactive_per_channel_week: 1,
            max_replies_per_channel_per_hour: 30,
            max_mentions_per_user_per_hour: 20,
            max_llm_calls_per_day: 2_000,
            limit_notice: true,
            persona_name: "myao".to_owned(),
            name_aliases: Vec::new(),
            persona_system_prompt: DEFAULT_PERSONA_PROMPT.to_owned(),
            timezone: Tz::UTC,
            llm_provider: LlmProvider::OpenAi,
            llm_base_url: "https://api.openai.com/v1".to_owned(),
            judgment: ModelSettings {
                model: "gpt-4.1-mini".to_owned(),
                temperature: 0.3,
                max_tokens: 500,
                provider: None,
            },
            response: ModelSettings {
                model: "gpt-4.1".to_owned(),
                temperature: 0.7,
                max_tokens: 1000,
                provider: None,
            },
            memory: ModelSettings {
                model: "gpt-4.1-mini".to_owned(),
                temperature: 0.5,
                max_tokens: 800,
                provider: None,
            },
            llm_timeout_seconds: 30,
            llm_max_retries: 2,
            slack_api_base_url: "https://slack.com/api".to_owned(),
            slack_max_retries: 3,
            bot_user_id: None,
            slack_app_id: None,
            slack_team_id: None,
            message_retention_days: 90,
            memory_retention_days: 90,
        }
    }
}

/// Every setting name, in the order of the documentation.
pub const SETTING_NAMES: &[&str] = &[
    "min_wait_seconds",
    "jitter_ratio",
    "channel_messages_limit",
    "active_channel_days",
    "thread_memory_days",
    "message_limit",
    "max_message_age_seconds",
    "mention_max_age_seconds",
    "retry_delays_seconds",
    "long_term_update_interval_seconds",
    "short_term_window_hours",
    "long_term_max_tokens",
    "short_term_max_tokens",
    "judgment_prompt_max_tokens",
    "response_prompt_max_tokens",
    "memory_prompt_max_tokens",
    "max_message_chars",
    "autonomous_replies",
    "chattiness",
    "channel_chattiness",
    "rule_thresholds",
    "interest_keywords",
    "engagement_window_seconds",
    "max_engaged_answers",
    "max_wait_seconds",
    "cooldown_seconds",
    "max_unprompted_per_channel_hour",
    "backoff_after_declines",
    "backoff_seconds",
    "default_reaction",
    "short_max_tokens",
    "max_reply_chars",
    "fact_half_life_days",
    "max_facts_per_channel",
    "reflection_min_messages",
    "familiarity_thresholds",
    "proactive",
    "proactive_channels",
    "proactive_after_hours",
    "proactive_hours",
    "proactive_days",
    "max_proactive_per_channel_week",
    "max_replies_per_channel_per_hour",
    "max_mentions_per_user_per_hour",
    "max_llm_calls_per_day",
    "limit_notice",
    "persona_name",
    "name_aliases",
    "persona_system_prompt",
    "timezone",
    "llm_provider",
    "llm_base_url",
    "judgment_model",
    "judgment_provider",
    "judgment_temperature",
    "judgment_max_tokens",
    "response_model",
    "response_provider",
    "response_temperature",
    "response_max_tokens",
    "memory_model",
    "memory_provider",
    "memory_temperature",
    "memory_max_tokens",
    "llm_timeout_seconds",
    "llm_max_retries",
    "slack_api_base_url",
    "slack_max_retries",
    "bot_user_id",
    "slack_app_id",
    "slack_team_id",
    "message_retention_days",
    "memory_retention_days",
];

/// A setting that was present but could not be used; its default was kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingIssue {
    pub name: String,
    pub value: String,
    pub problem: String,
}

impl fmt::Display for SettingIssue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "setting {} = {:?} ignored ({}); the default is kept",
            self.name, self.value, self.problem
        )
    }
}

/// Why a setting's value cannot be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SettingError {
    /// No setting has this name.
    #[error("unknown setting")]
    UnknownName,
    #[error("not a whole number")]
    NotAWholeNumber,
    #[error("not a number")]
    NotANumber,
    #[error("out of range {min}..={max}")]
    WholeNumberOutOfRange { min: u32, max: u32 },
    #[error("out of range {min}..={max}")]
    NumberOutOfRange { min: f64, max: f64 },
    /// Blank, where some text is needed.
    #[error("empty")]
    Empty,
    #[error("not an http(s) URL")]
    NotAnHttpUrl,
    /// Not capital letters and digits (at most 32).
    #[error("not a Slack id (capital letters and digits)")]
    NotASlackId,
    /// A Slack id of the wrong kind (an app id must start with `A`, a
    /// workspace id with `T`).
    #[error("not a Slack id starting with {first}")]
    WrongSlackIdKind { first: char },
    #[error("not true or false")]
    NotABoolean,
    #[error("not an IANA time zone name")]
    NotATimeZone,
    #[error("not one of mentions_only, quiet, normal, chatty")]
    NotAChattiness,
    #[error("not CHANNEL=LEVEL pairs, comma-separated (e.g. C123=quiet,C456=mentions_only)")]
    NotAChannelLevel,
    #[error("not two whole numbers LOW,HIGH with LOW <= HIGH")]
    NotThresholds,
    #[error("not an emoji name (lower-case letters, digits, _ - + ')")]
    NotAnEmojiName,
    #[error("not three whole numbers ACQUAINTANCE,FRIEND,CLOSE in order")]
    NotFamiliarity,
    #[error("not channel ids and `public`, comma-separated (e.g. public,G123)")]
    NotProactiveChannels,
    #[error("not whole hours START-END with 0 <= START < END <= 24 (e.g. 10-18)")]
    NotHours,
    #[error("not days or ranges of days, comma-separated (e.g. mon-fri, or mon,wed,fri)")]
    NotDays,
    #[error("not openai or bedrock")]
    NotAProvider,
    #[error(
        "not at most 10 whole numbers of seconds up to 43200, comma-separated (e.g. 10,30,90)"
    )]
    NotDelays,
    #[error(transparent)]
    BadUserId(#[from] IdError),
}

fn int(value: &str, min: u32, max: u32) -> Result<u32, SettingError> {
    // A whole number outside u32 (-5, 99999999999) is out of range, not
    // "not a whole number".
    let n: i128 = value
        .trim()
        .parse()
        .map_err(|_| SettingError::NotAWholeNumber)?;
    match u32::try_from(n) {
        Ok(n) if (min..=max).contains(&n) => Ok(n),
        _ => Err(SettingError::WholeNumberOutOfRange { min, max }),
    }
}

/// The most quick retries, and the longest wait of one: SQS's longest
/// visibility timeout, 12 hours.
const MAX_RETRIES: usize = 10;
const MAX_RETRY_DELAY: u32 = 43_200;

/// Seconds, comma-separated: at most [`MAX_RETRIES`] of them, each at most
/// [`MAX_RETRY_DELAY`]. Blank is none.
fn delays(value: &str) -> Result<Vec<u32>, SettingError> {
    let delays = list(value)
        .map(|n| int(n, 0, MAX_RETRY_DELAY).map_err(|_| SettingError::NotDelays))
        .collect::<Result<Vec<u32>, _>>()?;
    if delays.len() > MAX_RETRIES {
        return Err(SettingError::NotDelays);
    }
    Ok(delays)
}

fn float(value: &str, min: f64, max: f64) -> Result<f64, SettingError> {
    let x: f64 = value.trim().parse().map_err(|_| SettingError::NotANumber)?;
    if !x.is_finite() || x < min || x > max {
        return Err(SettingError::NumberOutOfRange { min, max });
    }
    Ok(x)
}

fn text(value: &str) -> Result<String, SettingError> {
    let t = value.trim();
    if t.is_empty() {
        return Err(SettingError::Empty);
    }
    Ok(t.to_owned())
}

fn url(value: &str) -> Result<String, SettingError> {
    let t = text(value)?;
    if !(t.starts_with("http://") || t.starts_with("https://")) {
        return Err(SettingError::NotAnHttpUrl);
    }
    Ok(t.trim_end_matches('/').to_owned())
}

/// A Slack id such as an app id (`A…`) or a workspace id (`T…`): capital
/// letters and digits, starting with `first`.
fn slack_id(value: &str, first: char) -> Result<String, SettingError> {
    let t = text(value)?;
    let id_char = |b: u8| b.is_ascii_uppercase() || b.is_ascii_digit();
    if t.len() > 32 || !t.bytes().all(id_char) {
        return Err(SettingError::NotASlackId);
    }
    if !t.starts_with(first) {
        return Err(SettingError::WrongSlackIdKind { first });
    }
    Ok(t)
}

fn boolean(value: &str) -> Result<bool, SettingError> {
    match value.trim().to_ascii_lowercase().as_str() {
        "true" | "yes" | "on" | "1" => Ok(true),
        "false" | "no" | "off" | "0" => Ok(false),
        _ => Err(SettingError::NotABoolean),
    }
}

/// The non-empty items of a comma-separated list, trimmed.
fn list(value: &str) -> impl Iterator<Item = &str> {
    value.split(',').map(str::trim).filter(|n| !n.is_empty())
}

fn provider(value: &str) -> Result<LlmProvider, SettingError> {
    LlmProvider::parse(value).ok_or(SettingError::NotAProvider)
}

/// A role's own provider: blank is none (the role follows `llm_provider`).
fn role_provider(value: &str) -> Result<Option<LlmProvider>, SettingError> {
    if value.trim().is_empty() {
        return Ok(None);
    }
    provider(value).map(Some)
}

fn chattiness(value: &str) -> Result<Chattiness, SettingError> {
    Chattiness::parse(value).ok_or(SettingError::NotAChattiness)
}

/// `C123=quiet,C456=mentions_only`.
fn channel_levels(value: &str) -> Result<BTreeMap<ChannelId, Chattiness>, SettingError> {
    list(value)
        .map(|pair| {
            let (channel, level) = pair.split_once('=').ok_or(SettingError::NotAChannelLevel)?;
            let channel =
                ChannelId::parse(channel.trim()).map_err(|_| SettingError::NotAChannelLevel)?;
            Ok((channel, chattiness(level)?))
        })
        .collect()
}

/// `LOW,HIGH`, with LOW <= HIGH.
fn thresholds(value: &str) -> Result<Thresholds, SettingError> {
    let (low, high) = value.split_once(',').ok_or(SettingError::NotThresholds)?;
    let low: i32 = low
        .trim()
        .parse()
        .map_err(|_| SettingError::NotThresholds)?;
    let high: i32 = high
        .trim()
        .parse()
        .map_err(|_| SettingError::NotThresholds)?;
    if low > high {
        return Err(SettingError::NotThresholds);
    }
    Ok(Thresholds { low, high })
}

fn familiarity(value: &str) -> Result<FamiliarityThresholds, SettingError> {
    let n: Vec<u64> = value
        .split(',')
        .map(|v| v.trim().parse::<u64>())
        .collect::<Result<_, _>>()
        .map_err(|_| SettingError::NotFamiliarity)?;
    match n[..] {
        [a, f, c] if a <= f && f <= c => Ok(FamiliarityThresholds {
            acquaintance: a,
            friend: f,
            close: c,
        }),
        _ => Err(SettingError::NotFamiliarity),
    }
}

impl Settings {
    /// The chattiness in `channel`: its own level if it has one, else
    /// `mentions_only` when `autonomous_replies` is off, else `chattiness`.
    pub fn chattiness_in(&self, channel: &ChannelId) -> Chattiness {
        match self.channel_chattiness.get(channel) {
            Some(level) => *level,
            None if !self.autonomous_replies => Chattiness::MentionsOnly,
            None => self.chattiness,
        }
    }

    /// The bot's names: `persona_name` and `name_aliases`.
    pub fn names(&self) -> Vec<&str> {
        std::iter::once(&self.persona_name)
            .chain(&self.name_aliases)
            .map(String::as_str)
            .collect()
    }

    /// The rule stage's thresholds in `channel`: `None` when only mentions
    /// are answered there.
    pub fn thresholds_in(&self, channel: &ChannelId) -> Option<Thresholds> {
        let level = self.chattiness_in(channel).thresholds()?;
        Some(self.rule_thresholds.unwrap_or(level))
    }

    /// Applies one named value. Unknown names are an error too, so that a
    /// misspelt parameter is reported rather than silently ignored.
    pub fn apply(&mut self, name: &str, value: &str) -> Result<(), SettingError> {
        const DAY: u32 = 86_400;
        match name {
            "min_wait_seconds" => self.min_wait_seconds = int(value, 0, DAY)?,
            "jitter_ratio" => self.jitter_ratio = float(value, 0.0, 1.0)?,
            "channel_messages_limit" => self.channel_messages_limit = int(value, 1, 1000)?,
            "active_channel_days" => self.active_channel_days = int(value, 1, 365)?,
            "thread_memory_days" => self.thread_memory_days = int(value, 1, 365)?,
            "message_limit" => self.message_limit = int(value, 1, 1000)?,
            "max_message_age_seconds" => self.max_message_age_seconds = int(value, 60, 30 * DAY)?,
            "mention_max_age_seconds" => self.mention_max_age_seconds = int(value, 60, DAY)?,
            "retry_delays_seconds" => self.retry_delays_seconds = delays(value)?,
            "long_term_update_interval_seconds" => {
                self.long_term_update_interval_seconds = int(value, 0, 30 * DAY)?
            }
            "short_term_window_hours" => self.short_term_window_hours = int(value, 1, 24 * 30)?,
            "long_term_max_tokens" => self.long_term_max_tokens = int(value, 50, 8000)?,
            "short_term_max_tokens" => self.short_term_max_tokens = int(value, 50, 8000)?,
            "judgment_prompt_max_tokens" => {
                self.judgment_prompt_max_tokens = int(value, 2_000, 1_000_000)?
            }
            "response_prompt_max_tokens" => {
                self.response_prompt_max_tokens = int(value, 2_000, 1_000_000)?
            }
            "memory_prompt_max_tokens" => {
                self.memory_prompt_max_tokens = int(value, 2_000, 1_000_000)?
            }
            "max_message_chars" => self.max_message_chars = int(value, 100, 40_000)?,
            "autonomous_replies" => self.autonomous_replies = boolean(value)?,
            "chattiness" => self.chattiness = chattiness(value)?,
            "channel_chattiness" => self.channel_chattiness = channel_levels(value)?,
            "rule_thresholds" => self.rule_thresholds = Some(thresholds(value)?),
            "interest_keywords" => {
                self.interest_keywords = list(value).map(|k| k.to_lowercase()).collect()
            }
            "engagement_window_seconds" => self.engagement_window_seconds = int(value, 0, DAY)?,
            "max_engaged_answers" => self.max_engaged_answers = int(value, 0, 1_000)?,
            "max_wait_seconds" => self.max_wait_seconds = int(value, 60, DAY)?,
            "cooldown_seconds" => self.cooldown_seconds = int(value, 0, DAY)?,
            "max_unprompted_per_channel_hour" => {
                self.max_unprompted_per_channel_hour = int(value, 0, 10_000)?
            }
            "backoff_after_declines" => self.backoff_after_declines = int(value, 0, 1_000)?,
            "backoff_seconds" => self.backoff_seconds = int(value, 0, 7 * DAY)?,
            "default_reaction" => {
                self.default_reaction =
                    EmojiName::parse(value).map_err(|_| SettingError::NotAnEmojiName)?
            }
            "short_max_tokens" => self.short_max_tokens = int(value, 10, 1_000)?,
            "max_reply_chars" => self.max_reply_chars = int(value, 100, 40_000)?,
            "fact_half_life_days" => self.fact_half_life_days = int(value, 1, 3_650)?,
            "max_facts_per_channel" => self.max_facts_per_channel = int(value, 0, 10_000)?,
            "reflection_min_messages" => self.reflection_min_messages = int(value, 0, 1_000)?,
            "familiarity_thresholds" => self.familiarity_thresholds = familiarity(value)?,
            "proactive" => self.proactive = boolean(value)?,
            "proactive_channels" => {
                self.proactive_channels = ProactiveChannels::parse(value)
                    .map_err(|_| SettingError::NotProactiveChannels)?
            }
            "proactive_after_hours" => self.proactive_after_hours = int(value, 1, 24 * 90)?,
            "proactive_hours" => {
                self.proactive_hours = WorkingHours::parse(value).ok_or(SettingError::NotHours)?
            }
            "proactive_days" => {
                self.proactive_days = WorkingDays::parse(value).ok_or(SettingError::NotDays)?
            }
            "max_proactive_per_channel_week" => {
                self.max_proactive_per_channel_week = int(value, 0, 7)?
            }
            "max_replies_per_channel_per_hour" => {
                self.max_replies_per_channel_per_hour = int(value, 1, 10_000)?
            }
            "max_mentions_per_user_per_hour" => {
                self.max_mentions_per_user_per_hour = int(value, 1, 10_000)?
            }
            "max_llm_calls_per_day" => self.max_llm_calls_per_day = int(value, 1, 10_000_000)?,
            "limit_notice" => self.limit_notice = boolean(value)?,
            "persona_name" => self.persona_name = text(value)?,
            "name_aliases" => self.name_aliases = list(value).map(str::to_owned).collect(),
            "persona_system_prompt" => self.persona_system_prompt = text(value)?,
            "timezone" => {
                self.timezone = value
                    .trim()
                    .parse::<Tz>()
                    .map_err(|_| SettingError::NotATimeZone)?
            }
            "llm_provider" => self.llm_provider = provider(value)?,
            "llm_base_url" => self.llm_base_url = url(value)?,
            "judgment_model" => self.judgment.model = text(value)?,
            "judgment_provider" => self.judgment.provider = role_provider(value)?,
            "judgment_temperature" => self.judgment.temperature = float(value, 0.0, 2.0)?,
            "judgment_max_tokens" => self.judgment.max_tokens = int(value, 16, 32_000)?,
            "response_model" => self.response.model = text(value)?,
            "response_provider" => self.response.provider = role_provider(value)?,
            "response_temperature" => self.response.temperature = float(value, 0.0, 2.0)?,
            "response_max_tokens" => self.response.max_tokens = int(value, 16, 32_000)?,
            "memory_model" => self.memory.model = text(value)?,
            "memory_provider" => self.memory.provider = role_provider(value)?,
            "memory_temperature" => self.memory.temperature = float(value, 0.0, 2.0)?,
            "memory_max_tokens" => self.memory.max_tokens = int(value, 16, 32_000)?,
            "llm_timeout_seconds" => self.llm_timeout_seconds = int(value, 1, 120)?,
            "llm_max_retries" => self.llm_max_retries = int(value, 0, 5)?,
            "slack_api_base_url" => self.slack_api_base_url = url(value)?,
            "slack_max_retries" => self.slack_max_retries = int(value, 0, 5)?,
            "bot_user_id" => self.bot_user_id = Some(UserId::parse(value.trim())?),
            "slack_app_id" => self.slack_app_id = Some(slack_id(value, 'A')?),
            "slack_team_id" => self.slack_team_id = Some(slack_id(value, 'T')?),
            "message_retention_days" => self.message_retention_days = int(value, 1, 3650)?,
            "memory_retention_days" => self.memory_retention_days = int(value, 1, 3650)?,
            _ => return Err(SettingError::UnknownName),
        }
        Ok(())
    }

    /// Builds settings from named values over the defaults. Returns the issues
    /// found; each offending value kept its default.
    pub fn from_pairs<'a, I>(pairs: I) -> (Settings, Vec<SettingIssue>)
    where
        I: IntoIterator<Item = (&'a str, &'a str)>,
    {
        let mut settings = Settings::default();
        let mut issues = Vec::new();
        for (name, value) in pairs {
            if let Err(problem) = settings.apply(name, value) {
                // An unknown name may be a secret stored in the wrong place:
                // its value is never repeated (issues are logged).
                let value = if SETTING_NAMES.contains(&name) {
                    value.chars().take(80).collect()
                } else {
                    "(not shown)".to_owned()
                };
                issues.push(SettingIssue {
                    name: name.to_owned(),
                    value,
                    problem: problem.to_string(),
                });
            }
        }
        // A judgment runs min_wait after the newest message and skips a
        // conversation older than max_message_age: the first must be
        // shorter, or the bot would never speak on its own.
        let longest_wait = f64::from(settings.min_wait_seconds) * (1.0 + settings.jitter_ratio);
        if longest_wait >= f64::from(settings.max_message_age_seconds) {
            issues.push(SettingIssue {
                name: "min_wait_seconds".to_owned(),
                value: settings.min_wait_seconds.to_string(),
                problem: format!(
                    "with jitter_ratio {} it reaches max_message_age_seconds ({}): both reset",
                    settings.jitter_ratio, settings.max_message_age_seconds
                ),
            });
            let d = Settings::default();
            settings.min_wait_seconds = d.min_wait_seconds;
            settings.jitter_ratio = d.jitter_ratio;
            settings.max_message_age_seconds = d.max_message_age_seconds;
        }
        // Every attempt of an LLM call and of a Slack call must fit in the
        // functions' timeouts, or the retries configured could never all run
        // (the deadline would cut them, every time).
        if let Some(problem) = settings.timeout_problem() {
            issues.push(SettingIssue {
                name: "llm_timeout_seconds".to_owned(),
                value: settings.llm_timeout_seconds.to_string(),
                problem,
            });
            let d = Settings::default();
            settings.llm_timeout_seconds = d.llm_timeout_seconds;
            settings.llm_max_retries = d.llm_max_retries;
            settings.slack_max_retries = d.slack_max_retries;
        }
        (settings, issues)
    }

    /// The longest one LLM call and one Slack call may take: every attempt
    /// run to its time limit (`llm_timeout_seconds`, and
    /// [`SLACK_ATTEMPT_TIMEOUT_SECONDS`]). The waits between attempts are not
    /// counted: at run time the invocation's deadline cuts them.
    pub fn worst_case_call_seconds(&self) -> u64 {
        let attempts = |retries: u32| u64::from(retries) + 1;
        u64::from(self.llm_timeout_seconds) * attempts(self.llm_max_retries)
            + u64::from(SLACK_ATTEMPT_TIMEOUT_SECONDS) * attempts(self.slack_max_retries)
    }

    /// Why these settings' calls cannot fit in the timeout of a function
    /// that runs them (judgment, response), less [`JOB_MARGIN_SECONDS`].
    fn timeout_problem(&self) -> Option<String> {
        let worst = self.worst_case_call_seconds();
        [
            ("judgment", JUDGMENT_FUNCTION_TIMEOUT_SECONDS),
            ("response", RESPONSE_FUNCTION_TIMEOUT_SECONDS),
        ]
        .into_iter()
        .find(|(_, timeout)| worst + u64::from(JOB_MARGIN_SECONDS) > u64::from(*timeout))
        .map(|(function, timeout)| {
            format!(
                "llm_timeout_seconds {} x (llm_max_retries {} + 1) + {SLACK_ATTEMPT_TIMEOUT_SECONDS} s x \
                 (slack_max_retries {} + 1) = {worst} s does not fit the {function} function's \
                 {timeout} s timeout less {JOB_MARGIN_SECONDS} s: the three reset",
                self.llm_timeout_seconds, self.llm_max_retries, self.slack_max_retries
            )
        })
    }

    /// The default of each setting as text, as SSM would hold it.
    /// `bot_user_id`, `slack_app_id`, `slack_team_id`, `name_aliases`,
    /// `channel_chattiness`, `rule_thresholds`, `interest_keywords`,
    /// `proactive_channels` and the roles' own providers (`judgment_provider`,
    /// `response_provider`, `memory_provider`) have none (an SSM parameter
    /// cannot be empty) and are left out.
    pub fn default_pairs() -> Vec<(&'static str, String)> {
        let d = Settings::default();
        let f = |x: f64| format!("{x}");
        vec![
            ("min_wait_seconds", d.min_wait_seconds.to_string()),
            ("jitter_ratio", f(d.jitter_ratio)),
            (
                "channel_messages_limit",
                d.channel_messages_limit.to_string(),
            ),
            ("active_channel_days", d.active_channel_days.to_string()),
            ("thread_memory_days", d.thread_memory_days.to_string()),
            ("message_limit", d.message_limit.to_string()),
            (
                "max_message_age_seconds",
                d.max_message_age_seconds.to_string(),
            ),
            (
                "mention_max_age_seconds",
                d.mention_max_age_seconds.to_string(),
            ),
            (
                "retry_delays_seconds",
                d.retry_delays_seconds
                    .iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(","),
            ),
            (
                "long_term_update_interval_seconds",
                d.long_term_update_interval_seconds.to_string(),
            ),
            (
                "short_term_window_hours",
                d.short_term_window_hours.to_string(),
            ),
            ("long_term_max_tokens", d.long_term_max_tokens.to_string()),
            ("short_term_max_tokens", d.short_term_max_tokens.to_string()),
            (
                "judgment_prompt_max_tokens",
                d.judgment_prompt_max_tokens.to_string(),
            ),
            (
                "response_prompt_max_tokens",
                d.response_prompt_max_tokens.to_string(),
            ),
            (
                "memory_prompt_max_tokens",
                d.memory_prompt_max_tokens.to_string(),
            ),
            ("max_message_chars", d.max_message_chars.to_string()),
            ("autonomous_replies", d.autonomous_replies.to_string()),
            ("chattiness", d.chattiness.to_string()),
            (
                "engagement_window_seconds",
                d.engagement_window_seconds.to_string(),
            ),
            ("max_engaged_answers", d.max_engaged_answers.to_string()),
            ("max_wait_seconds", d.max_wait_seconds.to_string()),
            ("cooldown_seconds", d.cooldown_seconds.to_string()),
            (
                "max_unprompted_per_channel_hour",
                d.max_unprompted_per_channel_hour.to_string(),
            ),
            (
                "backoff_after_declines",
                d.backoff_after_declines.to_string(),
            ),
            ("backoff_seconds", d.backoff_seconds.to_string()),
            ("default_reaction", d.default_reaction.to_string()),
            ("short_max_tokens", d.short_max_tokens.to_string()),
            ("max_reply_chars", d.max_reply_chars.to_string()),
            ("fact_half_life_days", d.fact_half_life_days.to_string()),
            ("max_facts_per_channel", d.max_facts_per_channel.to_string()),
            (
                "reflection_min_messages",
                d.reflection_min_messages.to_string(),
            ),
            (
                "familiarity_thresholds",
                format!(
                    "{},{},{}",
                    d.familiarity_thresholds.acquaintance,
                    d.familiarity_thresholds.friend,
                    d.familiarity_thresholds.close
                ),
            ),
            ("proactive", d.proactive.to_string()),
            ("proactive_after_hours", d.proactive_after_hours.to_string()),
            ("proactive_hours", d.proactive_hours.to_string()),
            ("proactive_days", d.proactive_days.to_string()),
            (
                "max_proactive_per_channel_week",
                d.max_proactive_per_channel_week.to_string(),
            ),
            (
                "max_replies_per_channel_per_hour",
                d.max_replies_per_channel_per_hour.to_string(),
            ),
            (
                "max_mentions_per_user_per_hour",
                d.max_mentions_per_user_per_hour.to_string(),
            ),
            ("max_llm_calls_per_day", d.max_llm_calls_per_day.to_string()),
            ("limit_notice", d.limit_notice.to_string()),
            ("persona_name", d.persona_name.clone()),
            ("persona_system_prompt", d.persona_system_prompt.clone()),
            ("timezone", d.timezone.name().to_owned()),
            ("llm_provider", d.llm_provider.to_string()),
            ("llm_base_url", d.llm_base_url.clone()),
            ("judgment_model", d.judgment.model.clone()),
            ("judgment_temperature", f(d.judgment.temperature)),
            ("judgment_max_tokens", d.judgment.max_tokens.to_string()),
            ("response_model", d.response.model.clone()),
            ("response_temperature", f(d.response.temperature)),
            ("response_max_tokens", d.response.max_tokens.to_string()),
            ("memory_model", d.memory.model.clone()),
            ("memory_temperature", f(d.memory.temperature)),
            ("memory_max_tokens", d.memory.max_tokens.to_string()),
            ("llm_timeout_seconds", d.llm_timeout_seconds.to_string()),
            ("llm_max_retries", d.llm_max_retries.to_string()),
            ("slack_api_base_url", d.slack_api_base_url.clone()),
            ("slack_max_retries", d.slack_max_retries.to_string()),
            (
                "message_retention_days",
                d.message_retention_days.to_string(),
            ),
            ("memory_retention_days", d.memory_retention_days.to_string()),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_documented_ones() {
        let s = Settings::default();
        assert_eq!(s.min_wait_seconds, 300);
        assert_eq!(s.jitter_ratio, 0.3);
        assert_eq!(s.channel_messages_limit, 50);
        assert_eq!(s.active_channel_days, 7);
        assert_eq!(s.thread_memory_days, 7);
        assert_eq!(s.message_limit, 20);
        assert_eq!(s.max_message_age_seconds, 43_200);
        assert_eq!(s.long_term_update_interval_seconds, 3600);
        assert_eq!(s.short_term_window_hours, 24);
        assert_eq!(s.long_term_max_tokens, 500);
        assert_eq!(s.short_term_max_tokens, 300);
        assert_eq!((s.response.temperature, s.response.max_tokens), (0.7, 1000));
        assert_eq!((s.judgment.temperature, s.judgment.max_tokens), (0.3, 500));
        assert_eq!((s.memory.temperature, s.memory.max_tokens), (0.5, 800));
        assert_eq!(s.timezone, Tz::UTC);
    }

    #[test]
    fn a_present_value_overrides_its_default() {
        let (s, issues) = Settings::from_pairs([("min_wait_seconds", "30"), ("jitter_ratio", "0")]);
        assert!(issues.is_empty(), "{issues:?}");
        assert_eq!(s.min_wait_seconds, 30);
        assert_eq!(s.jitter_ratio, 0.0);
    }

    #[test]
    fn malformed_and_out_of_range_values_keep_the_default_and_are_reported() {
        let (s, issues) = Settings::from_pairs([
            ("min_wait_seconds", "five minutes"),
            ("jitter_ratio", "1.5"),
            ("timezone", "Mars/Olympus"),
            ("llm_base_url", "ftp://x"),
            ("no_such_setting", "1"),
        ]);
        assert_eq!(s, Settings::default());
        let names: Vec<_> = issues.iter().map(|i| i.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "min_wait_seconds",
                "jitter_ratio",
                "timezone",
                "llm_base_url",
                "no_such_setting"
            ]
        );
        assert!(issues[0].to_string().contains("not a whole number"));
        assert!(issues[1].to_string().contains("out of range"));
    }

    #[test]
    fn a_refused_value_says_what_is_wrong() {
        use SettingError::*;
        let mut s = Settings::default();
        let cases = [
            ("no_such_setting", "1", UnknownName),
            ("min_wait_seconds", "soon", NotAWholeNumber),
            (
                "min_wait_seconds",
                "-5",
                WholeNumberOutOfRange {
                    min: 0,
                    max: 86_400,
                },
            ),
            (
                "min_wait_seconds",
                "99999999999",
                WholeNumberOutOfRange {
                    min: 0,
                    max: 86_400,
                },
            ),
            (
                "min_wait_seconds",
                "100000",
                WholeNumberOutOfRange {
                    min: 0,
                    max: 86_400,
                },
            ),
            ("jitter_ratio", "much", NotANumber),
            (
                "jitter_ratio",
                "1.5",
                NumberOutOfRange { min: 0.0, max: 1.0 },
            ),
            ("persona_name", "  ", Empty),
            ("llm_base_url", "ftp://x", NotAnHttpUrl),
            ("slack_app_id", "a-1", NotASlackId),
            ("slack_app_id", "T0123", WrongSlackIdKind { first: 'A' }),
            ("limit_notice", "maybe", NotABoolean),
            ("timezone", "Mars/Olympus", NotATimeZone),
        ];
        for (name, value, error) in cases {
            assert_eq!(s.apply(name, value), Err(error), "{name} = {value:?}");
        }
        assert!(matches!(s.apply("bot_user_id", "U 1"), Err(BadUserId(_))));
        assert_eq!(s, Settings::default(), "nothing was applied");
        assert_eq!(
            WholeNumberOutOfRange {
                min: 0,
                max: 86_400
            }
            .to_string(),
            "out of range 0..=86400"
        );
        assert_eq!(
            WrongSlackIdKind { first: 'T' }.to_string(),
            "not a Slack id starting with T"
        );
    }

    #[test]
    fn the_value_of_an_unknown_name_is_never_repeated() {
        let (_, issues) = Settings::from_pairs([("slack_bot_tokn", "bot-token-123-secret")]);
        assert_eq!(issues.len(), 1);
        assert!(!issues[0].to_string().contains("secret"), "{}", issues[0]);
    }

    #[test]
    fn a_wait_longer_than_the_age_limit_is_refused() {
        let (s, issues) = Settings::from_pairs([("min_wait_seconds", "50000")]);
        assert_eq!(s.min_wait_seconds, 300);
        assert_eq!(issues.len(), 1);
        assert!(issues[0].problem.contains("max_message_age_seconds"));
        let (s, issues) = Settings::from_pairs([
            ("min_wait_seconds", "600"),
            ("max_message_age_seconds", "3600"),
        ]);
        assert!(issues.is_empty());
        assert_eq!((s.min_wait_seconds, s.max_message_age_seconds), (600, 3600));
    }

    #[test]
    fn calls_that_cannot_fit_the_function_timeouts_are_refused() {
        let d = Settings::default();
        let shortest = JUDGMENT_FUNCTION_TIMEOUT_SECONDS.min(RESPONSE_FUNCTION_TIMEOUT_SECONDS);
        assert!(
            d.worst_case_call_seconds() + u64::from(JOB_MARGIN_SECONDS) <= u64::from(shortest),
            "the defaults fit"
        );
        // 60 s x 3 LLM attempts alone fill the functions' 180 s.
        let (s, issues) = Settings::from_pairs([
            ("llm_timeout_seconds", "60"),
            ("llm_max_retries", "2"),
            ("slack_max_retries", "5"),
        ]);
        assert_eq!(issues.len(), 1, "{issues:?}");
        assert_eq!(issues[0].name, "llm_timeout_seconds");
        assert!(
            issues[0]
                .problem
                .contains("judgment function's 180 s timeout"),
            "{}",
            issues[0]
        );
        assert_eq!(
            (
                s.llm_timeout_seconds,
                s.llm_max_retries,
                s.slack_max_retries
            ),
            (
                d.llm_timeout_seconds,
                d.llm_max_retries,
                d.slack_max_retries
            ),
            "the three reset"
        );
        // A long timeout without retries fits: 120 + 10 x 4 + 10 = 170 s.
        let (s, issues) =
            Settings::from_pairs([("llm_timeout_seconds", "120"), ("llm_max_retries", "0")]);
        assert!(issues.is_empty(), "{issues:?}");
        assert_eq!((s.llm_timeout_seconds, s.llm_max_retries), (120, 0));
        // Slack's attempts count too: 120 + 10 x 6 + 10 = 190 s.
        let (s, issues) = Settings::from_pairs([
            ("llm_timeout_seconds", "120"),
            ("llm_max_retries", "0"),
            ("slack_max_retries", "5"),
        ]);
        assert_eq!(issues.len(), 1, "{issues:?}");
        assert_eq!(s.slack_max_retries, d.slack_max_retries);
    }

    #[test]
    fn a_mention_may_be_answered_for_twenty_minutes_by_default() {
        // One SQS redelivery (visibility timeout 1,080 s) fits.
        assert!(Settings::default().mention_max_age_seconds > 1_080);
        let (s, issues) = Settings::from_pairs([("retry_delays_seconds", " 5, 20 ,60")]);
        assert!(issues.is_empty(), "{issues:?}");
        assert_eq!(s.retry_delays_seconds, vec![5, 20, 60]);
        let (s, issues) = Settings::from_pairs([("retry_delays_seconds", "")]);
        assert!(issues.is_empty(), "{issues:?}");
        assert!(
            s.retry_delays_seconds.is_empty(),
            "blank: the queue's own only"
        );
        for bad in ["10,soon", "-5", "50000", "1,1,1,1,1,1,1,1,1,1,1"] {
            let (s, issues) = Settings::from_pairs([("retry_delays_seconds", bad)]);
            assert_eq!(issues.len(), 1, "{bad}");
            assert_eq!(
                s.retry_delays_seconds,
                vec![10, 30, 90],
                "{bad}: the default stays"
            );
        }
        let (s, issues) = Settings::from_pairs([("mention_max_age_seconds", "900")]);
        assert!(issues.is_empty(), "{issues:?}");
        assert_eq!(s.mention_max_age_seconds, 900);
        let (s, issues) = Settings::from_pairs([("mention_max_age_seconds", "10")]);
        assert_eq!(issues.len(), 1, "{issues:?}");
        assert_eq!(s.mention_max_age_seconds, 1_200);
    }

    #[test]
    fn default_pairs_round_trip_to_the_defaults() {
        let pairs = Settings::default_pairs();
        let (s, issues) = Settings::from_pairs(pairs.iter().map(|(n, v)| (*n, v.as_str())));
        assert!(issues.is_empty(), "{issues:?}");
        assert_eq!(s, Settings::default());
        for (name, _) in &pairs {
            assert!(SETTING_NAMES.contains(name), "{name} is not listed");
        }
        assert_eq!(
            pairs.len() + 11,
            SETTING_NAMES.len(),
            "only bot_user_id, slack_app_id, slack_team_id, name_aliases, channel_chattiness, \
             rule_thresholds, interest_keywords, proactive_channels and the three roles' \
             providers have no default"
        );
    }

    #[test]
    fn time_zone_and_urls_are_normalised() {
        let (s, issues) = Settings::from_pairs([
            ("timezone", "Asia/Tokyo"),
            ("llm_base_url", "http://127.0.0.1:9/v1/"),
        ]);
        assert!(issues.is_empty());
        assert_eq!(s.timezone, chrono_tz::Asia::Tokyo);
        assert_eq!(s.llm_base_url, "http://127.0.0.1:9/v1");
    }

    #[test]
    fn app_and_team_ids_are_optional_slack_ids() {
        let d = Settings::default();
        assert_eq!((d.slack_app_id, d.slack_team_id), (None, None));
        let (s, issues) =
            Settings::from_pairs([("slack_app_id", " A0123ABC "), ("slack_team_id", "T0123\n")]);
        assert!(issues.is_empty(), "{issues:?}");
        assert_eq!(s.slack_app_id.as_deref(), Some("A0123ABC"));
        assert_eq!(s.slack_team_id.as_deref(), Some("T0123"));
        let (s, issues) = Settings::from_pairs([
            ("slack_app_id", "T0123"),
            ("slack_team_id", "t0123"),
            ("slack_app_id", "A-1"),
            ("slack_team_id", ""),
        ]);
        assert_eq!(issues.len(), 4, "{issues:?}");
        assert_eq!((s.slack_app_id, s.slack_team_id), (None, None));
    }

    #[test]
    fn spend_limits_have_high_defaults_and_refuse_zero() {
        let d = Settings::default();
        assert_eq!(d.max_replies_per_channel_per_hour, 30);
        assert_eq!(d.max_mentions_per_user_per_hour, 20);
        assert_eq!(d.max_llm_calls_per_day, 2_000);
        assert!(d.limit_notice);
        let (s, issues) = Settings::from_pairs([
            ("max_replies_per_channel_per_hour", "5"),
            ("max_mentions_per_user_per_hour", "3"),
            ("max_llm_calls_per_day", "100"),
            ("limit_notice", "false"),
        ]);
        assert!(issues.is_empty(), "{issues:?}");
        assert_eq!(
            (
                s.max_replies_per_channel_per_hour,
                s.max_mentions_per_user_per_hour,
                s.max_llm_calls_per_day,
                s.limit_notice
            ),
            (5, 3, 100, false)
        );
        // Zero would silence the bot for good: a typo must not do that.
        let (s, issues) = Settings::from_pairs([
            ("max_replies_per_channel_per_hour", "0"),
            ("max_mentions_per_user_per_hour", "-1"),
            ("max_llm_calls_per_day", "0"),
            ("limit_notice", "maybe"),
        ]);
        assert_eq!(issues.len(), 4, "{issues:?}");
        assert_eq!(s, Settings::default());
    }

    #[test]
    fn the_chattiness_dial_its_channel_overrides_and_its_older_name() {
        let c1 = ChannelId::parse("C1").unwrap();
        let c2 = ChannelId::parse("C2").unwrap();
        let (s, issues) = Settings::from_pairs([
            ("chattiness", "quiet"),
            ("channel_chattiness", "C1=chatty, C9=mentions_only"),
        ]);
        assert!(issues.is_empty(), "{issues:?}");
        assert_eq!(s.chattiness_in(&c1), Chattiness::Chatty);
        assert_eq!(s.chattiness_in(&c2), Chattiness::Quiet);
        assert_eq!(s.thresholds_in(&c2), Chattiness::Quiet.thresholds());
        // `autonomous_replies = false` is mentions only, but for channels
        // with a level of their own.
        let (s, _) = Settings::from_pairs([
            ("autonomous_replies", "false"),
            ("channel_chattiness", "C1=normal"),
        ]);
        assert_eq!(s.chattiness_in(&c2), Chattiness::MentionsOnly);
        assert_eq!(s.thresholds_in(&c2), None);
        assert_eq!(s.chattiness_in(&c1), Chattiness::Normal);
        // Thresholds of one's own replace the level's, not mentions only.
        let (s, _) = Settings::from_pairs([("rule_thresholds", "10, 40")]);
        assert_eq!(s.thresholds_in(&c2), Some(Thresholds { low: 10, high: 40 }));
        for (name, value) in [
            ("chattiness", "loud"),
            ("channel_chattiness", "C1"),
            ("channel_chattiness", "C1=loud"),
            ("rule_thresholds", "50,10"),
            ("rule_thresholds", "10"),
        ] {
            let (s, issues) = Settings::from_pairs([(name, value)]);
            assert_eq!(issues.len(), 1, "{name}={value}");
            assert_eq!(s, Settings::default(), "{name}={value} keeps the default");
        }
        let (s, _) = Settings::from_pairs([("interest_keywords", "Cats, ramen ,")]);
        assert_eq!(s.interest_keywords, vec!["cats", "ramen"]);
    }

    #[test]
    fn the_llm_provider_is_openai_unless_set_and_a_role_may_have_its_own() {
        let d = Settings::default();
        assert_eq!(d.llm_provider, LlmProvider::OpenAi);
        assert_eq!(
            [d.judgment.provider, d.response.provider, d.memory.provider],
            [None, None, None]
        );
        let (s, issues) = Settings::from_pairs([
            ("llm_provider", " Bedrock "),
            (
                "judgment_model",
                "us.anthropic.claude-haiku-4-5-20251001-v1:0",
            ),
            ("response_provider", "openai"),
            ("memory_provider", "bedrock"),
        ]);
        assert!(issues.is_empty(), "{issues:?}");
        assert_eq!(s.llm_provider, LlmProvider::Bedrock);
        assert_eq!(
            s.judgment.model,
            "us.anthropic.claude-haiku-4-5-20251001-v1:0"
        );
        assert_eq!(s.judgment.provider, None);
        assert_eq!(s.response.provider, Some(LlmProvider::OpenAi));
        assert_eq!(s.memory.provider, Some(LlmProvider::Bedrock));
        // A blank role provider follows llm_provider; a blank llm_provider
        // is no provider at all.
        let (s, issues) = Settings::from_pairs([("judgment_provider", "  ")]);
        assert!(issues.is_empty(), "{issues:?}");
        assert_eq!(s.judgment.provider, None);
        let mut s = Settings::default();
        for (name, value) in [
            ("llm_provider", "anthropic"),
            ("llm_provider", ""),
            ("judgment_provider", "azure"),
            ("response_provider", "bedrock-us"),
            ("memory_provider", "open ai"),
        ] {
            assert_eq!(
                s.apply(name, value),
                Err(SettingError::NotAProvider),
                "{name}={value:?}"
            );
        }
        assert_eq!(s, Settings::default(), "nothing was applied");
        assert_eq!(
            SettingError::NotAProvider.to_string(),
            "not openai or bedrock"
        );
        assert_eq!(LlmProvider::Bedrock.to_string(), "bedrock");
    }

    #[test]
    fn proactive_talk_is_off_and_bounded_by_default() {
        let d = Settings::default();
        assert!(!d.proactive);
        assert!(d.proactive_channels.is_empty());
        assert_eq!(d.proactive_after_hours, 24);
        assert_eq!(d.proactive_hours.to_string(), "10-18");
        assert_eq!(d.proactive_days.to_string(), "mon-fri");
        assert_eq!(d.max_proactive_per_channel_week, 1);
        let (s, issues) = Settings::from_pairs([
            ("proactive", "on"),
            ("proactive_channels", "public, G123"),
            ("proactive_after_hours", "48"),
            ("proactive_hours", "9-17"),
            ("proactive_days", "mon,wed,fri"),
            ("max_proactive_per_channel_week", "2"),
        ]);
        assert!(issues.is_empty(), "{issues:?}");
        assert!(s.proactive && s.proactive_channels.public);
        assert_eq!(s.proactive_channels.to_string(), "public,G123");
        assert_eq!(s.proactive_after_hours, 48);
        assert_eq!(s.proactive_hours.to_string(), "9-17");
        assert_eq!(s.proactive_days.to_string(), "mon,wed,fri");
        assert_eq!(s.max_proactive_per_channel_week, 2);
        for (name, value) in [
            ("proactive", "sometimes"),
            ("proactive_channels", "general"),
            ("proactive_after_hours", "0"),
            ("proactive_hours", "18-10"),
            ("proactive_days", "weekdays"),
            ("max_proactive_per_channel_week", "8"),
        ] {
            let (s, issues) = Settings::from_pairs([(name, value)]);
            assert_eq!(issues.len(), 1, "{name}={value}");
            assert_eq!(s, Settings::default(), "{name}={value} keeps the default");
        }
    }
}
