//! A deterministic embedder for ranking tests ([`Concepts`]): no model, the
//! same vector for the same text, so a test says which texts mean the same.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use myao_core::ports::{Embedded, Embedder, PortError, Vectors};

/// Texts mean what the concepts they contain mean: each concept is a
/// dimension, and a text's vector is the unit sum of the concepts whose
/// words it contains (lower case), or a background dimension of its own
/// when it contains none. Whether a text is a query or a passage does not
/// change it.
pub struct Concepts {
    concepts: Vec<Vec<String>>,
    failing: AtomicBool,
    calls: AtomicUsize,
    /// A call with a text holding this is refused (as a provider refuses a
    /// text it will not take).
    refused: std::sync::Mutex<Option<String>>,
}

/// The model name the test embedder stores with its vectors.
pub const TEST_MODEL: &str = "test-concepts";

impl Concepts {
    /// An embedder whose concepts are the groups of `words` (each group one
    /// meaning: "sourdough", "bread", "パン").
    pub fn new(groups: &[&[&str]]) -> Concepts {
        Concepts {
            concepts: groups
                .iter()
                .map(|g| g.iter().map(|w| w.to_lowercase()).collect())
                .collect(),
            failing: AtomicBool::new(false),
            calls: AtomicUsize::new(0),
            refused: std::sync::Mutex::new(None),
        }
    }

    /// From now on a call with a text holding `word` is refused.
    pub fn refuse_texts_with(&self, word: &str) {
        if let Ok(mut refused) = self.refused.lock() {
            *refused = Some(word.to_lowercase());
        }
    }

    /// From now on every call fails (as an embedder that is down).
    pub fn fail(&self) {
        self.failing.store(true, Ordering::SeqCst);
    }

    /// How many calls it answered or failed.
    pub fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }

    /// The vector of `text`.
    pub fn vector(&self, text: &str) -> Vec<f32> {
        let text = text.to_lowercase();
        let mut v = vec![0f32; self.concepts.len() + 1];
        for (i, words) in self.concepts.iter().enumerate() {
            if words.iter().any(|w| text.contains(w.as_str())) {
                v[i] = 1.0;
            }
        }
        if v.iter().all(|x| *x == 0.0) {
            v[self.concepts.len()] = 1.0;
        }
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.iter().map(|x| x / norm).collect()
    }
}

#[async_trait::async_trait]
impl Embedder for Concepts {
    async fn model(&self) -> Result<String, PortError> {
        Ok(TEST_MODEL.to_owned())
    }

    async fn embed(&self, texts: &[String], _what: Embedded) -> Result<Vectors, PortError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        if self.failing.load(Ordering::SeqCst) {
            return Err(PortError::unavailable("embedder", "down (test)"));
        }
        let refused = self.refused.lock().ok().and_then(|r| r.clone());
        if let Some(word) = refused {
            if texts.iter().any(|t| t.to_lowercase().contains(&word)) {
                return Err(PortError::refused(
                    "embedder",
                    "a text it will not take (test)",
                ));
            }
        }
        Ok(Vectors {
            model: TEST_MODEL.to_owned(),
            vectors: texts.iter().map(|t| self.vector(t)).collect(),
        })
    }
}
