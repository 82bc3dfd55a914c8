//! The layers, held by the crates' manifests. The domain stays pure (no
//! AWS, no async, no I/O), and the services know only the ports. Each is a
//! crate of its own, so the compiler refuses an import its manifest does not
//! name; these tests hold every library crate's manifest to an allow-list,
//! and the sources of the domain, Slack's formats and the services to no
//! I/O of the standard library. A regression here means a rule or a service
//! started depending on the outside world: move that part to a port.

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
        let dir = shared().join(crate_dir);
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

/// What the services' sources may not name: an adapter crate, the AWS SDK,
/// an HTTP client, or the standard library's I/O. (They are async: they
/// await the ports.)
const SERVICES_FORBIDDEN: &[&str] = &[
    "aws_",
    "myao_aws",
    "myao_http",
    "myao_llm",
    "myao_slack_api",
    "reqwest",
    "hyper",
    "std::fs",
    "std::net",
    "std::process",
    "std::env",
];

#[test]
fn the_services_do_no_io_but_through_the_ports() {
    let mut files = Vec::new();
    rust_files(&shared().join("services/src"), &mut files);
    assert!(files.len() >= 10, "the services' sources were not found");
    let mut offences = Vec::new();
    for file in &files {
        let text = fs::read_to_string(file).expect("readable source");
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            for word in SERVICES_FORBIDDEN.iter().filter(|w| code.contains(*w)) {
                offences.push(format!("{}:{}: {word}", file.display(), n + 1));
            }
        }
    }
    assert!(
        offences.is_empty(),
        "services doing I/O:\n{}",
        offences.join("\n")
    );
}

/// Each library crate's manifest, and what it may depend on. The layers
/// hold by these lists: the domain and Slack's formats do no I/O; the core
/// (ports, ingest, twins) links no AWS SDK, HTTP client or templates; the
/// services know only the core's ports (no SDK, no HTTP client, no
/// adapter); each adapter crate knows the core and its own outside
/// service; only `myao-wire` (and the functions) sees services and adapters
/// together. A crate's own list is checked, and the `myao-` crates it names
/// are checked in turn, so the lists hold transitively.
const MANIFESTS: &[(&str, &[&str])] = &[
    (
        "domain",
        &[
            "base64",
            "chrono",
            "chrono-tz",
            "serde",
            "serde_json",
            "thiserror",
        ],
    ),
    (
        "slack",
        &[
            "chrono",
            "hex",
            "hmac",
            "myao-domain",
            "serde",
            "serde_json",
            "sha2",
            "thiserror",
        ],
    ),
    (
        "core",
        &[
            "async-trait",
            "chrono",
            "myao-domain",
            "myao-slack",
            "serde_json",
            "thiserror",
            "tokio",
            "tracing",
            "tracing-subscriber",
        ],
    ),
    (
        "services",
        &[
            "async-trait",
            "base64",
            "chrono",
            "chrono-tz",
            "minijinja",
            "myao-core",
            "myao-domain",
            "serde",
            "serde_json",
            "thiserror",
            "tokio",
            "tracing",
        ],
    ),
    ("tls", &["rustls", "webpki-roots"]),
    // The tests' kit (a dev-dependency only): the domain's types, the
    // core's twins, and wiremock for the HTTP stubs; no service or adapter.
    (
        "testkit",
        &[
            "async-trait",
            "chrono",
            "myao-core",
            "myao-domain",
            "serde_json",
            "wiremock",
        ],
    ),
    (
        "aws",
        &[
            "async-trait",
            "aws-config",
            "aws-sdk-dynamodb",
            "aws-sdk-scheduler",
            "aws-sdk-sqs",
            "aws-sdk-ssm",
            "aws-smithy-runtime-api",
            "aws-smithy-types",
            "chrono",
            "hyper",
            "hyper-rustls",
            "hyper-util",
            "myao-core",
            "myao-domain",
            "myao-tls",
            "rustls",
            "serde_json",
            "thiserror",
            "tokio",
            "tower-service",
            "tracing",
        ],
    ),
    (
        "http",
        &[
            "myao-core",
            "myao-tls",
            "reqwest",
            "rustls",
            "tokio",
            "tracing",
        ],
    ),
    (
        "llm",
        &[
            "async-trait",
            "aws-config",
            "aws-sdk-bedrockruntime",
            "base64",
            "myao-aws",
            "myao-core",
            "myao-domain",
            "myao-http",
            "reqwest",
            "serde",
            "serde_json",
            "tokio",
            "tracing",
        ],
    ),
    (
        "slack-api",
        &[
            "async-trait",
            "chrono",
            "myao-core",
            "myao-domain",
            "myao-http",
            "myao-slack",
            "reqwest",
            "serde",
            "serde_json",
            "tokio",
            "tracing",
        ],
    ),
    (
        "wire",
        &[
            "async-trait",
            "aws-sdk-scheduler",
            "aws-sdk-sqs",
            "myao-aws",
            "myao-core",
            "myao-domain",
            "myao-embed",
            "myao-http",
            "myao-llm",
            "myao-services",
            "myao-slack-api",
            "reqwest",
            "tracing",
        ],
    ),
    // The bundled embedder: the core's port over its own tokenizers and
    // forward passes, and serde for the safetensors header (the core links
    // both already); nothing else.
    (
        "embed",
        &[
            "async-trait",
            "myao-core",
            "serde",
            "serde_json",
            "tokio",
            "tracing",
        ],
    ),
];

#[test]
fn every_library_crate_depends_on_its_allowed_crates_alone() {
    let dirs: Vec<String> = fs::read_dir(shared())
        .expect("the shared folder")
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("Cargo.toml").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    for dir in &dirs {
        assert!(
            MANIFESTS.iter().any(|(name, _)| name == dir),
            "shared/{dir} has no allow-list here"
        );
    }
    for (dir, allowed) in MANIFESTS {
        dependencies_within(&shared().join(dir).join("Cargo.toml"), allowed);
    }
}

/// The services never import an adapter, the AWS SDK or an HTTP client:
/// not directly (their list above), and not through a crate they name.
#[test]
fn the_services_reach_no_adapter_sdk_or_http_client_through_any_crate() {
    let reached = reachable("services");
    for unwanted in [
        "myao-aws",
        "myao-http",
        "myao-llm",
        "myao-slack-api",
        "myao-tls",
        "reqwest",
    ] {
        assert!(
            !reached.contains(unwanted),
            "the services reach {unwanted}: {reached:?}"
        );
    }
    assert!(
        !reached
            .iter()
            .any(|d| d.starts_with("aws-") || d.starts_with("hyper")),
        "the services reach an AWS or HTTP crate: {reached:?}"
    );
}

/// The ingest function, which Slack waits on, links the domain, Slack's
/// formats, the core and the AWS adapters: no service, LLM or Slack Web
/// API client, no templates.
#[test]
fn ingest_links_the_core_and_the_aws_adapters_alone() {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("../functions/ingest/Cargo.toml");
    let direct = dependencies(&manifest);
    assert!(direct.iter().any(|d| d == "myao-core") && direct.iter().any(|d| d == "myao-aws"));
    let mut reached = std::collections::BTreeSet::new();
    for d in direct.iter().filter(|d| d.starts_with("myao-")) {
        reached.insert(d.clone());
        reached.extend(reachable(d.trim_start_matches("myao-")));
    }
    let ours: Vec<&String> = reached.iter().filter(|d| d.starts_with("myao-")).collect();
    assert_eq!(
        ours,
        [
            "myao-aws",
            "myao-core",
            "myao-domain",
            "myao-slack",
            "myao-tls"
        ]
    );
    for unwanted in ["reqwest", "minijinja", "aws-sdk-bedrockruntime"] {
        assert!(!reached.contains(unwanted), "ingest reaches {unwanted}");
    }
}

fn shared() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared")
}

/// Every dependency the crate in `shared/<dir>` has, through the `myao-`
/// crates it names.
fn reachable(dir: &str) -> std::collections::BTreeSet<String> {
    let mut seen = std::collections::BTreeSet::new();
    let mut todo = vec![dir.to_owned()];
    while let Some(dir) = todo.pop() {
        for dep in dependencies(&shared().join(&dir).join("Cargo.toml")) {
            if let Some(ours) = dep.strip_prefix("myao-") {
                if !seen.contains(&dep) {
                    todo.push(ours.to_owned());
                }
            }
            seen.insert(dep);
        }
    }
    seen
}

/// Fails unless the manifest at `path` depends on `allowed` crates alone.
fn dependencies_within(path: &Path, allowed: &[&str]) {
    let found = dependencies(path);
    let unwanted: Vec<&String> = found
        .iter()
        .filter(|n| !allowed.contains(&n.as_str()))
        .collect();
    assert!(unwanted.is_empty(), "{path:?} depends on {unwanted:?}");
    assert!(found.len() >= 2, "the manifest was not read: {found:?}");
}

/// The names in the manifest's `[dependencies]` (and build dependencies).
fn dependencies(path: &Path) -> Vec<String> {
    let manifest = fs::read_to_string(path).expect("the manifest");
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
    found
}
