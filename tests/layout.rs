//! The shape of the code: no production source file over 800 lines (a file
//! that grows past it holds several things, and is split by concern). Test
//! modules (from the first `#[cfg(test)]` on, and `tests.rs` files) do not
//! count; neither do benchmarks and the tests themselves. In every crate,
//! at any depth: no import circle (every module stands above what it
//! imports, among its siblings), and no arrow back up (no module names
//! what a module above it defines; what siblings share lives in a sibling).

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
    "shared/embed/src",
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
    // `#[cfg(test)]`, other attributes (`#[allow(...)]`), then the module.
    let module = |at: usize| {
        lines[at + 1..]
            .iter()
            .map(|l| l.trim())
            .find(|l| !l.starts_with("#["))
    };
    let start = (0..lines.len()).find(|&at| {
        lines[at].trim() == "#[cfg(test)]"
            && matches!(module(at), Some("mod tests {" | "mod tests;"))
    });
    match start {
        Some(at) if module(at) == Some("mod tests;") || lines.last() == Some(&"}") => at,
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
fn named_modules(text: &str, prefix: &str, names: &BTreeMap<String, String>) -> BTreeSet<String> {
    text.match_indices(prefix)
        // A path's start only: `super::` inside `super::super::` is not one.
        .filter(|(at, _)| !text[..*at].ends_with("::"))
        .flat_map(|(at, _)| paths_from(&text[at + prefix.len()..]))
        .filter_map(|path| path.first().and_then(|name| names.get(name)).cloned())
        .collect()
}

/// The file that declares the modules of `dir`: its `lib.rs`, `main.rs`
/// or `mod.rs`, or the file beside it (`ingest.rs` for `ingest/`).
fn declaring_file(dir: &Path) -> PathBuf {
    ["lib.rs", "main.rs", "mod.rs"]
        .iter()
        .map(|f| dir.join(f))
        .find(|f| f.is_file())
        .unwrap_or_else(|| dir.with_extension("rs"))
}

/// The production code of a source: its test module left out, and its
/// comments (a doc link is no import).
fn code_of(text: &str) -> String {
    text.lines()
        .take(production_lines(text))
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The `use` statements of `code`, each from after `use ` to its `;`,
/// whatever lines it spans, with an alias read as the name it brings in
/// (`b::Services as Svc` as `b::Svc`).
fn use_statements(code: &str) -> Vec<String> {
    let mut statements = Vec::new();
    for (at, _) in code.match_indices("use ") {
        let before = code[..at].trim_end();
        let starts = before.is_empty()
            || before.ends_with([';', '{', '}', ']'])
            || before.ends_with("pub")
            || before.ends_with(')');
        if !starts {
            continue;
        }
        let tail = &code[at + 4..];
        let statement = tail.split(';').next().unwrap_or_default();
        let words: Vec<&str> = statement.split_whitespace().collect();
        let mut text = String::new();
        let mut i = 0;
        while i < words.len() {
            if words.get(i + 1) == Some(&"as") && i + 2 < words.len() {
                // `...::X as Y,` reads as `...::Y,`.
                let word = words[i];
                let name = word
                    .rfind(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .map_or(0, |at| at + 1);
                text.push_str(&format!("{}{} ", &word[..name], words[i + 2]));
                i += 3;
            } else {
                text.push_str(words[i]);
                text.push(' ');
                i += 1;
            }
        }
        statements.push(text);
    }
    statements
}

/// The names `file` brings into its module with a `use` of one of its own
/// `modules` (`pub use job_context::JobContext;`), each with that module: a
/// child naming `super::JobContext` leans on `job_context`.
fn names_used_from(file: &Path, modules: &BTreeSet<String>) -> BTreeMap<String, String> {
    let text = fs::read_to_string(file).unwrap_or_default();
    let mut names = BTreeMap::new();
    for statement in use_statements(&code_of(&text)) {
        let tail = statement.trim_start();
        let tail = tail.strip_prefix("self::").unwrap_or(tail);
        for path in paths_from(tail) {
            if let (Some(first), Some(last)) = (path.first(), path.last()) {
                if path.len() > 1 && modules.contains(first) {
                    names.insert(last.clone(), first.clone());
                }
            }
        }
    }
    names
}

/// The import graph of a layer's folder: each file or sub-folder of `dir`
/// is a module; a file names a sibling through `outer` or as many
/// `super::` as it lies deep (one from a file of `dir`, two from a file of
/// a sub-folder but its `mod.rs`, and so on).
fn import_graph(dir: &Path, outer: &str) -> BTreeMap<String, BTreeSet<String>> {
    let mut members: BTreeMap<String, Vec<(PathBuf, usize)>> = BTreeMap::new();
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
                    let deep = f.strip_prefix(dir).map_or(1, |r| r.components().count());
                    let ups = deep - usize::from(f.ends_with("mod.rs"));
                    (f, ups)
                });
            members.entry(stem).or_default().extend(inner);
        } else if path.extension().is_some_and(|e| e == "rs")
            && !matches!(stem.as_str(), "lib" | "main" | "mod" | "tests")
        {
            members.entry(stem).or_default().push((path, 1));
        }
    }
    let modules: BTreeSet<String> = members.keys().cloned().collect();
    // A module is named by its name, or by a name its parent brings in
    // from it (`super::JobContext`, from `pub use job_context::JobContext`).
    let mut names = names_used_from(&declaring_file(dir), &modules);
    names.extend(modules.iter().map(|m| (m.clone(), m.clone())));
    members
        .iter()
        .map(|(module, files)| {
            let mut to = BTreeSet::new();
            for (file, ups) in files {
                let code = code_of(&fs::read_to_string(file).expect("a source"));
                let up = "super::".repeat(*ups);
                to.extend(named_modules(&code, &up, &names));
                to.extend(named_modules(&code, outer, &names));
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
fn no_import_circle_in_any_crate() {
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
    // And every other crate, the tests' kit and support included.
    let circles: Vec<String> = SOURCES
        .iter()
        .chain(&["shared/testkit/src", "tests/support"])
        .flat_map(|dir| circles_at_any_depth(&root.join(dir), "crate::").0)
        .collect();
    assert!(circles.is_empty(), "on an import circle: {circles:#?}");
}

#[test]
fn a_circle_in_a_sub_folder_is_found() {
    // A layer whose sub-folder `reply` has `post` and `write` import each
    // other, and whose top level has none.
    let layer = Planted::new(
        "layout",
        &[
            ("lib.rs", "mod reply;\nmod other;\n"),
            ("other.rs", "use crate::reply::post::Draft;\n"),
            ("reply/mod.rs", "mod post;\nmod write;\n"),
            (
                "reply/post.rs",
                "use super::write::write;\npub struct Draft;\n",
            ),
            (
                "reply/write.rs",
                "use crate::reply::post::Draft;\npub fn write() {}\n",
            ),
        ],
    );
    let top = import_graph(&layer.0, "crate::");
    assert!(on_circles(&top).is_empty(), "none at the top: {top:?}");
    assert_eq!(circle_names(&layer.0), ["post", "write"]);
}

/// The modules on a circle in the layer at `root`, by name.
fn circle_names(root: &Path) -> Vec<String> {
    let (circles, _, _) = circles_at_any_depth(root, "crate::");
    circles
        .iter()
        .filter_map(|c| c.rsplit(": ").next().map(str::to_owned))
        .collect()
}

#[test]
fn the_circle_check_finds_a_circle_and_reads_groups() {
    let modules: BTreeSet<String> = ["a", "b", "c"].map(String::from).into();
    let names = modules.iter().map(|m| (m.clone(), m.clone())).collect();
    let text = "use super::{a::X, b::{Y, Z}};\nuse super::zz::W;\nfn f() { super::c::g(); }";
    assert_eq!(
        named_modules(text, "super::", &names),
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

/// A crate's modules, by path from its root (`["response", "post"]`), with
/// the file that defines each: `lib.rs` (else `main.rs`) for the root, a
/// folder's `mod.rs` or the file beside it (`ingest.rs` for `ingest/`).
/// The binaries of `bin/`, and a `main.rs` beside a `lib.rs`, are crates
/// of their own.
fn crate_modules(src: &Path) -> BTreeMap<Vec<String>, PathBuf> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let has_lib = src.join("lib.rs").is_file();
    files
        .into_iter()
        .filter_map(|file| {
            let rel = file.strip_prefix(src).ok()?.with_extension("");
            let mut path: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if path.first().is_some_and(|p| p == "bin") && path.len() > 1 {
                return None;
            }
            match path.last().map(String::as_str) {
                Some("main") if path.len() == 1 && has_lib => return None,
                Some("lib" | "main") if path.len() == 1 => path.clear(),
                Some("mod") => {
                    path.pop();
                }
                Some("tests") => return None,
                _ => {}
            }
            Some((path, file))
        })
        .collect()
}

/// Whether a source defines `name` itself (rather than naming it through a
/// `use`): an item of that name (a struct, enum, trait, type, fn, const,
/// static, union, inline module or macro), or one a macro makes
/// (`slack_id_type!(ChannelId)`).
fn defines(text: &str, name: &str) -> bool {
    let code = code_of(text);
    let word = |at: usize, len: usize| {
        let after = code[at + len..].chars().next();
        let before = code[..at].chars().next_back();
        !after.is_some_and(|c| c.is_alphanumeric() || c == '_')
            && !before.is_some_and(|c| c.is_alphanumeric() || c == '_')
    };
    let kinds = [
        "struct ",
        "enum ",
        "trait ",
        "type ",
        "fn ",
        "const ",
        "static ",
        "static mut ",
        "union ",
        "mod ",
        "macro_rules! ",
    ];
    kinds.iter().any(|kind| {
        code.match_indices(&format!("{kind}{name}"))
            .any(|(at, m)| word(at, m.len()))
    }) || code.match_indices(&format!("!({name}")).any(|(at, m)| {
        code[at + m.len()..]
            .chars()
            .next()
            .is_some_and(|c| matches!(c, ',' | ')' | ' '))
    })
}

/// The paths a source names from `at` on: `a::b::X`, or a group's items
/// `{a::X, b::{Y, Z}}` (each with its first segments), up to the first
/// segment that is no identifier.
fn paths_from(text: &str) -> Vec<Vec<String>> {
    let segment = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    let mut path = Vec::new();
    let mut rest = text;
    loop {
        rest = rest.trim_start();
        if let Some(group) = rest.strip_prefix('{') {
            // Each top-level item of the group, after the path so far.
            let (mut depth, mut start, mut items) = (0, 0, Vec::new());
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => {
                        items.push(&group[start..i]);
                        break;
                    }
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        items.push(&group[start..i]);
                        start = i + 1;
                    }
                    _ => {}
                }
            }
            return items
                .into_iter()
                .flat_map(paths_from)
                .map(|tail| [path.clone(), tail].concat())
                .collect();
        }
        let name = segment(rest);
        if name.is_empty() {
            return vec![path];
        }
        rest = &rest[name.len()..];
        path.push(name);
        match rest.strip_prefix("::") {
            Some(more) => rest = more,
            None => return vec![path],
        }
    }
}

/// The items a crate's modules name from a module above them (their
/// parent's file, or any ancestor's up to the crate's root), as `file:
/// path`: an arrow back up, which makes the parent and the child lean on
/// each other. A name a parent only re-exports (`pub use child::X`) is no
/// such arrow, and the child may name its siblings through the parent. A
/// path is read as written, from `crate::`, `super::` or a name the module
/// gave an ancestor (`use super::{self}`, `use crate::memory;`); a glob of
/// an ancestor (`use super::*;`) is an arrow whatever it brings.
fn arrows_back_up(src: &Path) -> Vec<String> {
    let modules = crate_modules(src);
    let mut arrows = Vec::new();
    for (module, file) in &modules {
        let code = code_of(&fs::read_to_string(file).expect("a source"));
        let rel = file.strip_prefix(src).unwrap_or(file).display().to_string();
        let above = |owner: &[String]| owner.len() < module.len() && module.starts_with(owner);
        // Each path's start, with the module it starts from.
        let mut starts: Vec<(usize, usize, Vec<String>)> = Vec::new();
        for (at, _) in code
            .match_indices("crate::")
            .chain(code.match_indices("super::"))
        {
            if code[..at].ends_with("::") {
                continue;
            }
            let mut base = if code[at..].starts_with("crate::") {
                Vec::new()
            } else {
                module.clone()
            };
            let mut rest = &code[at..];
            rest = rest.strip_prefix("crate::").unwrap_or(rest);
            while let Some(more) = rest.strip_prefix("super::") {
                base.pop();
                rest = more;
            }
            starts.push((at, code.len() - rest.len(), base));
        }
        // The names this module gave its ancestors, read as paths too.
        let mut aliases = BTreeMap::new();
        for (_, from, base) in &starts {
            for path in paths_from(&code[*from..]) {
                let (owner, item) = resolve(&modules, base, &path);
                let named = match item {
                    Some(s) if s == "self" => owner.last().cloned(),
                    None if !path.is_empty() => path.last().cloned(),
                    _ => None,
                };
                if let Some(name) = named.filter(|_| above(&owner)) {
                    aliases.insert(name, owner);
                }
            }
        }
        for (name, owner) in &aliases {
            let prefix = format!("{name}::");
            for (at, _) in code.match_indices(&prefix) {
                let before = code[..at].chars().next_back();
                if !before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                    starts.push((at, at + prefix.len(), owner.clone()));
                }
            }
        }
        for (_, from, base) in &starts {
            for path in paths_from(&code[*from..]) {
                let (owner, item) = resolve(&modules, base, &path);
                if !above(&owner) {
                    continue;
                }
                let text = fs::read_to_string(&modules[&owner]).expect("a source");
                let glob = path.is_empty() && code[*from..].trim_start().starts_with('*');
                match item {
                    Some(item) if item != "self" && defines(&text, item) => {
                        arrows.push(format!("{rel}: {}::{item}", owner.join("::")));
                    }
                    None if glob => arrows.push(format!("{rel}: {}::*", owner.join("::"))),
                    _ => {}
                }
            }
        }
    }
    arrows.sort();
    arrows.dedup();
    arrows
}

/// Where `path`, named from the module `base`, leads: down through
/// `modules` to the module that holds its item, and the item (`None` when
/// the path names a module).
fn resolve<'p>(
    modules: &BTreeMap<Vec<String>, PathBuf>,
    base: &[String],
    path: &'p [String],
) -> (Vec<String>, Option<&'p String>) {
    let mut owner = base.to_vec();
    for segment in path {
        let deeper = [owner.clone(), vec![segment.clone()]].concat();
        if modules.contains_key(&deeper) {
            owner = deeper;
        } else {
            return (owner, Some(segment));
        }
    }
    (owner, None)
}

#[test]
fn no_module_names_what_a_module_above_it_defines() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut arrows = Vec::new();
    for dir in SOURCES
        .iter()
        .chain(&["shared/testkit/src", "tests/support"])
    {
        for arrow in arrows_back_up(&root.join(dir)) {
            arrows.push(format!("{dir}/{arrow}"));
        }
    }
    assert!(arrows.is_empty(), "arrows back up: {arrows:#?}");
}

/// A layer planted in a fresh folder: `files` as (path, text), removed
/// when dropped.
struct Planted(PathBuf);

impl Planted {
    fn new(name: &str, files: &[(&str, &str)]) -> Planted {
        let root = std::env::temp_dir().join(format!("myao-{name}-{}", std::process::id()));
        for (path, text) in files {
            let path = root.join(path);
            fs::create_dir_all(path.parent().expect("a folder")).expect("a folder");
            fs::write(path, text).expect("a source");
        }
        Planted(root)
    }
}

impl Drop for Planted {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

#[test]
fn a_circle_through_a_name_the_parent_brings_in_is_found() {
    // `a` names `b` through the name the root brings in from it, and `b`
    // names `a` by its path.
    let layer = Planted::new(
        "reexport",
        &[
            (
                "lib.rs",
                "mod a;\nmod b;\nmod c;\nmod d;\npub use b::{\n    Services,\n};\npub use d::Jobs as Work;\n",
            ),
            ("a.rs", "use crate::Services;\npub struct Context;\n"),
            ("b.rs", "use crate::a::Context;\npub struct Services;\n"),
            ("c.rs", "use crate::Work;\npub struct Report;\n"),
            ("d.rs", "use crate::c::Report;\npub struct Jobs;\n"),
        ],
    );
    assert_eq!(
        circle_names(&layer.0),
        ["a", "b", "c", "d"],
        "a re-export on several lines, and one under another name"
    );
}

#[test]
fn an_arrow_back_up_is_found_and_a_name_passed_through_is_not() {
    let layer = Planted::new(
        "arrows",
        &[
            (
                "lib.rs",
                "mod memory;\nmod report;\npub use report::Report;\npub struct Services;\n",
            ),
            ("report.rs", "pub struct Report;\n"),
            (
                "memory/mod.rs",
                "mod digest;\nmod forget;\nmod sweep;\nmod write;\npub(crate) fn keep() {}\n",
            ),
            (
                "memory/digest.rs",
                "use super::keep;\nuse super::write::write;\nuse crate::{Report, Services};\n",
            ),
            (
                "memory/write.rs",
                "pub fn write() {}\n#[cfg(test)]\nmod tests {\n    use crate::Services;\n}\n",
            ),
            (
                "memory/forget.rs",
                "use super::{self};\nfn f() { memory::keep(); }\n",
            ),
            ("memory/sweep.rs", "use super::*;\n"),
            ("main.rs", "use myao::Services;\nfn main() {}\n"),
        ],
    );
    assert_eq!(
        arrows_back_up(&layer.0),
        [
            "memory/digest.rs: ::Services",
            "memory/digest.rs: memory::keep",
            "memory/forget.rs: memory::keep",
            "memory/sweep.rs: memory::*",
        ],
        "the parent's own fn and the root's own struct, through a name given \
         to the parent or a glob; not the re-exported report, the sibling, a \
         test's import, or the binary beside the library"
    );
}
