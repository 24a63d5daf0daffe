//! The simulator's view of a node: the real core `Broker`'s configuration (a voter or a non-voting
//! replica) for a run's knobs and rules, and the driver's choices (election timeouts drawn from the
//! node's own stream) made here. The host (`crate::env::host`) builds and recovers it.

use crate::env::rng::Stream;
use crate::seeded::knobs::Knobs;
use felix_core::broker::BrokerConfig;
use felix_core::journal::JournalConfig;
use felix_core::storage::SegmentLayout;
use felix_core::{NodeId, Rules};

pub use felix_core::broker::Input;

/// The largest write body a simulated node takes: far above any body the workload writes (a few
/// dozen bytes), small enough that the prober's oversized body costs nothing to carry.
pub const BODY_BYTES_MAX: u64 = 4096;

/// The broker config of node `id` in a run with these knobs and rules.
pub fn config(id: NodeId, knobs: &Knobs, rules: Rules) -> BrokerConfig {
    let voters: Vec<NodeId> = (0..knobs.brokers).collect();
    let replicas: Vec<NodeId> = (knobs.brokers..knobs.brokers + knobs.replicas).collect();
    let mut config = BrokerConfig::new(id, voters, replicas);
    config.election_timeout_ticks = knobs.election_ticks_min;
    config.heartbeat_ticks = knobs.heartbeat_ticks;
    config.append_entries_max = knobs.append_entries_max as usize;
    config.appends_in_flight_max = knobs.appends_in_flight_max.map(|max| max as usize);
    config.journal = JournalConfig {
        layout: SegmentLayout {
            records_per_segment: knobs.records_per_segment,
        },
        rules,
        body_bytes_max: BODY_BYTES_MAX,
        ..JournalConfig::default()
    };
    config
}

/// The node's next randomized election timeout, in the knobs' range (the core has no random
/// source).
pub fn election_timeout(stream: &mut Stream, knobs: &Knobs) -> u64 {
    stream.range(knobs.election_ticks_min, knobs.election_ticks_max)
}
