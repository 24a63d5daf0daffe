//! Elections after a heal: every election period gets a freshly drawn timeout, so the voters do not
//! campaign in lockstep forever (a regression: with a timeout drawn once per boot, seeds 3612 and
//! 7550 of the AckBeforeSync control sweep went from term 3 to 47 without a leader and failed
//! Convergence).

use felix_core::TwinName;
use felix_sim::{run, RunSpec};

/// The two seeds that livelocked converge now, every rule on (the control runs of the
/// AckBeforeSync twin's knobs).
#[test]
fn the_seeds_that_livelocked_elect_a_leader_and_converge() {
    for seed in [3612, 7550] {
        let mut spec = RunSpec::new(seed, Some(TwinName::AckBeforeSync));
        spec.control = true;
        let report = run(&spec);
        assert!(
            report.violations.is_empty(),
            "seed {seed}: {:?}",
            report.violations
        );
    }
}
