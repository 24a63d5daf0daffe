//! The unit tests of `felix_sim::env::network` (sim/src/env/network.rs).

use felix_sim::env::rng::Stream;

use felix_sim::env::network::*;
use felix_sim::env::rng::Component;

fn knobs() -> NetworkKnobs {
    NetworkKnobs {
        drop_per_million: 0,
        duplicate_per_million: 0,
        delay_min_micros: 10,
        delay_max_micros: 20,
        long_delay_per_million: 0,
        long_delay_max_micros: 100,
        ancient_per_million: 0,
        ancient_max_micros: 0,
        ancient_captures: false,
    }
}

/// A one-way block drops one direction only; a split drops both; heal restores delivery.
#[test]
fn partitions_block_directed_links() {
    let mut network = Network::new(Stream::new(1, Component::Network), knobs());
    let (a, b) = (Address::Node(0), Address::Node(1));
    network.block(a, b);
    assert!(network.route(0, a, b).is_empty());
    assert_eq!(network.route(0, b, a).len(), 1);
    network.split(&[a], &[b, Address::Client(7)]);
    assert!(network.route(0, b, a).is_empty());
    assert!(network.route(0, Address::Client(7), a).is_empty());
    network.heal();
    let arrivals = network.route(0, a, b);
    assert_eq!(arrivals.len(), 1);
    assert!((10..=20).contains(&arrivals[0]));
}

/// A clogged address delivers after the clog, not never; full loss drops everything.
#[test]
fn clogs_delay_and_drops_lose() {
    let mut network = Network::new(Stream::new(2, Component::Network), knobs());
    let (a, b) = (Address::Node(0), Address::Node(1));
    network.clog(b, 1_000);
    let arrivals = network.route(5, a, b);
    assert!(arrivals[0] >= 1_010);
    let mut lossy = Network::new(
        Stream::new(2, Component::Network),
        NetworkKnobs {
            drop_per_million: 1_000_000,
            ..knobs()
        },
    );
    assert!(lossy.route(0, a, b).is_empty());
    let mut doubling = Network::new(
        Stream::new(2, Component::Network),
        NetworkKnobs {
            duplicate_per_million: 1_000_000,
            ..knobs()
        },
    );
    assert_eq!(doubling.route(0, a, b).len(), 2);
}

/// An old copy comes a second or more after the message, only between nodes and only while
/// faults are on.
#[test]
fn old_messages_come_back_late_between_nodes_only() {
    let (a, b) = (Address::Node(0), Address::Node(1));
    let mut network = Network::new(
        Stream::new(3, Component::Network),
        NetworkKnobs {
            ancient_per_million: 1_000_000,
            ancient_max_micros: 3_000_000,
            ..knobs()
        },
    );
    let arrivals = network.route(5, a, b);
    assert_eq!(arrivals.len(), 2);
    assert!(arrivals[0] <= 25);
    assert!(
        (1_000_005..=3_000_005).contains(&arrivals[1]),
        "{arrivals:?}"
    );
    assert!(arrivals.old && !arrivals.captured);
    assert_eq!(network.route(5, Address::Client(0), b).len(), 1);
    network.heal();
    assert_eq!(network.route(5, a, b).len(), 1);
    // Captured: the message arrives once, late, and not at its time.
    let mut capturing = Network::new(
        Stream::new(3, Component::Network),
        NetworkKnobs {
            ancient_per_million: 1_000_000,
            ancient_max_micros: 3_000_000,
            ancient_captures: true,
            ..knobs()
        },
    );
    let arrivals = capturing.route(5, a, b);
    assert_eq!(arrivals.len(), 1);
    assert!(arrivals.old && arrivals.captured);
    assert!(
        (1_000_005..=3_000_005).contains(&arrivals[0]),
        "{arrivals:?}"
    );
}
