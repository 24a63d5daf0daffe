//! Floors, compaction, reads below the floor.

use super::*;

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
