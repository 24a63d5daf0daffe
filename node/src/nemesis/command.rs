//! The `felix nemesis` command: its arguments, their checks, and what it prints about a run
//! (the run itself is `super::run`).

use super::{run, schedule, NemesisConfig, NEMESIS_NODES_MAX, NEMESIS_REPLICAS_MAX, TIME_MAX};
use clap::Args;
use felix_core::rules::{Layer, TwinName};
use std::path::PathBuf;
use std::time::Duration;

/// Arguments of `felix nemesis`.
#[derive(Args, Debug, Clone)]
pub struct NemesisArgs {
    /// Voting nodes.
    #[arg(long, default_value_t = 3)]
    pub nodes: usize,
    /// Non-voting replicas besides the voters (faults reach them too).
    #[arg(long, default_value_t = 0)]
    pub replicas: usize,
    /// How long faults are injected (e.g. 60s, 2m, 500ms).
    #[arg(long, default_value = "60s")]
    pub time: String,
    /// Seed of the fault schedule (default: drawn from the OS, and printed).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Run every node and client with this twin's rule off.
    #[arg(long)]
    pub twin: Option<String>,
    /// Directory for the run (stores, logs, trace); default: a fresh one under the system's
    /// temporary directory, removed when the run passes.
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// Where to write the trace (default: DIR/trace.jsonl).
    #[arg(long)]
    pub trace: Option<PathBuf>,
    /// The clients: `felixd` (lease holders and readers) or `paros` (checkpoint owners, folders
    /// and readers).
    #[arg(long, default_value = "felixd")]
    pub workload: String,
}

/// Parses `60s`, `2m`, `1500ms`, `1h`.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let (number, unit) = match text.find(|c: char| !c.is_ascii_digit()) {
        Some(at) => text.split_at(at),
        None => (text, "s"),
    };
    let value: u64 = number
        .parse()
        .map_err(|_| format!("{text:?} is not a duration such as 60s, 2m or 500ms"))?;
    let duration = match unit {
        "ms" => Duration::from_millis(value),
        "s" => Duration::from_secs(value),
        "m" => Duration::from_secs(value.saturating_mul(60)),
        "h" => Duration::from_secs(value.saturating_mul(3600)),
        _ => return Err(format!("{text:?}: the unit must be ms, s, m or h")),
    };
    Ok(duration)
}

pub fn run_nemesis(args: NemesisArgs) -> u8 {
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(error) => return crate::bad_input(format!("cannot find the felix binary: {error}")),
    };
    let config = match config_from_args(&args, exe) {
        Ok(config) => config,
        Err(message) => return crate::bad_input(message),
    };
    let seed = config.seed;
    let keep_dir = args.dir.is_some();
    let power_loss = schedule::draw_power_loss(seed, config.nodes + config.replicas);
    out!(
        "nemesis: {} nodes{}, {:?} of faults, seed {seed}{}; dir {} (real processes: not deterministic, the seed fixes the fault schedule only)",
        config.nodes,
        if config.replicas > 0 {
            format!(" and {} replicas", config.replicas)
        } else {
            String::new()
        },
        config.time,
        config
            .twin
            .map(|twin| format!(", twin {}", twin.name()))
            .unwrap_or_default(),
        config.dir.display()
    );
    out!(
        "nemesis: power loss (group commit window per node, 0 = syncs at once): {}",
        power_loss
            .iter()
            .enumerate()
            .map(|(index, window)| format!("n{} {window}ms", index + 1))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let outcome = match run(&config) {
        Ok(outcome) => outcome,
        Err(message) => return crate::bad_input(message),
    };
    for line in &outcome.summary {
        out!("{line}");
    }
    let rerun = format!(
        "felix nemesis --nodes {}{}{} --time {} --seed {seed}{}",
        config.nodes,
        if config.replicas > 0 {
            format!(" --replicas {}", config.replicas)
        } else {
            String::new()
        },
        if config.paros {
            " --workload paros"
        } else {
            ""
        },
        args.time,
        config
            .twin
            .map(|twin| format!(" --twin {}", twin.name()))
            .unwrap_or_default()
    );
    if outcome.passed() {
        if let Some(twin) = config.twin {
            out!(
                "twin {}: NOT caught (expected {}; a real run is not deterministic: try a longer --time or another --seed)",
                twin.name(),
                twin.must_break(Layer::Sim)
            );
        }
        out!(
            "nemesis: every invariant held (trace {})",
            outcome.trace.display()
        );
        if !keep_dir && args.trace.is_none() {
            let _ = std::fs::remove_dir_all(&config.dir);
        }
        return 0;
    }
    print_findings(&config, &outcome);
    out!(
        "nemesis: FAILED; kept {} (trace {}); re-run the schedule: {rerun}",
        config.dir.display(),
        outcome.trace.display()
    );
    1
}

/// What a failing run found: its violations, the nodes that exited on their own, and for a
/// twin when the invariant it must break was first broken.
fn print_findings(config: &NemesisConfig, outcome: &super::NemesisOutcome) {
    for violation in &outcome.report.violations {
        out!("VIOLATION {violation}");
    }
    for (node, code) in &outcome.unexpected_exits {
        out!(
            "node {node} exited on its own with code {code} (see its log in {})",
            config.dir.display()
        );
    }
    if let (Some(twin), Some(first)) = (config.twin, outcome.report.first()) {
        let expected = twin.must_break(Layer::Sim);
        let caught = match outcome.first_micros.get(&expected) {
            Some(micros) => format!("caught at {:.3} s", *micros as f64 / 1e6),
            None => "NOT caught".to_string(),
        };
        out!(
            "twin {}: first violation {} at {:.3} s into the run (expected {expected}: {caught})",
            twin.name(),
            first.invariant,
            outcome.first_violation_micros.unwrap_or(0) as f64 / 1e6,
        );
    }
}

/// Checks the arguments.
pub fn config_from_args(args: &NemesisArgs, exe: PathBuf) -> Result<NemesisConfig, String> {
    if args.nodes == 0 || args.nodes > NEMESIS_NODES_MAX {
        return Err(format!("--nodes must be between 1 and {NEMESIS_NODES_MAX}"));
    }
    if args.replicas > NEMESIS_REPLICAS_MAX {
        return Err(format!("--replicas must be at most {NEMESIS_REPLICAS_MAX}"));
    }
    let paros = match args.workload.as_str() {
        "felixd" => false,
        "paros" => true,
        other => return Err(format!("--workload {other:?}: felixd or paros")),
    };
    let time = parse_duration(&args.time).map_err(|error| format!("--time: {error}"))?;
    if time > TIME_MAX {
        return Err("--time: at most 24h".to_string());
    }
    let twin = match &args.twin {
        None => None,
        Some(name) => Some(
            TwinName::parse_in(Layer::Sim, name)
                .ok_or_else(|| format!("--twin: no twin is named {name:?}"))?,
        ),
    };
    let seed = args.seed.unwrap_or_else(|| {
        use rand::RngExt;
        rand::rng().random_range(0..1_000_000u64)
    });
    let dir = match &args.dir {
        Some(dir) => dir.clone(),
        None => std::env::temp_dir().join(format!("felix-nemesis-{}-{seed}", std::process::id())),
    };
    if dir.exists()
        && std::fs::read_dir(&dir)
            .map(|mut d| d.next().is_some())
            .unwrap_or(true)
    {
        return Err(format!("--dir {}: must be empty or absent", dir.display()));
    }
    std::fs::create_dir_all(&dir).map_err(|error| format!("{}: {error}", dir.display()))?;
    let trace = args
        .trace
        .clone()
        .unwrap_or_else(|| dir.join("trace.jsonl"));
    Ok(NemesisConfig {
        exe,
        nodes: args.nodes,
        replicas: args.replicas,
        time,
        seed,
        twin,
        dir,
        trace,
        holders: 2,
        readers: 2,
        paros,
    })
}
