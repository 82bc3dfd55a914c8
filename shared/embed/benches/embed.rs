//! What recall by meaning costs a job function: loading the bundled models
//! (once per cold start, on the first recall or fact written), embedding
//! one conversation's words (once per recall: the second model reads its
//! Latin words, none in Japanese alone), and ranking a channel's
//! facts (the most a channel keeps, 100, by default) with them.
//!
//! And what the English-only second model (all-MiniLM-L6-v2) costs for one
//! text on its own: `-- minilm` runs only those.
//!
//! `cargo bench -p myao-embed --bench embed`

use chrono::{DateTime, Duration};
use criterion::{criterion_group, criterion_main, Criterion};
use myao_core::ports::Embedded;
use myao_domain::facts::{self, ByMeaning, Fact, Recall, Recalling};
use myao_domain::meaning::Meaning;
use myao_domain::{ChannelId, Ts, UserId};
use myao_embed::{minilm_path, model_path, Bundled, MiniLm, MODEL};

const QUERY: &str = "does anyone here tend hives themselves? my uncle wants to start an apiary\n\
                     年末年始、雪国に帰る人いる？";

/// A recall's words in Japanese, which the second model does not read.
const QUERY_JA: &str =
    "年末年始、雪国に帰る人いる？\n今年は新幹線が混みそうだから早めに予約しないと";

/// A recall's words in English, as long as the second model reads (five
/// messages, newest first: over its 128 pieces).
const QUERY_EN: &str =
    "does anyone here tend hives themselves? my uncle wants to start an apiary\n\
    he has a garden out past the ring road, plenty of clover and a few old apple trees\n\
    we talked about it over the weekend and he keeps asking me questions I cannot answer\n\
    like how many boxes you need for the first year and whether the neighbours will mind\n\
    anyway, the build is green again after the flaky test fix, thanks for looking at it";

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
    let minilm = minilm_path().expect("the bundled model (bash infra/fetch-minilm.sh)");
    c.bench_function("load the bundled model", |b| {
        b.iter(|| Bundled::load(&path, &minilm).expect("loads"));
    });
    let model = bundled();
    for (name, query) in [
        ("English and Japanese", QUERY),
        ("Japanese: the first model alone", QUERY_JA),
        ("English, 128 pieces and more: both models", QUERY_EN),
    ] {
        c.bench_function(&format!("embed one recall's words ({name})"), |b| {
            b.iter(|| model.embed_one(query, Embedded::Query).expect("a vector"));
        });
    }
    let all = facts_of(&model, 100);
    let v = model
        .embed_one(QUERY_EN, Embedded::Query)
        .expect("a vector");
    let query = Recalling::of(QUERY_EN, &[], Some(Meaning::of(MODEL, &v)));
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
    let model = match minilm_path()
        .ok_or_else(|| "no folder".to_owned())
        .and_then(|d| MiniLm::load(&d))
    {
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
