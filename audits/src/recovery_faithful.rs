//! RecoveryFaithful: a restarted node's store reads back what its disk held durably, plus a prefix
//! of the ops it took since its last sync (the last one maybe torn or cut short): nothing synced is
//! lost, nothing durably removed comes back, no later op survives without the ones before it.
//!
//! The driver's witness saw every op the store took and every sync (`witness::recovery`); at a
//! restart it compares what the store read back and records `RecoveryUnfaithful` when it differs.
//! This judge reports each such event. A store slip that no later judge would notice (a truncated
//! suffix of old records coming back on a node that never leads again) is still a broken
//! contract, and this is the judge that sees it, at the restart that shows it.

use crate::{Violation, RECOVERY_FAITHFUL};
use felix_core::history::Event;

/// The violations of RecoveryFaithful in `history`: one per unfaithful recovery.
pub fn check(history: &[Event]) -> Vec<Violation> {
    (history.iter().enumerate())
        .filter_map(|(step, event)| match event {
            Event::RecoveryUnfaithful { node, detail } => Some(Violation::new(
                RECOVERY_FAITHFUL,
                step,
                format!("node {node} restarted from a store that broke its contract: {detail}"),
            )),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each unfaithful recovery is one violation at its step; restarts alone are none.
    #[test]
    fn each_unfaithful_recovery_is_reported() {
        let history = vec![
            Event::Crashed { node: 1 },
            Event::Restarted { node: 1 },
            Event::RecoveryUnfaithful {
                node: 2,
                detail: "it recovered records 1..=3 of term 1".into(),
            },
        ];
        let violations = check(&history);
        assert_eq!(violations.len(), 1);
        assert_eq!(violations[0].step, 2);
        assert!(violations[0].message.contains("node 2"));
        assert!(check(&history[..2]).is_empty());
    }
}
