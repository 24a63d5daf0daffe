//! FoldAgreement: every client folds the same record (offset) to the same state (digest), and
//! that state is the fold of the committed log.
//!
//! Every `Folded { client, offset, digest }` at an offset the history shows the whole committed
//! log up to (every record from offset 1 committed) is compared with the fold of that log's
//! application writes (`Reference`): clients that all lost the prefix the same way agree with
//! each other and are still wrong. Above that offset, a fold is compared with the first fold of
//! the same offset (by any client, including the same client after a restore). A different
//! digest is a violation, reported once per offset. A folder that restored from a checkpoint and
//! folds on from its `End` must reach the digests of the whole prefix.
//!
//! A folder that already held the whole prefix compares a checkpoint run with its own state
//! (`CheckpointCompared`) instead of restoring from it: a checkpoint whose digest differs from
//! that folder's is the same disagreement seen earlier, and is a violation too.
//!
//! A folder restores from (or compares with) whole runs only: the committed records `begin..=end`
//! must be `Begin`, the chunks numbered 0, 1, ... in order, and an `End` naming their count and
//! checksum. A restore from anything else (a chunk missing or misnumbered, an `End` whose count
//! or checksum is wrong) is a violation even when the state it gave happens to agree: a broken
//! writer's runs are exactly what no folder may restore. Runs whose records the history does not
//! show committed are not judged.

use crate::log::CommittedLog;
use crate::{step_ref, Violation, FOLD_AGREEMENT};
use felix_core::api::ClientId;
use felix_core::client::checkpoint::{checksum, RunRecord};
use felix_core::client::folder::Fold;
use felix_core::history::Event;
use felix_core::record::{Command, Offset};
use std::collections::{BTreeMap, BTreeSet};

/// Why the committed records `begin..=end` are not one whole checkpoint run, with the step that
/// committed the offending record; `None` when they are one, or when some record of the range is
/// not in the history's committed log (nothing to judge).
fn broken_run(
    history: &[Event],
    log: &CommittedLog,
    begin: Offset,
    end: Offset,
) -> Option<(String, usize)> {
    let mut chunks: Vec<Vec<u8>> = Vec::new();
    for offset in begin..=end {
        let (step, entry) = log.get(history, offset)?;
        let record = match &entry.command {
            Command::Write { body, .. } => RunRecord::decode(body),
            _ => None,
        };
        let expected = if offset == begin {
            "Begin"
        } else if offset == end {
            "End"
        } else {
            "a chunk"
        };
        let broken = match (record, expected) {
            (Some(RunRecord::Begin), "Begin") => None,
            (Some(RunRecord::Chunk { index, payload }), "a chunk") => {
                let at = chunks.len();
                chunks.push(payload);
                (index as usize != at)
                    .then(|| format!("the chunk at {offset} is numbered {index}, not {at}"))
            }
            (
                Some(RunRecord::End {
                    chunks: count,
                    checksum: sum,
                }),
                "End",
            ) => {
                if count as usize != chunks.len() {
                    Some(format!(
                        "its End at {offset} counts {count} chunks, the run has {}",
                        chunks.len()
                    ))
                } else if sum != checksum(&chunks) {
                    Some(format!(
                        "its End at {offset} names checksum {sum:#x}, the chunks sum to {:#x}",
                        checksum(&chunks)
                    ))
                } else {
                    None
                }
            }
            (_, expected) => Some(format!("the record at {offset} is not {expected} of a run")),
        };
        if let Some(why) = broken {
            return Some((why, step));
        }
    }
    None
}

/// A restore from (or a comparison with) committed records that are not one whole run.
fn restored_from_a_broken_run(
    history: &[Event],
    log: &mut Option<CommittedLog>,
    step: usize,
    event: &Event,
) -> Option<Violation> {
    let (Event::CheckpointRestored { client, begin, end }
    | Event::CheckpointCompared {
        client, begin, end, ..
    }) = event
    else {
        return None;
    };
    let log = log.get_or_insert_with(|| CommittedLog::from_history(history));
    let (why, committed) = broken_run(history, log, *begin, *end)?;
    let verb = match event {
        Event::CheckpointRestored { .. } => "restored from",
        _ => "compared its fold with",
    };
    Some(
        Violation::new(
            FOLD_AGREEMENT,
            step,
            format!(
                "client {client} {verb} the checkpoint run {begin}..={end}, which is not a whole \
                 run: {why} (committed at {})",
                step_ref(committed)
            ),
        )
        .with_clients(vec![*client]),
    )
}

/// What every fold must be: the fold of the committed log's application writes, from offset 1
/// up to the first offset the history does not show committed.
struct Reference {
    /// Offset of each application write -> the digest after folding it.
    digests: BTreeMap<Offset, u64>,
    /// Every record `1..=known_to` is in the history's committed log.
    known_to: Offset,
}

impl Reference {
    /// Folds the committed log as a folder would. Checkpoint runs are not application writes.
    /// Trim records are folded (with an empty body) only where the run's folders folded one:
    /// that is what its reads delivered (the VisibleTrims twin's readers see trims).
    fn of(history: &[Event], log: &CommittedLog) -> Reference {
        let folded: BTreeSet<Offset> = history
            .iter()
            .filter_map(|event| match event {
                Event::Folded { offset, .. } => Some(*offset),
                _ => None,
            })
            .collect();
        let trims_delivered = log.iter(history).any(|(_, entry)| {
            matches!(entry.command, Command::Trim { .. }) && folded.contains(&entry.offset)
        });
        let mut fold = Fold::empty();
        let mut digests = BTreeMap::new();
        let mut known_to = 0;
        for (_, entry) in log.iter(history) {
            if entry.offset != known_to + 1 {
                break;
            }
            known_to = entry.offset;
            let body: &[u8] = match &entry.command {
                Command::Write { body, .. } if RunRecord::decode(body).is_none() => body,
                Command::Trim { .. } if trims_delivered => &[],
                _ => continue,
            };
            fold.apply(entry.offset, body);
            digests.insert(entry.offset, fold.digest);
        }
        Reference { digests, known_to }
    }

    /// The digest every fold must have reached at `offset`, if the history shows the log up to it.
    fn at(&self, offset: Offset) -> Option<u64> {
        (offset <= self.known_to).then(|| {
            self.digests
                .range(..=offset)
                .next_back()
                .map_or(Fold::empty().digest, |(_, digest)| *digest)
        })
    }
}

/// The violations of FoldAgreement in `history`.
///
/// A fold at an offset the history shows the whole committed log up to is held to the fold of
/// that log (`Reference`): folders that all lost the prefix the same way agree with each other and
/// are still wrong. Above that, folds are held to each other (the first fold of each offset).
pub fn check(history: &[Event]) -> Vec<Violation> {
    // offset -> (digest, client, step) of its first fold.
    let mut first: BTreeMap<Offset, (u64, ClientId, usize)> = BTreeMap::new();
    let mut reported: BTreeSet<Offset> = BTreeSet::new();
    let mut violations = Vec::new();
    let mut log: Option<CommittedLog> = None;
    let mut reference: Option<Reference> = None;
    for (step, event) in history.iter().enumerate() {
        violations.extend(restored_from_a_broken_run(history, &mut log, step, event));
        if let Event::CheckpointCompared {
            client,
            begin,
            end,
            digest,
            checkpoint_digest,
        } = event
        {
            if digest != checkpoint_digest {
                violations.push(
                    Violation::new(
                        FOLD_AGREEMENT,
                        step,
                        format!(
                        "client {client} compared the checkpoint run {begin}..={end} with its own \
                         fold of the whole prefix: the run says {checkpoint_digest:#x}, its fold \
                         {digest:#x}"
                    ),
                    )
                    .with_clients(vec![*client]),
                );
            }
            continue;
        }
        let Event::Folded {
            client,
            offset,
            digest,
        } = event
        else {
            continue;
        };
        let log = log.get_or_insert_with(|| CommittedLog::from_history(history));
        let reference = reference.get_or_insert_with(|| Reference::of(history, log));
        if let Some(expected) = reference.at(*offset) {
            if expected != *digest && reported.insert(*offset) {
                violations.push(
                    Violation::new(
                        FOLD_AGREEMENT,
                        step,
                        format!(
                            "client {client} folded offset {offset} to digest {digest:#x}, but \
                             the committed log's application writes up to {offset} fold to \
                             {expected:#x}"
                        ),
                    )
                    .with_clients(vec![*client]),
                );
            }
            continue;
        }
        let (first_digest, first_client, first_step) =
            *first.entry(*offset).or_insert((*digest, *client, step));
        if first_digest != *digest && reported.insert(*offset) {
            violations.push(
                Violation::new(
                    FOLD_AGREEMENT,
                    step,
                    format!(
                        "client {client} folded offset {offset} to digest {digest:#x}, but client \
                     {first_client} folded it to {first_digest:#x} at {}",
                        step_ref(first_step)
                    ),
                )
                .with_clients(vec![*client, first_client]),
            );
        }
    }
    violations
}

#[cfg(test)]
mod tests {
    use super::*;
    use felix_core::record::{Entry, Headers};

    /// The history of a run written at offsets 5.. (one `Committed` per record), then `last`.
    fn run_history(records: &[RunRecord], last: Event) -> Vec<Event> {
        let mut history: Vec<Event> = records
            .iter()
            .enumerate()
            .map(|(index, record)| Event::Committed {
                node: 0,
                entry: Entry {
                    offset: 5 + index as Offset,
                    term: 1,
                    command: Command::Write {
                        body: record.encode(),
                        headers: Headers::default(),
                    },
                },
            })
            .collect();
        history.push(last);
        history
    }

    fn restored(end: Offset) -> Event {
        Event::CheckpointRestored {
            client: 2,
            begin: 5,
            end,
        }
    }

    /// A restore from a whole run holds; from a run with a chunk misnumbered, a chunk missing (an
    /// application write in its place), an `End` counting wrong or summing wrong, it breaks
    /// FoldAgreement, naming the record. A run not in the committed log is not judged.
    #[test]
    fn a_folder_restores_whole_runs_only() {
        let chunk = |index: u32, byte: u8| RunRecord::Chunk {
            index,
            payload: vec![byte; 3],
        };
        let sum = checksum(&[vec![1; 3], vec![2; 3]]);
        let end = |chunks, checksum| RunRecord::End { chunks, checksum };
        let whole = [RunRecord::Begin, chunk(0, 1), chunk(1, 2), end(2, sum)];
        assert_eq!(check(&run_history(&whole, restored(8))), vec![]);
        let broken: [(&[RunRecord], &str); 4] = [
            (
                &[RunRecord::Begin, chunk(0, 1), chunk(2, 2), end(2, sum)],
                "the chunk at 7 is numbered 2, not 1",
            ),
            (
                &[RunRecord::Begin, chunk(0, 1), chunk(1, 2), end(3, sum)],
                "its End at 8 counts 3 chunks, the run has 2",
            ),
            (
                &[RunRecord::Begin, chunk(0, 1), chunk(1, 2), end(2, sum ^ 1)],
                "its End at 8 names checksum",
            ),
            (
                &[
                    RunRecord::Begin,
                    chunk(0, 1),
                    RunRecord::Malformed,
                    end(2, sum),
                ],
                "the record at 7 is not a chunk of a run",
            ),
        ];
        for (records, why) in broken {
            let violations = check(&run_history(records, restored(8)));
            assert_eq!(violations.len(), 1, "{why}: {violations:?}");
            assert_eq!(violations[0].step, 4);
            assert!(
                violations[0].message.contains(why),
                "{}",
                violations[0].message
            );
            assert!(
                violations[0]
                    .message
                    .contains("client 2 restored from the checkpoint run 5..=8"),
                "{}",
                violations[0].message
            );
        }
        // The run's last record was never seen committed: nothing to judge.
        assert_eq!(check(&run_history(&whole[..3], restored(8))), vec![]);
    }

    fn folded(client: ClientId, offset: Offset, digest: u64) -> Event {
        Event::Folded {
            client,
            offset,
            digest,
        }
    }

    /// A folder whose own state differs from the checkpoint it compared breaks it; an equal one
    /// does not.
    #[test]
    fn checkpoint_compared_with_a_different_state_breaks_it() {
        let compared = |digest, checkpoint_digest| Event::CheckpointCompared {
            client: 1,
            begin: 5,
            end: 7,
            digest,
            checkpoint_digest,
        };
        assert_eq!(check(&[compared(3, 3)]), vec![]);
        let violations = check(&[folded(1, 1, 10), compared(3, 4)]);
        assert_eq!(violations.len(), 1);
        assert_eq!(violations[0].step, 1);
        assert_eq!(violations[0].invariant, FOLD_AGREEMENT);
    }

    /// Clients folding the same offsets to the same digests, in any order, agree.
    #[test]
    fn same_digests_agree() {
        let history = vec![
            folded(1, 1, 10),
            folded(1, 2, 20),
            folded(2, 1, 10),
            folded(2, 2, 20),
            folded(3, 2, 20),
        ];
        assert_eq!(check(&history), vec![]);
    }

    /// `Committed` events for `commands` at offsets 1.. (node 0, term 1).
    fn committed(commands: Vec<Command>) -> Vec<Event> {
        commands
            .into_iter()
            .enumerate()
            .map(|(index, command)| Event::Committed {
                node: 0,
                entry: Entry {
                    offset: index as Offset + 1,
                    term: 1,
                    command,
                },
            })
            .collect()
    }

    fn write(body: &[u8]) -> Command {
        Command::Write {
            body: body.to_vec(),
            headers: Headers::default(),
        }
    }

    /// The fold of `writes` (offset, body), as a folder reaches it.
    fn fold_of(writes: &[(Offset, &[u8])]) -> u64 {
        let mut fold = Fold::empty();
        for (offset, body) in writes {
            fold.apply(*offset, body);
        }
        fold.digest
    }

    /// Two folders that both lost the prefix (moved up to the floor with nothing to restore from)
    /// and folded on from an empty state agree with each other, and are both wrong: each fold is
    /// held to the committed log's. Folders that folded the whole log hold.
    #[test]
    fn folders_agreeing_on_a_lost_prefix_break_it() {
        let log = committed(vec![write(b"a"), write(b"b"), write(b"c")]);
        let right = fold_of(&[(1, b"a"), (2, b"b"), (3, b"c")]);
        let mut good = log.clone();
        good.extend([folded(1, 3, right), folded(2, 3, right)]);
        assert_eq!(check(&good), vec![]);

        let from_empty = fold_of(&[(3, b"c")]);
        let mut lost = log.clone();
        lost.extend([folded(1, 3, from_empty), folded(2, 3, from_empty)]);
        let violations = check(&lost);
        assert_eq!(violations.len(), 1, "{violations:?}");
        assert_eq!(violations[0].step, 3);
        assert!(
            violations[0]
                .message
                .contains("the committed log's application writes up to 3 fold to"),
            "{}",
            violations[0].message
        );

        // Above the first offset the history does not show committed, folds are held to each
        // other only.
        let mut unknown = committed(vec![write(b"a")]);
        unknown.extend([folded(1, 3, from_empty), folded(2, 3, from_empty)]);
        assert_eq!(check(&unknown), vec![]);
    }

    /// Checkpoint runs and noops are not application writes; a trim is folded (empty body) only
    /// where the run's folders folded one (the VisibleTrims twin's readers see trims).
    #[test]
    fn the_reference_folds_what_reads_deliver() {
        let trim = Command::Trim {
            floor: 1,
            headers: Headers::default(),
            fence: None,
        };
        let log = committed(vec![
            write(b"a"),
            write(&RunRecord::Begin.encode()),
            trim,
            write(b"d"),
        ]);
        let writes_only = fold_of(&[(1, b"a"), (4, b"d")]);
        let mut history = log.clone();
        history.push(folded(1, 4, writes_only));
        assert_eq!(check(&history), vec![]);
        let with_trim = fold_of(&[(1, b"a"), (3, b""), (4, b"d")]);
        let mut visible = log.clone();
        visible.extend([
            folded(1, 3, fold_of(&[(1, b"a"), (3, b"")])),
            folded(1, 4, with_trim),
        ]);
        assert_eq!(check(&visible), vec![]);
    }

    /// A client reaching a different state at an offset breaks it, reported once per offset.
    #[test]
    fn different_digest_breaks_it() {
        let history = vec![
            folded(1, 1, 10),
            folded(1, 2, 20),
            folded(2, 1, 10),
            folded(2, 2, 21),
            folded(3, 2, 22),
        ];
        let violations = check(&history);
        assert_eq!(violations.len(), 1, "{violations:?}");
        assert_eq!(violations[0].invariant, FOLD_AGREEMENT);
        assert_eq!(violations[0].step, 3);
        assert!(violations[0].message.contains("client 2 folded offset 2"));
    }
}
