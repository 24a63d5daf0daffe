//! The trim-point jump.

use super::*;

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
