//! StaleTrimRefused: no committed write or trim from one holder follows a committed write from a
//! newer holder.
//!
//! A holder is named by the lease epoch in its records' headers (`Headers::epoch`). Walking the
//! cluster's committed log (first commit of each offset, see `log`) in offset order, the audit
//! keeps the newest epoch of any committed *write* so far; a committed write or trim with an older
//! epoch at a higher offset is a violation. It is detected at the later of the two commits.
//! Records without an epoch (fences, noops, paros' writes) are not a holder's and are skipped.
//! This is what fencing by the tail exists for: after the new holder's fenced write, nothing
//! from an older holder may land.

use crate::log::{holder_epoch, CommittedLog};
use crate::{Violation, STALE_TRIM_REFUSED};
use felix_core::history::Event;
use felix_core::record::{Command, Offset};

/// The violations of StaleTrimRefused in `history`.
pub fn check(history: &[Event]) -> Vec<Violation> {
    let log = CommittedLog::from_history(history);
    let mut violations = Vec::new();
    // The newest holder's first committed write: (epoch, offset, step of its commit).
    let mut newest: Option<(u64, Offset, usize)> = None;
    for (step, entry) in log.iter(history) {
        let Some(epoch) = holder_epoch(&entry.command) else {
            continue;
        };
        if let Some((newer_epoch, newer_offset, newer_step)) = newest {
            if epoch < newer_epoch {
                let kind = match entry.command {
                    Command::Trim { .. } => "trim",
                    _ => "write",
                };
                violations.push(Violation::new(
                    STALE_TRIM_REFUSED,
                    step.max(newer_step),
                    format!(
                        "committed {kind} at offset {} from holder epoch {epoch} follows the \
                         committed write at offset {newer_offset} from newer epoch {newer_epoch}",
                        entry.offset
                    ),
                ));
            }
        }
        let is_write = matches!(entry.command, Command::Write { .. });
        if is_write && newest.is_none_or(|(newer_epoch, _, _)| epoch > newer_epoch) {
            newest = Some((epoch, entry.offset, step));
        }
    }
    violations
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::*;

    /// A new holder's fenced write followed by its own trim and writes holds the invariant, and
    /// a stale trim *before* the fenced write is fine (it landed while its holder was current).
    #[test]
    fn newer_holder_after_older_holds() {
        let history = vec![
            committed(0, write(1, 1, 1)),
            committed(0, trim(2, 1, 2, 1)),
            committed(0, write(3, 1, 2)),
            committed(0, trim(4, 1, 3, 2)),
            committed(0, noop(5, 2)),
            committed(0, write(6, 2, 2)),
        ];
        assert_eq!(check(&history), vec![]);
    }

    /// The seed's trace: holder 2's fenced write at 1 and trim at 2, then holder 1's write at 3
    /// and trim at 4 are both violations.
    #[test]
    fn stale_write_and_trim_after_newer_write_break_it() {
        let history = vec![
            committed(0, write(1, 1, 2)),
            committed(0, trim(2, 1, 2, 2)),
            committed(1, write(1, 1, 2)),
            committed(0, write(3, 1, 1)),
            committed(0, trim(4, 1, 4, 1)),
        ];
        let violations = check(&history);
        assert_eq!(violations.len(), 2, "{violations:?}");
        assert_eq!(violations[0].invariant, STALE_TRIM_REFUSED);
        assert_eq!(violations[0].step, 3);
        assert!(violations[0].message.contains("write at offset 3"));
        assert_eq!(violations[1].step, 4);
        assert!(violations[1].message.contains("trim at offset 4"));
    }

    /// A newer holder's *trim* alone does not fence (only its write does), and the audit reads the
    /// first commit of an offset even when a later event names a different record there.
    #[test]
    fn only_writes_fence_and_first_commit_counts() {
        let history = vec![
            committed(0, trim(1, 1, 1, 3)),
            committed(0, write(2, 1, 2)),
            committed(1, write(3, 1, 9)),
            committed(2, write(3, 1, 1)),
        ];
        assert_eq!(check(&history), vec![]);
    }
}
