//! Recall: the facts a conversation calls up, by its words and names and,
//! where an embedder is there, by what it means.

use std::collections::BTreeSet;

use chrono::{DateTime, Duration, Utc};

use super::fact::{strength, Fact};
use super::words::{fact_words, proper_nouns, similarity, tokens, wide, Script};
use crate::meaning::Meaning;
use crate::text::without_marks;

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

/// How a cosine of meaning becomes a score: nothing at or below where
/// relatedness begins, rising to 1 `span` above it. An embedder's cosines
/// do not start at 0 for unrelated texts (the bundled model's reach 0.25
/// between a fact and talk about something else, multilingual-e5's 0.83),
/// and for some models where they start depends on how the two texts are
/// written (for e5, Japanese sits higher with Japanese than English with
/// English). So the start can be kept per pair of [`Script`]s, the
/// conversation's and the fact's.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ByMeaning {
    pub unlike: Unlike,
    pub span: f64,
    /// A second model's part of the vector, where the embedder keeps two
    /// side by side.
    pub second: Option<Second>,
    /// The starts for a fact with no cues, whose vector is of its sentence
    /// ([`super::passage`]): a sentence sits nearer unrelated talk than a
    /// list of cues does. `None`: the same as for a fact with cues.
    pub sentence: Option<Starts>,
}

/// Where relatedness begins for each model, the same for every pair of
/// scripts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Starts {
    pub first: f64,
    pub second: f64,
}

/// A second model's part of a vector, for English: its dimensions from
/// `at` on (the bundled embedder's English model, of a text's Latin words;
/// zeros for a text with none). For English talk and an English fact
/// ([`Script::Spaced`] both) the pair's score is the mean of the two
/// parts' margins, each its cosine less its start over its span, so that
/// one model's doubt weighs against the other's likeness; for every other
/// pair, the first part's alone. (Other languages written with spaces
/// count as English here: the second model then reads only their Latin
/// words, or none, and a text with none has no part to compare.)
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Second {
    pub at: usize,
    /// Where relatedness begins for its cosines.
    pub unlike: f64,
    pub span: f64,
}

/// Where relatedness begins, by the scripts of a conversation and a fact.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Unlike {
    /// Both spaced (English).
    pub spaced: f64,
    /// Both wide (Japanese).
    pub wide: f64,
    /// A spaced conversation, a wide fact.
    pub spaced_on_wide: f64,
    /// A wide conversation, a spaced fact.
    pub wide_on_spaced: f64,
}

impl Unlike {
    /// The same start for every pair.
    pub const fn even(at: f64) -> Unlike {
        Unlike {
            spaced: at,
            wide: at,
            spaced_on_wide: at,
            wide_on_spaced: at,
        }
    }

    /// The start for a `talk` conversation and a `fact`.
    pub fn of(self, talk: Script, fact: Script) -> f64 {
        match (talk, fact) {
            (Script::Spaced, Script::Spaced) => self.spaced,
            (Script::Wide, Script::Wide) => self.wide,
            (Script::Spaced, Script::Wide) => self.spaced_on_wide,
            (Script::Wide, Script::Spaced) => self.wide_on_spaced,
        }
    }
}

impl ByMeaning {
    /// The bundled embedder's scale: the Universal Sentence Encoder,
    /// multilingual v3 (its 512 dimensions first), and all-MiniLM-L6-v2
    /// for English talk and an English fact (its 384 after). A fact's
    /// vector is of its cues. The two starts are the middle of those, in
    /// hundredths, that find the most of the recall benchmark's tuning
    /// allusions while at most one of its 20 tuning controls gets a fact
    /// (`cargo bench -p myao-local --bench meaning`, docs/performance.md).
    /// The first model's cosines between unrelated texts sit near 0.1 to
    /// 0.25 whatever the scripts, so one start for every pair: a start per
    /// pair, fitted to 20 controls, let more of the held-out set's through.
    /// A fact with no cues (stored before facts had them) starts later:
    /// the lowest starts tried at which its meaning alone brings at most
    /// one of those controls a fact.
    pub const BUNDLED: ByMeaning = ByMeaning {
        unlike: Unlike::even(0.23),
        span: 0.15,
        second: Some(Second {
            at: 512,
            unlike: 0.09,
            span: 0.15,
        }),
        sentence: Some(Starts {
            first: 0.29,
            second: 0.26,
        }),
    };

    /// The scale of the bundled embedder's first model alone, as it was
    /// before the second (a fact's vector of its sentence and cues).
    pub const BUNDLED_FIRST: ByMeaning = ByMeaning {
        unlike: Unlike::even(0.22),
        span: 0.15,
        second: None,
        sentence: None,
    };

    /// A provider's model's scale: a guess at where the cosines of related
    /// texts begin for models such as OpenAI's text-embedding-3, not
    /// measured (no provider is reached from the benchmark).
    pub const PROVIDER: ByMeaning = ByMeaning {
        unlike: Unlike::even(0.40),
        span: 0.30,
        second: None,
        sentence: None,
    };

    /// The scale of `model`'s cosines: [`ByMeaning::BUNDLED`] for the
    /// bundled models with facts embedded by their cues
    /// (`use-multilingual-3+all-minilm-l6-v2/cues`),
    /// [`ByMeaning::BUNDLED_FIRST`] for the first alone
    /// (`use-multilingual-3`), else [`ByMeaning::PROVIDER`].
    pub fn of_model(model: &str) -> ByMeaning {
        match model {
            BUNDLED_MODEL => ByMeaning::BUNDLED,
            "use-multilingual-3" => ByMeaning::BUNDLED_FIRST,
            _ => ByMeaning::PROVIDER,
        }
    }

    /// The scale for `fact`: with [`ByMeaning::sentence`]'s starts when it
    /// has no cues.
    pub fn for_fact(self, fact: &Fact) -> ByMeaning {
        match self.sentence {
            Some(s) if fact.cues.is_empty() => ByMeaning {
                unlike: Unlike::even(s.first),
                second: self.second.map(|second| Second {
                    unlike: s.second,
                    ..second
                }),
                ..self
            },
            _ => self,
        }
    }

    /// The score of cosine `c` between a `talk` conversation and a `fact`,
    /// from 0 to 1 (on the first part's scale).
    pub fn score(self, c: f64, talk: Script, fact: Script) -> f64 {
        margin(c, self.unlike.of(talk, fact), self.span).clamp(0.0, 1.0)
    }

    /// The score of the likeness of a `talk` conversation's meaning `q` and
    /// a `fact`'s meaning `m`, from 0 to 1; 0 when they cannot be compared
    /// (another model's, or zeros).
    pub fn score_of(self, q: &Meaning, m: &Meaning, talk: Script, fact: Script) -> f64 {
        let Some(second) = self.second else {
            return q.likeness(m).map_or(0.0, |c| self.score(c, talk, fact));
        };
        let Some(first) = q.likeness_in(m, 0..second.at) else {
            return 0.0;
        };
        let first = margin(first, self.unlike.of(talk, fact), self.span);
        let english = (talk, fact) == (Script::Spaced, Script::Spaced);
        let score = match q.likeness_in(m, second.at..q.len()).filter(|_| english) {
            Some(c) => (first + margin(c, second.unlike, second.span)) / 2.0,
            None => first,
        };
        score.clamp(0.0, 1.0)
    }
}

/// How far cosine `c` is past `unlike`, in `span`s.
fn margin(c: f64, unlike: f64, span: f64) -> f64 {
    (c - unlike) / span.max(f64::EPSILON)
}

/// The bundled embedder's models' name, as it stores it with a vector:
/// the models, and that a fact's vector is of its cues (`/cues`). Vectors
/// stored under an older name (a fact's sentence and cues together, or
/// the first model alone) compare with none of its own: the memory job
/// embeds those facts again.
pub const BUNDLED_MODEL: &str = "use-multilingual-3+all-minilm-l6-v2/cues";

/// A conversation's side of recall: its newest words, the names among them,
/// how they are written and what they mean (when an embedder was there to
/// tell).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Recalling {
    pub words: BTreeSet<String>,
    pub names: BTreeSet<String>,
    pub script: Script,
    pub meaning: Option<Meaning>,
}

impl Recalling {
    /// `text`'s side of recall, `people` the names of those in it.
    pub fn of(text: &str, people: &[&str], meaning: Option<Meaning>) -> Recalling {
        Recalling {
            words: tokens(text),
            names: proper_nouns(text, people),
            script: Script::of(&without_marks(text)),
            meaning,
        }
    }
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
                (Some(q), Some(m)) => {
                    how.meaning
                        .for_fact(f)
                        .score_of(q, m, query.script, Script::of(&f.text))
                }
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
                unlike: Unlike::even(0.5),
                span: 0.5,
                second: None,
                sentence: None,
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
        let query = Recalling::of(
            "who knows their way around a sourdough starter?",
            &[],
            Some(query_meaning),
        );
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
        assert_eq!(ByMeaning::of_model(BUNDLED_MODEL), ByMeaning::BUNDLED);
        assert_eq!(
            ByMeaning::of_model("use-multilingual-3"),
            ByMeaning::BUNDLED_FIRST
        );
        assert_eq!(
            ByMeaning::of_model("text-embedding-3-small"),
            ByMeaning::PROVIDER
        );
    }

    /// A fact with no cues, whose vector is of its sentence, is scored
    /// from the sentence's starts; one with cues, and any fact on a scale
    /// without them, from the scale's own. In recall, the same cosine
    /// brings the fact with cues and leaves the one without.
    #[test]
    fn a_fact_without_cues_starts_where_a_sentence_does() {
        let scale = ByMeaning {
            unlike: Unlike::even(0.2),
            span: 0.2,
            second: Some(Second {
                at: 2,
                unlike: 0.1,
                span: 0.2,
            }),
            sentence: Some(Starts {
                first: 0.5,
                second: 0.6,
            }),
        };
        let mut cued = fact("cued", "Tom keeps bees.", None);
        cued.cues = vec!["honey".into()];
        let plain = fact("plain", "Tom keeps bees.", None);
        assert_eq!(scale.for_fact(&cued), scale);
        let of_sentence = scale.for_fact(&plain);
        assert_eq!(of_sentence.unlike, Unlike::even(0.5));
        assert_eq!(
            of_sentence.second.map(|s| (s.at, s.unlike, s.span)),
            Some((2, 0.6, 0.2))
        );
        let without = ByMeaning {
            sentence: None,
            ..scale
        };
        assert_eq!(without.for_fact(&plain), without);

        // Cosine about 0.4 on both parts: past the cues' starts, short of the
        // sentence's.
        let v = [0.4f32, 0.916_515, 0.4, 0.916_515];
        let m = Meaning::of("m", &v);
        let q = Meaning::of("m", &[1.0, 0.0, 1.0, 0.0]);
        cued.meaning = Some(m.clone());
        cued.keywords.clear();
        let mut plain = plain;
        plain.meaning = Some(m);
        plain.keywords.clear();
        let how = Recall {
            half_life: Duration::days(30),
            floor: 0.04,
            top: 3,
            meaning: scale,
        };
        let query = Recalling::of("anyone tried making mead?", &[], Some(q));
        let now = cued.written_at + Duration::days(1);
        let facts = [cued, plain];
        let found: Vec<&str> = recall(&facts, &query, now, how)
            .iter()
            .map(|(f, _)| f.id.as_str())
            .collect();
        assert_eq!(found, ["cued"]);
    }

    #[test]
    fn the_scale_starts_where_relatedness_does_and_spans_to_full() {
        let scale = ByMeaning::BUNDLED;
        let en = Script::Spaced;
        assert_eq!(scale.score(scale.unlike.spaced - 0.1, en, en), 0.0);
        assert_eq!(scale.score(scale.unlike.spaced, en, en), 0.0);
        assert_eq!(scale.score(1.0, en, en), 1.0);
        let mid = scale.score(scale.unlike.spaced + scale.span / 2.0, en, en);
        assert!((mid - 0.5).abs() < 1e-9);
    }

    #[test]
    fn a_text_is_wide_when_a_third_of_its_letters_are() {
        assert_eq!(Script::of("Tom bakes bread every Sunday."), Script::Spaced);
        assert_eq!(Script::of("実家は新潟です"), Script::Wide);
        assert_eq!(Script::of("Kubernetesのクラスタが落ちた"), Script::Wide);
        assert_eq!(
            Script::of("I had ラーメン for lunch today at the station"),
            Script::Spaced
        );
        assert_eq!(Script::of("👍 42"), Script::Spaced);
        // Slack's marks are not words: a short Japanese line with a link.
        let linked = "これ見て <https://example.com/a/very/long/path|link>";
        assert_eq!(
            Recalling::of(linked, &[], None).script,
            Script::Wide,
            "{linked}"
        );
    }

    /// With a second model's part, English talk with an English fact scores
    /// the mean of the two parts' margins; a pair where one side's part is zeros, or
    /// one side is Japanese, scores the first part alone; another model's
    /// vector nothing.
    #[test]
    fn a_second_part_counts_only_where_both_texts_have_it() {
        let scale = ByMeaning {
            unlike: Unlike::even(0.0),
            span: 1.0,
            second: Some(Second {
                at: 2,
                unlike: 0.5,
                span: 0.5,
            }),
            sentence: None,
        };
        let s = 0.5f32.sqrt();
        let talk = Meaning::of("m", &[1.0, 0.0, 1.0, 0.0]);
        let same_second = Meaning::of("m", &[s, s, 1.0, 0.0]);
        let no_second = Meaning::of("m", &[s, s, 0.0, 0.0]);
        let en = Script::Spaced;
        // First: cos 0.71, scored 0.71; second: cos 1, scored 1.
        let both = scale.score_of(&talk, &same_second, en, en);
        assert!(
            (both - (std::f64::consts::FRAC_1_SQRT_2 + 1.0) / 2.0).abs() < 0.01,
            "{both}"
        );
        let first = scale.score_of(&talk, &no_second, en, en);
        assert!(
            (first - std::f64::consts::FRAC_1_SQRT_2).abs() < 0.01,
            "{first}"
        );
        // The second model's cosine of 0 is a margin of -1: with the
        // first's 0.71, the pair is unrelated.
        let doubted = Meaning::of("m", &[s, s, 0.0, 1.0]);
        assert_eq!(scale.score_of(&talk, &doubted, en, en), 0.0);
        for (talk_script, fact_script) in [(en, Script::Wide), (Script::Wide, en)] {
            let first = scale.score_of(&talk, &same_second, talk_script, fact_script);
            assert!(
                (first - std::f64::consts::FRAC_1_SQRT_2).abs() < 0.01,
                "{first}"
            );
        }
        let other = Meaning::of("n", &[1.0, 0.0, 1.0, 0.0]);
        assert_eq!(scale.score_of(&talk, &other, en, en), 0.0);
    }

    /// Japanese talk about a Japanese fact starts higher than English
    /// about English: the same cosine is related for one pair and not for
    /// the other.
    #[test]
    fn where_relatedness_begins_is_the_scripts_pairs() {
        let scale = ByMeaning {
            unlike: Unlike {
                spaced: 0.82,
                wide: 0.84,
                spaced_on_wide: 0.80,
                wide_on_spaced: 0.83,
            },
            span: 0.07,
            second: None,
            sentence: None,
        };
        let (en, ja) = (Script::Spaced, Script::Wide);
        assert_eq!(scale.unlike.of(en, en), scale.unlike.spaced);
        assert_eq!(scale.unlike.of(ja, ja), scale.unlike.wide);
        assert_eq!(scale.unlike.of(en, ja), scale.unlike.spaced_on_wide);
        assert_eq!(scale.unlike.of(ja, en), scale.unlike.wide_on_spaced);
        let c = (scale.unlike.spaced + scale.unlike.wide) / 2.0;
        assert!(scale.score(c, en, en) > 0.0);
        assert_eq!(scale.score(c, ja, ja), 0.0);
    }
}
