//! The lazy floor: applied when the walk reaches the trim, never lowered, a stale fenced trim
//! refused in place.

use super::*;

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
