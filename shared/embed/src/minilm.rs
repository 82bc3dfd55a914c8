//! all-MiniLM-L6-v2 (sentence-transformers), run in plain Rust: BERT's
//! uncased tokenizer (`wordpiece.rs`) and its forward pass (`bert.rs`),
//! read from a folder that holds the model's `vocab.txt` and
//! `model.safetensors` (`infra/fetch-minilm.sh` writes one). English only,
//! 384 dimensions: the bundled embedder's second model.

use std::path::Path;

use crate::bert::{self, Bert};
use crate::safetensors::Tensors;
use crate::text::cut;
use crate::wordpiece::WordPiece;

/// all-MiniLM-L6-v2, loaded: its vocabulary and its weights.
pub struct MiniLm {
    words: WordPiece,
    bert: Bert,
}

impl MiniLm {
    /// The vector's dimensions.
    pub const DIMENSIONS: usize = bert::DIMENSIONS;

    /// The folder `infra/fetch-minilm.sh` writes the model to.
    pub const FETCHED: &'static str =
        concat!(env!("CARGO_MANIFEST_DIR"), "/../../models/layer/minilm");

    /// Loads the model from the folder `dir`: `vocab.txt` and
    /// `model.safetensors`, each tensor checked for the shape the forward
    /// pass reads. A missing, cut or other file is refused.
    pub fn load(dir: &Path) -> Result<MiniLm, String> {
        let vocab = dir.join("vocab.txt");
        let text =
            std::fs::read_to_string(&vocab).map_err(|e| format!("{}: {e}", vocab.display()))?;
        let words =
            WordPiece::from_vocab(&text).map_err(|e| format!("{}: {e}", vocab.display()))?;
        let model = dir.join("model.safetensors");
        let bert = Bert::load(&mut Tensors::open(&model)?)
            .map_err(|e| format!("{}: {e}", model.display()))?;
        if words.len() > bert.pieces() {
            return Err(format!(
                "{}: {} pieces for a table of {}",
                vocab.display(),
                words.len(),
                bert.pieces()
            ));
        }
        Ok(MiniLm { words, bert })
    }

    /// The ids `text` is embedded by: `[CLS]`, its pieces, `[SEP]`, at
    /// most [`MAX_IDS`](crate::wordpiece::MAX_IDS) in all, from its first
    /// [`MAX_TEXT`](crate::text::MAX_TEXT) bytes (as the bundled embedder
    /// cuts a text, before normalizing it).
    pub fn ids(&self, text: &str) -> Vec<u32> {
        self.words.encode(cut(text))
    }

    /// The unit vector of `text` (of the ids [`MiniLm::ids`] gives).
    pub fn embed(&self, text: &str) -> Vec<f32> {
        self.bert.embed(&self.ids(text))
    }
}
