//! The bundled embedder as built: it loads from the package with no
//! network, gives the same vectors on every run, and tells meaning apart in
//! English and Japanese. Needs `infra/fetch-embedder.sh` (which
//! `infra/test.sh` runs): without the model these tests fail, on purpose.

use myao_core::ports::{Embedded, Embedder};
use myao_embed::{Bundled, DIMENSIONS, MODEL};

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
        let norm = cosine(v, v).sqrt();
        assert!((norm - 1.0).abs() < 1e-3, "not unit length: {norm}");
    }
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

/// These tests need the engine: a build without it fails here, loudly.
#[cfg(not(myao_e5))]
#[test]
fn the_build_has_the_engine() {
    panic!("built without the embedder's engine: run infra/fetch-embedder.sh");
}

/// A file that is not the pinned model (another, cut short, missing) is
/// refused before the engine reads it: the engine trusts its offsets. The
/// build has the engine (these tests need it).
#[test]
fn a_file_that_is_not_the_model_is_refused_not_a_crash() {
    let dir = std::env::temp_dir().join(format!("myao-embed-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("not-a-model.bin");
    std::fs::write(&path, b"hello, this is not a model").unwrap();
    assert!(Bundled::load(&path).is_err());
    assert!(Bundled::load(&dir.join("missing.bin")).is_err());
    // The real model's first megabyte, as a download cut short leaves it.
    let model = std::fs::read(myao_embed::model_path().expect("a model path")).unwrap();
    let cut = dir.join("cut.bin");
    std::fs::write(&cut, &model[..1 << 20]).unwrap();
    assert!(Bundled::load(&cut).is_err());
    // The same size, other bytes: refused by the engine's own check.
    let mut other = model.clone();
    other[..8].copy_from_slice(b"NOTAMODL");
    let same_size = dir.join("same-size.bin");
    std::fs::write(&same_size, &other).unwrap();
    assert!(Bundled::load(&same_size).is_err());
    std::fs::remove_dir_all(&dir).ok();
}
