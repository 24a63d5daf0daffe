//! One test per journal rule (`journal/mod.rs` lists them), each named for what it proves and each
//! failing if its rule is removed; where the rule has a switch, the twin's behaviour is asserted
//! too, so the switch is shown to matter.

use felix_core::api::{InvalidRequest, ReadFrom, ReadRecord, Reply, Request};
use felix_core::journal::{Journal, JournalConfig, Jump, Sequenced, TrimIndex, WalkEvent};
use felix_core::record::{Command, Entry, Headers, Offset, Term, Token};
use felix_core::rules::{Rules, TwinName};

use super::journal_support::{config, fill, journal, land, trim, write};
use felix_core::storage::{SealedState, StorageOp};

fn answer(journal: &mut Journal, request: Request) -> Reply {
    match journal.sequence(1, request) {
        Sequenced::Answered(reply) => reply,
        Sequenced::Appended { offset, .. } => panic!("expected an answer, appended at {offset}"),
    }
}

fn commit_all(journal: &mut Journal) -> Vec<WalkEvent> {
    let mut events = Vec::new();
    let last = journal.last_offset();
    journal.commit_to(last, &mut events);
    events
}

fn read(journal: &Journal, from: Offset) -> Reply {
    journal.read(ReadFrom::Offset(from), 100)
}

// ---- the sequencing step ----

#[test]
fn append_at_a_stale_expected_tail_is_refused_and_writes_nothing() {
    // Proves the tail check: a mismatch names the tail and appends nothing.
    let mut journal = journal();
    fill(&mut journal, 2);
    assert_eq!(
        answer(&mut journal, write(Some(2), None, "late")),
        Reply::OffsetMismatch { tail: 3 }
    );
    assert_eq!(journal.tail(), 3);
    assert_eq!(land(&mut journal, write(Some(3), None, "on time")), 3);
}

#[test]
fn tail_check_counts_uncommitted_records() {
    // Proves the check is against the node's own log including uncommitted records (not a
    // pre-check against the committed prefix): two writers expecting the same tail, one lands.
    let mut journal = journal();
    assert_eq!(land(&mut journal, write(Some(1), None, "first")), 1);
    assert_eq!(journal.committed(), 0);
    assert_eq!(
        answer(&mut journal, write(Some(1), None, "second")),
        Reply::OffsetMismatch { tail: 2 }
    );
}

#[test]
fn append_under_a_stale_fence_is_refused_with_the_token_in_force() {
    // Proves the fence check, against the token set by an (uncommitted) fence record.
    let mut journal = journal();
    land(
        &mut journal,
        Request::Fence {
            new: Token(7),
            old: Token(0),
        },
    );
    assert_eq!(
        answer(&mut journal, write(None, Some(Token(3)), "stale")),
        Reply::FenceMismatch { current: Token(7) }
    );
    assert_eq!(journal.tail(), 2);
    assert_eq!(
        land(&mut journal, write(None, Some(Token(7)), "current")),
        2
    );
    assert_eq!(
        answer(
            &mut journal,
            Request::Fence {
                new: Token(9),
                old: Token(3)
            }
        ),
        Reply::FenceMismatch { current: Token(7) }
    );
}

#[test]
fn trim_floor_above_its_own_offset_is_invalid() {
    // Proves a trim may ask for a floor at most its own offset.
    let mut journal = journal();
    fill(&mut journal, 2);
    assert_eq!(
        answer(&mut journal, trim(None, None, 4, 1)),
        Reply::Invalid(InvalidRequest::FloorAboveOffset {
            floor: 4,
            offset: 3
        })
    );
    assert_eq!(journal.tail(), 3);
    assert_eq!(land(&mut journal, trim(None, None, 3, 1)), 3);
}

#[test]
fn trim_at_or_below_the_floor_is_a_noop_that_answers_the_tail() {
    // Proves a no-op trim writes nothing and answers the tail.
    let mut journal = journal();
    fill(&mut journal, 2);
    land(&mut journal, trim(None, None, 2, 1));
    commit_all(&mut journal);
    assert_eq!(journal.floor(), 2);
    assert_eq!(
        answer(&mut journal, trim(Some(4), None, 2, 1)),
        Reply::TrimNoop { tail: 4 }
    );
    assert_eq!(
        answer(&mut journal, trim(Some(4), None, 1, 1)),
        Reply::TrimNoop { tail: 4 }
    );
    assert_eq!(journal.tail(), 4);
}

#[test]
fn noop_trim_still_checks_the_tail() {
    // Proves rule 4 (NoopSkip twin): a no-op trim at a stale tail is refused, so it cannot leak
    // the tail to a stale holder; with the rule off it answers the tail.
    for (rules, expected) in [
        (Rules::default(), Reply::OffsetMismatch { tail: 4 }),
        (Rules::twin(TwinName::NoopSkip), Reply::TrimNoop { tail: 4 }),
    ] {
        let mut journal = Journal::new(config(rules));
        fill(&mut journal, 2);
        land(&mut journal, trim(None, None, 2, 2));
        commit_all(&mut journal);
        assert_eq!(answer(&mut journal, trim(Some(2), None, 1, 1)), expected);
        assert_eq!(journal.tail(), 4);
    }
}

#[test]
fn noop_trim_still_checks_the_fence() {
    // Proves a no-op trim is refused under a stale fence.
    let mut journal = journal();
    land(
        &mut journal,
        Request::Fence {
            new: Token(2),
            old: Token(0),
        },
    );
    assert_eq!(
        answer(&mut journal, trim(None, Some(Token(1)), 1, 1)),
        Reply::FenceMismatch { current: Token(2) }
    );
}

#[test]
fn malformed_requests_are_invalid_never_written() {
    // Proves bad client input gets a typed answer: empty header key, oversized headers, body.
    let mut journal = journal();
    let mut headers = Headers::default();
    headers.0.insert(String::new(), "x".to_string());
    let empty_key = Request::Append {
        expected_tail: None,
        fence: None,
        body: vec![],
        headers: headers.clone(),
    };
    assert!(matches!(
        answer(&mut journal, empty_key),
        Reply::Invalid(InvalidRequest::MalformedHeaders { .. })
    ));
    let trim_empty_key = Request::Trim {
        expected_tail: None,
        fence: None,
        floor: 1,
        headers,
    };
    assert!(matches!(
        answer(&mut journal, trim_empty_key),
        Reply::Invalid(InvalidRequest::MalformedHeaders { .. })
    ));
    let mut big = Headers::default();
    big.0.insert("k".to_string(), "v".repeat(5000));
    let big_headers = Request::Append {
        expected_tail: None,
        fence: None,
        body: vec![],
        headers: big,
    };
    assert!(matches!(
        answer(&mut journal, big_headers),
        Reply::Invalid(InvalidRequest::MalformedHeaders { .. })
    ));
    let body = vec![0u8; (1 << 20) + 1];
    let big_body = Request::Append {
        expected_tail: None,
        fence: None,
        body,
        headers: Headers::default(),
    };
    assert_eq!(
        answer(&mut journal, big_body),
        Reply::Invalid(InvalidRequest::TooLarge {
            bytes: (1 << 20) + 1,
            limit: 1 << 20
        })
    );
    assert_eq!(journal.tail(), 1);
}

#[test]
fn size_limits_admit_exactly_the_limit() {
    // Proves the limits are inclusive and count what they say: a body of exactly
    // `body_bytes_max` bytes lands; headers are counted as keys plus values over every pair, and
    // exactly `headers_bytes_max` of them land while one byte more (in one pair or spread over
    // two) is malformed.
    let mut journal = journal();
    let append = |body: Vec<u8>, pairs: &[(&str, usize)]| {
        let mut headers = Headers::default();
        for (key, value_bytes) in pairs {
            headers.0.insert(key.to_string(), "v".repeat(*value_bytes));
        }
        Request::Append {
            expected_tail: None,
            fence: None,
            body,
            headers,
        }
    };
    assert_eq!(land(&mut journal, append(vec![0u8; 1 << 20], &[])), 1);
    assert_eq!(land(&mut journal, append(vec![], &[("k", 4095)])), 2);
    assert_eq!(
        land(&mut journal, append(vec![], &[("k", 2000), ("j", 2094)])),
        3
    );
    for too_big in [
        append(vec![], &[("k", 4096)]),
        append(vec![], &[("k", 2000), ("j", 2095)]),
    ] {
        assert_eq!(
            answer(&mut journal, too_big),
            Reply::Invalid(InvalidRequest::MalformedHeaders {
                reason: "headers take 4097 bytes, above the limit of 4096".to_string()
            })
        );
    }
    assert_eq!(journal.tail(), 4);
}

// ---- the lazy floor ----

#[test]
fn floor_is_applied_when_the_walk_reaches_the_trim() {
    // Proves the lazy floor (FloorPastCommit twin): an appended trim does not move the floor until
    // it is committed; with the rule off it moves at once.
    let mut journal = journal();
    fill(&mut journal, 2);
    let at = land(&mut journal, trim(None, None, 2, 1));
    assert_eq!(journal.floor(), 1);
    let mut events = Vec::new();
    journal.commit_to(2, &mut events);
    assert_eq!(journal.floor(), 1);
    events.clear();
    journal.commit_to(at, &mut events);
    assert_eq!(
        events,
        vec![
            WalkEvent::Committed { offset: 3 },
            WalkEvent::FloorApplied { floor: 2, trim: 3 }
        ]
    );
    assert_eq!(journal.floor(), 2);

    let mut twin = Journal::new(config(Rules::twin(TwinName::FloorPastCommit)));
    fill(&mut twin, 2);
    land(&mut twin, trim(None, None, 2, 1));
    assert_eq!(twin.floor(), 2);
    assert_eq!(twin.committed(), 0);
}

#[test]
fn floor_never_decreases() {
    // Proves a committed trim asking for a lower floor leaves the floor where it is.
    let mut journal = journal();
    let entries = vec![
        Entry {
            offset: 1,
            term: 1,
            command: Command::Noop,
        },
        Entry {
            offset: 2,
            term: 1,
            command: Command::Trim {
                floor: 2,
                headers: Headers::with_epoch(2),
                fence: None,
            },
        },
        Entry {
            offset: 3,
            term: 1,
            command: Command::Trim {
                floor: 1,
                headers: Headers::with_epoch(1),
                fence: None,
            },
        },
    ];
    let mut ops = Vec::new();
    assert_eq!(journal.append_replicated(0, 0, entries, &mut ops), Ok(3));
    let events = commit_all(&mut journal);
    assert!(events.contains(&WalkEvent::FloorApplied { floor: 2, trim: 2 }));
    assert_eq!(journal.floor(), 2);
    assert_eq!(journal.floor_tag(), Some(&Headers::with_epoch(2)));
}

#[test]
fn stale_fenced_trim_is_refused_in_place_by_the_walk() {
    // Proves the walk's fence check (UnfencedTruncate twin): a committed trim whose fence is not
    // the writer in force is refused in place, the floor unmoved; with the rule off it applies.
    for (rules, refused) in [
        (Rules::default(), true),
        (Rules::twin(TwinName::UnfencedTruncate), false),
    ] {
        let mut journal = Journal::new(config(rules));
        let entries = vec![
            Entry {
                offset: 1,
                term: 1,
                command: Command::Fence {
                    new: Token(1),
                    old: Token(0),
                },
            },
            Entry {
                offset: 2,
                term: 1,
                command: Command::Fence {
                    new: Token(2),
                    old: Token(1),
                },
            },
            Entry {
                offset: 3,
                term: 1,
                command: Command::Trim {
                    floor: 3,
                    headers: Headers::default(),
                    fence: Some(Token(1)),
                },
            },
        ];
        let mut ops = Vec::new();
        assert_eq!(journal.append_replicated(0, 0, entries, &mut ops), Ok(3));
        let events = commit_all(&mut journal);
        if refused {
            assert!(events.contains(&WalkEvent::TruncateRefused {
                offset: 3,
                current: Token(2)
            }));
            assert_eq!(journal.floor(), 1);
        } else {
            assert!(events.contains(&WalkEvent::FloorApplied { floor: 3, trim: 3 }));
            assert_eq!(journal.floor(), 3);
        }
    }
}

// ---- reads ----

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

// ---- compaction and retention ----

/// 10 records, a trim at 11 asking for floor 10, all committed (segments of 4: 1-4, 5-8, 9-12).
fn trimmed_journal(rules: Rules) -> Journal {
    let mut journal = Journal::new(config(rules));
    land(
        &mut journal,
        Request::Fence {
            new: Token(5),
            old: Token(0),
        },
    );
    fill(&mut journal, 9);
    land(&mut journal, trim(None, None, 10, 3));
    commit_all(&mut journal);
    journal
}

#[test]
fn compaction_deletes_whole_segments_below_the_floor_and_seals_the_fold() {
    // Proves compaction deletes only whole segments entirely below the floor, and seals the
    // writer, floor, tag and base in the same op.
    let mut journal = trimmed_journal(Rules::default());
    let compaction = journal
        .compact()
        .expect("segments 1-4 and 5-8 are below floor 10");
    let sealed = SealedState {
        writer: Token(5),
        floor: 10,
        floor_tag: Some(Headers::with_epoch(3)),
        floor_trim: Some(11),
        base_offset: 8,
        base_term: 1,
    };
    assert_eq!(
        compaction.op,
        StorageOp::Compact {
            below: 9,
            sealed: sealed.clone()
        }
    );
    assert_eq!(
        (
            compaction.below,
            compaction.readable_start,
            compaction.retention
        ),
        (9, 10, false)
    );
    assert_eq!(journal.first_held(), 9);
    assert_eq!(journal.sealed(), &sealed);
    assert_eq!(journal.compact(), None);
    assert_eq!(
        read(&journal, 9),
        Reply::CursorTooOld {
            floor: 10,
            tag: Some(Headers::with_epoch(3))
        }
    );
}

#[test]
fn compaction_never_deletes_the_active_segment() {
    // Proves the active segment (the one holding the last record) is kept even when it lies
    // wholly below the floor. Only a floor that outran its truncated trim gets there
    // (FloorPastCommit): records 1-8, a trim at 9 sets floor 9 on append and is truncated.
    let mut journal = Journal::new(config(Rules::twin(TwinName::FloorPastCommit)));
    fill(&mut journal, 8);
    land(&mut journal, trim(None, None, 9, 1));
    journal.truncate_suffix(9);
    commit_all(&mut journal);
    assert_eq!((journal.floor(), journal.last_offset()), (9, 8));
    let compaction = journal.compact().expect("segment 1-4 is deletable");
    assert_eq!(compaction.below, 5);
    assert_eq!(journal.entry(8).map(|entry| entry.offset), Some(8));
}

#[test]
fn compaction_keeps_the_floor_record() {
    // Proves FloorRecordKept's rule (CompactActive twin): the segment holding the floor-setting
    // trim survives and the tag with it; with the rule off it is deleted, the readable start rises
    // past the floor and the refusal loses its tag.
    let mut journal = trimmed_journal(Rules::default());
    journal.compact();
    assert!(journal.entry(11).is_some());
    assert_eq!(journal.readable_start(), 10);

    let mut twin = trimmed_journal(Rules::twin(TwinName::CompactActive));
    fill(&mut twin, 1); // commit the floor record's whole segment (9-12)
    commit_all(&mut twin);
    let compaction = twin
        .compact()
        .expect("the twin deletes through the floor record's segment");
    assert_eq!(compaction.below, 13);
    assert!(twin.entry(11).is_none());
    assert_eq!(twin.readable_start(), 13);
    assert_eq!(
        read(&twin, 5),
        Reply::CursorTooOld {
            floor: 13,
            tag: None
        }
    );
}

#[test]
fn compaction_is_clamped_to_the_committed_prefix() {
    // Proves compaction never deletes uncommitted records, even with a floor above them
    // (reachable only when the floor runs ahead of the commit: FloorPastCommit).
    let mut journal = Journal::new(config(Rules::twin(TwinName::FloorPastCommit)));
    fill(&mut journal, 9);
    land(&mut journal, trim(None, None, 10, 1));
    let mut events = Vec::new();
    journal.commit_to(3, &mut events);
    assert_eq!(journal.floor(), 10);
    assert_eq!(journal.compact(), None);
    journal.commit_to(5, &mut events);
    assert_eq!(
        journal.compact().map(|compaction| compaction.below),
        Some(5)
    );
}

#[test]
fn retention_deletes_regardless_of_trims_and_its_refusal_is_untagged() {
    // Proves retention is off by default, and when on (Retention twin) it deletes committed
    // segments with no trim and sets an untagged readable start.
    let mut journal = journal();
    fill(&mut journal, 12);
    commit_all(&mut journal);
    assert_eq!(journal.compact(), None);

    let mut twin = Journal::new(config(Rules::twin(TwinName::Retention)));
    fill(&mut twin, 12);
    commit_all(&mut twin);
    let compaction = twin.compact().expect("retention keeps one segment");
    assert_eq!((compaction.below, compaction.retention), (9, true));
    assert_eq!(
        read(&twin, 1),
        Reply::CursorTooOld {
            floor: 9,
            tag: None
        }
    );
}

#[test]
fn retention_keeps_its_count_of_whole_segments_and_is_named_only_when_it_deletes_more() {
    // Proves retention's arithmetic: it keeps `retention_segments_max` whole committed segments
    // (2 of 4 records: 16 committed keep 9..=16), and a compaction is reported as retention's only
    // when retention deleted more than the floor allowed (a floor that asks for as much is the
    // floor's deletion).
    let mut twin = Journal::new(JournalConfig {
        retention_segments_max: 2,
        ..config(Rules::twin(TwinName::Retention))
    });
    fill(&mut twin, 16);
    commit_all(&mut twin);
    let compaction = twin.compact().expect("retention keeps two segments");
    assert_eq!((compaction.below, compaction.retention), (9, true));

    let mut twin = Journal::new(config(Rules::twin(TwinName::Retention)));
    fill(&mut twin, 11);
    land(&mut twin, trim(None, None, 12, 4));
    commit_all(&mut twin);
    let compaction = twin
        .compact()
        .expect("the floor and retention both delete below 9");
    assert_eq!((compaction.below, compaction.retention), (9, false));
}

// ---- the jump ----

fn jump_state(point: Offset, floor: Offset) -> SealedState {
    SealedState {
        writer: Token(4),
        floor,
        floor_tag: Some(Headers::with_epoch(2)),
        floor_trim: Some(floor + 1),
        base_offset: point - 1,
        base_term: 3,
    }
}

#[test]
fn jump_adopts_the_point_and_state_in_one_op() {
    // Proves the jump drops what is held below the point, raises the floor to the point (the
    // sender's floor 10 is above it, set by the trim at 11 this node has not walked), sets
    // committed to point - 1, adopts the writer, and persists one TrimmedTo; a read below the
    // point is NotHeld until the walk reaches the trim.
    let mut journal = journal();
    fill(&mut journal, 3);
    commit_all(&mut journal);
    let state = jump_state(9, 10);
    let jump = journal.jump(9, state.clone());
    let sealed = SealedState {
        floor: 9,
        floor_tag: None,
        floor_trim: None,
        base_offset: 8,
        base_term: 3,
        ..state
    };
    assert_eq!(
        jump,
        Jump::Jumped {
            ops: vec![StorageOp::TrimmedTo {
                point: 9,
                state: sealed
            }],
            resume: 9
        }
    );
    assert_eq!(
        (journal.first_held(), journal.tail(), journal.committed()),
        (9, 9, 8)
    );
    assert_eq!((journal.floor(), journal.writer()), (9, Token(4)));
    assert_eq!(read(&journal, 2), Reply::NotHeld { from: 2 });
    assert_eq!(read(&journal, 8), Reply::NotHeld { from: 8 });
    assert_eq!(
        read(&journal, 9),
        Reply::Records {
            records: vec![],
            next: 9
        }
    );
}

#[test]
fn jump_at_or_below_the_floor_is_ignored() {
    // Proves a point at or below the node's own floor teaches it nothing.
    let mut journal = trimmed_journal(Rules::default());
    assert_eq!(journal.jump(10, jump_state(10, 10)), Jump::Ignored);
    assert_eq!(journal.jump(5, jump_state(5, 5)), Jump::Ignored);
    assert_eq!(journal.first_held(), 1);
}

#[test]
fn jump_drops_a_conflicting_uncommitted_suffix() {
    // Proves records above the point whose base term does not match are dropped with the jump.
    let mut journal = journal();
    fill(&mut journal, 12);
    let jump = journal.jump(9, jump_state(9, 9));
    let Jump::Jumped { ops, resume } = jump else {
        panic!("expected a jump")
    };
    assert_eq!(ops.len(), 2);
    assert_eq!(ops[0], StorageOp::TruncateSuffix { from: 9 });
    assert_eq!((resume, journal.tail()), (9, 9));
}

#[test]
fn read_in_a_jumped_over_range_is_not_held() {
    // Proves a node that jumped answers NotHeld for a range it does not hold, below its floor
    // too when no trim set that floor (the sender's floor came from its own jump).
    let mut journal = journal();
    fill(&mut journal, 2);
    commit_all(&mut journal);
    let state = SealedState {
        floor: 5,
        floor_tag: None,
        floor_trim: None,
        ..jump_state(9, 5)
    };
    assert!(matches!(journal.jump(9, state), Jump::Jumped { .. }));
    assert_eq!(read(&journal, 3), Reply::NotHeld { from: 3 });
    assert_eq!(read(&journal, 6), Reply::NotHeld { from: 6 });
    assert_eq!(
        read(&journal, 9),
        Reply::Records {
            records: vec![],
            next: 9
        }
    );
}

// ---- replication and recovery ----

/// A journal holding three writes of term 1 (offsets 1..=3), committed to `committed`.
fn three_writes_committed_to(committed: Offset) -> Journal {
    let mut journal = journal();
    fill(&mut journal, 3);
    journal.commit_to(committed, &mut Vec::new());
    journal
}

/// A replicated noop record.
fn noop(offset: Offset, term: Term) -> Entry {
    Entry {
        offset,
        term,
        command: Command::Noop,
    }
}

#[test]
fn replicated_append_truncates_a_conflicting_uncommitted_suffix() {
    // Proves log matching: a record of another term at the same offset replaces the suffix.
    let mut journal = three_writes_committed_to(1);
    let mut ops = Vec::new();
    let replacement = noop(2, 2);
    assert_eq!(
        journal.append_replicated(1, 1, vec![replacement.clone()], &mut ops),
        Ok(2)
    );
    assert_eq!(
        ops,
        vec![
            StorageOp::TruncateSuffix { from: 2 },
            StorageOp::Append(vec![replacement])
        ]
    );
    assert_eq!(journal.tail(), 3);
    ops.clear();
    assert_eq!(journal.append_replicated(5, 2, vec![], &mut ops), Err(3));
    assert_eq!(journal.append_replicated(2, 1, vec![], &mut ops), Err(2));
    assert!(ops.is_empty());
}

/// A record that conflicts inside the committed prefix (a leader that broke the election rule
/// could send one) is refused, not truncated: the answer names the first uncommitted offset and
/// nothing is persisted or changed.
#[test]
fn a_conflict_inside_the_committed_prefix_is_refused_with_the_first_uncommitted_offset() {
    let mut journal = three_writes_committed_to(2);
    let mut ops = Vec::new();
    let conflicting = noop(2, 2);
    assert_eq!(
        journal.append_replicated(1, 1, vec![conflicting], &mut ops),
        Err(3)
    );
    assert!(ops.is_empty(), "{ops:?}");
    assert_eq!(journal.tail(), 4);
    assert_eq!(journal.term_at(2), Some(1));
}

#[test]
fn a_refused_append_hints_the_conflicting_terms_first_record_never_inside_the_committed_prefix() {
    // Proves the hint a follower answers a mismatched AppendEntries with: the first offset of the
    // conflicting term's run ending at `prev_offset` (so the leader skips the whole term), but
    // never at or below the committed index, also where the mismatch itself is committed.
    let mut journal = journal();
    let entries: Vec<Entry> = [1, 1, 2, 2, 2, 3]
        .into_iter()
        .zip(1..)
        .map(|(term, offset)| Entry {
            offset,
            term,
            command: Command::Noop,
        })
        .collect();
    let mut ops = Vec::new();
    assert_eq!(
        journal.append_replicated(0, 0, entries.clone(), &mut ops),
        Ok(6)
    );
    assert_eq!(
        ops,
        vec![StorageOp::Append(entries)],
        "one append, no truncation"
    );
    let mut events = Vec::new();
    journal.commit_to(1, &mut events);
    ops.clear();
    assert_eq!(journal.append_replicated(5, 9, vec![], &mut ops), Err(3));
    assert_eq!(journal.append_replicated(4, 9, vec![], &mut ops), Err(3));
    assert_eq!(journal.append_replicated(6, 9, vec![], &mut ops), Err(6));
    assert_eq!(journal.append_replicated(2, 9, vec![], &mut ops), Err(2));
    journal.commit_to(3, &mut events);
    assert_eq!(journal.append_replicated(5, 9, vec![], &mut ops), Err(4));
    assert_eq!(journal.append_replicated(2, 9, vec![], &mut ops), Err(4));
    assert_eq!(journal.append_replicated(6, 3, vec![], &mut ops), Ok(6));
    assert!(ops.is_empty());
}

#[test]
fn trim_index_rebuilt_by_a_scan_equals_the_incremental_one() {
    // Proves the trim index is derived: after appends, truncation and compaction the maintained
    // index equals a fresh scan of the held records.
    let mut journal = journal();
    for round in 0..4u64 {
        fill(&mut journal, 3);
        let floor = journal.tail() - 1;
        land(&mut journal, trim(None, None, floor, round));
    }
    assert_eq!(journal.trim_index().iter().count(), 4);
    let mut events = Vec::new();
    journal.commit_to(12, &mut events);
    journal.compact();
    let mut ops = Vec::new();
    journal
        .append_replicated(
            14,
            1,
            vec![Entry {
                offset: 15,
                term: 2,
                command: Command::Noop,
            }],
            &mut ops,
        )
        .ok();
    assert_eq!(journal.trim_index(), &journal.rebuild_trim_index());
    assert_eq!(journal.trim_index(), &TrimIndex::scan(journal.entries()));
    // Compaction below 9 dropped the trim at 8, the truncation from 15 the one at 16.
    let rows: Vec<Offset> = journal.trim_index().iter().map(|row| row.offset).collect();
    assert_eq!(rows, vec![12]);
    assert!(journal
        .trim_index()
        .iter()
        .all(|row| row.offset >= journal.first_held()));
}

#[test]
fn recovery_rebuilds_the_floor_tag_writer_and_trim_index() {
    // Proves a journal rebuilt from its sealed base and held records serves the same answers.
    let mut journal = trimmed_journal(Rules::default());
    journal.compact();
    let entries: Vec<Entry> = journal.entries().cloned().collect();
    let recovered = Journal::recover(
        *journal.config(),
        Some(journal.sealed().clone()),
        journal.first_held(),
        entries,
    )
    .expect("a consistent store recovers");
    assert_eq!(recovered.floor(), journal.floor());
    assert_eq!(recovered.floor_tag(), journal.floor_tag());
    assert_eq!(recovered.tail(), journal.tail());
    assert_eq!(recovered.trim_index(), journal.trim_index());
    assert_eq!(recovered.tail_writer(), Token(5));
    assert_eq!(recovered.committed(), 8);
    assert_eq!(read(&recovered, 2), read(&journal, 2));
    assert!(Journal::recover(*journal.config(), None, 3, vec![]).is_err());
    // A store that hands back records out of term order is reported, not trusted.
    let backwards = vec![
        Entry {
            offset: 1,
            term: 2,
            command: Command::Noop,
        },
        Entry {
            offset: 2,
            term: 1,
            command: Command::Noop,
        },
    ];
    assert!(Journal::recover(*journal.config(), None, 1, backwards).is_err());
    let gap = vec![
        Entry {
            offset: 1,
            term: 1,
            command: Command::Noop,
        },
        Entry {
            offset: 3,
            term: 1,
            command: Command::Noop,
        },
    ];
    assert!(Journal::recover(*journal.config(), None, 1, gap).is_err());
}

/// `journal` rebuilt from what its store holds: its config, sealed base and held records.
fn recovered(journal: &Journal) -> Journal {
    Journal::recover(
        *journal.config(),
        Some(journal.sealed().clone()),
        journal.first_held(),
        journal.entries().cloned().collect(),
    )
    .expect("a consistent store recovers")
}

#[test]
fn recovery_after_a_jump_keeps_the_floor_as_the_readable_start() {
    // Proves that under the default rules the gap a jump leaves between the floor and the first
    // held record is not this node's own deletion: after a restart the readable start is still
    // the floor (not the first held offset), and every read is answered as before the restart.
    for state in [
        jump_state(9, 5),
        SealedState {
            floor_tag: None,
            floor_trim: None,
            ..jump_state(9, 5)
        },
    ] {
        let mut journal = journal();
        fill(&mut journal, 2);
        commit_all(&mut journal);
        assert!(matches!(journal.jump(9, state), Jump::Jumped { .. }));
        let recovered = recovered(&journal);
        assert_eq!((recovered.readable_start(), recovered.first_held()), (5, 9));
        for from in 1..=9 {
            assert_eq!(read(&recovered, from), read(&journal, from), "from {from}");
        }
    }
    // The tagged floor: below it CursorTooOld with the tag, between it and the point NotHeld.
    let mut journal = journal();
    journal.jump(9, jump_state(9, 5));
    let recovered = recovered(&journal);
    assert_eq!(
        read(&recovered, 3),
        Reply::CursorTooOld {
            floor: 5,
            tag: Some(Headers::with_epoch(2))
        }
    );
    assert_eq!(read(&recovered, 6), Reply::NotHeld { from: 6 });
}

#[test]
fn recovery_after_deleting_past_the_floor_keeps_the_readable_start_there() {
    // Proves that where a rule that deletes past the floor is off (Retention, CompactActive), a
    // restarted node still refuses below what it deleted, untagged, as it did before.
    let mut twin = Journal::new(config(Rules::twin(TwinName::Retention)));
    fill(&mut twin, 12);
    commit_all(&mut twin);
    twin.compact().expect("retention keeps one segment");
    let recovered_twin = recovered(&twin);
    assert_eq!(
        (recovered_twin.floor(), recovered_twin.readable_start()),
        (1, 9)
    );
    assert_eq!(
        read(&recovered_twin, 1),
        Reply::CursorTooOld {
            floor: 9,
            tag: None
        }
    );

    let mut twin = trimmed_journal(Rules::twin(TwinName::CompactActive));
    fill(&mut twin, 1);
    commit_all(&mut twin);
    twin.compact()
        .expect("the twin deletes through the floor record");
    let recovered_twin = recovered(&twin);
    assert_eq!(
        (recovered_twin.floor(), recovered_twin.readable_start()),
        (10, 13)
    );
}

#[test]
fn recovery_accepts_a_trim_at_its_own_floor_and_reports_one_above_it() {
    // Proves the recovered-trim check's boundary: a trim may ask for a floor up to its own offset;
    // a store holding one that asks for more is reported, with the reason in words.
    let trim_at_1 = |floor: Offset| Entry {
        offset: 1,
        term: 1,
        command: Command::Trim {
            floor,
            headers: Headers::default(),
            fence: None,
        },
    };
    let config = config(Rules::default());
    let recovered = Journal::recover(config, None, 1, vec![trim_at_1(1)]).expect("floor 1 at 1");
    assert_eq!(
        (recovered.tail(), recovered.trim_index().iter().count()),
        (2, 1)
    );
    let error = Journal::recover(config, None, 1, vec![trim_at_1(2)]).expect_err("floor 2 at 1");
    assert_eq!(
        error.to_string(),
        "cannot rebuild the journal: trim at 1 asks for floor 2 above itself"
    );
}

#[test]
fn floor_past_commit_twin_applies_a_trim_at_append_unless_its_fence_is_stale() {
    // Proves the FloorPastCommit twin's append-time floor keeps the fence check: a trim fenced
    // with the writer in force at the tail raises the floor as it is appended, one fenced with a
    // stale writer does not (and, uncommitted, neither is walked yet).
    let mut journal = Journal::new(config(Rules::twin(TwinName::FloorPastCommit)));
    land(
        &mut journal,
        Request::Fence {
            new: Token(2),
            old: Token(0),
        },
    );
    fill(&mut journal, 2);
    land(&mut journal, trim(None, Some(Token(2)), 3, 1));
    assert_eq!((journal.committed(), journal.floor()), (0, 3));
    assert_eq!(journal.floor_tag(), Some(&Headers::with_epoch(1)));
    // A stale fence: the walk-time check refuses it later; the append-time one already does.
    let mut ops = Vec::new();
    let stale = Entry {
        offset: 5,
        term: 1,
        command: Command::Trim {
            floor: 5,
            headers: Headers::default(),
            fence: Some(Token(1)),
        },
    };
    assert_eq!(
        journal.append_replicated(4, 1, vec![stale], &mut ops),
        Ok(5)
    );
    assert_eq!(journal.floor(), 3);
}

#[test]
fn truncating_an_uncommitted_suffix_restores_the_writer_in_force_at_the_new_tail() {
    // Proves the tail writer after a truncation is the last fence still held above the committed
    // index, or the committed fold's writer when none is: fences are checked against it.
    let mut journal = journal();
    land(
        &mut journal,
        Request::Fence {
            new: Token(1),
            old: Token(0),
        },
    );
    commit_all(&mut journal);
    land(
        &mut journal,
        Request::Fence {
            new: Token(2),
            old: Token(1),
        },
    );
    land(
        &mut journal,
        Request::Fence {
            new: Token(3),
            old: Token(2),
        },
    );
    assert_eq!(
        (journal.writer(), journal.tail_writer()),
        (Token(1), Token(3))
    );
    journal.truncate_suffix(3);
    assert_eq!(journal.tail_writer(), Token(2));
    assert_eq!(
        answer(&mut journal, write(None, Some(Token(3)), "stale")),
        Reply::FenceMismatch { current: Token(2) }
    );
    journal.truncate_suffix(2);
    assert_eq!(journal.tail_writer(), Token(1));
}
