//! `felix check [CONFIG...] [--threads N] [--json]`: checks model configurations with Stateright.
//!
//! Each configuration is searched breadth-first to completion (or to its first broken invariant). A
//! violation prints the shortest counterexample, one line per step: the action, then the variables
//! it changed, and the command exits 1. Unknown names exit 2 with the list of names.
//! `--html FILE.html` draws the counterexample as a sequence diagram (`crate::html`). Both specs'
//! configurations go through the same path (`check_one`, over
//! `felix_model::registry::AnyConfig::check`, the runner generic over `felix_model::spec::Spec`);
//! what a spec cannot do is refused in one place, `unsupported`.

use std::io::IsTerminal;

use clap::Args;
use felix_model::check::{self, Outcome, Report};
use felix_model::head_trim::spec::FelixHeadTrim;
use felix_model::registry::{self, AnyConfig};
use felix_model::spec::Spec;
use serde_json::json;

use crate::exit;

/// The most checker threads `--threads` takes: each is an OS thread with a stack of its own,
/// and far more than the cores only adds contention.
const THREADS_MAX: usize = 256;

/// Arguments of `felix check`.
#[derive(Args, Debug)]
pub struct CheckArgs {
    /// Configurations to check, as their `.cfg` names; the `FelixHeadTrim` prefix may be dropped,
    /// and the `ParosTrimJump` one where no FelixHeadTrim name is the same (`JumpResetsTerm`).
    /// Default: the main configuration, FelixHeadTrim.
    pub configs: Vec<String>,
    /// Checker threads (default: the number of cores; at most `THREADS_MAX`).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Print one JSON object per configuration on stdout.
    #[arg(long)]
    pub json: bool,
    /// Search one state per orbit under permutations of the brokers: sound, faster, but the
    /// unique-state count is then not comparable with TLC's.
    #[arg(long)]
    pub symmetry: bool,
    /// Use the lean search (64-bit fingerprints and two BFS levels in memory, no paths) instead
    /// of Stateright's checker: same model and counts, for configurations too big for the
    /// latter's memory.
    #[arg(long)]
    pub compact: bool,
    /// Print a progress line on stderr every few seconds (default: only when stderr is a
    /// terminal).
    #[arg(long)]
    pub progress: bool,
    /// Write the counterexample as a sequence diagram: one self-contained HTML page (one
    /// configuration only).
    #[arg(long)]
    pub html: Option<std::path::PathBuf>,
}

/// Runs `felix check`.
pub fn run(args: CheckArgs) -> u8 {
    let configs = match resolve(&args.configs) {
        Ok(configs) => configs,
        Err(code) => return code,
    };
    let threads = match args.threads {
        Some(0) => return exit::bad_input("--threads must be at least 1"),
        Some(threads) if threads > THREADS_MAX => {
            return exit::bad_input(format!("--threads {threads}: at most {THREADS_MAX}"))
        }
        Some(threads) => threads,
        None => std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1),
    };
    if let Err(message) = unsupported(&configs, &args) {
        return exit::bad_input(message);
    }
    let mut code = exit::OK;
    for config in configs {
        let checked = check_one(config, &args, threads);
        if let Some(path) = &args.html {
            let AnyConfig::HeadTrim(config) = config else {
                unreachable!("`unsupported` refuses --html where a spec draws no diagram");
            };
            match crate::html::write_counterexample(path, config, &checked) {
                // With --json, stdout holds only JSON objects.
                Ok(note) if args.json => eprintln!("felix: {note}"),
                Ok(note) => crate::output::text(&format!("{note}\n")),
                Err(message) => return exit::bad_input(message),
            }
        }
        if checked.outcome == Outcome::Violated {
            code = exit::VIOLATION;
        }
    }
    code
}

/// The one place that says which options a spec cannot take, and why: `--symmetry` where the
/// spec has no symmetry reduction, `--html` where it draws no diagram (and on more than one
/// configuration). `--compact`, `--threads`, `--json` and `--progress` work for every spec.
fn unsupported(configs: &[AnyConfig], args: &CheckArgs) -> Result<(), String> {
    for config in configs {
        if let (true, Some(why)) = (args.symmetry, config.no_symmetry()) {
            return Err(format!("--symmetry on {}: {why}", config.name()));
        }
        if let (Some(_), Some(why)) = (&args.html, config.no_diagram()) {
            return Err(format!("--html on {}: {why}", config.name()));
        }
    }
    if let Some(path) = &args.html {
        if configs.len() != 1 {
            return Err("--html draws one configuration: name exactly one".to_string());
        }
        crate::html::check_writable(path)?;
    }
    Ok(())
}

/// Checks one configuration of either spec and prints its report (text or JSON).
fn check_one(config: AnyConfig, args: &CheckArgs, threads: usize) -> Report {
    let show_progress = args.progress || std::io::stderr().is_terminal();
    let mut progress = |snapshot: check::Progress| {
        if show_progress {
            eprintln!(
                "felix check {}: {} unique states, depth {}, {:.0} s, {:.0} states/s",
                config.name(),
                snapshot.unique_states,
                snapshot.max_depth,
                snapshot.seconds,
                snapshot.unique_states as f64 / snapshot.seconds.max(0.001),
            );
        }
    };
    let report = config.check(threads, args.symmetry, args.compact, &mut progress);
    if args.json {
        crate::output::text(&format!("{}\n", report_json(&report)));
    } else {
        crate::output::text(&report_text(&report, threads));
    }
    report
}

/// Resolves names to configurations of either spec (`felix_model::registry`); an unknown name is
/// bad input and lists the valid names. No name is FelixHeadTrim's main configuration.
pub fn resolve(names: &[String]) -> Result<Vec<AnyConfig>, u8> {
    if names.is_empty() {
        return Ok(vec![AnyConfig::HeadTrim(FelixHeadTrim::main_config())]);
    }
    let mut configs = Vec::with_capacity(names.len());
    for name in names {
        match registry::lookup(name) {
            Some(config) => configs.push(config),
            None => {
                return Err(exit::bad_input(format!(
                    "unknown configuration {name:?}; valid names (a spec's prefix may be \
                     dropped): {}",
                    registry::names().join(", "),
                )))
            }
        }
    }
    Ok(configs)
}

/// The human-readable report of one configuration.
pub(crate) fn report_text(report: &Report, threads: usize) -> String {
    let mut text = String::new();
    let outcome = match (report.outcome, report.invariant) {
        (Outcome::Violated, Some(invariant)) => format!("VIOLATED {invariant}"),
        _ => "pass".to_string(),
    };
    text.push_str(&format!(
        "{}: {outcome}: {} unique states{} ({} total), depth {}, {:.2} s, {:.0} states/s, {} \
         thread(s)\n",
        report.config,
        report.unique_states,
        if report.broker_symmetry {
            " up to broker symmetry"
        } else {
            ""
        },
        report.total_states,
        report.max_depth,
        report.seconds,
        report.states_per_second(),
        threads,
    ));
    if report.outcome == Outcome::Pass {
        if !report.sometimes_reached.is_empty() {
            text.push_str(&format!(
                "  sometimes reached: {}\n",
                report.sometimes_reached.join(", ")
            ));
        }
        if !report.sometimes_missed.is_empty() {
            text.push_str(&format!(
                "  sometimes NOT reached (vacuous in this configuration?): {}\n",
                report.sometimes_missed.join(", ")
            ));
        }
    }
    if !report.trace.is_empty() {
        text.push_str(&format!(
            "  shortest counterexample ({} steps after Init):\n",
            report.trace.len() - 1
        ));
        text.push_str(&felix_model::trace::render(&report.trace));
    }
    text
}

/// The JSON report of one configuration (docs/usage.md: config, outcome, invariant, unique_states,
/// max_depth, seconds, trace; plus a few extra figures).
pub fn report_json(report: &Report) -> serde_json::Value {
    let trace: Vec<serde_json::Value> = report
        .trace
        .iter()
        .map(|step| {
            let changed: Vec<serde_json::Value> = step
                .changed
                .iter()
                .map(|(name, value)| json!({"variable": name, "value": value}))
                .collect();
            json!({"action": step.action, "changed": changed})
        })
        .collect();
    json!({
        "config": report.config,
        "broker_symmetry": report.broker_symmetry,
        "outcome": report.outcome,
        "invariant": report.invariant.map(|invariant| invariant.name()),
        "unique_states": report.unique_states,
        "total_states": report.total_states,
        "max_depth": report.max_depth,
        "seconds": report.seconds,
        "states_per_second": report.states_per_second(),
        "sometimes_missed": report.sometimes_missed,
        "trace": trace,
    })
}
