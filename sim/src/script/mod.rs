//! Scripted scenarios: a step-by-step driver of the real core, run from datadriven golden files.
//!
//! A scenario file (`scenarios/**/*.txt`, format in `parse`) opens with prose saying what it
//! proves, then blocks of `verb args`, `----` and the expected output. The runner executes every
//! block against one environment (`env::Env`: real brokers, replicas and clients, explicit
//! message queues, explicit storage completion, no clock, no randomness) and compares what each
//! verb printed (`verbs`, rendered by `describe`) with the expectation. `felix scenario` and
//! `sim/tests/it/scenarios.rs` run every file; `--rewrite` writes the actual outputs back.
//!
//! Failures never mix: a bad file (unreadable, unknown verb, bad argument, missing `----`) is a
//! `parse::ScriptError` naming the file and line; a mismatch is a `FileOutcome` with a diff.

mod delivery;
pub mod env;
pub mod parse;
mod trace;
pub mod verbs;

use env::Env;
use parse::{Script, ScriptError};
use std::path::{Path, PathBuf};

/// One block after it ran.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockOutcome {
    pub line: usize,
    pub command: String,
    pub expected: Vec<String>,
    pub actual: Vec<String>,
}

impl BlockOutcome {
    pub fn matches(&self) -> bool {
        self.expected == self.actual
    }
}

/// One scenario file after it ran.
#[derive(Clone, Debug)]
pub struct FileOutcome {
    pub script: Script,
    pub blocks: Vec<BlockOutcome>,
}

impl FileOutcome {
    /// True when every block printed what its expectation says.
    pub fn passed(&self) -> bool {
        self.blocks.iter().all(BlockOutcome::matches)
    }

    /// A unified-ish diff of every mismatching block: `-` expected, `+` actual.
    pub fn diff(&self) -> String {
        let mut text = String::new();
        for block in self.blocks.iter().filter(|block| !block.matches()) {
            text.push_str(&format!(
                "{}:{}: {}\n--- expected\n+++ actual\n",
                self.script.path, block.line, block.command
            ));
            for line in diff_lines(&block.expected, &block.actual) {
                text.push_str(&line);
                text.push('\n');
            }
        }
        text
    }

    /// The file's text with every expectation replaced by what actually ran, or why not (a
    /// rewrite that would change the file's commands is refused).
    pub fn rewritten(&self) -> Result<String, ScriptError> {
        let actual: Vec<Vec<String>> = self
            .blocks
            .iter()
            .map(|block| block.actual.clone())
            .collect();
        parse::rewrite(&self.script, &actual)
    }
}

/// A line diff by longest common subsequence (scenario blocks are short).
pub fn diff_lines(expected: &[String], actual: &[String]) -> Vec<String> {
    let rows = expected.len();
    let columns = actual.len();
    let mut common = vec![vec![0usize; columns + 1]; rows + 1];
    for row in (0..rows).rev() {
        for column in (0..columns).rev() {
            common[row][column] = if expected[row] == actual[column] {
                common[row + 1][column + 1] + 1
            } else {
                common[row + 1][column].max(common[row][column + 1])
            };
        }
    }
    let (mut row, mut column) = (0, 0);
    let mut lines = Vec::new();
    while row < rows || column < columns {
        if row < rows && column < columns && expected[row] == actual[column] {
            lines.push(format!(" {}", expected[row]));
            row += 1;
            column += 1;
        } else if column < columns
            && (row == rows || common[row][column + 1] > common[row + 1][column])
        {
            lines.push(format!("+{}", actual[column]));
            column += 1;
        } else {
            lines.push(format!("-{}", expected[row]));
            row += 1;
        }
    }
    lines
}

/// Runs the scenario `text`, read from `path` (used in messages only).
pub fn run_text(path: &str, text: &str) -> Result<FileOutcome, ScriptError> {
    run_text_in(path, text, Env::new())
}

/// `run_text`, with the events left out of every block's output (`Env::quiet`) and, with `only`,
/// `audit` running that invariant's audit alone (`Env::audit_only`): for a check that reads only
/// whether `audit` names it.
pub fn run_text_quiet(
    path: &str,
    text: &str,
    only: Option<felix_core::rules::Invariant>,
) -> Result<FileOutcome, ScriptError> {
    let mut env = Env::new();
    env.quiet = true;
    env.audit_only = only;
    run_text_in(path, text, env)
}

fn run_text_in(path: &str, text: &str, mut env: Env) -> Result<FileOutcome, ScriptError> {
    let names = verbs::verb_names();
    let script = parse::parse(path, text, &names)?;
    let mut blocks = Vec::with_capacity(script.blocks.len());
    let mut panicked = false;
    for block in &script.blocks {
        if panicked {
            blocks.push(BlockOutcome {
                line: block.line,
                command: block.command.clone(),
                expected: block.expected.clone(),
                actual: vec!["not run: an earlier block panicked".to_string()],
            });
            continue;
        }
        let error = |message: String| ScriptError {
            path: path.to_string(),
            line: block.line,
            message,
        };
        let handler = verbs::VERBS
            .iter()
            .find(|(name, _)| *name == block.verb)
            .map(|(_, handler)| *handler)
            .ok_or_else(|| error(format!("unknown verb `{}`", block.verb)))?;
        let args = verbs::Args::new(&block.verb, &block.args).map_err(error)?;
        // A panic is a bug in the core (or here), never the script's fault: it becomes this
        // block's output, so the run reports a mismatch naming the block instead of aborting.
        let outcome =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| handler(&mut env, &args)));
        let lines = match outcome {
            Ok(result) => result.map_err(error)?,
            Err(payload) => {
                panicked = true;
                vec![format!("panic: {}", panic_message(payload.as_ref()))]
            }
        };
        let mut actual: Vec<String> = lines
            .into_iter()
            .filter(|line| !line.trim().is_empty())
            .map(|line| line.trim_end().to_string())
            .collect();
        if actual.is_empty() {
            actual.push("ok".to_string());
        }
        blocks.push(BlockOutcome {
            line: block.line,
            command: block.command.clone(),
            expected: block.expected.clone(),
            actual,
        });
    }
    Ok(FileOutcome { script, blocks })
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(text) = payload.downcast_ref::<&str>() {
        text.to_string()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "(no message)".to_string()
    }
}

/// What stands at a path given as (or found while walking for) a scenario.
enum PathKind {
    File,
    Directory,
}

/// What is at `path`, following symbolic links, or a precise reason it cannot be a scenario: a
/// FIFO or a device is not a file to read (reading a FIFO would block), a dangling symbolic link
/// or a loop is named as such, never as "no such file".
fn path_kind(path: &Path) -> Result<PathKind, ScriptError> {
    let refuse = |message: String| ScriptError {
        path: path.display().to_string(),
        line: 0,
        message,
    };
    match std::fs::metadata(path) {
        Ok(metadata) if metadata.is_file() => Ok(PathKind::File),
        Ok(metadata) if metadata.is_dir() => Ok(PathKind::Directory),
        Ok(metadata) => {
            use std::os::unix::fs::FileTypeExt;
            let file_type = metadata.file_type();
            let kind = if file_type.is_fifo() {
                "a FIFO"
            } else if file_type.is_char_device() || file_type.is_block_device() {
                "a device"
            } else if file_type.is_socket() {
                "a socket"
            } else {
                "a special file"
            };
            Err(refuse(format!(
                "{kind}, not a scenario file (a regular *.txt file) or a directory"
            )))
        }
        Err(error) => match std::fs::symlink_metadata(path) {
            Ok(link) if link.file_type().is_symlink() => Err(refuse(format!(
                "a symbolic link that does not resolve: {error}"
            ))),
            _ if error.kind() == std::io::ErrorKind::NotFound => {
                Err(refuse("no such file or directory".to_string()))
            }
            _ => Err(refuse(format!("cannot read: {error}"))),
        },
    }
}

/// Reads and runs one scenario file.
pub fn run_file(path: &Path) -> Result<FileOutcome, ScriptError> {
    let shown = path.display().to_string();
    if let PathKind::Directory = path_kind(path)? {
        return Err(ScriptError {
            path: shown,
            line: 0,
            message: "a directory, not a scenario file".to_string(),
        });
    }
    let text = std::fs::read_to_string(path).map_err(|error| ScriptError {
        path: shown.clone(),
        line: 0,
        message: format!("cannot read the scenario: {error}"),
    })?;
    run_text(&shown, &text)
}

/// Every `*.txt` under `paths` (a file is taken as is, a directory is walked), sorted. Anything
/// else (a FIFO, a device, a dangling link) is an error naming what it is.
pub fn collect(paths: &[PathBuf]) -> Result<Vec<PathBuf>, ScriptError> {
    let mut files = Vec::new();
    for path in paths {
        match path_kind(path)? {
            PathKind::Directory => walk(path, &mut files)?,
            PathKind::File => files.push(path.clone()),
        }
    }
    files.sort();
    files.dedup();
    Ok(files)
}

fn walk(directory: &Path, files: &mut Vec<PathBuf>) -> Result<(), ScriptError> {
    let unreadable = |error: std::io::Error| ScriptError {
        path: directory.display().to_string(),
        line: 0,
        message: format!("cannot list the directory: {error}"),
    };
    let mut entries: Vec<PathBuf> = std::fs::read_dir(directory)
        .map_err(unreadable)?
        .map(|entry| entry.map(|entry| entry.path()))
        .collect::<Result<_, _>>()
        .map_err(unreadable)?;
    entries.sort();
    for entry in entries {
        let is_link = std::fs::symlink_metadata(&entry)
            .map(|metadata| metadata.file_type().is_symlink())
            .unwrap_or(false);
        let is_scenario = entry
            .extension()
            .is_some_and(|extension| extension == "txt");
        match path_kind(&entry) {
            // A linked directory is not walked: a link back up would never end.
            Ok(PathKind::Directory) if is_link => {
                return Err(ScriptError {
                    path: entry.display().to_string(),
                    line: 0,
                    message: "a symbolic link to a directory (not followed: name its target)"
                        .to_string(),
                })
            }
            Ok(PathKind::Directory) => walk(&entry, files)?,
            Ok(PathKind::File) if is_scenario => files.push(entry),
            Ok(PathKind::File) => {}
            Err(error) if is_scenario => return Err(error),
            // Not a scenario by its name: whatever it is, it is not ours to read.
            Err(_) => {}
        }
    }
    Ok(())
}
