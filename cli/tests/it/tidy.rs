//! The tidy ratchet: no new Rust file over `FILE_LINES_MAX` lines and no new function over
//! `FUNCTION_LINES_MAX`. The ones that are over today are listed in `tidy-allowlist.txt` at the
//! repository root with their size as a ceiling: they may shrink, never grow, and a line whose
//! file or function is no longer over the limit (or no longer exists) fails the test until it is
//! deleted, so the list only ever gets shorter.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const FILE_LINES_MAX: usize = 800;
const FUNCTION_LINES_MAX: usize = 100;
/// The crates whose sources are held to the limits.
const CRATES: [&str; 9] = [
    "names", "core", "store", "sim", "audits", "model", "validate", "cli", "node",
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn rust_files(directory: &Path, files: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(directory) else {
        return;
    };
    let mut paths: Vec<PathBuf> = entries.flatten().map(|entry| entry.path()).collect();
    paths.sort();
    for path in paths {
        if path.is_dir() {
            rust_files(&path, files);
        } else if path.extension().is_some_and(|extension| extension == "rs") {
            files.push(path);
        }
    }
}

/// The name of the function a line declares, if it does (rustfmt's layout: one `fn` per line).
fn declared_function(line: &str) -> Option<(usize, &str)> {
    let indent = line.len() - line.trim_start().len();
    let mut words = line.split_whitespace();
    let mut word = words.next()?;
    while matches!(
        word,
        "pub" | "pub(crate)" | "pub(super)" | "const" | "async" | "unsafe"
    ) {
        word = words.next()?;
    }
    if word != "fn" {
        return None;
    }
    let name = words.next()?;
    let end = name
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(name.len());
    Some((indent, &name[..end]))
}

/// Every function over the limit in `text`: (name, lines from `fn` to its closing brace).
fn long_functions(text: &str) -> Vec<(String, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut long = Vec::new();
    let mut index = 0;
    while index < lines.len() {
        let Some((indent, name)) = declared_function(lines[index]) else {
            index += 1;
            continue;
        };
        // The line that opens the body (a declaration without a body ends with `;`).
        let Some(open) = (index..lines.len()).find(|&at| {
            let line = lines[at].trim_end();
            line.ends_with('{') || line.ends_with(';') || line.ends_with('}')
        }) else {
            break;
        };
        if !lines[open].trim_end().ends_with('{') {
            index = open + 1;
            continue;
        }
        let closing = format!("{}}}", " ".repeat(indent));
        let close = (open + 1..lines.len())
            .find(|&at| lines[at] == closing)
            .unwrap_or(lines.len() - 1);
        let length = close - index + 1;
        if length > FUNCTION_LINES_MAX {
            long.push((name.to_string(), length));
        }
        index = close + 1;
    }
    long
}

/// What is over a limit now: `file PATH` and `fn PATH NAME` keys, with their sizes.
fn over_the_limits() -> BTreeMap<String, usize> {
    let root = root();
    let mut over = BTreeMap::new();
    for krate in CRATES {
        let mut files = Vec::new();
        rust_files(&root.join(krate), &mut files);
        for file in files {
            let relative = file
                .strip_prefix(&root)
                .expect("under the root")
                .to_string_lossy()
                .replace('\\', "/");
            let text = std::fs::read_to_string(&file).expect("a readable source file");
            let lines = text.lines().count();
            if lines > FILE_LINES_MAX {
                over.insert(format!("file {relative}"), lines);
            }
            for (name, length) in long_functions(&text) {
                let key = format!("fn {relative} {name}");
                let entry = over.entry(key).or_insert(0);
                *entry = (*entry).max(length);
            }
        }
    }
    over
}

/// The allowlist: key (`file PATH` or `fn PATH NAME`) to its ceiling.
fn allowlist() -> BTreeMap<String, usize> {
    let path = root().join("tidy-allowlist.txt");
    let text = std::fs::read_to_string(&path).expect("tidy-allowlist.txt at the root");
    let mut allowed = BTreeMap::new();
    for (number, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (key, size) = line
            .rsplit_once(' ')
            .unwrap_or_else(|| panic!("tidy-allowlist.txt:{}: KEY SIZE", number + 1));
        let size: usize = size
            .parse()
            .unwrap_or_else(|_| panic!("tidy-allowlist.txt:{}: a size", number + 1));
        allowed.insert(key.to_string(), size);
    }
    allowed
}

#[test]
fn no_new_long_file_or_function_and_no_listed_one_grows() {
    // Proves the ratchet holds: everything over a limit is listed, nothing listed grew past its
    // ceiling, and nothing listed is back under the limit (or gone) without its line deleted.
    let over = over_the_limits();
    let allowed = allowlist();
    let mut problems = Vec::new();
    for (key, size) in &over {
        match allowed.get(key) {
            None => problems.push(format!(
                "new: {key} is {size} lines (files at most {FILE_LINES_MAX}, functions at most \
                 {FUNCTION_LINES_MAX}): split it"
            )),
            Some(ceiling) if size > ceiling => {
                problems.push(format!("grew: {key} is {size} lines, listed at {ceiling}"))
            }
            Some(_) => {}
        }
    }
    for key in allowed.keys() {
        if !over.contains_key(key) {
            problems.push(format!(
                "stale: {key} is no longer over its limit: delete its line from tidy-allowlist.txt"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn function_lengths_are_measured_from_fn_to_its_closing_brace() {
    // Proves the measure on a small text: a body's lines counted, a declaration without a body
    // skipped, a function under the limit not reported.
    let long_body = "    x();\n".repeat(FUNCTION_LINES_MAX);
    let text = format!(
        "fn short() {{\n}}\n\ntrait T {{\n    fn declared(&self);\n}}\n\npub(crate) fn long(\n    a: u8,\n) {{\n{long_body}}}\n"
    );
    assert_eq!(
        long_functions(&text),
        vec![("long".to_string(), FUNCTION_LINES_MAX + 4)]
    );
}

/// The sources a crate compiles without a unit-test harness (`test = false` in its Cargo.toml):
/// all of `src/` but `src/bin/` for a `[lib]`, a `[[bin]]`'s own `path`.
fn sources_without_a_harness(krate: &str) -> Vec<PathBuf> {
    let dir = root().join(krate);
    let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).expect("the crate's manifest");
    let mut files = Vec::new();
    let mut section = String::new();
    let mut path: Option<String> = None;
    let mut no_harness = false;
    let mut close = |section: &str, path: &Option<String>, no_harness: bool| {
        if !no_harness {
            return;
        }
        if section == "[lib]" {
            let mut all = Vec::new();
            rust_files(&dir.join("src"), &mut all);
            let bins = dir.join("src").join("bin");
            files.extend(all.into_iter().filter(|file| !file.starts_with(&bins)));
        } else if let Some(path) = path {
            files.push(dir.join(path));
        }
    };
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            close(&section, &path, no_harness);
            section = line.to_string();
            path = None;
            no_harness = false;
        } else if let Some(value) = line.strip_prefix("path = ") {
            path = Some(value.trim_matches('"').to_string());
        } else if line.replace(' ', "") == "test=false" {
            no_harness = true;
        }
    }
    close(&section, &path, no_harness);
    files
}

/// Whether a source declares a unit test (an attribute line, not a mention in a comment).
fn declares_a_unit_test(text: &str) -> bool {
    (text.lines().map(str::trim)).any(|line| line.starts_with("#[test]") || line == "#[cfg(test)]")
}

#[test]
fn a_crate_built_without_a_unit_test_harness_declares_no_unit_test() {
    // Proves no test is skipped in silence: a unit test under a target that `test = false` builds
    // without a harness would never be compiled nor run; such a crate's tests live in tests/it.
    let mut problems = Vec::new();
    let mut checked = 0;
    for krate in CRATES {
        for file in sources_without_a_harness(krate) {
            checked += 1;
            let text = std::fs::read_to_string(&file).expect("a source file");
            if declares_a_unit_test(&text) {
                problems.push(format!(
                    "{}: a unit test in a target built with `test = false` never runs: move it to \
                     {krate}/tests/it",
                    file.display()
                ));
            }
        }
    }
    assert!(
        checked > 0,
        "no target is built without a harness: is this check still needed?"
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(declares_a_unit_test(
        "fn f() {}\n\n#[cfg(test)]\nmod tests {}\n"
    ));
    assert!(declares_a_unit_test("    #[test]\n    fn t() {}\n"));
    assert!(!declares_a_unit_test(
        "// every `#[test]` lives in tests/it\nfn f() {}\n"
    ));
}
