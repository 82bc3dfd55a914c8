//! What the benchmarks with an in-process LLM share: the replay they run.

use std::sync::Arc;

use myao::domain::Settings;
use myao::ports::Llm;
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
