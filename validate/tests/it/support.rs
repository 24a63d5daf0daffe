//! What the conformance tests of both specs share, generic over `conform::spec::Spec`.

use felix_core::rules::TwinName;
use felix_core::Rules;
use felix_validate::conform::spec::Spec;
use felix_validate::conform::walk::cover_of;
use std::fmt::Debug;

/// Asserts a validation-layer twin (a slip no audit sees) is caught by the model paths alone:
/// the cover of `spec` with every rule on conforms on every edge, and with `twin` planted some
/// path fails, every failure a `Conformance` divergence on `variable` (`floor`, `writer`) with
/// no audit violation. `context` names the case in a failure.
pub fn assert_only_conformance_catches<S>(
    spec: impl Fn(Rules) -> S,
    twin: TwinName,
    variable: &str,
    context: &str,
) where
    S: Spec<Action: Debug, State: Debug>,
{
    let clean = cover_of(spec(Rules::default()), 200, 0).expect("a small graph");
    assert!(
        clean.failed.is_empty(),
        "{context}: {:?}",
        clean.failed.first()
    );
    assert_eq!(clean.covered.len(), clean.total.len(), "{context}");

    let planted = cover_of(spec(Rules::twin(twin)), 200, 0).expect("a small graph");
    assert!(
        !planted.failed.is_empty(),
        "{context}: {} went unseen",
        twin.name()
    );
    for failed in &planted.failed {
        assert!(
            failed.run.violations.is_empty(),
            "{context}: an audit saw {}: {:?}",
            twin.name(),
            failed.run.violations
        );
        let divergence = failed.run.divergence.as_ref().expect("a divergence");
        assert!(
            divergence.what.starts_with(&format!("{variable}[")),
            "{context}: {}",
            divergence.describe()
        );
    }
}
