//! The LogTermsMonotone check a host makes after each broker step: along its node's log, from the
//! sealed base on, record terms never decrease (the first held record's term is at least the
//! sealed base's, and each record's at least the one before it). In a correct system a record
//! after a committed base of term `T` has a term of at least `T` (leader completeness), and a
//! follower's log is a prefix of some leader's log plus that leader's later records; so a term
//! that goes down is a bug, seen at the step that makes it, long before a reader meets its
//! consequence (a trim-point jump that keeps a stale suffix, a snapshot base of the wrong term).
//!
//! The check is incremental, O(new records) per step: it remembers the offset through which the
//! log was checked and the term there, and walks only what follows. It starts again from the
//! sealed base when the base moved past that offset, when the log was cut at or below it (a
//! truncation op, or a log now shorter), or when the record there changed term (conflicts: rare).
//! A base that moved up inside the checked prefix (a compaction) adds one new pair, the base's
//! term against the first held record's, and nothing else.
//!
//! What a restart reads back is checked too (`recovered`), before the core rebuilds its journal
//! from it: a store that brings back records dropped in memory but never dropped on disk shows
//! there, whether or not the core then refuses to start from it.

use felix_core::broker::Broker;
use felix_core::history::Event;
use felix_core::journal::Journal;
use felix_core::record::{Offset, Term};
use felix_core::storage::Recovered;
use felix_core::NodeId;
use std::collections::BTreeSet;

/// One decrease: the record at `offset` has `term`, below `before` (the sealed base's, when
/// `base`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Decrease {
    offset: Offset,
    term: Term,
    before: Term,
    base: bool,
}

/// One node's log, checked through some offset.
#[derive(Clone, Debug, Default)]
pub struct Monotone {
    /// The sealed base as last seen: (offset, term).
    base: (Offset, Term),
    /// The offset through which the log is checked, and the term of the record there (the
    /// base's, when it is the base).
    checked: (Offset, Term),
    /// The lowest offset a truncation op dropped from since the last check, if any.
    truncated: Option<Offset>,
    /// Decreases found in what a restart read back, not yet recorded.
    pending: Vec<Decrease>,
    /// Every decrease recorded since the node last started, as (offset, term): a walk started
    /// again from the base does not report one twice.
    reported: BTreeSet<(Offset, Term)>,
}

impl Monotone {
    /// The node starts afresh (an empty log) or crashed: nothing is known of its log.
    pub fn restarted(&mut self) {
        *self = Monotone::default();
    }

    /// The store took a truncation dropping every record from `from` on.
    pub fn truncated(&mut self, from: Offset) {
        self.truncated = Some(self.truncated.map_or(from, |lowest| lowest.min(from)));
    }

    /// The node restarts from `recovered`: its records are checked against its sealed base now,
    /// and the journal rebuilt from them is walked again from the base at the first step.
    pub fn recovered(&mut self, recovered: &Recovered) {
        self.restarted();
        let base_term = recovered
            .sealed
            .as_ref()
            .map_or(0, |sealed| sealed.base_term);
        let base = (recovered.start - 1, base_term);
        let records = (recovered.entries.iter()).map(|entry| (entry.offset, entry.term));
        let mut found = Vec::new();
        walk(base, base, records, &mut found);
        for decrease in &found {
            self.reported.insert((decrease.offset, decrease.term));
        }
        self.pending = found;
        self.base = base;
        self.checked = base;
    }

    /// What a restart read back broke, as events (once).
    pub fn recovered_events(&mut self, node: NodeId, events: &mut Vec<Event>) {
        events.extend((self.pending.drain(..)).map(|decrease| decrease.event(node, true)));
    }

    /// `broker` just took a step: checks what its log holds past the offset checked, and records
    /// each new decrease as an event.
    pub fn stepped(&mut self, node: NodeId, broker: &Broker, events: &mut Vec<Event>) {
        let mut found = Vec::new();
        self.check(broker.journal(), &mut found);
        for decrease in found {
            if self.reported.insert((decrease.offset, decrease.term)) {
                events.push(decrease.event(node, false));
            }
        }
    }

    /// Walks `journal` from where the check must start again, through its last record.
    fn check(&mut self, journal: &Journal, found: &mut Vec<Decrease>) {
        let sealed = journal.sealed();
        let base = (sealed.base_offset, sealed.base_term);
        let checked = self.checked;
        // The checked record is still there, unchanged, and no truncation reached it.
        let intact = checked.0 <= journal.last_offset()
            && journal.term_at(checked.0) == Some(checked.1)
            && self.truncated.is_none_or(|from| from > checked.0);
        let from = if base != self.base {
            if intact && base.0 >= self.base.0 && base.0 < checked.0 {
                // A compaction moved the base up inside the checked prefix: the base's term
                // against the first held record's is the one new pair.
                let first = base.0 + 1;
                let first_term = journal.term_at(first).expect("held: at most the checked");
                walk(base, base, [(first, first_term)], found);
                checked
            } else {
                base
            }
        } else if intact {
            checked
        } else {
            // Cut back, or replaced: from the record below the lowest truncation when it is still
            // held (the records below it did not change), else from the base.
            self.truncated
                .filter(|&from| from > base.0 + 1)
                .and_then(|from| Some((from - 1, journal.term_at(from - 1)?)))
                .filter(|&(offset, _)| offset <= checked.0)
                .unwrap_or(base)
        };
        self.base = base;
        self.truncated = None;
        let records =
            (journal.entries_from(from.0 + 1, usize::MAX)).map(|entry| (entry.offset, entry.term));
        self.checked = walk(base, from, records, found);
    }

    #[cfg(test)]
    pub(super) fn checked(&self) -> (Offset, Term) {
        self.checked
    }
}

impl Decrease {
    fn event(self, node: NodeId, restart: bool) -> Event {
        Event::LogTermsDecreased {
            node,
            offset: self.offset,
            term: self.term,
            before: self.before,
            base: self.base,
            restart,
        }
    }
}

/// Walks `records` (contiguous, right after `from`) over a log whose sealed base is `base`: each
/// record whose term is below the one before it is a decrease. Returns the last record walked
/// (`from` when none).
fn walk(
    base: (Offset, Term),
    from: (Offset, Term),
    records: impl IntoIterator<Item = (Offset, Term)>,
    found: &mut Vec<Decrease>,
) -> (Offset, Term) {
    let mut before = from;
    for (offset, term) in records {
        debug_assert_eq!(offset, before.0 + 1, "a log's records are contiguous");
        if term < before.1 {
            found.push(Decrease {
                offset,
                term,
                before: before.1,
                base: before.0 == base.0,
            });
        }
        before = (offset, term);
    }
    before
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::noops;
    use felix_core::broker::{Broker, BrokerConfig};
    use felix_core::journal::{Journal, JournalConfig, Jump};
    use felix_core::record::Entry;
    use felix_core::rules::Rules;
    use felix_core::storage::{HardState, SealedState, StorageOp};

    fn sealed(base_offset: Offset, base_term: Term) -> SealedState {
        SealedState {
            base_offset,
            base_term,
            ..SealedState::default()
        }
    }

    /// A journal holding `entries` after the sealed base `base`; the rule that keeps a log's terms
    /// from going down at recovery is off, so it may hold any terms.
    fn journal(base: (Offset, Term), entries: Vec<Entry>) -> Journal {
        let config = JournalConfig {
            rules: Rules {
                jump_keeps_term: false,
                ..Rules::default()
            },
            ..JournalConfig::default()
        };
        let sealed = (base.0 > 0).then(|| sealed(base.0, base.1));
        Journal::recover(config, sealed, base.0 + 1, entries).expect("a journal")
    }

    fn decrease(offset: Offset, term: Term, before: Term, base: bool) -> Decrease {
        Decrease {
            offset,
            term,
            before,
            base,
        }
    }

    /// Checks `journal` as the next step's log.
    fn step(monotone: &mut Monotone, journal: &Journal) -> Vec<Decrease> {
        let mut found = Vec::new();
        monotone.check(journal, &mut found);
        found
    }

    /// 1..=3 of term 1, 4..=6 of term 2, nothing committed.
    fn two_terms() -> Journal {
        journal((0, 0), [noops(1..=3, 1), noops(4..=6, 2)].concat())
    }

    /// A clean log, grown by appends, is no violation, and the check moves its mark to the end.
    #[test]
    fn a_clean_log_is_no_violation() {
        let mut monotone = Monotone::default();
        let mut log = two_terms();
        assert!(step(&mut monotone, &log).is_empty());
        assert_eq!(monotone.checked(), (6, 2));
        let mut ops = Vec::new();
        let appended = log.append_replicated(6, 2, noops(7..=8, 3), &mut ops);
        assert_eq!(appended, Ok(8));
        assert!(step(&mut monotone, &log).is_empty());
        assert_eq!(monotone.checked(), (8, 3));
    }

    /// A truncation followed by the re-append of a newer term is no violation, whether the check
    /// learns of the truncation op or only sees the log shorter or changed.
    #[test]
    fn a_truncation_then_a_newer_term_is_no_violation() {
        for told in [true, false] {
            let mut monotone = Monotone::default();
            let mut log = two_terms();
            assert!(step(&mut monotone, &log).is_empty());
            let mut ops = Vec::new();
            let appended = log.append_replicated(3, 1, noops(4..=5, 3), &mut ops);
            assert_eq!(appended, Ok(5));
            assert_eq!(ops[0], StorageOp::TruncateSuffix { from: 4 });
            if told {
                monotone.truncated(4);
            }
            assert!(step(&mut monotone, &log).is_empty(), "told {told}");
            assert_eq!(monotone.checked(), (5, 3));
        }
    }

    /// A trim-point jump is no violation: one over a conflicting suffix drops it, one whose base
    /// matches the record held keeps what follows; and a compaction moving the base up inside
    /// the checked prefix is none either.
    #[test]
    fn jumps_and_compactions_are_no_violation() {
        let mut monotone = Monotone::default();
        let mut log = two_terms();
        assert!(step(&mut monotone, &log).is_empty());
        assert!(matches!(log.jump(6, sealed(5, 3)), Jump::Jumped { .. }));
        assert_eq!(log.last_offset(), 5, "the conflicting suffix is dropped");
        assert!(step(&mut monotone, &log).is_empty());
        assert_eq!(monotone.checked(), (5, 3));

        let mut monotone = Monotone::default();
        let mut log = two_terms();
        assert!(step(&mut monotone, &log).is_empty());
        assert!(matches!(log.jump(5, sealed(4, 2)), Jump::Jumped { .. }));
        assert_eq!(log.last_offset(), 6, "the matching suffix is kept");
        assert!(step(&mut monotone, &log).is_empty());
        assert_eq!(monotone.checked(), (6, 2));

        let mut monotone = Monotone::default();
        assert!(step(&mut monotone, &two_terms()).is_empty());
        let compacted = journal((4, 2), noops(5..=6, 2));
        assert!(step(&mut monotone, &compacted).is_empty());
        assert_eq!(monotone.checked(), (6, 2));
    }

    /// A decrease is found at the step that makes it: a base of a newer term kept ahead of an old
    /// suffix (what a jump that keeps a stale suffix leaves), inside the checked prefix or past
    /// it, and a record below the one before it; the mark moves past each.
    #[test]
    fn a_decrease_is_found_at_its_step() {
        let mut monotone = Monotone::default();
        assert!(step(&mut monotone, &two_terms()).is_empty());
        // The base moved to 4 with term 3, the records after it kept: the base's new pair.
        let stale = journal((4, 3), noops(5..=6, 2));
        assert_eq!(step(&mut monotone, &stale), vec![decrease(5, 2, 3, true)]);
        assert!(step(&mut monotone, &stale).is_empty(), "checked once");

        let mut monotone = Monotone::default();
        let stale = journal((4, 3), [noops(5..=5, 3), noops(6..=7, 1)].concat());
        assert_eq!(step(&mut monotone, &stale), vec![decrease(6, 1, 3, false)]);
        assert_eq!(monotone.checked(), (7, 1));
    }

    /// What a restart reads back is checked before the node starts: a stale suffix after a newer
    /// base is recorded once (at the first step or when the core refuses it), marked a restart's,
    /// and the journal rebuilt from it is not reported again.
    #[test]
    fn a_restart_that_reads_back_a_decrease_records_it_once() {
        let recovered = Recovered {
            hard_state: HardState {
                term: 3,
                vote: None,
            },
            sealed: Some(sealed(4, 3)),
            start: 5,
            entries: noops(5..=6, 2),
            tail_cut: None,
        };
        let mut monotone = Monotone::default();
        monotone.recovered(&recovered);
        let mut events = Vec::new();
        monotone.recovered_events(7, &mut events);
        let expected = Event::LogTermsDecreased {
            node: 7,
            offset: 5,
            term: 2,
            before: 3,
            base: true,
            restart: true,
        };
        assert_eq!(events, vec![expected]);
        monotone.recovered_events(7, &mut events);
        assert_eq!(events.len(), 1, "once");

        let mut config = BrokerConfig::new(7, vec![7], Vec::new());
        config.journal.rules.jump_keeps_term = false;
        let broker = Broker::from_recovered(config, recovered).expect("a broker");
        monotone.stepped(7, &broker, &mut events);
        assert_eq!(
            events.len(),
            1,
            "the journal's decrease was recorded at the restart"
        );
        assert_eq!(monotone.checked(), (6, 2));
    }
}
