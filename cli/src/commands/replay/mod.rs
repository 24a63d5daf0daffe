//! `felix replay`: rerun one seed and explain it.
//!
//! Prints the knobs the seed drew, the trace hash and, for a failing run, the violation, the step
//! where it happened, the events it depends on ("why") and the events leading to it (`--context
//! N` lines, or `--all`). `--trace FILE.jsonl` writes one JSON object per
//! event; `--check-determinism` runs the seed twice and compares trace hashes, naming the first
//! differing line when they differ. `--html FILE.html` draws the run as a sequence diagram
//! (`crate::html`).

mod store_dir;

use crate::args::parse_twin_option;
use crate::exit;
use crate::output;
use clap::Args;
use felix_core::rules::{Layer, TwinName};
use felix_sim::render::trace::TraceLine;
use felix_sim::seeded::fork::Fork;
use felix_sim::seeded::knobs::Knobs;
use felix_sim::{RunReport, RunSpec, Window};
use std::io::Write;
use std::path::PathBuf;

/// The most events `--why-max` may ask for.
const WHY_MAX_MAX: usize = 100_000;

/// Arguments of `felix replay`.
#[derive(Args, Debug)]
pub struct ReplayArgs {
    /// The seed to rerun.
    #[arg(long)]
    pub seed: String,
    /// The twin the seed was swept with, if any.
    #[arg(long)]
    pub twin: Option<String>,
    /// Write the trace here, one JSON object per line.
    #[arg(long)]
    pub trace: Option<PathBuf>,
    /// Run the seed twice and compare the trace hashes.
    #[arg(long)]
    pub check_determinism: bool,
    /// With --twin: the twin's knobs (its bias included) with every rule on, the control run
    /// that `felix twins --sim` checks for each catching seed.
    #[arg(long)]
    pub control: bool,
    /// Write the run as a sequence diagram: one self-contained HTML page.
    #[arg(long)]
    pub html: Option<PathBuf>,
    /// Lines shown before the violation in the readable summary (default 24).
    #[arg(long, value_name = "N")]
    pub context: Option<usize>,
    /// Events listed in the why at most (default 40, at most 100000).
    #[arg(long, value_name = "N")]
    pub why_max: Option<usize>,
    /// Show every line of the run up to the violation.
    #[arg(long, conflicts_with = "context")]
    pub all: bool,
    /// With --twin: the default swarm's knobs for the seed (no per-twin bias), as
    /// `felix twins --sim --unbiased` ran it.
    #[arg(long, requires = "twin")]
    pub unbiased: bool,
    /// Run with exactly these knobs (JSON, as a guided sweep prints them) instead of the seed's.
    #[arg(long)]
    pub knobs: Option<String>,
    /// Replay a continuation: the seed's run with every stream that draws the future re-keyed
    /// after trace step STEP, branch BRANCH (as a guided sweep with --branches prints it).
    #[arg(long, value_name = "STEP:BRANCH")]
    pub fork: Option<String>,
    /// Trace validation: hold every step to a model's actions (FelixHeadTrim for a felixd run,
    /// ParosTrimJump for a paros run); prints the model actions each step matched, and a
    /// divergence fails the run (`TraceValidation`).
    #[arg(long)]
    pub validate: bool,
    /// Write each node's disk at the end of the run as a file store in DIR/n<id> (DIR new or
    /// empty), for `felix store check` and `felix store dump`.
    #[arg(long, value_name = "DIR")]
    pub store_dir: Option<PathBuf>,
}

/// The exact command that replays `seed`, as a control run when `control`.
pub fn replay_command_for(seed: u64, twin: Option<TwinName>, control: bool) -> String {
    match (twin, control) {
        (Some(twin), true) => format!("felix replay --seed {seed} --twin {twin} --control"),
        (Some(twin), false) => format!("felix replay --seed {seed} --twin {twin}"),
        (None, _) => format!("felix replay --seed {seed}"),
    }
}

/// The exact command that reruns `spec` (its knobs printed in full when they are not the seed's
/// own draw).
pub fn replay_command_spec(spec: &RunSpec) -> String {
    let mut command = replay_command_for(spec.seed, spec.twin, spec.control);
    if spec
        .twin
        .is_some_and(|twin| twin.expected(Layer::Validation).is_some())
    {
        command.push_str(" --validate");
    }
    if spec.unbiased && spec.twin.is_some() && spec.knobs.is_none() {
        command.push_str(" --unbiased");
    }
    if let Some(fork) = &spec.fork {
        command.push_str(&format!(" --fork {fork}"));
    }
    if let Some(knobs) = &spec.knobs {
        let json = serde_json::to_string(knobs).unwrap_or_default();
        command.push_str(&format!(" --knobs '{json}'"));
    }
    command
}

/// The run's knobs (`--knobs`) and fork (`--fork`), if given; an error is a message for the
/// user.
fn knobs_and_fork(args: &ReplayArgs) -> Result<(Option<Knobs>, Option<Fork>), String> {
    let knobs = (args.knobs.as_deref().map(Knobs::parse).transpose())
        .map_err(|message| format!("--knobs: {message}"))?;
    let fork = (args.fork.as_deref().map(Fork::parse).transpose())
        .map_err(|message| format!("--fork {message}"))?;
    Ok((knobs, fork))
}

/// What `felix replay` runs and writes, read from its arguments: the run's spec (its trace kept),
/// the trace file, opened before the run so that a bad path is reported without waiting for it,
/// and the why's line limit.
struct Plan {
    spec: RunSpec,
    trace_file: Option<std::io::BufWriter<std::fs::File>>,
    why_max: usize,
}

fn plan(args: &ReplayArgs) -> Result<Plan, String> {
    let Ok(seed) = args.seed.trim().parse::<u64>() else {
        return Err(format!(
            "--seed {:?}: not a seed (a whole number 0..2^64)",
            args.seed
        ));
    };
    let twin = parse_twin_option(args.twin.as_deref(), args.validate)?;
    let trace_file = match &args.trace {
        Some(path) => Some(std::io::BufWriter::new(
            std::fs::File::create(path)
                .map_err(|error| format!("--trace {}: cannot write: {error}", path.display()))?,
        )),
        None => None,
    };
    let why_max = args
        .why_max
        .unwrap_or(felix_sim::render::why::WHY_LINES_MAX);
    if !(1..=WHY_MAX_MAX).contains(&why_max) {
        return Err(format!(
            "--why-max {why_max}: out of range (1..={WHY_MAX_MAX})"
        ));
    }
    if args.control && twin.is_none() {
        return Err(
            "--control needs --twin: it reruns a twin's seed with every rule on".to_string(),
        );
    }
    if let Some(path) = args.html.as_deref() {
        crate::html::check_writable(path)?;
    }
    if let Some(dir) = args.store_dir.as_deref() {
        store_dir::check_usable(dir)?;
    }
    let (knobs, fork) = knobs_and_fork(args)?;
    let mut spec = RunSpec::new(seed, twin);
    spec.fork = fork;
    spec.keep_trace = true;
    spec.control = args.control;
    spec.unbiased = args.unbiased;
    spec.knobs = knobs;
    spec.keep_disks = args.store_dir.is_some();
    Ok(Plan {
        spec,
        trace_file,
        why_max,
    })
}

pub fn run(args: ReplayArgs) -> u8 {
    let Plan {
        mut spec,
        mut trace_file,
        why_max,
    } = match plan(&args) {
        Ok(plan) => plan,
        Err(message) => return exit::bad_input(message),
    };
    let (report, validated_steps) = if args.validate {
        let validated = felix_validate::run_validated(&spec, true);
        let model = validated.validator.counts.model.name();
        (
            validated.report,
            validated.validator.steps.map(|steps| (model, steps)),
        )
    } else {
        (felix_sim::run(&spec), None)
    };
    // The trace file first: a reader that closes stdout early (`| head`) must not cost the file.
    let mut trace_note = None;
    if let (Some(file), Some(path)) = (&mut trace_file, &args.trace) {
        match write_trace(file, &report) {
            Ok(note) => {
                trace_note = Some(format!("{note} {}{}", path.display(), note_end(&report)))
            }
            Err(error) => {
                return exit::bad_input(format!(
                    "--trace {}: write failed: {error}",
                    path.display()
                ))
            }
        }
    }
    let store_lines = match args.store_dir.as_deref() {
        Some(dir) => match store_dir::write(dir, &report.disks) {
            Ok(lines) => lines,
            Err(message) => return exit::bad_input(format!("--store-dir: {message}")),
        },
        None => Vec::new(),
    };
    spec.keep_disks = false;
    let command = replay_command_spec(&spec);
    let html = args.html.as_deref();
    let html_note = match html.map(|path| crate::html::write_run(path, &report, &command)) {
        Some(Err(message)) => return exit::bad_input(message),
        written => written.and_then(Result::ok),
    };
    let window = if args.all {
        Window::All
    } else {
        Window::Before(args.context.unwrap_or(felix_sim::CONTEXT_LINES))
    };
    output::line(report.summary_why(window, why_max).trim_end());
    if let Some((model, steps)) = &validated_steps {
        print_validated(&report, model, steps, window);
    }
    for note in [trace_note, html_note].into_iter().flatten() {
        output::line(&note);
    }
    for line in &store_lines {
        output::line(line);
    }
    let mut code = if report.violations.is_empty() {
        exit::OK
    } else {
        exit::VIOLATION
    };
    if args.check_determinism && !same_run_twice(&spec, &report) {
        code = exit::VIOLATION;
    }
    if code != exit::OK && !report.violations.is_empty() {
        spec.keep_trace = false;
        output::line(&format!("replay: {}", replay_command_spec(&spec)));
    }
    code
}

/// The model actions each step of a validated run matched, in the summary's window: up to the
/// divergence (or the end), `--context` lines before it, or every line with `--all`.
fn print_validated(
    report: &RunReport,
    model: &str,
    steps: &[felix_validate::MatchedStep],
    window: Window,
) {
    let lines = report.trace_lines.as_deref().unwrap_or(&[]);
    // The same window as the summary: up to the divergence (or the end), `--context` lines
    // before it, or every line with `--all`.
    let last = report
        .violations
        .first()
        .and_then(|finding| finding.step)
        .map_or(lines.len(), |step| (step as usize + 1).min(lines.len()));
    let first = match window {
        Window::All => 0,
        Window::Before(context) => last.saturating_sub(context + 1),
    };
    output::line(&format!(
        "validated trace against {model}, lines {first}..{last} (under a line: the model actions of the steps that ended after it):"
    ));
    for line in crate::validation::interleaved(lines, steps, first, last) {
        output::line(&line);
    }
    output::line(&crate::validation::summary_line(&report.coverage));
}

/// Runs `spec` again and compares the trace hashes with `report`'s, printing the outcome (the
/// first differing line when they differ). True when the two runs are the same.
fn same_run_twice(spec: &RunSpec, report: &RunReport) -> bool {
    let again = felix_sim::run(spec);
    if again.trace_hash == report.trace_hash {
        output::line(&format!(
            "determinism: same trace hash {:016x} on a second run",
            again.trace_hash
        ));
        true
    } else {
        let first = report.trace_lines.as_deref().unwrap_or(&[]);
        let second = again.trace_lines.as_deref().unwrap_or(&[]);
        let differing = first
            .iter()
            .zip(second)
            .position(|(a, b)| a != b)
            .unwrap_or(first.len().min(second.len()));
        output::line(&format!(
            "determinism: FAILED: trace hashes differ ({:016x} vs {:016x}); first differing line {differing}:",
            report.trace_hash, again.trace_hash
        ));
        output::line(&format!(
            "  first run:  {}",
            first
                .get(differing)
                .map_or("<end of trace>".to_string(), TraceLine::to_json)
        ));
        output::line(&format!(
            "  second run: {}",
            second
                .get(differing)
                .map_or("<end of trace>".to_string(), TraceLine::to_json)
        ));
        false
    }
}

/// Writes the run's trace and then its verdict (one `violation` line per finding); says how many
/// lines it wrote.
fn write_trace(file: &mut impl Write, report: &RunReport) -> std::io::Result<String> {
    let lines = report.trace_lines.as_deref().unwrap_or(&[]);
    let verdict = felix_sim::render::trace::violation_lines(lines, &report.violations);
    lines
        .iter()
        .chain(&verdict)
        .try_for_each(|line| writeln!(file, "{}", line.to_json()))?;
    file.flush()?;
    Ok(format!(
        "trace: {} lines written to",
        lines.len() + verdict.len()
    ))
}

/// Where the trace's verdict lines are, after the file's name.
fn note_end(report: &RunReport) -> String {
    match report.violations.len() {
        0 => String::new(),
        1 => " (the last one is the violation)".to_string(),
        n => format!(" (the last {n} are the violations)"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The replay commands that sweeps and twins print for a seed, plain and as a control run.
    #[test]
    fn replay_commands_name_the_run() {
        assert_eq!(
            replay_command_for(7, Some(TwinName::NoopSkip), false),
            "felix replay --seed 7 --twin NoopSkip"
        );
        // The hint `felix replay --control` prints for a failing control run.
        assert_eq!(
            replay_command_for(7, Some(TwinName::NoopSkip), true),
            "felix replay --seed 7 --twin NoopSkip --control"
        );
        // A continuation's command names its fork.
        let spec = RunSpec {
            fork: Some(felix_sim::seeded::fork::Fork {
                step: 1200,
                branch: 3,
            }),
            ..RunSpec::new(7, None)
        };
        assert_eq!(
            replay_command_spec(&spec),
            "felix replay --seed 7 --fork 1200:3"
        );
    }
}
