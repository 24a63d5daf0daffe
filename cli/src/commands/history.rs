//! `felix history check FILE.jsonl [--json]`: the Linearizable checker (`felix_audits::
//! linearizable`) on a trace file, the one `felix replay --seed S --trace FILE.jsonl` writes.
//!
//! Exit 0: linearizable. Exit 1: not linearizable (the finding names the operations that admit no
//! order, with their trace steps), or over the checker's budget (unchecked: neither proved nor
//! refuted, never a pass). Exit 2: not a trace file (its line number and why).

use crate::exit;
use crate::output;
use clap::{Args, Subcommand};
use felix_audits::linearizable::{check_operations, operations, Budget, Verdict};
use felix_core::history::Event;
use felix_sim::render::trace::{TraceEvent, TraceLine};
use serde::Serialize;
use std::io::BufRead;
use std::path::{Path, PathBuf};

/// Arguments of `felix history`.
#[derive(Args, Debug)]
pub struct HistoryArgs {
    #[command(subcommand)]
    pub command: HistoryCommand,
}

#[derive(Subcommand, Debug)]
pub enum HistoryCommand {
    /// Check that the clients' history in a trace file is linearizable.
    Check {
        /// The trace file, as `felix replay --trace FILE.jsonl` writes it.
        file: PathBuf,
        /// Print one JSON object instead of a sentence.
        #[arg(long)]
        json: bool,
    },
}

/// What `--json` prints.
#[derive(Serialize)]
struct Summary<'a> {
    file: String,
    /// `linearizable`, `not_linearizable` or `unchecked`.
    outcome: &'a str,
    /// Operations judged (client requests, and records nobody requested).
    operations: usize,
    /// Whether the exact search was needed (the candidate order failed).
    searched: bool,
    /// The trace step of the finding (not linearizable only).
    step: Option<u64>,
    /// The finding, or why the history is unchecked.
    message: Option<String>,
}

pub fn run(args: HistoryArgs) -> u8 {
    match args.command {
        HistoryCommand::Check { file, json } => check_file(&file, json),
    }
}

/// The history events of a trace file with the trace step of each, or why it is not a trace.
fn read_history(path: &Path) -> Result<(Vec<Event>, Vec<u64>), String> {
    let shown = path.display();
    match std::fs::metadata(path) {
        Ok(metadata) if !metadata.is_file() => return Err(format!("{shown}: not a regular file")),
        Ok(_) => {}
        Err(error) => return Err(format!("{shown}: cannot read: {error}")),
    }
    let file =
        std::fs::File::open(path).map_err(|error| format!("{shown}: cannot read: {error}"))?;
    let mut history = Vec::new();
    let mut steps = Vec::new();
    let mut lines = 0usize;
    for (index, line) in std::io::BufReader::new(file).lines().enumerate() {
        let number = index + 1;
        let line = line.map_err(|error| format!("{shown}:{number}: cannot read: {error}"))?;
        if line.trim().is_empty() {
            continue;
        }
        let trace_line = serde_json::from_str::<TraceLine>(&line).map_err(|error| {
            format!("{shown}:{number}: not a trace line (docs/trace-format.md): {error}")
        })?;
        lines += 1;
        if let TraceEvent::History(event) = trace_line.event {
            history.push(event);
            steps.push(trace_line.step);
        }
    }
    if lines == 0 {
        return Err(format!("{shown}: no trace lines"));
    }
    Ok((history, steps))
}

fn check_file(path: &Path, json: bool) -> u8 {
    let (history, steps) = match read_history(path) {
        Ok(read) => read,
        Err(message) => return exit::bad_input(message),
    };
    let step_of = |index: usize| steps.get(index).copied().unwrap_or(index as u64);
    let operations = operations(&history);
    let verdict = check_operations(&operations, Budget::DEFAULT, &|index| {
        format!("step {}", step_of(index))
    });
    let file = path.display().to_string();
    let (summary, code) = match &verdict {
        Verdict::Linearizable {
            operations,
            searched,
        } => (
            Summary {
                file,
                outcome: "linearizable",
                operations: *operations,
                searched: *searched,
                step: None,
                message: None,
            },
            exit::OK,
        ),
        Verdict::NotLinearizable(finding) => (
            Summary {
                file,
                outcome: "not_linearizable",
                operations: operations.len(),
                searched: true,
                step: Some(step_of(finding.step)),
                message: Some(finding.message.clone()),
            },
            exit::VIOLATION,
        ),
        Verdict::Unchecked { reason } => (
            Summary {
                file,
                outcome: "unchecked",
                operations: operations.len(),
                searched: true,
                step: None,
                message: Some(reason.clone()),
            },
            exit::VIOLATION,
        ),
    };
    if json {
        match serde_json::to_string(&summary) {
            Ok(line) => output::line(&line),
            Err(error) => return exit::bad_input(format!("cannot write JSON: {error}")),
        }
        return code;
    }
    let text = match (&verdict, summary.step, &summary.message) {
        (Verdict::Linearizable { .. }, _, _) => format!(
            "{}: linearizable ({} operations, {})",
            summary.file,
            summary.operations,
            if summary.searched {
                "the exact search found an order"
            } else {
                "the order the offsets reveal"
            }
        ),
        (Verdict::NotLinearizable(_), Some(step), Some(message)) => format!(
            "{}: not linearizable at step {step}: {message}",
            summary.file
        ),
        (_, _, message) => format!(
            "{}: unchecked (over the checker's budget): {}",
            summary.file,
            message.as_deref().unwrap_or("")
        ),
    };
    output::line(&text);
    code
}
