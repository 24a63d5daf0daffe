//! Writes, commit and the deposed leader; redirects, reads at a read index and bad requests.

use super::*;

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
