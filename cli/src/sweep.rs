//! `felix sweep`: run many seeds of the simulator and report every failing one.
//!
//! Each seed is one single-threaded, deterministic run; seeds are spread over `--jobs` OS threads
//! and their results are printed in seed order, so the output (and the exit code) is the same for
//! any `--jobs` value. A failing seed is printed with the exact `felix replay` command that
//! reruns it. Progress goes to stderr, and only when stderr is a terminal.

use crate::exit;
use crate::output;
use crate::sweep_summary::summary_text;
pub use crate::sweep_summary::{summary_json, Ending, Totals};
use clap::Args;
use felix_core::rules::{Invariant, Layer, TwinName};
use felix_sim::{RunReport, RunSpec};
use serde_json::json;
use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Instant;

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
    Merge(crate::sweep_merge::MergeArgs),
}

/// How much of the coverage counters a sweep's summary shows (`--coverage`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum CoverageShown {
    Full,
    Never,
    None,
}

/// The exit code of a sweep cut short by SIGINT (128 + the signal's number, as shells report it).
pub const INTERRUPTED: u8 = 130;

/// Parses an invariant's name (`--invariant`).
pub fn parse_invariant(name: &str) -> Result<Invariant, String> {
    Invariant::parse(name).ok_or_else(|| {
        let names: Vec<&str> = Invariant::ALL.iter().map(|i| i.name()).collect();
        format!(
            "--invariant {name:?}: no such invariant; known: {}",
            names.join(", ")
        )
    })
}

/// Parses a duration such as `90s`, `10m` or `2h` (a whole number and a unit), at most a week.
pub fn parse_duration(text: &str) -> Result<std::time::Duration, String> {
    let problem = || format!("{text:?}: expected a whole number and a unit (s, m or h), e.g. 90s");
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .ok_or_else(problem)?;
    let (number, unit) = text.split_at(split);
    let number: u64 = number.parse().map_err(|_| problem())?;
    let seconds = match unit {
        "s" => Some(number),
        "m" => number.checked_mul(60),
        "h" => number.checked_mul(3_600),
        _ => return Err(problem()),
    };
    match seconds {
        Some(seconds @ 1..=604_800) => Ok(std::time::Duration::from_secs(seconds)),
        _ => Err(format!("{text:?}: from 1s to a week (168h)")),
    }
}

/// Set by SIGINT while a sweep runs: the sweep stops handing out seeds and prints what it has.
fn interrupt_flag() -> std::sync::Arc<std::sync::atomic::AtomicBool> {
    let flag = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    // Without the handler, Ctrl-C ends the process at once, as it always did; with it (the usual
    // case), the summary of the seeds finished so far is printed and the exit code is 130.
    let _ = signal_hook::flag::register(signal_hook::consts::SIGINT, std::sync::Arc::clone(&flag));
    flag
}

/// Parses `A..B` into a non-empty seed range.
pub fn parse_seed_range(text: &str) -> Result<Range<u64>, String> {
    let Some((low, high)) = text.split_once("..") else {
        return Err(format!("--seeds {text:?}: expected A..B, e.g. 0..1000"));
    };
    let low: u64 = low
        .trim()
        .parse()
        .map_err(|_| format!("--seeds {text:?}: {low:?} is not a seed (a whole number)"))?;
    let high: u64 = high
        .trim()
        .parse()
        .map_err(|_| format!("--seeds {text:?}: {high:?} is not a seed (a whole number)"))?;
    if low >= high {
        return Err(format!(
            "--seeds {text:?}: the range is empty (need A < B; B is excluded)"
        ));
    }
    Ok(low..high)
}

/// Parses `K/N` (1 <= K <= N).
pub fn parse_shard(text: &str) -> Result<(u64, u64), String> {
    let parsed = text
        .split_once('/')
        .and_then(|(k, n)| Some((k.trim().parse::<u64>().ok()?, n.trim().parse::<u64>().ok()?)));
    match parsed {
        Some((k, n)) if n >= 1 && (1..=n).contains(&k) => Ok((k, n)),
        _ => Err(format!(
            "--shard {text:?}: expected K/N with 1 <= K <= N, e.g. 1/4"
        )),
    }
}

/// Parses a twin name, with or without the FelixHeadTrim prefix.
/// Counts per invariant, keyed by name (for JSON).
pub fn by_name(counts: &BTreeMap<Invariant, u64>) -> BTreeMap<&'static str, u64> {
    counts
        .iter()
        .map(|(invariant, count)| (invariant.name(), *count))
        .collect()
}

/// A simulator twin, or with `validate` a twin of the validation layer too (which only trace
/// validation sees: without `--validate` it would run unjudged).
pub fn parse_twin_validated(text: &str, validate: bool) -> Result<TwinName, String> {
    match TwinName::parse_in(Layer::Validation, text) {
        Some(twin) if validate => Ok(twin),
        Some(twin) => Err(format!(
            "{twin} is a twin of the validation layer: no audit sees it, only trace validation \
             does; add --validate"
        )),
        None => parse_twin(text),
    }
}

/// `--twin`, when given: `parse_twin_validated`.
pub fn parse_twin_option(text: Option<&str>, validate: bool) -> Result<Option<TwinName>, String> {
    text.map(|text| parse_twin_validated(text, validate))
        .transpose()
}

pub fn parse_twin(text: &str) -> Result<TwinName, String> {
    TwinName::parse_in(Layer::Sim, text).ok_or_else(|| {
        let names: Vec<&str> = TwinName::in_layer(Layer::Sim)
            .map(|twin| twin.name())
            .collect();
        format!("unknown twin {text:?}; known twins: {}", names.join(", "))
    })
}

/// The `--jobs` value, or one job per core.
pub fn parse_jobs(jobs: Option<usize>) -> Result<usize, String> {
    match jobs {
        Some(0) => Err("--jobs 0: need at least one job".to_string()),
        Some(jobs) if jobs > 1024 => Err(format!("--jobs {jobs}: at most 1024")),
        Some(jobs) => Ok(jobs),
        None => Ok(std::thread::available_parallelism().map_or(1, |cores| cores.get())),
    }
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
    if let Some(knobs) = &spec.knobs {
        let json = serde_json::to_string(knobs).unwrap_or_default();
        command.push_str(&format!(" --knobs '{json}'"));
    }
    command
}

/// The seeds of a sweep, computed on demand (a sweep of a hundred million seeds needs no list):
/// `count` seeds from `start`, `step` apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Seeds {
    pub start: u64,
    pub step: u64,
    pub count: u64,
}

impl Seeds {
    /// Every seed of `range` at positions `shard - 1`, `shard - 1 + shards`, ... (1 <= shard <= shards).
    pub fn sharded(range: &Range<u64>, shard: u64, shards: u64) -> Seeds {
        assert!(shards >= 1 && (1..=shards).contains(&shard));
        let start = range.start.saturating_add(shard - 1);
        let count = if start >= range.end {
            0
        } else {
            (range.end - start).div_ceil(shards)
        };
        Seeds {
            start,
            step: shards,
            count,
        }
    }

    pub fn get(&self, index: u64) -> Option<u64> {
        (index < self.count).then(|| self.start + index * self.step)
    }
}

/// Runs `seeds` over `jobs` threads and hands each report to `visit` in seed order. `visit`
/// returns false to stop early: no seed after that one is reported (later seeds already running
/// finish and are discarded), so the visited prefix is the same for any `jobs`.
pub fn run_in_order(
    seeds: Seeds,
    twin: Option<TwinName>,
    control: bool,
    jobs: usize,
    visit: impl FnMut(RunReport) -> bool,
) {
    let spec = |seed| {
        let mut spec = RunSpec::new(seed, twin);
        spec.control = control;
        spec
    };
    run_specs_in_order(seeds.count, |index| seeds.get(index).map(spec), jobs, visit);
}

/// Runs the specs `spec(0..count)` over `jobs` threads and hands each report to `visit` in index
/// order (see `run_in_order`); `spec` returns None past the end.
pub fn run_specs_in_order(
    count: u64,
    spec: impl Fn(u64) -> Option<RunSpec> + Sync,
    jobs: usize,
    visit: impl FnMut(RunReport) -> bool,
) {
    run_specs_in_order_with(count, spec, jobs, felix_sim::run, visit);
}

/// `run_specs_in_order` with the function that runs one spec (`felix_validate::run` for
/// `--validate`).
pub fn run_specs_in_order_with(
    count: u64,
    spec: impl Fn(u64) -> Option<RunSpec> + Sync,
    jobs: usize,
    runner: fn(&RunSpec) -> RunReport,
    mut visit: impl FnMut(RunReport) -> bool,
) {
    assert!(jobs >= 1);
    let next = AtomicUsize::new(0);
    let stop = std::sync::atomic::AtomicBool::new(false);
    let (sender, receiver) = mpsc::channel::<(usize, RunReport)>();
    std::thread::scope(|scope| {
        for _ in 0..(jobs as u64).min(count.max(1)) {
            let sender = sender.clone();
            let (next, stop, spec) = (&next, &stop, &spec);
            scope.spawn(move || loop {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                let index = next.fetch_add(1, Ordering::Relaxed);
                let Some(spec) = spec(index as u64) else {
                    break;
                };
                let report = runner(&spec);
                if sender.send((index, report)).is_err() {
                    break;
                }
            });
        }
        drop(sender);
        let mut pending: BTreeMap<usize, RunReport> = BTreeMap::new();
        let mut expected = 0usize;
        let mut going = true;
        for (index, report) in receiver.iter() {
            if !going {
                continue;
            }
            pending.insert(index, report);
            while let Some(report) = pending.remove(&expected) {
                expected += 1;
                if !visit(report) {
                    going = false;
                    stop.store(true, Ordering::Relaxed);
                    break;
                }
            }
        }
    });
}

pub fn run(args: SweepArgs) -> u8 {
    let range = match parse_seed_range(&args.seeds) {
        Ok(range) => range,
        Err(message) => return exit::bad_input(message),
    };
    let twin = match parse_twin_option(args.twin.as_deref(), args.validate) {
        Ok(twin) => twin,
        Err(message) => return exit::bad_input(message),
    };
    let jobs = match parse_jobs(args.jobs) {
        Ok(jobs) => jobs,
        Err(message) => return exit::bad_input(message),
    };
    if args.require_coverage && (twin.is_some() || args.guided) {
        return exit::bad_input("--require-coverage judges the default swarm: it takes neither --twin nor --guided (a twin's bias omits whole features)");
    }
    if args.control && twin.is_none() {
        return exit::bad_input(
            "--control needs --twin: it runs a twin's knobs with every rule on",
        );
    }
    if args.guided {
        if args.validate {
            return exit::bad_input("--guided does not take --validate: validate its seeds with `felix replay --seed S --knobs JSON --validate`");
        }
        if args.shard.is_some() || args.control {
            return exit::bad_input(
                "--guided runs one campaign: it takes neither --shard nor --control",
            );
        }
        if args.fail_fast || args.time_budget.is_some() || args.invariant.is_some() {
            return exit::bad_input(
                "--guided runs one campaign of a fixed budget: it takes none of --fail-fast, --time-budget, --invariant",
            );
        }
        return crate::guided::sweep(range.start, range.end - range.start, twin, jobs, args.json);
    }
    let (shard, shards) = match args.shard.as_deref().map(parse_shard).transpose() {
        Ok(shard) => shard.unwrap_or((1, 1)),
        Err(message) => return exit::bad_input(message),
    };
    let seeds = Seeds::sharded(&range, shard, shards);
    if seeds.count == 0 {
        return exit::bad_input(format!(
            "--shard {shard}/{shards} selects no seed of {}..{} (it holds fewer than {shard} seeds)",
            range.start, range.end
        ));
    }
    let progress = if std::io::stderr().is_terminal() && seeds.count > 0 {
        let bar = indicatif::ProgressBar::new(seeds.count);
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "{bar:40} {pos}/{len} seeds {per_sec} eta {eta} {msg}",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        Some(bar)
    } else {
        None
    };
    let time_budget = match args.time_budget.as_deref().map(parse_duration).transpose() {
        Ok(budget) => budget,
        Err(message) => return exit::bad_input(format!("--time-budget {message}")),
    };
    let only = match args.invariant.as_deref().map(parse_invariant).transpose() {
        Ok(only) => only,
        Err(message) => return exit::bad_input(message),
    };
    let interrupted = interrupt_flag();
    // Why the sweep stopped before its last seed, if it did.
    let mut stopped: Option<&str> = None;
    let started = Instant::now();
    let mut totals = Totals {
        sweep_hash: felix_sim::trace::FNV_OFFSET,
        ..Totals::default()
    };
    let mut visit = |report: RunReport| {
        totals.seeds += 1;
        totals.events += report.events;
        totals.steps += report.steps;
        totals.sweep_hash =
            felix_sim::trace::fnv1a(totals.sweep_hash, &report.trace_hash.to_le_bytes());
        totals.trace_hashes.push(report.trace_hash);
        totals.simulated_micros += u128::from(report.simulated_micros);
        for (name, count) in &report.coverage {
            *totals.coverage.entry(name.clone()).or_insert(0) += count;
        }
        let mut broken: Vec<Invariant> = report.violations.iter().map(|f| f.invariant).collect();
        broken.sort_unstable();
        broken.dedup();
        for invariant in broken {
            *totals.broken.entry(invariant).or_insert(0) += 1;
        }
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
            let line = failure_line(&report, finding, twin, &replay, args.json);
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
    if args.validate {
        let spec = |seed| {
            let mut spec = RunSpec::new(seed, twin);
            spec.control = args.control;
            spec
        };
        run_specs_in_order_with(
            seeds.count,
            |index| seeds.get(index).map(spec),
            jobs,
            felix_validate::run,
            &mut visit,
        );
    } else {
        run_in_order(seeds, twin, args.control, jobs, &mut visit);
    }
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
    if args.json {
        output::line(&summary_json(&totals, &ending).to_string());
    } else {
        for line in summary_text(&args, &totals, &ending) {
            output::line(&line);
        }
    }
    exit_code(&args, &totals, interrupted.load(Ordering::Relaxed))
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
    let rules = crate::sweep_coverage::rules_of(None, false);
    let covered = || crate::sweep_coverage::Verdict::of(&totals.coverage, &rules).complete();
    if interrupted {
        INTERRUPTED
    } else if totals.failed > 0 || (args.require_coverage && !covered()) {
        exit::VIOLATION
    } else {
        exit::OK
    }
}

/// The line a failing seed prints: its finding and the command that replays it.
fn failure_line(
    report: &RunReport,
    finding: &felix_sim::Finding,
    twin: Option<TwinName>,
    replay: &str,
    json_out: bool,
) -> String {
    if json_out {
        json!({
            "seed": report.seed,
            "twin": twin.map(|twin| twin.name()),
            "violation": finding.invariant.name(),
            "detail": finding.detail,
            "step": finding.step,
            "trace_hash": format!("{:016x}", report.trace_hash),
            "replay": replay,
        })
        .to_string()
    } else {
        format!(
            "FAIL seed {}: {} ({})\n  replay: {replay}",
            report.seed, finding.invariant, finding.detail
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Seed ranges, shards, twins and jobs parse, and every malformed value is a message.
    #[test]
    fn arguments_parse_or_explain() {
        assert_eq!(parse_seed_range("0..1000"), Ok(0..1000));
        assert_eq!(parse_seed_range(" 5 .. 9"), Ok(5..9));
        assert!(parse_seed_range("9..5").is_err());
        assert!(parse_seed_range("5..5").is_err());
        assert!(parse_seed_range("a..5").is_err());
        assert!(parse_seed_range("5").is_err());
        assert!(parse_seed_range("-1..5").is_err());
        assert_eq!(parse_shard("1/4"), Ok((1, 4)));
        assert!(parse_shard("0/4").is_err());
        assert!(parse_shard("5/4").is_err());
        assert!(parse_shard("1/0").is_err());
        assert!(parse_shard("x").is_err());
        assert_eq!(parse_twin("FelixHeadTrimUntagged"), Ok(TwinName::Untagged));
        assert!(parse_twin("Nope").is_err());
        assert!(parse_jobs(Some(0)).is_err());
        assert_eq!(parse_jobs(Some(3)), Ok(3));
        let seeds = Seeds::sharded(&(10..20), 2, 3);
        let listed: Vec<u64> = (0..5).filter_map(|index| seeds.get(index)).collect();
        assert_eq!(listed, vec![11, 14, 17]);
        assert_eq!(Seeds::sharded(&(10..11), 2, 3).count, 0);
        assert_eq!(Seeds::sharded(&(0..1000), 1, 1).count, 1000);
        assert_eq!(
            replay_command_for(7, Some(TwinName::NoopSkip), false),
            "felix replay --seed 7 --twin NoopSkip"
        );
        // The hint `felix replay --control` prints for a failing control run.
        assert_eq!(
            replay_command_for(7, Some(TwinName::NoopSkip), true),
            "felix replay --seed 7 --twin NoopSkip --control"
        );
    }
}
