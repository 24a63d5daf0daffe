//! `felix conform <Config>` and `felix twins --conform`: model paths run on the real core
//! (`felix_validate::conform`).
//!
//! `conform` covers a FelixHeadTrim configuration's reachable graph: every (action kind x state
//! class) edge, by seeded walks each run on the core with the configuration's rules, and reports
//! the edges covered, the divergences and the audits' violations. `twins --conform` runs every
//! FelixHeadTrim twin's shortest counterexample on the core, with the twin and with every rule on.

use crate::exit;
use crate::output;
use clap::Args;
use felix_core::rules::Layer;
use felix_core::Rules;
use felix_model::config::{self, Config};
use felix_validate::conform::twins::{conform_twin, TwinConform};
use felix_validate::conform::walk::{cover, describe_class, Cover, STATES_MAX};
use felix_validate::conform::PathRun;
use serde_json::json;
use std::time::Instant;

/// Walks `felix conform` runs at most by default (it stops once every edge is covered).
pub const PATHS_DEFAULT: u64 = 1_000;

/// Arguments of `felix conform`.
#[derive(Args, Debug)]
pub struct ConformArgs {
    /// A FelixHeadTrim configuration: its full name or its name without the prefix (`Main`).
    pub config: String,
    /// The most walks to run (each one model path on the core); stops once every edge is covered.
    #[arg(long, default_value_t = PATHS_DEFAULT)]
    pub paths: u64,
    /// The walks' seed (the order of the edges aimed at and the walks' tails).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// One JSON object on stdout.
    #[arg(long)]
    pub json: bool,
}

/// The core's rules for a configuration: every rule on, or a twin's rule off.
fn rules_for(config: &Config) -> Result<Rules, String> {
    match config.twin {
        None => Ok(Rules::default()),
        Some(twin) if twin.expected(Layer::Sim).is_some() => Ok(Rules::twin(twin)),
        Some(twin) => Err(format!(
            "{} has no switch in the core (twin {twin} is the model's only)",
            config.name
        )),
    }
}

pub fn run(args: ConformArgs) -> u8 {
    let Some(config) = config::lookup(&args.config) else {
        if felix_model::paros::config::lookup(&args.config).is_some() {
            return exit::bad_input(format!(
                "{}: ParosTrimJump paths are not run on the core yet (FelixHeadTrim only)",
                args.config
            ));
        }
        return exit::bad_input(format!(
            "unknown configuration `{}` (FelixHeadTrim configurations: {})",
            args.config,
            config::names().join(", ")
        ));
    };
    if args.paths == 0 {
        return exit::bad_input("--paths must be at least 1");
    }
    let rules = match rules_for(config) {
        Ok(rules) => rules,
        Err(message) => return exit::bad_input(message),
    };
    let started = Instant::now();
    let found = match cover(config, rules, args.paths, args.seed) {
        Ok(found) => found,
        Err(_) => {
            return exit::bad_input(format!(
                "{}: the graph has more than {STATES_MAX} states, beyond the transition cover \
                 (pick a smaller configuration)",
                config.name
            ))
        }
    };
    let seconds = started.elapsed().as_secs_f64();
    if args.json {
        output::line(&cover_json(&found, seconds).to_string());
    } else {
        output::text(&cover_text(&found, seconds));
    }
    if found.failed.is_empty() {
        exit::OK
    } else {
        exit::VIOLATION
    }
}

fn percent(part: usize, whole: usize) -> f64 {
    if whole == 0 {
        100.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}

fn cover_text(found: &Cover, seconds: f64) -> String {
    let mut text = format!(
        "conform {}: seed {}, {} paths, {} actions on the core, {:.1} s\n",
        found.config, found.seed, found.paths, found.actions_run, seconds
    );
    text.push_str(&format!(
        "  states {}, edges covered {}/{} ({:.1}%)\n",
        found.states,
        found.covered.len(),
        found.total.len(),
        percent(found.covered.len(), found.total.len())
    ));
    for (kind, classes) in found.missed() {
        let classes: Vec<String> = classes.iter().map(|&c| describe_class(c)).collect();
        text.push_str(&format!("  missed {kind} from: {}\n", classes.join(" | ")));
    }
    text.push_str(&format!(
        "  divergences and violations: {}\n",
        found.failed.len()
    ));
    for failed in &found.failed {
        let path: Vec<String> = failed.path.iter().map(|a| a.to_string()).collect();
        text.push_str(&format!(
            "  path {}: {}\n{}",
            failed.index,
            path.join(", "),
            run_findings(&failed.run, "    ")
        ));
    }
    text.push_str(if found.failed.is_empty() {
        "CONFORMS\n"
    } else {
        "DIVERGES\n"
    });
    text
}

/// A path run's findings: the divergence (`Conformance`), then each audit violation.
fn run_findings(run: &PathRun, indent: &str) -> String {
    let mut text = String::new();
    if let Some(divergence) = &run.divergence {
        text.push_str(&format!(
            "{indent}VIOLATION Conformance: {}\n",
            divergence.describe()
        ));
    }
    for violation in &run.violations {
        text.push_str(&format!(
            "{indent}VIOLATION {}: {}\n",
            violation.invariant,
            violation.text()
        ));
    }
    text
}

fn cover_json(found: &Cover, seconds: f64) -> serde_json::Value {
    let missed: Vec<serde_json::Value> = found
        .total
        .difference(&found.covered)
        .map(|(kind, class)| json!({"kind": kind, "class": describe_class(*class)}))
        .collect();
    let failed: Vec<serde_json::Value> = found
        .failed
        .iter()
        .map(|failed| {
            json!({
                "path": failed.index,
                "actions": failed.path.iter().map(|a| a.to_string()).collect::<Vec<_>>(),
                "divergence": failed.run.divergence.as_ref().map(|d| d.describe()),
                "violations": failed.run.violations.iter()
                    .map(|v| json!({"invariant": v.invariant.name(), "message": v.text()}))
                    .collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({
        "config": found.config,
        "seed": found.seed,
        "paths": found.paths,
        "actions": found.actions_run,
        "states": found.states,
        "edges_total": found.total.len(),
        "edges_covered": found.covered.len(),
        "missed": missed,
        "failed": failed,
        "seconds": seconds,
        "conforms": found.failed.is_empty(),
    })
}

// ---- felix twins --conform ----

/// A twin half in words: what the core did on the path.
fn half(run: &PathRun) -> String {
    let mut words = format!("{} actions", run.actions_run);
    if let Some((step, action)) = &run.refused {
        words.push_str(&format!(", model refuses {step} {action}"));
    }
    if let Some(divergence) = &run.divergence {
        words.push_str(&format!(
            ", diverges at {} {}",
            divergence.step, divergence.action
        ));
    }
    let broken = run.broken();
    if broken.is_empty() {
        words.push_str(", holds");
    } else {
        words.push_str(&format!(", breaks {}", broken.join(" ")));
    }
    words
}

/// The verdict of one twin's row.
fn verdict(row: &TwinConform) -> &'static str {
    match (row.twin_ok(), row.control_ok(), row.gap()) {
        (_, false, _) => "FAIL (every rule on)",
        (Some(false), true, Some(_)) => "gap",
        (Some(false), true, None) => "FAIL (with twin)",
        (Some(true), true, _) => "ok",
        (None, true, _) => "ok (no core switch)",
    }
}

/// `felix twins --conform`.
pub fn run_twins(json: bool) -> u8 {
    let mut code = exit::OK;
    if !json {
        output::line(&format!(
            "{:<18} {:<17} {:>4}  {:<44} {:<50} verdict",
            "twin", "must break", "path", "core with the twin", "core with every rule on"
        ));
    }
    for config in config::twins() {
        let started = Instant::now();
        let row = match conform_twin(config) {
            Ok(row) => row,
            Err(message) => {
                eprintln!("felix: {message}");
                code = exit::VIOLATION;
                continue;
            }
        };
        let seconds = started.elapsed().as_secs_f64();
        let verdict = verdict(&row);
        if verdict.starts_with("FAIL") {
            code = exit::VIOLATION;
        }
        let twin_half = row
            .with_twin
            .as_ref()
            .map_or("no core switch".to_string(), half);
        if json {
            output::line(
                &json!({
                    "twin": row.twin.name(),
                    "config": config.name,
                    "must_break": row.expected.name(),
                    "path": row.path.iter().map(|a| a.to_string()).collect::<Vec<_>>(),
                    "with_twin": twin_half,
                    "with_twin_broken": row.with_twin.as_ref().map(|run| run.broken()),
                    "every_rule_on": half(&row.every_rule_on),
                    "every_rule_on_broken": row.every_rule_on.broken(),
                    "gap": row.gap(),
                    "verdict": verdict,
                    "seconds": seconds,
                })
                .to_string(),
            );
        } else {
            output::line(&format!(
                "{:<18} {:<17} {:>4}  {:<44} {:<50} {verdict}",
                row.twin.name(),
                row.expected.name(),
                row.path.len(),
                twin_half,
                half(&row.every_rule_on),
            ));
            if let Some(gap) = row.gap() {
                output::line(&format!("  gap: {gap}"));
            }
            for run in row.with_twin.iter().chain([&row.every_rule_on]) {
                if verdict.starts_with("FAIL") {
                    output::text(&run_findings(run, "  "));
                }
            }
        }
    }
    code
}
