//! The unit tests of `felix_sim::seeded::swarm` (sim/src/seeded/swarm.rs).

use felix_sim::env::rng::Stream;

use felix_sim::env::rng::Component;
use felix_sim::seeded::swarm::*;

/// Spans hit both edges and the inside; weights keep a non-empty subset in 1..=100 and
/// sometimes drop variants; picks reach both ends of the list.
#[test]
fn every_shape_is_reachable() {
    let mut stream = Stream::new(5, Component::Knobs);
    let mut swarm = Swarm::new(&mut stream);
    let spans: Vec<u64> = (0..400).map(|_| swarm.span(10, 20, 1, 100)).collect();
    assert!(spans.contains(&1) && spans.contains(&100));
    assert!(spans.iter().any(|value| (10..=20).contains(value)));
    assert!(spans
        .iter()
        .all(|value| (10..=20).contains(value) || *value == 1 || *value == 100));
    let mut subset_sizes = std::collections::BTreeSet::new();
    for _ in 0..400 {
        let weights: [u32; 5] = swarm.weights();
        let kept = weights.iter().filter(|weight| **weight > 0).count();
        assert!(kept >= 1);
        assert!(weights.iter().all(|weight| *weight <= 100));
        subset_sizes.insert(kept);
    }
    assert_eq!(subset_sizes.len(), 5);
    let picks: Vec<u32> = (0..400).map(|_| swarm.pick(&[0, 5, 9])).collect();
    assert!(picks.contains(&0) && picks.contains(&9) && picks.contains(&5));
}
