//! The domain: pure types and rules. No I/O, no async, no AWS.

pub mod address;
pub mod answer_times;
pub mod budget;
pub mod channel;
pub mod channel_messages;
pub mod context;
pub mod digest;
pub mod facts;
pub mod feedback;
pub mod files;
pub mod grounds;
pub mod hints;
pub mod ids;
pub mod install;
pub mod job;
pub mod judgment;
pub mod labels;
pub mod limits;
pub mod meaning;
pub mod memory;
pub mod message;
pub mod metrics;
pub mod people;
pub mod privacy;
pub mod proactive;
pub mod reply;
pub mod routing;
pub mod rules;
pub mod settings;
pub mod sketch;
pub mod text;
pub mod tuning;

pub use channel::{Channel, ChannelKind, Visibility, VisibilityChange};
pub use channel_messages::ChannelMessages;
pub use context::{Context, Person, Persona};
pub use ids::{ChannelId, EnterpriseId, IdError, TeamId, Ts, UserId};
pub use job::{
    ChannelMemoryJob, Job, JobKind, JudgmentJob, ProactiveJob, ResponseJob, TeamJob,
    ThreadMemoryJob,
};
pub use judgment::JudgmentResult;
pub use memory::{ChannelMemory, Memory, MemoryKind, MemoryScope};
pub use message::{Conversation, Message, User};
pub use privacy::Forget;
pub use reply::{Closing, EmojiName, Reply};
pub use settings::Settings;
