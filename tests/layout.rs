//! The shape of the code: no production source file over 800 lines (a file
//! that grows past it holds several things, and is split by concern). Test
//! modules (from the first `#[cfg(test)]` on, and `tests.rs` files) do not
//! count; neither do benchmarks and the tests themselves.

use std::fs;
use std::path::{Path, PathBuf};

/// The most lines of a production source file.
const MAX_LINES: usize = 800;

/// The crates' source folders, from the workspace's root.
const SOURCES: &[&str] = &[
    "shared/src",
    "shared/domain/src",
    "shared/slack/src",
    "functions/ingest/src",
    "functions/jobs/src",
    "functions/local/src",
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.expect("a folder entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The production lines of a source: those before its test module, when
/// the file ends with it (`#[cfg(test)]` then `mod tests {` or `mod
/// tests;`); every line otherwise.
fn production_lines(text: &str) -> usize {
    let lines: Vec<&str> = text.lines().collect();
    let start = lines.windows(2).position(|w| {
        w[0].trim() == "#[cfg(test)]" && matches!(w[1].trim(), "mod tests {" | "mod tests;")
    });
    match start {
        Some(at) if lines[at + 1].trim() == "mod tests;" || lines.last() == Some(&"}") => at,
        _ => lines.len(),
    }
}

#[test]
fn no_production_source_file_is_over_800_lines() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    for dir in SOURCES {
        rust_files(&root.join(dir), &mut files);
    }
    assert!(
        files.len() > 50,
        "the sources were not found: {}",
        files.len()
    );
    let mut over: Vec<String> = files
        .iter()
        .filter(|f| f.file_name().is_some_and(|n| n != "tests.rs"))
        .filter_map(|f| {
            let lines = production_lines(&fs::read_to_string(f).expect("a source"));
            (lines > MAX_LINES).then(|| format!("{}: {lines}", f.display()))
        })
        .collect();
    over.sort();
    assert!(over.is_empty(), "over {MAX_LINES} lines: {over:#?}");
}

#[test]
fn a_test_module_does_not_count() {
    let text = "fn a() {}\n\n#[cfg(test)]\nmod tests {\n    fn b() {}\n}\n";
    assert_eq!(production_lines(text), 2);
    assert_eq!(production_lines("fn a() {}\nfn b() {}\n"), 2);
    // A test attribute on something else early in the file exempts nothing.
    let early = "#[cfg(test)]\nuse x::y;\nfn a() {}\nfn b() {}\n";
    assert_eq!(production_lines(early), 4);
}
