//! The context given to the judgment, the response and the memory writer.

use std::collections::BTreeMap;

use super::channel_messages::ChannelMessages;
use super::files::FileState;
use super::ids::{ChannelId, Ts, UserId};
use super::memory::ChannelMemory;

/// Who the bot is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Persona {
    pub name: String,
    pub system_prompt: String,
}

/// Everything a prompt is made from (design 04a). A pure value: prompts are
/// built by whoever receives it.
///
/// ```compile_fail
/// use myao_domain::{ChannelId, ChannelMessages, Context, Persona};
/// let p = Persona { name: "myao".into(), system_prompt: "cat".into() };
/// let h = ChannelMessages::new(ChannelId::parse("C1").unwrap(), "general", vec![]);
/// let c = Context::new(p, h);
/// c.target_thread_ts = None; // the fields are private: no mutation
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Context {
    persona: Persona,
    conversation_history: ChannelMessages,
    workspace_long_term_memory: Option<String>,
    workspace_short_term_memory: Option<String>,
    channel_memories: Vec<ChannelMemory>,
    thread_memories: BTreeMap<Ts, String>,
    target_thread_ts: Option<Ts>,
    user_names: BTreeMap<UserId, String>,
    people: Vec<Person>,
    facts: Vec<String>,
}

/// Someone in the conversation, as the prompts introduce them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Person {
    pub name: String,
    /// How well the bot knows them ([`Familiarity::shown`](super::people::Familiarity::shown)).
    pub familiarity: String,
    pub topics: Vec<String>,
    /// What this channel's digests wrote of them ([`crate::sketch`]): a
    /// few tags, a one-line note, what the last conversation with them was
    /// about; empty when none did.
    pub tags: Vec<String>,
    pub note: Option<String>,
    pub last_talk: Option<String>,
}

impl Context {
    /// A context with no memories, judging or answering the top level.
    pub fn new(persona: Persona, conversation_history: ChannelMessages) -> Context {
        Context {
            persona,
            conversation_history,
            workspace_long_term_memory: None,
            workspace_short_term_memory: None,
            channel_memories: Vec::new(),
            thread_memories: BTreeMap::new(),
            target_thread_ts: None,
            user_names: BTreeMap::new(),
            people: Vec::new(),
            facts: Vec::new(),
        }
    }

    /// The people of the conversation, in the order they are shown.
    pub fn with_people(mut self, people: Vec<Person>) -> Self {
        self.people = people;
        self
    }

    /// The facts recalled for the conversation, the best first.
    pub fn with_facts(mut self, facts: Vec<String>) -> Self {
        self.facts = facts;
        self
    }

    pub fn people(&self) -> &[Person] {
        &self.people
    }

    pub fn facts(&self) -> &[String] {
        &self.facts
    }

    /// Sets the workspace memories (`None` or blank: none).
    pub fn with_workspace_memories(
        mut self,
        long_term: Option<String>,
        short_term: Option<String>,
    ) -> Self {
        self.workspace_long_term_memory = long_term.filter(|s| !s.trim().is_empty());
        self.workspace_short_term_memory = short_term.filter(|s| !s.trim().is_empty());
        self
    }

    /// Sets the memories of the active channels, in the order they are shown.
    pub fn with_channel_memories(mut self, memories: Vec<ChannelMemory>) -> Self {
        self.channel_memories = memories;
        self
    }

    /// Sets the summaries of recent threads, keyed by their root `ts`.
    pub fn with_thread_memories(mut self, memories: BTreeMap<Ts, String>) -> Self {
        self.thread_memories = memories;
        self
    }

    /// Targets a thread (`Some(root ts)`) or the top level (`None`).
    pub fn with_target_thread(mut self, target: Option<Ts>) -> Self {
        self.target_thread_ts = target;
        self
    }

    /// The names to show for user ids.
    pub fn with_user_names(mut self, names: BTreeMap<UserId, String>) -> Self {
        self.user_names = names;
        self
    }

    /// Says on a shared file's line what became of it ([`ChannelMessages::restate_file`]).
    pub fn restate_file(&mut self, ts: Ts, index: usize, from: FileState, to: FileState) {
        self.conversation_history.restate_file(ts, index, from, to);
    }

    pub fn persona(&self) -> &Persona {
        &self.persona
    }
    pub fn conversation_history(&self) -> &ChannelMessages {
        &self.conversation_history
    }
    pub fn workspace_long_term_memory(&self) -> Option<&str> {
        self.workspace_long_term_memory.as_deref()
    }
    pub fn workspace_short_term_memory(&self) -> Option<&str> {
        self.workspace_short_term_memory.as_deref()
    }
    pub fn channel_memories(&self) -> &[ChannelMemory] {
        &self.channel_memories
    }
    /// The memory of one channel, if it is among the active ones.
    pub fn channel_memory(&self, id: &ChannelId) -> Option<&ChannelMemory> {
        self.channel_memories.iter().find(|m| m.channel_id() == id)
    }
    pub fn thread_memories(&self) -> &BTreeMap<Ts, String> {
        &self.thread_memories
    }
    pub fn target_thread_ts(&self) -> Option<&Ts> {
        self.target_thread_ts.as_ref()
    }
    pub fn user_names(&self) -> &BTreeMap<UserId, String> {
        &self.user_names
    }

    /// The name to show for a user: its known name, else its id.
    pub fn user_name<'a>(&'a self, id: &'a UserId) -> &'a str {
        self.user_names
            .get(id)
            .map(String::as_str)
            .unwrap_or(id.as_str())
    }
}

#[cfg(test)]
mod tests {
    //! The test table of design 04a, "Context".
    use super::*;
    use crate::message::Message;

    fn persona() -> Persona {
        Persona {
            name: "みゃお".into(),
            system_prompt: "猫".into(),
        }
    }

    fn history() -> ChannelMessages {
        let c = ChannelId::parse("C123").unwrap();
        let m = Message::new(
            c.clone(),
            UserId::parse("U1").unwrap(),
            "hi",
            Ts::parse("1.0").unwrap(),
            None,
            false,
        );
        ChannelMessages::new(c, "general", vec![m])
    }

    #[test]
    fn required_fields_only_leave_memories_at_their_defaults() {
        let c = Context::new(persona(), history());
        assert_eq!(c.persona(), &persona());
        assert_eq!(c.conversation_history(), &history());
        assert_eq!(c.workspace_long_term_memory(), None);
        assert_eq!(c.workspace_short_term_memory(), None);
        assert!(c.channel_memories().is_empty());
        assert!(c.thread_memories().is_empty());
        assert_eq!(c.target_thread_ts(), None);
    }

    #[test]
    fn all_fields_are_kept() {
        let ch = ChannelMemory::new(ChannelId::parse("C123").unwrap(), "general")
            .with_memories(Some("l".into()), Some("s".into()));
        let threads = BTreeMap::from([(Ts::parse("1.0").unwrap(), "t".to_owned())]);
        let c = Context::new(persona(), history())
            .with_workspace_memories(Some("wl".into()), Some("ws".into()))
            .with_channel_memories(vec![ch.clone()])
            .with_thread_memories(threads.clone())
            .with_target_thread(Some(Ts::parse("1.0").unwrap()));
        assert_eq!(c.workspace_long_term_memory(), Some("wl"));
        assert_eq!(c.workspace_short_term_memory(), Some("ws"));
        assert_eq!(c.channel_memories(), [ch]);
        assert_eq!(c.thread_memories(), &threads);
        assert_eq!(c.target_thread_ts(), Some(&Ts::parse("1.0").unwrap()));
    }

    #[test]
    fn several_channel_memories_are_kept_in_order() {
        let a = ChannelMemory::new(ChannelId::parse("C1").unwrap(), "general");
        let b = ChannelMemory::new(ChannelId::parse("C2").unwrap(), "random")
            .with_memories(Some("雑談".into()), None);
        let c = Context::new(persona(), history()).with_channel_memories(vec![a, b]);
        let names: Vec<_> = c
            .channel_memories()
            .iter()
            .map(|m| m.channel_name())
            .collect();
        assert_eq!(names, ["general", "random"]);
        assert_eq!(
            c.channel_memory(&ChannelId::parse("C2").unwrap())
                .and_then(|m| m.long_term_memory()),
            Some("雑談")
        );
    }

    #[test]
    fn several_thread_memories_are_kept() {
        let threads = BTreeMap::from([
            (Ts::parse("1234567890.0").unwrap(), "バグ修正".to_owned()),
            (Ts::parse("1234567891.0").unwrap(), "新機能".to_owned()),
        ]);
        let c = Context::new(persona(), history()).with_thread_memories(threads);
        assert_eq!(c.thread_memories().len(), 2);
    }

    #[test]
    fn target_thread_is_kept() {
        let t = Ts::parse("1234567890.0").unwrap();
        let c = Context::new(persona(), history()).with_target_thread(Some(t));
        assert_eq!(c.target_thread_ts(), Some(&t));
    }

    #[test]
    fn unknown_users_show_as_their_id() {
        let u1 = UserId::parse("U1").unwrap();
        let u2 = UserId::parse("U2").unwrap();
        let c = Context::new(persona(), history())
            .with_user_names(BTreeMap::from([(u1.clone(), "alice".to_owned())]));
        assert_eq!(c.user_name(&u1), "alice");
        assert_eq!(c.user_name(&u2), "U2");
    }
}
