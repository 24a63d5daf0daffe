//! The projection: a simulated voter's state as the FelixHeadTrim model's per-broker variables.
//!
//! `term[b]`, `leader[b]`, `log[b]` (each record as kind, epoch, term, floor), `commit[b]`,
//! `floor[b]` and `start[b]` are read from the real core `Broker` after every event. Values stay
//! the simulator's own (u64 offsets, terms, epochs); `window` renames them into the model's
//! small bounds only for the one check that needs them.
//!
//! Abstraction rules (what the projection hides, and how):
//! - Replicas are not projected: the model has voters only (`Abstraction::Replica` is never a
//!   step: replicas' state is simply not read).
//! - A fence record (paros' SetLeader) and a checkpoint run's records project as writes with
//!   epoch 0: the model has writes, trims and noops only; a trim's paros fence is dropped.
//! - Records below a broker's first held offset are kept from earlier projections (the model's
//!   log keeps deleted records); records at or below the previous commit index are read once and
//!   then assumed unchanged (CommittedPrefixAgreement audits them), so each step re-reads only
//!   the uncommitted suffix.

use crate::steps::log_tail;
use felix_core::broker::Broker;
use felix_core::record::{Command, Entry};
use felix_model::head_trim::spec::Kind;

/// One record as the model sees it: `[k, h, t, f]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProjectedRecord {
    pub kind: Kind,
    /// The writer's lease epoch (0 for noops, fences and writes without one).
    pub epoch: u64,
    pub term: u64,
    /// The floor a trim asks for (0 on other records).
    pub floor: u64,
}

impl ProjectedRecord {
    /// A record the projection never saw: deleted (or jumped over) before any sample held it.
    /// A check that needs it is not made (`Abstraction::Unseen`).
    pub const UNSEEN: ProjectedRecord = ProjectedRecord {
        kind: Kind::Empty,
        epoch: 0,
        term: 0,
        floor: 0,
    };

    /// The projection of a core entry.
    pub fn of(entry: &Entry) -> ProjectedRecord {
        let (kind, epoch, floor) = match &entry.command {
            Command::Write { headers, .. } => (Kind::Write, headers.epoch().unwrap_or(0), 0),
            Command::Trim { floor, headers, .. } => {
                (Kind::Trim, headers.epoch().unwrap_or(0), *floor)
            }
            Command::Fence { .. } => (Kind::Write, 0, 0),
            Command::Noop => (Kind::Noop, 0, 0),
        };
        ProjectedRecord {
            kind,
            epoch,
            term: entry.term,
            floor,
        }
    }

    /// `[k, h, t, f]`, as the model prints a record.
    pub fn describe(&self) -> String {
        let k = match self.kind {
            Kind::Write => "w",
            Kind::Trim => "t",
            Kind::Noop => "n",
            Kind::Empty => "?",
        };
        format!("[{k} h{} t{} f{}]", self.epoch, self.term, self.floor)
    }
}

/// One voter's projected variables.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BrokerProjection {
    /// `term[b]`: the broker's promise.
    pub term: u64,
    /// `leader[b]`.
    pub leader: bool,
    /// `log[b]`, offsets 1..=len (records below the first held offset kept from earlier).
    pub log: Vec<ProjectedRecord>,
    /// `commit[b]`.
    pub commit: u64,
    /// `floor[b]`.
    pub floor: u64,
    /// `start[b]`: the first offset the broker holds.
    pub start: u64,
}

impl BrokerProjection {
    /// A broker read in full (the first sample, and after a restart or a jump).
    pub fn read(broker: &Broker) -> BrokerProjection {
        let first = broker.first_held();
        // Below the first held offset nothing is known: unseen records.
        let mut log = vec![ProjectedRecord::UNSEEN; first.saturating_sub(1) as usize];
        log.extend(broker.entries().map(ProjectedRecord::of));
        BrokerProjection {
            term: broker.term(),
            leader: broker.is_leader(),
            log,
            commit: broker.committed(),
            floor: broker.floor(),
            start: first,
        }
    }

    /// The broker after a step, re-reading only the records above `self.commit`.
    pub fn advance(&self, broker: &Broker) -> BrokerProjection {
        let journal = broker.journal();
        // Committed records are kept; records the step deleted are kept as last seen (they were
        // committed in this step, so unchanged); records never seen stay unseen.
        let first = broker.first_held();
        let keep = self
            .commit
            .max(first.saturating_sub(1))
            .min(self.log.len() as u64)
            .min(journal.tail() - 1);
        let mut log = self.log[..keep as usize].to_vec();
        let from = (keep + 1).max(first);
        while (log.len() as u64) + 1 < from {
            log.push(ProjectedRecord::UNSEEN);
        }
        log.extend(
            journal
                .entries_from(from, usize::MAX)
                .map(ProjectedRecord::of),
        );
        BrokerProjection {
            term: broker.term(),
            leader: broker.is_leader(),
            log,
            commit: broker.committed(),
            floor: broker.floor(),
            start: broker.first_held(),
        }
    }

    /// `Len(log[b])`.
    pub fn len(&self) -> u64 {
        self.log.len() as u64
    }

    /// `Len(log[b]) = 0`.
    pub fn is_empty(&self) -> bool {
        self.log.is_empty()
    }

    /// The record at `offset` (from 1).
    pub fn at(&self, offset: u64) -> ProjectedRecord {
        self.log[(offset - 1) as usize]
    }

    /// One line: the variables, with the log's last records.
    pub fn describe(&self) -> String {
        let tail = log_tail(&self.log, |record| record.describe());
        format!(
            "term {} leader {} commit {} floor {} start {} log <<{tail}>>",
            self.term, self.leader, self.commit, self.floor, self.start,
        )
    }
}
