//! What the benchmarks with an in-process LLM share: the replay they run.

use std::sync::Arc;

use myao_core::ports::Llm;
use myao_domain::Settings;
use myao_local::export::Export;
use myao_local::replay::{self, Options};
use myao_local::timeline::{Recorder, Summary};

/// Replays `export` with `settings` and the in-process LLM `llm` (its
/// events discarded), on a runtime of its own; returns the summary.
pub fn replay_scripted(export: &Export, settings: Settings, llm: Arc<dyn Llm>) -> Summary {
    let mut options = Options::dry_run(settings);
    options.llm = Some(llm);
    options.llm_label = Some("scripted".to_owned());
    let mut recorder = Recorder {
        discard_events: true,
        ..Recorder::default()
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    rt.block_on(replay::run(export, options, &mut recorder))
        .expect("replayed")
}

/// The heading of a channel's digest prompt (`templates/memory_digest.j2`).
pub const DIGEST_MARK: &str = "## 課題: チャンネルの記憶の更新";

/// A digest's answer as a model writes it: `memory` for the channel's
/// short-term memory, and for its long-term one when asked; `thread` for
/// each thread it asks about; `facts` (a JSON list) when it asks for facts.
pub fn digest_answer(prompt: &str, memory: &str, thread: &str, facts: serde_json::Value) -> String {
    let asks = |section: &str| prompt.contains(&format!("\n### {section}:"));
    let threads: serde_json::Map<String, serde_json::Value> = prompt
        .split("\n### threads:")
        .nth(1)
        .and_then(|rest| rest.split("\n### ").next())
        .unwrap_or("")
        .lines()
        .filter_map(|l| l.strip_prefix("- スレッド "))
        .map(|l| l.split('（').next().unwrap_or(l).trim().to_owned())
        .map(|ts| (ts, serde_json::Value::from(thread)))
        .collect();
    serde_json::json!({
        "channel": asks("channel").then_some(memory),
        "long": asks("long").then_some(memory),
        "threads": threads,
        "facts": if asks("facts") { facts } else { serde_json::json!([]) },
    })
    .to_string()
}
