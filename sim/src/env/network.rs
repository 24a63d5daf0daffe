//! The simulated network: who can reach whom, and when a message arrives.
//!
//! Every message (broker to broker, client to broker and back) goes through `Network::route`,
//! which draws from the network stream whether it is dropped, duplicated or delayed (a long delay
//! reorders it behind later messages). Partitions are sets of blocked directed links, so symmetric
//! splits, one-way (asymmetric) cuts and an isolated node are all the same mechanism. A clogged
//! address holds its traffic until the clog lifts instead of losing it. After `heal` no link is
//! blocked or clogged and nothing is dropped, so the liveness phase runs on a reliable network.

use crate::env::queue::Time;
use crate::env::rng::Stream;
use felix_core::api::{ClientId, Reply, Request, RequestId};
use felix_core::broker::Message;
use felix_core::NodeId;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// A message endpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Address {
    Node(NodeId),
    Client(ClientId),
}

impl std::fmt::Display for Address {
    /// `n2` for a node, `c3` for a client, as every trace names them.
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Address::Node(id) => write!(formatter, "n{id}"),
            Address::Client(id) => write!(formatter, "c{id}"),
        }
    }
}

/// What travels between two addresses: the one payload type of both schedulers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Payload {
    /// Broker to broker.
    Message(Message),
    /// Client to broker.
    Request {
        request_id: RequestId,
        request: Request,
    },
    /// Broker to client.
    Reply { request_id: RequestId, reply: Reply },
}

/// One message on its way.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Packet {
    pub from: Address,
    pub to: Address,
    pub payload: Payload,
}

/// The network fault rates of a run (drawn by the swarm).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NetworkKnobs {
    pub drop_per_million: u32,
    pub duplicate_per_million: u32,
    pub delay_min_micros: Time,
    pub delay_max_micros: Time,
    /// A message delayed this long overtakes nothing but is overtaken by many: reordering.
    pub long_delay_per_million: u32,
    pub long_delay_max_micros: Time,
    /// Old messages: the chance that a message between two nodes is also captured and delivered
    /// again much later, one to `ancient_max_micros` after it was sent (across elections, trims
    /// and jumps). 0 in knobs printed before the fault existed.
    #[serde(default)]
    pub ancient_per_million: u32,
    #[serde(default)]
    pub ancient_max_micros: Time,
    /// Whether an old message is captured rather than copied: the message is then not delivered
    /// at its time at all, only much later (a packet held in a switch's buffer, a stalled proxy).
    /// Left out of the knobs when false, so knobs printed before it run as they did.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ancient_captures: bool,
}

/// The shortest delay of a captured (old) message: a second, far past any ordinary delay.
pub const ANCIENT_MIN_MICROS: Time = 1_000_000;

/// The arrival times of one message's copies: none (lost), one, or two (duplicated), and maybe
/// an old copy delivered much later. A slice without an allocation: `route` runs once per message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Arrivals {
    times: [Time; 3],
    len: usize,
    /// The last arrival is an old message: a copy delivered much later, or the message itself
    /// when it was captured.
    pub old: bool,
    /// The message was captured: its only arrival is the late one.
    pub captured: bool,
}

impl Arrivals {
    const NONE: Arrivals = Arrivals {
        times: [0; 3],
        len: 0,
        old: false,
        captured: false,
    };

    fn one(at: Time) -> Arrivals {
        Arrivals {
            times: [at, 0, 0],
            len: 1,
            old: false,
            captured: false,
        }
    }
}

impl std::ops::Deref for Arrivals {
    type Target = [Time];

    fn deref(&self) -> &[Time] {
        &self.times[..self.len]
    }
}

/// Links, clogs and the fault rates in force.
pub struct Network {
    knobs: NetworkKnobs,
    stream: Stream,
    blocked: BTreeSet<(Address, Address)>,
    clogged_until: BTreeMap<Address, Time>,
    healed: bool,
}

impl Network {
    /// Re-keys the network's stream (a continuation's fork, `fork`).
    pub fn rekey(&mut self, key: u64) {
        self.stream.rekey(key);
    }

    /// A network drawing its faults and delays from `stream`.
    pub fn new(stream: Stream, knobs: NetworkKnobs) -> Network {
        assert!(knobs.delay_min_micros <= knobs.delay_max_micros);
        assert!(knobs.delay_max_micros <= knobs.long_delay_max_micros);
        Network {
            knobs,
            stream,
            blocked: BTreeSet::new(),
            clogged_until: BTreeMap::new(),
            healed: false,
        }
    }

    /// When copies of a message sent now from `from` to `to` arrive: none if it is lost, two if it
    /// is duplicated.
    pub fn route(&mut self, now: Time, from: Address, to: Address) -> Arrivals {
        if from == to {
            return Arrivals::one(now);
        }
        if self.blocked.contains(&(from, to)) {
            return Arrivals::NONE;
        }
        if !self.healed && self.stream.chance(self.knobs.drop_per_million) {
            return Arrivals::NONE;
        }
        let copies = if !self.healed && self.stream.chance(self.knobs.duplicate_per_million) {
            2
        } else {
            1
        };
        let clog_end = [from, to]
            .iter()
            .filter_map(|address| self.clogged_until.get(address).copied())
            .max()
            .unwrap_or(0);
        let mut arrivals = Arrivals::NONE;
        for _ in 0..copies {
            let delay = if !self.healed && self.stream.chance(self.knobs.long_delay_per_million) {
                self.stream.range(
                    self.knobs.delay_max_micros,
                    self.knobs.long_delay_max_micros,
                )
            } else {
                self.stream
                    .range(self.knobs.delay_min_micros, self.knobs.delay_max_micros)
            };
            arrivals.times[arrivals.len] = now.max(clog_end) + delay;
            arrivals.len += 1;
        }
        // Drawn only when the fault is on, so knobs without it run as they always did.
        let between_nodes = matches!((from, to), (Address::Node(_), Address::Node(_)));
        if between_nodes
            && !self.healed
            && self.knobs.ancient_per_million > 0
            && self.stream.chance(self.knobs.ancient_per_million)
        {
            let late = self.stream.range(
                ANCIENT_MIN_MICROS,
                self.knobs.ancient_max_micros.max(ANCIENT_MIN_MICROS),
            );
            if self.knobs.ancient_captures {
                // Captured: the copies drawn above never arrive; only the late one does.
                arrivals.len = 0;
                arrivals.captured = true;
            }
            arrivals.times[arrivals.len] = now + late;
            arrivals.len += 1;
            arrivals.old = true;
        }
        arrivals
    }

    /// Blocks traffic from `from` to `to` (one direction).
    pub fn block(&mut self, from: Address, to: Address) {
        self.blocked.insert((from, to));
    }

    /// Blocks both directions between every member of `side` and every member of `rest`.
    pub fn split(&mut self, side: &[Address], rest: &[Address]) {
        for &a in side {
            for &b in rest {
                self.block(a, b);
                self.block(b, a);
            }
        }
    }

    /// Holds every message from or to `address` until `until`.
    pub fn clog(&mut self, address: Address, until: Time) {
        let entry = self.clogged_until.entry(address).or_insert(0);
        *entry = (*entry).max(until);
    }

    /// Lifts every partition (clogs lapse on their own).
    pub fn repair_partitions(&mut self) {
        self.blocked.clear();
    }

    /// The end of the safety phase: no partition, no clog, no loss, no duplicate, no long delay.
    pub fn heal(&mut self) {
        self.blocked.clear();
        self.clogged_until.clear();
        self.healed = true;
    }
}
