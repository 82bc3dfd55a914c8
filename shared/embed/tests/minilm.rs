//! all-MiniLM-L6-v2 as built: its ids and vectors are those of the
//! reference (Hugging Face's tokenizer and a NumPy forward pass of the same
//! weights), and a folder that is not the model is refused, not a crash.
//! Needs `infra/fetch-minilm.sh`, or `MYAO_MINILM_MODEL` naming a folder
//! with `vocab.txt` and `model.safetensors`: without the model these tests
//! fail, on purpose.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use myao_embed::MiniLm;

/// The model's folder: `MYAO_MINILM_MODEL`, else the layer's, else the
/// one the fetch writes.
fn folder() -> PathBuf {
    myao_embed::minilm_path().unwrap_or_else(|| PathBuf::from(MiniLm::FETCHED))
}

/// The model, loaded once for all the tests.
fn model() -> &'static MiniLm {
    static MODEL: OnceLock<MiniLm> = OnceLock::new();
    MODEL.get_or_init(|| match MiniLm::load(&folder()) {
        Ok(m) => m,
        Err(e) => panic!("all-MiniLM-L6-v2 did not load ({e}): run infra/fetch-minilm.sh"),
    })
}

/// A reference text: its ids, and its vector's first 8 and last 4 values.
struct Reference {
    text: &'static str,
    ids: &'static [u32],
    first: [f32; 8],
    last: [f32; 4],
}

const REFERENCES: [Reference; 4] = [
    Reference {
        text: "I have a severe peanut allergy.",
        ids: &[101, 1045, 2031, 1037, 5729, 21443, 2035, 24395, 1012, 102],
        first: [
            -0.00012156229,
            -0.006812452,
            0.012790037,
            0.016008642,
            -0.0022566167,
            0.003013485,
            -0.0033897017,
            0.086863786,
        ],
        last: [0.06860493, -0.06345554, -0.054608326, 0.083635665],
    },
    Reference {
        text: "Café déjà vu: naïve résumé!",
        ids: &[101, 7668, 2139, 3900, 24728, 1024, 15743, 13746, 999, 102],
        first: [
            -0.08090809,
            -0.00402788,
            0.05497359,
            0.036636584,
            0.0621664,
            0.056206644,
            -0.046931196,
            -0.046921406,
        ],
        last: [0.11578054, -0.009488754, -0.08815774, -0.0054651955],
    },
    Reference {
        text: "should I leave out the Reese's ones? somebody here reacts badly to a single crumb",
        ids: &[
            101, 2323, 1045, 2681, 2041, 1996, 15883, 1005, 1055, 3924, 1029, 8307, 2182, 27325,
            6649, 2000, 1037, 2309, 13675, 25438, 102,
        ],
        first: [
            -0.00809076,
            -0.021403503,
            0.07179956,
            -0.042369667,
            -0.032336395,
            -0.07816557,
            0.050360322,
            0.00565347,
        ],
        last: [0.030161224, -0.09322629, -0.006009757, 0.030139066],
    },
    Reference {
        text: "supercalifragilisticexpialidocious x2 東京\tand\u{200B}zero-width",
        ids: &[
            101, 3565, 9289, 10128, 29181, 24411, 4588, 10288, 19312, 21273, 10085, 6313, 1060,
            2475, 1879, 1755, 1998, 6290, 2080, 1011, 9381, 102,
        ],
        first: [
            0.07793693,
            0.016027078,
            0.06551577,
            -0.031117354,
            -0.08997194,
            -0.018032094,
            0.0070641134,
            0.056901574,
        ],
        last: [0.06516999, 0.040765785, -0.10264755, 0.027916187],
    },
];

#[test]
fn the_ids_are_the_reference_tokenizers() {
    for r in &REFERENCES {
        assert_eq!(model().ids(r.text), r.ids, "{:?}", r.text);
    }
}

#[test]
fn the_vectors_are_the_references_to_within_1e_5() {
    for r in &REFERENCES {
        let v = model().embed(r.text);
        assert_eq!(v.len(), MiniLm::DIMENSIONS);
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-5, "not unit length: {norm}");
        let got = v[..8].iter().chain(&v[v.len() - 4..]);
        for (i, (g, want)) in got.zip(r.first.iter().chain(&r.last)).enumerate() {
            assert!(
                (g - want).abs() < 1e-5,
                "{:?}: value {i} is {g}, not {want}",
                r.text
            );
        }
    }
}

#[test]
fn a_paraphrase_is_nearer_than_an_unrelated_line() {
    let m = model();
    let cosine = |a: &str, b: &str| -> f32 {
        let (a, b) = (m.embed(a), m.embed(b));
        a.iter().zip(&b).map(|(x, y)| x * y).sum()
    };
    let fact = REFERENCES[0].text;
    assert!(cosine(fact, REFERENCES[2].text) > cosine(fact, "the CI build is red again"));
}

#[test]
fn a_long_text_is_cut_to_128_ids_and_still_embeds() {
    let text = "the quick brown fox jumps over the lazy dog. ".repeat(100);
    let ids = model().ids(&text);
    assert_eq!(ids.len(), 128);
    assert_eq!((ids[0], ids[127]), (101, 102));
    let v = model().embed(&text);
    assert_eq!(v.len(), MiniLm::DIMENSIONS);
    let longer = "the quick brown fox jumps over the lazy dog. ".repeat(300);
    assert_eq!(model().embed(&longer), v, "both are their first 126 pieces");
}

/// A copy of the model's folder with `vocab.txt` as `vocab` gives (none
/// when `None`) and `model.safetensors` as `weights` gives.
fn broken(name: &str, vocab: Option<Vec<u8>>, weights: Option<Vec<u8>>) -> Result<MiniLm, String> {
    let dir = std::env::temp_dir().join(format!("myao-minilm-{}-{name}", std::process::id()));
    std::fs::remove_dir_all(&dir).ok();
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    if let Some(vocab) = vocab {
        std::fs::write(dir.join("vocab.txt"), vocab).expect("a copy");
    }
    if let Some(weights) = weights {
        std::fs::write(dir.join("model.safetensors"), weights).expect("a copy");
    }
    let loaded = MiniLm::load(&dir);
    std::fs::remove_dir_all(&dir).ok();
    loaded
}

/// A folder without the model, or with a file cut short or of another
/// kind, is refused with an error that names the file, not a crash.
#[test]
fn a_missing_or_cut_file_is_refused_not_a_crash() {
    let read = |name: &str| std::fs::read(folder().join(name)).unwrap();
    let (vocab, weights) = (read("vocab.txt"), read("model.safetensors"));
    let refused = |name: &str, v: Option<&[u8]>, w: Option<&[u8]>, file: &str| match broken(
        name,
        v.map(<[u8]>::to_vec),
        w.map(<[u8]>::to_vec),
    ) {
        Ok(_) => panic!("{name}: loaded"),
        Err(e) => assert!(e.contains(file), "{name}: {e}"),
    };
    refused("empty", None, None, "vocab.txt");
    refused("no-weights", Some(&vocab), None, "model.safetensors");
    refused("no-vocab", None, Some(&weights), "vocab.txt");
    refused(
        "not-a-vocab",
        Some(b"hello\nworld\n"),
        Some(&weights),
        "vocab.txt",
    );
    for cut in [0, 7, 8, 100, 11_416, 5_000_000, weights.len() - 1] {
        let name = format!("cut-{cut}");
        refused(
            &name,
            Some(&vocab),
            Some(&weights[..cut]),
            "model.safetensors",
        );
    }
    let mut bigger_vocab = vocab.clone();
    bigger_vocab.extend_from_slice(b"one\nmore\n");
    refused(
        "too-many-pieces",
        Some(&bigger_vocab),
        Some(&weights),
        "pieces",
    );
}

/// A safetensors file that is whole but is not this model (a tensor
/// missing, or of another shape) is refused, naming the tensor.
#[test]
fn weights_of_another_model_are_refused() {
    let vocab = std::fs::read(folder().join("vocab.txt")).unwrap();
    let file = |header: &str, data: &[u8]| {
        let mut out = (header.len() as u64).to_le_bytes().to_vec();
        out.extend_from_slice(header.as_bytes());
        out.extend_from_slice(data);
        out
    };
    let empty = file("{}", &[]);
    let e = broken("no-tensors", Some(vocab.clone()), Some(empty))
        .err()
        .unwrap();
    assert!(e.contains("embeddings."), "{e}");
    let small = file(
        r#"{"embeddings.token_type_embeddings.weight":{"dtype":"F32","shape":[1,4],"data_offsets":[0,16]}}"#,
        &[0; 16],
    );
    let e = broken("other-shape", Some(vocab), Some(small))
        .err()
        .unwrap();
    assert!(
        e.contains("token_type_embeddings") && e.contains("[1, 4]"),
        "{e}"
    );
}

#[test]
fn the_folder_exists_where_the_tests_look() {
    assert!(
        Path::new(&folder()).join("model.safetensors").is_file(),
        "run infra/fetch-minilm.sh"
    );
}
