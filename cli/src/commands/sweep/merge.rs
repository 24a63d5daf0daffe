//! `felix sweep merge FILE...`: the `--json` outputs of a sweep's shards as the one sweep.
//!
//! A shard (`--shard K/N`) runs every Nth seed of the range from its Kth, so the unsharded order
//! interleaves the shards: seed `start + j` is position `j / N` of shard `j % N + 1`. Each shard's
//! summary carries its range, its K and N, the flags that decide which seeds fail, and every seed's
//! trace hash in its order; the merge checks that the files are exactly the N shards of one sweep
//! (each K once, each complete), recomputes the sweep hash over the interleaved trace hashes, adds
//! the counts, and prints what the unsharded `felix sweep --json` prints: the failing seeds' lines
//! in seed order, then the summary. Its `seconds` and `jobs` are the shards' sums and its rates are
//! worked out over those seconds (wall time is no property of the sweep).

use crate::args::{parse_seed_range, Seeds};
use crate::commands::sweep::summary::{summary_json, Ending, Totals};
use crate::exit;
use crate::output;
use clap::Args;
use felix_core::rules::{Invariant, TwinName};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Arguments of `felix sweep merge`.
#[derive(Args, Debug)]
pub struct MergeArgs {
    /// The shards' outputs of `felix sweep --json --shard K/N` (every K of one N, any order).
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Exit 1 unless the merged sweep reached every behaviour the coverage catalog allows.
    #[arg(long)]
    pub require_coverage: bool,
}

/// One shard's output, read.
struct Shard {
    path: String,
    /// The failing seeds' lines, as printed, by seed.
    failing: Vec<(u64, String)>,
    summary: Value,
    k: u64,
    n: u64,
    hashes: Vec<u64>,
}

fn read(path: &PathBuf) -> Result<Shard, String> {
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|error| format!("{name}: {error}"))?;
    let mut failing = Vec::new();
    let mut summary = None;
    for (number, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let value: Value = serde_json::from_str(line).map_err(|error| {
            format!(
                "{name}:{}: not a line of `felix sweep --json`: {error}",
                number + 1
            )
        })?;
        if summary.is_some() {
            return Err(format!("{name}:{}: a line after the summary", number + 1));
        }
        if value.get("sweep_hash").is_some() {
            summary = Some(value);
        } else if let Some(seed) = value.get("seed").and_then(Value::as_u64) {
            failing.push((seed, line.to_string()));
        } else {
            return Err(format!(
                "{name}:{}: neither a failing seed nor a summary",
                number + 1
            ));
        }
    }
    let summary =
        summary.ok_or_else(|| format!("{name}: no summary line (was the shard cut off?)"))?;
    let shard = summary.get("shard").and_then(Value::as_array);
    let (k, n) = match shard.map(|pair| {
        (
            pair.first().and_then(Value::as_u64),
            pair.get(1).and_then(Value::as_u64),
        )
    }) {
        Some((Some(k), Some(n))) if k >= 1 && k <= n => (k, n),
        _ => {
            return Err(format!(
                "{name}: the summary names no shard (a felix too old to merge, or a guided sweep?)"
            ))
        }
    };
    let hex = summary
        .get("trace_hashes")
        .and_then(Value::as_str)
        .unwrap_or("");
    if hex.len() % 16 != 0 {
        return Err(format!(
            "{name}: trace_hashes is not a run of 16-digit hashes"
        ));
    }
    let hashes = (0..hex.len() / 16)
        .map(|at| u64::from_str_radix(&hex[at * 16..at * 16 + 16], 16))
        .collect::<Result<Vec<u64>, _>>()
        .map_err(|_| format!("{name}: trace_hashes holds a non-hex digit"))?;
    Ok(Shard {
        path: name,
        failing,
        summary,
        k,
        n,
        hashes,
    })
}

/// The fields every shard of one sweep shares.
const SAME: [&str; 5] = ["range", "twin", "control", "validate", "invariant"];

fn count(value: &Value, key: &str) -> u64 {
    value.get(key).and_then(Value::as_u64).unwrap_or(0)
}

/// Name -> count maps summed over the shards.
fn sum_maps(shards: &[Shard], key: &str) -> BTreeMap<String, u64> {
    let mut sum = BTreeMap::new();
    for shard in shards {
        if let Some(map) = shard.summary.get(key).and_then(Value::as_object) {
            for (name, value) in map {
                *sum.entry(name.clone()).or_insert(0) += value.as_u64().unwrap_or(0);
            }
        }
    }
    sum
}

fn by_invariant(counts: BTreeMap<String, u64>) -> Result<BTreeMap<Invariant, u64>, String> {
    counts
        .into_iter()
        .map(|(name, count)| {
            Invariant::parse(&name)
                .map(|invariant| (invariant, count))
                .ok_or_else(|| format!("unknown invariant {name:?} in a summary"))
        })
        .collect()
}

/// Checks the shards are the N shards of one complete sweep, in K order.
fn check(mut shards: Vec<Shard>) -> Result<(Vec<Shard>, std::ops::Range<u64>), String> {
    shards.sort_by_key(|shard| shard.k);
    let first = &shards[0];
    for field in SAME {
        if let Some(other) = shards
            .iter()
            .find(|s| s.summary.get(field) != first.summary.get(field))
        {
            return Err(format!(
                "{} and {} are not shards of one sweep: their {field} differ",
                first.path, other.path
            ));
        }
    }
    let n = first.n;
    let ks: Vec<u64> = shards.iter().map(|shard| shard.k).collect();
    if shards.iter().any(|shard| shard.n != n) || ks != (1..=n).collect::<Vec<u64>>() {
        return Err(format!(
            "need each shard K/{n} exactly once (K = 1..{n}); got K = {ks:?} of N = {:?}",
            shards.iter().map(|s| s.n).collect::<Vec<_>>()
        ));
    }
    let range_text = first
        .summary
        .get("range")
        .and_then(Value::as_str)
        .unwrap_or("");
    let range = parse_seed_range(range_text).map_err(|error| format!("{}: {error}", first.path))?;
    for shard in &shards {
        if let Some(why) = shard.summary.get("stopped").and_then(Value::as_str) {
            return Err(format!(
                "{}: shard {}/{n} stopped early ({why}): finish it first",
                shard.path, shard.k
            ));
        }
        let expected = Seeds::sharded(&range, shard.k, n).count;
        if count(&shard.summary, "seeds") != expected || shard.hashes.len() as u64 != expected {
            return Err(format!(
                "{}: shard {}/{n} of {range_text} has {expected} seeds, its summary says {} with {} trace hashes",
                shard.path, shard.k, count(&shard.summary, "seeds"), shard.hashes.len()
            ));
        }
    }
    Ok((shards, range))
}

fn merge(shards: &[Shard], range: &std::ops::Range<u64>) -> Result<Totals, String> {
    let n = shards.len() as u64;
    let mut totals = Totals::default();
    for j in 0..range.end - range.start {
        let hash = shards[(j % n) as usize].hashes[(j / n) as usize];
        totals.sweep_hash.add(hash);
        totals.trace_hashes.push(hash);
    }
    for shard in shards {
        totals.seeds += count(&shard.summary, "seeds");
        totals.failed += count(&shard.summary, "failed");
        totals.events += count(&shard.summary, "events");
        totals.steps += count(&shard.summary, "trace_lines");
        totals.simulated_micros += u128::from(count(&shard.summary, "simulated_micros"));
    }
    for (name, count) in sum_maps(shards, "coverage") {
        (totals.coverage.insert(&name, count))
            .map_err(|message| format!("{message} in a summary's coverage"))?;
    }
    totals.violations = by_invariant(sum_maps(shards, "violations"))?;
    totals.broken = by_invariant(sum_maps(shards, "broken"))?;
    Ok(totals)
}

pub fn run(args: MergeArgs) -> u8 {
    let shards = match args
        .files
        .iter()
        .map(read)
        .collect::<Result<Vec<Shard>, String>>()
    {
        Ok(shards) => shards,
        Err(message) => return exit::bad_input(message),
    };
    let (shards, range) = match check(shards) {
        Ok(checked) => checked,
        Err(message) => return exit::bad_input(message),
    };
    let totals = match merge(&shards, &range) {
        Ok(totals) => totals,
        Err(message) => return exit::bad_input(message),
    };
    let first = &shards[0].summary;
    let text = |key: &str| first.get(key).and_then(Value::as_str).map(str::to_string);
    let twin = text("twin").and_then(|name| TwinName::parse(&name));
    let invariant = text("invariant").and_then(|name| Invariant::parse(&name));
    let seconds: f64 = shards
        .iter()
        .map(|shard| {
            shard
                .summary
                .get("seconds")
                .and_then(Value::as_f64)
                .unwrap_or(0.0)
        })
        .sum();
    let range_text = text("range").unwrap_or_default();
    let control = first
        .get("control")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let ending = Ending {
        seconds,
        jobs: shards
            .iter()
            .map(|shard| count(&shard.summary, "jobs") as usize)
            .sum(),
        twin,
        control,
        shard: (1, 1),
        seeds: totals.seeds,
        stopped: None,
        resume: None,
        range: &range_text,
        validate: first
            .get("validate")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        invariant,
    };
    let mut failing: Vec<&(u64, String)> = shards.iter().flat_map(|shard| &shard.failing).collect();
    failing.sort_by_key(|(seed, _)| *seed);
    for (_, line) in failing {
        output::line(line);
    }
    output::line(&summary_json(&totals, &ending).to_string());
    let covered = || {
        crate::commands::sweep::coverage::Verdict::of(
            &totals.coverage,
            &crate::commands::sweep::coverage::rules_of(twin, control),
        )
        .complete()
    };
    if totals.failed > 0 || (args.require_coverage && !covered()) {
        exit::VIOLATION
    } else {
        exit::OK
    }
}
