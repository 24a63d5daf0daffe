//! Runs every scripted scenario (`scenarios/**/*.txt`) against the real core and fails on any
//! mismatch with its golden expectations, printing the diff (`felix scenario --rewrite` updates
//! them). Also holds the scenario set to its contract: one file per twin in `scenarios/twins/`.

use felix_core::rules::{Layer, TwinName};
use felix_sim::script;
use std::path::PathBuf;

fn scenarios_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("scenarios")
}

/// Every scenario file runs and prints exactly what its expectations say.
#[test]
fn every_scenario_matches_its_expectations() {
    let files = script::collect(&[scenarios_dir()]).expect("the scenarios directory is readable");
    assert!(!files.is_empty(), "no scenario files found");
    let mut failures = String::new();
    for file in &files {
        match script::run_file(file) {
            Ok(outcome) if outcome.passed() => {}
            Ok(outcome) => failures.push_str(&outcome.diff()),
            Err(error) => failures.push_str(&format!("{error}\n")),
        }
    }
    assert!(
        failures.is_empty(),
        "scenario mismatches (run `felix scenario --rewrite` only if you understand them):\n{failures}"
    );
}

/// Whether `twin` must break Progress, which the scripted driver cannot judge: Progress needs
/// every event's simulated time and bounds worked out from a seeded run's knobs
/// (`felix_sim::judge::progress_bounds`), and a scenario has neither; its twin (LazyCatchUp) is
/// held by `felix twins --sim` and `tests/it/progress.rs` instead.
pub fn judged_in_time(twin: TwinName) -> bool {
    twin.must_break(Layer::Sim) == felix_core::rules::Invariant::Progress
}

/// Every simulator twin has its scenario, and each one's audit names the twin's invariant.
#[test]
fn every_twin_has_a_scenario_naming_its_invariant() {
    for twin in TwinName::in_layer(Layer::Sim).filter(|twin| !judged_in_time(*twin)) {
        let path = scenarios_dir()
            .join("twins")
            .join(format!("{}.txt", twin.name()));
        let outcome = script::run_file(&path).unwrap_or_else(|error| panic!("{error}"));
        let broken = outcome.blocks.iter().any(|block| {
            block.command.starts_with("audit")
                && block
                    .actual
                    .iter()
                    .any(|line| line.starts_with(&format!("{}:", twin.must_break(Layer::Sim))))
        });
        assert!(
            broken,
            "{}: no audit in the scenario reports {}",
            path.display(),
            twin.must_break(Layer::Sim)
        );
        let passing = outcome.blocks.iter().any(|block| {
            block.command.starts_with("audit")
                && block.actual.first().map(String::as_str) == Some("ok")
        });
        assert!(
            passing,
            "{}: no audit shows the same script passing with the rule on",
            path.display()
        );
    }
}

/// The runner is deterministic: the same file gives the same output, line for line.
#[test]
fn a_scenario_runs_the_same_twice() {
    let path = scenarios_dir().join("trim-hid-the-fence.txt");
    let first = script::run_file(&path).expect("runs");
    let second = script::run_file(&path).expect("runs");
    assert_eq!(first.blocks, second.blocks);
}
