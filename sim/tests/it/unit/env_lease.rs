//! The unit tests of `felix_sim::env::lease` (sim/src/env/lease.rs).

use felix_sim::env::lease::*;

/// Epochs strictly increase across grants, and only the current holder can renew.
#[test]
fn epochs_increase_and_only_the_holder_renews() {
    let mut service = LeaseService::new(100);
    let first = service.grant(1, 0);
    let second = service.grant(2, 10);
    assert!(second.epoch > first.epoch);
    assert!(!service.renew(1, first.epoch, 20));
    assert!(service.renew(2, second.epoch, 50));
    assert!(!service.expired(149));
    assert!(service.expired(150));
}
