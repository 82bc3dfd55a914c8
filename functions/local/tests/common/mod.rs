//! What the local mode's integration tests share: an OpenAI-compatible LLM
//! stub.

use serde_json::json;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Respond, ResponseTemplate};

/// A chat completion whose answer is `text`.
pub fn completion(text: &str) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({
        "choices": [{"message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 10}
    }))
}

/// An LLM stub answering with `responder`; returns it and its base URL.
pub async fn llm_stub(responder: impl Respond + 'static) -> (MockServer, String) {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(responder)
        .mount(&server)
        .await;
    let base = format!("{}/v1", server.uri());
    (server, base)
}
