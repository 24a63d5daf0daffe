//! FoldAgreement: every client folds the same record (offset) to the same state (digest).
//!
//! Every `Folded { client, offset, digest }` is compared with the first fold of the same offset
//! (by any client, including the same client after a restore): a different digest is a
//! violation, reported once per offset. A folder that restored from a checkpoint and folds on
//! from its `End` must reach the digests the clients that folded the whole prefix reached.
//!
//! A folder that already held the whole prefix compares a checkpoint run with its own state
//! (`CheckpointCompared`) instead of restoring from it: a checkpoint whose digest differs from
//! that folder's is the same disagreement seen earlier, and is a violation too.

use crate::{step_ref, Violation, FOLD_AGREEMENT};
use felix_core::api::ClientId;
use felix_core::history::Event;
use felix_core::record::Offset;
use std::collections::{BTreeMap, BTreeSet};

/// The violations of FoldAgreement in `history`.
pub fn check(history: &[Event]) -> Vec<Violation> {
    // offset -> (digest, client, step) of its first fold.
    let mut first: BTreeMap<Offset, (u64, ClientId, usize)> = BTreeMap::new();
    let mut reported: BTreeSet<Offset> = BTreeSet::new();
    let mut violations = Vec::new();
    for (step, event) in history.iter().enumerate() {
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
