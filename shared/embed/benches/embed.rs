//! What recall by meaning costs a job function: loading the bundled model
//! (once per cold start, on the first recall or fact written), embedding
//! one conversation's words (once per recall), and ranking a channel's
//! facts (the most a channel keeps, 100, by default) with them.
//!
//! And what the English-only second model (all-MiniLM-L6-v2, not used
//! yet) costs for one text: `-- minilm` runs only those (they need
//! `infra/fetch-minilm.sh`).
//!
//! `cargo bench -p myao-embed --bench embed`

use chrono::{DateTime, Duration};
use criterion::{criterion_group, criterion_main, Criterion};
use myao_core::ports::Embedded;
use myao_domain::facts::{self, ByMeaning, Fact, Recall, Recalling};
use myao_domain::meaning::Meaning;
use myao_domain::{ChannelId, Ts, UserId};
use myao_embed::{model_path, Bundled, MiniLm, MODEL};

const QUERY: &str = "does anyone here tend hives themselves? my uncle wants to start an apiary\n\
                     年末年始、雪国に帰る人いる？";

/// The third of the MiniLM tests' reference texts (21 ids).
const REFERENCE: &str =
    "should I leave out the Reese's ones? somebody here reacts badly to a single crumb";

/// A paragraph of 65 English words (83 ids).
const PARAGRAPH: &str = "We moved the team offsite to the lake house this year, and most \
    people drove up on Friday afternoon. Sam brought his sourdough starter, \
    Priya ran the board game night, and somebody left the freezer open, so \
    the ice cream melted before dinner. Next time we should book the cabins \
    earlier, pack more blankets, and check the boat's battery before anyone \
    plans a sunrise paddle.";

fn bundled() -> Bundled {
    Bundled::from_package().expect("the bundled model (bash infra/fetch-embedder.sh)")
}

fn facts_of(b: &Bundled, n: usize) -> Vec<Fact> {
    let at = DateTime::from_timestamp(1_780_000_000, 0).expect("a time");
    (0..n)
        .map(|i| {
            let text = format!("Person {i} keeps bees and harvests honey in garden {i}.");
            let v = b.embed_one(&text, Embedded::Passage).expect("a vector");
            Fact {
                id: format!("{i}"),
                channel: ChannelId::parse("C1").expect("an id"),
                subject: format!("Person {i}"),
                text,
                keywords: vec!["bees".into(), "honey".into()],
                cues: vec!["apiary".into(), "養蜂".into()],
                importance: 3,
                shareable: false,
                sources: vec![Ts::parse("1780000000.000100").expect("a ts")],
                speakers: vec![UserId::parse("UBOB").expect("an id")],
                about: None,
                written_at: at,
                outdated: false,
                meaning: Some(Meaning::of(MODEL, &v)),
            }
        })
        .collect()
}

fn embedder(c: &mut Criterion) {
    let path = model_path().expect("the bundled model (bash infra/fetch-embedder.sh)");
    c.bench_function("load the bundled model", |b| {
        b.iter(|| Bundled::load(&path).expect("loads"));
    });
    let model = bundled();
    c.bench_function("embed one recall's words", |b| {
        b.iter(|| model.embed_one(QUERY, Embedded::Query).expect("a vector"));
    });
    let all = facts_of(&model, 100);
    let v = model.embed_one(QUERY, Embedded::Query).expect("a vector");
    let query = Recalling::of(QUERY, &[], Some(Meaning::of(MODEL, &v)));
    let how = Recall {
        half_life: Duration::days(30),
        floor: 0.04,
        top: 3,
        meaning: ByMeaning::BUNDLED,
    };
    let now = all[0].written_at + Duration::days(1);
    c.bench_function("rank 100 facts by words and meaning", |b| {
        b.iter(|| facts::recall(&all, &query, now, how).len());
    });
}

fn minilm(c: &mut Criterion) {
    let dir = std::env::var_os("MYAO_MINILM_MODEL")
        .map_or_else(|| MiniLm::FETCHED.into(), std::path::PathBuf::from);
    let model = match MiniLm::load(&dir) {
        Ok(model) => model,
        Err(e) => {
            eprintln!(
                "minilm: not measured, the model did not load ({e}): bash infra/fetch-minilm.sh"
            );
            return;
        }
    };
    c.bench_function("minilm: embed the third reference text", |b| {
        b.iter(|| model.embed(REFERENCE));
    });
    c.bench_function("minilm: embed a 65-word paragraph", |b| {
        b.iter(|| model.embed(PARAGRAPH));
    });
}

criterion_group!(benches, minilm, embedder);
criterion_main!(benches);
