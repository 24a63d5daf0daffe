//! The jump.

use super::*;

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
