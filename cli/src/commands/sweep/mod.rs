//! `felix sweep`: run many seeds of the simulator and report every failing one.
//!
//! Each seed is one single-threaded, deterministic run; seeds are spread over `--jobs` OS threads
//! and their results are printed in seed order, so the output (and the exit code) is the same for
//! any `--jobs` value. A failing seed is printed with the exact `felix replay` command that
//! reruns it. Progress goes to stderr, and only when stderr is a terminal.

mod coverage;
pub mod guided;
pub mod merge;
mod summary;

use crate::args::{
    parse_duration, parse_invariant, parse_jobs, parse_seed_range, parse_shard, parse_twin_option,
    Seeds,
};
use crate::commands::replay::replay_command_for;
use crate::exit;
use crate::output;
use clap::Args;
use felix_core::rules::{Invariant, TwinName};
use felix_sim::{RunReport, RunSpec};
use serde_json::json;
use std::io::IsTerminal;
use std::sync::atomic::Ordering;
use std::time::Instant;
use summary::{summary_json, summary_text, CoverageShown, Ending, Totals};

/// Arguments of `felix sweep`.
#[derive(Args, Debug)]
#[command(args_conflicts_with_subcommands = true)]
pub struct SweepArgs {
    /// `felix sweep merge`: the shards' `--json` outputs as one sweep.
    #[command(subcommand)]
    pub action: Option<SweepAction>,
    /// Seeds to run, as A..B (B excluded).
    #[arg(long, default_value = "0..1000")]
    pub seeds: String,
    /// Run with this one rule switched off (a twin, e.g. Untagged); each seed's knobs are then
    /// biased towards what that twin needs (more lease moves, pauses, trims, crashes).
    #[arg(long)]
    pub twin: Option<String>,
    /// Worker threads (default: one per core). Output does not depend on it.
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Run only shard K of N (1 <= K <= N): the seeds at positions K-1, K-1+N, K-1+2N, ...
    #[arg(long)]
    pub shard: Option<String>,
    /// One JSON object per failing seed and a final summary, on stdout.
    #[arg(long)]
    pub json: bool,
    /// With --twin: run each seed with the twin's knobs but every rule on (control runs). A
    /// failure here is a bug the twin's bias found, not the twin.
    #[arg(long)]
    pub control: bool,
    /// A coverage-guided campaign instead of consecutive seeds: start seed A, B - A runs, each
    /// after the first batch mostly a mutant of a run that reached a rare (counter, bucket) pair;
    /// the default swarm's knobs (no per-twin bias), the same output for any --jobs.
    #[arg(long)]
    pub guided: bool,
    /// With --guided: follow a run that first reached a counter with continuations forked
    /// where it reached it (each printed with `--fork STEP:BRANCH`) instead of reseeds.
    #[arg(long)]
    pub branches: bool,
    /// Trace validation: hold every step of every run to a model's actions (`felix-validate`):
    /// felixd runs to FelixHeadTrim, paros runs to ParosTrimJump; a divergence fails the seed
    /// like a violation (`TraceValidation`).
    #[arg(long)]
    pub validate: bool,
    /// Stop at the first failing seed (in seed order): its summary and the next seed to resume at.
    #[arg(long)]
    pub fail_fast: bool,
    /// Run seeds in order until this much wall time has passed (e.g. 90s, 10m, 2h), then print
    /// the summary of the seeds run and the command that resumes at the next one.
    #[arg(long, value_name = "DURATION")]
    pub time_budget: Option<String>,
    /// Count a seed as failing only when it breaks this invariant (e.g. AckedWritesKept); its
    /// other findings are still counted per invariant in the summary.
    #[arg(long, value_name = "NAME")]
    pub invariant: Option<String>,
    /// What the summary says of the coverage counters: every counter (`full`, the default, with
    /// the ones never hit listed again apart), only the ones never hit (`never`), or nothing.
    #[arg(long, value_enum, default_value_t = CoverageShown::Full)]
    pub coverage: CoverageShown,
    /// Exit 1 unless every behaviour of the coverage catalog that the rules in force allow was
    /// reached by some seed (and none marked unreachable was); not with --twin or --guided.
    #[arg(long)]
    pub require_coverage: bool,
}

/// What `felix sweep` does besides sweeping.
#[derive(clap::Subcommand, Debug)]
pub enum SweepAction {
    /// Combine the `--json` outputs of a sweep's shards (`--shard K/N`, every K of one N) into the
    /// failing seeds, summary and sweep hash the unsharded sweep prints with `--json`.
    Merge(merge::MergeArgs),
}

/// The exit code of a sweep cut short by SIGINT (128 + the signal's number, as shells report it).
pub const INTERRUPTED: u8 = 130;

/// Set by SIGINT while a sweep runs: the sweep stops handing out seeds and prints what it has.
fn interrupt_flag() -> std::sync::Arc<std::sync::atomic::AtomicBool> {
    let flag = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    // Without the handler, Ctrl-C ends the process at once, as it always did; with it (the usual
    // case), the summary of the seeds finished so far is printed and the exit code is 130.
    let _ = signal_hook::flag::register(signal_hook::consts::SIGINT, std::sync::Arc::clone(&flag));
    flag
}

pub fn run(args: SweepArgs) -> u8 {
    let (range, twin, jobs) = match common(&args) {
        Ok(parsed) => parsed,
        Err(message) => return exit::bad_input(message),
    };
    if args.guided || args.branches {
        return guided::from_args(&args, range, twin, jobs);
    }
    let Plan {
        shard: (shard, shards),
        seeds,
        time_budget,
        only,
    } = match plan(&args, &range) {
        Ok(plan) => plan,
        Err(message) => return exit::bad_input(message),
    };
    let progress = progress_bar(seeds.count);
    let interrupted = interrupt_flag();
    // Why the sweep stopped before its last seed, if it did.
    let mut stopped: Option<&str> = None;
    let started = Instant::now();
    let mut totals = Totals::default();
    let mut visit = |report: RunReport| {
        totals.count(&report);
        // The finding that fails the seed: the first, or the first of `--invariant`.
        let failing = match only {
            None => report.violations.first(),
            Some(only) => report.violations.iter().find(|f| f.invariant == only),
        };
        if let Some(finding) = failing {
            totals.failed += 1;
            *totals.violations.entry(finding.invariant).or_insert(0) += 1;
            let mut replay = replay_command_for(report.seed, twin, args.control);
            if args.validate {
                replay.push_str(" --validate");
            }
            let line = failure_line(None, &report, finding, twin, &replay, args.json);
            match &progress {
                Some(bar) => bar.suspend(|| output::line(&line)),
                None => output::line(&line),
            }
        }
        if let Some(bar) = &progress {
            bar.inc(1);
            if totals.failed > 0 {
                bar.set_message(format!("{} failed", totals.failed));
            }
        }
        // Whether to go on after this seed: every check reads only what is already decided, so
        // the seeds reported are always a prefix, in seed order, of the ones asked for.
        if interrupted.load(Ordering::Relaxed) {
            stopped = Some("interrupted (SIGINT)");
        } else if args.fail_fast && totals.failed > 0 {
            stopped = Some("stopped at the first failing seed (--fail-fast)");
        } else if time_budget.is_some_and(|budget| started.elapsed() >= budget) {
            stopped = Some("the time budget ran out (--time-budget)");
        }
        stopped.is_none()
    };
    let spec = |seed| {
        let mut spec = RunSpec::new(seed, twin);
        spec.control = args.control;
        spec
    };
    let runner: fn(&RunSpec) -> RunReport = if args.validate {
        felix_validate::run
    } else {
        felix_sim::run
    };
    felix_sim::search::parallel::run_in_order_with(
        seeds.count,
        |index| seeds.get(index).map(spec),
        jobs,
        runner,
        &mut visit,
    );
    if let Some(bar) = progress {
        bar.finish_and_clear();
    }
    let resume = stopped
        .and_then(|_| seeds.get(totals.seeds))
        .map(|next| resume_command(next, range.end, shards, twin));
    let ending = Ending {
        seconds: started.elapsed().as_secs_f64(),
        jobs,
        twin,
        control: args.control,
        shard: (shard, shards),
        seeds: seeds.count,
        stopped,
        resume,
        range: &args.seeds,
        validate: args.validate,
        invariant: only,
    };
    print_summary(&args, &totals, &ending);
    exit_code(&args, &totals, interrupted.load(Ordering::Relaxed))
}

/// The summary after the failing seeds: one JSON object with `--json`, else its lines.
fn print_summary(args: &SweepArgs, totals: &Totals, ending: &Ending<'_>) {
    if args.json {
        output::line(&summary_json(totals, ending).to_string());
    } else {
        for line in summary_text(totals, ending, args.coverage, args.require_coverage) {
            output::line(&line);
        }
    }
}

/// The seed range, the twin and the jobs of any sweep, plain or guided, with the checks of the
/// flags both take.
fn common(args: &SweepArgs) -> Result<(std::ops::Range<u64>, Option<TwinName>, usize), String> {
    let range = parse_seed_range(&args.seeds)?;
    let twin = parse_twin_option(args.twin.as_deref(), args.validate)?;
    let jobs = parse_jobs(args.jobs)?;
    if args.require_coverage && (twin.is_some() || args.guided) {
        return Err("--require-coverage judges the default swarm: it takes neither --twin nor --guided (a twin's bias omits whole features)".to_string());
    }
    if args.control && twin.is_none() {
        return Err(
            "--control needs --twin: it runs a twin's knobs with every rule on".to_string(),
        );
    }
    Ok((range, twin, jobs))
}

/// What a plain sweep runs besides `common`'s: its shard of the range, and when to stop or fail.
struct Plan {
    /// (K, N) of `--shard K/N`.
    shard: (u64, u64),
    seeds: Seeds,
    time_budget: Option<std::time::Duration>,
    only: Option<Invariant>,
}

fn plan(args: &SweepArgs, range: &std::ops::Range<u64>) -> Result<Plan, String> {
    let (shard, shards) = args
        .shard
        .as_deref()
        .map(parse_shard)
        .transpose()?
        .unwrap_or((1, 1));
    let seeds = Seeds::sharded(range, shard, shards);
    if seeds.count == 0 {
        return Err(format!(
            "--shard {shard}/{shards} selects no seed of {}..{} (it holds fewer than {shard} seeds)",
            range.start, range.end
        ));
    }
    let time_budget = (args.time_budget.as_deref().map(parse_duration).transpose())
        .map_err(|message| format!("--time-budget {message}"))?;
    let only = args.invariant.as_deref().map(parse_invariant).transpose()?;
    Ok(Plan {
        shard: (shard, shards),
        seeds,
        time_budget,
        only,
    })
}

/// A progress bar on stderr over `count` seeds, when stderr is a terminal (never in a pipe or a
/// file, so the output a script reads is the same).
fn progress_bar(count: u64) -> Option<indicatif::ProgressBar> {
    if !std::io::stderr().is_terminal() || count == 0 {
        return None;
    }
    let bar = indicatif::ProgressBar::new(count);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{bar:40} {pos}/{len} seeds {per_sec} eta {eta} {msg}",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    Some(bar)
}

/// The command that resumes a sweep cut short: the rest of its shard's seeds, as shard 1 of the
/// same count from the next one (a shard's seeds are every Nth from its first).
fn resume_command(next: u64, end: u64, shards: u64, twin: Option<TwinName>) -> String {
    let shard = if shards > 1 {
        format!(" --shard 1/{shards}")
    } else {
        String::new()
    };
    let twin = twin
        .map(|twin| format!(" --twin {twin}"))
        .unwrap_or_default();
    format!("felix sweep --seeds {next}..{end}{shard}{twin}")
}

/// The sweep's exit code: interrupted, a failing seed, coverage short of `--require-coverage`.
fn exit_code(args: &SweepArgs, totals: &Totals, interrupted: bool) -> u8 {
    let rules = coverage::rules_of(None, false);
    let covered = || coverage::Verdict::of(&totals.coverage, &rules).complete();
    if interrupted {
        INTERRUPTED
    } else if totals.failed > 0 || (args.require_coverage && !covered()) {
        exit::VIOLATION
    } else {
        exit::OK
    }
}

/// The line a failing seed prints: its finding and the command that replays it. `run` is the
/// run's index in a guided campaign (`--guided`), `None` in a plain sweep.
fn failure_line(
    run: Option<u64>,
    report: &RunReport,
    finding: &felix_sim::Finding,
    twin: Option<TwinName>,
    replay: &str,
    json_out: bool,
) -> String {
    if json_out {
        let mut line = json!({
            "seed": report.seed,
            "twin": twin.map(|twin| twin.name()),
            "violation": finding.invariant.name(),
            "detail": finding.detail,
            "step": finding.step,
            "trace_hash": format!("{:016x}", report.trace_hash),
            "replay": replay,
        });
        if let Some(run) = run {
            line["run"] = json!(run);
        }
        line.to_string()
    } else {
        let run = run.map(|run| format!("run {run} ")).unwrap_or_default();
        format!(
            "FAIL {run}seed {}: {} ({})\n  replay: {replay}",
            report.seed, finding.invariant, finding.detail
        )
    }
}
