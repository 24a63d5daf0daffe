//! `felix bench sim`: the simulator's speed, and where its time goes.
//!
//! Runs a range of seeds one after the other on one thread, twice: the first pass gives seeds/s and
//! events/s (no timers), the second turns on the stopwatch (`felix_sim::env::stopwatch`) and gives
//! the share of wall time spent inside the core's `Broker::step` and inside the audits. The timers
//! only add up wall time beside the run, never inside its decisions: both passes must give the same
//! sweep hash, which the benchmark checks (a difference is a bug: exit 1). Wall-clock timings live
//! in the benchmarks (`bench store`, `bench sim`, `bench cluster`) and nowhere else (never an
//! assert in a test).

use crate::args::{parse_seed_range, parse_twin};
use crate::exit;
use crate::output;
use clap::Args;
use felix_core::TwinName;
use felix_sim::render::trace::SweepHash;
use felix_sim::{env::stopwatch, RunSpec};
use serde_json::json;
use std::ops::Range;
use std::time::{Duration, Instant};

/// Arguments of `felix bench sim`.
#[derive(Args, Debug)]
pub struct SimArgs {
    /// Seeds to run, as A..B (B excluded).
    #[arg(long, default_value = "0..500")]
    seeds: String,
    /// Run the seeds of this twin (its rule off, its knobs' bias).
    #[arg(long)]
    twin: Option<String>,
    /// One JSON object with every figure, on stdout.
    #[arg(long)]
    json: bool,
}

/// What one pass over the seeds measured.
struct Pass {
    wall: Duration,
    events: u64,
    steps: u64,
    failed: u64,
    sweep_hash: SweepHash,
    timers: stopwatch::Totals,
}

fn pass(seeds: &Range<u64>, twin: Option<TwinName>, timed: bool) -> Pass {
    stopwatch::take();
    stopwatch::enable(timed);
    let mut pass = Pass {
        wall: Duration::ZERO,
        events: 0,
        steps: 0,
        failed: 0,
        sweep_hash: SweepHash::default(),
        timers: stopwatch::Totals::default(),
    };
    let started = Instant::now();
    for seed in seeds.clone() {
        let report = felix_sim::run(&RunSpec::new(seed, twin));
        pass.events += report.events;
        pass.steps += report.steps;
        pass.failed += u64::from(!report.violations.is_empty());
        pass.sweep_hash.add(report.trace_hash);
    }
    pass.wall = started.elapsed();
    stopwatch::enable(false);
    pass.timers = stopwatch::take();
    pass
}

fn per_second(count: u64, wall: Duration) -> f64 {
    let seconds = wall.as_secs_f64();
    if seconds > 0.0 {
        count as f64 / seconds
    } else {
        0.0
    }
}

fn share(part: Duration, whole: Duration) -> f64 {
    let whole = whole.as_secs_f64();
    if whole > 0.0 {
        100.0 * part.as_secs_f64() / whole
    } else {
        0.0
    }
}

pub fn run(args: SimArgs) -> u8 {
    let seeds = match parse_seed_range(&args.seeds) {
        Ok(seeds) => seeds,
        Err(message) => return exit::bad_input(message),
    };
    let twin = match args.twin.as_deref().map(parse_twin).transpose() {
        Ok(twin) => twin,
        Err(message) => return exit::bad_input(message),
    };
    let count = seeds.end - seeds.start;
    let plain = pass(&seeds, twin, false);
    let timed = pass(&seeds, twin, true);
    let seeds_per_second = per_second(count, plain.wall);
    let events_per_second = per_second(plain.events, plain.wall);
    let step_share = share(timed.timers.broker_step, timed.wall);
    let audit_share = share(timed.timers.audits, timed.wall);
    let step_nanos = if timed.timers.broker_steps > 0 {
        timed.timers.broker_step.as_nanos() as f64 / timed.timers.broker_steps as f64
    } else {
        0.0
    };
    let overhead = share(timed.wall, plain.wall) - 100.0;
    let same = plain.sweep_hash == timed.sweep_hash && plain.events == timed.events;
    if args.json {
        output::line(
            &json!({
                "seeds": format!("{}..{}", seeds.start, seeds.end),
                "twin": twin.map(|twin| twin.name()),
                "runs": count,
                "failed": plain.failed,
                "events": plain.events,
                "trace_lines": plain.steps,
                "seconds": plain.wall.as_secs_f64(),
                "seeds_per_second": seeds_per_second,
                "events_per_second": events_per_second,
                "broker_step_share_percent": step_share,
                "broker_steps": timed.timers.broker_steps,
                "broker_step_nanos": step_nanos,
                "audits_share_percent": audit_share,
                "timed_seconds": timed.wall.as_secs_f64(),
                "timer_overhead_percent": overhead,
                "sweep_hash": plain.sweep_hash.to_string(),
                "same_runs_timed": same,
            })
            .to_string(),
        );
    } else {
        let twin = twin.map(|twin| format!(" twin {twin}")).unwrap_or_default();
        output::line(&format!(
            "bench sim {}..{}{twin} (one thread): {count} seeds, {} failed, {} events, {} trace lines, {:.2} s",
            seeds.start,
            seeds.end,
            plain.failed,
            plain.events,
            plain.steps,
            plain.wall.as_secs_f64()
        ));
        output::line(&format!(
            "  {seeds_per_second:.1} seeds/s, {events_per_second:.0} events/s"
        ));
        output::line(&format!(
            "  inside the core's Broker::step: {step_share:.1}% of wall time ({} steps, {step_nanos:.0} ns each)",
            timed.timers.broker_steps
        ));
        output::line(&format!(
            "  inside the audits: {audit_share:.1}% of wall time"
        ));
        output::line(&format!(
            "  timed pass {:.2} s ({overhead:+.1}% for the timers); sweep hash {}",
            timed.wall.as_secs_f64(),
            plain.sweep_hash
        ));
    }
    if !same {
        eprintln!(
            "felix: bench sim: the timed pass ran differently (sweep hash {} vs {}): the timers touched a run",
            plain.sweep_hash, timed.sweep_hash
        );
        return exit::VIOLATION;
    }
    exit::OK
}
