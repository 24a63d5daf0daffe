//! The walk's order, the rules of the validation layer's twins: a trim's floor and a fence's
//! writer take effect when the walk over the committed log reaches their record, not a step
//! before (`Rules::floor_at_its_trim`, `Rules::writer_at_its_fence`). Breaking them changes no
//! answer, so these tests hold the switches here and trace validation holds the twins in runs.

use super::journal_support::{config, fill, journal, land, trim};
use felix_core::api::Request;
use felix_core::journal::{Journal, Jump, WalkEvent};
use felix_core::record::Token;
use felix_core::rules::{Rules, TwinName};
use felix_core::storage::SealedState;

#[test]
fn the_walk_applies_a_floor_only_at_its_trim() {
    // Proves the walk's order for floors (EarlyFloor twin, a validation-layer twin): with a fence
    // at 1 and an unfenced trim at 2 (floor 2; no write in between), committing 1 leaves the floor
    // at 1 until the walk reaches the trim. With the rule off the trim's floor applies a step
    // early, and says so as a walk event.
    let fence = Request::Fence {
        new: Token(1),
        old: Token(0),
    };
    let mut journal = journal();
    land(&mut journal, fence.clone());
    land(&mut journal, trim(None, None, 2, 1));
    let mut events = Vec::new();
    journal.commit_to(1, &mut events);
    assert_eq!(journal.floor(), 1);
    assert_eq!(events, vec![WalkEvent::Committed { offset: 1 }]);

    let mut twin = Journal::new(config(Rules::twin(TwinName::EarlyFloor)));
    land(&mut twin, fence);
    land(&mut twin, trim(None, None, 2, 1));
    let mut events = Vec::new();
    twin.commit_to(1, &mut events);
    assert_eq!(twin.floor(), 2);
    assert_eq!(
        events,
        vec![
            WalkEvent::Committed { offset: 1 },
            WalkEvent::FloorApplied { floor: 2, trim: 2 }
        ]
    );
    // Not past a write: a trim whose floor would hide a written record waits for the walk.
    let mut twin = Journal::new(config(Rules::twin(TwinName::EarlyFloor)));
    fill(&mut twin, 1);
    land(&mut twin, trim(None, None, 2, 1));
    let mut events = Vec::new();
    twin.commit_to(1, &mut events);
    assert_eq!(twin.floor(), 1);
}

#[test]
fn the_walk_moves_the_writer_only_at_its_fence() {
    // Proves the walk's order for fences (EarlyFence twin, a validation-layer twin): a held fence
    // moves the committed writer only when the walk reaches it. With the rule off the writer shows
    // the fence's token a step early, and the old one is restored before a suffix truncation, a
    // jump or the walk reads it.
    let fence = |new: u64, old: u64| Request::Fence {
        new: Token(new),
        old: Token(old),
    };
    let mut journal = journal();
    land(&mut journal, fence(5, 0));
    journal.commit_to(0, &mut Vec::new());
    assert_eq!(journal.writer(), Token(0));
    journal.commit_to(1, &mut Vec::new());
    assert_eq!(journal.writer(), Token(5));

    let mut twin = Journal::new(config(Rules::twin(TwinName::EarlyFence)));
    land(&mut twin, fence(5, 0));
    twin.commit_to(0, &mut Vec::new());
    assert_eq!(twin.writer(), Token(5), "the early fence");
    // The suffix truncation reads the writer in force: the old one.
    twin.truncate_suffix(1);
    assert_eq!(twin.writer(), Token(0));
    assert_eq!(twin.tail(), 1);

    // The walk restores the old writer before it moves through the fences itself.
    let mut twin = Journal::new(config(Rules::twin(TwinName::EarlyFence)));
    land(&mut twin, fence(5, 0));
    land(&mut twin, fence(6, 5));
    twin.commit_to(0, &mut Vec::new());
    assert_eq!(twin.writer(), Token(5));
    twin.commit_to(1, &mut Vec::new());
    assert_eq!(twin.writer(), Token(6), "the next fence, early");
    twin.commit_to(2, &mut Vec::new());
    assert_eq!(twin.writer(), Token(6));
    twin.truncate_suffix(3);
    assert_eq!(twin.writer(), Token(6), "nothing early to restore");

    // A jump the node ignores still restores it first.
    let mut twin = Journal::new(config(Rules::twin(TwinName::EarlyFence)));
    land(&mut twin, fence(5, 0));
    twin.commit_to(0, &mut Vec::new());
    assert_eq!(twin.writer(), Token(5));
    let sealed = SealedState {
        writer: Token(9),
        floor: 1,
        floor_tag: None,
        floor_trim: None,
        base_offset: 0,
        base_term: 0,
    };
    assert_eq!(twin.jump(1, sealed), Jump::Ignored);
    assert_eq!(twin.writer(), Token(0));
}

#[test]
fn the_early_floor_looks_only_at_a_held_trim_right_after_the_commit_index() {
    // The EarlyFloor twin at the edges of what the journal holds: with everything committed there
    // is no next record (and nothing happens); right after a jump the next record is the first
    // held one, and a trim there applies its floor a step early as anywhere else.
    let mut twin = Journal::new(config(Rules::twin(TwinName::EarlyFloor)));
    land(
        &mut twin,
        Request::Fence {
            new: Token(1),
            old: Token(0),
        },
    );
    land(&mut twin, trim(None, None, 2, 1));
    let mut events = Vec::new();
    twin.commit_to(2, &mut events);
    assert_eq!(twin.committed(), 2);
    assert_eq!(twin.floor(), 2);

    for rules in [Rules::default(), Rules::twin(TwinName::EarlyFloor)] {
        let mut journal = Journal::new(config(rules));
        fill(&mut journal, 8);
        let sealed = SealedState {
            writer: Token(0),
            floor: 5,
            floor_tag: None,
            floor_trim: Some(4),
            base_offset: 8,
            base_term: 3,
        };
        assert!(matches!(journal.jump(9, sealed), Jump::Jumped { .. }));
        assert_eq!(journal.first_held(), 9);
        match journal.sequence(3, trim(None, None, 9, 1)) {
            felix_core::journal::Sequenced::Appended { offset, .. } => assert_eq!(offset, 9),
            other => panic!("the trim did not land: {other:?}"),
        }
        let mut events = Vec::new();
        journal.commit_to(journal.committed(), &mut events);
        let early = rules == Rules::twin(TwinName::EarlyFloor);
        assert_eq!(journal.floor(), if early { 9 } else { 5 }, "{rules:?}");
    }
}
