//! Whole-run properties of the simulator: determinism, a clean default sweep, a failing run's
//! summary. That every twin is caught by its invariant within 1,000 biased seeds, its control run
//! clean, is `felix twins`'s check (README.md), which the test command runs as printed
//! (`scripts/readme_test.py`); the unbiased gate, `felix twins --sim --unbiased`, holds the same
//! twins to the default swarm.

use felix_audits::{Counter, Counts};
use felix_core::rules::TwinName;
use felix_sim::{run, RunSpec};

/// The same seed run twice gives the same trace, event for event, whether or not the lines are
/// kept; different seeds give different traces.
#[test]
fn same_seed_same_trace_hash() {
    for seed in [0, 1, 7, 42, 1234] {
        let first = run(&RunSpec::new(seed, None));
        let mut kept = RunSpec::new(seed, None);
        kept.keep_trace = true;
        let second = run(&kept);
        assert_eq!(first.trace_hash, second.trace_hash, "seed {seed}");
        assert_eq!(first.events, second.events, "seed {seed}");
        assert_eq!(first.steps, second.steps, "seed {seed}");
        let lines = second.trace_lines.unwrap_or_default();
        assert_eq!(lines.len() as u64, second.steps);
        let third = run(&kept);
        assert_eq!(Some(lines), third.trace_lines, "seed {seed}: lines differ");
    }
    let hashes: std::collections::BTreeSet<u64> = (0..20)
        .map(|seed| run(&RunSpec::new(seed, None)).trace_hash)
        .collect();
    assert_eq!(hashes.len(), 20, "distinct seeds collided");
}

/// Runs on other threads give the same hashes as runs on this one (no thread timing, no
/// randomly keyed hashing in a run).
#[test]
fn threads_do_not_change_runs() {
    let here: Vec<u64> = (100..108)
        .map(|seed| run(&RunSpec::new(seed, None)).trace_hash)
        .collect();
    let there: Vec<u64> = std::thread::scope(|scope| {
        let handles: Vec<_> = (100..108)
            .map(|seed| scope.spawn(move || run(&RunSpec::new(seed, None)).trace_hash))
            .collect();
        handles
            .into_iter()
            .map(|handle| handle.join().unwrap_or(0))
            .collect()
    });
    assert_eq!(here, there);
}

/// A run reports every counter of the audits and every probe, zeros included, and a simulator
/// counter only once it counted it: a run's summary lists what is present, so a zero the world
/// reported would change it.
#[test]
fn a_run_reports_the_audits_counters_always_and_the_simulators_once_counted() {
    use felix_audits::coverage::Origin;
    let report = run(&RunSpec::new(0, None));
    for counter in Counter::ALL {
        match counter.entry().origin {
            Origin::Counter | Origin::Probe => {
                assert!(report.coverage.get(counter).is_some(), "{counter}")
            }
            Origin::Sim => assert_ne!(report.coverage.get(counter), Some(0), "{counter}"),
        }
    }
    assert!(report.coverage.get(Counter::Crashes).is_some());
    assert_eq!(report.coverage.get(Counter::MessagesDropped), None);
    assert_eq!(report.coverage.get(Counter::RetentionDeleted), Some(0));
}

/// With every rule on, a small sweep breaks no invariant and is not vacuous: the paths the
/// invariants guard are taken, and every run reaches the end of its liveness phase.
#[test]
fn default_sweep_holds_every_invariant() {
    let mut coverage = Counts::default();
    for seed in 0..60 {
        let report = run(&RunSpec::new(seed, None));
        assert!(
            report.violations.is_empty(),
            "seed {seed}: {:?}",
            report.violations
        );
        coverage.sum(&report.coverage);
    }
    for counter in [
        Counter::ReadBelowTrimRefused,
        Counter::Crashes,
        Counter::LeaseMoves,
        Counter::Pauses,
        Counter::Partitions,
    ] {
        assert!(
            coverage.count(counter) > 0,
            "{counter} never happened: {coverage:?}"
        );
    }
}

/// A failing run's summary names the violation, its step and the events leading to it.
#[test]
fn failing_summary_names_violation_and_context() {
    let seed = (0..300u64)
        .find(|&seed| {
            !run(&RunSpec::new(seed, Some(TwinName::TailFromRefusal)))
                .violations
                .is_empty()
        })
        .unwrap_or(0);
    let mut spec = RunSpec::new(seed, Some(TwinName::TailFromRefusal));
    spec.keep_trace = true;
    let report = run(&spec);
    let summary = report.summary();
    let first = &report.violations[0];
    assert!(
        summary.contains(&format!("VIOLATION {}", first.invariant)),
        "{summary}"
    );
    assert!(summary.contains("events leading to"), "{summary}");
    let step = first.step.unwrap_or(u64::MAX);
    assert!(summary.contains(&format!("\n  {step:>6}  ")), "{summary}");
}
