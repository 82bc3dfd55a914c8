//! `myao eval` on the shipped example export: offline (the rule stage
//! alone) and with an LLM stub judging the ambiguous band. The assertions
//! are properties of the levels, not figures: the rule stage's scores are
//! being tuned.

mod common;

use std::path::{Path, PathBuf};

use myao::domain::rules::Chattiness;
use myao_local::cli::{self, Command, ReplayArgs};
use myao_local::eval::{self, Report};
use myao_local::export;
use serde_json::{json, Value};
use wiremock::{Request, Respond, ResponseTemplate};

fn example() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/export")
}

fn eval_args(extra: &[&str]) -> ReplayArgs {
    let mut args = vec!["eval".to_owned(), example().display().to_string()];
    args.extend(extra.iter().map(|s| (*s).to_owned()));
    match cli::parse(&args).expect("arguments") {
        Command::Eval(r) => r,
        other => panic!("not an eval: {other:?}"),
    }
}

async fn eval_example(vars: &[(&str, &str)]) -> Report {
    let args = eval_args(&[]);
    let env: Vec<(String, String)> = vars
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    let config = cli::replay_config(&args, &env).expect("config");
    assert!(config.issues.is_empty(), "{:?}", config.issues);
    let (filter, options) = cli::replay_plan(&args, &config).expect("plan");
    let export = export::read(&args.export, &filter).expect("export");
    eval::run(&export, &options, &Chattiness::ALL)
        .await
        .expect("evaluated")
}

#[tokio::test]
async fn offline_the_levels_order_from_silent_to_chatty() {
    let report = eval_example(&[]).await;
    assert!(report.offline);
    let levels: Vec<Chattiness> = report.levels.iter().map(|l| l.level).collect();
    assert_eq!(levels, Chattiness::ALL);
    let totals: Vec<&eval::Counts> = report.levels.iter().map(|l| &l.total).collect();

    // The people did the same at every level.
    for t in &totals {
        assert_eq!(t.figures.questions, totals[0].figures.questions);
        assert_eq!(t.figures.exchanges, totals[0].figures.exchanges);
        assert_eq!(t.figures.hours, totals[0].figures.hours);
    }
    assert!(totals[0].figures.questions > 0, "the example has questions");

    // mentions_only: no judgment, no unprompted post; the mentions are
    // answered (placeholders, offline).
    let silent = totals[0];
    assert_eq!(
        (
            silent.judgments,
            silent.llm_calls,
            silent.figures.unprompted
        ),
        (0, 0, 0)
    );
    assert_eq!(silent.posts, 3, "the three mentions");

    // Chattier levels join more of the questions left unanswered, and post
    // unprompted at least as often.
    for pair in totals.windows(2) {
        assert!(
            pair[1].figures.join_rate() >= pair[0].figures.join_rate(),
            "{:?}",
            report.to_json()
        );
    }
    assert!(totals[3].figures.unprompted >= totals[1].figures.unprompted);

    // Offline, the ambiguous band is the LLM calls an LLM would get; the
    // rule stage decides the rest of what reached it.
    for t in &totals[1..] {
        assert!(t.baseline > 0);
        assert_eq!(t.llm_calls, t.ambiguous);
        assert!(t.spared + t.ambiguous <= t.baseline);
        assert!(t.spared_rate() > 0.0 && t.spared_rate() <= 1.0);
        assert!(t.figures.on_question <= t.figures.unprompted);
    }

    // The channels add up to the total.
    for level in &report.levels {
        let sum = |f: fn(&eval::Counts) -> usize| level.channels.values().map(f).sum::<usize>();
        assert_eq!(sum(|c| c.judgments), level.total.judgments);
        assert_eq!(sum(|c| c.posts), level.total.posts);
        assert_eq!(
            sum(|c| c.figures.unprompted),
            level.total.figures.unprompted
        );
    }
}

#[tokio::test]
async fn the_json_has_the_four_levels_per_channel_and_in_total() {
    let v = eval_example(&[]).await.to_json();
    assert_eq!(v["type"], "eval");
    assert_eq!(v["offline"], true);
    assert_eq!(
        v["levels"],
        json!(["mentions_only", "quiet", "normal", "chatty"])
    );
    for level in ["mentions_only", "quiet", "normal", "chatty"] {
        let t = &v["total"][level];
        for field in [
            "questions",
            "joined",
            "join_rate",
            "exchanges",
            "intruded",
            "intrusion_rate",
            "unprompted",
            "precision",
            "unprompted_per_hour",
            "llm_calls",
            "spared",
            "spared_rate",
            "ambiguous",
            "baseline",
        ] {
            assert!(t[field].is_number(), "{level}.{field}: {t}");
        }
    }
    let channels = v["channels"].as_array().unwrap();
    let names: Vec<&str> = channels
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    for name in ["general", "random", "dev", "bob-surprise"] {
        assert!(names.contains(&name), "{names:?}");
    }
    for c in channels {
        assert_eq!(c["levels"].as_object().unwrap().len(), 4);
    }
}

/// Judges every conversation it is asked about with its verdict; writes a
/// short reply.
struct Judges(Value);

impl Respond for Judges {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&request.body).expect("json");
        let text = match body["model"].as_str().expect("a model") {
            "judge" => self.0.to_string(),
            "writer" => "にゃ".to_owned(),
            _ => "- いろいろ".to_owned(),
        };
        common::completion(&text)
    }
}

/// An LLM stub judging with `verdict`, as the eval's settings name it.
async fn eval_judged_by(verdict: Value) -> (wiremock::MockServer, Report) {
    let (server, base) = common::llm_stub(Judges(verdict)).await;
    let report = eval_example(&[
        ("MYAO_LLM_BASE_URL", &base),
        ("MYAO_JUDGMENT_MODEL", "judge"),
        ("MYAO_RESPONSE_MODEL", "writer"),
        ("MYAO_MEMORY_MODEL", "memo"),
        ("MYAO_LLM_MAX_RETRIES", "0"),
    ])
    .await;
    (server, report)
}

#[tokio::test]
async fn with_an_llm_the_ambiguous_band_is_judged_by_it() {
    let (server, report) = eval_judged_by(json!({"should_respond": true, "delay_seconds": 0,
                                                 "confidence": 0.9, "reason": "why not"}))
    .await;
    assert!(!report.offline);
    assert!(report.llm.is_some());
    let judged = server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .filter(|r| serde_json::from_slice::<Value>(&r.body).unwrap()["model"] == "judge")
        .count();
    let calls: usize = report.levels.iter().map(|l| l.total.llm_calls).sum();
    assert_eq!(calls, judged, "every LLM judgment call is counted");
    for l in &report.levels {
        assert_eq!(l.total.llm_calls, l.total.ambiguous);
    }
    assert_eq!(
        report.levels[0].total.llm_calls, 0,
        "mentions_only judges nothing"
    );
    // An LLM that always says yes: where it was asked, the bot spoke (or
    // had already spoken its hour's fill: capped).
    for l in &report.levels[1..] {
        if l.total.ambiguous > 0 {
            assert!(l.total.figures.unprompted >= 1, "{:?}", l.total);
        }
    }
}

#[tokio::test]
async fn reactions_are_counted_apart_from_posts() {
    let (_server, report) = eval_judged_by(json!({"should_respond": true,
        "response_type": "reaction", "emoji": "eyes", "delay_seconds": 0, "reason": "seen"}))
    .await;
    let chatty = report.levels.last().expect("chatty");
    assert!(chatty.total.reactions >= 1, "{:?}", chatty.total);
    // What the LLM answered with a reaction is no post; the posts left are
    // the rule stage's sure answers and the mentions.
    let asked = chatty.total.llm_calls;
    assert!(asked >= 1);
    assert!(
        chatty.total.reactions <= asked + chatty.total.spared,
        "{:?}",
        chatty.total
    );
    assert_eq!(chatty.total.short_posts, 0);
}
