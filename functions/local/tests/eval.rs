//! `myao eval` on the shipped example export: offline (the rule stage
//! alone) and with an LLM stub judging the ambiguous band. The assertions
//! are properties of the levels, not figures: the rule stage's scores are
//! being tuned.

use myao_testkit::http::{completion, llm_stub};

use std::path::{Path, PathBuf};

use myao_domain::rules::Chattiness;
use myao_local::cli::{self, Command, ReplayArgs};
use myao_local::eval::html::HtmlOptions;
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
    // Each level that speaks beside the room's curve (mentions_only does
    // not): the room's joined at its preempted share, and the distance.
    let curve = v["curve"].as_object().unwrap();
    let mut levels: Vec<&str> = curve.keys().map(String::as_str).collect();
    levels.sort_unstable();
    assert_eq!(levels, ["chatty", "normal", "quiet"]);
    for (level, c) in curve {
        for field in ["joined", "preempted", "room_joined", "distance"] {
            assert!(c[field].is_number(), "{level}.{field}: {c}");
        }
        let (joined, room) = (
            c["joined"].as_f64().unwrap(),
            c["room_joined"].as_f64().unwrap(),
        );
        assert!((c["distance"].as_f64().unwrap() - (room - joined)).abs() < 1e-9);
        assert_eq!(c["joined"], v["total"][level.as_str()]["join_rate"]);
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
        completion(&text)
    }
}

/// An LLM stub judging with `verdict`, as the eval's settings name it.
async fn eval_judged_by(verdict: Value) -> (wiremock::MockServer, Report) {
    let (server, base) = llm_stub(Judges(verdict)).await;
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

// ---- the report page (`eval --html`) -------------------------------------------

/// The page of the example's eval, offline.
async fn example_page(options: HtmlOptions) -> (Report, String) {
    let report = eval_example(&[]).await;
    let page = eval::html::render(&report, options).expect("a page");
    (report, page)
}

/// The values of every `attr="..."` in `page`.
fn attributes<'a>(page: &'a str, attr: &str) -> Vec<&'a str> {
    let start = format!("{attr}=\"");
    page.split(start.as_str())
        .skip(1)
        .filter_map(|rest| rest.split('"').next())
        .collect()
}

#[tokio::test]
async fn the_report_page_shows_the_levels_the_channels_and_the_cases() {
    let (report, page) = example_page(HtmlOptions::default()).await;

    // The figures per level: six charts of four bars, the settings' level
    // (normal) marked in each, and the chart of the room's curve.
    assert_eq!(page.matches("<figure class=\"chart\">").count(), 7);
    assert_eq!(page.matches("<rect class=\"bar").count(), 24);
    assert_eq!(page.matches("<rect class=\"bar current\"").count(), 6);
    // The curve through its waits, and the three levels that speak on it
    // (one dot: in the example they join and are preempted alike).
    assert_eq!(page.matches("<polyline class=\"room-line\"").count(), 1);
    assert!(page.contains("20, 25, 29 min"), "the waits that coincide");
    assert_eq!(
        page.matches("<circle class=\"level-point current\"")
            .count(),
        1
    );
    assert!(page.contains(">quiet, normal, chatty</text>"));
    assert!(!page.contains("mentions_only: joined"));
    assert_eq!(report.current, Chattiness::Normal);
    let normal = &report.levels[2];
    assert_eq!(normal.level, Chattiness::Normal);

    // One timeline per public channel; the private one is left out, and
    // said to be.
    let public: Vec<&str> = report
        .names
        .iter()
        .filter(|(id, _)| report.public.contains(*id))
        .map(|(_, name)| name.as_str())
        .collect();
    assert_eq!(public.len(), 3, "{:?}", report.names);
    assert_eq!(
        page.matches("<section class=\"channel\"").count(),
        public.len()
    );
    for name in &public {
        assert!(page.contains(&format!("#{name}")), "{name}");
    }
    assert!(!page.contains("bob-surprise"));
    assert!(page.contains("1 private channel left out"));

    // The cases: as many joined questions listed for the settings' level
    // as the figures count, and every highlighted mark links to its line.
    let joined: usize = normal
        .channels
        .iter()
        .filter(|(id, _)| report.public.contains(*id))
        .map(|(_, c)| c.figures.joined)
        .sum();
    assert!(joined > 0, "the example has a question joined");
    let ids = attributes(&page, "id");
    let listed = |kind: &str| {
        ids.iter()
            .filter(|id| id.contains(&format!("-normal-{kind}-")))
            .count()
    };
    assert_eq!(listed("joined"), joined);
    // At `mentions_only` no question is joined: each is listed as missed.
    let missed = ids
        .iter()
        .filter(|id| id.contains("-mentions_only-missed-"))
        .count();
    assert!(missed > 0, "a question left unanswered is listed");
    for href in attributes(&page, "href") {
        let target = href.strip_prefix('#').expect("links inside the page only");
        assert!(ids.contains(&target), "{href} points at nothing");
    }
    // Each mark says what it is on hover; an unprompted post its ruling.
    assert!(
        page.contains("reply (unprompted) · respond score="),
        "a ruling"
    );

    // Self-contained: nothing fetched, no script.
    for foreign in ["<script", "src=", "<link", "url("] {
        assert!(!page.contains(foreign), "{foreign}");
    }
}

#[tokio::test]
async fn the_report_page_shortens_messages_and_leaves_private_channels_out_unless_asked() {
    let (report, short) = example_page(HtmlOptions::default()).await;
    let long = report
        .people
        .iter()
        .find(|m| {
            report.public.contains(&m.channel)
                && m.text.chars().count() > eval::html::SHORT_TEXT_CHARS + 10
                && !m.text.contains(['&', '<', '>', '"', '\'', '/'])
        })
        .expect("a long message in a public channel");
    let start: String = long
        .text
        .chars()
        .take(eval::html::SHORT_TEXT_CHARS)
        .collect();
    assert!(short.contains(&format!("{start}…")));
    assert!(!short.contains(&long.text));

    let everything = HtmlOptions {
        include_private: true,
        full_text: true,
    };
    let full = eval::html::render(&report, everything).expect("a page");
    assert!(full.contains(&long.text));
    assert!(full.contains("bob-surprise"));
    assert_eq!(full.matches("<section class=\"channel\"").count(), 4);
    assert!(!full.contains("left out"));
}

/// Chromium: `MYAO_CHROMIUM`, else `chromium` or `chromium-browser` on the
/// PATH.
fn chromium() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("MYAO_CHROMIUM") {
        return Some(PathBuf::from(path));
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .flat_map(|dir| [dir.join("chromium"), dir.join("chromium-browser")])
        .find(|p| p.is_file())
}

/// The page, opened in headless Chromium: it renders (a screenshot is
/// taken, the DOM holds the charts and timelines) and nothing fails to load
/// or logs an error to the console. `infra/test.sh` installs Chromium where
/// it is missing and sets `MYAO_REQUIRE_CHROMIUM`, so that in CI this test
/// runs or fails; elsewhere, without Chromium, it says so and passes.
#[tokio::test]
async fn the_report_page_renders_in_headless_chromium() {
    let Some(chromium) = chromium() else {
        assert!(
            std::env::var_os("MYAO_REQUIRE_CHROMIUM").is_none(),
            "MYAO_REQUIRE_CHROMIUM is set, and no Chromium was found"
        );
        eprintln!("SKIPPED: no Chromium (install Debian's chromium, or set MYAO_CHROMIUM)");
        return;
    };
    let (_, page) = example_page(HtmlOptions::default()).await;
    // Under the target folder, not /tmp: a snap-packaged Chromium has its
    // own /tmp and would not see the page.
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("a folder");
    let file = dir.path().join("report.html");
    std::fs::write(&file, page).expect("the page written");
    let shot = dir.path().join("report.png");
    let attempt = |extra: &[String]| {
        // `timeout` ends a Chromium that hangs (on D-Bus, say) in a minute.
        std::process::Command::new("timeout")
            .arg("60")
            .arg(&chromium)
            .args([
                "--headless",
                "--disable-dev-shm-usage",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--hide-scrollbars",
                "--enable-logging=stderr",
                "--v=0",
                "--window-size=1280,1600",
            ])
            .arg(format!(
                "--user-data-dir={}",
                dir.path().join("profile").display()
            ))
            .args(extra)
            .arg(format!("file://{}", file.display()))
            .output()
            .expect("chromium runs")
    };
    let run = |extra: &[String]| {
        // A loaded machine (the whole suite at once) can make Chromium's
        // zygote fail to fork its first process ("Zygote could not fork"):
        // a second start, alone, must then succeed.
        let mut out = attempt(extra);
        if !out.status.success() {
            eprintln!(
                "Chromium failed once; starting it again: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            out = attempt(extra);
        }
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        (
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (dom, log) = run(&["--dump-dom".to_owned()]);
    assert_eq!(dom.matches("<figure class=\"chart\">").count(), 7, "{dom}");
    assert_eq!(dom.matches("<section class=\"channel\"").count(), 3);
    assert!(dom.contains("<svg"), "{dom}");
    let errors: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("CONSOLE") || l.contains("net::ERR") || l.contains("Uncaught"))
        .collect();
    assert!(errors.is_empty(), "the page logged errors: {errors:#?}");
    run(&[format!("--screenshot={}", shot.display())]);
    let png = std::fs::read(&shot).expect("a screenshot");
    assert!(png.starts_with(b"\x89PNG"), "not a PNG");
    assert!(png.len() > 10_000, "an empty page? {} bytes", png.len());
}

/// A channel of questions nobody answers, asked at these minutes in one
/// thread, each by the next of `people` in turn: what the bot joins
/// depends on its thresholds.
fn questions_at(minutes: &[i64], people: usize) -> export::Export {
    use myao_domain::{Channel, ChannelId, User, UserId, Visibility};
    let channel = ChannelId::parse("C0HINTS").expect("id");
    let users: Vec<User> = (0..people)
        .map(|i| User {
            id: UserId::parse(&format!("U{i:04}")).expect("id"),
            name: format!("person{i}"),
            is_bot: false,
        })
        .collect();
    let start = 1_767_600_000_i64;
    // One conversation, as the channel's top level was when it was judged
    // as one: the questions are replies in the thread of the first line.
    let root = format!("{}.000100", start - 60);
    let opening = json!({
        "type": "message", "user": "U0000", "ts": root,
        "text": "the build after the upgrade",
    });
    let entries =
        std::iter::once(export::Entry::from_json(&channel, opening, "test").expect("entry"))
            .chain(minutes.iter().enumerate().map(|(i, minute)| {
                let value = json!({
                    "type": "message", "user": format!("U{:04}", i % people),
                    "ts": format!("{}.000100", start + minute * 60), "thread_ts": root,
                    "text": format!("does anyone know how to fix the build {i} after the upgrade?"),
                });
                export::Entry::from_json(&channel, value, "test").expect("entry")
            }))
            .collect();
    let channels = vec![Channel {
        id: channel,
        name: "hints".to_owned(),
        visibility: Visibility::PUBLIC,
    }];
    export::Export::new("test", users, channels, entries)
}

/// The total of `level` over `export` (offline: the rule stage alone),
/// with the options `extra` (`--react`).
async fn total_at(level: Chattiness, export: &export::Export, extra: &[&str]) -> eval::Counts {
    let mut args = vec![
        "eval".to_owned(),
        "unused".to_owned(),
        "--memory-interval".to_owned(),
        "off".to_owned(),
    ];
    args.extend(extra.iter().map(|s| (*s).to_owned()));
    let Command::Eval(args) = cli::parse(&args).expect("arguments") else {
        panic!("an eval")
    };
    let config = cli::replay_config(&args, &[]).expect("config");
    let (_, options) = cli::replay_plan(&args, &config).expect("plan");
    let report = eval::run(export, &options, &[level])
        .await
        .expect("evaluated");
    report.levels[0].total.clone()
}

#[tokio::test]
async fn three_negative_hints_lower_its_unprompted_posts() {
    // Two people's questions twenty minutes apart: the bot's recent post
    // keeps some of them below a threshold three thumbs-down raised.
    let minutes: Vec<i64> = (0..12).map(|i| i * 20).collect();
    let export = questions_at(&minutes, 2);
    let normal = Chattiness::Normal;
    let set = total_at(normal, &export, &[]).await;
    let down = total_at(normal, &export, &["--react=-1", "--react-to", "3"]).await;
    assert_eq!((down.hints_positive, down.hints_negative), (0, 3));
    assert!(
        down.figures.unprompted < set.figures.unprompted,
        "{} with three thumbs-down against {} without",
        down.figures.unprompted,
        set.figures.unprompted
    );
    assert!(down.figures.unprompted >= 3, "the posts hinted on stand");
    // Another emoji is no hint, and changes nothing.
    let eyes = total_at(normal, &export, &["--react", "eyes"]).await;
    assert_eq!((eyes.hints_positive, eyes.hints_negative), (0, 0));
    assert_eq!(eyes.figures.unprompted, set.figures.unprompted);
}

#[tokio::test]
async fn three_positive_hints_raise_its_unprompted_posts() {
    // At `quiet` (35, 60): three questions after long silences are
    // answered and thanked with a thumbs-up; the two people's quicker ones
    // after them (50: no silence, two people) are answered only once the
    // thresholds came down.
    let mut minutes = vec![0, 180, 360];
    minutes.extend((0..9).map(|i| 540 + i * 5));
    let export = questions_at(&minutes, 2);
    let quiet = Chattiness::Quiet;
    let set = total_at(quiet, &export, &[]).await;
    let up = total_at(quiet, &export, &["--react", "+1", "--react-to", "3"]).await;
    assert_eq!((up.hints_positive, up.hints_negative), (3, 0));
    assert!(
        up.figures.unprompted > set.figures.unprompted,
        "{} with three thumbs-up against {} without",
        up.figures.unprompted,
        set.figures.unprompted
    );
}

#[tokio::test]
async fn an_exports_reactions_on_the_bots_posts_are_its_labelled_posts() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    std::fs::create_dir_all(root.join("general")).expect("folder");
    let write = |name: &str, value: Value| {
        std::fs::write(root.join(name), value.to_string()).expect("write");
    };
    write(
        "channels.json",
        json!([{"id": "C0GENERAL", "name": "general", "is_private": false}]),
    );
    write(
        "users.json",
        json!([{"id": "U0001", "name": "alice"}, {"id": "U0002", "name": "bob"}]),
    );
    let start = 1_767_600_000_i64;
    write(
        "general/2026-01-05.json",
        json!([
            {"type": "message", "user": "U0001", "ts": format!("{start}.000100"),
             "text": "does anyone know why the build is red?",
             "reactions": [{"name": "+1", "users": ["U0002"], "count": 1}]},
            {"type": "message", "user": "UMYAO", "ts": format!("{}.000100", start + 600),
             "text": "the cache is stale: clear it",
             "reactions": [
                 {"name": "-1::skin-tone-2", "users": ["U0001", "U0002"], "count": 2},
                 {"name": "pray", "users": ["U0002"], "count": 1},
                 {"name": "eyes", "users": ["U0001"], "count": 1}
             ]},
        ]),
    );
    let args = match cli::parse(["eval", &root.display().to_string()]).expect("arguments") {
        Command::Eval(r) => r,
        other => panic!("not an eval: {other:?}"),
    };
    let config = cli::replay_config(&args, &[]).expect("config");
    let (filter, options) = cli::replay_plan(&args, &config).expect("plan");
    let export = export::read(&args.export, &filter).expect("export");
    let report = eval::run(&export, &options, &[Chattiness::Normal])
        .await
        .expect("evaluated");
    let total = &report.levels[0].total;
    // Two thumbs-down and a pray on the bot's post; the thumbs-up on a
    // person's message and the eyes are no hints on its posts.
    assert_eq!((total.hints_positive, total.hints_negative), (1, 2));
    let mut text = Vec::new();
    report.write_text(&mut text).expect("text");
    let text = String::from_utf8(text).expect("utf-8");
    assert!(
        text.lines()
            .any(|l| l.starts_with("  hints on its posts (+/-)") && l.ends_with("+1 -2")),
        "{text}"
    );
}
