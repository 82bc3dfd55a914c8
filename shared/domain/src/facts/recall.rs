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
/// unrelated texts (e5's reach 0.83 between a fact and talk about something
/// else, Japanese higher than English), so the scale starts where
/// relatedness does.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ByMeaning {
    pub unlike: f64,
    pub alike: f64,
}

impl ByMeaning {
    /// The bundled embedder's scale (multilingual-e5-small), chosen on the
    /// recall benchmark's tuning set for at most one unrelated thread in 20
    /// given a fact (`cargo bench -p myao-local --bench meaning`).
    pub const E5: ByMeaning = ByMeaning {
        unlike: 0.83,
        alike: 0.90,
    };

    /// A provider's model's scale: a guess at where the cosines of related
    /// texts begin for models such as OpenAI's text-embedding-3, not
    /// measured (no provider is reached from the benchmark).
    pub const PROVIDER: ByMeaning = ByMeaning {
        unlike: 0.40,
        alike: 0.70,
    };

    /// The scale of `model`'s cosines: [`ByMeaning::E5`] for the bundled
    /// model (`multilingual-e5-…`), else [`ByMeaning::PROVIDER`].
    pub fn of_model(model: &str) -> ByMeaning {
        if model.starts_with("multilingual-e5") {
            ByMeaning::E5
        } else {
            ByMeaning::PROVIDER
        }
    }

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{ChannelId, Ts, UserId};

    fn unit(v: &[f32]) -> Vec<f32> {
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.iter().map(|x| x / n).collect()
    }

    fn fact(id: &str, text: &str, meaning: Option<Meaning>) -> Fact {
        Fact {
            id: id.into(),
            channel: ChannelId::parse("C1").unwrap(),
            subject: "Tom".into(),
            text: text.into(),
            keywords: vec!["bread".into()],
            cues: vec![],
            importance: 5,
            shareable: false,
            sources: vec![Ts::parse("1767600000.000100").unwrap()],
            speakers: vec![UserId::parse("UTOM").unwrap()],
            about: None,
            written_at: DateTime::from_timestamp(1_767_600_000, 0).unwrap(),
            outdated: false,
            meaning,
        }
    }

    /// Meaning recalls a fact that shares no word with the conversation;
    /// a cosine at or below the scale's start, another model's vector or
    /// none leave it to the words; meaning and words add up.
    #[test]
    fn meaning_recalls_what_words_miss_and_only_above_its_scale() {
        let how = Recall {
            half_life: Duration::days(30),
            floor: 0.04,
            top: 3,
            meaning: ByMeaning {
                unlike: 0.5,
                alike: 1.0,
            },
        };
        let near = Meaning::of("m", &unit(&[1.0, 0.2, 0.0]));
        let far = Meaning::of("m", &unit(&[0.2, 1.0, 0.0]));
        let query_meaning = Meaning::of("m", &unit(&[1.0, 0.0, 0.0]));
        let facts = vec![
            fact("near", "Tom bakes bread every Sunday.", Some(near.clone())),
            fact("far", "Tom collects stamps.", Some(far)),
            fact(
                "other-model",
                "Tom keeps bees.",
                Some(Meaning::of("n", &unit(&[1.0, 0.0, 0.0]))),
            ),
            fact("none", "Tom grew up in Lisbon.", None),
        ];
        let query = Recalling {
            words: tokens("who knows their way around a sourdough starter?"),
            names: BTreeSet::new(),
            meaning: Some(query_meaning),
        };
        let now = facts[0].written_at + Duration::days(1);
        let found: Vec<&str> = recall(&facts, &query, now, how)
            .iter()
            .map(|(f, _)| f.id.as_str())
            .collect();
        assert_eq!(found, ["near"]);

        // No meaning of the conversation: the words alone, which miss it.
        let words_only = Recalling {
            meaning: None,
            ..query.clone()
        };
        assert!(recall(&facts, &words_only, now, how).is_empty());

        // Words and meaning add up: a shared keyword ranks it higher.
        let with_word = Recalling {
            words: tokens("any bread bakers here?"),
            ..query
        };
        let both = recall(&facts, &with_word, now, how);
        let alone = recall(
            &facts[..1],
            &Recalling {
                words: BTreeSet::new(),
                ..with_word.clone()
            },
            now,
            how,
        );
        assert!(both[0].1 > alone[0].1, "{both:?} vs {alone:?}");
    }

    #[test]
    fn the_scale_is_the_models() {
        assert_eq!(
            ByMeaning::of_model("multilingual-e5-small-q4"),
            ByMeaning::E5
        );
        assert_eq!(
            ByMeaning::of_model("text-embedding-3-small"),
            ByMeaning::PROVIDER
        );
    }

    #[test]
    fn the_scale_starts_at_unlike_and_ends_at_alike() {
        let scale = ByMeaning::E5;
        assert_eq!(scale.score(0.5), 0.0);
        assert_eq!(scale.score(scale.unlike), 0.0);
        assert_eq!(scale.score(1.0), 1.0);
        let mid = scale.score((scale.unlike + scale.alike) / 2.0);
        assert!((mid - 0.5).abs() < 1e-9);
    }
}
