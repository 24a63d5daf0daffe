//! Property test of the folder against a trivial model: for any journal of application writes
//! with a checkpoint run of the true state somewhere in it, a folder that folds everything and a
//! folder that starts below the floor and restores from the run at the floor fold every offset
//! they both see to the same digest; and a run that is not the true state is always caught by the
//! folder that holds the prefix (`CheckpointCompared` with unequal digests).

use felix_core::api::{ReadRecord, Reply};
use felix_core::client::checkpoint::encode_run;
use felix_core::client::{Client, Fold, Folder};
use felix_core::history::Event;
use felix_core::{Headers, Offset};
use proptest::prelude::*;
use std::collections::BTreeMap;

fn record(offset: Offset, body: Vec<u8>) -> ReadRecord {
    ReadRecord {
        offset,
        body,
        headers: Headers::default(),
    }
}

/// The journal: `before` writes from offset 1, the run of `state` at `before + 1`, then `after`.
fn journal(
    before: &[Vec<u8>],
    state: Fold,
    chunk_bytes: usize,
    after: &[Vec<u8>],
) -> (Vec<ReadRecord>, Offset) {
    let mut records = Vec::new();
    let mut offset = 1;
    for body in before {
        records.push(record(offset, body.clone()));
        offset += 1;
    }
    let begin = offset;
    for run_record in encode_run(state, chunk_bytes) {
        records.push(record(offset, run_record.encode()));
        offset += 1;
    }
    for body in after {
        records.push(record(offset, body.clone()));
        offset += 1;
    }
    (records, begin)
}

/// The model: the fold of the application writes among `records`.
fn model_fold(bodies: &[Vec<u8>]) -> Fold {
    let mut fold = Fold::empty();
    for (index, body) in bodies.iter().enumerate() {
        fold.apply(index as Offset + 1, body);
    }
    fold
}

/// Feeds `records` from `from` to a folder in batches of `batch`, returning its events.
fn feed(folder: &mut Folder, records: &[ReadRecord], batch: usize) -> Vec<Event> {
    let mut events = Vec::new();
    let start = folder.cursor();
    let mut pending: Vec<ReadRecord> = records
        .iter()
        .filter(|record| record.offset >= start)
        .cloned()
        .collect();
    let end = records.last().map_or(start, |record| record.offset + 1);
    while !pending.is_empty() {
        let rest = pending.split_off(batch.min(pending.len()));
        let next = rest.first().map_or(end, |record| record.offset);
        let (id, _) = folder.next_request().expect("a folder always reads");
        let step = folder.on_reply(
            id,
            Reply::Records {
                records: pending,
                next,
            },
        );
        events.extend(step.events);
        pending = rest;
    }
    events
}

fn digests(events: &[Event]) -> BTreeMap<Offset, u64> {
    events
        .iter()
        .filter_map(|event| match event {
            Event::Folded { offset, digest, .. } => Some((*offset, *digest)),
            _ => None,
        })
        .collect()
}

fn bodies() -> impl Strategy<Value = Vec<Vec<u8>>> {
    proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..8), 0..6)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Restoring at the floor and folding everything agree at every offset both fold.
    #[test]
    fn restore_agrees_with_the_full_fold(
        before in bodies(),
        after in bodies(),
        chunk_bytes in 1usize..17,
        batch in 1usize..5,
    ) {
        let truth = model_fold(&before);
        let (records, begin) = journal(&before, truth, chunk_bytes, &after);
        let mut full = Folder::new(1, 16, 16);
        let full_events = feed(&mut full, &records, batch);
        let mut late = Folder::new(2, 16, 16);
        if begin > 1 {
            // Truncated to the run: the late folder starts below the floor.
            let (id, _) = late.next_request().expect("a read");
            late.on_reply(id, Reply::CursorTooOld { floor: begin, tag: None });
        }
        let late_events = feed(&mut late, &records, batch);
        let restored = late_events.iter().any(|event| matches!(event, Event::CheckpointRestored { .. }));
        prop_assert_eq!(restored, begin > 1, "a folder restores exactly when it lost the prefix");
        let full_digests = digests(&full_events);
        let late_digests = digests(&late_events);
        prop_assert!(!late_digests.is_empty());
        for (offset, digest) in &late_digests {
            prop_assert_eq!(full_digests.get(offset), Some(digest), "offset {}", offset);
        }
        prop_assert_eq!(full.fold(), late.fold());
        let compared: Vec<(u64, u64)> = full_events.iter().filter_map(|event| match event {
            Event::CheckpointCompared { digest, checkpoint_digest, .. } => Some((*digest, *checkpoint_digest)),
            _ => None,
        }).collect();
        prop_assert_eq!(compared, vec![(truth.digest, truth.digest)]);
    }

    /// A run that is not the true state of its prefix is reported by the folder holding the prefix.
    #[test]
    fn a_wrong_checkpoint_is_caught_by_comparison(
        before in bodies(),
        extra in proptest::collection::vec(any::<u8>(), 0..8),
        chunk_bytes in 1usize..17,
    ) {
        let mut wrong = model_fold(&before);
        wrong.apply(before.len() as Offset + 1, &extra);
        let (records, _) = journal(&before, wrong, chunk_bytes, &[]);
        let mut full = Folder::new(1, 16, 16);
        let events = feed(&mut full, &records, 3);
        let mismatches = events.iter().filter(|event| matches!(
            event,
            Event::CheckpointCompared { digest, checkpoint_digest, .. } if digest != checkpoint_digest
        )).count();
        prop_assert_eq!(mismatches, 1);
    }
}
