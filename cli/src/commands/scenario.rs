//! `felix scenario [PATH...] [--rewrite]`: run scripted scenarios (datadriven golden files).
//!
//! Each PATH is a scenario file or a directory walked for `*.txt`; with none, every
//! `scenarios/**/*.txt` under the current directory, sorted. A file whose output differs from its
//! expectations prints a diff (exit 1); `--rewrite` writes the actual outputs into the files
//! instead (review the diff before committing it). A bad file (unreadable, unknown verb, bad
//! argument, missing `----`) is reported with its file and line (exit 2). The format and the
//! verbs are in `felix_sim::script` and `scenarios/README.md`.

use crate::exit;
use clap::Args;
use felix_sim::script;
use std::path::PathBuf;

/// Arguments of `felix scenario`.
#[derive(Args, Debug)]
pub struct ScenarioArgs {
    /// Scenario files or directories (default: scenarios/).
    pub paths: Vec<PathBuf>,
    /// Write each block's actual output into the file instead of comparing.
    #[arg(long)]
    pub rewrite: bool,
}

pub fn run(args: ScenarioArgs) -> u8 {
    let paths = if args.paths.is_empty() {
        vec![PathBuf::from("scenarios")]
    } else {
        args.paths
    };
    let files = match script::collect(&paths) {
        Ok(files) => files,
        Err(error) => return exit::bad_input(error),
    };
    if files.is_empty() {
        return exit::bad_input("no scenario files (*.txt) found");
    }
    let mut failed = 0;
    let mut rewritten = 0;
    for file in &files {
        let outcome = match script::run_file(file) {
            Ok(outcome) => outcome,
            Err(error) => return exit::bad_input(error),
        };
        if outcome.passed() {
            out!("ok    {}", file.display());
            continue;
        }
        if args.rewrite {
            let text = match outcome.rewritten() {
                Ok(text) => text,
                Err(error) => return exit::bad_input(error),
            };
            if let Err(error) = std::fs::write(file, text) {
                return exit::bad_input(format!("{}: cannot write: {error}", file.display()));
            }
            rewritten += 1;
            out!("wrote {}", file.display());
            continue;
        }
        failed += 1;
        out!("FAIL  {}", file.display());
        crate::output::text(&outcome.diff());
    }
    out!(
        "{} scenarios: {} passed, {failed} failed, {rewritten} rewritten",
        files.len(),
        files.len() - failed - rewritten
    );
    if failed > 0 {
        exit::VIOLATION
    } else {
        exit::OK
    }
}
