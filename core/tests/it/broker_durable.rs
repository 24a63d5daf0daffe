//! The durable tail (`Broker::durable_last`) after a suffix truncation: the highest offset of
//! the node's *current* log known durable, which a leader counts for itself when it commits.
//! Proves: a truncation lowers it at once to just below the cut (the records it drops were this
//! log's, and are not any more); an append made durable while a later truncation is still
//! unsynced counts only below that truncation; once everything is durable it is the new tail.

use felix_core::broker::{Broker, BrokerConfig, Input, Message, Output, PersistId};
use felix_core::record::{Command, Entry, Headers, Offset, Term};
use felix_core::storage::StorageOp;

fn follower() -> Broker {
    Broker::new(BrokerConfig::new(1, vec![0, 1, 2], Vec::new()))
}

fn write(offset: Offset, term: Term) -> Entry {
    Entry {
        offset,
        term,
        command: Command::Write {
            body: vec![b'w'],
            headers: Headers::default(),
        },
    }
}

fn noop(offset: Offset, term: Term) -> Entry {
    Entry {
        offset,
        term,
        command: Command::Noop,
    }
}

/// AppendEntries from node 0; returns every persist the step asked for.
fn append(
    broker: &mut Broker,
    term: Term,
    prev: (Offset, Term),
    entries: Vec<Entry>,
) -> Vec<(PersistId, StorageOp)> {
    let outputs = broker.step_collect(Input::Message {
        from: 0,
        message: Message::AppendEntries {
            term,
            prev_offset: prev.0,
            prev_term: prev.1,
            entries,
            committed: 0,
        },
    });
    outputs
        .into_iter()
        .filter_map(|output| match output {
            Output::Persist { id, op } => Some((id, op)),
            _ => None,
        })
        .collect()
}

fn persisted(broker: &mut Broker, through: PersistId) {
    broker.step_collect(Input::Persisted { through });
}

/// Records 1..=3 of term 1 (none committed), all durable.
fn three_durable_records() -> Broker {
    let mut broker = follower();
    let persists = append(
        &mut broker,
        1,
        (0, 0),
        vec![noop(1, 1), write(2, 1), write(3, 1)],
    );
    let last = persists.last().expect("the records are persisted").0;
    persisted(&mut broker, last);
    assert_eq!(broker.durable_last(), 3);
    broker
}

#[test]
fn a_truncation_lowers_the_durable_tail_at_once() {
    let mut broker = three_durable_records();
    // The leader of term 2 replaces record 3.
    let persists = append(&mut broker, 2, (2, 1), vec![noop(3, 2)]);
    assert!(
        persists
            .iter()
            .any(|(_, op)| *op == StorageOp::TruncateSuffix { from: 3 }),
        "{persists:?}"
    );
    assert_eq!(
        broker.durable_last(),
        2,
        "record 3 of term 1 is gone; record 3 of term 2 is not durable yet"
    );
    let last = persists.last().expect("persists").0;
    persisted(&mut broker, last);
    assert_eq!(broker.durable_last(), 3, "the new record 3 is durable now");
}

#[test]
fn a_durable_append_counts_only_below_a_later_unsynced_truncation() {
    let mut broker = follower();
    let first = append(
        &mut broker,
        1,
        (0, 0),
        vec![noop(1, 1), write(2, 1), write(3, 1)],
    );
    let (append_id, _) = first
        .iter()
        .find(|(_, op)| matches!(op, StorageOp::Append(_)))
        .cloned()
        .expect("the records are appended");
    // Before that append is durable, term 2 cuts record 3 and replaces it.
    let second = append(&mut broker, 2, (2, 1), vec![noop(3, 2)]);
    assert!(second
        .iter()
        .any(|(_, op)| *op == StorageOp::TruncateSuffix { from: 3 }));
    persisted(&mut broker, append_id);
    assert_eq!(
        broker.durable_last(),
        2,
        "the durable append held 1..=3, but 3 is cut by an op not yet durable"
    );
    let last = second.last().expect("persists").0;
    persisted(&mut broker, last);
    assert_eq!(broker.durable_last(), 3);
}

#[test]
fn the_durable_tail_never_passes_the_log() {
    let mut broker = three_durable_records();
    // Term 2 cuts the log back to 1 and sends nothing after it.
    let persists = append(&mut broker, 2, (1, 1), vec![noop(2, 2)]);
    assert_eq!(broker.durable_last(), 1);
    let last = persists.last().expect("persists").0;
    persisted(&mut broker, last);
    assert_eq!(broker.tail(), 3);
    assert_eq!(broker.durable_last(), 2, "the log ends at 2 now");
}
