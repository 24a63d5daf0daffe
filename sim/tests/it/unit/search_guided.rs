//! The unit tests of `felix_sim::search::guided` (sim/src/search/guided.rs).

use felix_audits::Counter;
use felix_sim::seeded::fork::Fork;
use felix_sim::{RunReport, RunSpec};

use felix_sim::search::guided::*;

/// Buckets follow AFL's edges.
#[test]
fn afl_buckets() {
    let edges = [
        (1, 1),
        (2, 2),
        (3, 3),
        (4, 4),
        (7, 4),
        (8, 5),
        (15, 5),
        (16, 6),
        (31, 6),
        (32, 7),
        (127, 7),
        (128, 8),
        (1 << 40, 8),
    ];
    for (count, bucket_expected) in edges {
        assert_eq!(bucket(count), bucket_expected, "{count}");
    }
}

/// The campaign is a function of its start seed and budget: two campaigns fed the same
/// reports generate the same runs; a run with a new pair joins the corpus, a repeat does not;
/// mutants carry valid knobs.
#[test]
fn campaigns_are_deterministic_and_keep_news() {
    let run = |start: u64| {
        let mut campaign = Campaign::new(start, 3 * BATCH, None);
        let mut specs = Vec::new();
        loop {
            let batch = campaign.next_batch();
            if batch.is_empty() {
                break;
            }
            let first = specs.len() as u64;
            for (offset, spec) in batch.iter().enumerate() {
                // Reports whose coverage makes the corpus grow predictably.
                let index = first + offset as u64;
                let mut report = RunReport::unrun(spec);
                let probe = felix_audits::probes::PROBES[(index % 7) as usize];
                report.coverage.set(probe, index % 3 + 1);
                campaign.observe(first + offset as u64, &report);
            }
            specs.extend(batch);
        }
        (specs, campaign.corpus().len())
    };
    let (first, corpus) = run(5);
    let (second, _) = run(5);
    assert_eq!(first, second);
    assert_eq!(first.len() as u64, 3 * BATCH);
    assert_eq!(corpus, 21, "7 counters x 3 buckets");
    assert!(first.iter().any(|spec| spec.knobs.is_some()));
    for spec in &first {
        if let Some(knobs) = &spec.knobs {
            assert_eq!(knobs.validate(), Ok(()));
        }
    }
}

/// A run after the first batch that reaches a counter no run reached before is reseeded
/// `FOLLOW_UPS` times in a row (its knobs, new seeds) before energy picks parents again; a
/// counter the first batch already reached earns nothing.
#[test]
fn a_first_hit_is_followed_up() {
    let report = |spec: &RunSpec, counter: Counter| {
        let mut report = RunReport::unrun(spec);
        report.coverage.set(counter, 1);
        report
    };
    let common = felix_audits::probes::PROBES[0];
    let rare = felix_audits::probes::PROBES[1];
    let mut campaign = Campaign::new(9, 4 * BATCH, None);
    let first = campaign.next_batch();
    for (index, spec) in first.iter().enumerate() {
        campaign.observe(index as u64, &report(spec, common));
    }
    let second = campaign.next_batch();
    // The second batch's first run reaches a new counter; the rest repeat the common one.
    let rare_knobs = second[0].knobs();
    for (offset, spec) in second.iter().enumerate() {
        let counter = if offset == 0 { rare } else { common };
        campaign.observe(BATCH + offset as u64, &report(spec, counter));
    }
    assert!(campaign
        .follow_ups()
        .iter()
        .all(|(_, left)| *left == FOLLOW_UPS));
    assert_eq!(campaign.follow_ups().len(), 1);
    let third = campaign.next_batch();
    let mutants: Vec<&RunSpec> = third.iter().filter(|spec| spec.knobs.is_some()).collect();
    assert!(
        mutants.len() >= FOLLOW_UPS as usize,
        "{} mutants",
        mutants.len()
    );
    for spec in &mutants[..FOLLOW_UPS as usize] {
        assert_eq!(spec.knobs.as_ref(), Some(&rare_knobs));
    }
    assert!(campaign.follow_ups().is_empty());
}

/// With branching on, the same first hit is followed up by `FOLLOW_UPS` continuations of the
/// run that reached it (its seed, its knobs, branches 0, 1, ...), forked at the trace step
/// where it first reached the new counter (one run more to find it), and no reseeds.
#[test]
fn a_first_hit_is_branched_with_branching_on() {
    let report = |spec: &RunSpec, counter: Counter| {
        let mut report = RunReport::unrun(spec);
        report.coverage.set(counter, 1);
        report
    };
    // The common counter is what the reports say; the rare one is one the real run reaches.
    let common = felix_audits::probes::PROBES[0];
    let rare = Counter::LeaderChanged;
    let mut campaign = Campaign::new(9, 4 * BATCH, None).branching();
    let first = campaign.next_batch();
    for (index, spec) in first.iter().enumerate() {
        campaign.observe(index as u64, &report(spec, common));
    }
    let second = campaign.next_batch();
    for (offset, spec) in second.iter().enumerate() {
        let counter = if offset == 0 { rare } else { common };
        campaign.observe(BATCH + offset as u64, &report(spec, counter));
    }
    assert!(campaign.follow_ups().is_empty());
    let third = campaign.next_batch();
    assert_eq!(campaign.locates(), 1);
    let continuations: Vec<&RunSpec> = third.iter().filter(|spec| spec.fork.is_some()).collect();
    assert_eq!(continuations.len(), FOLLOW_UPS as usize);
    let step = felix_sim::seeded::fork::first_step(
        second[0].seed,
        felix_core::Rules::default(),
        &second[0].knobs(),
        None,
        rare,
    );
    assert!(step.is_some());
    for (branch, spec) in continuations.iter().enumerate() {
        assert_eq!(spec.seed, second[0].seed);
        assert_eq!(spec.knobs.as_ref(), Some(&second[0].knobs()));
        assert_eq!(
            spec.fork,
            step.map(|step| Fork {
                step,
                branch: branch as u32
            })
        );
    }
}
