//! Replication and recovery.

use super::*;

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
