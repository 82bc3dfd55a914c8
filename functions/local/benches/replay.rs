//! Replay throughput: messages per second through ingest, judgment,
//! response and memory on the virtual clock, with an in-process LLM stub.
//!
//! - `replay/generated`: 10,000 generated messages (several channels,
//!   threads, bursts; deterministic).
//! - `replay/irc-disentanglement`: real chat logs, when the data folder
//!   `../shared/data/irc-disentanglement` (beside the workspace) exists;
//!   read at run time, never copied into the repository. Skipped otherwise.
//!
//! `cargo bench -p myao-local --bench replay`

// Tests may be longer than production code's 80 lines (clippy.toml): a
// table of cases or a scenario reads best whole.
#![allow(clippy::too_many_lines)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use myao_core::ports::{Llm, LlmReply, LlmRequest, LlmRole, PortError};
use myao_domain::{Channel, ChannelId, Settings, User, UserId, Visibility};
use myao_local::export::{Entry, Export};
use myao_local::replay::{self, Options};
use myao_local::timeline::Recorder;
use serde_json::json;

mod common;
use common::{people, public_channels, Lcg};

/// Answers like a model would, deterministically: speaks in about one
/// conversation in four, replies and memories are short.
struct StubLlm;

#[async_trait]
impl Llm for StubLlm {
    async fn complete(&self, request: &LlmRequest) -> Result<LlmReply, PortError> {
        let text = match request.role {
            LlmRole::Judgment => {
                let speak = fnv(request.system.as_bytes()).is_multiple_of(4);
                json!({"should_respond": speak, "reason": "bench", "confidence": 0.8, "delay_seconds": 0})
                    .to_string()
            }
            LlmRole::Response => "にゃ、なるほど".to_owned(),
            LlmRole::Memory => "- the team talked about builds and lunch".to_owned(),
        };
        Ok(LlmReply {
            text,
            prompt_tokens: request.system.len() as u64 / 4,
            completion_tokens: 10,
            cached_tokens: 0,
        })
    }
}

fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// `count` messages over five channels and twelve people: bursts of 1-8
/// messages a few seconds to a minute apart, quiet gaps of minutes to hours
/// between them, a third of the bursts in threads.
fn generated(count: usize) -> Export {
    let mut rng = Lcg(7);
    let names = ["general", "random", "dev", "design", "support"];
    let channels = public_channels(names);
    let users = people((0..12).map(|i| format!("user{i}")));
    let words = [
        "build",
        "deploy",
        "lunch",
        "review",
        "tests",
        "coffee",
        "meeting",
        "bug",
        "release",
        "docs",
        "ランチ",
        "会議",
        "レビュー",
        "猫",
    ];
    let mut entries = Vec::with_capacity(count);
    let mut now: u64 = 1_767_603_600; // 2026-01-05 09:00 UTC
    let mut roots: Vec<Vec<u64>> = vec![Vec::new(); channels.len()];
    while entries.len() < count {
        now += 30 + rng.below(900);
        let c = rng.below(channels.len() as u64) as usize;
        let thread = if rng.below(3) == 0 && !roots[c].is_empty() {
            let k = roots[c].len() as u64;
            Some(roots[c][(k - 1 - rng.below(k.min(5))) as usize])
        } else {
            None
        };
        for _ in 0..1 + rng.below(8) {
            if entries.len() >= count {
                break;
            }
            now += 3 + rng.below(60);
            let user = &users[rng.below(users.len() as u64) as usize];
            let text: Vec<&str> = (0..3 + rng.below(12))
                .map(|_| words[rng.below(words.len() as u64) as usize])
                .collect();
            let mention = if rng.below(200) == 0 { "<@UMYAO> " } else { "" };
            let ts = format!("{now}.{:06}", entries.len() % 1_000_000);
            let mut value = json!({"type": "message", "user": user.id, "ts": ts,
                                   "text": format!("{mention}{}", text.join(" "))});
            match thread {
                Some(root) => value["thread_ts"] = json!(format!("{root}.000000")),
                None if roots[c].len() < 1_000 => {
                    // Every top-level message may start a thread; its ts has
                    // zero micros so that replies can name it.
                    value["ts"] = json!(format!("{now}.000000"));
                    roots[c].push(now);
                }
                None => {}
            }
            entries.push(Entry::from_json(&channels[c].id, value, "generated").expect("an entry"));
        }
    }
    Export::new("generated", users, channels, entries)
}

/// The IRC logs beside the workspace, as Slack channels: one per log,
/// all starting at the same instant; a reply (by the annotations) goes in
/// the thread of its conversation's first message.
fn irc(dir: &Path) -> Option<Export> {
    let mut logs: Vec<PathBuf> = std::fs::read_dir(dir.join("dev"))
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().ends_with(".raw.txt"))
        .collect();
    logs.sort();
    let mut users: HashMap<String, User> = HashMap::new();
    let mut channels = Vec::new();
    let mut entries = Vec::new();
    let base: u64 = 1_767_603_600;
    for (n, log) in logs.iter().enumerate() {
        let text = std::fs::read_to_string(log).ok()?;
        let annotation = log.to_string_lossy().replace(".raw.txt", ".annotation.txt");
        let mut parent: HashMap<usize, usize> = HashMap::new();
        for line in std::fs::read_to_string(annotation)
            .unwrap_or_default()
            .lines()
        {
            let mut it = line.split_whitespace();
            if let (Some(Ok(p)), Some(Ok(c))) =
                (it.next().map(str::parse), it.next().map(str::parse))
            {
                if p < c {
                    parent.entry(c).or_insert(p);
                }
            }
        }
        let channel = Channel {
            id: ChannelId::parse(&format!("CIRC{n:03}")).expect("id"),
            name: format!("irc-{n}"),
            visibility: Visibility::PUBLIC,
        };
        let mut first_minute = None;
        let mut ts_of: HashMap<usize, String> = HashMap::new();
        for (i, line) in text.lines().enumerate() {
            // `[HH:MM] <nick> text`; joins, quits and `=== ` lines are not messages.
            let Some(rest) = line.strip_prefix('[') else {
                continue;
            };
            let Some((hm, rest)) = rest.split_once("] <") else {
                continue;
            };
            let Some((nick, said)) = rest.split_once("> ") else {
                continue;
            };
            let Some((h, m)) = hm.split_once(':') else {
                continue;
            };
            let (Ok(h), Ok(m)) = (h.parse::<u64>(), m.parse::<u64>()) else {
                continue;
            };
            let minute = h * 60 + m;
            let first = *first_minute.get_or_insert(minute);
            // Minutes since the log's start (a log may cross midnight).
            let offset = (minute + 24 * 60 - first) % (24 * 60);
            let ts = format!("{}.{:06}", base + offset * 60 + (i as u64 % 60), i);
            let id = format!("U{:016x}", fnv(nick.as_bytes()));
            users.entry(id.clone()).or_insert_with(|| User {
                id: UserId::parse(&id).expect("id"),
                name: nick.to_owned(),
                is_bot: false,
            });
            let mut value = json!({"type": "message", "user": id, "text": said, "ts": ts});
            let mut root = i;
            while let Some(p) = parent.get(&root) {
                root = *p;
            }
            if root != i {
                if let Some(root_ts) = ts_of.get(&root) {
                    value["thread_ts"] = json!(root_ts);
                }
            }
            ts_of.insert(i, ts);
            if let Ok(entry) = Entry::from_json(&channel.id, value, "irc") {
                entries.push(entry);
            }
        }
        channels.push(channel);
    }
    if entries.is_empty() {
        return None;
    }
    Some(Export::new(
        dir.display().to_string(),
        users.into_values().collect(),
        channels,
        entries,
    ))
}

fn options() -> Options {
    let (settings, _) =
        Settings::from_pairs([("min_wait_seconds", "300"), ("jitter_ratio", "0.3")]);
    let mut options = Options::dry_run(settings);
    options.llm = Some(Arc::new(StubLlm));
    options.llm_label = Some("in-process stub".to_owned());
    options
}

fn run(rt: &tokio::runtime::Runtime, export: &Export) -> usize {
    let mut recorder = Recorder {
        discard_events: true,
        ..Recorder::default()
    };
    let summary = rt
        .block_on(replay::run(export, options(), &mut recorder))
        .expect("replayed");
    summary.messages
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let mut group = c.benchmark_group("replay");
    group.sample_size(10);

    let export = generated(10_000);
    // Once outside the timing, to say what a replay does.
    let mut recorder = Recorder {
        discard_events: true,
        ..Recorder::default()
    };
    let s = rt
        .block_on(replay::run(&export, options(), &mut recorder))
        .expect("replayed");
    eprintln!(
        "generated: {} messages, {} threads, {} judgments, {} replies, {} memories, {} LLM calls",
        s.messages,
        s.threads,
        s.judgment_count(),
        s.replies,
        s.memory_count(),
        s.llm.values().map(|r| r.calls).sum::<u64>()
    );
    group.throughput(Throughput::Elements(export.entries.len() as u64));
    group.bench_function(BenchmarkId::new("generated", export.entries.len()), |b| {
        b.iter(|| run(&rt, &export))
    });

    let data =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/irc-disentanglement");
    if let Some(export) = irc(&data) {
        group.throughput(Throughput::Elements(export.entries.len() as u64));
        group.bench_function(
            BenchmarkId::new("irc-disentanglement", export.entries.len()),
            |b| b.iter(|| run(&rt, &export)),
        );
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
