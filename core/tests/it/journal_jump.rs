//! The jump (`Journal::jump`) at the edges of its arithmetic: which suffix survives, which writer
//! and committed index the node keeps, and when the sender's floor is adopted with its trim and
//! tag. Proves: a suffix whose record at `point - 1` has the sealed base term is kept even when
//! the record at `point` has another term; a node that committed a different record at the base
//! does not jump; a node whose walk already passed the point keeps its own committed index and
//! writer; a sender's floor exactly at the point is adopted with its tag and trim, and one above
//! it is not; a node committed exactly to the base keeps its own writer.

use felix_core::journal::{Journal, JournalConfig, Jump, WalkEvent};
use felix_core::record::{Command, Entry, Headers, Offset, Term, Token};
use felix_core::rules::Rules;
use felix_core::storage::{SealedState, SegmentLayout, StorageOp};

fn journal_with(rules: Rules) -> Journal {
    Journal::new(JournalConfig {
        layout: SegmentLayout {
            records_per_segment: 4,
        },
        rules,
        ..JournalConfig::default()
    })
}

fn write(offset: Offset, term: Term) -> Entry {
    Entry {
        offset,
        term,
        command: Command::Write {
            body: vec![b'w'],
            headers: Headers::default(),
        },
    }
}

/// A journal holding records 1..=terms.len() with the given terms, none committed.
fn holding(terms: &[Term]) -> Journal {
    holding_with(Rules::default(), terms)
}

/// The same under `rules`.
fn holding_with(rules: Rules, terms: &[Term]) -> Journal {
    let mut journal = journal_with(rules);
    let entries = terms
        .iter()
        .enumerate()
        .map(|(index, term)| write(index as Offset + 1, *term))
        .collect();
    let mut ops = Vec::new();
    journal
        .append_replicated(0, 0, entries, &mut ops)
        .expect("a fresh journal takes records from 1");
    journal
}

fn commit(journal: &mut Journal, through: Offset) {
    let mut events: Vec<WalkEvent> = Vec::new();
    journal.commit_to(through, &mut events);
    assert_eq!(journal.committed(), through);
}

fn state(point: Offset, base_term: Term, floor: Offset) -> SealedState {
    SealedState {
        writer: Token(4),
        floor,
        floor_tag: Some(Headers::with_epoch(2)),
        floor_trim: Some(floor.saturating_sub(1).max(1)),
        base_offset: point - 1,
        base_term,
    }
}

fn offsets(journal: &Journal) -> Vec<Offset> {
    journal.entries().map(|entry| entry.offset).collect()
}

#[test]
fn a_suffix_continuing_the_base_term_is_kept_even_if_the_point_has_another_term() {
    // Records 1..=8 of term 1, 9..=10 of term 2; the point 9 seals 8 of term 1.
    let mut journal = holding(&[1, 1, 1, 1, 1, 1, 1, 1, 2, 2]);
    let Jump::Jumped { ops, resume } = journal.jump(9, state(9, 1, 9)) else {
        panic!("expected a jump");
    };
    assert_eq!(
        offsets(&journal),
        vec![9, 10],
        "9 and 10 follow the sealed base"
    );
    assert_eq!(resume, 11);
    assert_eq!(ops.len(), 1, "no truncation: {ops:?}");
    assert!(matches!(ops[0], StorageOp::TrimmedTo { point: 9, .. }));
    assert_eq!(journal.term_at(9), Some(2));
}

#[test]
fn a_suffix_after_another_base_term_is_dropped() {
    let mut journal = holding(&[1, 1, 1, 1, 1, 1, 1, 1, 2, 2]);
    let Jump::Jumped { ops, resume } = journal.jump(9, state(9, 3, 9)) else {
        panic!("expected a jump");
    };
    assert_eq!(offsets(&journal), Vec::<Offset>::new());
    assert_eq!(resume, 9);
    assert_eq!(ops[0], StorageOp::TruncateSuffix { from: 9 });
}

/// Proves the StaleSuffix switch: with the twin's rules the suffix after another base term is
/// kept (even a single record), and with every rule on the same jump drops it. A base of term 3
/// under records of term 1 and 2 is what LogTermsMonotone then sees.
#[test]
fn a_stale_suffix_is_kept_only_by_the_stale_suffix_twin() {
    for (rules, kept) in [
        (Rules::default(), false),
        (Rules::twin(felix_core::rules::TwinName::StaleSuffix), true),
    ] {
        for terms in [
            &[1, 1, 1, 1, 1, 1, 1, 1, 2, 2][..],
            &[1, 1, 1, 1, 1, 1, 1, 1, 2],
        ] {
            let mut journal = holding_with(rules, terms);
            let Jump::Jumped { ops, resume } = journal.jump(9, state(9, 3, 9)) else {
                panic!("expected a jump");
            };
            let held = terms.len() as Offset;
            if kept {
                assert_eq!(offsets(&journal), (9..=held).collect::<Vec<_>>());
                assert_eq!(resume, held + 1);
                assert_eq!(ops.len(), 1, "no truncation: {ops:?}");
            } else {
                assert_eq!(offsets(&journal), Vec::<Offset>::new());
                assert_eq!(resume, 9);
                assert_eq!(ops[0], StorageOp::TruncateSuffix { from: 9 });
            }
        }
    }
}

#[test]
fn a_node_that_committed_another_record_at_the_base_does_not_jump() {
    let mut journal = holding(&[1, 1, 1, 1, 1, 1, 1, 1, 1]);
    commit(&mut journal, 8);
    assert_eq!(journal.jump(9, state(9, 3, 9)), Jump::Ignored);
    assert_eq!(offsets(&journal).len(), 9, "nothing dropped");
    assert_eq!(journal.committed(), 8);
}

#[test]
fn a_node_whose_walk_passed_the_point_keeps_its_committed_index_and_writer() {
    let mut journal = holding(&[1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]);
    commit(&mut journal, 10);
    let writer_before = journal.writer();
    assert_ne!(writer_before, Token(4));
    let Jump::Jumped { .. } = journal.jump(9, state(9, 1, 9)) else {
        panic!("expected a jump");
    };
    assert_eq!(journal.committed(), 10, "never lowered to point - 1");
    assert_eq!(journal.writer(), writer_before, "its own later writer");
    assert_eq!(journal.first_held(), 9);
    assert_eq!(offsets(&journal), vec![9, 10, 11]);
}

#[test]
fn a_node_below_the_point_takes_the_senders_writer_and_commits_to_the_base() {
    let mut journal = holding(&[1, 1, 1]);
    commit(&mut journal, 2);
    let Jump::Jumped { .. } = journal.jump(9, state(9, 1, 9)) else {
        panic!("expected a jump");
    };
    assert_eq!(journal.committed(), 8);
    assert_eq!(journal.writer(), Token(4));
    assert_eq!(journal.sealed().base_offset, 8);
    assert_eq!(journal.sealed().base_term, 1);
}

#[test]
fn a_senders_floor_at_the_point_is_adopted_with_its_tag_and_trim() {
    let mut journal = holding(&[1, 1, 1]);
    commit(&mut journal, 3);
    let sent = state(9, 1, 9);
    let Jump::Jumped { .. } = journal.jump(9, sent.clone()) else {
        panic!("expected a jump");
    };
    assert_eq!(journal.floor(), 9);
    assert_eq!(journal.floor_tag(), sent.floor_tag.as_ref());
    assert_eq!(journal.sealed().floor_trim, sent.floor_trim);
}

#[test]
fn a_senders_floor_above_the_point_gives_the_point_and_no_tag() {
    let mut journal = holding(&[1, 1, 1]);
    commit(&mut journal, 3);
    let Jump::Jumped { .. } = journal.jump(9, state(9, 1, 10)) else {
        panic!("expected a jump");
    };
    assert_eq!(journal.floor(), 9);
    assert_eq!(journal.floor_tag(), None);
    assert_eq!(journal.sealed().floor_trim, None);
}

#[test]
fn a_node_committed_exactly_to_the_base_keeps_its_own_writer() {
    // Its walk folded the records up to the base itself: nothing for the sender's state to add.
    let mut journal = holding(&[1, 1, 1, 1, 1, 1, 1, 1, 1]);
    commit(&mut journal, 8);
    let writer_before = journal.writer();
    assert_ne!(writer_before, Token(4));
    let Jump::Jumped { .. } = journal.jump(9, state(9, 1, 9)) else {
        panic!("expected a jump");
    };
    assert_eq!(journal.committed(), 8);
    assert_eq!(journal.writer(), writer_before);
    assert_eq!(offsets(&journal), vec![9]);
}

#[test]
fn a_jump_to_the_nodes_own_first_held_offset_is_ignored_even_with_a_higher_floor() {
    // A point at the node's first held offset is ignored although it is above the node's floor
    // (a first jump left the floor below the point): the node already holds from there, and the
    // floor rises only by its own walk or a jump past what it holds.
    let mut journal = holding(&[1, 1, 1]);
    commit(&mut journal, 3);
    let Jump::Jumped { .. } = journal.jump(9, state(9, 1, 5)) else {
        panic!("expected a jump");
    };
    assert_eq!((journal.floor(), journal.first_held()), (5, 9));
    assert_eq!(journal.jump(9, state(9, 1, 7)), Jump::Ignored);
    assert_eq!(journal.floor(), 5);
    assert_eq!(journal.sealed().floor, 5);
}

#[test]
fn a_senders_floor_equal_to_the_nodes_leaves_the_nodes_floor_record() {
    // The floor's fields (trim, tag) change only when the floor rises, as in the walk: a later
    // jump whose sender's floor equals the node's floor (9, set by no trim after the first jump)
    // does not hand the node the sender's trim and tag.
    let mut journal = holding(&[1, 1, 1]);
    commit(&mut journal, 3);
    let Jump::Jumped { .. } = journal.jump(9, state(9, 1, 12)) else {
        panic!("expected a jump");
    };
    assert_eq!((journal.floor(), journal.floor_tag()), (9, None));
    let Jump::Jumped { .. } = journal.jump(13, state(13, 1, 9)) else {
        panic!("expected a jump");
    };
    assert_eq!((journal.floor(), journal.first_held()), (9, 13));
    assert_eq!(journal.floor_tag(), None);
    assert_eq!(journal.sealed().floor_trim, None);
}

/// Proves a jump that drops a stale suffix leaves a recoverable disk at every crash point: the
/// store contract lets a crash keep any prefix of the ops applied since the last sync, so each
/// prefix of the jump's ops, applied over the node's synced log, must read back as a journal the
/// node can restart from. (Sealing the new base before the truncation landed would leave the
/// stale records of terms 1 and 2 above a base of term 3, which recovery refuses.)
#[test]
fn every_prefix_of_a_jumps_ops_recovers() {
    use felix_core::journal::JournalConfig;
    use felix_core::storage::{LogStore, MemoryStore};
    let terms = [1, 1, 1, 1, 1, 1, 1, 1, 2, 2];
    let config = JournalConfig {
        layout: SegmentLayout {
            records_per_segment: 4,
        },
        ..JournalConfig::default()
    };
    let mut journal = holding(&terms);
    let Jump::Jumped { ops, .. } = journal.jump(9, state(9, 3, 9)) else {
        panic!("expected a jump");
    };
    assert_eq!(
        ops.len(),
        2,
        "a jump over a stale suffix truncates: {ops:?}"
    );
    for kept in 0..=ops.len() {
        let mut store = MemoryStore::new(config.layout);
        let records = (1..=terms.len()).map(|at| write(at as Offset, terms[at - 1]));
        store
            .apply(&StorageOp::Append(records.collect()))
            .expect("append");
        store.sync().expect("sync");
        for op in &ops {
            store.apply(op).expect("the store takes the jump's ops");
        }
        store.crash(kept, 0).expect("crash");
        let back = store.recover().expect("recover");
        let recovered = Journal::recover(config, back.sealed, back.start, back.entries);
        assert!(
            recovered.is_ok(),
            "a crash keeping {kept} of {ops:?}: {recovered:?}"
        );
    }
}
