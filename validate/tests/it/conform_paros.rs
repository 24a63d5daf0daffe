//! ParosTrimJump paths on the core: the cover of the main configuration conforms with every rule
//! on; the same cover catches a planted slip no audit sees (the validation layer's EarlyFence
//! twin: a node's walk shows a fence's new writer one step early, restored before anything reads
//! it) as a `Conformance` divergence on a `writer`; and every twin's row is as
//! `felix twins --conform` reports it.

use felix_core::rules::{Invariant, TwinName};
use felix_core::Rules;
use felix_model::paros::spec::{Action, ParosTrimJump};
use felix_model::spec::Spec;
use felix_validate::conform::spec::Paros;
use felix_validate::conform::twins::conform_paros_twin;
use felix_validate::conform::walk::cover_of;
use felix_validate::conform::Segments;

use super::support;

#[test]
fn only_conformance_catches_an_early_fence() {
    let main = ParosTrimJump::main_config();
    for segments in [Segments::Model, Segments::Never] {
        let spec = |rules| Paros {
            config: main,
            rules,
            segments,
        };
        let context = format!("{segments:?}");
        support::assert_only_conformance_catches(spec, TwinName::EarlyFence, "writer", &context);
    }
}

/// The never-compacting core's cover conforms too, and the two covers together leave out only
/// edges with a named reason; with crashes too (a crash restarts a node from its disk).
#[test]
fn both_covers_conform() {
    for paros in [
        ParosTrimJump::main_config(),
        ParosTrimJump::lookup("Replica").expect("Replica"),
        ParosTrimJump::lookup("Crashes").expect("Crashes"),
    ] {
        for segments in [Segments::Model, Segments::Never] {
            let spec = Paros {
                config: paros,
                rules: Rules::default(),
                segments,
            };
            let found = cover_of(spec, 200, 0).expect("a small graph");
            assert!(found.failed.is_empty(), "{:?}", found.failed.first());
            assert_eq!(found.covered.len(), found.total.len(), "{}", paros.name);
            assert!(found.left_out.values().all(|why| !why.is_empty()));
        }
    }
}

/// Every twin breaks its invariant on the core with no divergence and holds with every rule on;
/// AckBeforeSync's path needs a crash that loses a follower's unsynced copy, and with every rule on
/// the model refuses that crash (nothing is volatile, so it would lose nothing).
#[test]
fn paros_twins_on_the_core() {
    for twin in ParosTrimJump::twins() {
        let row = conform_paros_twin(twin).expect("a counterexample");
        assert!(row.control_ok(), "{}: every rule on", twin.name);
        let with_twin = row
            .with_twin
            .as_ref()
            .expect("every Paros twin has a core switch");
        assert_eq!(row.twin_ok(), Some(true), "{}", twin.name);
        assert!(row.gap.is_none(), "{}", twin.name);
        if row.twin == TwinName::AckBeforeSync {
            assert!(
                row.path.contains(&Action::Crash(2)),
                "{}: {:?}",
                twin.name,
                row.path
            );
            assert!(with_twin.broken().contains(&Invariant::AckedWritesKept));
            assert_eq!(row.every_rule_on.actions_run, 2, "{}", twin.name);
        }
    }
}
