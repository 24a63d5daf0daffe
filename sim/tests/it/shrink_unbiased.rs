//! Proves that the first unbiased failing seeds of the twins in `UNBIASED` shrink to reproducing
//! scenarios, as `felix shrink --seed S --twin T --unbiased` makes them from the replay command
//! `felix twins --sim --unbiased` prints.
//!
//! No seed is pinned: each twin's seed is the first of 0, 1, 2, ... whose run under the default
//! swarm's knobs (no per-twin bias) breaks the twin's invariant, as `felix twins --sim
//! --unbiased` finds it. The scenario is checked as `shrink::shrunk_scenario` checks it: it
//! passes as written, its control's audit is `ok`, its twin's names the invariant, and it is at
//! most twice the hand-written `scenarios/twins/<Twin>.txt`.

use super::shrink::{commands, shrunk_scenario_of};
use felix_core::rules::{Layer, TwinName};
use felix_sim::search::shrink::{attempt_for, Base, Target};
use felix_sim::seeded::knobs::Knobs;

/// The twins held here: every simulator twin the scripted driver can judge (all but LazyCatchUp,
/// a Progress twin), each from its first unbiased failing seed, within twice the hand-written
/// scenario. VisibleTrims' run needed the prober left out of the translation; VoteBeforePersist's
/// and AckBeforeSync's need the world's disks' syncs (`cluster ... syncs=eager`: a sync covers only
/// the ops written before it started); JumpResetsTerm's the shrinker's coarse-to-fine rounds;
/// NoopSkip's and Retention's (seed 85, which draws the file store) the minimizer's
/// `stabilize hold=X` (a stretch that settled with one client late) and its rounds repeated while
/// they shorten the script; UnconfirmedReads' the schedule's delivery of the request the driver's
/// client has in flight, not the oldest queued copy asking the same; UnfencedTruncate's
/// `checkpoint ... keep` for the runs whose truncate the world's owners skipped (its seed 52 did
/// not shrink before the swarm's later changes changed its run: docs/shrinking.md).
pub(crate) const UNBIASED: [TwinName; 16] = [
    TwinName::VisibleTrims,
    TwinName::VoteBeforePersist,
    TwinName::AckBeforeSync,
    TwinName::HiddenTrims,
    TwinName::Untagged,
    TwinName::NoopSkip,
    TwinName::Retention,
    TwinName::ReadFromEarliest,
    TwinName::TailFromRefusal,
    TwinName::CompactActive,
    TwinName::JumpResetsTerm,
    TwinName::UnfencedTruncate,
    TwinName::FloorPastCommit,
    TwinName::LocalReads,
    TwinName::StaleVotes,
    TwinName::UnconfirmedReads,
];
/// Twins the scripted driver can judge whose first unbiased failing seed does not shrink to a
/// scenario yet, each with what was measured: held out here in the open, printed by the test that
/// checks the list, not dropped in silence. Their hand-written `scenarios/twins/<Twin>.txt` still
/// runs in `scenarios.rs`.
pub(crate) const NOT_SHRUNK: [(TwinName, &str); 1] = [(
    TwinName::StaleSuffix,
    "its first unbiased failing seed is 584, past the 300 scanned here (the only one of 0..1500); \
     its run reaches the violation after 33,860 events, `felix shrink --seed 584 --twin \
     StaleSuffix --unbiased` keeps 33,813 of them in its 500 tries, and neither the 194 \
     translated verbs nor the 25,115 of its schedule break LogTermsMonotone in the scripted \
     driver: replayed in lockstep (the unshrunk run), the driver's nodes first part from the \
     world's at trace line 3,410 of 4,699, their logs earlier (about 8,000 of the world's \
     messages have no exact copy queued in the driver)",
)];
/// Seeds scanned for the first unbiased failing one.
const SCAN: u64 = 300;
/// Tries per shrink: `felix shrink`'s default, so the test holds what the command makes.
const BUDGET: u64 = 500;

/// The first seed whose unbiased run breaks `twin`'s invariant. Each run is judged by that
/// invariant's audit alone, as the shrinker judges its tries (`shrink::attempt_for`): the same
/// run and the same answer as `felix_sim::run` with every audit, without the others' cost (the
/// history checker's above all).
fn first_unbiased_failing_seed(twin: TwinName) -> Option<u64> {
    let invariant = twin.must_break(Layer::Sim);
    (0..SCAN).find(|&seed| {
        let knobs = Knobs::draw(seed, None);
        attempt_for(
            &Base::twin(seed, twin, None),
            &knobs,
            None,
            false,
            None,
            Some(invariant),
        )
        .breaks(invariant)
    })
}

#[test]
fn first_unbiased_failing_seeds_shrink_to_reproducing_scenarios() {
    let failed: Vec<String> = std::thread::scope(|scope| {
        let handles: Vec<_> = UNBIASED
            .into_iter()
            .map(|twin| {
                scope.spawn(move || {
                    let path = format!(
                        "{}/../scenarios/twins/{twin}.txt",
                        env!("CARGO_MANIFEST_DIR")
                    );
                    let hand_text = std::fs::read_to_string(&path).expect("the hand-written one");
                    let hand = commands(&path, &hand_text);
                    let Some(seed) = first_unbiased_failing_seed(twin) else {
                        return Some(format!("{twin}: no unbiased failing seed in 0..{SCAN}"));
                    };
                    let target = Target {
                        knobs: Knobs::draw(seed, None),
                        ..Target::new(seed, twin)
                    };
                    match shrunk_scenario_of(&target, BUDGET, hand) {
                        Ok(f) => {
                            eprintln!(
                                "{twin}: unbiased seed {}, events {} -> {}, {} tries, {} commands (hand-written {})",
                                f.seed, f.events_before, f.events_after, f.tries, f.commands, f.hand
                            );
                            None
                        }
                        Err(why) => Some(format!("{twin}: unbiased seed {seed}: {why}")),
                    }
                })
            })
            .collect();
        handles
            .into_iter()
            .filter_map(|handle| handle.join().expect("a twin's thread"))
            .collect()
    });
    assert!(failed.is_empty(), "{failed:#?}");
}

/// Every simulator twin the scripted driver can judge is in `UNBIASED` or, with what was measured,
/// in `NOT_SHRUNK` (printed), and nothing else is: a new twin must shrink from its first unbiased
/// failing seed too, or say why not. (A Progress twin, LazyCatchUp, has
/// no scripted judge: `scenarios::judged_in_time`.)
#[test]
fn every_twin_the_driver_can_judge_is_held() {
    let judgeable: Vec<TwinName> = TwinName::in_layer(Layer::Sim)
        .filter(|twin| !crate::scenarios::judged_in_time(*twin))
        .collect();
    let not_shrunk: Vec<TwinName> = NOT_SHRUNK.iter().map(|(twin, _)| *twin).collect();
    for (twin, why) in NOT_SHRUNK {
        eprintln!("NOT HELD: {twin} does not shrink from its first unbiased failing seed: {why}");
    }
    let missing: Vec<&TwinName> = (judgeable.iter())
        .filter(|twin| !UNBIASED.contains(twin) && !not_shrunk.contains(twin))
        .collect();
    let extra: Vec<&TwinName> = (UNBIASED.iter().chain(&not_shrunk))
        .filter(|twin| !judgeable.contains(twin))
        .collect();
    let both: Vec<&TwinName> = (UNBIASED.iter())
        .filter(|twin| not_shrunk.contains(twin))
        .collect();
    assert!(
        missing.is_empty() && extra.is_empty() && both.is_empty(),
        "not held: {missing:?}; held but not judgeable: {extra:?}; held and listed as not \
         shrunk: {both:?}"
    );
}

#[test]
fn eager_syncs_is_a_cluster_argument_and_a_bad_value_is_refused() {
    // Proves `cluster ... syncs=eager` (which the schedule translation writes) builds a cluster
    // whose `sync` completes only the sync in flight: a vote request makes n1 write its new term
    // and then its vote, and the first sync makes only the term durable; and that a bad value is
    // a script error (the CLI's exit 2), not a default, as are bad `election=` and `heartbeat=`
    // tick counts (`scenarios/tick-lengths.txt` shows good ones).
    let text = "cluster brokers=3 syncs=eager\n----\n\ncampaign n0\n----\n\nsync n0\n----\n\n\
                deliver from=n0 to=n1 n=1\n----\n\nsync n1\n----\n\nsync n1\n----\n\n";
    let outcome = felix_sim::script::run_text("eager.txt", text).expect("a good script");
    let syncs: Vec<&Vec<String>> = outcome
        .blocks
        .iter()
        .filter(|block| block.command == "sync n1")
        .map(|block| &block.actual)
        .collect();
    assert_eq!(
        syncs,
        [
            &vec![
                "synced n1".to_string(),
                "n1: promise term 1 vote none".to_string()
            ],
            &vec![
                "synced n1".to_string(),
                "n1: promise term 1 vote n0".to_string()
            ],
        ]
    );
    for (argument, message) in [
        ("syncs=lazy", "syncs must be all or eager"),
        ("election=0", "election must be 1..=1000 ticks"),
        ("heartbeat=1001", "heartbeat must be 1..=1000 ticks"),
        ("election=x", "`election` must be a number"),
    ] {
        let text = format!("cluster {argument}\n----\n\n");
        let error =
            felix_sim::script::run_text("bad.txt", &text).expect_err("a bad value is refused");
        assert_eq!(error.line, 1);
        assert!(error.message.contains(message), "{}", error.message);
    }
}

#[test]
fn a_checkpoint_takes_keep_and_no_other_word() {
    // Proves `checkpoint o1 keep` (the schedule translation writes it for a world owner whose trim
    // limit skipped its run's truncate; `scenarios/checkpoints/owner-checkpoint-keep.txt` shows
    // what it does) is a verb, and any other bare word after the owner a script error.
    let text = "cluster brokers=3\n----\n\ncampaign n0\n----\n\nstabilize\n----\n\n\
                owner o1 token=1\n----\n\ncheckpoint o1 keep\n----\n\n";
    felix_sim::script::run_text("keep.txt", text).expect("keep is a checkpoint's word");
    let text = text.replace("checkpoint o1 keep", "checkpoint o1 maybe");
    let error =
        felix_sim::script::run_text("maybe.txt", &text).expect_err("another word is refused");
    assert_eq!(error.line, 13);
    assert!(
        error.message.contains("takes only `keep`"),
        "{}",
        error.message
    );
}
