//! The BUGGIFY sites: each fires in runs where it is active and never where it is not, and a run
//! with every site active and every rule on stays clean (the sites inject what the journal must
//! survive, not bugs).

use felix_audits::Counter;
use felix_sim::seeded::buggify::Site;
use felix_sim::seeded::knobs::Knobs;
use felix_sim::{run, RunSpec};
use std::collections::BTreeMap;

#[test]
fn every_site_fires_when_active_and_never_when_not() {
    let mut fired: BTreeMap<Site, u64> = BTreeMap::new();
    // Seeds until every site fired (a jump, ReadAfterJump's moment, comes in few runs), at most
    // SEEDS_MAX.
    const SEEDS_MAX: u64 = 400;
    for seed in 0..SEEDS_MAX {
        if seed >= 30
            && Site::ALL
                .iter()
                .all(|site| fired.get(site).is_some_and(|n| *n > 0))
        {
            break;
        }
        let mut knobs = Knobs::draw(seed, None);
        knobs.buggify = Site::ALL.to_vec();
        let mut spec = RunSpec::new(seed, None);
        spec.knobs = Some(knobs.clone());
        let report = run(&spec);
        assert!(
            report.violations.is_empty(),
            "seed {seed} with every site active: {:?}",
            report.violations.first()
        );
        for site in Site::ALL {
            let count = report.coverage.count(site.counter());
            *fired.entry(site).or_insert(0) += count;
        }
        knobs.buggify.clear();
        spec.knobs = Some(knobs);
        let quiet = run(&spec);
        for site in Site::ALL {
            assert_eq!(quiet.coverage.get(site.counter()), None, "{site:?}");
        }
    }
    for site in Site::ALL {
        assert!(fired[&site] > 0, "{site:?} never fired in {SEEDS_MAX} runs");
    }
}

/// The default swarm reaches `NotHeld` (a read below a jump's point, on the
/// node that jumped, before its walk reaches the trim that set the sender's floor) within the
/// default 1,000-seed sweep, and the run that does is clean with every rule on. Consecutive seeds,
/// stopping at the first that reaches it. (With 2-6 s runs only ReadAfterJump's restarted reader
/// got there; since runs last 16-48 s, plain readers do too: seed 38's run has the site off.)
#[test]
fn the_default_sweep_reaches_not_held() {
    let found = (0..1_000u64).find_map(|seed| {
        let report = run(&RunSpec::new(seed, None));
        let not_held = report.coverage.count(Counter::ReadNotHeld);
        (not_held > 0).then_some((seed, report))
    });
    let Some((seed, report)) = found else {
        panic!("no seed of 0..1000 reached read_not_held");
    };
    assert!(
        report.violations.is_empty(),
        "seed {seed}: {:?}",
        report.violations
    );
}

/// ReadAfterJump's own effect (the default sweep above reaches `NotHeld` without it since runs
/// are long): with that site alone active, some run of the first 400 seeds has it fire and then
/// counts more reads refused `NotHeld` than the same seed and knobs with the site off (the rewound
/// reader asks below the point the node just jumped to), and that run is clean with every rule on.
#[test]
fn read_after_jump_sends_a_reader_below_the_point() {
    let not_held = |report: &felix_sim::RunReport| report.coverage.count(Counter::ReadNotHeld);
    let found = (0..400u64).find_map(|seed| {
        let mut knobs = Knobs::draw(seed, None);
        knobs.buggify = vec![Site::ReadAfterJump];
        let mut spec = RunSpec::new(seed, None);
        spec.knobs = Some(knobs.clone());
        let on = run(&spec);
        let fired = on.coverage.count(Site::ReadAfterJump.counter());
        if fired == 0 {
            return None;
        }
        knobs.buggify.clear();
        spec.knobs = Some(knobs);
        let off = run(&spec);
        (not_held(&on) > not_held(&off)).then_some((seed, on))
    });
    let Some((seed, report)) = found else {
        panic!("in no seed of 0..400 did ReadAfterJump add a read refused NotHeld");
    };
    assert!(
        report.violations.is_empty(),
        "seed {seed}: {:?}",
        report.violations
    );
}

/// ReplayPast's own effect: with that site alone active, a run where it fires records, right after
/// an election, a replay of between 1 and 16 messages another node sent before, and that run is
/// clean with every rule on. Seeds where the site stays off record no replay.
#[test]
fn replay_past_sends_a_nodes_old_messages_again_after_an_election() {
    use felix_sim::render::trace::{SimEvent, TraceEvent};
    let replays = |report: &felix_sim::RunReport| -> Vec<usize> {
        let lines = report.trace_lines.as_deref().unwrap_or(&[]);
        lines
            .iter()
            .filter_map(|line| match &line.event {
                TraceEvent::Sim(SimEvent::NetworkFault { description }) => description
                    .strip_prefix("buggify: ")
                    .and_then(|rest| rest.split_once(" messages n"))
                    .filter(|(_, rest)| rest.ends_with(" sent are replayed"))
                    .and_then(|(count, _)| count.parse().ok()),
                _ => None,
            })
            .collect()
    };
    let found = (0..200u64).find_map(|seed| {
        let mut knobs = Knobs::draw(seed, None);
        knobs.buggify = vec![Site::ReplayPast];
        let mut spec = RunSpec::new(seed, None);
        spec.knobs = Some(knobs.clone());
        spec.keep_trace = true;
        let on = run(&spec);
        let fired = on.coverage.count(Site::ReplayPast.counter());
        if fired == 0 {
            return None;
        }
        knobs.buggify.clear();
        spec.knobs = Some(knobs);
        let off = run(&spec);
        Some((seed, on, off))
    });
    let Some((seed, on, off)) = found else {
        panic!("ReplayPast fired in no seed of 0..200");
    };
    let replayed = replays(&on);
    assert!(!replayed.is_empty(), "seed {seed}: no replay in the trace");
    assert!(
        replayed.iter().all(|count| (1..=16).contains(count)),
        "seed {seed}: {replayed:?}"
    );
    assert!(replays(&off).is_empty(), "seed {seed} with the site off");
    assert!(on.violations.is_empty(), "seed {seed}: {:?}", on.violations);
}

/// RestartAfterAck's own effect: a lease holder that restarts keeping its epoch reads from the
/// start, below the floors its own trims set, and is refused with a tag naming its own epoch
/// (which must not retire it: rule 1 retires on a newer epoch only). With that site alone active,
/// some felixd run of the first 200 seeds counts `holder_met_own_floor`, the same seed and knobs
/// with the site off count none (no other path reads below a holder's own floor), and that run
/// is clean with every rule on.
#[test]
fn restart_after_ack_meets_the_holders_own_floor() {
    let own_floor =
        |report: &felix_sim::RunReport| report.coverage.count(Counter::HolderMetOwnFloor);
    let found = (0..200u64).find_map(|seed| {
        let mut knobs = Knobs::draw(seed, None);
        knobs.buggify = vec![Site::RestartAfterAck];
        let mut spec = RunSpec::new(seed, None);
        spec.knobs = Some(knobs.clone());
        let report = run(&spec);
        if own_floor(&report) == 0 {
            return None;
        }
        knobs.buggify.clear();
        spec.knobs = Some(knobs);
        Some((seed, report, run(&spec)))
    });
    let Some((seed, report, off)) = found else {
        panic!("no seed of 0..200 with RestartAfterAck met a holder's own floor");
    };
    assert!(report.coverage.count(Site::RestartAfterAck.counter()) > 0);
    assert_eq!(own_floor(&off), 0, "seed {seed} with the site off");
    assert!(
        report.violations.is_empty(),
        "seed {seed}: {:?}",
        report.violations
    );
}

/// Knob `leader_partitions`: some run of the first 100 seeds that draw it cuts the leader off
/// together with the writers that send to it (the trace says so), and the same seed with the
/// knob off never does; the run is clean with every rule on.
#[test]
fn leader_partitions_cut_the_leader_off_with_its_writers() {
    let cut = |seed: u64, knobs: &Knobs| {
        let mut spec = RunSpec::new(seed, None);
        spec.knobs = Some(knobs.clone());
        spec.keep_trace = true;
        let report = run(&spec);
        let lines = report.trace_lines.as_deref().unwrap_or_default();
        let cuts = lines
            .iter()
            .filter(|line| {
                line.to_json()
                    .contains("cut the leader off with its writers")
            })
            .count();
        (cuts, report)
    };
    let found = (0..100u64).find_map(|seed| {
        let knobs = Knobs::draw(seed, None);
        if !knobs.leader_partitions {
            return None;
        }
        let (cuts, report) = cut(seed, &knobs);
        (cuts > 0).then_some((seed, knobs, report))
    });
    let Some((seed, mut knobs, report)) = found else {
        panic!("no seed of 0..100 with leader_partitions cut the leader off");
    };
    assert!(
        report.violations.is_empty(),
        "seed {seed}: {:?}",
        report.violations
    );
    knobs.leader_partitions = false;
    assert_eq!(cut(seed, &knobs).0, 0, "seed {seed} with the knob off");
}
