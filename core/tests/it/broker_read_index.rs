//! Engine tests of the read index at a follower: each answer serves only the question that asked
//! it, within one incarnation and across a restart. Each test sets up a node, feeds it inputs with
//! `Broker::step_collect`, and compares its outputs whole.

use felix_core::api::{ReadFrom, ReadRecord, Reply, Request, RequestId};
use felix_core::broker::{Ask, Broker, BrokerConfig, Input, Message, Output};
use felix_core::record::{Command, Entry, Headers, NodeId, Offset, Term};
use felix_core::storage::HardState;

/// Follower 2 of voters 0, 1, 2, in its incarnation `incarnation`, reads waiting at most 3 ticks.
fn config(incarnation: u64) -> BrokerConfig {
    let mut config = BrokerConfig::new(2, vec![0, 1, 2], Vec::new());
    config.election_timeout_ticks = 100;
    config.read_wait_ticks_max = 3;
    config.incarnation = incarnation;
    config
}

fn ask(incarnation: u64, number: u64) -> Ask {
    Ask {
        incarnation,
        number,
    }
}

fn write(offset: Offset, body: &[u8]) -> Entry {
    Entry {
        offset,
        term: 1,
        command: Command::Write {
            body: body.to_vec(),
            headers: Headers::default(),
        },
    }
}

fn noop(offset: Offset, term: Term) -> Entry {
    Entry {
        offset,
        term,
        command: Command::Noop,
    }
}

fn record(offset: Offset, body: &[u8]) -> ReadRecord {
    ReadRecord {
        offset,
        body: body.to_vec(),
        headers: Headers::default(),
    }
}

/// Leader 0 of term 1 sends `entries` after `prev` and tells its commit index `committed`.
fn append_entries(prev: (Offset, Term), entries: Vec<Entry>, committed: Offset) -> Input {
    Input::Message {
        from: 0,
        message: Message::AppendEntries {
            term: 1,
            prev_offset: prev.0,
            prev_term: prev.1,
            entries,
            committed,
        },
    }
}

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

fn answer(from: NodeId, ask: Ask, index: Offset) -> Input {
    Input::Message {
        from,
        message: Message::ReadIndexReply {
            ask,
            index: Some(index),
        },
    }
}

#[test]
fn a_follower_matches_each_answer_to_its_question_and_gives_up_in_time() {
    // Proves the follower's side: each read asks under its own number and an answer serves only
    // the read that asked it; a read whose index the walk has not reached, and one never
    // answered, wait exactly `read_wait_ticks_max` ticks and are then refused, retriably.
    let mut node = Broker::new(config(0));
    node.step_collect(append_entries((0, 0), vec![noop(1, 1), write(2, b"x")], 2));
    assert_eq!(node.committed(), 2);
    for number in 1..=3 {
        assert_eq!(
            node.step_collect(read_request(number)),
            vec![Output::Send {
                to: 0,
                message: Message::ReadIndex {
                    ask: ask(0, number)
                }
            }]
        );
    }
    assert_eq!(
        node.step_collect(answer(0, ask(0, 2), 2)),
        vec![Output::Reply {
            client: 7,
            request_id: 2,
            reply: Reply::Records {
                records: vec![record(2, b"x")],
                next: 3
            }
        }]
    );
    // Read 3's index is beyond this node's walk; read 1 is never answered.
    assert_eq!(node.step_collect(answer(0, ask(0, 3), 5)), vec![]);
    for _ in 0..3 {
        assert_eq!(node.step_collect(Input::Tick), vec![]);
    }
    let refused = |request_id| Output::Reply {
        client: 7,
        request_id,
        reply: Reply::NoReadIndex { hint: Some(0) },
    };
    assert_eq!(node.step_collect(Input::Tick), vec![refused(1), refused(3)]);
}

#[test]
fn an_answer_to_a_question_asked_before_a_restart_serves_no_later_read() {
    // Proves the regression `felix replay --seed 7063` found: a follower asks question 1, crashes
    // and restarts (its question counter starts again at 1), and the leader's answer to the
    // question asked before the crash, index 2, arrives while a read sent after a write at 3 was
    // acknowledged waits under the new question 1. Matched by number alone it would serve the
    // read without the acknowledged write (a stale read); named by the incarnation too, it serves
    // nothing, and the answer to the new question serves the write.
    let mut before = Broker::new(config(0));
    before.step_collect(append_entries((0, 0), vec![noop(1, 1), write(2, b"x")], 2));
    let asked = before.step_collect(read_request(1));
    let old = ask(0, 1);
    let question = |ask| Output::Send {
        to: 0,
        message: Message::ReadIndex { ask },
    };
    assert_eq!(asked, vec![question(old)]);
    let hard_state = HardState {
        term: before.term(),
        vote: before.vote(),
    };
    let entries = vec![noop(1, 1), write(2, b"x")];
    let mut after = Broker::recover(config(1), hard_state, None, 1, entries).expect("its own log");
    after.step_collect(append_entries((2, 1), vec![write(3, b"y")], 2));
    let new = ask(1, 1);
    assert_eq!(after.step_collect(read_request(2)), vec![question(new)]);
    assert_eq!(after.step_collect(answer(0, old, 2)), vec![]);
    after.step_collect(append_entries((3, 1), vec![], 3));
    assert_eq!(
        after.step_collect(answer(0, new, 3)),
        vec![Output::Reply {
            client: 7,
            request_id: 2,
            reply: Reply::Records {
                records: vec![record(2, b"x"), record(3, b"y")],
                next: 4
            }
        }]
    );
}
