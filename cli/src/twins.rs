//! `felix twins`: hold every twin to the invariant it must break.
//!
//! `--sim` sweeps seeds for each twin of `Twin::ALL` with that one rule off (the seed's swarm is
//! biased towards the twin: more lease moves, pauses, trims, crashes, as the twin needs) until an
//! audit catches the twin's named invariant, and fails unless it is caught within the budget.
//! `--model` runs the Stateright twins (cli/src/twins_model.rs, owned by the model work). With
//! neither flag both layers run; the exit code is 0 only if every twin failed as expected.

use crate::exit;
use crate::sweep::{emit, parse_jobs, replay_command_spec, run_specs_in_order};
use clap::Args;
use felix_core::Twin;
use felix_sim::RunSpec;
use serde_json::json;
use std::time::Instant;

/// Seeds tried per twin before `--sim` gives up on it.
pub const SIM_SEED_BUDGET: u64 = 1_000;

/// Arguments of `felix twins`.
#[derive(Args, Debug)]
pub struct TwinsArgs {
    /// Check the twins in the Stateright model.
    #[arg(long)]
    pub model: bool,
    /// Check the twins in the simulator.
    #[arg(long)]
    pub sim: bool,
    /// One JSON object per twin on stdout.
    #[arg(long)]
    pub json: bool,
    /// Seeds tried per twin in the simulator.
    #[arg(long, default_value_t = SIM_SEED_BUDGET)]
    pub budget: u64,
    /// Worker threads for the simulator sweeps (default: one per core).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Hunt each twin with the default swarm (no per-twin bias): the figure that measures how
    /// well the harness finds a bug nobody named.
    #[arg(long)]
    pub unbiased: bool,
}

/// What the simulator found for one twin.
pub struct TwinOutcome {
    /// The seed and invariant that caught the expected invariant, if any.
    pub caught: Option<(u64, String)>,
    /// The first other invariant broken before (or instead of) the expected one.
    pub other_first: Option<(u64, String)>,
    /// Seeds run until the expected invariant was caught (or the budget).
    pub seeds_run: u64,
    /// The first violation of the control run of the catching seed (same knobs, every rule on),
    /// if any: a twin is only caught by its rule when its control run is clean.
    pub control_violation: Option<String>,
}

/// Sweeps seeds 0..budget with `twin`'s rule off until its invariant is caught.
pub fn hunt(twin: Twin, budget: u64, jobs: usize, unbiased: bool) -> TwinOutcome {
    let mut outcome = TwinOutcome {
        caught: None,
        other_first: None,
        seeds_run: 0,
        control_violation: None,
    };
    let spec = |seed: u64| {
        let mut spec = RunSpec::new(seed, Some(twin));
        spec.unbiased = unbiased;
        (seed < budget).then_some(spec)
    };
    run_specs_in_order(budget, spec, jobs, |report| {
        outcome.seeds_run += 1;
        if report
            .violations
            .iter()
            .any(|finding| finding.invariant == twin.invariant())
        {
            outcome.caught = Some((report.seed, twin.invariant().to_string()));
            return false;
        }
        if outcome.other_first.is_none() {
            if let Some(finding) = report.violations.first() {
                outcome.other_first = Some((report.seed, finding.invariant.clone()));
            }
        }
        true
    });
    if let Some((seed, _)) = outcome.caught {
        let mut control = RunSpec::new(seed, Some(twin));
        control.control = true;
        control.unbiased = unbiased;
        let report = felix_sim::run(&control);
        outcome.control_violation = report
            .violations
            .first()
            .map(|finding| finding.invariant.clone());
    }
    outcome
}

fn run_sim(args: &TwinsArgs) -> u8 {
    let jobs = match parse_jobs(args.jobs) {
        Ok(jobs) => jobs,
        Err(message) => return exit::bad_input(message),
    };
    if args.budget == 0 || args.budget > 1_000_000 {
        return exit::bad_input(format!("--budget {}: need 1..=1000000 seeds", args.budget));
    }
    let mut code = exit::OK;
    for twin in Twin::ALL {
        let started = Instant::now();
        let outcome = hunt(twin, args.budget, jobs, args.unbiased);
        let replay = |seed: u64| {
            let mut spec = RunSpec::new(seed, Some(twin));
            spec.unbiased = args.unbiased;
            replay_command_spec(&spec)
        };
        let ok = outcome.caught.is_some() && outcome.control_violation.is_none();
        if !ok {
            code = exit::VIOLATION;
        }
        let found = outcome
            .caught
            .as_ref()
            .or(outcome.other_first.as_ref())
            .map(|(_, invariant)| invariant.clone());
        let seed = outcome.caught.as_ref().map(|(seed, _)| *seed);
        if args.json {
            emit(&format!(
                "{}",
                json!({
                    "twin": twin.name(),
                    "layer": "sim",
                    "expected": twin.invariant(),
                    "found": found,
                    "ok": ok,
                    "seeds_to_detect": ok.then_some(outcome.seeds_run),
                    "seed": seed,
                    "other_first": outcome.other_first.as_ref().map(|(seed, invariant)| json!({"seed": seed, "invariant": invariant})),
                    "replay": seed.map(replay),
                    "unbiased": args.unbiased,
                    "control_violation": outcome.control_violation,
                    "seconds": (started.elapsed().as_secs_f64() * 1000.0).round() / 1000.0,
                })
            ));
        } else {
            let found_text = found.as_deref().unwrap_or("nothing");
            let verdict = match (&outcome.caught, &outcome.control_violation) {
                (Some((seed, _)), Some(control)) => {
                    format!("FAILED (seed {seed} with every rule on breaks {control} too)")
                }
                (Some((seed, _)), None) => format!(
                    "ok  ({} seeds; {})",
                    outcome.seeds_run,
                    replay(*seed)
                ),
                (None, _) => format!("FAILED (not caught in {} seeds)", outcome.seeds_run),
            };
            emit(&format!(
                "sim    {:<17} expected {:<18} found {:<18} {verdict}",
                twin.name(),
                twin.invariant(),
                found_text
            ));
            if let Some((seed, invariant)) = &outcome.other_first {
                emit(&format!(
                    "       {:<17} note: seed {seed} broke {invariant} first",
                    ""
                ));
            }
        }
    }
    code
}

pub fn run(args: TwinsArgs) -> u8 {
    let both = !args.model && !args.sim;
    let mut codes = Vec::new();
    if args.model || both {
        codes.push(crate::twins_model::run(args.json));
    }
    if args.sim || both {
        codes.push(run_sim(&args));
    }
    codes.into_iter().max().unwrap_or(exit::OK)
}
