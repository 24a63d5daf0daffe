//! A small deterministic in-test driver for client tests over real brokers: three voters, FIFO
//! message delivery, stores synced after every step, and only the node the test elects ever
//! ticks, so the run is the same every time. Shared by `five_step_trace.rs` and
//! `client_cluster.rs` (each test binary uses the part it needs).
#![allow(dead_code)]

use felix_core::api::{ClientId, Reply, Request, RequestId};
use felix_core::broker::{Broker, BrokerConfig, Delivery, Duty, Input, Message, Outbox};
use felix_core::client::Client;
use felix_core::history::Event;
use felix_core::journal::JournalConfig;
use felix_core::storage::memory::MemoryStore;
use felix_core::storage::{LogStore, SegmentLayout};
use felix_core::{Entry, NodeId, Rules};
use std::collections::VecDeque;

pub const VOTERS: [NodeId; 3] = [0, 1, 2];
/// Every wait in the driver is bounded: a protocol that does not answer fails the test.
const DRIVER_STEPS_MAX: usize = 10_000;

/// One request and its reply, as a trace shows them.
pub type Exchange = (Request, Reply);

pub struct Cluster {
    pub brokers: Vec<Broker>,
    pub stores: Vec<MemoryStore>,
    pub outboxes: Vec<Outbox>,
    pub network: VecDeque<(NodeId, NodeId, Message)>,
    pub replies: Vec<(ClientId, RequestId, Reply)>,
    pub history: Vec<Event>,
    /// Where client requests go.
    pub leader: NodeId,
}

impl Cluster {
    /// Three voters under `rules`; node 0 is elected.
    pub fn new(rules: Rules) -> Cluster {
        let layout = SegmentLayout::default();
        let brokers = VOTERS
            .iter()
            .map(|id| {
                let mut config = BrokerConfig::new(*id, VOTERS.to_vec(), Vec::new());
                // Only a node the test ticks ever campaigns; a tick is enough to do it.
                config.election_timeout_ticks = 1;
                config.journal = JournalConfig {
                    layout,
                    rules,
                    ..JournalConfig::default()
                };
                Broker::new(config)
            })
            .collect();
        let stores = VOTERS.iter().map(|_| MemoryStore::new(layout)).collect();
        let mut cluster = Cluster {
            brokers,
            stores,
            outboxes: VOTERS
                .iter()
                .map(|_| Outbox::new(DRIVER_STEPS_MAX))
                .collect(),
            network: VecDeque::new(),
            replies: Vec::new(),
            history: Vec::new(),
            leader: 0,
        };
        cluster.elect(0);
        cluster
    }

    /// `node` campaigns and wins (its log is as long as any: every node got every record).
    pub fn elect(&mut self, node: NodeId) {
        self.input(node, Input::Tick);
        self.settle();
        assert!(
            self.brokers[node as usize].is_leader(),
            "node {node} is elected"
        );
        self.leader = node;
        // Let the new leader's noop commit everywhere.
        self.input(node, Input::Tick);
        self.settle();
    }

    /// One input to one node; persists are applied and synced before its sends go out. The
    /// outputs go through the node's `Outbox`, the one every driver uses.
    pub fn input(&mut self, node: NodeId, input: Input) {
        let outputs = self.brokers[node as usize].step_collect(input);
        let mut duties = Vec::new();
        self.outboxes[node as usize]
            .carry(outputs, &mut duties)
            .expect("the driver syncs after every step");
        for duty in duties {
            match duty {
                Duty::Persist { op, .. } => self.stores[node as usize]
                    .apply(&op)
                    .expect("in-memory apply"),
                Duty::Deliver(delivery) => self.deliver(node, delivery),
                Duty::Observe(event) => self.history.push(event),
                // Only the node a test elects ever ticks: its configured timeout is kept.
                Duty::DrawElectionTimeout => {}
            }
        }
        if let Some(through) = self.outboxes[node as usize].unsynced_through() {
            self.stores[node as usize].sync().expect("in-memory sync");
            let mut released = Vec::new();
            self.outboxes[node as usize].synced(through, &mut released);
            for delivery in released {
                self.deliver(node, delivery);
            }
            self.input(node, Input::Persisted { through });
        }
    }

    fn deliver(&mut self, node: NodeId, delivery: Delivery) {
        match delivery {
            Delivery::Send { to, message } => self.network.push_back((node, to, message)),
            Delivery::Reply {
                client,
                request_id,
                reply,
            } => self.replies.push((client, request_id, reply)),
        }
    }

    /// Delivers messages until the network is empty.
    pub fn settle(&mut self) {
        for _ in 0..DRIVER_STEPS_MAX {
            let Some((from, to, message)) = self.network.pop_front() else {
                return;
            };
            self.input(to, Input::Message { from, message });
        }
        panic!("the network did not settle");
    }

    /// Sends `request` to the leader and runs the cluster until it is answered.
    pub fn request(&mut self, client: ClientId, request_id: RequestId, request: Request) -> Reply {
        let node = self.leader;
        self.history.push(Event::Requested {
            client,
            node,
            request: request.clone(),
        });
        self.input(
            node,
            Input::Client {
                client,
                request_id,
                request: request.clone(),
            },
        );
        for _ in 0..DRIVER_STEPS_MAX {
            let answered = self
                .replies
                .iter()
                .position(|(to, id, _)| *to == client && *id == request_id);
            if let Some(index) = answered {
                let (_, _, reply) = self.replies.remove(index);
                self.history.push(Event::Replied {
                    client,
                    node,
                    request,
                    reply: reply.clone(),
                });
                return reply;
            }
            if self.network.is_empty() {
                self.input(node, Input::Tick);
            }
            self.settle();
        }
        panic!("request {request_id} of client {client} was never answered");
    }

    /// Lets `client` ask and hear answers until it has nothing more to ask (at most
    /// `requests_max` requests); returns what it asked and heard, and the events it emitted
    /// (also appended to the history).
    pub fn run_client(
        &mut self,
        client: &mut impl Client,
        requests_max: usize,
    ) -> (Vec<Exchange>, Vec<Event>) {
        let mut exchanges = Vec::new();
        let mut events = Vec::new();
        for _ in 0..requests_max {
            let Some((id, request)) = client.next_request() else {
                return (exchanges, events);
            };
            let reply = self.request(client.client_id(), id, request.clone());
            let step = client.on_reply(id, reply.clone());
            self.history.extend(step.events.iter().cloned());
            events.extend(step.events);
            exchanges.push((request, reply));
        }
        (exchanges, events)
    }

    /// Every record `node`'s walk committed, from its `Committed` events: its log itself may have
    /// deleted the segments below a floor by now.
    pub fn committed(&self, node: NodeId) -> Vec<Entry> {
        self.history
            .iter()
            .filter_map(|event| match event {
                Event::Committed { node: by, entry } if *by == node => Some(entry.clone()),
                _ => None,
            })
            .collect()
    }
}
