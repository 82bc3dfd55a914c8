//! The bundled embedder as built: it loads from the package with no
//! network, gives the same vectors on every run, and tells meaning apart in
//! English and Japanese. Needs `infra/fetch-embedder.sh` and
//! `infra/fetch-minilm.sh` (which `infra/test.sh` runs): without the models
//! these tests fail, on purpose.

use myao_core::ports::{Embedded, Embedder};
use myao_domain::facts::ByMeaning;
use myao_embed::{Bundled, MiniLm, DIMENSIONS, FIRST, MODEL};

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn bundled() -> Bundled {
    match Bundled::from_package() {
        Ok(b) => b,
        Err(e) => panic!("the bundled embedder did not load ({e}): run infra/fetch-embedder.sh"),
    }
}

#[tokio::test]
async fn the_bundled_embedder_loads_from_the_package_and_gives_the_same_vectors_every_time() {
    let texts = vec![
        "Tom bakes bread every Sunday.".to_owned(),
        "エミの実家は新潟。".to_owned(),
    ];
    let first = bundled().embed(&texts, Embedded::Passage).await.unwrap();
    assert_eq!(first.model, MODEL);
    let first = first.vectors;
    let again = bundled()
        .embed(&texts, Embedded::Passage)
        .await
        .unwrap()
        .vectors;
    assert_eq!(first, again, "a second load gives other vectors");
    assert_eq!(first.len(), 2);
    for v in &first {
        assert_eq!(v.len(), DIMENSIONS);
        let norm = cosine(&v[..FIRST], &v[..FIRST]).sqrt();
        assert!((norm - 1.0).abs() < 1e-3, "not unit length: {norm}");
    }
}

/// The second model's part is its vector of the text's Latin letters, and
/// zeros for a text with none; recall reads the parts where the embedder
/// writes them, by the model's name.
#[test]
fn the_second_part_is_the_english_models_of_the_latin_words() {
    let b = bundled();
    let minilm = MiniLm::load(&myao_embed::minilm_path().expect("a MiniLM path")).unwrap();
    let en = "Tom bakes bread every Sunday.";
    let v = b.embed_one(en, Embedded::Passage).unwrap();
    assert_eq!(v[FIRST..], minilm.embed(en)[..]);
    let norm = cosine(&v[FIRST..], &v[FIRST..]).sqrt();
    assert!((norm - 1.0).abs() < 1e-3, "not unit length: {norm}");
    let cued = b
        .embed_one("Tom keeps bees (honey, 蜂蜜)", Embedded::Passage)
        .unwrap();
    assert_eq!(cued[FIRST..], minilm.embed("Tom keeps bees (honey, )")[..]);
    let ja = "エミの実家は新潟。";
    let v = b.embed_one(ja, Embedded::Passage).unwrap();
    assert!(v[FIRST..].iter().all(|x| *x == 0.0), "{ja}");
    assert!(v[..FIRST].iter().any(|x| *x != 0.0), "{ja}");
    assert_eq!(ByMeaning::of_model(MODEL), ByMeaning::BUNDLED);
    assert_eq!(ByMeaning::BUNDLED.second.map(|s| s.at), Some(FIRST));
}

#[tokio::test]
async fn a_paraphrase_is_nearer_than_an_unrelated_line_in_english_and_japanese() {
    let b = bundled();
    let facts = vec![
        "Tom bakes bread every Sunday.".to_owned(),
        "エミの実家は新潟。".to_owned(),
    ];
    let facts = b.embed(&facts, Embedded::Passage).await.unwrap().vectors;
    let queries = vec![
        "who here knows their way around a sourdough starter? mine died".to_owned(),
        "年末年始、雪国に帰る人いる？".to_owned(),
        "the build is red again, can someone look at CI".to_owned(),
    ];
    let q = b.embed(&queries, Embedded::Query).await.unwrap().vectors;
    assert!(cosine(&q[0], &facts[0]) > cosine(&q[2], &facts[0]));
    assert!(cosine(&q[1], &facts[1]) > cosine(&q[2], &facts[1]));
    assert!(cosine(&q[0], &facts[0]) > cosine(&q[0], &facts[1]));
    assert!(cosine(&q[1], &facts[1]) > cosine(&q[1], &facts[0]));
}

/// A folder that is not the model (a file in place of the weights, one
/// cut short, one of another shape, a tokenizer model that is not one, a
/// missing file) is refused, not a crash.
#[test]
fn a_folder_that_is_not_the_model_is_refused_not_a_crash() {
    let model = myao_embed::model_path().expect("a model path (bash infra/fetch-embedder.sh)");
    let minilm = myao_embed::minilm_path().expect("a model path (bash infra/fetch-minilm.sh)");
    let dir = std::env::temp_dir().join(format!("myao-embed-{}", std::process::id()));
    let copy = |broken: &dyn Fn(&std::path::Path)| {
        std::fs::remove_dir_all(&dir).ok();
        std::fs::create_dir_all(&dir).unwrap();
        for entry in std::fs::read_dir(&model).unwrap() {
            let entry = entry.unwrap();
            std::fs::copy(entry.path(), dir.join(entry.file_name())).unwrap();
        }
        broken(&dir);
        Bundled::load(&dir, &minilm)
    };
    assert!(copy(&|_| {}).is_ok(), "an unbroken copy loads");
    assert!(copy(&|d| std::fs::write(d.join("d3.npy"), b"not numpy").unwrap()).is_err());
    assert!(copy(&|d| {
        let w = std::fs::read(d.join("cnn_W.npy")).unwrap();
        std::fs::write(d.join("cnn_W.npy"), &w[..w.len() / 2]).unwrap();
    })
    .is_err());
    assert!(copy(&|d| std::fs::copy(d.join("d1.npy"), d.join("d0.npy"))
        .map(|_| ())
        .unwrap())
    .is_err());
    assert!(
        copy(&|d| std::fs::write(d.join("sp.model"), b"\xff\xff\xff not a model").unwrap())
            .is_err()
    );
    assert!(copy(&|d| std::fs::remove_file(d.join("q17.npy")).unwrap()).is_err());
    assert!(Bundled::load(&dir.join("missing"), &minilm).is_err());
    assert!(Bundled::load(&model, &dir.join("missing")).is_err());
    assert!(
        Bundled::load(&model, &model).is_err(),
        "the first model as the second"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// The vectors are the model's: a few of their values, as the wheel's own
/// NumPy forward pass gives them for the same texts (its tokenizer matches
/// SentencePiece's), to within rounding.
#[test]
fn the_vectors_are_the_reference_forward_passes() {
    let b = bundled();
    let cases: [(&str, [f32; 12]); 3] = [
        (
            "Tom bakes bread every Sunday.",
            [
                -0.04593, 0.05927, -0.06431, -0.04474, -0.05639, 0.04024, 0.0682, 0.04686,
                -0.00556, 0.00647, 0.02763, 0.01995,
            ],
        ),
        (
            "エミの実家は新潟。",
            [
                -0.00379, 0.01517, 0.00055, -0.03363, -0.06002, 0.01163, 0.05226, -0.06918,
                0.03112, -0.00581, -0.01857, -0.03311,
            ],
        ),
        (
            "年末年始、雪国に帰る人いる？ I might drive up to Niigata",
            [
                -0.00051, 0.06949, -0.01995, 0.0217, -0.03368, -0.03644, 0.07289, -0.02797,
                0.03387, -0.04844, 0.02136, 0.09467,
            ],
        ),
    ];
    for (text, expected) in cases {
        let v = b.embed_one(text, Embedded::Query).unwrap();
        let got: Vec<f32> = [&v[..4], &v[256..260], &v[FIRST - 4..FIRST]].concat();
        for (g, e) in got.iter().zip(expected) {
            assert!((g - e).abs() < 2e-4, "{text}: {got:?} vs {expected:?}");
        }
    }
}

/// A text that normalizing makes many pieces of (U+FDFA is 18 characters)
/// is embedded by its first pieces, as a long text is: the same vector as
/// a longer run of it, not a call that grows with it.
#[test]
fn a_text_of_very_many_pieces_is_cut_to_its_first() {
    let b = bundled();
    let some = "\u{fdfa}".repeat(200);
    let many = "\u{fdfa}".repeat(1365);
    let v = b.embed_one(&some, Embedded::Query).unwrap();
    let w = b.embed_one(&many, Embedded::Query).unwrap();
    assert_eq!(v, w, "both are cut to the same first pieces");
    assert_eq!(w.len(), DIMENSIONS);
}

/// A fact as the memory job stores it, two days old, embedded by `b`.
fn stored(b: &Bundled, id: &str, text: &str, cues: &[&str]) -> myao_domain::facts::Fact {
    use myao_domain::meaning::Meaning;
    use myao_domain::{ChannelId, Ts, UserId};
    let written_at = chrono::DateTime::from_timestamp(1_780_000_000, 0).expect("a time");
    let mut fact = myao_domain::facts::Fact {
        id: id.into(),
        channel: ChannelId::parse("C1").expect("an id"),
        subject: text.split(' ').next().unwrap_or_default().into(),
        text: text.into(),
        keywords: vec![],
        cues: cues.iter().map(|c| (*c).to_owned()).collect(),
        importance: 3,
        shareable: false,
        sources: vec![Ts::parse("1780000000.000100").expect("a ts")],
        speakers: vec![UserId::parse("UIVAN").expect("an id")],
        about: None,
        written_at,
        outdated: false,
        meaning: None,
    };
    let v = b
        .embed_one(&myao_domain::facts::passage(&fact), Embedded::Passage)
        .expect("a vector");
    fact.meaning = Some(Meaning::of(MODEL, &v));
    fact
}

/// The first model's part of `fact`'s vector, as a stack stored it before
/// the second: of its sentence and cues together.
fn first_part(b: &Bundled, fact: &myao_domain::facts::Fact) -> Vec<f32> {
    let passage = format!("{} ({})", fact.text, fact.cues.join(", "));
    let mut v = b.embed_one(&passage, Embedded::Passage).expect("a vector");
    v.truncate(FIRST);
    v
}

/// Three of the recall benchmark's facts of set B, with their cues.
fn three_facts(b: &Bundled) -> [myao_domain::facts::Fact; 3] {
    [
        stored(
            b,
            "chess",
            "Ivan plays online chess most nights and is rated around 1900.",
            &[
                "lichess",
                "blitz",
                "elo",
                "grandmaster",
                "チェス",
                "ボードゲーム",
                "対局",
                "レーティング",
            ],
        ),
        stored(
            b,
            "vegan",
            "Taro is vegan.",
            &[
                "plant-based",
                "tofu",
                "meat-free",
                "soy milk",
                "菜食",
                "ベジタリアン",
                "豆腐",
                "植物性",
            ],
        ),
        stored(
            b,
            "bees",
            "Nina keeps bees in her back garden and harvests honey.",
            &[
                "hive",
                "apiary",
                "pollen",
                "beeswax",
                "養蜂",
                "ミツバチ",
                "巣箱",
                "蜜蝋",
            ],
        ),
    ]
}

/// The ids of the facts `talk` (its meaning `meaning`) recalls by meaning
/// alone, on `scale` or else its model's.
fn ids_recalled(
    talk: &str,
    meaning: myao_domain::meaning::Meaning,
    facts: &[myao_domain::facts::Fact],
    scale: Option<ByMeaning>,
    now: chrono::DateTime<chrono::Utc>,
) -> Vec<String> {
    use myao_domain::facts::{recall, Recall, Recalling};
    let scale = scale.unwrap_or_else(|| ByMeaning::of_model(meaning.model()));
    let mut query = Recalling::of(talk, &[], Some(meaning));
    query.words.clear();
    let how = Recall {
        half_life: chrono::Duration::days(30),
        floor: 0.04,
        top: 3,
        meaning: scale,
    };
    recall(facts, &query, now, how)
        .into_iter()
        .map(|(f, _)| f.id.clone())
        .collect()
}

/// English talk alluding to an English fact in other words is recalled by
/// the two models together where the first alone leaves it under its
/// start (two of the recall benchmark's tuning allusions), and talk about
/// something else recalls nothing.
#[test]
fn the_english_model_recalls_what_the_first_alone_misses() {
    use myao_domain::meaning::Meaning;
    let b = bundled();
    let facts = three_facts(&b);
    let now = facts[0].written_at + chrono::Duration::days(2);
    // The first model alone: its part of each vector, under its own name,
    // as a stack stored them before the second.
    let first_alone: Vec<_> = facts
        .iter()
        .cloned()
        .map(|mut f| {
            f.meaning = Some(Meaning::of("use-multilingual-3", &first_part(&b, &f)));
            f
        })
        .collect();
    let recalled = |talk: &str, both: bool| -> Vec<String> {
        let v = b.embed_one(talk, Embedded::Query).expect("a vector");
        if both {
            ids_recalled(talk, Meaning::of(MODEL, &v), &facts, None, now)
        } else {
            let first = Meaning::of("use-multilingual-3", &v[..FIRST]);
            ids_recalled(talk, first, &first_alone, None, now)
        }
    };
    for (talk, fact) in [
        (
            "would love someone to walk me through it over a board at lunch\n\
             who here knows their openings? I keep getting crushed in the Sicilian",
            "chess",
        ),
        (
            "wait, doesn't someone on the team avoid all animal products? might need another venue\n\
             booking the year-end party at that steakhouse near the station",
            "vegan",
        ),
    ] {
        assert!(
            recalled(talk, true).contains(&fact.to_owned()),
            "{fact}"
        );
        assert!(
            !recalled(talk, false).contains(&fact.to_owned()),
            "the first model alone finds {fact}: the test shows nothing"
        );
    }
    let other = "the build is red again, can someone look at CI before the release";
    assert_eq!(recalled(other, true), Vec::<String>::new());
}

/// Two of the recall benchmark's facts of set B that its sentence with its
/// cues left under the two models' starts, embedded by their cues.
fn two_by_cues(b: &Bundled) -> [myao_domain::facts::Fact; 2] {
    [
        stored(
            b,
            "sommelier",
            "Kaito worked as a sommelier in Osaka before becoming an engineer.",
            &[
                "wine",
                "pairing",
                "restaurant",
                "vintage",
                "ワイン",
                "ぶどう",
                "レストラン",
                "転職",
            ],
        ),
        stored(
            b,
            "greyhound",
            "Paul adopted a retired greyhound.",
            &[
                "dog",
                "rescue",
                "racing",
                "walks",
                "犬",
                "保護犬",
                "散歩",
                "里親",
            ],
        ),
    ]
}

/// A fact embedded by its cues is recalled by talk alluding to it where the
/// same fact embedded by its sentence and cues together, on the two models'
/// scale as it was (starts 0.21 and 0.18), was not: two of the recall
/// benchmark's tuning allusions. Talk about something else recalls neither.
#[test]
fn a_fact_embedded_by_its_cues_is_recalled_where_its_sentence_was_not() {
    use myao_domain::facts::{Second, Unlike};
    use myao_domain::meaning::Meaning;
    let b = bundled();
    let facts = two_by_cues(&b);
    let before: Vec<_> = facts
        .iter()
        .cloned()
        .map(|mut f| {
            let passage = format!("{} ({})", f.text, f.cues.join(", "));
            let v = b.embed_one(&passage, Embedded::Passage).expect("a vector");
            f.meaning = Some(Meaning::of(MODEL, &v));
            f
        })
        .collect();
    let as_it_was = ByMeaning {
        unlike: Unlike::even(0.21),
        second: Some(Second {
            at: FIRST,
            unlike: 0.18,
            span: 0.15,
        }),
        sentence: None,
        ..ByMeaning::BUNDLED
    };
    let now = facts[0].written_at + chrono::Duration::days(2);
    let recalled = |talk: &str, facts: &[myao_domain::facts::Fact], scale| -> Vec<String> {
        let v = b.embed_one(talk, Embedded::Query).expect("a vector");
        ids_recalled(talk, Meaning::of(MODEL, &v), facts, Some(scale), now)
    };
    for (talk, fact) in [
        (
            "can someone who knows their reds recommend something? I heard one of us did this for a living\n\
             bringing a bottle to my in-laws' on Saturday, they're serving lamb",
            "sommelier",
        ),
        (
            "does anyone here have one? how are they in a small flat?\n\
             thinking of rescuing one of those skinny ex-racers from the track",
            "greyhound",
        ),
    ] {
        assert!(
            recalled(talk, &facts, ByMeaning::BUNDLED).contains(&fact.to_owned()),
            "{fact}"
        );
        assert!(
            !recalled(talk, &before, as_it_was).contains(&fact.to_owned()),
            "{fact} was recalled before: the test shows nothing"
        );
        assert!(
            !recalled(talk, &before, ByMeaning::BUNDLED).contains(&fact.to_owned()),
            "{fact} is recalled by its sentence and cues at the new starts: the starts did it"
        );
    }
    let other = "the build is red again, can someone look at CI before the release";
    assert_eq!(
        recalled(other, &facts, ByMeaning::BUNDLED),
        Vec::<String>::new()
    );
}
