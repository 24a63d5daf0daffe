//! The unit tests of `felix_sim::env::rng` (sim/src/env/rng.rs).

use felix_sim::env::rng::*;

/// The same seed and component give the same draws; another component gives other draws.
#[test]
fn streams_are_reproducible_and_independent() {
    let mut first = Stream::new(7, Component::Network);
    let mut second = Stream::new(7, Component::Network);
    let mut other = Stream::new(7, Component::Disk);
    let a: Vec<u64> = (0..8).map(|_| first.next_u64()).collect();
    let b: Vec<u64> = (0..8).map(|_| second.next_u64()).collect();
    let c: Vec<u64> = (0..8).map(|_| other.next_u64()).collect();
    assert_eq!(a, b);
    assert_ne!(a, c);
    let mut node_one = Stream::new(7, Component::Timeouts(1));
    let mut node_two = Stream::new(7, Component::Timeouts(2));
    assert_ne!(node_one.next_u64(), node_two.next_u64());
}

/// Draws stay inside their bounds, and rates of zero and one million are exact.
#[test]
fn draws_respect_bounds() {
    let mut stream = Stream::new(3, Component::Workload);
    for _ in 0..1_000 {
        let value = stream.range(5, 9);
        assert!((5..=9).contains(&value));
        assert!(!stream.chance(0));
        assert!(stream.chance(1_000_000));
        assert!(stream.index(3) < 3);
    }
}
