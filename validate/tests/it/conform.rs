//! The conformance judge's bite: a divergence no audit sees (the validation layer's EarlyFloor
//! twin: a node applies the floor of the trim right after its commit index one walk step early)
//! is caught by the model paths as a `Conformance` divergence on a `floor`, and the same cover
//! with the rule on conforms.

use felix_core::rules::TwinName;
use felix_core::Rules;
use felix_model::head_trim::spec::FelixHeadTrim;
use felix_model::spec::Spec;
use felix_validate::conform::spec::HeadTrim;
use felix_validate::conform::Segments;

use super::support;

#[test]
fn only_conformance_catches_an_early_floor() {
    let crash = FelixHeadTrim::lookup("Crash").expect("the Crash configuration");
    let spec = |rules| HeadTrim {
        config: crash,
        rules,
        segments: Segments::Never,
    };
    support::assert_only_conformance_catches(spec, TwinName::EarlyFloor, "floor", crash.name);
}

/// The model's own shortest Retention counterexample retains the segment holding the last
/// record, which the core never does: on the core it stops there, a gap. The shortest
/// counterexample the core can follow is longer and breaks StaleTrimRefused on the core with the
/// twin. VisibleTrims has none in its own bounds, and its row takes one under another
/// configuration's bounds, which breaks StaleTrimRefused too.
#[test]
fn twins_run_counterexamples_the_core_can_follow() {
    use felix_core::rules::Invariant;
    use felix_model::check::shortest_counterexample_actions;
    use felix_validate::conform::run_path;
    use felix_validate::conform::search::{shortest_followable, Found};
    use felix_validate::conform::spec::RETAIN_LAST;
    use felix_validate::conform::twins::conform_twin;

    let retention = FelixHeadTrim::lookup("Retention").expect("the Retention twin");
    let invariant = Invariant::StaleTrimRefused;
    let model_path = shortest_counterexample_actions(retention, invariant).expect("a path");
    let stopped = run_path(retention, Rules::twin(TwinName::Retention), &model_path);
    assert_eq!(stopped.gap.map(|(_, _, why)| why), Some(RETAIN_LAST));
    let row = conform_twin(retention).expect("a row");
    assert!(row.path.len() > model_path.len(), "{:?}", row.path);
    assert_eq!(row.twin_ok(), Some(true));
    assert!(row.control_ok());

    assert_eq!(row.bounds_of, None);

    // VisibleTrims' own bounds (Steady's: one leader, no noop) hold no path the core can follow,
    // so the row takes the shortest under a passing configuration's bounds, with the same switch.
    let visible_config = FelixHeadTrim::lookup("VisibleTrims").expect("VisibleTrims");
    let own = shortest_followable(
        HeadTrim {
            config: visible_config,
            rules: Rules::twin(TwinName::VisibleTrims),
            segments: Segments::Model,
        },
        invariant,
    );
    assert!(matches!(own, Found::None(_)), "{own:?}");
    let visible = conform_twin(visible_config).expect("a row");
    assert_eq!(visible.gap, None);
    let other = visible.bounds_of.expect("another configuration's bounds");
    assert_eq!(FelixHeadTrim::lookup(other).map(|c| c.twin), Some(None));
    assert_eq!(visible.twin_ok(), Some(true), "{:?}", visible.with_twin);
    assert!(visible.control_ok());
    let twin_half = visible.with_twin.expect("a core switch");
    assert!(twin_half.broken().contains(&invariant));
}
