//! The simulator's view of a node: the real core `Broker` (a voter or a non-voting replica),
//! built fresh or recovered from its disk, with the driver's choices (election timeouts drawn
//! from the node's own stream) made here.

use crate::knobs::Knobs;
use crate::rng::Stream;
use felix_core::broker::{Broker, BrokerConfig};
use felix_core::history::Event;
use felix_core::journal::JournalConfig;
use felix_core::storage::{Recovered, SegmentLayout};
use felix_core::{Headers, NodeId, Offset, Rules, Term};

pub use felix_core::broker::Input;

/// A node of the simulated cluster: the real broker.
pub type Node = Broker;

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

/// A node with an empty disk.
pub fn fresh(id: NodeId, knobs: &Knobs, rules: Rules) -> Node {
    Broker::new(config(id, knobs, rules))
}

/// A node rebuilt from what its disk recovered. A recovery the core refuses is a bug in the core
/// or the store (the simulator only ever hands it what the store kept), so it panics loudly.
pub fn recover(id: NodeId, knobs: &Knobs, rules: Rules, recovered: Recovered) -> Node {
    match Broker::from_recovered(config(id, knobs, rules), recovered) {
        Ok(node) => node,
        Err(error) => panic!("node {id} could not recover from its own store: {error:?}"),
    }
}

/// The node's next randomized election timeout, in the knobs' range (the core has no random
/// source).
pub fn election_timeout(stream: &mut Stream, knobs: &Knobs) -> u64 {
    stream.range(knobs.election_ticks_min, knobs.election_ticks_max)
}

pub fn committed(node: &Node) -> Offset {
    node.committed()
}

/// What a `NodeState` sample shows, except the committed index (which moves on nearly every
/// step; the audits read it from `Committed` events): a change here is worth a sample.
pub fn state_key(node: &Node) -> (Term, Option<NodeId>, bool, Offset, Offset, Option<Headers>) {
    (
        node.term(),
        node.vote(),
        node.is_leader(),
        node.floor(),
        node.readable_start(),
        node.floor_tag().cloned(),
    )
}

/// The node's state as a history event.
pub fn state_event(node: &Node) -> Event {
    node.node_state()
}
