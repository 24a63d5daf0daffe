//! The unit tests of `felix_sim::search::parallel` (sim/src/search/parallel.rs).

use felix_sim::RunSpec;

use felix_sim::search::parallel::*;

/// The seeds and trace hashes `visit` sees with `jobs` threads, stopping after `keep`.
fn seen(jobs: usize, keep: usize) -> Vec<(u64, u64)> {
    let mut seen = Vec::new();
    let spec = |index: u64| (index < 12).then(|| RunSpec::new(100 + index, None));
    run_in_order(12, spec, jobs, |report| {
        seen.push((report.seed, report.trace_hash));
        seen.len() < keep
    });
    seen
}

/// One thread or four, the reports come in index order with the same runs; a stop leaves the
/// same prefix.
#[test]
fn order_does_not_depend_on_jobs() {
    let alone = seen(1, usize::MAX);
    let seeds: Vec<u64> = alone.iter().map(|&(seed, _)| seed).collect();
    assert_eq!(seeds, (100..112).collect::<Vec<u64>>());
    assert_eq!(seen(4, usize::MAX), alone);
    assert_eq!(seen(4, 5), alone[..5].to_vec());
    assert_eq!(seen(1, 5), alone[..5].to_vec());
}
