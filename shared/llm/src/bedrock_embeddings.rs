//! The provider embedder on Amazon Bedrock (`llm_provider` `bedrock`, the
//! `embedder` setting naming the model): InvokeModel with the body of the
//! model's family, Cohere Embed (`cohere.embed-multilingual-v3`, up to 96
//! texts a call, read as documents or as a search) or Amazon Titan Text
//! Embeddings (`amazon.titan-embed-text-v2:0`, one text a call). One attempt
//! of `llm_timeout_seconds` each, like the OpenAI-compatible embedder: a
//! failure means recall by words, and the hourly run embeds what is left.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use aws_sdk_bedrockruntime::config::retry::RetryConfig;
use aws_sdk_bedrockruntime::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_bedrockruntime::operation::invoke_model::InvokeModelError;
use aws_sdk_bedrockruntime::primitives::Blob;
use aws_sdk_bedrockruntime::Client;
use serde_json::{json, Value};

use crate::call::SERVICE;
use crate::embeddings::{model_of, unit};
use myao_aws::is_retryable;
use myao_core::ports::{Embedded, Embedder, PortError, SettingsProvider, Vectors};
use myao_domain::settings::LlmProvider;
use myao_http::{error_chain, truncate};

/// Error details quote at most this many characters of a message.
const DETAIL_CHARS: usize = 300;
/// The most texts one Cohere call embeds.
const COHERE_BATCH: usize = 96;

/// The body a model's family takes and gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Family {
    Cohere,
    Titan,
}

impl Family {
    /// The family of a model id, or of an inference profile's
    /// (`us.cohere.embed-...`).
    fn of(model: &str) -> Option<Family> {
        if model.contains("cohere.embed") {
            Some(Family::Cohere)
        } else if model.contains("amazon.titan-embed") {
            Some(Family::Titan)
        } else {
            None
        }
    }
}

/// An [`Embedder`] over Amazon Bedrock's InvokeModel.
pub struct BedrockEmbedder {
    client: Client,
    settings: Arc<dyn SettingsProvider>,
}

impl BedrockEmbedder {
    /// An embedder calling Bedrock with `config`'s Region, credentials and
    /// HTTP client, reading its model from `settings` (`embedder`). The
    /// SDK's own retries are turned off.
    pub fn new(
        config: &aws_config::SdkConfig,
        settings: Arc<dyn SettingsProvider>,
    ) -> BedrockEmbedder {
        let config = aws_sdk_bedrockruntime::config::Builder::from(config)
            .retry_config(RetryConfig::disabled())
            .build();
        BedrockEmbedder {
            client: Client::from_conf(config),
            settings,
        }
    }

    /// One InvokeModel call with `body`, its answer read as JSON.
    async fn invoke(
        &self,
        model: &str,
        body: Value,
        timeout: Duration,
    ) -> Result<Value, PortError> {
        let call = self
            .client
            .invoke_model()
            .model_id(model)
            .content_type("application/json")
            .accept("application/json")
            .body(Blob::new(body.to_string()))
            .send();
        let output = match tokio::time::timeout(timeout, call).await {
            Ok(Ok(output)) => output,
            Ok(Err(error)) => return Err(failure(error)),
            Err(_) => {
                return Err(PortError::unavailable(
                    SERVICE,
                    format!("InvokeModel timed out after {:.1} s", timeout.as_secs_f64()),
                ))
            }
        };
        serde_json::from_slice(output.body().as_ref())
            .map_err(|_| PortError::refused(SERVICE, "InvokeModel: the answer is not JSON"))
    }
}

#[async_trait]
impl Embedder for BedrockEmbedder {
    async fn model(&self) -> Result<String, PortError> {
        model_of(
            &self.settings.current().await?.embedder,
            LlmProvider::Bedrock,
        )
    }

    async fn embed(&self, texts: &[String], what: Embedded) -> Result<Vectors, PortError> {
        let settings = self.settings.current().await?;
        let model = model_of(&settings.embedder, LlmProvider::Bedrock)?;
        let timeout = Duration::from_secs(u64::from(settings.llm_timeout_seconds));
        let family = Family::of(&model).ok_or_else(|| {
            PortError::refused(
                SERVICE,
                format!("{model} is no Bedrock embedding model myao reads (Cohere Embed, Titan Text Embeddings)"),
            )
        })?;
        let mut vectors = Vec::with_capacity(texts.len());
        match family {
            Family::Cohere => {
                let input_type = match what {
                    Embedded::Passage => "search_document",
                    Embedded::Query => "search_query",
                };
                for batch in texts.chunks(COHERE_BATCH) {
                    let body = json!({"texts": batch, "input_type": input_type, "truncate": "END"});
                    let answer = self.invoke(&model, body, timeout).await?;
                    let got = answer["embeddings"]
                        .as_array()
                        .filter(|v| v.len() == batch.len());
                    for v in got.ok_or_else(|| out_of_shape("embeddings"))? {
                        vectors.push(read_vector(v).ok_or_else(|| out_of_shape("embeddings"))?);
                    }
                }
            }
            Family::Titan => {
                for text in texts {
                    let body = json!({"inputText": text, "normalize": true});
                    let answer = self.invoke(&model, body, timeout).await?;
                    vectors.push(
                        read_vector(&answer["embedding"])
                            .ok_or_else(|| out_of_shape("embedding"))?,
                    );
                }
            }
        }
        Ok(Vectors { model, vectors })
    }
}

/// A vector of an answer, made unit length; `None` when it is no list of
/// numbers, or all zeros.
fn read_vector(value: &Value) -> Option<Vec<f32>> {
    let numbers = value
        .as_array()?
        .iter()
        .map(|x| x.as_f64().map(|x| x as f32))
        .collect::<Option<Vec<f32>>>()?;
    unit(&numbers)
}

fn out_of_shape(field: &str) -> PortError {
    PortError::refused(
        SERVICE,
        format!("InvokeModel: the answer's {field} is out of shape"),
    )
}

/// A failed call: unavailable when the service or the network may do
/// better later, refused otherwise; the service's code and message, never
/// the request.
fn failure(error: SdkError<InvokeModelError>) -> PortError {
    let said = match (error.code(), error.message()) {
        (Some(code), Some(message)) => format!("{code}: {}", truncate(message, DETAIL_CHARS)),
        (Some(code), None) => code.to_owned(),
        _ => error_chain(&error, DETAIL_CHARS),
    };
    let detail = format!("InvokeModel: {said}");
    if is_retryable(&error) {
        PortError::unavailable(SERVICE, detail)
    } else {
        PortError::refused(SERVICE, detail)
    }
}

#[cfg(test)]
mod tests {
    use wiremock::matchers::{body_partial_json, method, path};
    use wiremock::{Mock, MockServer, ResponseTemplate};

    use super::*;
    use crate::test_aws::sdk_config;
    use myao_core::adapters::system::FixedSettings;
    use myao_domain::Settings;

    async fn embedder(server: &MockServer, model: &str) -> BedrockEmbedder {
        let settings = Settings {
            embedder: myao_domain::settings::Embedder::Provider {
                provider: LlmProvider::Bedrock,
                model: model.to_owned(),
            },
            llm_timeout_seconds: 5,
            ..Settings::default()
        };
        BedrockEmbedder::new(
            &sdk_config(&server.uri()).await,
            Arc::new(FixedSettings::new(settings)),
        )
    }

    fn texts() -> Vec<String> {
        vec![
            "Tom bakes bread.".to_owned(),
            "エミの実家は新潟。".to_owned(),
        ]
    }

    #[tokio::test]
    async fn cohere_embeds_the_texts_in_one_call_as_a_search_or_as_documents() {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path("/model/cohere.embed-multilingual-v3/invoke"))
            .and(body_partial_json(
                json!({"input_type": "search_query", "texts": texts()}),
            ))
            .respond_with(ResponseTemplate::new(200).set_body_json(
                json!({"embeddings": [[3.0, 4.0], [0.0, 2.0]], "id": "x", "texts": []}),
            ))
            .expect(1)
            .mount(&server)
            .await;
        let e = embedder(&server, "cohere.embed-multilingual-v3").await;
        let v = e.embed(&texts(), Embedded::Query).await.unwrap();
        assert_eq!(v.model, "cohere.embed-multilingual-v3");
        assert_eq!(v.vectors, vec![vec![0.6, 0.8], vec![0.0, 1.0]]);
        // As documents: another input type, which this stub does not answer.
        assert!(e.embed(&texts(), Embedded::Passage).await.is_err());
    }

    #[tokio::test]
    async fn titan_embeds_one_text_a_call() {
        let server = MockServer::start().await;
        for (text, v) in [
            ("Tom bakes bread.", [1.0, 0.0]),
            ("エミの実家は新潟。", [0.0, 5.0]),
        ] {
            Mock::given(method("POST"))
                .and(path("/model/amazon.titan-embed-text-v2%3A0/invoke"))
                .and(body_partial_json(
                    json!({"inputText": text, "normalize": true}),
                ))
                .respond_with(
                    ResponseTemplate::new(200)
                        .set_body_json(json!({"embedding": v, "inputTextTokenCount": 5})),
                )
                .expect(1)
                .mount(&server)
                .await;
        }
        let e = embedder(&server, "amazon.titan-embed-text-v2:0").await;
        let v = e.embed(&texts(), Embedded::Passage).await.unwrap();
        assert_eq!(v.vectors, vec![vec![1.0, 0.0], vec![0.0, 1.0]]);
    }

    #[tokio::test]
    async fn a_throttled_call_is_unavailable_and_an_unknown_model_refused_without_a_call() {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(
                ResponseTemplate::new(429)
                    .insert_header("x-amzn-errortype", "ThrottlingException")
                    .set_body_json(json!({"message": "slow down"})),
            )
            .expect(1)
            .mount(&server)
            .await;
        let e = embedder(&server, "cohere.embed-multilingual-v3").await;
        let error = e.embed(&texts(), Embedded::Query).await.unwrap_err();
        assert!(error.is_retryable(), "{error}");
        let e = embedder(&server, "amazon.nova-lite-v1:0").await;
        let error = e.embed(&texts(), Embedded::Query).await.unwrap_err();
        assert!(!error.is_retryable(), "{error}");
    }

    #[test]
    fn a_models_family_is_told_by_its_id_or_profile() {
        assert_eq!(
            Family::of("cohere.embed-multilingual-v3"),
            Some(Family::Cohere)
        );
        assert_eq!(
            Family::of("us.cohere.embed-multilingual-v3"),
            Some(Family::Cohere)
        );
        assert_eq!(
            Family::of("amazon.titan-embed-text-v2:0"),
            Some(Family::Titan)
        );
        assert_eq!(Family::of("amazon.nova-lite-v1:0"), None);
        assert_eq!(Family::of("cohere.command-r-v1:0"), None);
    }

    #[test]
    fn a_vector_is_read_as_numbers_and_made_unit_length() {
        assert_eq!(read_vector(&json!([3, 4])), Some(vec![0.6, 0.8]));
        assert_eq!(read_vector(&json!([0, 0])), None);
        assert_eq!(read_vector(&json!(["a"])), None);
        assert_eq!(read_vector(&json!({"x": 1})), None);
    }
}
