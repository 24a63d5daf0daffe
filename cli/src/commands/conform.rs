//! `felix conform <Config>` and `felix twins --conform`: model paths run on the real core
//! (`felix_validate::conform`).
//!
//! `conform` covers a FelixHeadTrim or ParosTrimJump configuration's reachable graph (the steps
//! the core can take): every (action kind x state class) edge, by seeded walks each run on the
//! core with the configuration's rules, and reports the edges covered, the edges left out and
//! why, the divergences and the audits' violations. `twins --conform` runs every twin's shortest
//! counterexample the core can follow on the core, with the twin and with every rule on.

use crate::exit;
use crate::output;
use clap::Args;
use felix_core::rules::{Invariant, Layer};
use felix_core::Rules;
use felix_model::head_trim::spec::FelixHeadTrim;
use felix_model::paros::config::ParosConfig;
use felix_model::paros::spec::ParosTrimJump;
use felix_model::spec::Spec as _;
use felix_validate::conform::spec::{HeadTrim, Paros, Spec};
use felix_validate::conform::twins::{conform_paros_twin, conform_twin, TwinConform};
use felix_validate::conform::walk::{cover_of, Cover, Edge, STATES_MAX};
use felix_validate::conform::{PathRun, Segments};
use serde_json::json;
use std::fmt::Display;
use std::time::Instant;

/// Walks `felix conform` runs at most by default (it stops once every edge is covered).
pub const PATHS_DEFAULT: u64 = 1_000;

/// Arguments of `felix conform`.
#[derive(Args, Debug)]
pub struct ConformArgs {
    /// A FelixHeadTrim configuration (its full name or its name without the prefix: `Main`) or a
    /// ParosTrimJump one (`ParosTrimJump`, `ParosTrimJumpReplica`, or `Replica`).
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

/// The core's rules for a twin (every rule on for a passing configuration).
fn rules_for(name: &str, twin: Option<felix_core::rules::TwinName>) -> Result<Rules, String> {
    match twin {
        None => Ok(Rules::default()),
        Some(twin) if twin.expected(Layer::Sim).is_some() => Ok(Rules::twin(twin)),
        Some(twin) => Err(format!(
            "{name} has no switch in the core (twin {twin} is the model's only)"
        )),
    }
}

pub fn run(args: ConformArgs) -> u8 {
    if args.paths == 0 {
        return exit::bad_input("--paths must be at least 1");
    }
    if let Some(config) = FelixHeadTrim::lookup(&args.config) {
        return match rules_for(config.name, config.twin) {
            Ok(rules) => run_cover(
                HeadTrim {
                    config,
                    rules,
                    segments: Segments::Never,
                },
                &args,
            ),
            Err(message) => exit::bad_input(message),
        };
    }
    if let Some(config) = paros_lookup(&args.config) {
        return match rules_for(config.name, config.twin) {
            Ok(rules) => run_paros_covers(config, rules, &args),
            Err(message) => exit::bad_input(message),
        };
    }
    let mut names = FelixHeadTrim::names();
    names.extend(ParosTrimJump::names());
    exit::bad_input(format!(
        "unknown configuration `{}` (configurations: {})",
        args.config,
        names.join(", ")
    ))
}

/// A ParosTrimJump configuration by its full name, or by its name without the prefix where that is
/// not a FelixHeadTrim name (`Replica`; FelixHeadTrim is looked up first).
fn paros_lookup(name: &str) -> Option<&'static ParosConfig> {
    ParosTrimJump::lookup(name)
}

/// A ParosTrimJump configuration's two covers: a core that compacts as the model's `Compact` does
/// (in the step that moves its floor) and one that never compacts (the states where the model's
/// `Compact` waits); then the whole graph's edges, covered by either or left out, and why.
fn run_paros_covers(config: &'static ParosConfig, rules: Rules, args: &ConformArgs) -> u8 {
    let started = Instant::now();
    let specs = [Segments::Model, Segments::Never].map(|segments| Paros {
        config,
        rules,
        segments,
    });
    let mut covers = Vec::new();
    for spec in specs {
        let spec_started = Instant::now();
        match cover_of(spec, args.paths, args.seed) {
            Ok(found) => covers.push((spec, found, spec_started.elapsed().as_secs_f64())),
            Err(_) => {
                return exit::bad_input(format!(
                    "{}: the graph has more than {STATES_MAX} states, beyond the transition cover",
                    config.name
                ))
            }
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    let failed: usize = covers.iter().map(|(_, found, _)| found.failed.len()).sum();
    let whole = whole_graph(&covers);
    if args.json {
        output::line(&paros_json(config, &covers, &whole, seconds).to_string());
    } else {
        output::text(&paros_text(config, &covers, &whole, seconds));
    }
    if failed == 0 {
        exit::OK
    } else {
        exit::VIOLATION
    }
}

type ParosCover = (
    Paros,
    Cover<felix_model::paros::spec::Action, felix_model::paros::spec::State>,
    f64,
);

/// The whole graph's edges (every step of the model), the ones either cover took, and the rest
/// with the reasons the covers gave for leaving them out.
struct WholeGraph<'a> {
    edges: std::collections::BTreeSet<Edge>,
    covered: std::collections::BTreeSet<Edge>,
    rest: Vec<(Edge, Vec<&'a str>)>,
}

fn whole_graph(covers: &[ParosCover]) -> WholeGraph<'static> {
    let edges: std::collections::BTreeSet<Edge> = covers
        .iter()
        .flat_map(|(_, found, _)| found.total.iter().chain(found.left_out.keys()).copied())
        .collect();
    let covered: std::collections::BTreeSet<Edge> = covers
        .iter()
        .flat_map(|(_, found, _)| found.covered.iter().copied())
        .collect();
    let rest = edges
        .difference(&covered)
        .map(|edge| {
            let mut why: Vec<&'static str> = covers
                .iter()
                .filter_map(|(_, found, _)| found.left_out.get(edge).copied())
                .collect();
            why.dedup();
            (*edge, why)
        })
        .collect();
    WholeGraph {
        edges,
        covered,
        rest,
    }
}

fn paros_json(
    config: &ParosConfig,
    covers: &[ParosCover],
    whole: &WholeGraph<'_>,
    seconds: f64,
) -> serde_json::Value {
    let each: Vec<serde_json::Value> = covers
        .iter()
        .map(|(spec, found, seconds)| {
            let mut value = cover_json(*spec, found, *seconds);
            value["segments"] = json!(segments_name(spec.segments));
            value
        })
        .collect();
    let rest: Vec<serde_json::Value> = whole
        .rest
        .iter()
        .map(|((kind, class), why)| {
            json!({"kind": kind, "class": covers[0].0.describe_class(*class), "why": why})
        })
        .collect();
    json!({
        "config": config.name,
        "covers": each,
        "edges_total": whole.edges.len(),
        "edges_covered": whole.covered.len(),
        "rest": rest,
        "seconds": seconds,
        "conforms": covers.iter().all(|(_, found, _)| found.failed.is_empty()),
    })
}

fn paros_text(
    config: &ParosConfig,
    covers: &[ParosCover],
    whole: &WholeGraph<'_>,
    seconds: f64,
) -> String {
    let mut text = String::new();
    for (spec, found, seconds) in covers {
        text.push_str(&format!("segments: {}\n", segments_name(spec.segments)));
        text.push_str(&cover_text(*spec, found, *seconds));
    }
    text.push_str(&format!(
        "conform {}: the whole graph's edges covered by the two {}/{} ({:.1}%), {:.1} s\n",
        config.name,
        whole.covered.len(),
        whole.edges.len(),
        percent(whole.covered.len(), whole.edges.len()),
        seconds
    ));
    for ((kind, class), why) in &whole.rest {
        text.push_str(&format!(
            "  not covered: {kind} from {} ({})\n",
            covers[0].0.describe_class(*class),
            why.join("; ")
        ));
    }
    let conforms = covers.iter().all(|(_, found, _)| found.failed.is_empty());
    text.push_str(if conforms { "CONFORMS\n" } else { "DIVERGES\n" });
    text
}

fn segments_name(segments: Segments) -> &'static str {
    match segments {
        Segments::Model => "one record (the core compacts as the model's Compact does)",
        Segments::Never => "never filled (the core never compacts)",
    }
}

fn run_cover<S: Spec>(spec: S, args: &ConformArgs) -> u8 {
    let started = Instant::now();
    let found = match cover_of(spec, args.paths, args.seed) {
        Ok(found) => found,
        Err(_) => {
            return exit::bad_input(format!(
                "{}: the graph has more than {STATES_MAX} states, beyond the transition cover \
                 (pick a smaller configuration)",
                spec.name()
            ))
        }
    };
    let seconds = started.elapsed().as_secs_f64();
    if args.json {
        output::line(&cover_json(spec, &found, seconds).to_string());
    } else {
        output::text(&cover_text(spec, &found, seconds));
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

fn cover_text<S: Spec>(spec: S, found: &Cover<S::Action, S::State>, seconds: f64) -> String {
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
        let classes: Vec<String> = classes.iter().map(|&c| spec.describe_class(c)).collect();
        text.push_str(&format!("  missed {kind} from: {}\n", classes.join(" | ")));
    }
    for (kind, why) in found.no_core_verb {
        text.push_str(&format!("  not an edge: {kind} ({why})\n"));
    }
    let mut reasons: std::collections::BTreeMap<&str, Vec<&str>> =
        std::collections::BTreeMap::new();
    for ((kind, _), why) in &found.left_out {
        reasons.entry(why).or_default().push(kind);
    }
    for (why, kinds) in reasons {
        let mut counts: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
        for kind in kinds {
            *counts.entry(kind).or_default() += 1;
        }
        let counts: Vec<String> = counts
            .iter()
            .map(|(kind, count)| format!("{count} {kind}"))
            .collect();
        text.push_str(&format!(
            "  left out of the edges: {} ({why})\n",
            counts.join(", ")
        ));
    }
    text.push_str(&format!(
        "  divergences, gaps and violations: {}\n",
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
fn run_findings<A: Display, S>(run: &PathRun<A, S>, indent: &str) -> String {
    let mut text = String::new();
    if let Some((step, action, why)) = &run.gap {
        text.push_str(&format!("{indent}GAP at step {step} {action}: {why}\n"));
    }
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

fn cover_json<S: Spec>(
    spec: S,
    found: &Cover<S::Action, S::State>,
    seconds: f64,
) -> serde_json::Value {
    let missed: Vec<serde_json::Value> = found
        .total
        .difference(&found.covered)
        .map(|(kind, class)| json!({"kind": kind, "class": spec.describe_class(*class)}))
        .collect();
    let left_out: Vec<serde_json::Value> = found
        .left_out
        .iter()
        .map(|((kind, class), why)| {
            json!({"kind": kind, "class": spec.describe_class(*class), "why": why})
        })
        .collect();
    let failed: Vec<serde_json::Value> = found
        .failed
        .iter()
        .map(|failed| {
            json!({
                "path": failed.index,
                "actions": failed.path.iter().map(|a| a.to_string()).collect::<Vec<_>>(),
                "divergence": failed.run.divergence.as_ref().map(|d| d.describe()),
                "gap": failed.run.gap.as_ref().map(|(step, action, why)| {
                    json!({"step": step, "action": action.to_string(), "why": why})
                }),
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
        "left_out": left_out,
        "failed": failed,
        "seconds": seconds,
        "conforms": found.failed.is_empty(),
    })
}

// ---- felix twins --conform ----

/// A twin half in words: what the core did on the path.
fn half<A: Display, S>(run: &PathRun<A, S>) -> String {
    let mut words = format!("{} actions", run.actions_run);
    if let Some((step, action)) = &run.refused {
        words.push_str(&format!(", model refuses {step} {action}"));
    }
    if let Some((step, action, _)) = &run.gap {
        words.push_str(&format!(", core refuses {step} {action}"));
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
        words.push_str(&format!(", breaks {}", Invariant::names(&broken).join(" ")));
    }
    words
}

/// The verdict of one twin's row.
fn verdict<A, S>(row: &TwinConform<A, S>) -> &'static str {
    match (row.twin_ok(), row.control_ok(), &row.gap) {
        (_, false, _) => "FAIL (every rule on)",
        (Some(true), true, _) => "ok",
        (Some(false), true, Some(_)) => "gap",
        (Some(false), true, None) => "FAIL (with twin)",
        (None, true, _) => "ok (no core switch)",
    }
}

/// `felix twins --conform`: every FelixHeadTrim twin, then every ParosTrimJump twin.
pub fn run_twins(json: bool) -> u8 {
    if !json {
        output::line(&format!(
            "{:<18} {:<17} {:>7}  {:<44} {:<50} verdict",
            "twin", "must break", "path", "core with the twin", "core with every rule on"
        ));
    }
    let head_trim = print_rows(FelixHeadTrim::twins(), conform_twin, json);
    head_trim.max(print_rows(ParosTrimJump::twins(), conform_paros_twin, json))
}

/// Each twin's row (`conform` builds it), in order; the highest exit code.
fn print_rows<C, A: Display, S>(
    twins: impl IntoIterator<Item = C>,
    conform: impl Fn(C) -> Result<TwinConform<A, S>, String>,
    json: bool,
) -> u8 {
    let mut code = exit::OK;
    for config in twins {
        let started = Instant::now();
        match conform(config) {
            Ok(row) => code = code.max(print_row(&row, started, json)),
            Err(message) => {
                eprintln!("felix: {message}");
                code = exit::VIOLATION;
            }
        }
    }
    code
}

/// One twin's row (text or JSON); its exit code.
fn print_row<A: Display, S>(row: &TwinConform<A, S>, started: Instant, json: bool) -> u8 {
    let seconds = started.elapsed().as_secs_f64();
    let verdict = verdict(row);
    let twin_half = row
        .with_twin
        .as_ref()
        .map_or("no core switch".to_string(), half);
    let length = if row.path.len() == row.model_shortest {
        row.path.len().to_string()
    } else {
        format!("{} ({})", row.path.len(), row.model_shortest)
    };
    if json {
        output::line(
            &json!({
                "twin": row.twin.name(),
                "config": row.config,
                "must_break": row.expected.name(),
                "path": row.path.iter().map(|a| a.to_string()).collect::<Vec<_>>(),
                "model_shortest": row.model_shortest,
                "bounds_of": row.bounds_of,
                "with_twin": twin_half,
                "with_twin_broken": row.with_twin.as_ref().map(|run| Invariant::names(&run.broken())),
                "every_rule_on": half(&row.every_rule_on),
                "every_rule_on_broken": Invariant::names(&row.every_rule_on.broken()),
                "gap": row.gap,
                "verdict": verdict,
                "seconds": seconds,
            })
            .to_string(),
        );
    } else {
        output::line(&format!(
            "{:<18} {:<17} {:>7}  {:<44} {:<50} {verdict}",
            row.twin.name(),
            row.expected.name(),
            length,
            twin_half,
            half(&row.every_rule_on),
        ));
        let path: Vec<String> = row.path.iter().map(|a| a.to_string()).collect();
        if let Some(other) = row.bounds_of {
            output::line(&format!(
                "  no counterexample in {}'s own bounds has only steps the core can take; the \
                 shortest under {other}'s bounds (the same switch), held to {other} with every \
                 rule on: {}",
                row.config,
                path.join(", ")
            ));
        } else if row.path.len() != row.model_shortest {
            output::line(&format!(
                "  the model's shortest counterexample has a step the core cannot take; the \
                 shortest it can follow: {}",
                path.join(", ")
            ));
        }
        if let Some(gap) = &row.gap {
            output::line(&format!("  gap: {gap}"));
        }
        if let Some((step, action, why)) = &row.every_rule_on.gap {
            output::line(&format!(
                "  every rule on: the core refuses step {step} {action}: {why}"
            ));
        }
        if verdict.starts_with("FAIL") {
            for run in row.with_twin.iter().chain([&row.every_rule_on]) {
                output::text(&run_findings(run, "  "));
            }
        }
    }
    if verdict.starts_with("FAIL") {
        exit::VIOLATION
    } else {
        exit::OK
    }
}
