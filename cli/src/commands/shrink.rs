//! `felix shrink`: from a failing seed to the smallest scenario that still fails.
//!
//! Shrinks the seed's run under its twin (`felix_sim::search::shrink`: knobs, then the recorded
//! choices) while it still breaks the twin's invariant, then writes the shrunk run as a scenario
//! file (`felix_sim::search::shrink::script`): prose naming the seed, the twin, the invariant and
//! what happened, then the same verbs with every rule on (audit `ok`) and under the twin (audit
//! names the invariant). Progress goes to stderr; the report (events before and after, verbs,
//! tries, seconds) to stdout. Exit 0: written; 1: shrunk, but no script reproduced it in the
//! driver; 2: bad usage, or a seed that does not fail.

use crate::args::parse_twin;
use crate::exit;
use clap::Args;
use felix_core::TwinName;
use felix_sim::search::shrink::{self, script, Stop, Target};
use felix_sim::seeded::fork::Fork;
use felix_sim::seeded::knobs::Knobs;
use std::path::PathBuf;
use std::time::Instant;

/// Default budget of runs.
const BUDGET_DEFAULT: u64 = 500;

/// Arguments of `felix shrink`.
#[derive(Args, Debug)]
pub struct ShrinkArgs {
    /// The failing seed.
    #[arg(long)]
    pub seed: String,
    /// The twin the seed fails under (the rule that is off). Required: shrinking keeps the
    /// twin's invariant broken.
    #[arg(long)]
    pub twin: Option<String>,
    /// Write the scenario here (default: print it).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// The most runs to try while shrinking.
    #[arg(long, default_value_t = BUDGET_DEFAULT)]
    pub budget: u64,
    /// The default swarm's knobs for the seed (no per-twin bias), as `felix twins --sim
    /// --unbiased` ran it: the seed `felix replay --seed S --twin T --unbiased` reruns.
    #[arg(long, conflicts_with = "knobs")]
    pub unbiased: bool,
    /// Shrink the run with exactly these knobs (JSON, as a guided sweep prints them).
    #[arg(long)]
    pub knobs: Option<String>,
    /// Shrink a continuation: the seed's run with every stream that draws the future re-keyed
    /// after trace step STEP, branch BRANCH (as `felix replay --fork` reruns it).
    #[arg(long, value_name = "STEP:BRANCH")]
    pub fork: Option<String>,
    /// The invariant to keep broken (default: the twin's own, if the seed breaks it; else the
    /// run's first finding, which the progress says).
    #[arg(long, value_name = "NAME")]
    pub invariant: Option<String>,
}

/// The seed, the twin and the target `felix shrink` shrinks, read from its arguments; a path
/// that cannot be written is reported before the shrinking, without leaving a file.
fn plan(args: &ShrinkArgs) -> Result<(u64, TwinName, Target), String> {
    let Ok(seed) = args.seed.trim().parse::<u64>() else {
        return Err(format!(
            "--seed {:?}: not a seed (a whole number 0..2^64)",
            args.seed
        ));
    };
    let Some(twin) = args.twin.as_deref().map(parse_twin).transpose()? else {
        return Err("--twin is needed: shrinking keeps the twin's invariant broken (every rule on has no invariant to keep)".to_string());
    };
    let target = target(args, seed, twin)?;
    if args.budget == 0 {
        return Err("--budget 0: at least one run is needed".to_string());
    }
    if let Some(path) = args.out.as_deref() {
        check_writable(path)?;
    }
    Ok((seed, twin, target))
}

/// The scenario's header: the command that made it, the original run and what shrinking kept.
fn header(
    args: &ShrinkArgs,
    seed: u64,
    twin: TwinName,
    shrunk: &shrink::Shrunk,
    partial: &str,
) -> String {
    let what = shrunk
        .shrunk
        .violations
        .iter()
        .find(|finding| finding.invariant == shrunk.invariant)
        .map(|finding| finding.detail.clone())
        .unwrap_or_default();
    format!(
        "Shrunk by `felix shrink --seed {seed} --twin {twin}{flags} --budget {budget}`: seed {seed} under \
twin {twin} breaks {invariant}.\n\nIn the seeded world ({before} events, {to} of them up to the \
violation; shrunk to {after} events up to the violation in {tries} tries{partial}): {what}.\nThe \
same steps in the scripted driver: with every rule on the audit is ok; with the twin the audit \
names {invariant}.\n",
        budget = args.budget,
        flags = flags(args),
        invariant = shrunk.invariant,
        before = shrunk.original.events,
        to = shrunk.original_to_violation,
        after = shrunk.shrunk.events,
        tries = shrunk.tries,
    )
}

pub fn run(args: ShrinkArgs) -> u8 {
    let (seed, twin, target) = match plan(&args) {
        Ok(plan) => plan,
        Err(message) => return exit::bad_input(message),
    };
    let started = Instant::now();
    let mut progress = |line: &str| eprintln!("{line}");
    let shrunk = match shrink::shrink(&target, args.budget, &mut progress) {
        Ok(shrunk) => shrunk,
        Err(error) => return exit::bad_input(format!("seed {seed} twin {twin}: {error}")),
    };
    let partial = match shrunk.stop {
        Stop::Fixpoint => "",
        Stop::Budget => " (partially shrunk: the budget ran out)",
    };
    let header = header(&args, seed, twin, &shrunk, partial);
    let scenario = script::scenario(&shrunk, &header);
    let seconds = started.elapsed().as_secs_f64();
    out!(
        "seed {seed} twin {twin}: breaks {}; events {} ({} to the violation) -> {}; choices {} -> {}; {} tries ({} kept, {} runs){partial}; {seconds:.1} s",
        shrunk.invariant,
        shrunk.original.events,
        shrunk.original_to_violation,
        shrunk.shrunk.events,
        shrunk.original.size().0,
        shrunk.shrunk.size().0,
        shrunk.tries,
        shrunk.improvements,
        shrunk.runs,
    );
    out!("knobs: {}", shrunk.shrunk.knobs.describe());
    match scenario {
        Ok(scenario) => {
            out!(
                "scenario: {} verbs per half (translated {}, {} scripts tried{})",
                scenario.verbs,
                scenario.translated,
                scenario.tries,
                if scenario.budget_spent {
                    "; partially minimized: the budget of scripts ran out"
                } else {
                    ""
                }
            );
            match &args.out {
                Some(path) => {
                    if let Err(error) = std::fs::write(path, &scenario.text) {
                        return exit::bad_input(format!(
                            "--out {}: cannot write: {error}",
                            path.display()
                        ));
                    }
                    out!("wrote {}", path.display());
                }
                None => crate::output::text(&scenario.text),
            }
            exit::OK
        }
        Err(failed) => not_reproduced(&args, &shrunk, &failed),
    }
}

/// The run to shrink, from the flags replay also takes: the seed's knobs (biased towards the
/// twin, the default swarm's with `--unbiased`, or the given ones), the continuation (`--fork`)
/// and the invariant to keep.
fn target(args: &ShrinkArgs, seed: u64, twin: TwinName) -> Result<Target, String> {
    let mut target = Target::new(seed, twin);
    if args.unbiased {
        target.knobs = Knobs::draw(seed, None);
    }
    if let Some(text) = &args.knobs {
        target.knobs = Knobs::parse(text).map_err(|message| format!("--knobs: {message}"))?;
    }
    target.fork = (args.fork.as_deref().map(Fork::parse).transpose())
        .map_err(|message| format!("--fork {message}"))?;
    target.invariant = args
        .invariant
        .as_deref()
        .map(crate::args::parse_invariant)
        .transpose()?;
    Ok(target)
}

/// The flags that chose the run, as the scenario's header repeats the command.
fn flags(args: &ShrinkArgs) -> String {
    let mut flags = String::new();
    if args.unbiased {
        flags.push_str(" --unbiased");
    }
    if let Some(fork) = args.fork.as_deref().and_then(|fork| Fork::parse(fork).ok()) {
        flags.push_str(&format!(" --fork {fork}"));
    }
    if let Some(knobs) = &args.knobs {
        flags.push_str(&format!(" --knobs '{knobs}'"));
    }
    if let Some(invariant) = &args.invariant {
        flags.push_str(&format!(" --invariant {invariant}"));
    }
    flags
}

/// Whether `path` can be written, without leaving a file that was not there.
fn check_writable(path: &std::path::Path) -> Result<(), String> {
    let existed = path.exists();
    let opened = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(path);
    if let Err(error) = opened {
        return Err(format!("--out {}: cannot write: {error}", path.display()));
    }
    if !existed {
        let _ = std::fs::remove_file(path);
    }
    Ok(())
}

/// The shrunk run did not reproduce in the scripted driver: says so (exit 1); the verbs tried go
/// to `FILE.unreproduced` beside `--out FILE`, never to stdout.
fn not_reproduced(
    args: &ShrinkArgs,
    shrunk: &shrink::Shrunk,
    failed: &script::NotReproduced,
) -> u8 {
    out!(
        "no scenario: the {} translated verbs do not break {} in the scripted driver, nor do the {} verbs of its schedule",
        failed.verbs.len(),
        shrunk.invariant,
        failed.timed.len()
    );
    // The verbs that did not reproduce go to the --out file for a look, never to stdout.
    if let Some(path) = &args.out {
        let text = format!(
            "# felix shrink: these verbs did NOT reproduce {} in the scripted driver (not a scenario)\n# translated:\n{}\n# its schedule:\n{}\n",
            shrunk.invariant,
            failed.verbs.join("\n"),
            failed.timed.join("\n")
        );
        if let Err(error) = std::fs::write(path.with_extension("unreproduced"), text) {
            return exit::bad_input(format!("--out {}: cannot write: {error}", path.display()));
        }
        out!(
            "the verbs tried: {}",
            path.with_extension("unreproduced").display()
        );
    }
    exit::VIOLATION
}
