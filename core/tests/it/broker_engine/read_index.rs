//! Read-index edges.

use super::*;

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
