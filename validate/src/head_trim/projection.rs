//! The projection: a simulated voter's state as the FelixHeadTrim model's per-broker variables.
//!
//! `term[b]`, `leader[b]`, `log[b]` (each record as kind, epoch, term, floor), `commit[b]`,
//! `floor[b]` and `start[b]` are read from the real core `Broker` after every event. Values stay
//! the simulator's own (u64 offsets, terms, epochs); `window` renames them into the model's
//! small bounds only for the one check that needs them.
//!
//! Abstraction rules (what the projection hides, and how):
//! - Replicas are not projected: the model has voters only (no `Abstraction` counts them: their
//!   state is simply not read).
//! - A fence record (paros' SetLeader) and a checkpoint run's records project as writes with
//!   epoch 0: the model has writes, trims and noops only; a trim's paros fence is dropped.
//! - Records below a broker's first held offset, and records at or below the previous commit
//!   index, are carried from earlier projections (`crate::voter`, shared with ParosTrimJump).

use crate::voter::{Projected, Voter};
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

impl Projected for ProjectedRecord {
    const UNSEEN: ProjectedRecord = ProjectedRecord {
        kind: Kind::Empty,
        epoch: 0,
        term: 0,
        floor: 0,
    };

    fn of(entry: &Entry) -> ProjectedRecord {
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

    fn term(&self) -> u64 {
        self.term
    }

    fn trim_floor(&self) -> Option<u64> {
        (self.kind == Kind::Trim).then_some(self.floor)
    }

    /// `[k, h, t, f]`, as the model prints a record.
    fn describe(&self) -> String {
        let k = match self.kind {
            Kind::Write => "w",
            Kind::Trim => "t",
            Kind::Noop => "n",
            Kind::Empty => "?",
        };
        format!("[{k} h{} t{} f{}]", self.epoch, self.term, self.floor)
    }
}

/// One voter's projected variables: `term[b]`, `leader[b]`, `log[b]`, `commit[b]`, `floor[b]`,
/// `start[b]`, read and carried as `crate::voter` says.
pub type BrokerProjection = Voter<ProjectedRecord>;
