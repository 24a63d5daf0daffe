//! Compaction and retention.

use super::*;

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
