//! The RecoveryFaithful check a host makes as its node restarts: what the store recovered must be
//! what the disk held durably, plus a prefix of the ops applied to it since its last sync (the
//! store's contract: a crash loses a suffix of the unsynced ops; an append may be torn, keeping a
//! prefix of its records; a truncation may be cut short, keeping a shorter suffix of the records
//! it was dropping). Anything else is a store that lost what it synced, brought back what it
//! durably removed, or kept a later op without an earlier one, whether or not a later judge
//! notices.
//!
//! The check compares the promise and the log's terms (a record's term stands for the record:
//! `log_terms.rs`). Records folded below the store's first held offset are not compared (the
//! store keeps only the sealed base of them); the base's term is. How far below the records a
//! store folded is not judged either: the witness does not follow compactions (they change no
//! term), so a store that recovers from a later first offset than it compacted to, with the
//! right base term, passes.

use super::acks::{apply, Acks, Change};
use super::promises::Promises;
use crate::log_terms::LogTerms;
use felix_core::record::{Offset, Term};
use felix_core::storage::{HardState, Recovered};
use felix_core::words;

/// What a store recovered, as the check compares it.
struct Found<'a> {
    recovered: &'a Recovered,
    /// The offset below the first held one, and the sealed base's term there.
    base: (Offset, Term),
    /// The last offset held.
    last: Offset,
    /// The held records' terms as runs: (first, last, term).
    runs: Vec<(Offset, Offset, Term)>,
}

impl<'a> Found<'a> {
    fn of(recovered: &'a Recovered) -> Found<'a> {
        let mut runs: Vec<(Offset, Offset, Term)> = Vec::new();
        for entry in &recovered.entries {
            match runs.last_mut() {
                Some(run) if run.2 == entry.term && run.1 + 1 == entry.offset => {
                    run.1 = entry.offset;
                }
                _ => runs.push((entry.offset, entry.offset, entry.term)),
            }
        }
        let base_term = recovered
            .sealed
            .as_ref()
            .map_or(0, |sealed| sealed.base_term);
        Found {
            recovered,
            base: (recovered.start - 1, base_term),
            last: recovered.next() - 1,
            runs,
        }
    }

    /// Whether a disk holding `promise` and `log` would recover as this.
    fn fits(&self, promise: HardState, log: &LogTerms) -> bool {
        let (base, base_term) = self.base;
        promise == self.recovered.hard_state
            && log.last() == self.last
            && (base == 0 || log.term_at(base) == Some(base_term))
            && (self.runs.iter()).all(|&(first, last, term)| log.holds(first, last, term))
    }

    fn describe(&self) -> String {
        let runs: Vec<String> = (self.runs.iter())
            .map(|&(first, last, term)| format!("{first}..={last} of term {term}"))
            .collect();
        format!(
            "{}, base {} of term {}, records {}",
            promise_words(self.recovered.hard_state),
            self.base.0,
            self.base.1,
            if runs.is_empty() {
                "none".to_string()
            } else {
                runs.join(", ")
            }
        )
    }
}

/// A promise in words, as the simulator's renderer says one (`words::vote`).
fn promise_words(promise: HardState) -> String {
    format!("term {} vote {}", promise.term, words::vote(promise.vote))
}

fn describe_log(promise: HardState, log: &LogTerms) -> String {
    format!(
        "{}, records through {} (of term {})",
        promise_words(promise),
        log.last(),
        log.term_at(log.last()).unwrap_or(0)
    )
}

/// One unsynced op, as the check replays it.
enum Op<'a> {
    Promise(HardState),
    Log(&'a Change),
}

/// `Ok` when `recovered` is what the disk held durably plus a prefix of the unsynced ops (the last
/// one maybe partial); else why not, in a sentence.
pub(super) fn explain(
    promises: &Promises,
    acks: &Acks,
    recovered: &Recovered,
) -> Result<(), String> {
    let found = Found::of(recovered);
    let mut promise = promises.durable;
    let mut log = acks.durable.clone();
    let durable = describe_log(promise, &log);
    if found.fits(promise, &log) {
        return Ok(());
    }
    // The unsynced ops in the order the disk took them.
    let mut ops: Vec<(u64, Op)> = (promises.unsynced.iter())
        .map(|(number, hard)| (*number, Op::Promise(*hard)))
        .chain((acks.unsynced.iter()).map(|(number, change)| (*number, Op::Log(change))))
        .collect();
    ops.sort_by_key(|(number, _)| *number);
    for (_, op) in &ops {
        match op {
            Op::Promise(hard) => promise = *hard,
            Op::Log(change) => {
                // A torn append keeps a prefix of its records; a truncation cut short keeps a
                // shorter suffix of what it drops.
                let partial = match change {
                    Change::Append(records) if found.last > log.last() => {
                        let kept = (found.last - log.last()) as usize;
                        (kept < records.len()).then(|| {
                            let mut partial = log.clone();
                            apply(&mut partial, Change::Append(records[..kept].to_vec()));
                            partial
                        })
                    }
                    Change::Truncate { from } if (*from..log.last()).contains(&found.last) => {
                        let mut partial = log.clone();
                        partial.cut(found.last);
                        Some(partial)
                    }
                    _ => None,
                };
                if partial.is_some_and(|partial| found.fits(promise, &partial)) {
                    return Ok(());
                }
                apply(&mut log, (*change).clone());
            }
        }
        if found.fits(promise, &log) {
            return Ok(());
        }
    }
    Err(format!(
        "it recovered {}, which is not what its disk held durably ({durable}) plus a prefix of \
         the {} op(s) it took since its last sync (with them all: {})",
        found.describe(),
        ops.len(),
        describe_log(promise, &log)
    ))
}

#[cfg(test)]
mod tests {
    use crate::test_support::noops;
    use crate::witness::Witness;
    use felix_core::record::{Offset, Term};
    use felix_core::storage::{HardState, Recovered, SealedState, StorageOp};

    fn recovered(term: Term, start: Offset, logs: &[(Offset, Offset, Term)]) -> Recovered {
        let sealed = (start > 1).then(|| SealedState {
            base_offset: start - 1,
            base_term: 1,
            ..SealedState::default()
        });
        Recovered {
            hard_state: HardState { term, vote: None },
            sealed,
            start,
            entries: logs
                .iter()
                .flat_map(|&(first, last, term)| noops(first..=last, term))
                .collect(),
            tail_cut: None,
        }
    }

    /// A witness whose disk holds 1..=4 of term 1 and promise term 1 durably, then took (unsynced)
    /// a promise of term 2, a truncation from 3 and an append of 3..=5 of term 2.
    fn witness() -> Witness {
        let mut witness = Witness::default();
        let ops = [
            StorageOp::HardState(HardState {
                term: 1,
                vote: None,
            }),
            StorageOp::Append(noops(1..=4, 1)),
            StorageOp::HardState(HardState {
                term: 2,
                vote: None,
            }),
            StorageOp::TruncateSuffix { from: 3 },
            StorageOp::Append(noops(3..=5, 2)),
        ];
        for (number, op) in ops.iter().enumerate() {
            witness.applied(number as u64 + 1, op);
        }
        witness.synced(2);
        witness
    }

    /// What the disk held durably, and that plus any prefix of the unsynced ops (a torn append
    /// keeping some of its records, a truncation cut short) is faithful.
    #[test]
    fn a_prefix_of_the_unsynced_ops_is_faithful() {
        let witness = witness();
        let faithful = [
            recovered(1, 1, &[(1, 4, 1)]),
            recovered(2, 1, &[(1, 4, 1)]),
            recovered(2, 1, &[(1, 3, 1)]),
            recovered(2, 1, &[(1, 2, 1)]),
            recovered(2, 1, &[(1, 2, 1), (3, 3, 2)]),
            recovered(2, 1, &[(1, 2, 1), (3, 5, 2)]),
        ];
        for state in faithful {
            assert_eq!(witness.explain_recovery(&state), Ok(()), "{state:?}");
        }
    }

    /// A synced record lost, a truncated record back after a later append, a later op without an
    /// earlier one, or a record never written: each is unfaithful, and says what it recovered.
    #[test]
    fn anything_else_is_unfaithful() {
        let witness = witness();
        let unfaithful = [
            recovered(1, 1, &[(1, 3, 1)]),
            recovered(2, 1, &[(1, 4, 1), (5, 5, 2)]),
            recovered(1, 1, &[(1, 2, 1), (3, 5, 2)]),
            recovered(2, 1, &[(1, 2, 1), (3, 6, 2)]),
        ];
        for state in unfaithful {
            let why = witness.explain_recovery(&state).expect_err("unfaithful");
            assert!(
                why.contains("which is not what its disk held durably"),
                "{why}"
            );
        }
        // Once the truncation is synced, the records it dropped must not come back.
        let mut synced = witness;
        synced.synced(4);
        let back = recovered(2, 1, &[(1, 4, 1)]);
        assert!(synced.explain_recovery(&back).is_err());
        assert_eq!(
            synced.explain_recovery(&recovered(2, 1, &[(1, 2, 1), (3, 4, 2)])),
            Ok(())
        );
    }

    /// A trim-point jump the disk synced: recovering from its point on is faithful, and so is
    /// the log it kept above the point.
    #[test]
    fn a_synced_jump_is_faithful() {
        let mut witness = witness();
        witness.synced(5);
        witness.applied(
            1,
            &StorageOp::TrimmedTo {
                point: 4,
                state: SealedState {
                    base_offset: 3,
                    base_term: 2,
                    ..SealedState::default()
                },
            },
        );
        witness.synced(1);
        let mut state = recovered(2, 4, &[(4, 5, 2)]);
        state.sealed.as_mut().expect("sealed").base_term = 2;
        assert_eq!(witness.explain_recovery(&state), Ok(()));
    }
}
