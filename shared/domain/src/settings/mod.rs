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

use super::ids::{ChannelId, UserId};
use super::people::FamiliarityThresholds;
use super::proactive::{ProactiveChannels, WorkingDays, WorkingHours};
use super::reply::EmojiName;
use super::rules::{Chattiness, Thresholds};
pub use embedder::{Embedder, EmbedderKind};
pub use error::SettingError;
use kinds::*;
pub use provider::LlmProvider;

pub mod embedder;
mod error;
pub mod kinds;
mod provider;

/// The default `persona_name`.
pub const DEFAULT_PERSONA_NAME: &str = "myao";
/// The names in kana the default persona answers to as well.
pub const DEFAULT_PERSONA_KANA_NAMES: &[&str] = &["みゃお", "ミャオ"];

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

/// One model role's parameters, as [`Settings::judgment`],
/// [`Settings::response`] and [`Settings::memory`] gather them.
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

/// One setting as the settings page, `myao settings` and the template's
/// tests know it: all of it comes from the one list below.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingDoc {
    pub name: &'static str,
    /// What its value may be, in a few words ([`Kind::describe`]).
    pub kind: String,
    /// Its default as text, as SSM would hold it; empty for none.
    pub default: String,
    /// What it does, in a sentence or a few.
    pub doc: String,
}

/// The doc comment's lines as one paragraph.
fn paragraph(lines: &[&str]) -> String {
    lines
        .iter()
        .map(|l| l.trim())
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Writes, from one list of `name: type = default, kind;` (each with its
/// doc comment), the struct [`Settings`], its `Default`, [`SETTING_NAMES`],
/// [`Settings::apply`], [`Settings::text_of`] and [`Settings::catalogue`]:
/// a setting is added in one place, and the compiler holds its kind's
/// value type to the field's.
macro_rules! settings {
    ($(
        $(#[doc = $doc:literal])+
        $name:ident: $ty:ty = $default:expr, $kind:expr;
    )+) => {
        /// All settings. Construct with [`Settings::default`] or
        /// [`Settings::from_pairs`].
        #[derive(Debug, Clone, PartialEq)]
        pub struct Settings {
            $( $(#[doc = $doc])+ pub $name: $ty, )+
        }

        impl Default for Settings {
            fn default() -> Self {
                Settings { $( $name: $default, )+ }
            }
        }

        /// Every setting name, in the order of the documentation.
        pub const SETTING_NAMES: &[&str] = &[$(stringify!($name)),+];

        impl Settings {
            /// Applies one named value. Unknown names are an error too, so
            /// that a misspelt parameter is reported rather than ignored.
            pub fn apply(&mut self, name: &str, value: &str) -> Result<(), SettingError> {
                match name {
                    $( stringify!($name) => self.$name = Kind::parse(&$kind, value)?, )+
                    _ => return Err(SettingError::UnknownName),
                }
                Ok(())
            }

            /// The value of setting `name` as text that parses back to it
            /// (empty for none); `None` for an unknown name.
            pub fn text_of(&self, name: &str) -> Option<String> {
                match name {
                    $( stringify!($name) => Some(Kind::show(&$kind, &self.$name)), )+
                    _ => None,
                }
            }

            /// Every setting: its name, kind, default and doc, in order.
            pub fn catalogue() -> Vec<SettingDoc> {
                let d = Settings::default();
                vec![$(
                    SettingDoc {
                        name: stringify!($name),
                        kind: Kind::describe(&$kind),
                        default: Kind::show(&$kind, &d.$name),
                        doc: paragraph(&[$($doc),+]),
                    }
                ),+]
            }
        }
    };
}

const DAY: u32 = 86_400;

/// The default `positive_reactions`: thumbs up, thanks (🙏, 🙇), applause,
/// cheers and approval, in Slack's names, as both English- and
/// Japanese-speaking workspaces use them.
pub const DEFAULT_POSITIVE_REACTIONS: &[&str] = &[
    "+1",
    "thumbsup",
    "pray",
    "bow",
    "heart",
    "heart_eyes",
    "raised_hands",
    "clap",
    "tada",
    "ok_hand",
    "ok",
    "100",
    "sparkles",
    "star-struck",
];

/// The default `negative_reactions`: thumbs down, "no" (🙅, 🆖, ❌, 🚫, ⛔)
/// and "hush" (🤐, 🤫, 🔇), and an eye roll.
pub const DEFAULT_NEGATIVE_REACTIONS: &[&str] = &[
    "-1",
    "thumbsdown",
    "no_good",
    "ng",
    "x",
    "no_entry_sign",
    "no_entry",
    "zipper_mouth_face",
    "shushing_face",
    "mute",
    "face_with_rolling_eyes",
];

/// The emoji of `names` (each a valid name; an invalid one is left out).
fn emojis(names: &[&str]) -> Vec<EmojiName> {
    names
        .iter()
        .filter_map(|n| EmojiName::parse(n).ok())
        .collect()
}

settings! {
    /// Seconds of quiet before myao considers joining a conversation.
    min_wait_seconds: u32 = 300, Whole(0, DAY);
    /// That wait varies randomly by ± this ratio (0.3: 210 to 390 s).
    jitter_ratio: f64 = 0.3, Number(0.0, 1.0);
    /// Recent channel messages put into a prompt.
    channel_messages_limit: u32 = 50, Whole(1, 1000);
    /// A channel with a message in this many days counts as active.
    active_channel_days: u32 = 7, Whole(1, 365);
    /// Thread memories younger than this go into prompts.
    thread_memory_days: u32 = 7, Whole(1, 365);
    /// Messages of the conversation being judged, at most.
    message_limit: u32 = 20, Whole(1, 1000);
    /// A conversation quiet for longer than this (12 h) is not judged.
    max_message_age_seconds: u32 = 43_200, Whole(60, 30 * DAY);
    /// A mention not answered within this many seconds (its reply job failed
    /// and came back later) is dropped and logged, not answered late. The
    /// default lets the quick retries of `retry_delays_seconds` through
    /// (about 16 minutes).
    mention_max_age_seconds: u32 = 1_200, Whole(60, DAY);
    /// A reply job that fails retryably (the model or Slack down a while)
    /// comes back after these many seconds, one per try, before the response
    /// queue's own redelivery (1,080 s) takes over; blank: the queue's only.
    /// The default's tries span 16 minutes, inside `mention_max_age_seconds`:
    /// a Slack outage that long still ends in the answer, written once.
    retry_delays_seconds: Vec<u32> = vec![10, 30, 90, 240, 600], Delays;
    /// Long-term memories, and the workspace's short-term memory, are
    /// rewritten at most this often (a day); a channel's long-term memory
    /// sooner only to take in what would otherwise be lost (what leaves the
    /// short-term window, or a short-term memory a quiet window clears).
    long_term_update_interval_seconds: u32 = DAY, Whole(0, 30 * DAY);
    /// A channel's memories (its short-term memory, its threads' summaries
    /// and the facts in them) are rewritten, in one call, once this many
    /// messages came since, or once the oldest of them waited half of
    /// `short_term_window_hours`.
    memory_min_new_messages: u32 = 20, Whole(1, 500);
    /// Short-term memories cover this many hours.
    short_term_window_hours: u32 = 24, Whole(1, 24 * 30);
    /// Length budget of a long-term memory, in tokens.
    long_term_max_tokens: u32 = 500, Whole(50, 8000);
    /// Length budget of a short-term memory, in tokens.
    short_term_max_tokens: u32 = 300, Whole(50, 8000);
    /// The most tokens (estimated) a judgment prompt may take; over it, other
    /// channels' memories, then thread summaries, then the oldest messages
    /// are left out (never the judged conversation).
    judgment_prompt_max_tokens: u32 = 16_000, Whole(2_000, 1_000_000);
    /// The same for a reply prompt.
    response_prompt_max_tokens: u32 = 24_000, Whole(2_000, 1_000_000);
    /// The same for a memory prompt (the oldest messages go first).
    memory_prompt_max_tokens: u32 = 24_000, Whole(2_000, 1_000_000);
    /// A longer message is cut in prompts, with a visible `[...]`.
    max_message_chars: u32 = 4_000, Whole(100, 40_000);
    /// `false` is `chattiness = mentions_only` (the older name of the dial; a
    /// channel's own level still wins).
    autonomous_replies: bool = true, Bool;
    /// How readily myao joins on its own: it moves the rule stage's
    /// thresholds (docs/deciding.md).
    chattiness: Chattiness = Chattiness::Normal, Level;
    /// Levels of single channels, over `chattiness` and
    /// `autonomous_replies`, e.g. `C123=quiet,C456=mentions_only`.
    channel_chattiness: BTreeMap<ChannelId, Chattiness> = BTreeMap::new(), ChannelLevels;
    /// The rule stage's scores instead of the level's, for tuning: below LOW
    /// silent, from HIGH answered without asking the LLM.
    rule_thresholds: Option<Thresholds> = None, Optional(LowHigh);
    /// Words of the persona's interests; a conversation holding one scores
    /// higher.
    interest_keywords: Vec<String> = Vec::new(), Words { lower: true };
    /// A reply in a thread where myao spoke within this many seconds is
    /// answered at once, like a mention, when it answers myao: it comes from
    /// the person myao answered (or the thread's only other person), right
    /// after myao's message, and @-mentions or quotes nobody else; other
    /// replies are judged.
    engagement_window_seconds: u32 = 300, Whole(0, DAY);
    /// The most such replies myao answers in a row in one thread, until
    /// someone mentions or names it again.
    max_engaged_answers: u32 = 3, Whole(0, 1_000);
    /// A conversation that never goes quiet is still judged this long after
    /// its first unjudged message.
    max_wait_seconds: u32 = 900, Whole(60, DAY);
    /// No unprompted reply within this many seconds of myao's last message
    /// in the channel.
    cooldown_seconds: u32 = 120, Whole(0, DAY);
    // A busy support channel leaves up to eight questions an hour to the
    // room (docs/deciding.md): at 10 the bot can take them.
    /// Unprompted replies a channel gets in an hour, at most.
    max_unprompted_per_channel_hour: u32 = 10, Whole(0, 10_000);
    /// Unprompted replies (and topics opened) in the whole workspace in an
    /// hour, at most, whatever the channels: a question cross-posted to
    /// many channels gets this many answers. Answers to mentions, names and
    /// DMs are not counted.
    max_unprompted_per_workspace_hour: u32 = 20, Whole(0, 100_000);
    /// After this many LLM declines in a row in a channel, its judgments
    /// pause for `backoff_seconds` (0: never); a mention or its name ends the
    /// pause.
    backoff_after_declines: u32 = 3, Whole(0, 1_000);
    /// How long that pause lasts.
    backoff_seconds: u32 = 1_800, Whole(0, 7 * DAY);
    /// Reactions on myao's message that welcome it: each makes it a little
    /// readier to speak unprompted in that channel, for a few days (the
    /// move halves every three days). A skin tone counts as its emoji.
    positive_reactions: Vec<EmojiName> = emojis(DEFAULT_POSITIVE_REACTIONS), Emojis;
    /// Reactions on myao's message that find it too much: each makes it a
    /// little less ready to speak unprompted in that channel, for a few days.
    /// An emoji in both lists counts as neither.
    negative_reactions: Vec<EmojiName> = emojis(DEFAULT_NEGATIVE_REACTIONS), Emojis;
    /// Slack's feedback buttons (👍 and 👎) under myao's unprompted posts:
    /// its replies nobody asked for and the topics it opens, never an answer
    /// to a mention, its name or a DM. A click is a hint like a reaction's;
    /// a person's latest click on a post is the one that counts. Needs the
    /// app's interactivity (docs/deploy.md). Off, no click counts, on the
    /// posts that carry the buttons already too.
    feedback_buttons: bool = false, Bool;
    /// The emoji of a reaction to a thanks, and of one whose chosen emoji the
    /// workspace lacks.
    default_reaction: EmojiName = EmojiName::parse("+1").expect("a valid emoji name"), Emoji;
    /// The most tokens a short answer ("nice!") may take.
    short_max_tokens: u32 = 80, Whole(10, 1_000);
    /// The most characters a reply is posted with; a longer one is cut at its
    /// last sentence within them.
    max_reply_chars: u32 = 3_000, Whole(100, 40_000);
    /// A remembered fact's strength halves every this many days.
    fact_half_life_days: u32 = 30, Whole(1, 3_650);
    /// Facts one channel keeps, at most (the strongest).
    max_facts_per_channel: u32 = 100, Whole(0, 10_000);
    /// What tells the meaning of facts and conversations, so that a fact is
    /// recalled when it is alluded to in other words: `bundled` (a
    /// multilingual model and an English one in the job functions'
    /// package: offline, no cost), `off` (recall by words only), `openai:MODEL` (an embedding
    /// model of the OpenAI-compatible API at `llm_base_url`, with its key,
    /// e.g. `openai:text-embedding-3-small`) or `bedrock:MODEL` (Cohere
    /// Embed or Titan Text Embeddings on Amazon Bedrock, e.g.
    /// `bedrock:cohere.embed-multilingual-v3`, with the model in
    /// `BedrockModelIds`). A provider is sent the facts and the
    /// conversations' newest words. Facts written before a change are
    /// embedded again by the hourly memory run, 50 a channel at a time.
    embedder: Embedder = Embedder::Bundled, EmbedderKind;
    /// New messages from people a channel's digest needs before it also
    /// writes the facts in them (in the same call); 0: no facts.
    reflection_min_messages: u32 = 3, Whole(0, 1_000);
    /// Exchanges with myao from which someone is an acquaintance, a friend,
    /// close.
    familiarity_thresholds: FamiliarityThresholds = FamiliarityThresholds::default(), Familiarity;
    /// Whether myao now and then opens a topic in a channel gone quiet.
    proactive: bool = false, Bool;
    /// Where it may: channel ids, and `public` for every public channel not
    /// shared outside (e.g. `public,G123`); a private or shared channel only
    /// by its id. Empty: nowhere.
    proactive_channels: ProactiveChannels = ProactiveChannels::default(), Channels;
    /// Hours of silence in a channel before it may open a topic there.
    proactive_after_hours: u32 = 24, Whole(1, 24 * 90);
    /// Hours (in `timezone`) in which it may.
    proactive_hours: WorkingHours = WorkingHours::default(), Hours;
    /// Days on which it may.
    proactive_days: WorkingDays = WorkingDays::default(), Days;
    /// Topics it opens in one channel per week (UTC, Monday to Sunday), at
    /// most; 0: none.
    max_proactive_per_channel_week: u32 = 1, Whole(0, 7);
    /// Replies (to mentions and unprompted) one channel gets per clock hour
    /// (UTC); over it, no LLM call and no reply.
    max_replies_per_channel_per_hour: u32 = 30, Whole(1, 10_000);
    /// Mentions of one person answered per clock hour (UTC); over it, no LLM
    /// call and no reply.
    max_mentions_per_user_per_hour: u32 = 20, Whole(1, 10_000);
    /// LLM calls of the whole workspace per UTC day. Memories stop at 80 % of
    /// it, judgments at 95 %; the last 5 % is kept for replies.
    max_llm_calls_per_day: u32 = 2_000, Whole(1, 10_000_000);
    /// A mention refused by one of these limits gets a short fixed notice in
    /// its thread (at most once an hour per person); false: silence.
    limit_notice: bool = true, Bool;
    /// The bot's name in prompts; a message that calls it by name ("myao,
    /// ...", "hey myao", 「ねえみゃお」, not "myao is down") is answered like a
    /// mention. The default, `myao`, answers to `みゃお` and `ミャオ` too. A
    /// name that is also a common word (`max`) counts only in its clearest
    /// calls ("max, ...", "hey max"); `myao doctor` warns of one.
    persona_name: String = DEFAULT_PERSONA_NAME.to_owned(), Text;
    /// Other names it answers to, comma-separated (e.g. `ミャオ,みゃお`); a
    /// name in Latin script must stand as a whole word. Only a call by one
    /// counts, as for `persona_name`.
    name_aliases: Vec<String> = Vec::new(), Words { lower: false };
    /// Who myao is: its character and way of talking. The default is a
    /// friendly cat who talks casually in short sentences, in Japanese.
    persona_system_prompt: String = DEFAULT_PERSONA_PROMPT.to_owned(), Text;
    /// The workspace's time zone (e.g. `Asia/Tokyo`): of the times shown to
    /// the model, of `proactive_hours`, and of the midnight a "be quiet
    /// today" lasts until.
    timezone: Tz = Tz::UTC, Zone;
    /// Where the LLM calls go: `openai` (the OpenAI-compatible API of
    /// `llm_base_url`, with the key) or `bedrock` (Amazon Bedrock in the
    /// stack's Region, no key). The stack's `LlmProvider` parameter sets it,
    /// with Bedrock's permissions: change it with a deploy.
    llm_provider: LlmProvider = LlmProvider::OpenAi, Provider;
    /// OpenAI-compatible API base URL, without `/chat/completions`.
    llm_base_url: String = "https://api.openai.com/v1".to_owned(), Url;
    /// Model deciding whether and when to reply (on Bedrock a model id or an
    /// inference profile id, e.g. `us.anthropic.claude-haiku-4-5-20251001-v1:0`).
    judgment_model: String = "gpt-4.1-mini".to_owned(), Text;
    /// The judgment's own provider, instead of `llm_provider`.
    judgment_provider: Option<LlmProvider> = None, Optional(Provider);
    /// The judgment model's temperature.
    judgment_temperature: f64 = 0.3, Number(0.0, 2.0);
    /// The judgment model's maximum output length, in tokens.
    judgment_max_tokens: u32 = 500, Whole(16, 32_000);
    /// Model writing the replies.
    response_model: String = "gpt-4.1".to_owned(), Text;
    /// The replies' own provider, instead of `llm_provider`.
    response_provider: Option<LlmProvider> = None, Optional(Provider);
    /// The reply model's temperature.
    response_temperature: f64 = 0.7, Number(0.0, 2.0);
    /// The reply model's maximum output length, in tokens.
    response_max_tokens: u32 = 1000, Whole(16, 32_000);
    /// Whether the reply model sees the images (PNG, JPEG, GIF, WebP)
    /// shared in the conversation it answers, downloaded with the bot token
    /// (the `files:read` scope). Only for a model that takes images.
    vision: bool = false, Bool;
    /// The largest image, in bytes, downloaded for the reply model; a larger
    /// one is named in the prompt as too large to open. A reply downloads
    /// 12 MB of images at most, all together.
    vision_max_bytes: u32 = 3_750_000, Whole(1_000, 12_000_000);
    /// Model writing the memories.
    memory_model: String = "gpt-4.1-mini".to_owned(), Text;
    /// The memories' own provider, instead of `llm_provider`.
    memory_provider: Option<LlmProvider> = None, Optional(Provider);
    /// The memory model's temperature.
    memory_temperature: f64 = 0.5, Number(0.0, 2.0);
    /// The memory model's maximum output length, in tokens. A channel's
    /// digest writes several memories in one answer: its short-term memory,
    /// up to six thread summaries, facts and, once a day, its long-term
    /// memory (about 3,750 tokens at most, with the default lengths).
    memory_max_tokens: u32 = 4_000, Whole(16, 32_000);
    /// Timeout of one LLM request; with the retries it must fit the
    /// functions' timeouts.
    llm_timeout_seconds: u32 = 30, Whole(1, 120);
    /// Timeout of one request of the memory model, whose digest answers at
    /// length (up to `memory_max_tokens`) in a function with ten minutes.
    memory_timeout_seconds: u32 = 120, Whole(1, 180);
    /// Whether a `prompt_cache_key` (the role's) goes with
    /// each call, so that prompts with the same beginning reach the same
    /// cache. Always sent to api.openai.com; other servers may refuse a
    /// field they do not know.
    prompt_cache_key: bool = false, Bool;
    /// LLM retries after a rate limit, server or network error.
    llm_max_retries: u32 = 2, Whole(0, 5);
    /// Slack Web API address (change only for testing).
    slack_api_base_url: String = "https://slack.com/api".to_owned(), Url;
    /// Slack API retries after a rate limit or network error.
    slack_max_retries: u32 = 3, Whole(0, 5);
    /// The bot's own Slack user id, which you never need: events carry it and
    /// the job functions ask `auth.test` once per cold start. Set it only to
    /// spare that call.
    bot_user_id: Option<UserId> = None, Optional(User);
    /// The app's id (`A…`): set, ingest drops events sent to another app.
    slack_app_id: Option<String> = None, Optional(SlackId('A'));
    /// The workspace's id (`T…`): the stack's own, which it learns from
    /// its token otherwise. Set, ingest drops events from another
    /// workspace that did not install the app.
    slack_team_id: Option<String> = None, Optional(SlackId('T'));
    /// The app's Client ID (its Basic Information page): set, with the
    /// Client Secret, the stack installs the app in other workspaces
    /// through "Add to Slack" (`/slack/install`), each answered with its
    /// own token; an uninstall removes that workspace and all it kept.
    slack_client_id: Option<String> = None, Optional(Text);
    /// With `slack_client_id`, a workspace installed through "Add to
    /// Slack" has its own part of the table and is answered with its own
    /// token; the stack's own workspace (its token's) is the stack's, and
    /// any other's events are dropped unstored. On: the stack's own
    /// workspace's too, unless it installed (a stack that serves installed
    /// workspaces alone).
    installed_workspaces_only: bool = false, Bool;
    /// Stored messages are deleted after this many days.
    message_retention_days: u32 = 90, Whole(1, 3650);
    /// Memories, cached user names and channel records are deleted after
    /// this many days without a rewrite.
    memory_retention_days: u32 = 90, Whole(1, 3650);
}

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

impl Settings {
    /// Whether recall goes by meaning too (`embedder` is not `off`).
    pub fn recall_by_meaning(&self) -> bool {
        self.embedder != Embedder::Off
    }

    /// The half-life of remembered facts (`fact_half_life_days`, at least
    /// a day).
    pub fn fact_half_life(&self) -> chrono::Duration {
        chrono::Duration::days(i64::from(self.fact_half_life_days.max(1)))
    }

    /// The chattiness in `channel`: its own level if it has one, else
    /// `mentions_only` when `autonomous_replies` is off, else `chattiness`.
    pub fn chattiness_in(&self, channel: &ChannelId) -> Chattiness {
        match self.channel_chattiness.get(channel) {
            Some(level) => *level,
            None if !self.autonomous_replies => Chattiness::MentionsOnly,
            None => self.chattiness,
        }
    }

    /// The bot's names: `persona_name` and `name_aliases`. The default
    /// persona, a cat who talks in Japanese, answers to its Japanese names
    /// too ([`DEFAULT_PERSONA_KANA_NAMES`]).
    pub fn names(&self) -> Vec<&str> {
        let kana = if self
            .persona_name
            .trim()
            .eq_ignore_ascii_case(DEFAULT_PERSONA_NAME)
        {
            DEFAULT_PERSONA_KANA_NAMES
        } else {
            &[]
        };
        std::iter::once(&self.persona_name)
            .chain(&self.name_aliases)
            .map(String::as_str)
            .chain(kana.iter().copied())
            .collect()
    }

    /// The rule stage's thresholds in `channel`: `None` when only mentions
    /// are answered there.
    pub fn thresholds_in(&self, channel: &ChannelId) -> Option<Thresholds> {
        let level = self.chattiness_in(channel).thresholds()?;
        Some(self.rule_thresholds.unwrap_or(level))
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

    /// The default of each setting as text, as SSM would hold it. A
    /// setting with no default (`bot_user_id`, `channel_chattiness`, the
    /// roles' own providers, ...) is left out: an SSM parameter cannot be
    /// empty.
    pub fn default_pairs() -> Vec<(&'static str, String)> {
        Settings::catalogue()
            .into_iter()
            .filter(|s| !s.default.is_empty())
            .map(|s| (s.name, s.default))
            .collect()
    }

    /// The judgment model's parameters.
    pub fn judgment(&self) -> ModelSettings {
        ModelSettings {
            model: self.judgment_model.clone(),
            temperature: self.judgment_temperature,
            max_tokens: self.judgment_max_tokens,
            provider: self.judgment_provider,
        }
    }

    /// The reply model's parameters.
    pub fn response(&self) -> ModelSettings {
        ModelSettings {
            model: self.response_model.clone(),
            temperature: self.response_temperature,
            max_tokens: self.response_max_tokens,
            provider: self.response_provider,
        }
    }

    /// The memory model's parameters.
    pub fn memory(&self) -> ModelSettings {
        ModelSettings {
            model: self.memory_model.clone(),
            temperature: self.memory_temperature,
            max_tokens: self.memory_max_tokens,
            provider: self.memory_provider,
        }
    }
}

#[cfg(test)]
mod tests;
