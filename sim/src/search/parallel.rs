//! Many runs on several threads, reported in order.
//!
//! Each run stays what it always is: one seed, one thread, one deterministic event loop (a run
//! never shares a thread with another while it runs, and nothing here reaches inside it). This
//! module only spreads whole runs over `jobs` OS threads and hands their reports back **in index
//! order**, whatever thread finished first. The promise: for the same specs, the sequence of
//! reports that `visit` sees, and so everything computed from it (a sweep's output, its hash, its
//! exit code), does not depend on `jobs`. When `visit` asks to stop, the reports it saw are a
//! prefix of the specs, the same prefix for any `jobs`; runs already under way finish and are
//! discarded.

use crate::{RunReport, RunSpec};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;

/// Runs the specs `spec(0..count)` with `crate::run` over `jobs` threads and hands each report
/// to `visit` in index order; `spec` returns None past the end, and `visit` returns false to stop
/// (see the module's promise).
pub fn run_in_order(
    count: u64,
    spec: impl Fn(u64) -> Option<RunSpec> + Sync,
    jobs: usize,
    visit: impl FnMut(RunReport) -> bool,
) {
    run_in_order_with(count, spec, jobs, crate::run, visit);
}

/// `run_in_order` with the function that runs one spec (a crate above the simulator passes its
/// own, e.g. one that also validates the run's trace, or one that hands back a report it already
/// has for the same spec). Panics if `jobs` is 0.
pub fn run_in_order_with(
    count: u64,
    spec: impl Fn(u64) -> Option<RunSpec> + Sync,
    jobs: usize,
    runner: impl Fn(&RunSpec) -> RunReport + Sync,
    mut visit: impl FnMut(RunReport) -> bool,
) {
    assert!(jobs >= 1);
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let (sender, receiver) = mpsc::channel::<(usize, RunReport)>();
    std::thread::scope(|scope| {
        for _ in 0..(jobs as u64).min(count.max(1)) {
            let sender = sender.clone();
            let (next, stop, spec, runner) = (&next, &stop, &spec, &runner);
            scope.spawn(move || loop {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                let index = next.fetch_add(1, Ordering::Relaxed);
                let Some(spec) = spec(index as u64) else {
                    break;
                };
                let report = runner(&spec);
                if sender.send((index, report)).is_err() {
                    break;
                }
            });
        }
        drop(sender);
        let mut pending: BTreeMap<usize, RunReport> = BTreeMap::new();
        let mut expected = 0usize;
        let mut going = true;
        for (index, report) in receiver.iter() {
            if !going {
                continue;
            }
            pending.insert(index, report);
            while let Some(report) = pending.remove(&expected) {
                expected += 1;
                if !visit(report) {
                    going = false;
                    stop.store(true, Ordering::Relaxed);
                    break;
                }
            }
        }
    });
}
