//! Stubs of the outside HTTP services (an OpenAI-compatible LLM, the Slack
//! Web API) on wiremock servers, and what they received.

use serde_json::json;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

/// An OpenAI-compatible chat-completions answer holding `content`, its
/// usage 100 prompt and 20 completion tokens.
pub fn completion(content: &str) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": content},
            "finish_reason": "stop"
        }],
        "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}
    }))
}

/// An OpenAI-compatible LLM stub answering every chat completion with
/// `responder`; the server (keep it alive) and its base URL (`.../v1`).
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

/// Answers the next `verb` request to `at` with `answer`, once, ahead of
/// the server's standing mocks (priority 1, above wiremock's default 5):
/// a test's one failure or slow answer on a stub that otherwise answers.
pub async fn mount_once(server: &MockServer, verb: &str, at: &str, answer: ResponseTemplate) {
    Mock::given(method(verb))
        .and(path(at))
        .respond_with(answer)
        .up_to_n_times(1)
        .with_priority(1)
        .mount(server)
        .await;
}

/// Answers the first `verb` request (to any path) with `first` and every
/// later one with `then`: a refusal or a rate limit, then success.
pub async fn first_then(
    server: &MockServer,
    verb: &str,
    first: ResponseTemplate,
    then: ResponseTemplate,
) {
    Mock::given(method(verb))
        .respond_with(first)
        .up_to_n_times(1)
        .mount(server)
        .await;
    Mock::given(method(verb))
        .respond_with(then)
        .mount(server)
        .await;
}

/// The requests `server` received, in order (none when it records none).
pub async fn requests(server: &MockServer) -> Vec<Request> {
    server.received_requests().await.unwrap_or_default()
}
