//! A follower's step, for both specs: `Replicate(ghost, b)` until the follower holds the ghost's
//! log (one record per action) and its commit. The ghost is the sender as the step shows it: the
//! follower's log, commit and term after the step.
//!
//! Each action runs on a window of `Steps::WINDOW_RECORDS` offsets above a base. With the base
//! at the follower's commit, the action may also commit (the model walks the newly committed
//! records); when the next record to send lies beyond that window, the base moves up to the match
//! point and the ghost's commit is taken as at most the follower's (a leader may send before it
//! commits more), so the action moves the log only. Which window and which model action is the
//! spec's (`Steps::replicate`); where the window sits, and how the model's answer is read back
//! onto the projected log, is this walk's.

use crate::steps::{first_difference, Chain, Failure, Steps, LONG_SUFFIX};
use crate::voter::Projected;
use felix_model::log::{Log, Packed};

/// One `Replicate(ghost, b)`'s window, projected: the records above `base` the ghost and the
/// follower hold within it, and their commits renamed to the window (base 0).
pub(crate) struct ReplicateWindow<'a, R> {
    /// The offset below the window's first.
    pub base: u64,
    /// The ghost's records in the window.
    pub ghost: &'a [R],
    /// The follower's records in the window.
    pub own: &'a [R],
    /// Both, the ghost's first: the values the window renames.
    pub all: Vec<R>,
    /// The ghost's commit in the window.
    pub ghost_commit: u8,
    /// The follower's commit in the window.
    pub own_commit: u8,
}

/// What the model made of a window: the ghost's and the follower's records as the window held
/// them, and the follower's records and commit after the action.
pub(crate) struct Replicated<W> {
    pub ghost: Vec<W>,
    pub own: Vec<W>,
    pub received: Vec<W>,
    pub commit: u8,
}

impl<W: Packed> Replicated<W> {
    /// What the model made of a window: the follower's model log and commit after the action.
    pub(crate) fn of(ghost: Vec<W>, own: Vec<W>, received: &Log<W>, commit: u8) -> Replicated<W> {
        Replicated {
            ghost,
            own,
            received: received.records().collect(),
            commit,
        }
    }
}

impl<S: Steps> Chain<'_, S> {
    /// Walks a follower's step (see the module doc).
    pub(crate) fn replicate(&mut self, current: &mut S) -> Result<(), Failure> {
        let (node, after, walk) = (self.node, self.after, &mut self.walk);
        let label = format!("Replicate(·, {node})");
        let width = S::WINDOW_RECORDS;
        let to = after.voter();
        let limit = 2 * to.len() + 4;
        for _ in 0..limit {
            // The follower before this action: the window reads it, and the action's records are
            // read back from it.
            let previous = current.clone();
            let from = previous.voter();
            // The match point: records at or below the follower's commit are taken as agreed.
            let mut matched = from.commit.min(from.len()).min(to.len());
            while matched < from.len().min(to.len())
                && from.at(matched + 1).term() == to.at(matched + 1).term()
            {
                matched += 1;
            }
            let commit = from.commit;
            let to_send = matched < to.len();
            // Commit mode: the base at the follower's commit (or the match point below it).
            let base_commit = commit.min(matched);
            let commit_can_move = to.commit > commit && base_commit == commit;
            let send_fits = to_send && matched < base_commit + width;
            let commit_mode = commit_can_move || send_fits || !to_send;
            let (base, log_only) = if commit_mode {
                (base_commit, false)
            } else {
                (matched.saturating_sub(width / 2).max(commit), true)
            };
            // The follower's records above the window must be ones the ghost holds too.
            let window_end = base + width;
            if from.len() > window_end && matched < window_end {
                return Err(LONG_SUFFIX);
            }
            let ghost = &to.log[base as usize..to.len().min(window_end) as usize];
            let own = &from.log[base as usize..from.len().min(window_end) as usize];
            let own_tail = &from.log[from.len().min(window_end) as usize..];
            let (ghost_commit, own_commit) = if log_only {
                // Both commits at or below the base: the window's 0.
                (0, 0)
            } else {
                (
                    to.commit.saturating_sub(base).min(ghost.len() as u64) as u8,
                    (commit - base) as u8,
                )
            };
            let window = ReplicateWindow {
                base,
                ghost,
                own,
                all: ghost.iter().chain(own).copied().collect(),
                ghost_commit,
                own_commit,
            };
            let replicated = current.replicate(&label, after, &window)?;
            let voter = current.voter_mut();
            let mut log = from.log[..base as usize].to_vec();
            for (index, model_record) in replicated.received.iter().enumerate() {
                let offset = base + index as u64 + 1;
                let projected = if replicated.ghost.get(index) == Some(model_record) {
                    to.at(offset)
                } else if replicated.own.get(index) == Some(model_record) {
                    from.at(offset)
                } else {
                    unreachable!("a replicated record comes from the sender or the receiver")
                };
                log.push(projected);
            }
            if replicated.received.len() == replicated.own.len() {
                log.extend_from_slice(own_tail);
            } else {
                assert!(
                    own_tail.is_empty(),
                    "a window cut above the match point is never changed"
                );
            }
            voter.log = log;
            voter.commit = if log_only {
                commit
            } else {
                base + u64::from(replicated.commit)
            };
            walk.took(S::REPLICATE.into(), label.clone());
            let done = voter.commit == to.commit
                && voter.len() == to.len()
                && first_difference(voter, to, base).is_none();
            if done || *current == previous {
                return Ok(());
            }
        }
        Ok(())
    }
}
