//! `felix twins --validation`: the validation layer's twins
//! (`TwinName::in_layer(Layer::Validation)`).
//!
//! Each breaks a rule of the core's walk whose break changes no answer, so no audit sees it: only
//! trace validation, which holds every step of the node's state to a model's actions, can. Seeds
//! `start..start+budget` run under the twin with validation on, in order, until one diverges
//! (`TraceValidation`). The twin counts as caught only when that run breaks no audit (else it is
//! not a validation twin any more) and its control run (the same seed, every rule on, validated)
//! is clean.

use crate::args::parse_jobs;
use crate::commands::replay::replay_command_spec;
use crate::exit;
use crate::output;
use felix_core::rules::{Invariant, Layer, TwinName};
use felix_sim::RunSpec;
use serde_json::json;

/// What the hunt for one validation twin found.
struct Hunt {
    /// The run that diverged: (runs until then, its seed, the audits it also broke).
    caught: Option<(u64, u64, Vec<Invariant>)>,
    runs: u64,
    /// The control run's findings (the catching seed, every rule on, validated).
    control: Vec<Invariant>,
}

impl Hunt {
    fn ok(&self) -> bool {
        matches!(&self.caught, Some((_, _, audits)) if audits.is_empty()) && self.control.is_empty()
    }

    fn verdict(&self) -> String {
        match &self.caught {
            None => format!("FAILED (no divergence in {} runs)", self.runs),
            Some((_, seed, audits)) if !audits.is_empty() => format!(
                "FAILED (seed {seed}: an audit saw it too: {})",
                names(audits)
            ),
            Some((_, seed, _)) if !self.control.is_empty() => format!(
                "FAILED (seed {seed} with every rule on: {})",
                names(&self.control)
            ),
            Some((runs, _, _)) => format!("plain {runs}"),
        }
    }
}

fn names(invariants: &[Invariant]) -> String {
    let names: Vec<&str> = invariants
        .iter()
        .map(|invariant| invariant.name())
        .collect();
    names.join(", ")
}

fn hunt(twin: TwinName, start: u64, budget: u64, jobs: usize) -> Hunt {
    let mut hunt = Hunt {
        caught: None,
        runs: 0,
        control: Vec::new(),
    };
    felix_sim::search::parallel::run_in_order_with(
        budget,
        |index| (index < budget).then(|| RunSpec::new(start.wrapping_add(index), Some(twin))),
        jobs,
        felix_validate::run,
        |report| {
            hunt.runs += 1;
            let diverged = report
                .violations
                .iter()
                .any(|finding| finding.invariant == Invariant::TraceValidation);
            if !diverged {
                return true;
            }
            let audits = report
                .violations
                .iter()
                .map(|finding| finding.invariant)
                .filter(|invariant| *invariant != Invariant::TraceValidation)
                .collect();
            hunt.caught = Some((hunt.runs, report.seed, audits));
            false
        },
    );
    if let Some((_, seed, _)) = &hunt.caught {
        let mut control = RunSpec::new(*seed, Some(twin));
        control.control = true;
        hunt.control = felix_validate::run(&control)
            .violations
            .iter()
            .map(|finding| finding.invariant)
            .collect();
    }
    hunt
}

/// `felix twins --validation`: hunts each validation twin from seed `start` for at most `budget`
/// runs (`--start`, `--budget`, `--jobs`, `--json` of `felix twins`).
pub fn run(start: u64, budget: u64, jobs: Option<usize>, json: bool) -> u8 {
    let jobs = match parse_jobs(jobs) {
        Ok(jobs) => jobs,
        Err(message) => return exit::bad_input(message),
    };
    let mut code = exit::OK;
    for twin in TwinName::in_layer(Layer::Validation) {
        let expected = twin.must_break(Layer::Validation);
        let hunt = hunt(twin, start, budget, jobs);
        if !hunt.ok() {
            code = exit::VIOLATION;
        }
        let replay = hunt
            .caught
            .as_ref()
            .map(|(_, seed, _)| replay_command_spec(&RunSpec::new(*seed, Some(twin))));
        let found = hunt.caught.as_ref().map(|_| expected);
        if json {
            output::line(&format!(
                "{}",
                json!({
                    "twin": twin.name(),
                    "layer": "validation",
                    "expected": expected.name(),
                    "found": found.map(Invariant::name),
                    "ok": hunt.ok(),
                    "seeds_to_detect": hunt.ok().then(|| hunt.caught.as_ref().map(|(runs, _, _)| *runs)).flatten(),
                    "runs": hunt.runs,
                    "replay": replay,
                    "audits_too": hunt.caught.as_ref().map(|(_, _, audits)| names(audits)),
                    "control_violation": hunt.control.first().map(|invariant| invariant.name()),
                })
            ));
        } else {
            output::line(&format!(
                "validation {:<13} expected {:<18} found {:<18} {} ({})",
                twin.name(),
                expected,
                found.map_or("nothing", Invariant::name),
                if hunt.ok() { "ok " } else { "FAILED" },
                hunt.verdict()
            ));
            if let Some(replay) = replay {
                output::line(&format!("           replay: {replay}"));
            }
        }
    }
    code
}
