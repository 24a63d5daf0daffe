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

// ---- elections ----

#[test]
fn follower_campaigns_at_its_timeout_persisting_its_vote_before_asking() {
    // Proves the election start: a fresh timeout is asked of the driver for the new election
    // period, and term+1 and self-vote are persisted before the RequestVotes.
    let mut node = Broker::new(config(0, Rules::default()));
    for _ in 0..9 {
        assert_eq!(node.step_collect(Input::Tick), vec![]);
    }
    let request = Message::RequestVote {
        term: 1,
        last_offset: 0,
        last_term: 0,
    };
    assert_eq!(
        node.step_collect(Input::Tick),
        vec![
            // A new election period: the driver draws its timeout afresh.
            Output::DrawElectionTimeout,
            Output::Persist {
                id: 1,
                op: StorageOp::HardState(HardState {
                    term: 1,
                    vote: Some(0)
                })
            },
            Output::Send {
                to: 1,
                message: request.clone()
            },
            Output::Send {
                to: 2,
                message: request
            },
        ]
    );
    assert_eq!(node.role(), Role::Candidate);
    assert_eq!(
        node.step_collect(Input::Persisted { through: 1 }),
        vec![Output::Observe(Event::PromiseChanged {
            node: 0,
            term: 1,
            vote: Some(0)
        })]
    );
}

#[test]
fn candidate_with_a_majority_becomes_leader_and_appends_its_noop() {
    // Proves election by majority: one granted vote (plus its own) makes a leader of 3 voters,
    // which observes it, appends a noop for its term and replicates it to voters and replica.
    let mut node = Broker::new(config(0, Rules::default()));
    node.step(Input::ElectionTimeout { ticks: 1 }, &mut Vec::new());
    node.step_collect(Input::Tick);
    let outputs = node.step_collect(Input::Message {
        from: 1,
        message: Message::Vote {
            term: 1,
            granted: true,
        },
    });
    let send = |to| Output::Send {
        to,
        message: append_entries(1, (0, 0), vec![noop(1, 1)], 0),
    };
    assert_eq!(
        outputs,
        vec![
            Output::Observe(Event::BecameLeader { node: 0, term: 1 }),
            Output::Persist {
                id: 2,
                op: StorageOp::Append(vec![noop(1, 1)])
            },
            send(1),
            send(2),
            send(REPLICA),
        ]
    );
    assert!(node.is_leader());
}

#[test]
fn follower_grants_a_vote_after_persisting_it_and_refuses_a_stale_log() {
    // Proves votes are persisted before they are answered, and the log up-to-date check.
    let mut node = Broker::new(config(1, Rules::default()));
    let ask = |term, last_offset, last_term| Input::Message {
        from: 0,
        message: Message::RequestVote {
            term,
            last_offset,
            last_term,
        },
    };
    assert_eq!(
        node.step_collect(ask(1, 0, 0)),
        vec![
            Output::Persist {
                id: 1,
                op: StorageOp::HardState(HardState {
                    term: 1,
                    vote: None
                })
            },
            Output::Persist {
                id: 2,
                op: StorageOp::HardState(HardState {
                    term: 1,
                    vote: Some(0)
                })
            },
            Output::Send {
                to: 0,
                message: Message::Vote {
                    term: 1,
                    granted: true
                }
            },
        ]
    );
    // Another candidate in the same term is refused: the vote is spent.
    let other = node.step_collect(Input::Message {
        from: 2,
        message: Message::RequestVote {
            term: 1,
            last_offset: 5,
            last_term: 1,
        },
    });
    assert_eq!(
        other,
        vec![Output::Send {
            to: 2,
            message: Message::Vote {
                term: 1,
                granted: false
            }
        }]
    );
    // A candidate whose log is behind is refused even in a newer term.
    node.step_collect(Input::Message {
        from: 0,
        message: append_entries(1, (0, 0), vec![noop(1, 1)], 0),
    });
    assert_eq!(
        node.step_collect(ask(2, 0, 0)),
        vec![
            Output::Persist {
                id: 4,
                op: StorageOp::HardState(HardState {
                    term: 2,
                    vote: None
                })
            },
            Output::Send {
                to: 0,
                message: Message::Vote {
                    term: 2,
                    granted: false
                }
            },
        ]
    );
}

#[test]
fn replica_never_votes_and_never_campaigns() {
    // Proves a non-voting replica stays out of elections.
    let mut replica = Broker::new(config(REPLICA, Rules::default()));
    for _ in 0..100 {
        assert_eq!(replica.step_collect(Input::Tick), vec![]);
    }
    let outputs = replica.step_collect(Input::Message {
        from: 0,
        message: Message::RequestVote {
            term: 1,
            last_offset: 0,
            last_term: 0,
        },
    });
    assert_eq!(
        outputs,
        vec![
            Output::Persist {
                id: 1,
                op: StorageOp::HardState(HardState {
                    term: 1,
                    vote: None
                })
            },
            Output::Send {
                to: 0,
                message: Message::Vote {
                    term: 1,
                    granted: false
                }
            },
        ]
    );
    assert_eq!(replica.role(), Role::Replica);
}

// ---- writes, commit, the deposed leader ----

#[test]
fn leader_sequences_a_write_and_acks_only_once_committed_on_a_durable_majority() {
    // Proves the ack rule: no Appended before the leader's own persist is durable AND a follower
    // acknowledged; then exactly one Committed and one Appended.
    let mut net = Net::new(Rules::default());
    net.elect_zero();
    let leader = net.node(0);
    let outputs = leader.step_collect(Input::Client {
        client: 7,
        request_id: 3,
        request: write("x"),
    });
    let entry = Entry {
        offset: 2,
        term: 1,
        command: Command::Write {
            body: b"x".to_vec(),
            headers: Headers::default(),
        },
    };
    let send = |to| Output::Send {
        to,
        message: append_entries(1, (1, 1), vec![entry.clone()], 1),
    };
    let persist_id = match &outputs[0] {
        Output::Persist { id, .. } => *id,
        other => panic!("expected a persist first, got {other:?}"),
    };
    assert_eq!(
        outputs,
        vec![
            Output::Persist {
                id: persist_id,
                op: StorageOp::Append(vec![entry.clone()])
            },
            send(1),
            send(2),
            send(REPLICA),
        ]
    );
    // A follower's ack alone does not commit: the leader's own record is not durable yet.
    let ack = Input::Message {
        from: 1,
        message: Message::AppendReply {
            term: 1,
            result: AppendResult::Accepted { matched: 2 },
        },
    };
    assert_eq!(leader.step_collect(ack), vec![]);
    assert_eq!(
        leader.step_collect(Input::Persisted {
            through: persist_id
        }),
        vec![
            Output::Observe(Event::Committed { node: 0, entry }),
            Output::Reply {
                client: 7,
                request_id: 3,
                reply: Reply::Appended { offset: 2, tail: 3 }
            },
        ]
    );
}

#[test]
fn ack_before_sync_twin_acks_before_the_leader_is_durable() {
    // Proves the AckBeforeSync switch matters: with it off, the follower's ack alone commits.
    let mut net = Net::new(Rules::twin(TwinName::AckBeforeSync));
    net.elect_zero();
    let leader = net.node(0);
    leader.step_collect(Input::Client {
        client: 7,
        request_id: 3,
        request: write("x"),
    });
    let ack = Input::Message {
        from: 1,
        message: Message::AppendReply {
            term: 1,
            result: AppendResult::Accepted { matched: 2 },
        },
    };
    let outputs = leader.step_collect(ack);
    assert!(outputs.contains(&Output::Reply {
        client: 7,
        request_id: 3,
        reply: Reply::Appended { offset: 2, tail: 3 }
    }));
}

#[test]
fn follower_acks_only_after_its_persist_in_the_output_order() {
    // Proves persist-before-send on the follower: the AppendReply follows the Persist (and precedes
    // it only under AckBeforeSync).
    for (rules, persist_first) in [
        (Rules::default(), true),
        (Rules::twin(TwinName::AckBeforeSync), false),
    ] {
        let mut node = Broker::new(config(1, rules));
        let outputs = node.step_collect(Input::Message {
            from: 0,
            message: append_entries(0, (0, 0), vec![noop(1, 0)], 0),
        });
        let persist = Output::Persist {
            id: 1,
            op: StorageOp::Append(vec![noop(1, 0)]),
        };
        let reply = reply_to(0, 0, AppendResult::Accepted { matched: 1 });
        let expected = if persist_first {
            vec![persist, reply]
        } else {
            vec![reply, persist]
        };
        assert_eq!(outputs, expected);
    }
}

#[test]
fn deposed_leader_keeps_taking_writes_that_never_commit_or_ack() {
    // Proves the deposed leader: cut off, it still sequences a write into its own log (no reply),
    // and on hearing the newer term it steps down with the write unacknowledged.
    let mut net = Net::new(Rules::default());
    net.elect_zero();
    net.cut = vec![0];
    for _ in 0..15 {
        net.input(1, Input::Tick);
    }
    assert!(net.node(1).is_leader());
    assert_eq!(net.node(1).term(), 2);
    net.cut.clear();
    let old = net.node(0);
    assert!(old.is_leader());
    let outputs = old.step_collect(Input::Client {
        client: 7,
        request_id: 4,
        request: write("stale"),
    });
    assert!(
        matches!(&outputs[0], Output::Persist { op: StorageOp::Append(entries), .. } if entries[0].offset == 2 && entries[0].term == 1)
    );
    assert!(outputs
        .iter()
        .all(|output| !matches!(output, Output::Reply { .. })));
    // Node 1 (term 2) answers the stale AppendEntries with its term; node 0 steps down.
    let outputs = old.step_collect(Input::Message {
        from: 1,
        message: Message::AppendReply {
            term: 2,
            result: AppendResult::Rejected { next: 2 },
        },
    });
    assert_eq!(
        outputs,
        vec![Output::Persist {
            id: 4,
            op: StorageOp::HardState(HardState {
                term: 2,
                vote: None
            })
        }]
    );
    assert_eq!(old.role(), Role::Follower);
    assert_eq!(old.committed(), 1);
}

#[test]
fn follower_truncates_a_conflicting_uncommitted_suffix() {
    // Proves log matching: records of an older term are replaced by the leader's.
    let mut node = Broker::new(config(1, Rules::default()));
    node.step_collect(Input::Message {
        from: 0,
        message: append_entries(1, (0, 0), vec![noop(1, 1), noop(2, 1), noop(3, 1)], 1),
    });
    let outputs = node.step_collect(Input::Message {
        from: 2,
        message: append_entries(2, (1, 1), vec![noop(2, 2)], 2),
    });
    assert_eq!(
        outputs,
        vec![
            Output::Persist {
                id: 3,
                op: StorageOp::HardState(HardState {
                    term: 2,
                    vote: None
                })
            },
            Output::Persist {
                id: 4,
                op: StorageOp::TruncateSuffix { from: 2 }
            },
            Output::Persist {
                id: 5,
                op: StorageOp::Append(vec![noop(2, 2)])
            },
            Output::Observe(Event::Committed {
                node: 1,
                entry: noop(2, 2)
            }),
            reply_to(2, 2, AppendResult::Accepted { matched: 2 }),
        ]
    );
    assert_eq!(node.tail(), 3);
}

#[test]
fn follower_redirects_client_writes_and_serves_reads_at_a_read_index() {
    // Proves followers answer NotLeader with the leader they heard from, and serve a read only
    // once the leader confirmed its commit index by a majority round: the follower asks, the
    // leader probes its voters, one answer makes a majority, the follower serves its prefix.
    let mut net = Net::new(Rules::default());
    net.elect_zero();
    net.client(0, write("x"));
    net.heartbeat(0);
    let follower = net.node(2);
    assert_eq!(
        follower.step_collect(Input::Client {
            client: 7,
            request_id: 1,
            request: write("y")
        }),
        vec![Output::Reply {
            client: 7,
            request_id: 1,
            reply: Reply::NotLeader { hint: Some(0) }
        }]
    );
    let read = Request::Read {
        from: ReadFrom::Offset(1),
        max_records: 10,
    };
    let record = ReadRecord {
        offset: 2,
        body: b"x".to_vec(),
        headers: Headers::default(),
    };
    assert_eq!(
        follower.step_collect(Input::Client {
            client: 7,
            request_id: 2,
            request: read
        }),
        vec![Output::Send {
            to: 0,
            message: Message::ReadIndex { ask: ask(1) }
        }]
    );
    let probe = Message::ReadProbe { term: 1, round: 1 };
    assert_eq!(
        net.node(0).step_collect(Input::Message {
            from: 2,
            message: Message::ReadIndex { ask: ask(1) }
        }),
        vec![
            Output::Send {
                to: 1,
                message: probe.clone()
            },
            Output::Send {
                to: 2,
                message: probe.clone()
            },
        ]
    );
    assert_eq!(
        net.node(1).step_collect(Input::Message {
            from: 0,
            message: probe
        }),
        vec![Output::Send {
            to: 0,
            message: Message::ReadProbeAck { term: 1, round: 1 }
        }]
    );
    assert_eq!(
        net.node(0).step_collect(Input::Message {
            from: 1,
            message: Message::ReadProbeAck { term: 1, round: 1 }
        }),
        vec![Output::Send {
            to: 2,
            message: Message::ReadIndexReply {
                ask: ask(1),
                index: Some(2)
            }
        }]
    );
    assert_eq!(
        net.node(2).step_collect(Input::Message {
            from: 0,
            message: Message::ReadIndexReply {
                ask: ask(1),
                index: Some(2)
            }
        }),
        vec![Output::Reply {
            client: 7,
            request_id: 2,
            reply: Reply::Records {
                records: vec![record],
                next: 3
            }
        }]
    );
}

#[test]
fn a_node_without_a_read_index_refuses_retriably_and_never_serves() {
    // Proves the refusal side: a follower that knows no leader, a leader whose round gets no
    // majority before `read_wait_ticks_max`, and a leader whose term's noop is not committed
    // yet answer `NoReadIndex`, never records.
    let read = Input::Client {
        client: 7,
        request_id: 3,
        request: Request::Read {
            from: ReadFrom::Offset(1),
            max_records: 10,
        },
    };
    let refused = |hint| Output::Reply {
        client: 7,
        request_id: 3,
        reply: Reply::NoReadIndex { hint },
    };
    let mut lonely = Broker::new(config(1, Rules::default()));
    assert_eq!(lonely.step_collect(read.clone()), vec![refused(None)]);

    let mut net = Net::new(Rules::default());
    net.elect_zero();
    net.cut = vec![1, 2];
    let leader = net.node(0);
    let probes = leader.step_collect(read.clone());
    assert_eq!(probes.len(), 2, "{probes:?}");
    let wait = leader.config().read_wait_ticks_max;
    let mut answered = Vec::new();
    for _ in 0..=wait {
        answered.extend(
            leader
                .step_collect(Input::Tick)
                .into_iter()
                .filter(|output| matches!(output, Output::Reply { .. })),
        );
    }
    assert_eq!(answered, vec![refused(Some(0))]);

    // A fresh leader whose noop is not committed (not even durable): no round, no answer yet.
    let mut fresh = Broker::new(config(0, Rules::default()));
    for _ in 0..10 {
        fresh.step_collect(Input::Tick);
    }
    fresh.step_collect(Input::Persisted { through: 1 });
    fresh.step_collect(Input::Message {
        from: 1,
        message: Message::Vote {
            term: 1,
            granted: true,
        },
    });
    assert!(fresh.is_leader());
    assert_eq!(fresh.committed(), 0);
    let outputs = fresh.step_collect(read);
    assert!(outputs.is_empty(), "{outputs:?}");
    let mut answered = Vec::new();
    for _ in 0..=wait {
        answered.extend(
            fresh
                .step_collect(Input::Tick)
                .into_iter()
                .filter(|output| matches!(output, Output::Reply { .. })),
        );
    }
    let outputs = answered;
    assert!(outputs == vec![refused(Some(0))], "{outputs:?}");
}

#[test]
fn bad_requests_get_typed_answers() {
    // Proves no client input panics a leader: floor above offset, stale fence, bad headers,
    // out-of-range reads.
    let mut net = Net::new(Rules::default());
    net.elect_zero();
    let leader = net.node(0);
    let mut ask = |request| match leader
        .step_collect(Input::Client {
            client: 1,
            request_id: 1,
            request,
        })
        .as_slice()
    {
        [Output::Reply { reply, .. }] => reply.clone(),
        other => panic!("expected one reply, got {other:?}"),
    };
    assert_eq!(
        ask(trim_to(5, 1)),
        Reply::Invalid(InvalidRequest::FloorAboveOffset {
            floor: 5,
            offset: 2
        })
    );
    assert_eq!(
        ask(Request::Append {
            expected_tail: None,
            fence: Some(Token(3)),
            body: vec![],
            headers: Headers::default()
        }),
        Reply::FenceMismatch { current: Token(0) }
    );
    let mut headers = Headers::default();
    headers.0.insert(String::new(), String::new());
    assert!(matches!(
        ask(Request::Append {
            expected_tail: None,
            fence: None,
            body: vec![],
            headers
        }),
        Reply::Invalid(InvalidRequest::MalformedHeaders { .. })
    ));
    assert_eq!(
        ask(Request::Fence {
            new: Token(1),
            old: Token(2)
        }),
        Reply::FenceMismatch { current: Token(0) }
    );
    net.client(
        0,
        Request::Read {
            from: ReadFrom::Offset(9),
            max_records: 1,
        },
    );
    assert_eq!(
        net.replies,
        vec![(
            9,
            1,
            Reply::Invalid(InvalidRequest::ReadPastTail { from: 9, tail: 2 })
        )]
    );
}

// ---- floors, compaction, reads below the floor ----

#[test]
fn follower_applies_the_floor_when_the_commit_reaches_the_trim_and_compacts() {
    // Proves the lazy floor and compaction on a follower in one step: the AppendEntries that
    // commits the trim applies its floor, deletes whole segments below it and seals the state.
    // Node 1 holds the leader's 12 records (noop, 10 writes, the trim) with 11 committed.
    let mut leader_entries = vec![noop(1, 1)];
    for index in 0..10u64 {
        let body = format!("w{index}").into_bytes();
        leader_entries.push(Entry {
            offset: index + 2,
            term: 1,
            command: Command::Write {
                body,
                headers: Headers::default(),
            },
        });
    }
    let trim = Command::Trim {
        floor: 10,
        headers: Headers::with_epoch(2),
        fence: None,
    };
    leader_entries.push(Entry {
        offset: 12,
        term: 1,
        command: trim,
    });
    let mut node = Broker::new(config(1, Rules::default()));
    node.step_collect(Input::Message {
        from: 0,
        message: append_entries(1, (0, 0), leader_entries.clone(), 11),
    });
    assert_eq!(node.floor(), 1);
    let outputs = node.step_collect(Input::Message {
        from: 0,
        message: append_entries(1, (12, 1), vec![], 12),
    });
    let sealed = SealedState {
        writer: Token(0),
        floor: 10,
        floor_tag: Some(Headers::with_epoch(2)),
        floor_trim: Some(12),
        base_offset: 8,
        base_term: 1,
    };
    assert_eq!(
        outputs,
        vec![
            Output::Observe(Event::Committed {
                node: 1,
                entry: leader_entries[11].clone()
            }),
            Output::Observe(Event::FloorApplied {
                node: 1,
                floor: 10,
                trim: Some(12)
            }),
            Output::Persist {
                id: 3,
                op: StorageOp::Compact { below: 9, sealed }
            },
            Output::Observe(Event::SegmentsDeleted {
                node: 1,
                below: 9,
                readable_start: 10,
                retention: false
            }),
            reply_to(0, 1, AppendResult::Accepted { matched: 12 }),
        ]
    );
}

#[test]
fn read_below_the_floor_on_any_node_is_cursor_too_old_with_the_tag() {
    // Proves the refusal carries the floor-setting trim's headers on the leader, a follower and the
    // replica alike.
    let mut net = trimmed_cluster(Rules::default());
    for id in [0, 1, REPLICA] {
        let outputs = net.node(id).step_collect(Input::Client {
            client: 5,
            request_id: 1,
            request: Request::Read {
                from: ReadFrom::Offset(3),
                max_records: 5,
            },
        });
        let reply = Reply::CursorTooOld {
            floor: 10,
            tag: Some(Headers::with_epoch(2)),
        };
        assert_eq!(
            outputs,
            vec![Output::Reply {
                client: 5,
                request_id: 1,
                reply
            }],
            "node {id}"
        );
    }
}

// ---- the trim-point jump ----

#[test]
fn leader_answers_a_catch_up_below_its_first_held_offset_with_trimmed_to() {
    // Proves TrimmedTo is sent (and observed) when a peer needs records the leader deleted.
    let mut net = stranded_cluster();
    assert_eq!(net.node(0).first_held(), 9);
    let state = net.node(0).journal().sealed().clone();
    let outputs = net.node(0).step_collect(Input::Message {
        from: 2,
        message: Message::AppendReply {
            term: 1,
            result: AppendResult::Rejected { next: 2 },
        },
    });
    assert_eq!(
        outputs,
        vec![
            Output::Send {
                to: 2,
                message: Message::TrimmedTo { point: 9, state }
            },
            Output::Observe(Event::TrimmedToSent {
                node: 0,
                to: 2,
                point: 9
            }),
        ]
    );
}

/// Leader 0 wrote, trimmed (floor 10) and compacted below 9 while voter 2 was cut off after the
/// noop; voter 2 is still cut off.
fn stranded_cluster() -> Net {
    let mut net = Net::new(Rules::default());
    net.elect_zero();
    net.cut = vec![2];
    for index in 0..10 {
        net.client(0, write(&format!("w{index}")));
    }
    net.client(0, trim_to(10, 2));
    net.heartbeat(0);
    net.client(0, write("after"));
    net.heartbeat(0);
    net
}

fn jump_state() -> SealedState {
    SealedState {
        writer: Token(3),
        floor: 10,
        floor_tag: Some(Headers::with_epoch(2)),
        floor_trim: Some(12),
        base_offset: 8,
        base_term: 1,
    }
}

/// A follower in term 5 that voted for 2, holding 3 committed records of term 1.
fn stranded_follower(rules: Rules) -> Broker {
    let entries = vec![noop(1, 1), noop(2, 1), noop(3, 1)];
    Broker::recover(
        config(1, rules),
        HardState {
            term: 5,
            vote: Some(2),
        },
        None,
        1,
        entries,
    )
    .expect("a consistent recovered store")
}

#[test]
fn trimmed_to_is_applied_in_one_op_and_never_touches_term_or_vote() {
    // Proves the jump: one TrimmedTo op, Jumped and FloorApplied observed, replication resumes at
    // the point, and the promise (term 5, vote 2) is unchanged.
    let mut node = stranded_follower(Rules::default());
    let outputs = node.step_collect(Input::Message {
        from: 0,
        message: Message::TrimmedTo {
            point: 9,
            state: jump_state(),
        },
    });
    assert_eq!(
        outputs,
        vec![
            Output::Persist {
                id: 1,
                op: StorageOp::TrimmedTo {
                    point: 9,
                    state: SealedState {
                        floor: 9,
                        floor_tag: None,
                        floor_trim: None,
                        ..jump_state()
                    }
                }
            },
            Output::Observe(Event::Jumped {
                node: 1,
                point: 9,
                replica: false
            }),
            Output::Observe(Event::FloorApplied {
                node: 1,
                floor: 9,
                trim: None
            }),
            reply_to(0, 5, AppendResult::Accepted { matched: 8 }),
        ]
    );
    assert_eq!(
        node.hard_state(),
        HardState {
            term: 5,
            vote: Some(2)
        }
    );
    assert_eq!(
        (node.floor(), node.committed(), node.first_held()),
        (9, 8, 9),
        "the floor is the point, never past committed + 1"
    );
}

#[test]
fn a_jumped_node_answers_not_held_until_its_walk_reaches_the_trim_then_the_tagged_refusal() {
    // Proves the second seed's window: after jumping to point 9 (the sender's floor 10 set by the
    // trim at 12), a read below the point is NotHeld at once (the reader asks another node); once
    // the walk reaches the trim at 12, the same read is CursorTooOld floor 10 with that trim's tag.
    let mut node = stranded_follower(Rules::default());
    node.step_collect(Input::Message {
        from: 0,
        message: Message::TrimmedTo {
            point: 9,
            state: jump_state(),
        },
    });
    let read = Input::Client {
        client: 4,
        request_id: 1,
        request: Request::Read {
            from: ReadFrom::Offset(5),
            max_records: 5,
        },
    };
    let answer = |reply| {
        vec![Output::Reply {
            client: 4,
            request_id: 1,
            reply,
        }]
    };
    assert_eq!(
        node.step_collect(read.clone()),
        answer(Reply::NotHeld { from: 5 })
    );
    let trim = Entry {
        offset: 12,
        term: 1,
        command: Command::Trim {
            floor: 10,
            headers: Headers::with_epoch(2),
            fence: None,
        },
    };
    let entries = vec![noop(9, 1), noop(10, 1), noop(11, 1), trim];
    node.step_collect(Input::Message {
        from: 0,
        message: append_entries(5, (8, 1), entries, 11),
    });
    assert_eq!(node.committed(), 11);
    assert_eq!(
        node.step_collect(read.clone()),
        answer(Reply::NotHeld { from: 5 }),
        "the walk has not reached the trim at 12 yet"
    );
    node.step_collect(Input::Message {
        from: 0,
        message: append_entries(5, (12, 1), vec![], 12),
    });
    assert_eq!((node.floor(), node.committed()), (10, 12));
    assert_eq!(
        node.step_collect(read),
        answer(Reply::CursorTooOld {
            floor: 10,
            tag: Some(Headers::with_epoch(2))
        })
    );
}

#[test]
fn jump_resets_term_twin_overwrites_the_promise() {
    // Proves the JumpResetsTerm switch matters: with it off the jump persists the sealed term and
    // no vote, lowering the promise (what TermNeverDecreases catches).
    let mut node = stranded_follower(Rules::twin(TwinName::JumpResetsTerm));
    let outputs = node.step_collect(Input::Message {
        from: 0,
        message: Message::TrimmedTo {
            point: 9,
            state: jump_state(),
        },
    });
    assert_eq!(
        outputs[1],
        Output::Persist {
            id: 2,
            op: StorageOp::HardState(HardState {
                term: 1,
                vote: None
            })
        }
    );
    assert_eq!(
        node.hard_state(),
        HardState {
            term: 1,
            vote: None
        }
    );
}

#[test]
fn trimmed_to_at_or_below_the_floor_is_ignored() {
    // Proves a point the node already passed changes nothing and asks again from its tail.
    let mut node = stranded_follower(Rules::default());
    node.step_collect(Input::Message {
        from: 0,
        message: Message::TrimmedTo {
            point: 9,
            state: jump_state(),
        },
    });
    let older = SealedState {
        floor: 5,
        floor_trim: Some(6),
        base_offset: 4,
        ..jump_state()
    };
    let outputs = node.step_collect(Input::Message {
        from: 0,
        message: Message::TrimmedTo {
            point: 5,
            state: older,
        },
    });
    assert_eq!(
        outputs,
        vec![reply_to(0, 5, AppendResult::Rejected { next: 9 })]
    );
    assert_eq!((node.floor(), node.first_held()), (9, 9));
}

#[test]
fn replica_jumps_too_and_answers_not_held_for_a_range_it_skipped() {
    // Proves the replica takes the same jump, and that a jumped node answers NotHeld for a range
    // above its floor it does not hold (a sender whose state names a floor below its point).
    let mut replica = Broker::new(config(REPLICA, Rules::default()));
    let state = SealedState {
        floor: 5,
        floor_tag: None,
        floor_trim: None,
        ..jump_state()
    };
    let outputs = replica.step_collect(Input::Message {
        from: 0,
        message: Message::TrimmedTo {
            point: 9,
            state: state.clone(),
        },
    });
    assert_eq!(
        outputs,
        vec![
            Output::Persist {
                id: 1,
                op: StorageOp::TrimmedTo { point: 9, state }
            },
            Output::Observe(Event::Jumped {
                node: REPLICA,
                point: 9,
                replica: true
            }),
            Output::Observe(Event::FloorApplied {
                node: REPLICA,
                floor: 5,
                trim: None
            }),
            reply_to(0, 0, AppendResult::Accepted { matched: 8 }),
        ]
    );
    let read = |from| Input::Client {
        client: 1,
        request_id: 1,
        request: Request::Read {
            from: ReadFrom::Offset(from),
            max_records: 5,
        },
    };
    assert_eq!(
        replica.step_collect(read(6)),
        vec![Output::Reply {
            client: 1,
            request_id: 1,
            reply: Reply::NotHeld { from: 6 }
        }]
    );
    // Below a floor that no trim set (the sender's own floor came from a jump), the node knows
    // neither the floor-setting trim nor its tag: NotHeld too, the reader asks another node.
    assert_eq!(
        replica.step_collect(read(2)),
        vec![Output::Reply {
            client: 1,
            request_id: 1,
            reply: Reply::NotHeld { from: 2 }
        }]
    );
}

#[test]
fn stranded_follower_recovers_by_jumping_through_the_cluster() {
    // Proves end to end with the test driver: a voter cut off while the cluster trims and compacts
    // past it comes back, is sent TrimmedTo, jumps, and converges to the leader's committed prefix.
    let mut net = stranded_cluster();
    assert_eq!(net.node(0).first_held(), 9);
    assert_eq!(net.node(2).tail(), 2);
    net.cut.clear();
    net.heartbeat(0);
    net.heartbeat(0);
    let leader_committed = net.node(0).committed();
    let node = net.node(2);
    assert_eq!(node.first_held(), 9);
    assert_eq!(node.committed(), leader_committed);
    assert_eq!(node.floor(), 10);
    assert_eq!(node.floor_tag(), Some(&Headers::with_epoch(2)));
    assert_eq!(node.term(), 1);
}

#[test]
fn a_jump_that_raises_no_floor_observes_no_floor_applied() {
    // Proves `FloorApplied` after a jump means the floor moved: a sender's state whose floor is
    // not above the node's own (no trim below the point) is adopted with a Jumped event only.
    let mut node = stranded_follower(Rules::default());
    let floor = node.floor();
    let state = SealedState {
        floor,
        floor_tag: None,
        floor_trim: None,
        ..jump_state()
    };
    let outputs = node.step_collect(Input::Message {
        from: 0,
        message: Message::TrimmedTo {
            point: 9,
            state: state.clone(),
        },
    });
    assert_eq!(
        outputs,
        vec![
            Output::Persist {
                id: 1,
                op: StorageOp::TrimmedTo { point: 9, state }
            },
            Output::Observe(Event::Jumped {
                node: 1,
                point: 9,
                replica: false
            }),
            reply_to(0, 5, AppendResult::Accepted { matched: 8 }),
        ]
    );
    assert_eq!(node.floor(), floor);
}

#[test]
fn floor_past_commit_twin_observes_the_floor_where_the_trim_is_appended() {
    // Proves the FloorPastCommit switch is visible in the history: with it, the leader's floor
    // moves (and is observed, with its trim) in the step that appends the trim; with the rule on,
    // that step observes no floor at all (the walk observes it later).
    for (rules, at_append) in [
        (Rules::default(), false),
        (Rules::twin(TwinName::FloorPastCommit), true),
    ] {
        let mut net = Net::new(rules);
        net.elect_zero();
        for index in 0..10 {
            net.client(0, write(&format!("w{index}")));
        }
        let leader = net.node(0);
        let outputs = leader.step_collect(Input::Client {
            client: 7,
            request_id: 5,
            request: trim_to(10, 2),
        });
        let floors: Vec<&Output> = outputs
            .iter()
            .filter(|output| matches!(output, Output::Observe(Event::FloorApplied { .. })))
            .collect();
        if at_append {
            assert_eq!(
                floors,
                vec![&Output::Observe(Event::FloorApplied {
                    node: 0,
                    floor: 10,
                    trim: Some(12)
                })]
            );
            assert_eq!(leader.floor(), 10);
        } else {
            assert!(floors.is_empty(), "{outputs:?}");
            assert_eq!(leader.floor(), 1);
        }
    }
}

// ---- the leader's view of its peers ----

#[test]
fn stale_and_reordered_append_replies_never_send_a_peer_below_what_it_matched() {
    // Proves the leader's progress bookkeeping (one record per AppendEntries here): a reply of an
    // older term is ignored; a stale Rejected sends the peer back only to just past what it
    // matched; an Accepted moves `next` past what it matched, sending the next record at once to
    // a peer still behind and nothing to one caught up; an Accepted beyond the leader's log
    // counts only to the log's end.
    let mut net = Net::new(Rules::default());
    let mut one_per_message = config(0, Rules::default());
    one_per_message.append_entries_max = 1;
    net.nodes.insert(0, Broker::new(one_per_message));
    net.elect_zero();
    let leader = net.node(0);
    assert_eq!(leader.progress()[&1].matched, 1);
    // A reply of an older term (to a leader of that term) is not about this term's log.
    let stale = Input::Message {
        from: 1,
        message: Message::AppendReply {
            term: 0,
            result: AppendResult::Rejected { next: 1 },
        },
    };
    assert_eq!(leader.step_collect(stale), vec![]);
    // Three writes, each sent at once to the caught-up peers (nothing is delivered from here).
    for body in ["a", "b", "c"] {
        leader.step_collect(Input::Client {
            client: 7,
            request_id: 1,
            request: write(body),
        });
    }
    assert_eq!(leader.tail(), 5);
    assert_eq!(leader.progress()[&1].next, 5);
    let entry = |offset: Offset, body: &str| Entry {
        offset,
        term: 1,
        command: Command::Write {
            body: body.as_bytes().to_vec(),
            headers: Headers::default(),
        },
    };
    let reply = |from, result| Input::Message {
        from,
        message: Message::AppendReply { term: 1, result },
    };
    let send = |prev: (Offset, Term), entries| Output::Send {
        to: 1,
        message: append_entries(1, prev, entries, 1),
    };
    // A stale Rejected asking for 1: peer 1 matched 1, so it is sent record 2.
    assert_eq!(
        leader.step_collect(reply(1, AppendResult::Rejected { next: 1 })),
        vec![send((1, 1), vec![entry(2, "a")])]
    );
    // Peer 1 holds 2 now and is still behind: record 3 goes at once.
    assert_eq!(
        leader.step_collect(reply(1, AppendResult::Accepted { matched: 2 })),
        vec![send((2, 1), vec![entry(3, "b")])]
    );
    // A late Accepted for all three records (sent before the Rejected): next is past 4, the
    // tail; nothing more to send.
    assert_eq!(
        leader.step_collect(reply(1, AppendResult::Accepted { matched: 4 })),
        vec![]
    );
    assert_eq!(leader.progress()[&1].matched, 4);
    assert_eq!(leader.progress()[&1].next, 5);
    // A claim beyond the log (offset 9) counts as the leader's last offset, 4.
    leader.step_collect(reply(2, AppendResult::Accepted { matched: 9 }));
    assert_eq!(leader.progress()[&2].matched, 4);
    assert_eq!(leader.progress()[&2].next, 5);
}

// ---- read-index edges ----

fn read_request(request_id: RequestId) -> Input {
    Input::Client {
        client: 7,
        request_id,
        request: Request::Read {
            from: ReadFrom::Offset(1),
            max_records: 10,
        },
    }
}

fn probe_ack(from: NodeId, term: Term, round: u64) -> Input {
    Input::Message {
        from,
        message: Message::ReadProbeAck { term, round },
    }
}

fn record_x() -> ReadRecord {
    ReadRecord {
        offset: 2,
        body: b"x".to_vec(),
        headers: Headers::default(),
    }
}

#[test]
fn a_leaders_read_is_confirmed_only_by_a_voter_answering_its_round_in_its_term() {
    // Proves what confirms a read at the leader: while the read waits for round 1 a tick sends no
    // second round; an answer in an older term, an answer from the replica (not a voter) and an
    // answer to a round never sent confirm nothing; a voter answering round 1 serves it.
    let mut net = Net::new(Rules::default());
    net.elect_zero();
    net.client(0, write("x"));
    net.heartbeat(0);
    let leader = net.node(0);
    let probe = Message::ReadProbe { term: 1, round: 1 };
    assert_eq!(
        leader.step_collect(read_request(1)),
        vec![
            Output::Send {
                to: 1,
                message: probe.clone()
            },
            Output::Send {
                to: 2,
                message: probe
            },
        ]
    );
    assert_eq!(leader.step_collect(Input::Tick), vec![]);
    for (from, term, round) in [(1, 0, 1), (REPLICA, 1, 1), (1, 1, 2)] {
        assert_eq!(
            leader.step_collect(probe_ack(from, term, round)),
            vec![],
            "an answer from {from} in term {term} to round {round} confirms nothing"
        );
    }
    assert_eq!(
        leader.step_collect(probe_ack(2, 1, 1)),
        vec![Output::Reply {
            client: 7,
            request_id: 1,
            reply: Reply::Records {
                records: vec![record_x()],
                next: 3
            }
        }]
    );
}

#[test]
fn the_unconfirmed_reads_twin_serves_at_the_commit_index_without_a_round() {
    // Proves the UnconfirmedReads switch: with the rule off the leader serves a read at once from
    // its commit index and sends no probe (the rule-on leader sends round 1, above).
    let mut net = Net::new(Rules::twin(TwinName::UnconfirmedReads));
    net.elect_zero();
    net.client(0, write("x"));
    net.heartbeat(0);
    let records = Reply::Records {
        records: vec![record_x()],
        next: 3,
    };
    let served = |request_id| Output::Reply {
        client: 7,
        request_id,
        reply: records.clone(),
    };
    assert_eq!(net.node(0).step_collect(read_request(1)), vec![served(1)]);
    assert_eq!(net.node(0).step_collect(Input::Tick), vec![]);
    assert_eq!(net.node(0).step_collect(read_request(2)), vec![served(2)]);
}

#[test]
fn a_leaders_waiting_reads_are_refused_when_too_old_or_when_it_is_deposed() {
    // Proves the leader never holds a read it cannot confirm: a follower's question is refused
    // after exactly `read_wait_ticks_max` ticks without a majority; when the leader is deposed,
    // both a question and a client read waiting for its round are refused in that step; a node
    // that does not lead refuses a question at once.
    let mut net = Net::new(Rules::default());
    net.elect_zero();
    let leader = net.node(0);
    let wait = leader.config().read_wait_ticks_max;
    let question = |number| Input::Message {
        from: REPLICA,
        message: Message::ReadIndex { ask: ask(number) },
    };
    let refusal = |number| Output::Send {
        to: REPLICA,
        message: Message::ReadIndexReply {
            ask: ask(number),
            index: None,
        },
    };
    let probes = leader.step_collect(question(7));
    assert_eq!(
        probes.len(),
        2,
        "one round to both other voters: {probes:?}"
    );
    for tick in 1..=wait + 1 {
        let outputs = leader.step_collect(Input::Tick);
        let refused = outputs.contains(&refusal(7));
        assert_eq!(refused, tick == wait + 1, "tick {tick}: {outputs:?}");
    }
    leader.step_collect(question(8));
    leader.step_collect(read_request(4));
    let outputs = leader.step_collect(Input::Message {
        from: 1,
        message: append_entries(2, (1, 1), vec![], 1),
    });
    assert_eq!(leader.role(), Role::Follower);
    assert!(outputs.contains(&refusal(8)), "{outputs:?}");
    assert!(
        outputs.contains(&Output::Reply {
            client: 7,
            request_id: 4,
            reply: Reply::NoReadIndex { hint: Some(1) }
        }),
        "{outputs:?}"
    );
    assert_eq!(leader.step_collect(question(9)), vec![refusal(9)]);
}

#[test]
fn a_node_allowed_no_waiting_reads_refuses_every_read_that_needs_an_index() {
    // Proves `pending_reads_max = 0`: a leader refuses every client read and every question that
    // needs an index, at once, and holds nothing.
    let mut net = Net::new(Rules::default());
    let mut none = config(0, Rules::default());
    none.pending_reads_max = 0;
    net.nodes.insert(0, Broker::new(none));
    net.elect_zero();
    let leader = net.node(0);
    assert_eq!(
        leader.step_collect(read_request(1)),
        vec![Output::Reply {
            client: 7,
            request_id: 1,
            reply: Reply::NoReadIndex { hint: Some(0) }
        }]
    );
    assert_eq!(
        leader.step_collect(Input::Message {
            from: 1,
            message: Message::ReadIndex { ask: ask(1) }
        }),
        vec![Output::Send {
            to: 1,
            message: Message::ReadIndexReply {
                ask: ask(1),
                index: None
            }
        }]
    );
}
