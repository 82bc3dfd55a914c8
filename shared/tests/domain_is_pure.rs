//! The domain stays pure: no AWS, no async, no I/O. A regression here means
//! a rule started depending on the outside world; move that part to a port.

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
    "crate::ports",
    "crate::adapters",
    "crate::app",
];

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
fn the_domain_does_no_io_and_knows_no_aws() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/domain");
    let mut files = Vec::new();
    rust_files(&dir, &mut files);
    assert!(
        files.len() >= 10,
        "the domain sources were not found in {dir:?}"
    );
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
        }
    }
    assert!(
        offences.is_empty(),
        "impure domain:\n{}",
        offences.join("\n")
    );
}

#[test]
fn the_core_builds_without_the_aws_sdk() {
    // The SDK crates are optional dependencies behind the `aws` feature.
    let manifest = fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml"))
        .expect("manifest");
    for line in manifest.lines().filter(|l| l.starts_with("aws-")) {
        assert!(line.contains("optional = true"), "not optional: {line}");
    }
}
