//! Wall-clock timers for `felix bench sim`, and nothing else.
//!
//! `felix bench sim` reports the share of a run's wall time spent inside the core's
//! `Broker::step` and inside the audits. The timers are per thread and off unless a benchmark
//! turns them on for its own thread (`enable`); when off, a timed section costs one thread-local
//! read. What they measure is only ever added up here and read back by the benchmark
//! (`take`): no run reads a clock or a timer, so a run does the same thing event for event with
//! the timers on or off (the benchmark checks that its timed pass gives the same sweep hash).

use std::cell::Cell;
use std::time::{Duration, Instant};

/// What is timed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Section {
    /// The core's `Broker::step` (in `host::Host::step`).
    BrokerStep,
    /// The audits judging a run's history (in `judge::judge_by`).
    Audits,
}

/// Time and calls per section since the last `take`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Totals {
    pub broker_step: Duration,
    pub broker_steps: u64,
    pub audits: Duration,
    pub audit_calls: u64,
}

thread_local! {
    static ENABLED: Cell<bool> = const { Cell::new(false) };
    static TOTALS: Cell<Totals> = Cell::new(Totals::default());
}

/// Turns this thread's timers on or off.
pub fn enable(on: bool) {
    ENABLED.with(|enabled| enabled.set(on));
}

/// This thread's totals since the last `take`, reset to zero.
pub fn take() -> Totals {
    TOTALS.with(|totals| totals.replace(Totals::default()))
}

/// Runs `work`, adding its wall time to `section` when this thread's timers are on.
#[inline]
pub fn time<T>(section: Section, work: impl FnOnce() -> T) -> T {
    if !ENABLED.with(Cell::get) {
        return work();
    }
    let started = Instant::now();
    let result = work();
    let elapsed = started.elapsed();
    TOTALS.with(|totals| {
        let mut sum = totals.get();
        match section {
            Section::BrokerStep => {
                sum.broker_step += elapsed;
                sum.broker_steps += 1;
            }
            Section::Audits => {
                sum.audits += elapsed;
                sum.audit_calls += 1;
            }
        }
        totals.set(sum);
    });
    result
}
