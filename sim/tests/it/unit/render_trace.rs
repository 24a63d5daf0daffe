//! The unit tests of `felix_sim::render::trace` (sim/src/render/trace.rs).

use felix_core::history::Event;

use felix_sim::render::trace::*;

/// The sweep hash chains the trace hashes in seed order: FNV-1a over their little-endian bytes
/// from the offset basis (the audits' tests pin FNV-1a itself to its published vectors).
#[test]
fn the_sweep_hash_chains_trace_hashes_in_order() {
    let empty = SweepHash::default();
    assert_eq!(empty.value(), felix_audits::fnv::OFFSET);
    let (first, second) = (0x0102_0304_0506_0708_u64, 0x1112_1314_1516_1718_u64);
    let mut hash = empty;
    hash.add(first);
    hash.add(second);
    let bytes: Vec<u8> = [first.to_le_bytes(), second.to_le_bytes()].concat();
    assert_eq!(
        hash.value(),
        felix_audits::fnv::fnv1a(felix_audits::fnv::OFFSET, &bytes)
    );
    let mut swapped = empty;
    swapped.add(second);
    swapped.add(first);
    assert_ne!(hash, swapped, "the order of the seeds counts");
}

/// The same events give the same hash; one changed event changes it.
#[test]
fn hash_follows_events() {
    let run = |node| {
        let mut recorder = Recorder::new(true, None);
        recorder.sim(
            0,
            SimEvent::Phase {
                name: "safety".into(),
            },
        );
        recorder.history(5, Event::Crashed { node });
        recorder.hash()
    };
    assert_eq!(run(1), run(1));
    assert_ne!(run(1), run(2));
    let mut recorder = Recorder::new(true, None);
    recorder.history(5, Event::Crashed { node: 3 });
    assert_eq!(recorder.history_steps, vec![0]);
    let lines = recorder.take_lines().unwrap_or_default();
    let json: Vec<String> = lines.iter().map(TraceLine::to_json).collect();
    assert_eq!(
        json,
        vec![r#"{"step":0,"time_micros":5,"history":{"Crashed":{"node":3}}}"#.to_string()]
    );
}
