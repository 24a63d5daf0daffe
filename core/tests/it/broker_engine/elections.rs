//! Elections: campaigns, votes, the replica that never votes.

use super::*;

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
