//! The unit tests of `felix_sim::render::trace` (sim/src/render/trace.rs).

use felix_core::history::Event;

use felix_sim::render::trace::*;

/// FNV-1a matches its published test vectors, so the hash is the documented function.
#[test]
fn fnv1a_matches_reference_vectors() {
    assert_eq!(fnv1a(FNV_OFFSET, b""), 0xcbf2_9ce4_8422_2325);
    assert_eq!(fnv1a(FNV_OFFSET, b"a"), 0xaf63_dc4c_8601_ec8c);
    assert_eq!(fnv1a(FNV_OFFSET, b"foobar"), 0x8594_4171_f739_67e8);
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
