//! The conformance judge's bite: a divergence no audit sees (the validation layer's EarlyFloor
//! twin: a node applies the floor of the trim right after its commit index one walk step early)
//! is caught by the model paths as a `Conformance` divergence on a `floor`, and the same cover
//! with the rule on conforms.

use felix_core::rules::TwinName;
use felix_core::Rules;
use felix_model::config;
use felix_validate::conform::walk::cover;

#[test]
fn only_conformance_catches_an_early_floor() {
    let crash = config::lookup("Crash").expect("the Crash configuration");
    let clean = cover(crash, Rules::default(), 200, 0).expect("a small graph");
    assert!(clean.failed.is_empty(), "{:?}", clean.failed.first());
    assert_eq!(clean.covered.len(), clean.total.len());

    let planted = cover(crash, Rules::twin(TwinName::EarlyFloor), 200, 0).expect("a small graph");
    assert!(!planted.failed.is_empty(), "the early floor went unseen");
    for failed in &planted.failed {
        assert!(
            failed.run.violations.is_empty(),
            "an audit saw the early floor: {:?}",
            failed.run.violations
        );
        let divergence = failed.run.divergence.as_ref().expect("a divergence");
        assert!(
            divergence.what.starts_with("floor["),
            "{}",
            divergence.describe()
        );
    }
}
