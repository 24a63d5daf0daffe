//! `felix sweep --guided`: a coverage-guided campaign (`felix_sim::search::guided`) run over
//! threads.
//!
//! A campaign is a deterministic function of its start seed and budget (`--seeds A..B`: start A,
//! B - A runs): each batch of runs is generated from the corpus as it stood, run on `--jobs`
//! threads, and observed in run order, so the output is the same for any `--jobs`. Every failing
//! run is printed with the one command that replays it: `felix replay --seed S` plus the knobs in
//! full when a mutation chose them (`--knobs JSON`), and a continuation's fork
//! (`--fork STEP:BRANCH`).

use crate::commands::replay::replay_command_spec;
use crate::commands::sweep::summary::by_name;
use crate::exit;
use crate::output;
use felix_core::rules::{Invariant, TwinName};
use felix_sim::search::guided::Campaign;
use felix_sim::{RunReport, RunSpec};
use serde_json::json;
use std::collections::BTreeMap;
use std::time::Instant;

/// What campaign to run: `budget` runs from `start`, every run with `twin`'s rule off if given,
/// first hits branched (continuations) when `branching`.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    pub start: u64,
    pub budget: u64,
    pub twin: Option<TwinName>,
    pub branching: bool,
}

/// Runs the campaign `options` names, handing each (index, spec, report) to `visit` in run order
/// until it returns false. Returns the campaign (its corpus) at the end.
pub fn run_campaign(
    options: &Options,
    jobs: usize,
    visit: impl FnMut(u64, &RunSpec, &RunReport) -> bool,
) -> Campaign {
    run_campaign_with(options, jobs, felix_sim::run, visit)
}

/// `run_campaign` with the function that runs one spec (`runner`, as
/// `felix_sim::search::parallel::run_in_order_with` takes it).
pub fn run_campaign_with(
    options: &Options,
    jobs: usize,
    runner: impl Fn(&RunSpec) -> RunReport + Sync,
    mut visit: impl FnMut(u64, &RunSpec, &RunReport) -> bool,
) -> Campaign {
    let mut campaign = Campaign::new(options.start, options.budget, options.twin);
    if options.branching {
        campaign = campaign.branching();
    }
    let mut index = 0u64;
    loop {
        let batch = campaign.next_batch();
        if batch.is_empty() {
            break;
        }
        let mut going = true;
        felix_sim::search::parallel::run_in_order_with(
            batch.len() as u64,
            |position| batch.get(position as usize).cloned(),
            jobs,
            &runner,
            |report| {
                let spec = &batch[(index % felix_sim::search::guided::BATCH) as usize];
                campaign.observe(index, &report);
                going = visit(index, spec, &report);
                index += 1;
                going
            },
        );
        if !going {
            break;
        }
    }
    campaign
}

/// `felix sweep --guided` from its arguments: the flags a campaign does not take are bad input.
pub fn from_args(
    args: &super::SweepArgs,
    range: std::ops::Range<u64>,
    twin: Option<TwinName>,
    jobs: usize,
) -> u8 {
    if !args.guided {
        return exit::bad_input(
            "--branches needs --guided: continuations follow a guided campaign's first hits",
        );
    }
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
    let campaign = Options {
        start: range.start,
        budget: range.end - range.start,
        twin,
        branching: args.branches,
    };
    sweep(&campaign, jobs, args.json)
}

/// `felix sweep --guided`: every failing run with its replay command, then a summary.
pub fn sweep(options: &Options, jobs: usize, json_out: bool) -> u8 {
    let Options {
        start,
        budget,
        twin,
        branching,
    } = *options;
    let started = Instant::now();
    let mut failed = 0u64;
    let mut events = 0u64;
    let mut mutants = 0u64;
    let mut continuations = 0u64;
    let mut violations: BTreeMap<Invariant, u64> = BTreeMap::new();
    let mut coverage = felix_audits::Counts::default();
    let campaign = run_campaign(options, jobs, |index, spec, report| {
        events += report.events;
        if spec.knobs.is_some() {
            mutants += 1;
        }
        if spec.fork.is_some() {
            continuations += 1;
        }
        coverage.sum(&report.coverage);
        if let Some(finding) = report.violations.first() {
            failed += 1;
            *violations.entry(finding.invariant).or_insert(0) += 1;
            let replay = replay_command_spec(spec);
            let line = super::failure_line(Some(index), report, finding, twin, &replay, json_out);
            output::line(&line);
        }
        true
    });
    let seconds = started.elapsed().as_secs_f64();
    let entries = coverage.entries();
    let never: Vec<&str> = (entries.iter())
        .filter(|(_, count)| *count == 0)
        .map(|(key, _)| key.name())
        .collect();
    if json_out {
        output::line(&format!(
            "{}",
            json!({
                "seeds": budget,
                "failed": failed,
                "events": events,
                "seconds": (seconds * 1000.0).round() / 1000.0,
                "guided": true,
                "start": start,
                "mutants": mutants,
                "branching": branching,
                "continuations": continuations,
                "locates": campaign.locates(),
                "corpus": campaign.corpus().len(),
                "pairs": campaign.pairs(),
                "never_hit": never,
                "twin": twin.map(|twin| twin.name()),
                "coverage": coverage,
                "violations": by_name(&violations),
            })
        ));
    } else {
        let twin_text = twin.map(|twin| format!(" twin {twin}")).unwrap_or_default();
        output::line(&format!(
            "guided sweep from {start}{twin_text}: {budget} runs ({mutants} mutants), {failed} failed, {events} events, {seconds:.2} s"
        ));
        output::line(&format!(
            "  corpus {} runs, {} (counter, bucket) pairs reached",
            campaign.corpus().len(),
            campaign.pairs()
        ));
        if branching {
            output::line(&format!(
                "  branching: {continuations} of the mutants were continuations; {} runs more found their forks' steps",
                campaign.locates()
            ));
        }
        if !never.is_empty() {
            output::line(&format!("  never hit: {}", never.join(" ")));
        }
        if !violations.is_empty() {
            let listed: Vec<String> = violations
                .iter()
                .map(|(name, count)| format!("{name}={count}"))
                .collect();
            output::line(&format!("  violations: {}", listed.join(" ")));
        }
    }
    if failed > 0 {
        exit::VIOLATION
    } else {
        exit::OK
    }
}
