//! Recall by meaning: does a later thread that alludes to a fact without
//! sharing a content word with it get that fact among the (at most three)
//! recalled, and does a thread about something else get none?
//!
//! Two case sets of 40 facts and 20 control threads each (English,
//! Japanese, and each crossing the other way; 8 facts stated by someone
//! other than the person they are about), written apart: the ranking's
//! constants ([`ByMeaning::BUNDLED`], the floor) were tuned on set B, set A is
//! held out. Each set's 40 facts sit in one channel, as a digest writes
//! them, with their meaning from the bundled embedder; each thread recalls
//! through the production code (`facts::recall`, the query built as the
//! services build it: the newest messages, newest first) three ways:
//! keywords only (no embedder), meaning only (no words) and both (the
//! hybrid, what myao does).
//!
//! Needs the bundled model (`bash infra/fetch-embedder.sh`).
//!
//! `cargo bench -p myao-local --bench meaning`

use std::collections::BTreeSet;

use chrono::{DateTime, Duration, Utc};
use myao_core::ports::Embedded;
use myao_domain::facts::{
    self, ByMeaning, Fact, Recall, Recalling, Script, Second, Starts, Unlike,
};
use myao_domain::meaning::Meaning;
use myao_domain::{ChannelId, Ts, UserId};
use myao_embed::{Bundled, MODEL};

mod allusions;
use allusions::cases::{Case, Control, Lang};
use allusions::{cues, set_a, set_b};

/// A case set and the cues a digest wrote for its facts.
struct Set {
    name: &'static str,
    cases: &'static [Case],
    controls: &'static [Control],
    cues: &'static [&'static [&'static str]],
}

/// Facts as a digest without cues wrote them.
const NO_CUES: &[&[&str]] = &[&[] as &[&str]; 40];

/// The services' recall settings (context.rs).
const FLOOR: f64 = 0.04;
const TOP: usize = 3;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Mode {
    Keywords,
    Meaning,
    Hybrid,
    /// Meaning alone with no floor: the three nearest facts, whatever
    /// their cosine (how well the model ranks).
    Nearest,
}

fn embed(b: &Bundled, text: &str, what: Embedded) -> Meaning {
    match b.embed_one(text, what) {
        Ok(v) => Meaning::of(MODEL, &v),
        Err(e) => panic!("the bundled embedder failed: {e}"),
    }
}

fn now() -> DateTime<Utc> {
    DateTime::from_timestamp(1_780_000_000, 0).unwrap_or_default()
}

fn user(name: &str) -> UserId {
    UserId::parse(&format!("U{}", name.to_uppercase())).expect("a user id")
}

fn capitalised(name: &str) -> String {
    let mut c = name.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

/// The set's facts, two days old, importance 3, as a digest stores them.
fn stored(b: &Bundled, cases: &[Case], cues: &[&[&str]]) -> Vec<Fact> {
    let channel = ChannelId::parse("CGENERAL").expect("a channel id");
    cases
        .iter()
        .enumerate()
        .map(|(i, c)| Fact {
            id: format!("{i}"),
            channel: channel.clone(),
            subject: capitalised(c.about),
            text: c.fact.to_owned(),
            keywords: c.keywords.iter().map(|k| k.to_lowercase()).collect(),
            cues: cues[i].iter().map(|c| c.to_lowercase()).collect(),
            importance: 3,
            shareable: false,
            sources: vec![Ts::parse(&format!("17800000{i:02}.000100")).expect("a ts")],
            speakers: vec![user(c.said_by)],
            about: Some(user(c.about)),
            written_at: now() - Duration::days(2),
            outdated: false,
            meaning: None,
        })
        .map(|mut f| {
            f.meaning = Some(embed(b, &facts::passage(&f), Embedded::Passage));
            f
        })
        .collect()
}

/// What a thread recalls: its messages newest first, as the services read
/// them, by `mode`.
fn recalled(b: &Bundled, facts: &[Fact], messages: &[&str], mode: Mode) -> Vec<usize> {
    let text = newest_first(messages);
    let mut query = Recalling::of(
        &text,
        &[],
        (mode != Mode::Keywords).then(|| embed(b, &text, Embedded::Query)),
    );
    if matches!(mode, Mode::Meaning | Mode::Nearest) {
        query.words.clear();
    }
    let how = match mode {
        Mode::Nearest => Recall {
            half_life: Duration::days(30),
            floor: 0.0,
            top: TOP,
            meaning: ByMeaning {
                unlike: Unlike::even(-1.0),
                span: 2.0,
                second: ByMeaning::BUNDLED.second.map(|s| Second {
                    unlike: -1.0,
                    span: 2.0,
                    ..s
                }),
                sentence: None,
            },
        },
        _ => Recall {
            half_life: Duration::days(30),
            floor: FLOOR,
            top: TOP,
            meaning: scale(),
        },
    };
    facts::recall(facts, &query, now(), how)
        .into_iter()
        .filter_map(|(f, _)| f.id.parse().ok())
        .collect()
}

/// [`ByMeaning::BUNDLED`], or with the starts `MYAO_BENCH_STARTS` names
/// (`first,second` for facts with cues, then optionally `,first,second`
/// for facts without: how the starts were fitted on set B).
fn scale() -> ByMeaning {
    let starts: Option<Vec<f64>> = std::env::var("MYAO_BENCH_STARTS")
        .ok()
        .map(|s| s.split(',').filter_map(|x| x.trim().parse().ok()).collect());
    let with = |first: f64, second: f64, sentence| ByMeaning {
        unlike: Unlike::even(first),
        second: ByMeaning::BUNDLED.second.map(|s| Second {
            unlike: second,
            ..s
        }),
        sentence,
        ..ByMeaning::BUNDLED
    };
    match starts.as_deref() {
        Some(&[first, second]) => with(first, second, ByMeaning::BUNDLED.sentence),
        Some(&[first, second, sentence_first, sentence_second]) => with(
            first,
            second,
            Some(Starts {
                first: sentence_first,
                second: sentence_second,
            }),
        ),
        _ => ByMeaning::BUNDLED,
    }
}

/// A thread's words as the services read them for recall: its messages,
/// newest first.
fn newest_first(messages: &[&str]) -> String {
    messages
        .iter()
        .rev()
        .copied()
        .collect::<Vec<_>>()
        .join("\n")
}

/// Hits out of cases, per slice.
#[derive(Default)]
struct Tally {
    en: (usize, usize),
    ja: (usize, usize),
    cross: (usize, usize),
    provenance: (usize, usize),
    controls: (usize, usize),
    controls_ja: (usize, usize),
}

fn add(t: &mut (usize, usize), hit: bool) {
    t.0 += usize::from(hit);
    t.1 += 1;
}

fn tally(b: &Bundled, set: &Set, cues: bool, mode: Mode) -> Tally {
    let (cases, controls) = (set.cases, set.controls);
    let facts = stored(b, cases, if cues { set.cues } else { NO_CUES });
    let mut t = Tally::default();
    for (i, c) in cases.iter().enumerate() {
        let hit = recalled(b, &facts, c.allusion, mode).contains(&i);
        match c.lang {
            Lang::En => add(&mut t.en, hit),
            Lang::Ja => add(&mut t.ja, hit),
            Lang::JaEn | Lang::EnJa => add(&mut t.cross, hit),
        }
        if c.said_by != c.about {
            add(&mut t.provenance, hit);
        }
    }
    for c in controls {
        let any = !recalled(b, &facts, c.messages, mode).is_empty();
        add(&mut t.controls, any);
        if c.lang == Lang::Ja {
            add(&mut t.controls_ja, any);
        }
    }
    t
}

/// The allusions that share a word ([`facts::tokens`]) with their fact's
/// message, sentence or keywords (the cases are written to share none),
/// and how many share one with the fact's cues (which a digest writes so
/// that they will).
fn sharing(cases: &[Case], cues: &[&[&str]]) -> (Vec<(usize, Vec<String>)>, usize) {
    let words = |texts: &mut dyn Iterator<Item = &str>| -> BTreeSet<String> {
        texts.flat_map(facts::tokens).collect()
    };
    let mut with_cues = 0;
    let shared = cases
        .iter()
        .enumerate()
        .filter_map(|(i, c)| {
            let talk = words(&mut c.allusion.iter().copied());
            let cued = words(&mut cues[i].iter().copied());
            with_cues += usize::from(!cued.is_disjoint(&talk));
            let fact = words(
                &mut [c.said, c.fact]
                    .into_iter()
                    .chain(c.keywords.iter().copied()),
            );
            let shared: Vec<String> = fact.intersection(&talk).cloned().collect();
            (!shared.is_empty()).then_some((i, shared))
        })
        .collect();
    (shared, with_cues)
}

fn share((hit, all): (usize, usize)) -> String {
    format!("{:.2} ({hit}/{all})", hit as f64 / all.max(1) as f64)
}

fn main() {
    let b = match Bundled::from_package() {
        Ok(b) => b,
        Err(e) => {
            eprintln!("{e}\nrun `bash infra/fetch-embedder.sh` first");
            std::process::exit(2);
        }
    };
    let sets = [
        Set {
            name: "B (tuned on)",
            cases: set_b::CASES,
            controls: set_b::CONTROLS,
            cues: cues::CUES_B,
        },
        Set {
            name: "A (held out)",
            cases: set_a::CASES,
            controls: set_a::CONTROLS,
            cues: cues::CUES_A,
        },
    ];
    println!("recall@{TOP} of allusions that share no content word with their fact; false recall of controls");
    for set in &sets {
        if std::env::var_os("MYAO_BENCH_DETAIL").is_some() {
            detail(&b, set);
        }
        println!(
            "\nset {}: {} facts, {} controls",
            set.name,
            set.cases.len(),
            set.controls.len()
        );
        let (shared, with_cues) = sharing(set.cases, set.cues);
        if !shared.is_empty() {
            println!("allusions sharing a word with their fact: {shared:?}");
        }
        println!(
            "allusions sharing a word with their fact's cues: {with_cues} of {}",
            set.cases.len()
        );
        println!("| ranking | facts' cues | English | Japanese | crossing | stated by another | false recall | of it Japanese |");
        println!("|---|---|---|---|---|---|---|---|");
        // `MYAO_BENCH_FIT=1`: the hybrid with cues alone, as the starts
        // were fitted.
        let fit = std::env::var_os("MYAO_BENCH_FIT").is_some();
        for cues in [false, true].into_iter().filter(|c| *c || !fit) {
            for mode in [Mode::Keywords, Mode::Meaning, Mode::Hybrid, Mode::Nearest]
                .into_iter()
                .filter(|m| *m == Mode::Hybrid || !fit)
            {
                let t = tally(&b, set, cues, mode);
                println!(
                    "| {mode:?} | {} | {} | {} | {} | {} | {} | {} |",
                    if cues { "yes" } else { "no" },
                    share(t.en),
                    share(t.ja),
                    share(t.cross),
                    share(t.provenance),
                    share(t.controls),
                    t.controls_ja.0
                );
            }
        }
    }
}

/// Per thread and fact (`MYAO_BENCH_DETAIL=1`), tab-separated: the
/// thread (`case` or `control`, its number, its language), the fact's
/// number, each model's cosine (the second's empty where a text has no
/// part), the thread's and the fact's scripts, and the words' score times
/// the fact's strength: what a scale's starts are fitted from.
fn detail(b: &Bundled, set: &Set) {
    let (cases, controls) = (set.cases, set.controls);
    let facts = stored(b, cases, set.cues);
    let second = ByMeaning::BUNDLED.second.map_or(0, |s| s.at);
    let threads = cases
        .iter()
        .map(|c| ("case", c.lang, c.allusion))
        .chain(controls.iter().map(|c| ("control", c.lang, c.messages)));
    for (i, (kind, lang, messages)) in threads.enumerate() {
        let text = newest_first(messages);
        let q = embed(b, &text, Embedded::Query);
        let query = Recalling::of(&text, &[], None);
        for (j, f) in facts.iter().enumerate() {
            let m = f.meaning.as_ref().expect("embedded");
            let first = q.likeness_in(m, 0..second).unwrap_or(0.0);
            let other = q
                .likeness_in(m, second..q.len())
                .map_or(String::new(), |c| format!("{c:.4}"));
            let how = Recall {
                half_life: Duration::days(30),
                floor: 0.0,
                top: 1,
                meaning: ByMeaning::BUNDLED,
            };
            let words = facts::recall(std::slice::from_ref(f), &query, now(), how)
                .first()
                .map_or(0.0, |(_, s)| *s);
            println!(
                "{}\t{kind}\t{i}\t{lang:?}\t{j}\t{first:.4}\t{other}\t{:?}\t{:?}\t{words:.4}",
                set.name.split(' ').next().unwrap_or_default(),
                query.script,
                Script::of(&f.text),
            );
        }
    }
}
