//! The unit tests of `felix_sim::env::stopwatch` (sim/src/env/stopwatch.rs).

use felix_sim::env::stopwatch::*;

/// Off, nothing is counted; on, every timed call is; `take` resets.
#[test]
fn timers_count_only_when_on() {
    enable(false);
    take();
    assert_eq!(time(Section::BrokerStep, || 7), 7);
    assert_eq!(take(), Totals::default());
    enable(true);
    time(Section::BrokerStep, || ());
    time(Section::Audits, || ());
    time(Section::Audits, || ());
    let totals = take();
    enable(false);
    assert_eq!((totals.broker_steps, totals.audit_calls), (1, 2));
    assert_eq!(take().broker_steps, 0);
}
