//! The knob pass of the shrinker: simpler worlds to try, one group of knobs at a time.
//!
//! Each group is one function that proposes candidates simpler than the knobs it is given (fewer
//! nodes and clients, no network faults, no BUGGIFY site, no clock skew, one fault kind off, a
//! shorter safety phase);
//! the shrinker keeps a candidate only if the run still breaks the same invariant. A new knob field
//! slots in as one more line in its group (or one more group in `GROUPS`). Every candidate keeps
//! the knobs' own consistency (an odd number of voters, at least three; syncs no shorter than
//! their minimum; a safety phase longer than zero).

use crate::seeded::knobs::{Knobs, Replication, Workload};

/// A group of knobs: the simpler variants of `knobs` it proposes (possibly none).
pub type Group = fn(&Knobs) -> Vec<Knobs>;

/// Every group, in the order the pass tries them (cheapest, highest-yield first).
pub const GROUPS: [(&str, Group); 8] = [
    ("shape", shape),
    ("sizes", sizes),
    ("network", network),
    ("faults", faults),
    ("buggify", buggify),
    ("clocks", clocks),
    ("disk", disk),
    ("phases", phases),
];

/// A variant of `knobs` changed by `change`, if the change changed anything.
fn variant(knobs: &Knobs, change: impl FnOnce(&mut Knobs)) -> Option<Knobs> {
    let mut candidate = knobs.clone();
    change(&mut candidate);
    (candidate != *knobs).then_some(candidate)
}

/// The world before the swarm drew its shape: no prober, no old messages, no broken writer, no
/// storage faults, the in-memory store, writers with one request in flight that move on after every
/// unknown outcome, and the replication shape scenarios run with (64 records per AppendEntries, no
/// bound on appends in flight, the default heartbeat and election timeouts); all at once first,
/// then one at a time.
fn shape(knobs: &Knobs) -> Vec<Knobs> {
    let replication = |k: &mut Knobs| {
        k.append_entries_max = Replication::append_entries_max();
        k.heartbeat_ticks = Replication::heartbeat_ticks();
        k.election_ticks_min = Replication::election_ticks_min();
        k.election_ticks_max = Replication::election_ticks_max();
        k.appends_in_flight_max = None;
    };
    let no_prober = |k: &mut Knobs| {
        k.prober = false;
        k.prober_at_edges = false;
    };
    let no_old_messages = |k: &mut Knobs| {
        k.network.ancient_per_million = 0;
        k.network.ancient_captures = false;
    };
    let no_broken_runs = |k: &mut Knobs| k.broken_runs = false;
    let no_storage_faults = |k: &mut Knobs| k.storage_faults = None;
    let memory_store = |k: &mut Knobs| k.file_store = false;
    let one_in_flight = |k: &mut Knobs| {
        k.pipeline_depth = 1;
        k.sticky_timeouts = 0;
    };
    let random_partitions = |k: &mut Knobs| k.leader_partitions = false;
    [
        variant(knobs, |k| {
            no_prober(k);
            no_old_messages(k);
            no_broken_runs(k);
            no_storage_faults(k);
            memory_store(k);
            one_in_flight(k);
            random_partitions(k);
            replication(k);
        }),
        variant(knobs, no_prober),
        variant(knobs, |k| k.prober_at_edges = false),
        variant(knobs, no_old_messages),
        variant(knobs, no_broken_runs),
        variant(knobs, no_storage_faults),
        variant(knobs, memory_store),
        variant(knobs, one_in_flight),
        variant(knobs, random_partitions),
        variant(knobs, replication),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// Fewer voters, replicas, clients.
fn sizes(knobs: &Knobs) -> Vec<Knobs> {
    let workload = match knobs.workload {
        Workload::Felixd { holders } => Workload::Felixd {
            holders: holders.min(2),
        },
        Workload::Paros { owners, folders } => Workload::Paros {
            owners,
            folders: folders.min(1),
        },
    };
    [
        variant(knobs, |k| k.brokers = 3),
        variant(knobs, |k| k.replicas = 0),
        variant(knobs, |k| k.readers = 0),
        variant(knobs, |k| k.workload = workload),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// No loss, no duplicates, no long delays, one fixed delay.
fn network(knobs: &Knobs) -> Vec<Knobs> {
    [
        variant(knobs, |k| {
            k.network.drop_per_million = 0;
            k.network.duplicate_per_million = 0;
            k.network.long_delay_per_million = 0;
        }),
        variant(knobs, |k| k.network.drop_per_million = 0),
        variant(knobs, |k| k.network.duplicate_per_million = 0),
        variant(knobs, |k| k.network.long_delay_per_million = 0),
        variant(knobs, |k| {
            k.network.delay_max_micros = k.network.delay_min_micros
        }),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// One fault kind off at a time (all of them off is tried first).
fn faults(knobs: &Knobs) -> Vec<Knobs> {
    let mut candidates = vec![variant(knobs, |k| {
        k.weight_partition = 0;
        k.weight_clog = 0;
        k.weight_crash = 0;
        k.weight_pause = 0;
        k.weight_lease_move = 0;
    })];
    candidates.push(variant(knobs, |k| k.weight_partition = 0));
    candidates.push(variant(knobs, |k| k.weight_clog = 0));
    candidates.push(variant(knobs, |k| k.weight_crash = 0));
    candidates.push(variant(knobs, |k| k.weight_pause = 0));
    candidates.push(variant(knobs, |k| k.weight_lease_move = 0));
    candidates.into_iter().flatten().collect()
}

/// No BUGGIFY site active (all off first, then one at a time): a site fires where the swarm would
/// rarely go, and the scripted driver has no such moments.
fn buggify(knobs: &Knobs) -> Vec<Knobs> {
    let mut candidates = vec![variant(knobs, |k| k.buggify.clear())];
    if knobs.buggify.len() > 1 {
        for index in 0..knobs.buggify.len() {
            candidates.push(variant(knobs, |k| {
                k.buggify.remove(index);
            }));
        }
    }
    candidates.into_iter().flatten().collect()
}

/// Clocks that neither skew nor drift.
fn clocks(knobs: &Knobs) -> Vec<Knobs> {
    [variant(knobs, |k| {
        k.clock_skew_max_micros = 0;
        k.clock_drift_max_ppm = 0;
    })]
    .into_iter()
    .flatten()
    .collect()
}

/// Crashes that keep nothing unsynced and tear nothing.
fn disk(knobs: &Knobs) -> Vec<Knobs> {
    [
        variant(knobs, |k| {
            k.crash_keeps_per_million = 0;
            k.torn_per_million = 0;
        }),
        variant(knobs, |k| k.sync_max_micros = k.sync_min_micros),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// A shorter safety phase (halved) and a shorter liveness deadline.
fn phases(knobs: &Knobs) -> Vec<Knobs> {
    [
        variant(knobs, |k| k.safety_micros = (k.safety_micros / 2).max(1)),
        variant(knobs, |k| {
            k.liveness_micros = (k.liveness_micros / 16).max(1)
        }),
        variant(knobs, |k| {
            k.liveness_micros = (k.liveness_micros / 2).max(1)
        }),
    ]
    .into_iter()
    .flatten()
    .collect()
}
