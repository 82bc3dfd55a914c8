//! Each workspace's marker words in a replay of several, in a module of
//! their own: the engine beside them keeps them, and should not have to
//! reach back up into the parent to name them.

use std::collections::{BTreeMap, BTreeSet};

use myao_domain::TeamId;
use myao_slack::event::SlackEvent;

use crate::export::Export;
use crate::timeline::{Isolation, Prompt};

/// Each workspace's marker words (`MARK-...` in its messages), and the
/// tally of the prompts made for each.
pub(super) struct Marks {
    pub(super) by_team: BTreeMap<TeamId, BTreeSet<String>>,
    pub(super) tally: Isolation,
}

/// How many examples of a crossing the summary lists.
const CROSSING_EXAMPLES: usize = 5;

/// The marker words of `text`: `MARK-` and at least one letter or digit.
pub(super) fn marker_words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
        .filter(|w| w.starts_with("MARK-") && w.len() > "MARK-".len())
}

impl Marks {
    pub(super) fn of(export: &Export) -> Option<Marks> {
        let teams = export.teams();
        if teams.is_empty() {
            return None;
        }
        let mut by_team: BTreeMap<TeamId, BTreeSet<String>> =
            teams.into_iter().map(|t| (t, BTreeSet::new())).collect();
        for entry in &export.entries {
            let text = match &entry.event {
                SlackEvent::NewMessage { message, .. } => message.text.as_str(),
                SlackEvent::Edited { text, .. } => text.as_str(),
                _ => continue,
            };
            if let Some(words) = entry.team.as_ref().and_then(|t| by_team.get_mut(t)) {
                words.extend(marker_words(text).map(str::to_owned));
            }
        }
        let markers = by_team.values().flatten().collect::<BTreeSet<_>>().len();
        Some(Marks {
            by_team,
            tally: Isolation {
                markers,
                ..Isolation::default()
            },
        })
    }

    /// Counts `prompts`, made for `team`'s job (`None`: the stack's own),
    /// and each that holds a word only another workspace said.
    pub(super) fn count(&mut self, team: Option<&TeamId>, prompts: &[Prompt]) {
        let name = team.map_or_else(|| "(the stack)".to_owned(), ToString::to_string);
        let own = team.and_then(|t| self.by_team.get(t));
        for prompt in prompts {
            *self.tally.prompts.entry(name.clone()).or_insert(0) += 1;
            let foreign = marker_words(&prompt.text).find(|word| {
                own.is_none_or(|own| !own.contains(*word))
                    && self.by_team.values().any(|words| words.contains(*word))
            });
            if let Some(word) = foreign {
                self.tally.crossing += 1;
                if self.tally.examples.len() < CROSSING_EXAMPLES {
                    self.tally
                        .examples
                        .push((prompt.number, name.clone(), word.to_owned()));
                }
            }
        }
    }
}
