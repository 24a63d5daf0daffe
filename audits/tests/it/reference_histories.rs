//! Property tests over the reference cluster's correct histories (`felix_audits::synthetic`):
//! the audits never report a correct history, and each one catches its own invariant when one
//! event of such a history is broken.

use felix_audits::synthetic::correct_history;
use felix_audits::*;
use felix_core::api::{ReadFrom, ReadRecord};
use felix_core::api::{Reply, Request};
use felix_core::history::{Event, Phase};
use felix_core::record::{Command, Entry, Headers};
use proptest::prelude::*;

/// The index of the final `PhaseChanged { End }` marker.
fn end_index(history: &[Event]) -> usize {
    history
        .iter()
        .rposition(|event| matches!(event, Event::PhaseChanged { phase: Phase::End }))
        .expect("the reference always ends its histories with the marker")
}

/// The `pick`-th event (wrapping) among those `select` accepts.
fn pick<'h, T>(
    history: &'h [Event],
    pick: usize,
    select: impl Fn(&'h Event) -> Option<T>,
) -> Option<T> {
    let found: Vec<T> = history.iter().filter_map(select).collect();
    if found.is_empty() {
        return None;
    }
    let index = pick % found.len();
    found.into_iter().nth(index)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// A correct history, with crashes, restarts, jumps, lazy floors, lost acks and reads, breaks
    /// no invariant, and the paths coverage counts are taken.
    #[test]
    fn correct_histories_pass(seed in any::<u64>()) {
        let history = correct_history(seed, 1_500);
        let report = audit(&history);
        prop_assert!(report.ok(), "seed {seed}: {:?}", report.violations.first());
        prop_assert!(report.coverage.read_below_trim_refused > 0);
    }

    /// A second, different commit of a committed offset is caught by CommittedPrefixAgreement.
    #[test]
    fn a_diverging_commit_is_caught(seed in any::<u64>(), which in any::<usize>()) {
        let mut history = correct_history(seed, 300);
        let entry = pick(&history, which, |event| match event {
            Event::Committed { entry, .. } => Some(entry.clone()),
            _ => None,
        })
        .expect("every history commits the first leader's noop");
        let diverging = Entry { term: entry.term + 1, ..entry };
        history.push(Event::Committed { node: 2, entry: diverging });
        prop_assert!(audit(&history).violates(COMMITTED_PREFIX_AGREEMENT));
    }

    /// A persisted promise that goes back a term is caught by TermNeverDecreases.
    #[test]
    fn a_lower_promise_is_caught(seed in any::<u64>(), which in any::<usize>()) {
        let mut history = correct_history(seed, 300);
        let (node, term) = pick(&history, which, |event| match event {
            Event::PromiseChanged { node, term, .. } => Some((*node, *term)),
            _ => None,
        })
        .expect("every history elects a leader");
        let latest = history
            .iter()
            .filter_map(|event| match event {
                Event::PromiseChanged { node: other, term, .. } if *other == node => Some(*term),
                _ => None,
            })
            .max()
            .unwrap_or(term);
        history.push(Event::PromiseChanged { node, term: latest - 1, vote: None });
        prop_assert!(audit(&history).violates(TERM_NEVER_DECREASES));
    }

    /// An acknowledged write whose offset is later committed with another record is caught by
    /// AckedWritesKept.
    #[test]
    fn an_overwritten_ack_is_caught(seed in any::<u64>(), which in any::<usize>()) {
        let mut history = correct_history(seed, 300);
        let acked = pick(&history, which, |event| match event {
            Event::Replied {
                request: Request::Append { .. },
                reply: Reply::Appended { offset, .. },
                ..
            } => Some(*offset),
            _ => None,
        });
        prop_assume!(acked.is_some());
        let offset = acked.unwrap_or_default();
        history.push(Event::Committed {
            node: 1,
            entry: Entry { offset, term: 99, command: Command::Noop },
        });
        let report = audit(&history);
        prop_assert!(report.violates(ACKED_WRITES_KEPT));
    }

    /// A client folding an offset to another state is caught by FoldAgreement.
    #[test]
    fn a_diverging_fold_is_caught(seed in any::<u64>(), which in any::<usize>()) {
        let mut history = correct_history(seed, 300);
        let folded = pick(&history, which, |event| match event {
            Event::Folded { offset, digest, .. } => Some((*offset, *digest)),
            _ => None,
        });
        prop_assume!(folded.is_some());
        let (offset, digest) = folded.unwrap_or_default();
        history.push(Event::Folded { client: 9, offset, digest: digest ^ 1 });
        prop_assert!(audit(&history).violates(FOLD_AGREEMENT));
    }

    /// A commit no node's final state reaches is caught by Convergence.
    #[test]
    fn a_commit_beyond_every_node_is_caught(seed in any::<u64>()) {
        let mut history = correct_history(seed, 300);
        let end = end_index(&history);
        let offset = history
            .iter()
            .filter_map(|event| match event {
                Event::Committed { entry, .. } => Some(entry.offset),
                _ => None,
            })
            .max()
            .unwrap_or(0)
            + 1;
        history.insert(end, Event::Committed {
            node: 0,
            entry: Entry { offset, term: 99, command: Command::Noop },
        });
        prop_assert!(audit(&history).violates(CONVERGENCE));
    }

    /// A write from an epoch older than a committed write's, committed after it, is caught by
    /// StaleTrimRefused.
    #[test]
    fn a_stale_write_is_caught(seed in any::<u64>()) {
        let mut history = correct_history(seed, 300);
        let tail = history
            .iter()
            .filter_map(|event| match event {
                Event::Committed { entry, .. } => Some(entry.offset),
                _ => None,
            })
            .max()
            .unwrap_or(0)
            + 1;
        let wrote = history.iter().any(|event| matches!(
            event,
            Event::Committed { entry: Entry { command: Command::Write { .. }, .. }, .. }
        ));
        prop_assume!(wrote);
        history.push(Event::Committed {
            node: 0,
            entry: Entry {
                offset: tail,
                term: 99,
                command: Command::Write { body: vec![0], headers: Headers::with_epoch(0) },
            },
        });
        prop_assert!(audit(&history).violates(STALE_TRIM_REFUSED));
    }

    /// A leader reporting a floor below the one its committed trims set is caught by
    /// FloorRecordKept.
    #[test]
    fn a_lost_floor_is_caught(seed in any::<u64>()) {
        let mut history = correct_history(seed, 300);
        let (committed, floor) = history
            .iter()
            .filter_map(|event| match event {
                Event::Committed { entry, .. } => match entry.command {
                    Command::Trim { floor, .. } => Some((entry.offset, floor)),
                    _ => None,
                },
                _ => None,
            })
            .max_by_key(|(_, floor)| *floor)
            .unwrap_or((0, 0));
        prop_assume!(floor > 1);
        history.push(Event::NodeState {
            node: 0,
            term: 99,
            vote: None,
            leader: true,
            floor: floor - 1,
            committed,
            readable_start: 1,
            floor_tag: None,
        });
        prop_assert!(audit(&history).violates(FLOOR_RECORD_KEPT));
    }

    /// A node serving a record below the floor it applied from an acknowledged trim is caught by
    /// NoReadBelowFloor.
    #[test]
    fn a_read_below_the_floor_is_caught(seed in any::<u64>()) {
        let mut history = correct_history(seed, 300);
        let request = Request::Read { from: ReadFrom::Offset(1), max_records: 1 };
        let served = ReadRecord { offset: 1, body: vec![0], headers: Headers::default() };
        history.extend([
            Event::Replied {
                client: 7,
                node: 1,
                request: Request::Trim {
                    expected_tail: None,
                    fence: None,
                    floor: 2,
                    headers: Headers::default(),
                },
                reply: Reply::Appended { offset: 1_000_000, tail: 1_000_001 },
            },
            Event::FloorApplied { node: 1, floor: 2, trim: Some(1_000_000) },
            Event::Requested { client: 7, node: 1, request: request.clone() },
            Event::Replied {
                client: 7,
                node: 1,
                request,
                reply: Reply::Records { records: vec![served], next: 2 },
            },
        ]);
        prop_assert!(audit(&history).violates(NO_READ_BELOW_FLOOR));
    }
}
