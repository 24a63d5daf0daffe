//! A sweep's totals and its summary, as text and as the `--json` summary object (which
//! `felix sweep merge` also prints for merged shards).

use felix_core::rules::{Invariant, Layer, TwinName};
use felix_sim::render::trace::SweepHash;
use serde_json::json;
use std::collections::BTreeMap;

/// How much of the coverage counters a sweep's summary shows (`--coverage`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum CoverageShown {
    Full,
    Never,
    None,
}

/// Totals over a sweep.
#[derive(Default)]
pub struct Totals {
    pub seeds: u64,
    pub failed: u64,
    pub events: u64,
    pub steps: u64,
    pub simulated_micros: u128,
    pub coverage: felix_audits::Counts,
    pub violations: BTreeMap<Invariant, u64>,
    /// Per invariant, the seeds that broke it (any of their findings, not only the first).
    pub broken: BTreeMap<Invariant, u64>,
    /// Every seed's trace hash chained in seed order: one number for the whole sweep, the same
    /// for any `--jobs`.
    pub sweep_hash: SweepHash,
    /// Every seed's trace hash, in seed order (in `--json`, so that shards can be merged).
    pub trace_hashes: Vec<u64>,
}

impl Totals {
    /// Counts one seed's run (in seed order): its events, trace, coverage and the invariants it
    /// broke. Whether the seed fails is the caller's (`--invariant` picks the finding).
    pub fn count(&mut self, report: &felix_sim::RunReport) {
        self.seeds += 1;
        self.events += report.events;
        self.steps += report.steps;
        self.sweep_hash.add(report.trace_hash);
        self.trace_hashes.push(report.trace_hash);
        self.simulated_micros += u128::from(report.simulated_micros);
        self.coverage.sum(&report.coverage);
        let mut broken: Vec<Invariant> = report.violations.iter().map(|f| f.invariant).collect();
        broken.sort_unstable();
        broken.dedup();
        for invariant in broken {
            *self.broken.entry(invariant).or_insert(0) += 1;
        }
    }
}

/// How a sweep ended, for its summary.
pub struct Ending<'a> {
    pub seconds: f64,
    pub jobs: usize,
    pub twin: Option<TwinName>,
    /// Control runs of the twin (every rule on).
    pub control: bool,
    /// (K, N) of `--shard K/N`.
    pub shard: (u64, u64),
    /// The seeds the sweep was asked for (its shard's).
    pub seeds: u64,
    /// Why it stopped before its last seed, if it did.
    pub stopped: Option<&'a str>,
    /// The command that runs the rest, when it stopped early.
    pub resume: Option<String>,
    /// `--seeds` as given (the whole range, before sharding), `--validate`, `--invariant`.
    pub range: &'a str,
    pub validate: bool,
    pub invariant: Option<Invariant>,
}

impl Ending<'_> {
    /// Seeds and events per second, and simulated time per wall time.
    fn rates(&self, totals: &Totals) -> (f64, f64, f64) {
        let seconds = self.seconds.max(1e-9);
        let wall_micros = (self.seconds * 1e6).max(1.0);
        (
            totals.seeds as f64 / seconds,
            totals.events as f64 / seconds,
            totals.simulated_micros as f64 / wall_micros,
        )
    }
}

/// The summary object of `--json`. What a merge needs besides the totals: the range, the shard,
/// the flags that change which seeds fail, and every seed's trace hash (16 hex digits each, in
/// seed order).
pub fn summary_json(totals: &Totals, ending: &Ending<'_>) -> serde_json::Value {
    let (seeds_per_second, events_per_second, simulated_ratio) = ending.rates(totals);
    json!({
        "seeds": totals.seeds,
        "failed": totals.failed,
        "events": totals.events,
        "trace_lines": totals.steps,
        "sweep_hash": totals.sweep_hash.to_string(),
        "seconds": (ending.seconds * 1000.0).round() / 1000.0,
        "seeds_per_second": seeds_per_second.round(),
        "events_per_second": events_per_second.round(),
        "simulated_to_wall": (simulated_ratio * 10.0).round() / 10.0,
        "jobs": ending.jobs,
        "twin": ending.twin.map(|twin| twin.name()),
        "coverage": crate::commands::sweep::coverage::totals(&totals.coverage),
        "never_hit": crate::commands::sweep::coverage::Verdict::of(
            &totals.coverage,
            &crate::commands::sweep::coverage::rules_of(ending.twin, ending.control),
        )
        .never,
        "violations": by_name(&totals.violations),
        "broken": by_name(&totals.broken),
        "stopped": ending.stopped,
        "resume": ending.resume,
        "range": ending.range,
        "shard": [ending.shard.0, ending.shard.1],
        "control": ending.control,
        "validate": ending.validate,
        "invariant": ending.invariant.map(Invariant::name),
        "simulated_micros": totals.simulated_micros as u64,
        "trace_hashes": totals
            .trace_hashes
            .iter()
            .map(|hash| format!("{hash:016x}"))
            .collect::<String>(),
    })
}

/// Counts per invariant, keyed by name (for JSON).
pub fn by_name(counts: &BTreeMap<Invariant, u64>) -> BTreeMap<&'static str, u64> {
    counts
        .iter()
        .map(|(invariant, count)| (invariant.name(), *count))
        .collect()
}

/// `name=count` pairs, space-separated.
fn pairs<K: std::fmt::Display>(counts: impl IntoIterator<Item = (K, u64)>) -> String {
    let pairs: Vec<String> = (counts.into_iter())
        .map(|(name, count)| format!("{name}={count}"))
        .collect();
    pairs.join(" ")
}

/// The text summary's lines: the coverage counters as `coverage` shows them, and with
/// `require_coverage` whether the catalog was met.
pub fn summary_text(
    totals: &Totals,
    ending: &Ending<'_>,
    coverage: CoverageShown,
    require_coverage: bool,
) -> Vec<String> {
    let (seeds_per_second, events_per_second, simulated_ratio) = ending.rates(totals);
    let (shard, shards) = ending.shard;
    let twin_text = ending
        .twin
        .map(|twin| format!(" twin {twin}"))
        .unwrap_or_default();
    let mut lines = vec![
        format!(
            "sweep {}{twin_text} shard {shard}/{shards}: {} seeds, {} failed, {} events, {} trace lines, {:.2} s",
            ending.range, totals.seeds, totals.failed, totals.events, totals.steps, ending.seconds
        ),
        format!(
            "  {seeds_per_second:.1} seeds/s, {events_per_second:.0} events/s, simulated/wall {simulated_ratio:.1}x, {} jobs",
            ending.jobs
        ),
        format!(
            "  sweep hash {} (every seed's trace hash, in seed order)",
            totals.sweep_hash
        ),
    ];
    if coverage == CoverageShown::Full {
        let all = crate::commands::sweep::coverage::totals(&totals.coverage);
        lines.push(format!("  coverage: {}", pairs(all.entries())));
    }
    if coverage != CoverageShown::None || require_coverage {
        let rules = crate::commands::sweep::coverage::rules_of(ending.twin, ending.control);
        let verdict = crate::commands::sweep::coverage::Verdict::of(&totals.coverage, &rules);
        lines.extend(verdict.lines());
        if require_coverage {
            let met = if verdict.complete() { "met" } else { "NOT met" };
            lines.push(format!("  coverage required (--require-coverage): {met}"));
        }
    }
    if ending.validate {
        lines.push(crate::validation::summary_line(&totals.coverage));
    }
    if !totals.violations.is_empty() {
        let violations = totals.violations.iter().map(|(name, count)| (name, *count));
        lines.push(format!("  violations: {}", pairs(violations)));
    }
    if !totals.broken.is_empty() {
        // Per invariant, the seeds that broke it: a twin's named invariant apart from the
        // collateral ones (the first finding of a seed may be another invariant).
        // A simulator twin's named invariant, or a validation twin's (TraceValidation).
        let named = ending.twin.and_then(|twin| {
            twin.expected(Layer::Sim)
                .or_else(|| twin.expected(Layer::Validation))
        });
        let broken: Vec<String> = totals
            .broken
            .iter()
            .map(|(invariant, count)| {
                let mark = if Some(*invariant) == named {
                    " (named)"
                } else {
                    ""
                };
                format!("{invariant}={count}{mark}")
            })
            .collect();
        lines.push(format!(
            "  seeds breaking each invariant: {}",
            broken.join(" ")
        ));
    }
    if let Some(why) = ending.stopped {
        lines.push(format!(
            "  {why} after {} of {} seeds",
            totals.seeds, ending.seeds
        ));
    }
    if let Some(resume) = &ending.resume {
        lines.push(format!("  resume: {resume}"));
    }
    lines
}
