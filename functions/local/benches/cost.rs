//! What the LLM costs, per 100 messages of an export: calls and input and
//! output tokens per role (judgment, reply, memory, reflection), and the
//! share of the judgment and reply prompts' input that lies in a prefix an
//! earlier prompt of the same role already sent (what a provider's prompt
//! cache could bill at a fraction: OpenAI caches prefixes of 1,024 tokens
//! and more, in steps of 128).
//!
//! The export goes through the replay (ingest, the job board on a virtual
//! clock, judgment, response, the hourly memory sweeps and reflection), so
//! the calls are the production code's. The LLM is an in-process script
//! whose answers have the size a model's would: a memory of about 1,500
//! characters, a reply of a few sentences, a judgment that says yes to one
//! conversation in four, reflection that finds nothing.
//!
//! `cargo bench -p myao-local --bench cost -- <export>` (the example export
//! without one); `functions/local/benches/cost.sh` runs it on the two dev
//! corpora beside the repository.

// Tests may be longer than production code's 80 lines (clippy.toml): a
// table of cases or a scenario reads best whole.
#![allow(clippy::too_many_lines)]

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use myao_core::ports::{Llm, LlmReply, LlmRequest, LlmRole, PortError};
use myao_domain::budget::estimate_tokens;
use myao_domain::Settings;
use myao_local::export::{self, Filter};
use serde_json::json;

mod scripted;
use scripted::{digest_answer, replay_scripted, DIGEST_MARK};

/// The kinds of call, as the table shows them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Judgment,
    Reply,
    Memory,
    Reflection,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Judgment => "judgment",
            Kind::Reply => "reply",
            Kind::Memory => "memory",
            Kind::Reflection => "reflection",
        }
    }
}

/// The calls of one kind.
#[derive(Debug, Default, Clone)]
struct Tally {
    calls: u64,
    input_tokens: u64,
    output_tokens: u64,
    /// Characters of input, and of them those in a cacheable prefix.
    chars: u64,
    cacheable_chars: u64,
    /// The most a cache could hold of them with the sections in the
    /// design's order: every prompt after the first of its role in its
    /// channel cached whole; the first as it is (what follows its channel
    /// list was never sent before).
    bound_chars: u64,
    /// The prompts that were the first of their role in their channel, and
    /// their characters.
    firsts: u64,
    first_chars: u64,
}

/// A memory of the size a model writes (about 1,500 characters).
fn memory_text() -> String {
    let line = "- チームはビルドの遅さとリリース手順について話し、次の金曜までに直す案を決めた。";
    std::iter::repeat_n(line, 1_500 / line.chars().count() + 1)
        .collect::<Vec<_>>()
        .join("\n")
}

/// A thread's summary of the size a model writes (about 500 characters).
fn thread_text() -> String {
    memory_text().chars().take(500).collect()
}

/// The fewest tokens of a prefix a provider caches, and the steps it caches in.
const CACHE_MIN_TOKENS: usize = 1_024;
const CACHE_STEP_TOKENS: usize = 128;
/// How many earlier prompts of a role a prompt's prefix is compared with.
const LOOKBACK: usize = 64;

/// The script.
#[derive(Default)]
struct Script {
    tally: Mutex<BTreeMap<Kind, Tally>>,
    /// The latest prompts of each role (for the shared prefixes).
    recent: Mutex<BTreeMap<Kind, Vec<String>>>,
    /// Memory calls by their task (`スレッドの要約`, `チャンネルの短期記憶`, ...).
    tasks: Mutex<BTreeMap<String, u64>>,
    /// Judgment and reply prompts by the section their shared prefix ends in.
    breaks: Mutex<BTreeMap<(Kind, String), u64>>,
    /// The channels that had a prompt of each role (for the bound).
    channels: Mutex<BTreeMap<Kind, std::collections::BTreeSet<String>>>,
}

/// The channel a judgment or reply prompt is in, as its conversation's
/// first sentence names it (`現在は、#name ...`, `現在、あなたは #name ...`).
fn prompt_channel(prompt: &str) -> Option<String> {
    let line = prompt
        .lines()
        .find(|l| l.starts_with("現在は、#") || l.starts_with("現在、あなたは #"))?;
    let name = line.split('#').nth(1)?.split(' ').next()?;
    Some(name.to_owned())
}

/// The characters a cache bills at its price, of a prefix of `prefix`
/// characters and `tokens` tokens: none below [`CACHE_MIN_TOKENS`], else
/// down to a step of [`CACHE_STEP_TOKENS`].
fn in_steps(prefix: usize, tokens: usize) -> usize {
    if tokens < CACHE_MIN_TOKENS {
        return 0;
    }
    let kept = tokens / CACHE_STEP_TOKENS * CACHE_STEP_TOKENS;
    prefix * kept / tokens
}

/// A memory prompt's task: the title of its `## 課題:` section.
fn task(prompt: &str) -> String {
    prompt
        .lines()
        .find_map(|l| l.strip_prefix("## 課題: "))
        .unwrap_or("other")
        .trim()
        .to_owned()
}

/// The characters of `prompt` in a prefix shared with one of `earlier`, as
/// a cache would count them: none below [`CACHE_MIN_TOKENS`], else down to a
/// step of [`CACHE_STEP_TOKENS`].
/// Also the section (`## ...` heading) in which the longest shared prefix
/// ends: what broke it.
fn cacheable_at(prompt: &str, earlier: &[String]) -> (usize, String) {
    let shared = earlier
        .iter()
        .map(|e| {
            prompt
                .char_indices()
                .zip(e.chars())
                .find(|((_, a), b)| a != b)
                .map_or(prompt.len().min(e.len()), |((at, _), _)| at)
        })
        .max()
        .unwrap_or(0);
    let prefix = &prompt[..shared];
    let section = prefix
        .rfind("\n## ")
        .map(|at| prefix[at + 1..].lines().next().unwrap_or("").to_owned())
        .unwrap_or_else(|| "(before any section)".to_owned());
    (
        in_steps(prefix.chars().count(), estimate_tokens(prefix)),
        section,
    )
}

#[async_trait]
impl Llm for Script {
    async fn complete(&self, request: &LlmRequest) -> Result<LlmReply, PortError> {
        let prompt = &request.system;
        let (kind, text) = match request.role {
            LlmRole::Memory if prompt.contains(DIGEST_MARK) => {
                *self.tasks.lock().expect("lock").entry(task(prompt)).or_default() += 1;
                let answer = digest_answer(prompt, &memory_text(), &thread_text(), json!([]));
                (Kind::Memory, answer)
            }
            LlmRole::Memory if request.json => (Kind::Reflection, json!({"facts": []}).to_string()),
            LlmRole::Memory => {
                *self.tasks.lock().expect("lock").entry(task(prompt)).or_default() += 1;
                (Kind::Memory, memory_text())
            }
            LlmRole::Judgment => {
                // One conversation in four welcomes a reply, by the prompt's
                // length: the same export, the same answers.
                let yes = prompt.len().is_multiple_of(4);
                let answer = json!({"should_respond": yes, "response_type": "full",
                    "emoji": null, "reason": "the question is still open and I know this",
                    "confidence": 0.8, "delay_seconds": 30});
                (Kind::Judgment, answer.to_string())
            }
            LlmRole::Response => (
                Kind::Reply,
                "それならキャッシュを消してから再起動してみて。だめなら設定ファイルの権限も見てほしいにゃ。"
                    .to_owned(),
            ),
        };
        let (shared, bound) = if matches!(kind, Kind::Judgment | Kind::Reply) {
            let mut recent = self.recent.lock().expect("lock");
            let earlier = recent.entry(kind).or_default();
            let (shared, section) = cacheable_at(prompt, earlier);
            *self
                .breaks
                .lock()
                .expect("lock")
                .entry((kind, section))
                .or_default() += 1;
            earlier.push(prompt.clone());
            if earlier.len() > LOOKBACK {
                earlier.remove(0);
            }
            let mut channels = self.channels.lock().expect("lock");
            let seen = channels.entry(kind).or_default();
            let again = prompt_channel(prompt).is_some_and(|c| !seen.insert(c));
            let whole = in_steps(prompt.chars().count(), estimate_tokens(prompt));
            let chars = prompt.chars().count() as u64;
            let mut tally = self.tally.lock().expect("lock");
            let t = tally.entry(kind).or_default();
            if !again {
                t.firsts += 1;
                t.first_chars += chars;
            }
            (shared, if again { whole.max(shared) } else { shared })
        } else {
            (0, 0)
        };
        let input = estimate_tokens(prompt) as u64;
        let output = estimate_tokens(&text) as u64;
        let mut tally = self.tally.lock().expect("lock");
        let t = tally.entry(kind).or_default();
        t.calls += 1;
        t.input_tokens += input;
        t.output_tokens += output;
        t.chars += prompt.chars().count() as u64;
        t.cacheable_chars += shared as u64;
        t.bound_chars += bound as u64;
        Ok(LlmReply {
            text,
            prompt_tokens: input,
            completion_tokens: output,
            cached_tokens: 0,
        })
    }
}

fn per_100(n: u64, messages: usize) -> f64 {
    100.0 * n as f64 / messages.max(1) as f64
}

fn main() {
    // `cargo bench` passes `--bench`; the first other argument is the export.
    let export_path = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with("--"))
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/export"));
    let export = export::read(&export_path, &Filter::default()).expect("an export");
    let script = Arc::new(Script::default());
    let summary = replay_scripted(&export, Settings::default(), script.clone());
    let messages = summary.messages;
    let tally = script.tally.lock().expect("lock").clone();

    println!();
    println!(
        "LLM cost of {}: {messages} messages, default settings, hourly memory sweeps",
        export_path.display()
    );
    println!(
        "{:<12} {:>14} {:>16} {:>17} {:>20}",
        "role", "calls/100 msg", "input tok/100", "output tok/100", "cacheable input"
    );
    let mut memory_family = 0;
    let (mut chars, mut cacheable_chars, mut bound_chars) = (0, 0, 0);
    let mut bounds = Vec::new();
    for kind in [Kind::Judgment, Kind::Reply, Kind::Memory, Kind::Reflection] {
        let t = tally.get(&kind).cloned().unwrap_or_default();
        let share = if matches!(kind, Kind::Judgment | Kind::Reply) {
            chars += t.chars;
            cacheable_chars += t.cacheable_chars;
            bound_chars += t.bound_chars;
            if t.chars == 0 {
                "–".to_owned()
            } else {
                bounds.push(format!(
                    "{} {:.1}% ({} of {} prompts, {:.0}% of its input, the first of their role in their channel)",
                    kind.name(),
                    100.0 * t.bound_chars as f64 / t.chars as f64,
                    t.firsts,
                    t.calls,
                    100.0 * t.first_chars as f64 / t.chars as f64
                ));
                format!("{:.1}%", 100.0 * t.cacheable_chars as f64 / t.chars as f64)
            }
        } else {
            memory_family += t.calls;
            String::new()
        };
        println!(
            "{:<12} {:>14.1} {:>16.0} {:>17.0} {:>20}",
            kind.name(),
            per_100(t.calls, messages),
            per_100(t.input_tokens, messages),
            per_100(t.output_tokens, messages),
            share
        );
    }
    let tasks = script.tasks.lock().expect("lock").clone();
    let by_task: Vec<String> = tasks
        .iter()
        .map(|(task, n)| format!("{task} {:.1}", per_100(*n, messages)))
        .collect();
    println!(
        "memory calls per 100 messages by task: {}",
        by_task.join(", ")
    );
    let breaks = script.breaks.lock().expect("lock").clone();
    for kind in [Kind::Judgment, Kind::Reply] {
        let sections: Vec<String> = breaks
            .iter()
            .filter(|((k, _), _)| *k == kind)
            .map(|((_, section), n)| format!("{section} {n}"))
            .collect();
        println!(
            "{} prompts by the section their shared prefix ends in: {}",
            kind.name(),
            sections.join(", ")
        );
    }
    println!(
        "memory-family calls per 100 messages: {:.1}; judgment and reply input in a cacheable prefix: {}",
        per_100(memory_family, messages),
        if chars == 0 {
            "–".to_owned()
        } else {
            format!("{:.1}%", 100.0 * cacheable_chars as f64 / chars as f64)
        }
    );
    if chars > 0 {
        println!(
            "the most the design's order could make cacheable: {:.1}% (every judgment or reply prompt after the first of its role in its channel cached whole, its new messages too): {}",
            100.0 * bound_chars as f64 / chars as f64,
            bounds.join(", ")
        );
    }
}
