//! The nemesis catches the durability twin on real processes within a bounded time: with
//! AckBeforeSync every node acknowledges appended records before its fsync, and the seed's
//! power-loss draw puts every node in power-loss mode, so a kill of two or three nodes loses
//! records a client was told had landed (AckedWritesKept). The control (every rule on) is
//! `nemesis_short`. Real time decides the run, so the seed and the time were chosen from
//! measured runs (docs/real-node.md), not proven.

use super::support::exe;
use felix_core::rules::{Invariant, TwinName};
use felix_node::nemesis::{self, schedule, NemesisConfig};
use std::time::Duration;

#[test]
fn the_nemesis_catches_ack_before_sync_within_its_time() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let seed = 3;
    let time = Duration::from_secs(15);
    assert!(
        schedule::draw_power_loss(seed, 3).iter().all(|window| *window > 0),
        "the seed puts every node in power-loss mode"
    );
    let config = NemesisConfig {
        exe: exe(),
        nodes: 3,
        replicas: 0,
        time,
        seed,
        twin: Some(TwinName::AckBeforeSync),
        dir: dir.path().to_path_buf(),
        trace: dir.path().join("trace.jsonl"),
        holders: 2,
        readers: 2,
        paros: false,
    };
    let outcome = nemesis::run(&config).expect("the run starts");
    let found: Vec<String> = outcome
        .report
        .violations
        .iter()
        .map(|v| v.invariant.to_string())
        .collect();
    assert!(
        outcome.report.violates(Invariant::AckedWritesKept),
        "AckBeforeSync not caught in {time:?} of seed {seed}: {found:?}"
    );
}
