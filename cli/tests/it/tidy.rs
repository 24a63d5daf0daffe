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
    files_under(directory, files, &|path| {
        path.extension().is_some_and(|extension| extension == "rs")
    });
}

/// Every file below `directory` that `keep` takes, in path order, passing over the build's output
/// and git's own folders.
fn files_under(directory: &Path, files: &mut Vec<PathBuf>, keep: &dyn Fn(&Path) -> bool) {
    let Ok(entries) = std::fs::read_dir(directory) else {
        return;
    };
    let mut paths: Vec<PathBuf> = entries.flatten().map(|entry| entry.path()).collect();
    paths.sort();
    for path in paths {
        let name = path
            .file_name()
            .and_then(|name| name.to_str())
            .unwrap_or("");
        if path.is_dir() {
            if !matches!(name, "target" | ".git" | "node_modules" | "__pycache__") {
                files_under(&path, files, keep);
            }
        } else if keep(&path) {
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
/// all of `src/` but `src/bin/` for a `[lib]`; for a `[[bin]]` its `path`, or where cargo looks
/// for it without one (`src/main.rs` for the package's own name, else `src/bin/NAME.rs` or the
/// folder `src/bin/NAME/`).
fn sources_without_a_harness(krate: &str) -> Vec<PathBuf> {
    let dir = root().join(krate);
    let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).expect("the crate's manifest");
    sources_without_a_harness_in(&dir, &manifest)
}

/// `sources_without_a_harness` for the crate in `dir` whose manifest is `manifest`.
fn sources_without_a_harness_in(dir: &Path, manifest: &str) -> Vec<PathBuf> {
    /// One `[lib]` or `[[bin]]` table: its `name`, its `path` and whether it says `test = false`.
    #[derive(Default)]
    struct Target {
        section: String,
        name: Option<String>,
        path: Option<String>,
        no_harness: bool,
    }
    let value = |line: &str, key: &str| {
        let (left, right) = line.split_once('=')?;
        (left.trim() == key).then(|| right.trim().trim_matches('"').to_string())
    };
    let mut targets = vec![Target::default()];
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            targets.push(Target {
                section: line.to_string(),
                ..Target::default()
            });
        } else if let Some(target) = targets.last_mut() {
            if let Some(name) = value(line, "name") {
                target.name = Some(name);
            } else if let Some(path) = value(line, "path") {
                target.path = Some(path);
            } else if value(line, "test").as_deref() == Some("false") {
                target.no_harness = true;
            }
        }
    }
    let package = (targets.iter())
        .find(|target| target.section == "[package]")
        .and_then(|target| target.name.clone());
    let src = dir.join("src");
    let mut files = Vec::new();
    for target in targets.iter().filter(|target| target.no_harness) {
        match (target.section.as_str(), &target.path, &target.name) {
            ("[lib]", _, _) => {
                let mut all = Vec::new();
                rust_files(&src, &mut all);
                let bins = src.join("bin");
                files.extend(all.into_iter().filter(|file| !file.starts_with(&bins)));
            }
            ("[[bin]]", Some(path), _) => files.push(dir.join(path)),
            ("[[bin]]", None, Some(name)) if Some(name) == package.as_ref() => {
                files.push(src.join("main.rs"));
            }
            ("[[bin]]", None, Some(name)) => {
                let folder = src.join("bin").join(name);
                if folder.is_dir() {
                    rust_files(&folder, &mut files);
                } else {
                    files.push(src.join("bin").join(format!("{name}.rs")));
                }
            }
            (section, path, name) => panic!(
                "{}: `test = false` in {section} (name {name:?}, path {path:?}): which sources \
                 does it cover?",
                dir.display()
            ),
        }
    }
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

#[test]
fn a_bin_without_a_path_is_found_where_cargo_looks_for_it() {
    // Proves the harness check reads a `[[bin]]` without `path` from where cargo builds it, so a
    // unit test there is not missed: the package's own name is `src/main.rs`, another name
    // `src/bin/NAME.rs`, and a bin that keeps its harness is not read. (The `[lib]`'s `src/` does
    // not exist here, so it adds nothing.)
    let dir = Path::new("/crate");
    let manifest = concat!(
        "[package]\nname = \"tool\"\n\n",
        "[lib]\ntest = false\n\n",
        "[[bin]]\nname = \"tool\"\ntest = false\n\n",
        "[[bin]]\nname = \"helper\"\ntest = false\n\n",
        "[[bin]]\nname = \"kept\"\n\n",
        "[dependencies]\nname = \"x\"\n",
    );
    let files = sources_without_a_harness_in(dir, manifest);
    assert_eq!(
        files,
        [
            PathBuf::from("/crate/src/main.rs"),
            PathBuf::from("/crate/src/bin/helper.rs"),
        ]
    );
}

/// The texts kept beside the repository that its own text must not cite (spelled in two halves, so
/// that this file does not cite them either).
const OUTSIDE_TEXTS: [&str; 5] = [
    concat!("DESIGN", ".md"),
    concat!("DESIGN", "'s"),
    concat!("STYLE", ".md"),
    concat!("shared/", "seeds"),
    concat!("shared/", "notes"),
];
/// The word that, followed by a number, cites an issue (kept apart for the same reason).
const ISSUE: &str = "issue";

/// A reference to a text outside the repository, or to an issue by number, in `line`: what it
/// names, if anything. The repository's text must stand on its own: where a comment leans on the
/// design, it says the rule in a sentence of its own or points to a page in `docs/`.
fn outside_reference(line: &str) -> Option<String> {
    for name in OUTSIDE_TEXTS {
        if line.contains(name) {
            return Some(name.to_string());
        }
    }
    let lower = line.to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !(c.is_alphanumeric() || c == '#'))
        .filter(|word| !word.is_empty())
        .collect();
    words.windows(2).find_map(|pair| {
        let number = pair[1].trim_start_matches('#');
        let is_number = !number.is_empty() && number.chars().all(|c| c.is_ascii_digit());
        let word = pair[0].strip_suffix('s').unwrap_or(pair[0]);
        (word == ISSUE && is_number).then(|| format!("{ISSUE} {number}"))
    })
}

#[test]
fn no_text_cites_a_file_outside_the_repository_or_an_issue_number() {
    // Proves the code, the docs, the scenarios and the scripts stand on their own: none cites the
    // design notes kept beside the repository or an issue by its number. (`.ci/run` and
    // docs/dev/ci.md name where CI finds TLC, `../shared/tools/`: a tool's place, not a text.)
    let root = root();
    let mut files = Vec::new();
    files_under(&root, &mut files, &|_| true);
    let mut problems = Vec::new();
    let mut read = 0;
    for file in &files {
        let Ok(text) = std::fs::read_to_string(file) else {
            continue; // not text
        };
        read += 1;
        let relative = file
            .strip_prefix(&root)
            .unwrap_or(file)
            .display()
            .to_string();
        for (number, line) in text.lines().enumerate() {
            if let Some(named) = outside_reference(line) {
                problems.push(format!("{relative}:{}: cites {named}: {line}", number + 1));
            }
        }
    }
    assert!(
        read > 300,
        "only {read} text files read: is the root right?"
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert_eq!(
        outside_reference(&format!("The lagging-follower read ({} 10).", ISSUE)),
        Some(format!("{} 10", ISSUE))
    );
    assert_eq!(
        outside_reference(&format!("see {} #7", "Issue")),
        Some(format!("{} 7", ISSUE))
    );
    assert_eq!(
        outside_reference(&format!("as ../{}", OUTSIDE_TEXTS[0])),
        Some(OUTSIDE_TEXTS[0].to_string())
    );
    assert_eq!(
        outside_reference(&format!("({} rule 3)", OUTSIDE_TEXTS[1])),
        Some(OUTSIDE_TEXTS[1].to_string())
    );
    assert_eq!(outside_reference("an issue of ordering: 3 nodes"), None);
    assert_eq!(outside_reference("ReadProbe term 1 round 2"), None);
}
