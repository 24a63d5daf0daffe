//! The variables both specs project alike: a voter's Raft-shaped state (`term`, `leader`, `log`,
//! `commit`, `floor`, `start`) read off the real core `Broker`, with its log kept across steps.
//!
//! A spec's projection of one node is a `NodeProjection`: FelixHeadTrim's is a `Voter` of its
//! records; ParosTrimJump's adds the writer token and the sealed base term
//! (`crate::paros::ParosNode`). What a record keeps of a core entry is each spec's (`Projected`);
//! how the log is read and carried from one step to the next is the same for both, and lives here
//! once:
//! - records below the first held offset are kept from earlier projections (the models' logs keep
//!   deleted records), or stay unseen if no projection held them;
//! - records at or below the previous commit index are read once and then assumed unchanged
//!   (CommittedPrefixAgreement audits them), so each step re-reads only the uncommitted suffix.

use felix_core::broker::Broker;
use felix_core::record::Entry;

/// A spec's record, as its projection keeps a core entry.
pub trait Projected: Copy + PartialEq {
    /// A record the projection never saw: deleted (or jumped over) before any sample held it.
    /// A check that needs it is not made (`Abstraction::Unseen`).
    const UNSEEN: Self;
    /// The projection of a core entry.
    fn of(entry: &Entry) -> Self;
    /// The record's term.
    fn term(&self) -> u64;
    /// The floor the record asks for, if it is a trim.
    fn trim_floor(&self) -> Option<u64>;
    /// The record as its model prints one, for a mismatch.
    fn describe(&self) -> String;
}

/// One voter's projected Raft-shaped variables, values the simulator's own (u64 offsets and
/// terms): each spec's `window` renames them into the model's bounds only for the one check
/// that needs them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Voter<R> {
    /// `term[b]`: the voter's promise.
    pub term: u64,
    /// `leader[b]`: it believes it leads `term[b]`.
    pub leader: bool,
    /// `log[b]`, offsets 1..=len (records below the first held offset kept from earlier).
    pub log: Vec<R>,
    /// `commit[b]`.
    pub commit: u64,
    /// `floor[b]`.
    pub floor: u64,
    /// `start[b]`: the first offset the voter holds.
    pub start: u64,
}

/// A spec's projection of one node: a voter's Raft-shaped variables and any the spec adds, read
/// off the core and carried from one step to the next. FelixHeadTrim's is the `Voter` itself;
/// ParosTrimJump's adds the writer token and the sealed base term (`crate::paros::ParosNode`).
pub trait NodeProjection: Clone + PartialEq {
    /// The spec's record.
    type Record: Projected;
    /// The node read in full (the first sample, after a restart, after a jump the step does not
    /// walk).
    fn read(broker: &Broker) -> Self;
    /// The node after a step, re-reading only the records above its commit.
    fn advance(&self, broker: &Broker) -> Self;
    /// The Raft-shaped variables.
    fn voter(&self) -> &Voter<Self::Record>;
    fn voter_mut(&mut self) -> &mut Voter<Self::Record>;
    /// The node in words, for a mismatch.
    fn describe(&self) -> String;
    /// The variables compared at a chain's end, in the spec's order, as a mismatch prints them.
    fn variables(&self) -> Vec<(&'static str, String)>;
}

/// A voter is a node of the spec that adds nothing to it (FelixHeadTrim).
impl<R: Projected> NodeProjection for Voter<R> {
    type Record = R;

    fn read(broker: &Broker) -> Voter<R> {
        let first = broker.first_held();
        // Below the first held offset nothing is known: unseen records.
        let mut log = vec![R::UNSEEN; first.saturating_sub(1) as usize];
        log.extend(broker.entries().map(R::of));
        Voter::with_log(broker, log)
    }

    fn advance(&self, broker: &Broker) -> Voter<R> {
        let journal = broker.journal();
        // Committed records are kept; records the step deleted are kept as last seen (they were
        // committed in this step, so unchanged); records never seen stay unseen.
        let first = broker.first_held();
        let keep = self
            .commit
            .max(first.saturating_sub(1))
            .min(self.len())
            .min(journal.tail() - 1);
        let mut log = self.log[..keep as usize].to_vec();
        let from = (keep + 1).max(first);
        while (log.len() as u64) + 1 < from {
            log.push(R::UNSEEN);
        }
        log.extend(journal.entries_from(from, usize::MAX).map(R::of));
        Voter::with_log(broker, log)
    }

    fn voter(&self) -> &Voter<R> {
        self
    }

    fn voter_mut(&mut self) -> &mut Voter<R> {
        self
    }

    /// One line: the variables, with the log's last records.
    fn describe(&self) -> String {
        let tail = self.log_tail();
        format!(
            "term {} leader {} commit {} floor {} start {} log <<{tail}>>",
            self.term, self.leader, self.commit, self.floor, self.start,
        )
    }

    fn variables(&self) -> Vec<(&'static str, String)> {
        vec![
            ("term", self.term.to_string()),
            ("leader", self.leader.to_string()),
            ("commit", self.commit.to_string()),
            ("floor", self.floor.to_string()),
            ("start", self.start.to_string()),
        ]
    }
}

impl<R: Copy> Voter<R> {
    /// `Len(log[b])`.
    pub fn len(&self) -> u64 {
        self.log.len() as u64
    }

    /// `Len(log[b]) = 0`.
    pub fn is_empty(&self) -> bool {
        self.log.is_empty()
    }

    /// The record at `offset` (from 1).
    pub fn at(&self, offset: u64) -> R {
        self.log[(offset - 1) as usize]
    }
}

impl<R: Projected> Voter<R> {
    /// The log's last records as `offset:record, ...` (offsets from 1), with `... ` in front when
    /// earlier records are left out: the one way both models' projections show a log.
    pub fn log_tail(&self) -> String {
        const SHOWN: usize = 6;
        let from = self.log.len().saturating_sub(SHOWN);
        let records: Vec<String> = self.log[from..]
            .iter()
            .enumerate()
            .map(|(index, record)| format!("{}:{}", from + index + 1, record.describe()))
            .collect();
        let elided = if from > 0 { "... " } else { "" };
        format!("{elided}{}", records.join(", "))
    }

    fn with_log(broker: &Broker, log: Vec<R>) -> Voter<R> {
        Voter {
            term: broker.term(),
            leader: broker.is_leader(),
            log,
            commit: broker.committed(),
            floor: broker.floor(),
            start: broker.first_held(),
        }
    }
}

#[cfg(test)]
impl<R> Voter<R> {
    /// A voter holding `log` from offset 1 with no floor yet: the checkers' tests' node.
    pub(crate) fn holding(term: u64, leader: bool, log: Vec<R>, commit: u64) -> Voter<R> {
        Voter {
            term,
            leader,
            log,
            commit,
            floor: 1,
            start: 1,
        }
    }
}
