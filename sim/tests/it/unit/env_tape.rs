//! The unit tests of `felix_sim::env::tape` (sim/src/env/tape.rs).

use felix_sim::env::rng::Component;

use felix_sim::env::rng::Stream;
use felix_sim::env::tape::*;

/// Recording changes no draw; replaying the recording gives the same draws; a replay whose
/// recording ran out or no longer fits answers the simplest value.
#[test]
fn record_and_replay() {
    let draws = |stream: &mut Stream| -> Vec<u64> {
        vec![
            stream.range(10, 20),
            u64::from(stream.chance(500_000)),
            stream.index(7) as u64,
            stream.next_u64(),
            u64::from(stream.chance(1_000_000)),
            stream.range(3, 9),
        ]
    };
    let plain = draws(&mut Stream::new(5, Component::Network));
    let taped = |seed: u64, replay: Option<Choices>| {
        let tape = Tape::new(replay);
        let drawn = draws(&mut Stream::taped(seed, Component::Network, Some(&tape)));
        (drawn, tape.used())
    };
    let (recorded, tape) = taped(5, None);
    assert_eq!(plain, recorded);
    assert_eq!(
        tape[&Component::Network].len(),
        5,
        "a certain chance is no choice"
    );
    let (replayed, again) = taped(99, Some(tape.clone()));
    assert_eq!(replayed, plain);
    assert_eq!(again, tape);
    let mut short = tape.clone();
    short.get_mut(&Component::Network).unwrap().truncate(1);
    let (cut, _) = taped(5, Some(short));
    assert_eq!(cut, vec![plain[0], 0, 0, 0, 1, 3]);
}

/// A marking tape marks an event's end only when the history grew, and reads off what the run
/// had drawn, per component, at the first mark past a history index.
#[test]
fn cut_at_reads_the_draws_up_to_the_first_mark_past_the_index() {
    let tape = Tape::marking(None);
    let mut network = Stream::taped(1, Component::Network, Some(&tape));
    let mut disk = Stream::taped(1, Component::Disk, Some(&tape));
    let a = network.range(0, 100);
    tape.event_done(0, 1);
    let b = disk.range(0, 100);
    tape.event_done(2, 2);
    let c = network.range(0, 100);
    tape.event_done(2, 3);
    let d = disk.range(0, 100);
    tape.event_done(5, 4);
    let whole = |network: Vec<u64>, disk: Vec<u64>| {
        Choices::from([(Component::Network, network), (Component::Disk, disk)])
    };
    let (mark, choices) = tape.cut_at(0).expect("a mark past history event 0");
    assert_eq!((mark.history, mark.events), (2, 2));
    assert_eq!(choices, whole(vec![a], vec![b]));
    let (mark, choices) = tape.cut_at(2).expect("a mark past history event 2");
    assert_eq!((mark.history, mark.events), (5, 4), "event 3 grew nothing");
    assert_eq!(choices, whole(vec![a, c], vec![b, d]));
    assert_eq!(choices, tape.used());
    assert!(tape.cut_at(5).is_none());
    assert!(
        Tape::new(None).cut_at(0).is_none(),
        "a tape that does not mark"
    );
}
