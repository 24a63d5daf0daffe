//! Broker engine tests: set up a state, take ONE step, assert the exact outputs (openraft style).
//!
//! States are built with a tiny synchronous driver (`Net`): every `Persist` is made durable at once
//! and reported back, every `Send` is delivered in order. The step under test is then taken by hand
//! with `Broker::step_collect`, and its outputs compared whole.

use felix_core::api::{ClientId, InvalidRequest, ReadFrom, ReadRecord, Reply, Request, RequestId};
use felix_core::broker::{
    AppendResult, Ask, Broker, BrokerConfig, Delivery, Duty, Input, Message, Outbox, Output, Role,
};
use felix_core::history::Event;
use felix_core::record::{Command, Entry, Headers, NodeId, Offset, Term, Token};
use felix_core::rules::{Rules, TwinName};
use felix_core::storage::{HardState, SealedState, SegmentLayout, StorageOp};
use std::collections::{BTreeMap, VecDeque};

mod elections;
mod floors;
mod jump;
mod peers;
mod read_index;
mod writes;

const VOTERS: [NodeId; 3] = [0, 1, 2];
const REPLICA: NodeId = 3;

pub(super) fn config(id: NodeId, rules: Rules) -> BrokerConfig {
    let mut config = BrokerConfig::new(id, VOTERS.to_vec(), vec![REPLICA]);
    config.election_timeout_ticks = 10 + id as u64 * 5;
    config.heartbeat_ticks = 2;
    config.journal.layout = SegmentLayout {
        records_per_segment: 4,
    };
    config.journal.rules = rules;
    config
}

/// Read-index question `number` of a node's first incarnation (`BrokerConfig::new`'s).
fn ask(number: u64) -> Ask {
    Ask {
        incarnation: 0,
        number,
    }
}

/// A synchronous driver: persists are durable at once, messages delivered in order, unless the
/// destination is cut off. Outputs go through each node's `Outbox`, the one every driver uses.
pub(super) struct Net {
    pub(super) nodes: BTreeMap<NodeId, Broker>,
    outboxes: BTreeMap<NodeId, Outbox>,
    pub(super) cut: Vec<NodeId>,
    replies: Vec<(ClientId, RequestId, Reply)>,
}

impl Net {
    pub(super) fn new(rules: Rules) -> Net {
        let nodes = (0..4)
            .map(|id| (id, Broker::new(config(id, rules))))
            .collect();
        Net {
            nodes,
            outboxes: (0..4).map(|id| (id, Outbox::new(1024))).collect(),
            cut: Vec::new(),
            replies: Vec::new(),
        }
    }

    pub(super) fn node(&mut self, id: NodeId) -> &mut Broker {
        self.nodes.get_mut(&id).expect("a node of the test cluster")
    }

    /// Feeds `input` to `id` and carries out everything that follows until quiet.
    fn input(&mut self, id: NodeId, input: Input) {
        let mut queue: VecDeque<(NodeId, Input)> = VecDeque::from([(id, input)]);
        while let Some((id, input)) = queue.pop_front() {
            if self.cut.contains(&id) {
                continue;
            }
            self.step(id, input, &mut queue);
        }
    }

    /// One step of `id`, its outputs carried out through its outbox; every persist is durable
    /// at once, so what it held goes out and the node hears `Persisted` right there.
    fn step(&mut self, id: NodeId, input: Input, queue: &mut VecDeque<(NodeId, Input)>) {
        let outputs = self.node(id).step_collect(input);
        let mut duties = Vec::new();
        let outbox = self.outboxes.get_mut(&id).expect("an outbox per node");
        outbox
            .carry(outputs, &mut duties)
            .expect("the test holds few sends");
        for duty in duties {
            match duty {
                Duty::Persist { id: persist, .. } => {
                    let mut released = Vec::new();
                    let outbox = self.outboxes.get_mut(&id).expect("an outbox per node");
                    outbox.synced(persist, &mut released);
                    for delivery in released {
                        self.carry(id, delivery, queue);
                    }
                    self.step(id, Input::Persisted { through: persist }, queue);
                }
                Duty::Deliver(delivery) => self.carry(id, delivery, queue),
                Duty::Observe(_) | Duty::DrawElectionTimeout => {}
            }
        }
    }

    fn carry(&mut self, from: NodeId, delivery: Delivery, queue: &mut VecDeque<(NodeId, Input)>) {
        match delivery {
            Delivery::Send { to, message } => {
                queue.push_back((to, Input::Message { from, message }))
            }
            Delivery::Reply {
                client,
                request_id,
                reply,
            } => self.replies.push((client, request_id, reply)),
        }
    }

    /// Node 0 campaigns and wins term 1; the noop commits everywhere.
    pub(super) fn elect_zero(&mut self) {
        for _ in 0..10 {
            self.input(0, Input::Tick);
        }
        assert!(self.node(0).is_leader());
        self.heartbeat(0);
    }

    pub(super) fn heartbeat(&mut self, leader: NodeId) {
        for _ in 0..2 {
            self.input(leader, Input::Tick);
        }
    }

    pub(super) fn client(&mut self, node: NodeId, request: Request) {
        self.input(
            node,
            Input::Client {
                client: 9,
                request_id: 1,
                request,
            },
        );
    }
}

pub(super) fn write(body: &str) -> Request {
    Request::Append {
        expected_tail: None,
        fence: None,
        body: body.as_bytes().to_vec(),
        headers: Headers::default(),
    }
}

fn trim_to(floor: Offset, epoch: u64) -> Request {
    Request::Trim {
        expected_tail: None,
        fence: None,
        floor,
        headers: Headers::with_epoch(epoch),
    }
}

fn append_entries(
    term: Term,
    prev: (Offset, Term),
    entries: Vec<Entry>,
    committed: Offset,
) -> Message {
    Message::AppendEntries {
        term,
        prev_offset: prev.0,
        prev_term: prev.1,
        entries,
        committed,
    }
}

fn noop(offset: Offset, term: Term) -> Entry {
    Entry {
        offset,
        term,
        command: Command::Noop,
    }
}

fn reply_to(to: NodeId, term: Term, result: AppendResult) -> Output {
    Output::Send {
        to,
        message: Message::AppendReply { term, result },
    }
}

/// A cluster whose leader 0 holds 10 writes after its noop and a trim at 12 asking for floor 10,
/// all committed on 0, 1, 2 and the replica.
fn trimmed_cluster(rules: Rules) -> Net {
    let mut net = Net::new(rules);
    net.elect_zero();
    for index in 0..10 {
        net.client(0, write(&format!("w{index}")));
    }
    net.client(0, trim_to(10, 2));
    net.heartbeat(0);
    net
}
