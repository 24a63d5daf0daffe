//! The unit tests of `felix_sim::seeded::world::breaker` (sim/src/seeded/world/breaker.rs).

use felix_core::api::Request;
use felix_core::client::checkpoint::RunRecord;
use felix_sim::env::rng::Stream;

use felix_core::client::checkpoint::{checksum, encode_run};
use felix_core::client::Fold;
use felix_core::Headers;
use felix_sim::env::rng::Component;
use felix_sim::seeded::world::breaker::*;

fn append(record: &RunRecord) -> Request {
    Request::Append {
        expected_tail: Some(3),
        fence: None,
        body: record.encode(),
        headers: Headers::default(),
    }
}

/// Over many runs: at most one record per run is broken, never `Begin` and never an
/// application write; every kind of break happens; a broken run no longer decodes to a whole
/// run (chunks numbered in order, an `End` naming their count and checksum).
#[test]
fn breaks_at_most_one_record_per_run_and_every_kind() {
    let mut fold = Fold::empty();
    for offset in 1..40 {
        fold.apply(offset, format!("w{offset}").as_bytes());
    }
    let run = encode_run(fold, 2);
    assert!(run.len() > 4, "{}", run.len());
    let mut breaker = Breaker::new(0);
    let mut stream = Stream::new(5, Component::Workload);
    let mut kinds = std::collections::BTreeSet::new();
    for _ in 0..400 {
        let mut sent = Vec::new();
        let mut broken = 0;
        for record in &run {
            let (request, was) = breaker.send(&mut stream, append(record));
            broken += usize::from(was);
            let Request::Append { body, .. } = request else {
                panic!("an append stays an append");
            };
            sent.push(RunRecord::decode(&body));
        }
        assert!(broken <= 1);
        assert_eq!(sent[0], Some(RunRecord::Begin));
        let chunks: Vec<Vec<u8>> = sent
            .iter()
            .filter_map(|record| match record {
                Some(RunRecord::Chunk { payload, .. }) => Some(payload.clone()),
                _ => None,
            })
            .collect();
        let numbered = sent
            .iter()
            .filter_map(|record| match record {
                Some(RunRecord::Chunk { index, .. }) => Some(*index),
                _ => None,
            })
            .enumerate()
            .all(|(at, index)| at as u32 == index);
        let whole = numbered
            && sent[1..sent.len() - 1]
                .iter()
                .all(|record| matches!(record, Some(RunRecord::Chunk { .. })))
            && matches!(sent.last(), Some(Some(RunRecord::End { chunks: count, checksum: sum }))
                if *count as usize == chunks.len() && *sum == checksum(&chunks));
        assert_eq!(whole, broken == 0);
        if broken == 1 {
            let kind = sent
                .iter()
                .zip(&run)
                .find(|(sent, record)| sent.as_ref() != Some(*record))
                .map(|(sent, _)| match sent {
                    None => "missing",
                    Some(RunRecord::Chunk { .. }) if !numbered => "misnumbered",
                    Some(RunRecord::Chunk { .. }) => "altered",
                    Some(RunRecord::End { .. }) => "end",
                    _ => "other",
                });
            kinds.extend(kind);
        }
    }
    assert_eq!(
        kinds.into_iter().collect::<Vec<_>>(),
        ["altered", "end", "misnumbered", "missing"]
    );
    // An application write goes out untouched.
    let write = Request::Append {
        expected_tail: None,
        fence: None,
        body: b"w1".to_vec(),
        headers: Headers::default(),
    };
    assert_eq!(breaker.send(&mut stream, write.clone()), (write, false));
}
