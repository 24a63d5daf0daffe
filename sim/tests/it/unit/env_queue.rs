//! The unit tests of `felix_sim::env::queue` (sim/src/env/queue.rs).

use felix_sim::env::queue::*;

/// Events come out by time, and events at the same time in push order.
#[test]
fn ties_break_by_push_order() {
    let mut queue = EventQueue::new(16);
    queue.push(5, "late");
    queue.push(1, "first");
    queue.push(1, "second");
    queue.push(3, "middle");
    queue.push(1, "third");
    let order: Vec<&str> = std::iter::from_fn(|| queue.pop()).collect();
    assert_eq!(order, ["first", "second", "third", "middle", "late"]);
    assert_eq!(queue.now(), 5);
}

/// A fixed stream of test numbers (a 64-bit LCG's high bits): the tests need variety, not
/// the simulator's seeded streams.
fn numbers(mut state: u64) -> impl FnMut() -> u64 {
    move || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        state >> 33
    }
}

/// Reused slots never reorder: interleaved pushes and pops come out exactly as a sort by
/// (time, push order) says, whatever slot each event landed in.
#[test]
fn reused_slots_keep_push_order() {
    let mut queue = EventQueue::new(4096);
    let mut expected: Vec<(Time, u64)> = Vec::new();
    let mut popped: Vec<(Time, u64)> = Vec::new();
    let mut next = numbers(7);
    for pushed in 0..2000u64 {
        let time = queue.now() + next() % 5;
        queue.push(time, pushed);
        expected.push((time, pushed));
        if !next().is_multiple_of(3) {
            let event = queue.pop().expect("one pending");
            let time = queue.now();
            popped.push((time, event));
        }
    }
    while let Some(event) = queue.pop() {
        popped.push((queue.now(), event));
    }
    expected.sort();
    assert_eq!(popped, expected);
    assert!(queue.is_empty());
}

/// The radix buckets give exactly a sort by (time, push order) over times that span every
/// scale (the same microsecond, microseconds, seconds, the end of time), with pops
/// interleaved: keys move between buckets, never out of order.
#[test]
fn wide_times_come_out_sorted() {
    let mut queue = EventQueue::new(1 << 16);
    let mut expected: Vec<(Time, u64)> = Vec::new();
    let mut popped: Vec<(Time, u64)> = Vec::new();
    let mut next = numbers(11);
    for pushed in 0..20_000u64 {
        let delay = match next() % 6 {
            0 => 0,
            1 => next() % 16,
            2 => next() % 5_000,
            3 => next() % 20_000_000,
            4 => next() << 20,
            _ => Time::MAX,
        };
        let time = queue.now().saturating_add(delay);
        queue.push(time, pushed);
        expected.push((time, pushed));
        assert_eq!(queue.len(), expected.len() - popped.len());
        if next().is_multiple_of(2) {
            let peeked = queue.peek_time();
            let event = queue.pop().expect("one pending");
            let time = queue.now();
            assert_eq!(peeked, Some(time));
            popped.push((time, event));
        }
    }
    while let Some(event) = queue.pop() {
        popped.push((queue.now(), event));
    }
    expected.sort();
    assert_eq!(popped, expected);
    assert!(queue.is_empty());
    assert_eq!(queue.peek_time(), None);
}

/// A full queue is a loud failure, not a slow one.
#[test]
fn overflow_is_loud() {
    let outcome = std::panic::catch_unwind(|| {
        let mut queue = EventQueue::new(2);
        queue.push(0, ());
        queue.push(0, ());
        queue.push(0, ());
    });
    assert!(outcome.is_err());
}
