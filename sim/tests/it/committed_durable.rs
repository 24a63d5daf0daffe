//! CommittedDurable's planted bug: every acknowledgement of appended records goes on the wire
//! claiming one record more than its node matched (an encoder off by one), so a leader counts a
//! follower for a record it does not hold and takes it as committed too soon. Planted here, in the
//! test (`World::plant_ack_one_high`): no run the CLI makes has it.
//!
//! The node made a true acknowledgement, sent after its records were durable (PromiseDurable,
//! which judges what the node made, has nothing to see), and its store reads back what was synced
//! (RecoveryFaithful has nothing to see). The record is lost only if the leader crashes and a node
//! without it wins the next election before it spreads, so the judges of consequences
//! (AckedWritesKept, CommittedPrefixAgreement) see it rarely. The commit judge sees the wrong
//! count itself.

use felix_core::rules::{Invariant, Rules};
use felix_sim::judge::judge;
use felix_sim::seeded::knobs::Knobs;
use felix_sim::seeded::world::{self, Setup};
use std::collections::BTreeSet;

/// The invariants the judges found in `seed`'s run with the default swarm's knobs, the slip
/// planted or not.
fn run(seed: u64, slip: bool) -> BTreeSet<Invariant> {
    let knobs = Knobs::draw(seed, None);
    let setup = Setup::new(seed, Rules::default(), knobs, false);
    let ran = world::run(setup, |world| {
        if slip {
            world.plant_ack_one_high();
            world.cap_events(SLIP_EVENTS_MAX);
        }
    });
    judge(&ran)
        .findings
        .iter()
        .map(|finding| finding.invariant)
        .collect()
}

/// The slip's runs are cut at this many events: most that the judge catches then livelock (the
/// walk back and forth below) until their budget, and the whole budget (a million events and
/// more) cost each several seconds for the findings its first quarter already holds (seeds 0..20:
/// caught on the same 12 seeds cut or not; no other safety judge on 9 of them cut, 8 uncut; the
/// test took 32 user-seconds uncut, 3 cut).
const SLIP_EVENTS_MAX: u64 = 250_000;

/// The judges of liveness: a slip that makes a leader skip records can also stall a run.
const LIVENESS: [Invariant; 3] = [
    Invariant::Convergence,
    Invariant::Progress,
    Invariant::EventBudget,
];

/// With the slip, most seeds break CommittedDurable and, on most of those, no other safety judge
/// finds anything (the liveness judges may: the leader then sends the follower records past its
/// end, and the two walk back and forth); without it the same seeds hold every invariant.
#[test]
fn only_committed_durable_sees_a_leader_count_a_record_its_follower_lacks() {
    let seeds = 0..20;
    let mut caught = Vec::new();
    let mut alone = Vec::new();
    for seed in seeds.clone() {
        assert_eq!(
            run(seed, false),
            BTreeSet::new(),
            "seed {seed} without the slip"
        );
        let found = run(seed, true);
        if found.contains(&Invariant::CommittedDurable) {
            caught.push(seed);
            let others = (found.iter())
                .filter(|invariant| **invariant != Invariant::CommittedDurable)
                .filter(|invariant| !LIVENESS.contains(invariant))
                .count();
            if others == 0 {
                alone.push(seed);
            }
        }
    }
    eprintln!("caught on {caught:?}, no other safety judge on {alone:?}");
    assert!(
        caught.len() * 2 > seeds.clone().count(),
        "the slip was caught on {caught:?} of {seeds:?} only"
    );
    assert!(
        alone.len() * 2 > caught.len(),
        "CommittedDurable was the only safety judge on {alone:?} only (caught on {caught:?})"
    );
}
