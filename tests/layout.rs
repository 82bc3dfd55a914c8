//! The shape of the code: no production source file over 800 lines (a file
//! that grows past it holds several things, and is split by concern). Test
//! modules (from the first `#[cfg(test)]` on, and `tests.rs` files) do not
//! count; neither do benchmarks and the tests themselves. And no import
//! circle among the modules of a layer, at any depth: in the domain crate,
//! and in the job services (`myao-services`), the core and the AWS
//! adapters, every module stands above what it imports, and so does every
//! module of a sub-folder among its siblings.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The most lines of a production source file.
const MAX_LINES: usize = 800;

/// The crates' source folders, from the workspace's root.
const SOURCES: &[&str] = &[
    "shared/aws/src",
    "shared/core/src",
    "shared/domain/src",
    "shared/http/src",
    "shared/llm/src",
    "shared/services/src",
    "shared/slack/src",
    "shared/slack-api/src",
    "shared/tls/src",
    "shared/wire/src",
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

/// The sibling modules a production source names through `prefix`
/// (`super::`, `crate::`, `crate::app::`): `prefix` then a name, or a
/// group `prefix{a::X, b::{Y, Z}}`, whose items' first segments count.
fn named_modules(text: &str, prefix: &str, modules: &BTreeSet<String>) -> BTreeSet<String> {
    let ident = |s: &str| -> String {
        s.trim_start()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    let mut found = BTreeSet::new();
    for (at, _) in text.match_indices(prefix) {
        let rest = &text[at + prefix.len()..];
        if let Some(group) = rest.strip_prefix('{') {
            // The group's top-level items.
            let (mut depth, mut item) = (0, String::new());
            for c in group.chars() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        found.insert(ident(&item));
                        item.clear();
                        continue;
                    }
                    _ => {}
                }
                if depth == 0 || c != '{' {
                    item.push(c);
                }
            }
            found.insert(ident(&item));
        } else {
            found.insert(ident(rest));
        }
    }
    found.retain(|m| modules.contains(m));
    found
}

/// The import graph of a layer's folder: each file or sub-folder of `dir`
/// is a module; a file names a sibling through `super::` (from a
/// sub-folder's own files, `crate::` and `super::super::`) or `outer`.
fn import_graph(dir: &Path, outer: &str) -> BTreeMap<String, BTreeSet<String>> {
    let mut members: BTreeMap<String, Vec<(PathBuf, bool)>> = BTreeMap::new();
    for entry in fs::read_dir(dir).expect("a layer's folder") {
        let path = entry.expect("a folder entry").path();
        let stem = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default()
            .to_owned();
        if path.is_dir() {
            let mut files = Vec::new();
            rust_files(&path, &mut files);
            let inner = files
                .into_iter()
                .filter(|f| !f.ends_with("tests.rs"))
                .map(|f| {
                    let nested = !f.ends_with("mod.rs");
                    (f, nested)
                });
            members.entry(stem).or_default().extend(inner);
        } else if path.extension().is_some_and(|e| e == "rs")
            && !matches!(stem.as_str(), "lib" | "mod" | "tests")
        {
            members.entry(stem).or_default().push((path, false));
        }
    }
    let modules: BTreeSet<String> = members.keys().cloned().collect();
    members
        .iter()
        .map(|(module, files)| {
            let mut to = BTreeSet::new();
            for (file, nested) in files {
                let text = fs::read_to_string(file).expect("a source");
                let lines: Vec<&str> = text.lines().collect();
                // Comments aside: a doc link is no import.
                let code: Vec<&str> = lines[..production_lines(&text)]
                    .iter()
                    .map(|l| l.split("//").next().unwrap_or(""))
                    .collect();
                let code = code.join("\n");
                let up = if *nested { "super::super::" } else { "super::" };
                to.extend(named_modules(&code, up, &modules));
                to.extend(named_modules(&code, outer, &modules));
            }
            to.remove(module);
            (module.clone(), to)
        })
        .collect()
}

/// The modules of `graph` that lie on a circle of imports.
fn on_circles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    // A module lies on a circle when it reaches itself.
    graph
        .keys()
        .filter(|start| {
            let mut seen = BTreeSet::new();
            let mut stack: Vec<&String> = graph[*start].iter().collect();
            while let Some(m) = stack.pop() {
                if m == *start {
                    return true;
                }
                if seen.insert(m.clone()) {
                    stack.extend(graph.get(m).into_iter().flatten());
                }
            }
            false
        })
        .cloned()
        .collect()
}

/// The modules on an import circle in `dir` or any folder under it, as
/// `folder: module`, and how many modules and imports were read: each
/// folder's modules are checked among themselves, named from outside by
/// `outer` and the folders' names (`crate::response::`).
fn circles_at_any_depth(dir: &Path, outer: &str) -> (Vec<String>, usize, usize) {
    let graph = import_graph(dir, outer);
    let (mut modules, mut imports) = (
        graph.len(),
        graph.values().map(BTreeSet::len).sum::<usize>(),
    );
    let mut circles: Vec<String> = on_circles(&graph)
        .into_iter()
        .map(|m| format!("{}: {m}", dir.display()))
        .collect();
    let mut folders: Vec<PathBuf> = fs::read_dir(dir)
        .expect("a layer's folder")
        .map(|e| e.expect("a folder entry").path())
        .filter(|p| p.is_dir())
        .collect();
    folders.sort();
    for folder in folders {
        let name = folder
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        let (c, m, i) = circles_at_any_depth(&folder, &format!("{outer}{name}::"));
        circles.extend(c);
        modules += m;
        imports += i;
    }
    (circles, modules, imports)
}

#[test]
fn no_import_circle_in_the_domain_or_the_services() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    // A layer's folder, how its files name a sibling from outside, and the
    // fewest modules and imports it has (that the check read them), its
    // sub-folders' included.
    for (dir, outer, modules, imports) in [
        ("shared/domain/src", "crate::", 9, 11),
        ("shared/services/src", "crate::", 15, 15),
        ("shared/core/src", "crate::", 6, 5),
        ("shared/aws/src", "crate::", 6, 4),
    ] {
        let (circles, found, read) = circles_at_any_depth(&root.join(dir), outer);
        assert!(found >= modules, "{dir}: the modules were not found");
        assert!(read >= imports, "{dir}: no import was found");
        assert!(circles.is_empty(), "on an import circle: {circles:#?}");
    }
}

#[test]
fn a_circle_in_a_sub_folder_is_found() {
    // A layer whose sub-folder `reply` has `post` and `write` import each
    // other, and whose top level has none.
    let root = std::env::temp_dir().join(format!("myao-layout-{}", std::process::id()));
    let reply = root.join("reply");
    fs::create_dir_all(&reply).expect("a folder");
    let files = [
        (root.join("lib.rs"), "mod reply;\nmod other;\n"),
        (root.join("other.rs"), "use crate::reply::post::Draft;\n"),
        (reply.join("mod.rs"), "mod post;\nmod write;\n"),
        (
            reply.join("post.rs"),
            "use super::write::write;\npub struct Draft;\n",
        ),
        (
            reply.join("write.rs"),
            "use crate::reply::post::Draft;\npub fn write() {}\n",
        ),
    ];
    for (path, text) in &files {
        fs::write(path, text).expect("a source");
    }
    let (circles, _, _) = circles_at_any_depth(&root, "crate::");
    let top = import_graph(&root, "crate::");
    fs::remove_dir_all(&root).expect("removed");
    assert!(on_circles(&top).is_empty(), "none at the top: {top:?}");
    let names: Vec<&str> = circles
        .iter()
        .filter_map(|c| c.rsplit(": ").next())
        .collect();
    assert_eq!(names, ["post", "write"], "{circles:?}");
}

#[test]
fn the_circle_check_finds_a_circle_and_reads_groups() {
    let modules: BTreeSet<String> = ["a", "b", "c"].map(String::from).into();
    let text = "use super::{a::X, b::{Y, Z}};\nuse super::zz::W;\nfn f() { super::c::g(); }";
    assert_eq!(
        named_modules(text, "super::", &modules),
        modules,
        "grouped, nested and inline paths"
    );
    let graph = |edges: &[(&str, &str)]| {
        let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (from, to) in edges {
            g.entry((*from).into()).or_default().insert((*to).into());
            g.entry((*to).into()).or_default();
        }
        g
    };
    assert_eq!(
        on_circles(&graph(&[("a", "b"), ("b", "c"), ("c", "a"), ("d", "a")])),
        ["a", "b", "c"]
    );
    assert!(on_circles(&graph(&[("a", "b"), ("b", "c"), ("a", "c")])).is_empty());
}

/// The number a document writes as a word (`ten`), up to twenty.
fn number_after(text: &str, before: &str) -> usize {
    const WORDS: [&str; 21] = [
        "zero",
        "one",
        "two",
        "three",
        "four",
        "five",
        "six",
        "seven",
        "eight",
        "nine",
        "ten",
        "eleven",
        "twelve",
        "thirteen",
        "fourteen",
        "fifteen",
        "sixteen",
        "seventeen",
        "eighteen",
        "nineteen",
        "twenty",
    ];
    let at = text
        .find(before)
        .unwrap_or_else(|| panic!("no {before:?} in the document"));
    let word: String = text[at + before.len()..]
        .chars()
        .take_while(char::is_ascii_alphabetic)
        .collect();
    WORDS
        .iter()
        .position(|w| *w == word)
        .unwrap_or_else(|| panic!("{word:?} after {before:?} is no number"))
}

#[test]
fn the_architectures_counts_are_the_codes() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let read = |path: &str| fs::read_to_string(root.join(path)).expect("a file");
    let (architecture, layout) = (read("ARCHITECTURE.md"), read("docs/layout.md"));
    // The library crates: every folder of shared/ but the tests' kit.
    let crates = fs::read_dir(root.join("shared"))
        .expect("shared/")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("Cargo.toml").is_file() && !p.ends_with("testkit"))
        .count();
    assert_eq!(number_after(&architecture, "myao is "), crates);
    assert_eq!(
        number_after(&architecture, "functions/local  ──► all "),
        crates
    );
    // The store's traits: those `Store` is made of.
    let ports = read("shared/core/src/ports.rs");
    let at = ports.find("pub trait Store:").expect("the Store trait");
    let traits = ports[at..]
        .split_once('{')
        .map(|(head, _)| head.matches('+').count() + 1)
        .expect("its traits");
    assert_eq!(number_after(&architecture, "`Store` is all "), traits);
    // The functions the template deploys.
    let functions = read("template.yaml")
        .matches("Type: AWS::Serverless::Function")
        .count();
    assert_eq!(number_after(&architecture, "deploys "), functions);
    assert_eq!(number_after(&layout, "AWS SAM: "), functions);
}
