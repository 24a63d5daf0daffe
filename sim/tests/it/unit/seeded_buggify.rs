//! The unit tests of `felix_sim::seeded::buggify` (sim/src/seeded/buggify.rs).

use felix_sim::env::rng::Stream;

use felix_sim::env::rng::Component;
use felix_sim::seeded::buggify::*;

/// An inactive site never fires; an active one fires sometimes, not always; the same seed
/// fires the same way.
#[test]
fn two_gates() {
    let mut off = Buggify::new(Stream::new(3, Component::Buggify), &[]);
    assert!((0..100).all(|_| !off.fire(Site::SlowSync)));
    let mut on = Buggify::new(Stream::new(3, Component::Buggify), &[Site::SlowSync]);
    let fired: Vec<bool> = (0..200).map(|_| on.fire(Site::SlowSync)).collect();
    assert!(fired.iter().any(|f| *f) && fired.iter().any(|f| !*f));
    let mut again = Buggify::new(Stream::new(3, Component::Buggify), &[Site::SlowSync]);
    let refired: Vec<bool> = (0..200).map(|_| again.fire(Site::SlowSync)).collect();
    assert_eq!(fired, refired);
    assert!(!on.fire(Site::PauseAfterAck));
}
