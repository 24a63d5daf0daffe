//! `felix trace show FILE.jsonl`: render a trace file (`felix replay --trace`) readably, one
//! sentence per line, with the renderer replay summaries use (`felix_sim::render::describe`).
//!
//! `--html PAGE` also draws the trace as a sequence diagram (`crate::html::trace_file`): a
//! simulated run's trace or a `felix nemesis` trace of real processes.
//!
//! A file that is not a trace (a line that is not a trace line of this format, see
//! docs/trace-format.md, or a run that names another `trace_format`) is bad input: its line
//! number and why, exit 2.

use crate::exit;
use crate::output;
use clap::{Args, Subcommand};
use felix_sim::render::describe;
use felix_sim::render::trace::{SimEvent, TraceEvent, TraceLine, TRACE_FORMAT, TRACE_FORMATS_READ};
use std::io::BufRead;
use std::path::PathBuf;

/// Arguments of `felix trace`.
#[derive(Args, Debug)]
pub struct TraceArgs {
    #[command(subcommand)]
    pub command: TraceCommand,
}

#[derive(Subcommand, Debug)]
pub enum TraceCommand {
    /// Render a JSONL trace file, one sentence per event.
    Show {
        /// The trace file, as `felix replay --trace FILE.jsonl` or `felix nemesis` writes it.
        file: PathBuf,
        /// Also draw it as a sequence diagram: one self-contained HTML page (docs/pictures.md).
        #[arg(long, value_name = "PAGE")]
        html: Option<PathBuf>,
    },
}

pub fn run(args: TraceArgs) -> u8 {
    match args.command {
        TraceCommand::Show { file, html } => show(&file, html.as_deref()),
    }
}

fn show(path: &PathBuf, html: Option<&std::path::Path>) -> u8 {
    let shown = path.display();
    match std::fs::metadata(path) {
        Ok(metadata) if !metadata.is_file() => {
            return exit::bad_input(format!("{shown}: not a regular file"))
        }
        Ok(_) => {}
        Err(error) => return exit::bad_input(format!("{shown}: cannot read: {error}")),
    }
    let file = match std::fs::File::open(path) {
        Ok(file) => file,
        Err(error) => return exit::bad_input(format!("{shown}: cannot read: {error}")),
    };
    let mut rendered = Vec::new();
    let mut lines = Vec::new();
    for (index, line) in std::io::BufReader::new(file).lines().enumerate() {
        let number = index + 1;
        let line = match line {
            Ok(line) => line,
            Err(error) => {
                return exit::bad_input(format!("{shown}:{number}: cannot read: {error}"))
            }
        };
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<TraceLine>(&line) {
            Ok(trace_line) => {
                if let TraceEvent::Sim(SimEvent::Started { trace_format, .. }) = &trace_line.event {
                    if !TRACE_FORMATS_READ.contains(trace_format) {
                        return exit::bad_input(format!(
                            "{shown}:{number}: trace format {trace_format}; this felix reads \
                             formats {} to {TRACE_FORMAT} (docs/trace-format.md)",
                            TRACE_FORMATS_READ.start()
                        ));
                    }
                }
                rendered.push(describe::trace_line(&trace_line));
                if html.is_some() {
                    lines.push(trace_line);
                }
            }
            Err(error) => {
                return exit::bad_input(format!(
                    "{shown}:{number}: not a trace line (docs/trace-format.md): {error}"
                ))
            }
        }
    }
    if rendered.is_empty() {
        return exit::bad_input(format!("{shown}: no trace lines"));
    }
    output::line(&rendered.join("\n"));
    if let Some(page) = html {
        let written = crate::html::trace_file::diagram(&lines, &format!("trace {shown}"))
            .map_err(|message| format!("{shown}: {message}"))
            .and_then(|diagram| crate::html::write(page, &diagram));
        match written {
            Ok(bytes) => eprintln!("html: {bytes} bytes written to {}", page.display()),
            Err(message) => return exit::bad_input(message),
        }
    }
    exit::OK
}
