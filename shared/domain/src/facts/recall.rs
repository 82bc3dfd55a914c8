//! Recall: the facts a conversation calls up, by its words and names and,
//! where an embedder is there, by what it means.

use std::collections::BTreeSet;

use chrono::{DateTime, Duration, Utc};

use super::words::{fact_words, similarity, tokens, wide};
use super::{strength, Fact};
use crate::meaning::Meaning;

/// How recall scores and chooses facts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Recall {
    pub half_life: Duration,
    /// The least score a recalled fact has.
    pub floor: f64,
    /// How many facts a prompt gets at most.
    pub top: usize,
    /// How a likeness of meaning counts, where the conversation and the
    /// fact both have one.
    pub meaning: ByMeaning,
}

/// How a cosine of meaning becomes a score: nothing at or below `unlike`,
/// rising to 1 at `alike`. An embedder's cosines do not start at 0 for
/// unrelated texts (e5's sit around 0.75 to 0.8), so the scale starts
/// where relatedness does.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ByMeaning {
    pub unlike: f64,
    pub alike: f64,
}

impl ByMeaning {
    /// The bundled embedder's scale (multilingual-e5-small), from the
    /// recall benchmark's tuning set (`cargo bench -p myao-local --bench
    /// meaning`).
    pub const E5: ByMeaning = ByMeaning {
        unlike: 0.83,
        alike: 0.90,
    };

    /// The score of cosine `c`, from 0 to 1.
    pub fn score(self, c: f64) -> f64 {
        ((c - self.unlike) / (self.alike - self.unlike).max(f64::EPSILON)).clamp(0.0, 1.0)
    }
}

/// A conversation's side of recall: its newest words, the names among them,
/// and what they mean (when an embedder was there to tell).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Recalling {
    pub words: BTreeSet<String>,
    pub names: BTreeSet<String>,
    pub meaning: Option<Meaning>,
}

/// The facts worth recalling for a conversation, best first: (the
/// similarity of their words + the score of the likeness of their
/// meanings) x strength, at least `floor`, at most `top`; outdated facts
/// never. Without meanings (no embedder, a fact not yet embedded, another
/// model's vector) the words alone decide, as they did before.
///
/// A fact's keywords in Japanese (and other scripts without spaces) weigh
/// as names in its match: reflection picks keywords as names, places and
/// things, and those scripts have no capitals for
/// [`super::proper_nouns`] to tell a name by. Latin keywords do not
/// ("red", "move" would call facts up from any chatter).
pub fn recall<'a>(
    facts: &'a [Fact],
    query: &Recalling,
    now: DateTime<Utc>,
    how: Recall,
) -> Vec<(&'a Fact, f64)> {
    let mut scored: Vec<(&Fact, f64)> = facts
        .iter()
        .filter(|f| !f.outdated)
        .map(|f| {
            let mut weighty = query.names.clone();
            weighty.extend(
                f.keywords
                    .iter()
                    .flat_map(|k| tokens(k))
                    .filter(|t| t.chars().any(wide)),
            );
            let words = similarity(&query.words, &fact_words(f), &weighty);
            let meant = match (&query.meaning, &f.meaning) {
                (Some(q), Some(m)) => q.likeness(m).map_or(0.0, |c| how.meaning.score(c)),
                _ => 0.0,
            };
            (f, (words + meant) * strength(f, now, how.half_life))
        })
        .filter(|(_, s)| *s >= how.floor && *s > 0.0)
        .collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.id.cmp(&b.0.id)));
    scored.truncate(how.top);
    scored
}
