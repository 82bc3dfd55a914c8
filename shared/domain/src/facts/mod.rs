//! Facts: what the bot remembers in detail, one sentence each, written by
//! reflection after a conversation goes quiet, and recalled when a later
//! conversation's words match (the Discord design's fact memory: keyword
//! Jaccard x decay with a 30-day half-life, dropped below 0.05).
//!
//! A fact belongs to the channel it was said in, and is recalled there only.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Duration, Utc};
use serde_json::Value;

use super::ids::{ChannelId, Ts, UserId};
use super::judgment::first_object;

mod fact;
mod recall;
mod words;

pub use fact::{strength, Fact, MAX_IMPORTANCE};
pub use recall::{recall, ByMeaning, Recall, Recalling, Second, Starts, Unlike, BUNDLED_MODEL};
pub use words::{fact_words, proper_nouns, similarity, tokens, Script, NAME_WEIGHT};

/// The facts a channel keeps: those at or above the cleanup `floor` of
/// strength, the `max` strongest (outdated ones first to go). The ids of
/// those to delete.
pub fn cleanup(
    facts: &[Fact],
    now: DateTime<Utc>,
    half_life: Duration,
    floor: f64,
    max: usize,
) -> Vec<String> {
    let mut kept: Vec<(&Fact, f64)> = Vec::new();
    let mut gone = Vec::new();
    for f in facts {
        let s = strength(f, now, half_life);
        if s < floor {
            gone.push(f.id.clone());
        } else {
            kept.push((f, if f.outdated { s / 10.0 } else { s }));
        }
    }
    kept.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.id.cmp(&b.0.id)));
    gone.extend(kept.iter().skip(max).map(|(f, _)| f.id.clone()));
    gone
}

/// How alike two facts' keywords must be, on the same subject, for the
/// newer to replace the older.
pub const SAME_FACT: f64 = 0.5;

/// The live fact that `new` updates: same subject (case aside) and
/// keywords at least [`SAME_FACT`] alike.
pub fn superseded<'a>(existing: &'a [Fact], new: &NewFact) -> Option<&'a Fact> {
    let words: BTreeSet<String> = new.keywords.iter().flat_map(|k| tokens(k)).collect();
    existing
        .iter()
        .filter(|f| !f.outdated && f.subject.trim().eq_ignore_ascii_case(new.subject.trim()))
        .map(|f| {
            let theirs: BTreeSet<String> = f.keywords.iter().flat_map(|k| tokens(k)).collect();
            (f, similarity(&words, &theirs, &BTreeSet::new()))
        })
        .filter(|(_, s)| *s >= SAME_FACT)
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(f, _)| f)
}

/// A fact as reflection writes it, before it is stored.
#[derive(Debug, Clone, PartialEq)]
pub struct NewFact {
    pub subject: String,
    pub text: String,
    pub keywords: Vec<String>,
    pub cues: Vec<String>,
    pub importance: u8,
    pub shareable: bool,
    pub sources: Vec<Ts>,
    pub speakers: Vec<UserId>,
    pub about: Option<UserId>,
}

impl NewFact {
    /// The text of it that is embedded, as [`passage`] makes it.
    pub fn passage(&self) -> String {
        passage_of(&self.text, &self.cues)
    }

    /// The fact, stored in `channel` as `id` at `now`.
    pub fn stored(self, id: String, channel: ChannelId, now: DateTime<Utc>) -> Fact {
        Fact {
            id,
            channel,
            subject: self.subject,
            text: self.text,
            keywords: self.keywords,
            cues: self.cues,
            importance: self.importance,
            shareable: self.shareable,
            sources: self.sources,
            speakers: self.speakers,
            about: self.about,
            written_at: now,
            outdated: false,
            meaning: None,
        }
    }
}

/// Why a reflection's answer wrote nothing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReflectionError {
    #[error("the answer is not a JSON object with a `facts` list")]
    NotFacts,
    #[error("fact {0}: {1}")]
    BadFact(usize, &'static str),
}

/// The most facts one reflection may write.
pub const MAX_FACTS_PER_REFLECTION: usize = 10;
/// The longest fact sentence kept, in characters.
const MAX_FACT_CHARS: usize = 300;

/// Reads a reflection's answer, strictly: `{"facts": [{"subject", "fact",
/// "keywords", "importance", "shareable", "sources"}]}`, where each source is
/// the number of a message shown to it (`messages`, from 1). Anything out
/// of shape refuses the whole answer: a half-understood answer writes
/// nothing. Speakers are those of the sources, not what the model says.
/// `cues` and `about` may be missing: `about` is the name of one of
/// `people` (the names the prompt showed), else no one.
pub fn parse_reflection(
    answer: &str,
    messages: &[(Ts, UserId)],
    people: &[(UserId, String)],
) -> Result<Vec<NewFact>, ReflectionError> {
    let value: Value = first_object(answer)
        .and_then(|s| serde_json::from_str(s).ok())
        .ok_or(ReflectionError::NotFacts)?;
    let list = value
        .get("facts")
        .and_then(Value::as_array)
        .ok_or(ReflectionError::NotFacts)?;
    if list.len() > MAX_FACTS_PER_REFLECTION {
        return Err(ReflectionError::BadFact(
            MAX_FACTS_PER_REFLECTION + 1,
            "too many facts",
        ));
    }
    list.iter()
        .enumerate()
        .map(|(i, f)| {
            let mut fact = one_fact(i + 1, f, messages)?;
            fact.about = about(f, people);
            Ok(fact)
        })
        .collect()
}

fn one_fact(n: usize, f: &Value, messages: &[(Ts, UserId)]) -> Result<NewFact, ReflectionError> {
    let bad = |why| ReflectionError::BadFact(n, why);
    let text_of = |key: &str| {
        f.get(key)
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
    };
    let subject = text_of("subject").ok_or(bad("no subject"))?;
    let text = text_of("fact").ok_or(bad("no fact"))?;
    if text.chars().count() > MAX_FACT_CHARS {
        return Err(bad("fact too long"));
    }
    let keywords: Vec<String> = f
        .get("keywords")
        .and_then(Value::as_array)
        .ok_or(bad("no keywords"))?
        .iter()
        .map(|k| k.as_str().map(|k| k.trim().to_lowercase()))
        .collect::<Option<Vec<_>>>()
        .ok_or(bad("a keyword is not text"))?
        .into_iter()
        .filter(|k| !k.is_empty())
        .collect();
    if keywords.is_empty() {
        return Err(bad("no keywords"));
    }
    let cues = cues(f).ok_or(bad("a cue is not text"))?;
    let importance = f
        .get("importance")
        .and_then(Value::as_u64)
        .filter(|i| (1..=u64::from(MAX_IMPORTANCE)).contains(i))
        .ok_or(bad("importance is not 1 to 5"))? as u8;
    let shareable = f
        .get("shareable")
        .and_then(Value::as_bool)
        .ok_or(bad("shareable is not a boolean"))?;
    let numbers = f
        .get("sources")
        .and_then(Value::as_array)
        .filter(|s| !s.is_empty())
        .ok_or(bad("no sources"))?;
    let mut sources = BTreeMap::new();
    for number in numbers {
        let i = number
            .as_u64()
            .and_then(|i| usize::try_from(i).ok())
            .filter(|i| (1..=messages.len()).contains(i))
            .ok_or(bad("a source is not a shown message's number"))?;
        let (ts, user) = &messages[i - 1];
        sources.insert(*ts, user.clone());
    }
    let mut speakers: Vec<UserId> = sources.values().cloned().collect();
    speakers.sort();
    speakers.dedup();
    Ok(NewFact {
        subject: subject.to_owned(),
        text: text.to_owned(),
        keywords,
        cues,
        importance,
        shareable,
        sources: sources.into_keys().collect(),
        speakers,
        about: None,
    })
}

/// The one of `people` a fact's `about` names (its display name or id,
/// case aside, an `@` before it allowed).
fn about(f: &Value, people: &[(UserId, String)]) -> Option<UserId> {
    named(f.get("about")?.as_str()?, people)
}

/// The one of `people` that `name` names: their display name or id, case
/// aside, an `@` before it allowed.
pub(crate) fn named(name: &str, people: &[(UserId, String)]) -> Option<UserId> {
    let name = name.trim().trim_start_matches('@');
    people
        .iter()
        .find(|(id, shown)| {
            shown.trim().eq_ignore_ascii_case(name) || id.as_str().eq_ignore_ascii_case(name)
        })
        .map(|(id, _)| id.clone())
}

/// A recalled fact as a prompt shows it: its sentence, and whom it is
/// about and who said it, by `name` (a person it cannot name, by id), so
/// that one person's fact is not taken for another's: 「（アリスのこと、ボブ
/// が話した）」, 「（ボブが話した）」 when the speaker is the one it is about.
pub fn shown(fact: &Fact, name: impl Fn(&UserId) -> String) -> String {
    let said: Vec<String> = fact.speakers.iter().map(&name).collect();
    let said = said.join("、");
    match &fact.about {
        Some(about) if !fact.speakers.contains(about) && !said.is_empty() => {
            format!("{}（{}のこと、{said}が話した）", fact.text, name(about))
        }
        _ if !said.is_empty() => format!("{}（{said}が話した）", fact.text),
        Some(about) => format!("{}（{}のこと）", fact.text, name(about)),
        None => fact.text.clone(),
    }
}

/// The most cues kept of a fact.
pub const MAX_CUES: usize = 10;
/// The longest cue kept, in characters.
const MAX_CUE_CHARS: usize = 40;

/// A fact's `cues`, lower case, at most [`MAX_CUES`], too long ones left
/// out; none when the answer has none (an older prompt, a model that left
/// them out). `None`: a cue is not text.
fn cues(f: &Value) -> Option<Vec<String>> {
    let Some(list) = f.get("cues").and_then(Value::as_array) else {
        return Some(Vec::new());
    };
    let mut out = Vec::new();
    for c in list {
        let c = c.as_str()?.trim().to_lowercase();
        if !c.is_empty() && c.chars().count() <= MAX_CUE_CHARS && !out.contains(&c) {
            out.push(c);
        }
    }
    out.truncate(MAX_CUES);
    Some(out)
}

/// The text of a fact that is embedded: its cues, the words a digest
/// expects someone to allude to it by, or its sentence when it has none.
/// Its own words are for the keywords to match; its vector is for what
/// they miss. (Embedding the sentence with the cues found fewer allusions:
/// docs/performance.md.)
pub fn passage(fact: &Fact) -> String {
    passage_of(&fact.text, &fact.cues)
}

fn passage_of(text: &str, cues: &[String]) -> String {
    if cues.is_empty() {
        text.to_owned()
    } else {
        cues.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(days: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_767_600_000 + days * 86_400, 0).expect("time")
    }

    fn fact(id: &str, subject: &str, text: &str, keywords: &[&str], importance: u8) -> Fact {
        Fact {
            id: id.into(),
            channel: ChannelId::parse("C1").unwrap(),
            subject: subject.into(),
            text: text.into(),
            keywords: keywords.iter().map(|k| (*k).to_owned()).collect(),
            cues: Vec::new(),
            importance,
            shareable: false,
            sources: vec![Ts::parse("1767600000.000100").unwrap()],
            speakers: vec![UserId::parse("UBOB").unwrap()],
            about: None,
            written_at: at(0),
            outdated: false,
            meaning: None,
        }
    }

    /// Recall with a 30-day half-life, `floor` and `top`, the bundled
    /// embedder's scale.
    fn recall_with(floor: f64, top: usize) -> Recall {
        Recall {
            half_life: Duration::days(30),
            floor,
            top,
            meaning: ByMeaning::BUNDLED,
        }
    }

    /// A conversation's side of recall with no meaning (no embedder).
    fn words(words: BTreeSet<String>, names: BTreeSet<String>) -> Recalling {
        Recalling {
            words,
            names,
            ..Recalling::default()
        }
    }

    fn set(words: &[&str]) -> BTreeSet<String> {
        words.iter().map(|w| (*w).to_owned()).collect()
    }

    #[test]
    fn latin_words_and_japanese_bigrams() {
        assert_eq!(
            tokens("Bob moved to Osaka, <@U1> the city!"),
            set(&["bob", "moved", "osaka", "city"])
        );
        assert_eq!(
            tokens("大阪に引っ越した"),
            set(&["大阪", "阪に", "に引", "引っ", "っ越", "越し"])
        );
        assert_eq!(tokens("猫 と Rust"), set(&["猫", "rust"]));
    }

    /// Two Japanese sentences share their particles and endings whatever
    /// they say: keyword recall matched on です, ます, って, ながら and
    /// called up unrelated facts.
    #[test]
    fn japanese_particles_and_endings_are_no_words() {
        for said in ["です", "ます", "って", "ながら", "ですね", "でしょうか"] {
            assert!(tokens(said).is_empty(), "{said}: {:?}", tokens(said));
        }
        let fact_words = tokens("毎朝コーヒーを飲みながら新聞を読んでいます");
        let talk = tokens("明日の会議って何時からですか？歩きながら話しましょう");
        assert!(
            fact_words.is_disjoint(&talk),
            "{:?}",
            fact_words.intersection(&talk).collect::<Vec<_>>()
        );
    }

    #[test]
    fn decay_halves_every_half_life_and_importance_scales_it() {
        let f = fact("1", "Bob", "Bob moved to Osaka", &["osaka"], 5);
        let half = Duration::days(30);
        assert!((strength(&f, at(0), half) - 1.0).abs() < 1e-9);
        assert!((strength(&f, at(30), half) - 0.5).abs() < 1e-9);
        assert!((strength(&f, at(60), half) - 0.25).abs() < 1e-9);
        let trivia = fact("2", "Bob", "Bob likes tea", &["tea"], 1);
        assert!((strength(&trivia, at(0), half) - 0.2).abs() < 1e-9);
    }

    #[test]
    fn similarity_is_jaccard_with_names_weighing_more() {
        let a = set(&["bob", "osaka", "move"]);
        let b = set(&["osaka", "move", "apartment"]);
        assert!((similarity(&a, &b, &BTreeSet::new()) - 0.5).abs() < 1e-9);
        let names = set(&["osaka"]);
        // shared: osaka 2 + move 1 = 3; all: 2 + 1 + 1 + 1 = 5.
        assert!((similarity(&a, &b, &names) - 0.6).abs() < 1e-9);
        assert_eq!(similarity(&BTreeSet::new(), &BTreeSet::new(), &names), 0.0);
    }

    #[test]
    fn recall_finds_the_matching_fact_in_english_and_japanese() {
        let facts = vec![
            fact(
                "1",
                "Bob",
                "Bob moved to Osaka last month",
                &["osaka", "move"],
                4,
            ),
            fact(
                "2",
                "Alice",
                "Alice's cat is called Mochi",
                &["cat", "mochi"],
                3,
            ),
            fact(
                "3",
                "ボブ",
                "ボブは大阪に引っ越した",
                &["大阪", "引っ越し"],
                4,
            ),
        ];
        let how = recall_with(0.02, 3);
        let q = tokens("how is Osaka treating you, Bob?");
        let names = proper_nouns("how is Osaka treating you, Bob?", &["Bob"]);
        let found = recall(&facts, &words(q, names), at(10), how);
        assert_eq!(found.first().map(|(f, _)| f.id.as_str()), Some("1"));
        assert!(found.iter().all(|(f, _)| f.id != "2"), "{found:?}");

        let q = tokens("大阪の生活はどう？");
        let found = recall(&facts, &words(q, BTreeSet::new()), at(10), how);
        assert_eq!(found.first().map(|(f, _)| f.id.as_str()), Some("3"));

        let unrelated = tokens("the build is red again");
        assert!(recall(&facts, &words(unrelated, BTreeSet::new()), at(10), how).is_empty());
    }

    /// The recall benchmark's miss: a Japanese allusion sharing the
    /// keyword 盆栽 fell under the floor, its one keyword weighing no more
    /// than a particle's bigram (no capitals to make it a name). A Latin
    /// keyword keeps its weight of 1.
    #[test]
    fn a_facts_keywords_weigh_as_names_in_japanese_too() {
        let facts = vec![fact(
            "1",
            "Ken",
            "ケンはベランダで盆栽を育てている。",
            &["盆栽"],
            3,
        )];
        let how = recall_with(0.04, 3);
        let q = tokens("ケンさん、盆栽の手入れって難しい？\nうん、楽しみ");
        let found = recall(&facts, &words(q, BTreeSet::new()), at(3), how);
        assert_eq!(found.len(), 1, "{found:?}");
        // shared: ケン 1 + 盆栽 2; all: 20 words of weight 1 + 盆栽 2 (the
        // bigrams all in hiragana, such as って, are no words).
        let expected = 3.0 / 22.0 * strength(&facts[0], at(3), how.half_life);
        assert!((found[0].1 - expected).abs() < 1e-9, "{found:?}");
        let unrelated = tokens("ビルドが落ちてる、レビューお願いします");
        assert!(recall(&facts, &words(unrelated, BTreeSet::new()), at(3), how).is_empty());

        let red = [fact(
            "2",
            "Bob",
            "Bob is colour blind",
            &["red", "green"],
            4,
        )];
        let chatter = tokens("the build is red again");
        let found = recall(&red, &words(chatter, BTreeSet::new()), at(0), how);
        // shared: red, 1 of 7 words of weight 1, as before.
        let expected = 1.0 / 7.0 * strength(&red[0], at(0), how.half_life);
        assert!((found[0].1 - expected).abs() < 1e-9, "{found:?}");
    }

    #[test]
    fn recall_skips_outdated_facts_and_keeps_the_top_few() {
        let mut old = fact("1", "Bob", "Bob lives in Tokyo", &["bob", "lives"], 4);
        old.outdated = true;
        let facts = vec![
            old,
            fact("2", "Bob", "Bob lives in Osaka", &["bob", "lives"], 4),
        ];
        let how = recall_with(0.0, 1);
        let found = recall(
            &facts,
            &words(tokens("where does bob live"), BTreeSet::new()),
            at(1),
            how,
        );
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].0.id, "2");
    }

    #[test]
    fn cleanup_drops_the_faded_and_caps_the_rest() {
        let strong = fact("a", "x", "x", &["x"], 5);
        let weak = fact("b", "y", "y", &["y"], 1);
        let mid = fact("c", "z", "z", &["z"], 3);
        let half = Duration::days(30);
        // At 60 days: strong 0.25, mid 0.15, weak 0.05 (kept: not below).
        assert!(cleanup(
            &[strong.clone(), weak.clone(), mid.clone()],
            at(60),
            half,
            0.05,
            10
        )
        .is_empty());
        // At 90 days weak is 0.025: gone.
        assert_eq!(
            cleanup(&[strong.clone(), weak.clone()], at(90), half, 0.05, 10),
            vec!["b"]
        );
        // The cap keeps the strongest.
        assert_eq!(
            cleanup(&[strong, weak, mid], at(0), half, 0.05, 2),
            vec!["b"]
        );
    }

    #[test]
    fn a_new_fact_on_the_same_subject_and_words_supersedes_the_old() {
        let old = fact(
            "1",
            "Bob",
            "Bob lives in Tokyo",
            &["bob", "home", "lives"],
            4,
        );
        let other = fact("2", "Bob", "Bob likes tea", &["tea"], 2);
        let new = NewFact {
            subject: "bob".into(),
            text: "Bob moved to Osaka".into(),
            keywords: vec!["bob".into(), "home".into(), "osaka".into()],
            cues: vec![],
            importance: 4,
            shareable: false,
            sources: vec![],
            speakers: vec![],
            about: None,
        };
        let existing = [old, other];
        assert_eq!(
            superseded(&existing, &new).map(|f| f.id.as_str()),
            Some("1")
        );
        let unrelated = NewFact {
            keywords: vec!["guitar".into()],
            ..new
        };
        assert_eq!(superseded(&existing, &unrelated), None);
    }

    #[test]
    fn a_reflection_is_read_strictly() {
        let bob = UserId::parse("UBOB").unwrap();
        let alice = UserId::parse("UALICE").unwrap();
        let t1 = Ts::parse("1767600000.000100").unwrap();
        let t2 = Ts::parse("1767600060.000100").unwrap();
        let shown = vec![(t1, bob.clone()), (t2, alice.clone())];
        let answer = r#"Here you go: {"facts": [{"subject": "Bob", "fact": "Bob moved to Osaka.",
            "keywords": ["Osaka", "move"], "importance": 4, "shareable": true, "sources": [1, 2]}]}"#;
        let facts = parse_reflection(answer, &shown, &[]).unwrap();
        assert_eq!(facts.len(), 1);
        assert_eq!(facts[0].keywords, vec!["osaka", "move"]);
        assert_eq!(facts[0].sources, vec![t1, t2]);
        assert_eq!(facts[0].speakers, vec![alice, bob]);
        assert_eq!(
            parse_reflection(r#"{"facts": []}"#, &shown, &[]),
            Ok(vec![])
        );
        // A model without a JSON mode (Bedrock's Converse) may fence it.
        let fenced = format!("```json\n{}\n```", &answer[answer.find('{').unwrap_or(0)..]);
        assert_eq!(parse_reflection(&fenced, &shown, &[]), Ok(facts.clone()));

        for bad in [
            "nothing to remember",
            r#"{"facts": "none"}"#,
            r#"{"facts": [{"subject": "Bob", "fact": "x", "keywords": ["a"], "importance": 9, "shareable": true, "sources": [1]}]}"#,
            r#"{"facts": [{"subject": "Bob", "fact": "x", "keywords": ["a"], "importance": 3, "shareable": "yes", "sources": [1]}]}"#,
            r#"{"facts": [{"subject": "Bob", "fact": "x", "keywords": ["a"], "importance": 3, "shareable": true, "sources": [7]}]}"#,
            r#"{"facts": [{"subject": "", "fact": "x", "keywords": ["a"], "importance": 3, "shareable": true, "sources": [1]}]}"#,
            r#"{"facts": [{"subject": "Bob", "fact": "x", "keywords": [], "importance": 3, "shareable": true, "sources": [1]}]}"#,
            r#"{"facts": [{"subject": "Bob", "fact": "x", "keywords": ["a"], "cues": [3], "importance": 3, "shareable": true, "sources": [1]}]}"#,
        ] {
            assert!(parse_reflection(bad, &shown, &[]).is_err(), "{bad}");
        }
    }

    /// Who a fact is about is one of the people the prompt named, by name
    /// or id; a name it did not show, or none, is no one.
    #[test]
    fn a_fact_is_about_a_person_the_prompt_named() {
        let bob = UserId::parse("UBOB").unwrap();
        let alice = UserId::parse("UALICE").unwrap();
        let t1 = Ts::parse("1767600000.000100").unwrap();
        let shown = vec![(t1, bob.clone())];
        let people = vec![
            (bob.clone(), "Bob".to_owned()),
            (alice.clone(), "Alice Wong".to_owned()),
        ];
        let answer = |about: &str| {
            format!(
                r#"{{"facts": [{{"subject": "Alice", "fact": "Alice got her pilot's licence.", "keywords": ["pilot"],
                "about": {about}, "importance": 3, "shareable": true, "sources": [1]}}]}}"#
            )
        };
        for (named, expected) in [
            (r#""Alice Wong""#, Some(alice.clone())),
            (r#""@alice wong""#, Some(alice.clone())),
            (r#""UALICE""#, Some(alice)),
            (r#""Carol""#, None),
            ("null", None),
            ("3", None),
        ] {
            let found = parse_reflection(&answer(named), &shown, &people).unwrap();
            assert_eq!(found[0].about, expected, "{named}");
            assert_eq!(found[0].speakers, vec![bob.clone()], "{named}");
        }
    }

    /// A fact Bob told of Alice is shown as Alice's, said by Bob; one a
    /// person told of themselves, as said by them.
    #[test]
    fn a_shown_fact_names_whom_it_is_about_and_who_said_it() {
        let mut f = fact(
            "1",
            "Alice",
            "Alice got her pilot's licence.",
            &["pilot"],
            3,
        );
        let name = |id: &UserId| match id.as_str() {
            "UBOB" => "Bob".to_owned(),
            "UALICE" => "Alice".to_owned(),
            other => other.to_owned(),
        };
        f.about = Some(UserId::parse("UALICE").unwrap());
        assert_eq!(
            shown(&f, name),
            "Alice got her pilot's licence.（Aliceのこと、Bobが話した）"
        );
        f.about = Some(UserId::parse("UBOB").unwrap());
        assert_eq!(
            shown(&f, name),
            "Alice got her pilot's licence.（Bobが話した）"
        );
        f.about = None;
        assert_eq!(
            shown(&f, name),
            "Alice got her pilot's licence.（Bobが話した）"
        );
        f.speakers.clear();
        assert_eq!(shown(&f, name), "Alice got her pilot's licence.");
    }

    /// Cues are read with the fact (lower case, each once, the too long
    /// left out, ten at most), matched as keywords are and embedded in
    /// the sentence's place; an answer without them (an older prompt) has
    /// none, and its sentence is embedded.
    #[test]
    fn a_facts_cues_are_read_matched_and_embedded_in_its_place() {
        let bob = UserId::parse("UBOB").unwrap();
        let t1 = Ts::parse("1767600000.000100").unwrap();
        let shown = vec![(t1, bob)];
        let long = "x".repeat(MAX_CUE_CHARS + 1);
        let answer = format!(
            r#"{{"facts": [{{"subject": "Bob", "fact": "Bob bakes bread every Sunday.", "keywords": ["bread"],
            "cues": ["Sourdough", "sourdough", "{long}", "パン作り", "a", "b", "c", "d", "e", "f", "g", "h"],
            "importance": 3, "shareable": true, "sources": [1]}}]}}"#
        );
        let found = parse_reflection(&answer, &shown, &[]).unwrap();
        let cues = &found[0].cues;
        assert_eq!(cues.len(), MAX_CUES);
        assert_eq!(&cues[..3], &["sourdough", "パン作り", "a"]);
        let fact = found[0]
            .clone()
            .stored("1".into(), ChannelId::parse("C1").unwrap(), at(0));
        assert!(fact_words(&fact).contains("sourdough"));
        assert!(passage(&fact).starts_with("sourdough, パン作り, a"));
        assert!(!passage(&fact).contains("Sunday"));
        assert_eq!(found[0].passage(), passage(&fact));

        let older = r#"{"facts": [{"subject": "Bob", "fact": "Bob bakes bread.", "keywords": ["bread"], "importance": 3, "shareable": true, "sources": [1]}]}"#;
        let found = parse_reflection(older, &shown, &[]).unwrap();
        assert!(found[0].cues.is_empty());
        assert_eq!(found[0].passage(), "Bob bakes bread.");
        let json = serde_json::to_string(&found[0].clone().stored(
            "1".into(),
            ChannelId::parse("C1").unwrap(),
            at(0),
        ))
        .unwrap();
        assert!(
            !json.contains("cues") && !json.contains("meaning"),
            "{json}"
        );
    }
}
