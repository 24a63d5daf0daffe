//! `felix twins`: hold every twin to the invariant it must break.
//!
//! `--sim` sweeps seeds for each simulator twin (`TwinName::in_layer(Layer::Sim)`) with that one
//! rule off until an audit catches the twin's named invariant, and fails unless it is caught within
//! the budget. By default the seed's swarm is biased towards the twin (more lease moves, pauses,
//! trims, crashes, as the twin needs): a fast canary. `--unbiased` is the measure that counts: the
//! default swarm, no per-twin bias, searched by plain consecutive seeds and by a coverage-guided
//! campaign (`felix sweep --guided`); it reports the runs each needed (seeds to detect) and their
//! medians, per search and for either (the fewer runs of the two). Each search that runs must catch
//! every twin within the budget on its own, and with `--median-max N` its median must be at most N.
//! Every catching run's control run (the same knobs, every rule on) must be clean. `--model` runs
//! the Stateright twins (`model.rs`). `--validation` runs the validation layer's twins
//! (`validation.rs`). With none of the three flags every layer runs; the exit code is 0 only if
//! every twin failed as expected.

mod model;
mod validation;

use crate::args::parse_jobs;
use crate::commands::replay::replay_command_spec;
use crate::exit;
use crate::output;
use clap::Args;
use felix_core::rules::{Invariant, Layer, TwinName};
use felix_sim::{RunReport, RunSpec};
use serde_json::json;
use std::collections::BTreeMap;
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
    /// Check the validation layer's twins: slips no audit sees, which trace validation alone
    /// must catch (TraceValidation), with the catching run breaking no audit and its control
    /// clean.
    #[arg(long)]
    pub validation: bool,
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
    /// With --unbiased: which searches to run (default both; each must catch every twin
    /// within the budget).
    #[arg(long, value_enum)]
    pub search: Option<Search>,
    /// The first seed: plain seeds START..START+budget, the guided campaign from START (another
    /// window of the same swarm, to see how much a figure owes to the window).
    #[arg(long, default_value_t = 0)]
    pub start: u64,
    /// Fail unless each search's median runs to detect, over the twins, is at most this.
    #[arg(long)]
    pub median_max: Option<u64>,
    /// With --unbiased: the guided campaign branches its first hits (continuations forked
    /// where a run first reached a counter) instead of reseeding them.
    #[arg(long)]
    pub branches: bool,
    /// Run every model twin's shortest counterexample (FelixHeadTrim's and ParosTrimJump's) on the
    /// real core, with the twin
    /// (it must break the named invariant) and with every rule on (it must hold); nothing else.
    #[arg(long)]
    pub conform: bool,
}

/// Which searches `--unbiased` runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Search {
    /// Consecutive seeds 0, 1, 2, ... of the default swarm.
    Plain,
    /// A coverage-guided campaign from seed 0 (the campaign `felix sweep` runs when guided).
    Guided,
    /// Both, each on its own: each must catch every twin; the "either" line also gives each
    /// twin's fewer runs of the two.
    Both,
}

/// What one search found for one twin.
#[derive(Default)]
pub struct TwinOutcome {
    /// The run that caught the expected invariant, if any: (runs until caught, its spec).
    pub caught: Option<(u64, RunSpec)>,
    /// The first other invariant broken before (or instead of) the expected one: (seed, name).
    pub other_first: Option<(u64, Invariant)>,
    /// The other invariants the catching run broke beside the named one (collateral findings),
    /// in the order of their first finding.
    pub collateral: Vec<Invariant>,
    /// Runs made (until caught, or the budget).
    pub runs: u64,
    /// The first violation of the control run of the catching run (same knobs, every rule on),
    /// if any: a twin is only caught by its rule when its control run is clean.
    pub control_violation: Option<Invariant>,
}

impl TwinOutcome {
    /// Counts one run of the search (`spec`'s, in run order) under `twin`: the catch, with its
    /// collateral findings, or else the first other invariant broken. Whether the search goes on.
    fn observe(&mut self, twin: TwinName, spec: &RunSpec, report: &RunReport) -> bool {
        self.runs += 1;
        if report
            .violations
            .iter()
            .any(|finding| finding.invariant == twin.must_break(Layer::Sim))
        {
            self.caught = Some((self.runs, spec.clone()));
            self.collateral = collateral(twin, report);
            return false;
        }
        if self.other_first.is_none() {
            if let Some(finding) = report.violations.first() {
                self.other_first = Some((report.seed, finding.invariant));
            }
        }
        true
    }

    pub fn ok(&self) -> bool {
        self.caught.is_some() && self.control_violation.is_none()
    }

    fn seeds_to_detect(&self) -> Option<u64> {
        self.ok()
            .then(|| self.caught.as_ref().map(|(runs, _)| *runs))?
    }

    fn json(&self) -> serde_json::Value {
        json!({
            "seeds_to_detect": self.seeds_to_detect(),
            "runs": self.runs,
            "seed": self.caught.as_ref().map(|(_, spec)| spec.seed),
            "replay": self.caught.as_ref().map(|(_, spec)| replay_command_spec(spec)),
            "control_violation": self.control_violation.map(Invariant::name),
            "other_first": self.other_first.as_ref().map(|(seed, invariant)| json!({"seed": seed, "invariant": invariant.name()})),
            "collateral": Invariant::names(&self.collateral),
        })
    }

    fn verdict(&self, search: &str) -> String {
        match (&self.caught, &self.control_violation) {
            (Some((_, spec)), Some(control)) => format!(
                "{search} FAILED (seed {} with every rule on breaks {control} too)",
                spec.seed
            ),
            (Some((runs, _)), None) => format!("{search} {runs}"),
            (None, _) => format!("{search} FAILED (not caught in {} runs)", self.runs),
        }
    }
}

/// The lines under a twin's verdict for one search: the catching seed's replay command, the
/// other invariants that run broke, and an earlier seed that broke another invariant first.
fn print_search(name: &str, outcome: &TwinOutcome) {
    if let Some((_, spec)) = &outcome.caught {
        output::line(&format!(
            "       {name:<7} replay: {}",
            replay_command_spec(spec)
        ));
        if !outcome.collateral.is_empty() {
            output::line(&format!(
                "       {name:<7} also broken on that seed (collateral): {}",
                Invariant::names(&outcome.collateral).join(" ")
            ));
        }
    }
    if let Some((seed, invariant)) = &outcome.other_first {
        output::line(&format!(
            "       {name:<7} note: seed {seed} broke {invariant} first"
        ));
    }
}

/// The invariants `report` broke other than `twin`'s named one, each once, in finding order.
fn collateral(twin: TwinName, report: &felix_sim::RunReport) -> Vec<Invariant> {
    let mut seen = Vec::new();
    for finding in &report.violations {
        if finding.invariant != twin.must_break(Layer::Sim) && !seen.contains(&finding.invariant) {
            seen.push(finding.invariant);
        }
    }
    seen
}

/// Reruns the catching spec with every rule on: its first violation, if any (taken from `made`
/// when the plain hunt already ran that control).
fn control(outcome: &mut TwinOutcome, made: Option<&Made>) {
    if let Some((_, spec)) = &outcome.caught {
        if let Some((_, known)) = made
            .and_then(|made| made.control.as_ref())
            .filter(|(caught, _)| caught == spec)
        {
            outcome.control_violation = *known;
            return;
        }
        let mut control = spec.clone();
        control.control = true;
        let report = felix_sim::run(&control);
        outcome.control_violation = report.violations.first().map(|finding| finding.invariant);
    }
}

/// What one twin's plain hunt ran, for the guided campaign of the same twin that follows it: the
/// campaign's plain seeds (all of its first batch, about a quarter of its runs after that) are
/// runs the plain hunt made, spec for spec, and a run is a function of its spec, so the campaign
/// takes their reports instead of running them again; likewise the control of a catching spec
/// both searches end on. Every figure and verdict stays what running them again would give.
#[derive(Default)]
pub struct Made {
    /// Each run's spec and report, by seed.
    runs: BTreeMap<u64, (RunSpec, RunReport)>,
    /// The plain hunt's catching spec and its control's first violation.
    control: Option<(RunSpec, Option<Invariant>)>,
}

impl Made {
    /// The report of `spec`: the one the plain hunt made for the same spec, else a new run.
    fn run(&self, spec: &RunSpec) -> RunReport {
        match self.runs.get(&spec.seed) {
            Some((made, report)) if made == spec => report.clone(),
            _ => felix_sim::run(spec),
        }
    }
}

/// Sweeps seeds start..start+budget with `twin`'s rule off until its invariant is caught (the knobs
/// biased towards the twin unless `unbiased`). Every run and the control are kept in `made` when
/// given, for the guided campaign.
pub fn hunt(
    twin: TwinName,
    start: u64,
    budget: u64,
    jobs: usize,
    unbiased: bool,
    mut made: Option<&mut Made>,
) -> TwinOutcome {
    let mut outcome = TwinOutcome::default();
    let spec = |seed: u64| {
        let mut spec = RunSpec::new(seed, Some(twin));
        spec.unbiased = unbiased;
        spec
    };
    felix_sim::search::parallel::run_in_order(
        budget,
        |index| (index < budget).then(|| spec(start.wrapping_add(index))),
        jobs,
        |report| {
            let run = spec(report.seed);
            let going = outcome.observe(twin, &run, &report);
            if let Some(made) = made.as_deref_mut() {
                made.runs.insert(report.seed, (run, report));
            }
            going
        },
    );
    control(&mut outcome, None);
    if let (Some(made), Some((_, spec))) = (made, &outcome.caught) {
        made.control = Some((spec.clone(), outcome.control_violation));
    }
    outcome
}

/// A guided campaign (from `start`) with `twin`'s rule off until its invariant is caught; the
/// runs the plain hunt `made` are taken from it.
pub fn hunt_guided(
    twin: TwinName,
    start: u64,
    budget: u64,
    jobs: usize,
    branching: bool,
    made: Option<&Made>,
) -> TwinOutcome {
    let mut outcome = TwinOutcome::default();
    let options = crate::commands::sweep::guided::Options {
        start,
        budget,
        twin: Some(twin),
        branching,
    };
    let runner = |spec: &RunSpec| match made {
        Some(made) => made.run(spec),
        None => felix_sim::run(spec),
    };
    crate::commands::sweep::guided::run_campaign_with(&options, jobs, runner, |_, spec, report| {
        outcome.observe(twin, spec, report)
    });
    control(&mut outcome, made);
    outcome
}

/// One twin's searches, those `on` names (plain, guided): the plain hunt, then the guided
/// campaign, which takes the plain hunt's runs of the same specs (`Made`).
fn hunt_both(
    twin: TwinName,
    args: &TwinsArgs,
    jobs: usize,
    on: (bool, bool),
) -> (Option<TwinOutcome>, Option<TwinOutcome>) {
    let (start, budget) = (args.start, args.budget);
    let mut made = (on.0 && on.1).then(Made::default);
    let plain = (on.0).then(|| hunt(twin, start, budget, jobs, args.unbiased, made.as_mut()));
    let guided =
        (on.1).then(|| hunt_guided(twin, start, budget, jobs, args.branches, made.as_ref()));
    (plain, guided)
}

/// The median of `values` (the lower middle one for an even count), if any.
fn median(values: &mut [u64]) -> Option<u64> {
    values.sort_unstable();
    (!values.is_empty()).then(|| values[(values.len() - 1) / 2])
}

/// Which searches run: (plain, guided); `--branches` needs the guided one, and the budget is
/// bounded.
fn searches(args: &TwinsArgs) -> Result<(bool, bool), String> {
    if args.budget == 0 || args.budget > 1_000_000 {
        return Err(format!("--budget {}: need 1..=1000000 seeds", args.budget));
    }
    let search = args.search.unwrap_or(Search::Both);
    let plain_on = !args.unbiased || search != Search::Guided;
    let guided_on = args.unbiased && search != Search::Plain;
    if args.branches && !guided_on {
        return Err("--branches needs --unbiased with the guided search: it changes how the campaign follows a first hit".to_string());
    }
    Ok((plain_on, guided_on))
}

/// One twin's line (with `--json`, its object): what it must break, what the searches found
/// (`found`, whether every search `ok`, the `best` runs to detect), and each search's verdict.
fn print_twin(
    args: &TwinsArgs,
    twin: TwinName,
    (found, ok, best): (Option<Invariant>, bool, Option<u64>),
    (plain, guided): (&Option<TwinOutcome>, &Option<TwinOutcome>),
    seconds: f64,
) {
    if args.json {
        output::line(&format!(
            "{}",
            json!({
                "twin": twin.name(),
                "layer": "sim",
                "expected": twin.must_break(Layer::Sim).name(),
                "found": found.map(Invariant::name),
                "ok": ok,
                "seeds_to_detect": best,
                "unbiased": args.unbiased,
                "plain": plain.as_ref().map(TwinOutcome::json),
                "guided": guided.as_ref().map(TwinOutcome::json),
                "seconds": (seconds * 1000.0).round() / 1000.0,
            })
        ));
    } else {
        let verdicts: Vec<String> = [("plain", plain), ("guided", guided)]
            .iter()
            .filter_map(|(name, outcome)| outcome.as_ref().map(|outcome| outcome.verdict(name)))
            .collect();
        output::line(&format!(
            "sim    {:<17} expected {:<18} found {:<18} {} ({})",
            twin.name(),
            twin.must_break(Layer::Sim),
            found.map_or("nothing", Invariant::name),
            if ok { "ok " } else { "FAILED" },
            verdicts.join(", ")
        ));
        for (name, outcome) in [("plain", plain), ("guided", guided)] {
            if let Some(outcome) = outcome {
                print_search(name, outcome);
            }
        }
    }
}

fn run_sim(args: &TwinsArgs) -> u8 {
    let jobs = match parse_jobs(args.jobs) {
        Ok(jobs) => jobs,
        Err(message) => return exit::bad_input(message),
    };
    let (plain_on, guided_on) = match searches(args) {
        Ok(on) => on,
        Err(message) => return exit::bad_input(message),
    };
    let mut code = exit::OK;
    let (mut plain_figures, mut guided_figures) = (Vec::new(), Vec::new());
    // Each twin's figure when either search counts: the fewer runs of the two that caught it.
    let mut either_figures = Vec::new();
    for twin in TwinName::in_layer(Layer::Sim) {
        let started = Instant::now();
        let (plain, guided) = hunt_both(twin, args, jobs, (plain_on, guided_on));
        let outcomes: Vec<&TwinOutcome> = plain.iter().chain(guided.iter()).collect();
        let ok = outcomes.iter().all(|outcome| outcome.ok());
        if !ok {
            code = exit::VIOLATION;
        }
        let best = outcomes
            .iter()
            .filter_map(|outcome| outcome.seeds_to_detect())
            .min();
        either_figures.extend(best);
        plain_figures.extend(plain.as_ref().and_then(TwinOutcome::seeds_to_detect));
        guided_figures.extend(guided.as_ref().and_then(TwinOutcome::seeds_to_detect));
        let found = outcomes
            .iter()
            .find(|outcome| outcome.caught.is_some())
            .map(|_| twin.must_break(Layer::Sim))
            .or_else(|| {
                outcomes
                    .iter()
                    .find_map(|outcome| outcome.other_first.as_ref())
                    .map(|(_, invariant)| *invariant)
            });
        let seconds = started.elapsed().as_secs_f64();
        print_twin(args, twin, (found, ok, best), (&plain, &guided), seconds);
    }
    let swarm = if args.unbiased { "unbiased" } else { "biased" };
    let both_ran = plain_on && guided_on;
    for (name, figures) in [
        ("plain", &mut plain_figures),
        ("guided", &mut guided_figures),
        ("either (plain or guided)", &mut either_figures),
    ] {
        if name.starts_with("either") && !both_ran {
            continue;
        }
        if let Some(median) = median(figures) {
            let over = args
                .median_max
                .filter(|max| median > *max && !name.starts_with("either"));
            let line = format!(
                "sim    {swarm} {name}: {} of {} twins caught within {} runs, median {median} runs to detect{}",
                figures.len(),
                TwinName::in_layer(Layer::Sim).count(),
                args.budget,
                match over {
                    Some(max) => format!(": FAILED, above --median-max {max}"),
                    None => String::new(),
                }
            );
            if over.is_some() {
                code = exit::VIOLATION;
            }
            if args.json {
                eprintln!("{line}");
            } else {
                output::line(&line);
            }
        }
    }
    code
}

pub fn run(args: TwinsArgs) -> u8 {
    if args.conform {
        if args.model || args.sim || args.validation {
            return exit::bad_input(
                "--conform runs alone: not with --model, --sim or --validation",
            );
        }
        return crate::commands::conform::run_twins(args.json);
    }
    let every = !args.model && !args.sim && !args.validation;
    // A flag of the simulator's searches with only the model checked would do nothing: refused
    // before anything runs.
    if args.model && !args.sim && !args.validation {
        let simulator_only = [
            (args.unbiased, "--unbiased"),
            (args.search.is_some(), "--search"),
            (args.median_max.is_some(), "--median-max"),
            (args.jobs.is_some(), "--jobs"),
            (args.start != 0, "--start"),
            (args.budget != SIM_SEED_BUDGET, "--budget"),
        ];
        if let Some((_, flag)) = simulator_only.iter().find(|(given, _)| *given) {
            return exit::bad_input(format!(
                "{flag} applies to the simulator's twins: it does nothing with --model alone"
            ));
        }
    }
    if args.validation && !args.sim && !every {
        let biased_only = [
            (args.unbiased, "--unbiased"),
            (args.search.is_some(), "--search"),
            (args.median_max.is_some(), "--median-max"),
        ];
        if let Some((_, flag)) = biased_only.iter().find(|(given, _)| *given) {
            return exit::bad_input(format!(
                "{flag} applies to the simulator's twins: the validation layer's draw no bias \
                 (its hunt is plain seeds)"
            ));
        }
    }
    if args.search.is_some() && !args.unbiased {
        return exit::bad_input("--search needs --unbiased (the biased canary is plain seeds)");
    }
    let mut codes = Vec::new();
    if args.model || every {
        codes.push(model::run(args.json));
    }
    if args.sim || every {
        codes.push(run_sim(&args));
    }
    if args.validation || every {
        codes.push(validation::run(
            args.start,
            args.budget,
            args.jobs,
            args.json,
        ));
    }
    codes.into_iter().max().unwrap_or(exit::OK)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The guided campaign that takes the plain hunt's runs (`Made`) ends exactly as one that
    /// runs everything itself: the same runs to detect, catching spec, collateral findings, first
    /// other finding and control verdict. TailFromRefusal's campaign catches on a plain seed of
    /// its first batch, so every run it visits is one the plain hunt made, and the control too.
    #[test]
    fn a_campaign_that_takes_the_plain_hunts_runs_ends_as_one_that_runs_them() {
        let twin = TwinName::TailFromRefusal;
        let mut made = Made::default();
        let plain = hunt(twin, 0, 1_000, 2, true, Some(&mut made));
        let caught = plain.caught.as_ref().map(|(runs, _)| *runs);
        assert!(caught.is_some_and(|runs| runs <= felix_sim::search::guided::BATCH));
        assert_eq!(made.runs.len() as u64, plain.runs);
        let shared = hunt_guided(twin, 0, 1_000, 2, false, Some(&made));
        let alone = hunt_guided(twin, 0, 1_000, 2, false, None);
        assert_eq!(shared.json(), alone.json());
        assert_eq!(shared.json()["seed"], plain.json()["seed"]);
    }
}
