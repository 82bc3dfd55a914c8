//! The recent messages of one channel, split into the top level and threads.

use std::collections::BTreeMap;

use super::files::{self, FileState};
use super::ids::{ChannelId, Ts};
use super::message::Message;

/// The messages of a channel: the top level (thread roots included) and a
/// map from each thread's root `ts` to its replies, everything in time order.
///
/// Built once and then only read:
///
/// ```compile_fail
/// use myao_domain::{ChannelId, ChannelMessages};
/// let cm = ChannelMessages::new(ChannelId::parse("C1").unwrap(), "general", vec![]);
/// cm.top_level_messages.clear(); // the fields are private: no mutation
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChannelMessages {
    channel_id: ChannelId,
    channel_name: String,
    top_level_messages: Vec<Message>,
    thread_messages: BTreeMap<Ts, Vec<Message>>,
}

impl ChannelMessages {
    /// Classifies `messages` (in any order, possibly with duplicates):
    /// replies go to their thread, everything else to the top level. A root
    /// that Slack marked with `thread_ts == ts` is a top-level message, so a
    /// thread's parent is added to the top level whenever it is among the
    /// messages, even when it came with its thread.
    pub fn new(
        channel_id: ChannelId,
        channel_name: impl Into<String>,
        messages: impl IntoIterator<Item = Message>,
    ) -> ChannelMessages {
        let mut top: BTreeMap<Ts, Message> = BTreeMap::new();
        let mut threads: BTreeMap<Ts, BTreeMap<Ts, Message>> = BTreeMap::new();
        for m in messages {
            match m.thread_ts.filter(|root| *root != m.ts) {
                Some(root) => {
                    threads.entry(root).or_default().insert(m.ts, m);
                }
                None => {
                    top.insert(m.ts, m);
                }
            }
        }
        ChannelMessages {
            channel_id,
            channel_name: channel_name.into(),
            top_level_messages: top.into_values().collect(),
            thread_messages: threads
                .into_iter()
                .map(|(root, replies)| (root, replies.into_values().collect()))
                .collect(),
        }
    }

    pub fn channel_id(&self) -> &ChannelId {
        &self.channel_id
    }

    pub fn channel_name(&self) -> &str {
        &self.channel_name
    }

    /// Top-level messages in time order, thread roots included.
    pub fn top_level_messages(&self) -> &[Message] {
        &self.top_level_messages
    }

    /// Each thread's replies in time order, keyed by the root's `ts`.
    pub fn thread_messages(&self) -> &BTreeMap<Ts, Vec<Message>> {
        &self.thread_messages
    }

    /// Every message in time order.
    pub fn get_all_messages(&self) -> Vec<&Message> {
        let mut all: Vec<&Message> = self
            .top_level_messages
            .iter()
            .chain(self.thread_messages.values().flatten())
            .collect();
        all.sort_by_key(|m| m.ts);
        all
    }

    /// The replies of the thread rooted at `thread_ts`; empty if there is none.
    pub fn get_thread(&self, thread_ts: &Ts) -> &[Message] {
        self.thread_messages
            .get(thread_ts)
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }

    /// The root of a thread, when it is among the messages.
    pub fn thread_root(&self, thread_ts: &Ts) -> Option<&Message> {
        self.top_level_messages
            .binary_search_by_key(thread_ts, |m| m.ts)
            .ok()
            .map(|i| &self.top_level_messages[i])
    }

    /// The number of threads.
    pub fn thread_count(&self) -> usize {
        self.thread_messages.len()
    }

    /// The messages of the conversation `thread` (the root and its replies),
    /// or of the top level for `None`, in time order.
    pub fn conversation(&self, thread: Option<&Ts>) -> Vec<&Message> {
        match thread {
            Some(root) => self
                .thread_root(root)
                .into_iter()
                .chain(self.get_thread(root))
                .collect(),
            None => self.top_level_messages.iter().collect(),
        }
    }

    /// Says on the line of the `index`th file of the message `ts` what
    /// became of it when a reply opened it: `to`, where it said `from`
    /// ([`files::restate`]).
    pub fn restate_file(&mut self, ts: Ts, index: usize, from: FileState, to: FileState) {
        let message = self
            .top_level_messages
            .iter_mut()
            .chain(self.thread_messages.values_mut().flatten())
            .find(|m| m.ts == ts);
        if let Some(message) = message {
            if let Some(file) = message.files.get(index) {
                message.text = files::restate(&message.text, file, from, to);
            }
        }
    }

    /// The number of messages, top level and threads together.
    pub fn total_message_count(&self) -> usize {
        self.top_level_messages.len() + self.thread_messages.values().map(Vec::len).sum::<usize>()
    }
}

#[cfg(test)]
mod tests {
    //! The test table of design 04a, "ChannelMessages".
    use super::*;
    use crate::ids::UserId;

    fn ts(s: &str) -> Ts {
        Ts::parse(s).unwrap()
    }

    fn msg(t: &str, thread: Option<&str>) -> Message {
        Message::new(
            ChannelId::parse("C123").unwrap(),
            UserId::parse("U1").unwrap(),
            format!("message {t}"),
            ts(t),
            thread.map(ts),
            false,
        )
    }

    fn general(messages: Vec<Message>) -> ChannelMessages {
        ChannelMessages::new(ChannelId::parse("C123").unwrap(), "general", messages)
    }

    fn texts(ms: &[Message]) -> Vec<&str> {
        ms.iter().map(|m| m.text.as_str()).collect()
    }

    #[test]
    fn empty_instance_has_empty_collections() {
        let cm = general(vec![]);
        assert_eq!(cm.channel_id().as_str(), "C123");
        assert_eq!(cm.channel_name(), "general");
        assert!(cm.top_level_messages().is_empty());
        assert!(cm.thread_messages().is_empty());
        assert_eq!(cm.total_message_count(), 0);
    }

    #[test]
    fn top_level_only_leaves_threads_empty() {
        let cm = general(vec![msg("1.0", None), msg("2.0", None)]);
        assert_eq!(cm.top_level_messages().len(), 2);
        assert!(cm.thread_messages().is_empty());
    }

    #[test]
    fn threads_only_leave_the_top_level_empty() {
        let cm = general(vec![msg("2.0", Some("1.0")), msg("3.0", Some("1.0"))]);
        assert!(cm.top_level_messages().is_empty());
        assert_eq!(cm.thread_messages().len(), 1);
        assert_eq!(
            texts(cm.get_thread(&ts("1.0"))),
            ["message 2.0", "message 3.0"]
        );
    }

    #[test]
    fn mixed_sets_both() {
        let cm = general(vec![msg("1.0", None), msg("2.0", Some("1.0"))]);
        assert_eq!(texts(cm.top_level_messages()), ["message 1.0"]);
        assert_eq!(texts(cm.get_thread(&ts("1.0"))), ["message 2.0"]);
    }

    #[test]
    fn get_all_messages_is_in_time_order() {
        let cm = general(vec![
            msg("5.0", None),
            msg("2.0", Some("1.0")),
            msg("1.0", None),
            msg("4.0", Some("1.0")),
            msg("3.0", None),
            msg("10.0", Some("3.0")),
        ]);
        let order: Vec<String> = cm
            .get_all_messages()
            .iter()
            .map(|m| m.ts.to_string())
            .collect();
        assert_eq!(
            order,
            [
                "1.000000",
                "2.000000",
                "3.000000",
                "4.000000",
                "5.000000",
                "10.000000"
            ]
        );
    }

    #[test]
    fn get_thread_of_an_existing_thread_returns_its_messages() {
        let cm = general(vec![msg("1.0", None), msg("2.0", Some("1.0"))]);
        assert_eq!(cm.get_thread(&ts("1.0")).len(), 1);
    }

    #[test]
    fn get_thread_of_a_missing_thread_is_empty() {
        let cm = general(vec![msg("1.0", None)]);
        assert!(cm.get_thread(&ts("9.0")).is_empty());
    }

    #[test]
    fn thread_count_counts_threads() {
        let cm = general(vec![
            msg("2.0", Some("1.0")),
            msg("4.0", Some("3.0")),
            msg("5.0", Some("3.0")),
        ]);
        assert_eq!(cm.thread_count(), 2);
    }

    #[test]
    fn total_message_count_adds_top_level_and_threads() {
        let cm = general(vec![
            msg("1.0", None),
            msg("2.0", Some("1.0")),
            msg("3.0", Some("1.0")),
            msg("4.0", None),
        ]);
        assert_eq!(cm.total_message_count(), 4);
    }

    #[test]
    fn a_parent_missing_from_the_top_level_is_added_to_it() {
        // Slack marks a root with thread_ts == ts; it still belongs to the top level.
        let mut root = msg("1.0", None);
        root.thread_ts = Some(ts("1.0"));
        let cm = general(vec![msg("2.0", Some("1.0")), root]);
        assert_eq!(texts(cm.top_level_messages()), ["message 1.0"]);
        assert_eq!(cm.thread_root(&ts("1.0")).map(|m| m.ts), Some(ts("1.0")));
        assert_eq!(texts(cm.get_thread(&ts("1.0"))), ["message 2.0"]);
    }

    #[test]
    fn duplicates_are_kept_once() {
        let cm = general(vec![msg("1.0", None), msg("1.0", None)]);
        assert_eq!(cm.total_message_count(), 1);
    }
}
