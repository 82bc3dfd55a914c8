//! The provider embedder: `POST {llm_base_url}/embeddings` of any
//! OpenAI-compatible API (OpenAI, a LiteLLM proxy, Ollama, vLLM), with the
//! model the `embedder` setting names and the LLM's key. One attempt of
//! `llm_timeout_seconds`: a failure is not retried here, since recall then
//! goes by words and the hourly memory run embeds what is left.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use crate::call::{DEFAULT_BACKOFF, SERVICE};
use crate::openai::{api_error_message, api_key, redact, ApiKey};
use myao_core::ports::{Embedded, Embedder, PortError, Secrets, SettingsProvider, Vectors};
use myao_domain::settings::{Embedder as SettingsEmbedder, LlmProvider};
use myao_http::{endpoint, transport_detail, truncate, ServiceClient};

/// Error details quote at most this many characters of an answer.
const DETAIL_CHARS: usize = 300;

/// An [`Embedder`] over an OpenAI-compatible `/embeddings` endpoint.
pub struct OpenAiEmbedder {
    client: ServiceClient,
}

impl OpenAiEmbedder {
    /// An embedder reading its endpoint and model from `settings` and its
    /// API key from the secret `key_name` (empty: never send a key), as
    /// the LLM does.
    pub fn new(
        http: reqwest::Client,
        settings: Arc<dyn SettingsProvider>,
        secrets: Arc<dyn Secrets>,
        key_name: impl Into<String>,
    ) -> OpenAiEmbedder {
        OpenAiEmbedder {
            client: ServiceClient::new(http, settings, secrets, key_name, DEFAULT_BACKOFF),
        }
    }
}

#[derive(Serialize)]
struct EmbeddingsRequest<'a> {
    model: &'a str,
    input: &'a [String],
}

#[derive(Deserialize)]
struct EmbeddingsReply {
    data: Vec<Datum>,
}

#[derive(Deserialize)]
struct Datum {
    embedding: Vec<f32>,
    #[serde(default)]
    index: Option<usize>,
}

#[async_trait]
impl Embedder for OpenAiEmbedder {
    async fn model(&self) -> Result<String, PortError> {
        let settings = self.client.settings.current().await?;
        model_of(&settings.embedder, LlmProvider::OpenAi)
    }

    async fn embed(&self, texts: &[String], _what: Embedded) -> Result<Vectors, PortError> {
        let settings = self.client.settings.current().await?;
        let model = model_of(&settings.embedder, LlmProvider::OpenAi)?;
        let url = endpoint(&settings.llm_base_url, "embeddings");
        let timeout = Duration::from_secs(u64::from(settings.llm_timeout_seconds));
        let key = api_key(&self.client).await?;
        let mut request = self
            .client
            .http
            .post(&url)
            .timeout(timeout)
            .json(&EmbeddingsRequest {
                model: &model,
                input: texts,
            });
        if let ApiKey::Bearer(key) = &key {
            request = request.bearer_auth(key);
        }
        let unavailable = |e| PortError::unavailable(SERVICE, transport_detail(e, DETAIL_CHARS));
        let response = request.send().await.map_err(unavailable)?;
        let status = response.status();
        let text = response.text().await.map_err(unavailable)?;
        if !status.is_success() {
            let message = truncate(&redact(&api_error_message(&text), &key), DETAIL_CHARS);
            let detail = format!("embeddings: HTTP {}: {message}", status.as_u16());
            return Err(if status.as_u16() == 429 || status.is_server_error() {
                PortError::unavailable(SERVICE, detail)
            } else {
                PortError::refused(SERVICE, detail)
            });
        }
        let vectors = vectors(&text, texts.len())
            .map_err(|why| PortError::refused(SERVICE, format!("embeddings: {why}")))?;
        Ok(Vectors { model, vectors })
    }
}

/// The model of `provider` the `embedder` setting names; refused when it
/// names none of `provider`'s.
pub(crate) fn model_of(
    embedder: &SettingsEmbedder,
    provider: LlmProvider,
) -> Result<String, PortError> {
    embedder
        .model_of(provider)
        .map(str::to_owned)
        .ok_or_else(|| {
            PortError::refused(
                SERVICE,
                format!("the embedder setting ({embedder}) names no {provider} model"),
            )
        })
}

/// The vectors of an answer, in the order of the texts (by `index` where
/// given), each made unit length; refused when out of shape.
fn vectors(answer: &str, texts: usize) -> Result<Vec<Vec<f32>>, &'static str> {
    let reply: EmbeddingsReply =
        serde_json::from_str(answer).map_err(|_| "the answer is not an embeddings list")?;
    if reply.data.len() != texts {
        return Err("the answer has another number of vectors than texts");
    }
    let mut out: Vec<Option<Vec<f32>>> = vec![None; texts];
    for (i, datum) in reply.data.into_iter().enumerate() {
        let slot = datum.index.unwrap_or(i);
        let vector = unit(&datum.embedding);
        if slot >= texts || out[slot].is_some() || vector.is_none() {
            return Err("a vector is missing, repeated or empty");
        }
        out[slot] = vector;
    }
    out.into_iter()
        .collect::<Option<Vec<_>>>()
        .ok_or("a vector is missing")
}

/// `v` made unit length; `None` when it is all zeros or not finite.
pub(crate) fn unit(v: &[f32]) -> Option<Vec<f32>> {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    (norm.is_finite() && norm > 0.0).then(|| v.iter().map(|x| x / norm).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answers_vectors_are_put_in_order_and_made_unit_length() {
        let answer =
            r#"{"data": [{"index": 1, "embedding": [0, 2]}, {"index": 0, "embedding": [3, 4]}]}"#;
        let v = vectors(answer, 2).unwrap();
        assert_eq!(v, vec![vec![0.6, 0.8], vec![0.0, 1.0]]);
        for bad in [
            "not json",
            r#"{"data": [{"embedding": [1, 0]}]}"#,
            r#"{"data": [{"index": 0, "embedding": [1]}, {"index": 0, "embedding": [1]}]}"#,
            r#"{"data": [{"index": 0, "embedding": [0, 0]}, {"index": 1, "embedding": [1]}]}"#,
        ] {
            assert!(vectors(bad, 2).is_err(), "{bad}");
        }
    }
}
