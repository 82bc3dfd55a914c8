//! The domain stays pure: no AWS, no async, no I/O. It is its own crate
//! (`shared/domain`), so the compiler refuses an import of the ports, the
//! services or the adapters; these tests hold its manifest to dependencies
//! that do no I/O, and its sources to no I/O of the standard library. A
//! regression here means a rule started depending on the outside world:
//! move that part to a port.

use std::fs;
use std::path::Path;

const FORBIDDEN: &[&str] = &[
    "aws_",
    "aws-sdk",
    "tokio",
    "reqwest",
    "async ",
    ".await",
    "std::fs",
    "std::net",
    "std::process",
    "std::env",
];

/// The same modules imported in a group (`use std::{fs, ...}`).
const FORBIDDEN_IN_GROUP: &[&str] = &["fs", "net", "process", "env"];

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in fs::read_dir(dir).expect("readable source dir") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn the_domain_and_slacks_formats_do_no_io_and_know_no_aws() {
    let mut files = Vec::new();
    for (crate_dir, at_least) in [("domain/src", 10), ("slack/src", 3)] {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(crate_dir);
        let before = files.len();
        rust_files(&dir, &mut files);
        assert!(
            files.len() - before >= at_least,
            "the sources were not found in {dir:?}"
        );
    }
    let mut offences = Vec::new();
    for file in &files {
        let text = fs::read_to_string(file).expect("readable source");
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            for word in FORBIDDEN {
                if code.contains(word) {
                    offences.push(format!("{}:{}: {word}", file.display(), n + 1));
                }
            }
            if let Some(group) = code.split("std::{").nth(1) {
                let names = group.split(['}', ',', ' ', ':']).filter(|w| !w.is_empty());
                for name in names.filter(|w| FORBIDDEN_IN_GROUP.contains(w)) {
                    offences.push(format!("{}:{}: std::{{{name}}}", file.display(), n + 1));
                }
            }
        }
    }
    assert!(
        offences.is_empty(),
        "impure domain:\n{}",
        offences.join("\n")
    );
}

/// What `myao-core` (the ports, ingest, the twins), which the ingest
/// function links, may depend on: the domain and Slack's formats, the async
/// runtime, logs. No AWS SDK, no HTTP client, no templates: those are
/// `myao-aws`'s and `myao`'s, and ingest links them by its dependency list.
const CORE_DEPENDENCIES: &[&str] = &[
    "async-trait",
    "chrono",
    "myao-domain",
    "myao-slack",
    "serde_json",
    "thiserror",
    "tokio",
    "tracing",
    "tracing-subscriber",
];

#[test]
fn the_core_links_no_aws_sdk_http_client_or_templates() {
    dependencies_within("core/Cargo.toml", CORE_DEPENDENCIES);
}

/// What the ingest function depends on: the core and the AWS adapters, not
/// the job functions' crate (its LLM and Slack clients, its templates).
#[test]
fn ingest_depends_on_the_core_and_the_aws_adapters_not_the_jobs() {
    let manifest = "../functions/ingest/Cargo.toml";
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(manifest);
    let text = fs::read_to_string(&path).expect("the manifest");
    let names: Vec<&str> = text
        .lines()
        .map(|l| l.split(['=', '.', ' ']).next().unwrap_or_default())
        .collect();
    assert!(
        names.contains(&"myao-core") && names.contains(&"myao-aws"),
        "{names:?}"
    );
    for unwanted in ["myao", "reqwest", "minijinja"] {
        assert!(!names.contains(&unwanted), "ingest depends on {unwanted}");
    }
}

/// What the domain may depend on: time, time zones, serialisation and
/// errors. Nothing that does I/O or runs a runtime (tokio, an HTTP client,
/// the AWS SDK, templates), and no outside service's format (Slack's is the
/// crate `myao-slack`).
const DOMAIN_DEPENDENCIES: &[&str] = &["chrono", "chrono-tz", "serde", "serde_json", "thiserror"];

/// What Slack's formats may depend on: the domain, and the hashes of the
/// request signature besides.
const SLACK_DEPENDENCIES: &[&str] = &[
    "chrono",
    "hex",
    "hmac",
    "myao-domain",
    "serde",
    "serde_json",
    "sha2",
    "thiserror",
];

#[test]
fn the_domain_crate_depends_on_nothing_that_does_io() {
    dependencies_within("domain/Cargo.toml", DOMAIN_DEPENDENCIES);
}

#[test]
fn slacks_formats_depend_on_nothing_that_does_io() {
    dependencies_within("slack/Cargo.toml", SLACK_DEPENDENCIES);
}

/// Fails unless the manifest at `path` depends on `allowed` crates alone.
fn dependencies_within(path: &str, allowed: &[&str]) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    let manifest = fs::read_to_string(&path).expect("the manifest");
    let mut section = "";
    let mut found = Vec::new();
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            section = line;
            continue;
        }
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let name = line.split(['=', '.', ' ']).next().unwrap_or_default();
        match section {
            "[dependencies]" | "[build-dependencies]" => found.push(name.to_owned()),
            "[dev-dependencies]" | "[package]" | "[lints]" => {}
            other if other.contains("dependencies") => panic!("{other}: a dependency table more"),
            _ => {}
        }
    }
    let unwanted: Vec<&String> = found
        .iter()
        .filter(|n| !allowed.contains(&n.as_str()))
        .collect();
    assert!(unwanted.is_empty(), "{path:?} depends on {unwanted:?}");
    assert!(found.len() >= 5, "the manifest was not read: {found:?}");
}
