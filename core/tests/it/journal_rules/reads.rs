//! Reads: the committed prefix, past the tail, below the floor, the twins that serve or refuse
//! otherwise.

use super::*;

#[test]
fn reads_skip_bookkeeping_records_and_serve_only_the_committed_prefix() {
    // Proves readers see writes only, and nothing past the committed index.
    let mut journal = journal();
    land(
        &mut journal,
        Request::Fence {
            new: Token(1),
            old: Token(0),
        },
    );
    land(&mut journal, write(None, None, "a"));
    land(&mut journal, trim(None, None, 2, 1));
    land(&mut journal, write(None, None, "b"));
    land(&mut journal, write(None, None, "uncommitted"));
    let mut events = Vec::new();
    journal.commit_to(4, &mut events);
    let record = |offset: Offset, body: &str| ReadRecord {
        offset,
        body: body.as_bytes().to_vec(),
        headers: Headers::default(),
    };
    assert_eq!(
        read(&journal, 2),
        Reply::Records {
            records: vec![record(2, "a"), record(4, "b")],
            next: 5
        }
    );
    assert_eq!(
        read(&journal, 5),
        Reply::Records {
            records: vec![],
            next: 5
        }
    );
    assert_eq!(
        journal.read(ReadFrom::Offset(2), 1),
        Reply::Records {
            records: vec![record(2, "a")],
            next: 3
        }
    );
}

#[test]
fn read_past_the_committed_tail_is_invalid() {
    // Proves an out-of-range read gets a typed error.
    let mut journal = journal();
    fill(&mut journal, 3);
    let mut events = Vec::new();
    journal.commit_to(2, &mut events);
    assert_eq!(
        read(&journal, 4),
        Reply::Invalid(InvalidRequest::ReadPastTail { from: 4, tail: 3 })
    );
    assert_eq!(
        read(&journal, u64::MAX),
        Reply::Invalid(InvalidRequest::ReadPastTail {
            from: u64::MAX,
            tail: 3
        })
    );
}

#[test]
fn read_below_the_floor_is_cursor_too_old_tagged_with_the_floor_trims_headers() {
    // Proves the tag (Untagged and HiddenTrims twins): the refusal carries the headers of the trim
    // that set the floor; with either rule off it carries nothing.
    for (rules, tagged) in [
        (Rules::default(), true),
        (Rules::twin(TwinName::Untagged), false),
        (Rules::twin(TwinName::HiddenTrims), false),
    ] {
        let mut journal = Journal::new(config(rules));
        fill(&mut journal, 1);
        land(&mut journal, trim(None, None, 2, 2));
        commit_all(&mut journal);
        let tag = if tagged {
            Some(Headers::with_epoch(2))
        } else {
            None
        };
        assert_eq!(read(&journal, 1), Reply::CursorTooOld { floor: 2, tag });
        assert_eq!(
            read(&journal, 2),
            Reply::Records {
                records: vec![],
                next: 3
            }
        );
    }
}

#[test]
fn visible_trims_twin_serves_trim_records_and_refuses_untagged() {
    // Proves the VisibleTrims switch (the rejected first fix): readers are served the trim records
    // themselves (their headers, an empty body) and the refusal below the floor carries no tag;
    // under the default rules the same read skips the trim.
    let mut journal = Journal::new(config(Rules::twin(TwinName::VisibleTrims)));
    fill(&mut journal, 1);
    land(&mut journal, trim(None, None, 2, 2));
    land(&mut journal, write(None, None, "b"));
    commit_all(&mut journal);
    assert_eq!(
        read(&journal, 1),
        Reply::CursorTooOld {
            floor: 2,
            tag: None
        }
    );
    let trim_record = ReadRecord {
        offset: 2,
        body: Vec::new(),
        headers: Headers::with_epoch(2),
    };
    let write_record = ReadRecord {
        offset: 3,
        body: b"b".to_vec(),
        headers: Headers::default(),
    };
    assert_eq!(
        read(&journal, 2),
        Reply::Records {
            records: vec![trim_record, write_record.clone()],
            next: 4
        }
    );

    let mut journal = self::journal();
    fill(&mut journal, 1);
    land(&mut journal, trim(None, None, 2, 2));
    land(&mut journal, write(None, None, "b"));
    commit_all(&mut journal);
    assert_eq!(
        read(&journal, 2),
        Reply::Records {
            records: vec![write_record],
            next: 4
        }
    );
}

#[test]
fn read_without_index_answers_only_the_refusals() {
    // Proves the part of a read that needs no read index: below the readable start the same
    // CursorTooOld a read answers, in a jumped-over range NotHeld, and nothing (None: the read
    // needs the index) where records could be served or for Earliest.
    let mut journal = journal();
    fill(&mut journal, 2);
    land(&mut journal, trim(None, None, 2, 2));
    commit_all(&mut journal);
    assert_eq!(
        journal.read_without_index(ReadFrom::Offset(1)),
        Some(read(&journal, 1))
    );
    assert!(matches!(
        journal.read_without_index(ReadFrom::Offset(1)),
        Some(Reply::CursorTooOld { floor: 2, .. })
    ));
    assert_eq!(journal.read_without_index(ReadFrom::Offset(2)), None);
    assert_eq!(journal.read_without_index(ReadFrom::Earliest), None);

    let mut jumped = self::journal();
    jumped.jump(9, jump_state(9, 5));
    assert_eq!(
        jumped.read_without_index(ReadFrom::Offset(6)),
        Some(Reply::NotHeld { from: 6 })
    );
    assert_eq!(jumped.read_without_index(ReadFrom::Offset(9)), None);
}

#[test]
fn read_from_earliest_resolves_to_the_floor_and_is_never_refused() {
    // Proves Earliest resolves to the floor (which is why a holder must not use it).
    let mut journal = journal();
    fill(&mut journal, 3);
    land(&mut journal, trim(None, None, 3, 2));
    commit_all(&mut journal);
    let expected = Reply::Records {
        records: vec![ReadRecord {
            offset: 3,
            body: b"w2".to_vec(),
            headers: Headers::default(),
        }],
        next: 5,
    };
    assert_eq!(journal.read(ReadFrom::Earliest, 10), expected);
}
