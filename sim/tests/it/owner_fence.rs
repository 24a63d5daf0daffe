//! Arbitrary truncates come only from owners whose fence is really stale (a regression:
//! FoldAgreement on seeds 60663, 73002 and 186528 of a rules-on sweep was a false alarm of the
//! world, not a core bug).
//!
//! The world makes a stale paros owner send a truncate to an arbitrary floor, to check that the
//! fence refuses it. It judged "stale" by the lease service's appointments: an owner was stale as
//! soon as another one was appointed. But the successor's `Fence { new, old }` can be refused
//! (it names an `old` that already moved on: seed 73002's c0 took the fence 9->11 while 10 was in
//! force), and then the "stale" owner still holds the fence in force: its truncate to floor 6 was
//! accepted, correctly, at a floor with no checkpoint, and the next owner, restoring from the
//! floor, found no run there and folded from an empty state. Now an owner is stale only once a
//! newer fence is committed, after which the fence refuses everything it sends.

use felix_core::api::Request;
use felix_core::history::Event;
use felix_core::Command;
use felix_sim::{run, RunSpec};
use std::collections::BTreeMap;

/// Every truncate an owner sends while no newer fence is committed is to the start of the
/// checkpoint run it just wrote; the number of such checked truncates.
fn assert_truncates_at_checkpoints(seed: u64, history: &[Event]) -> usize {
    let mut fence_committed = 0;
    let mut last_run: BTreeMap<u32, u64> = BTreeMap::new();
    // The tokens each client asked to fence with: an owner's. The prober's made-up tokens were
    // never fenced with, and its truncates are out of contract on purpose.
    let mut fenced: BTreeMap<u32, Vec<u64>> = BTreeMap::new();
    let mut checked = 0;
    for event in history {
        match event {
            Event::Requested {
                client,
                request: Request::Fence { new, .. },
                ..
            } => fenced.entry(*client).or_default().push(new.0),
            Event::Committed { entry, .. } => {
                if let Command::Fence { new, .. } = entry.command {
                    fence_committed = fence_committed.max(new.0);
                }
            }
            Event::CheckpointWritten { client, begin, .. } => {
                last_run.insert(*client, *begin);
            }
            Event::Requested {
                client,
                request:
                    Request::Trim {
                        fence: Some(token),
                        floor,
                        ..
                    },
                ..
            } if token.0 >= fence_committed
                && fenced
                    .get(client)
                    .is_some_and(|tokens| tokens.contains(&token.0)) =>
            {
                assert_eq!(
                    last_run.get(client),
                    Some(floor),
                    "seed {seed}: owner c{client} holding the newest committed fence {} asked for \
                     floor {floor}, not at its checkpoint",
                    token.0
                );
                checked += 1;
            }
            _ => {}
        }
    }
    checked
}

/// The three seeds are clean with every rule on, and every truncate from an owner that may still
/// hold the fence is at its checkpoint.
#[test]
fn the_fold_agreement_seeds_truncate_only_at_checkpoints() {
    for seed in [60663, 73002, 186528] {
        let report = run(&RunSpec::new(seed, None));
        assert!(
            report.violations.is_empty(),
            "seed {seed}: {:?}",
            report.violations.first()
        );
    }
}

/// Over paros runs of the default swarm, the world never asks an owner that may hold the fence
/// in force (a token it fenced with, not older than the newest committed fence) for a truncate
/// off its checkpoint, and checkpoint truncates do happen.
#[test]
fn owners_that_may_hold_the_fence_truncate_only_at_their_checkpoint() {
    let mut checked = 0;
    let mut paros = 0;
    for seed in [60663, 73002, 186528].into_iter().chain(0..120) {
        let mut spec = RunSpec::new(seed, None);
        if !matches!(
            spec.knobs().workload,
            felix_sim::seeded::knobs::Workload::Paros { .. }
        ) {
            continue;
        }
        paros += 1;
        spec.keep_trace = true;
        let report = run(&spec);
        let history: Vec<Event> = report
            .trace_lines
            .as_ref()
            .expect("a kept trace")
            .iter()
            .filter_map(|line| match &line.event {
                felix_sim::render::trace::TraceEvent::History(event) => Some(event.clone()),
                felix_sim::render::trace::TraceEvent::Sim(_) => None,
            })
            .collect();
        checked += assert_truncates_at_checkpoints(seed, &history);
    }
    assert!(paros >= 10, "only {paros} paros runs");
    assert!(checked > 0, "no checkpoint truncate in {paros} paros runs");
}
