//! A paros node as ParosTrimJump's variables, read off the real core after every event, and a
//! jump's sender as the sealed state it sent (see `super`).

use crate::voter::{NodeProjection, Projected, Voter};
use felix_core::broker::Broker;
use felix_core::record::{Command, Entry};
use felix_core::storage::SealedState;
use felix_model::paros::spec::Kind;

/// One record as the model sees it: `[k, o, t, u]`, with a fence's `old` kept to rename tokens.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParosRecord {
    pub kind: Kind,
    /// `o`: a SetLeader's `new`, a truncate's fence (0 on writes and noops).
    pub token: u64,
    /// A SetLeader's `old` (0 on the others).
    pub old: u64,
    /// Whether a truncate carries a fence.
    pub fenced: bool,
    pub term: u64,
    /// `u`: a truncate's floor.
    pub up_to: u64,
}

impl Projected for ParosRecord {
    const UNSEEN: ParosRecord = ParosRecord {
        kind: Kind::Empty,
        token: 0,
        old: 0,
        fenced: false,
        term: 0,
        up_to: 0,
    };

    fn of(entry: &Entry) -> ParosRecord {
        let mut record = ParosRecord {
            term: entry.term,
            ..ParosRecord::UNSEEN
        };
        match &entry.command {
            Command::Write { .. } => record.kind = Kind::Write,
            Command::Trim { floor, fence, .. } => {
                record.kind = Kind::Truncate;
                record.token = fence.map_or(0, |token| token.0);
                record.fenced = fence.is_some();
                record.up_to = *floor;
            }
            Command::Fence { new, old } => {
                record.kind = Kind::SetLeader;
                record.token = new.0;
                record.old = old.0;
            }
            Command::Noop => record.kind = Kind::Noop,
        }
        record
    }

    fn term(&self) -> u64 {
        self.term
    }

    fn trim_floor(&self) -> Option<u64> {
        (self.kind == Kind::Truncate).then_some(self.up_to)
    }

    fn describe(&self) -> String {
        match self.kind {
            Kind::Write => format!("[w t{}]", self.term),
            Kind::Truncate => format!("[t o{} t{} u{}]", self.token, self.term, self.up_to),
            Kind::SetLeader => format!("[s o{}<-{} t{}]", self.token, self.old, self.term),
            Kind::Noop => format!("[n t{}]", self.term),
            Kind::Empty => "[?]".to_string(),
        }
    }
}

/// One voter's projected ParosTrimJump variables: the Raft-shaped ones (`crate::voter`, read and
/// carried as FelixHeadTrim's are), the writer token and the sealed base term.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParosNode {
    /// `term`, `leader`, `log` (offsets 1..=len; below `start` the records last seen, or
    /// unseen), `start`, `commit`, `floor`.
    pub voter: Voter<ParosRecord>,
    /// `writer`: the token in force after the walk (`Token(0)` before the first fence).
    pub writer: u64,
    /// `sterm`: the term of offset `start - 1`.
    pub sterm: u64,
}

/// A paros node is a voter with two more variables: its Raft-shaped ones read as a voter's.
impl std::ops::Deref for ParosNode {
    type Target = Voter<ParosRecord>;
    fn deref(&self) -> &Voter<ParosRecord> {
        &self.voter
    }
}

impl std::ops::DerefMut for ParosNode {
    fn deref_mut(&mut self) -> &mut Voter<ParosRecord> {
        &mut self.voter
    }
}

impl NodeProjection for ParosNode {
    type Record = ParosRecord;

    fn read(broker: &Broker) -> ParosNode {
        ParosNode::with_voter(broker, Voter::read(broker))
    }

    fn advance(&self, broker: &Broker) -> ParosNode {
        ParosNode::with_voter(broker, self.voter.advance(broker))
    }

    fn voter(&self) -> &Voter<ParosRecord> {
        &self.voter
    }

    fn voter_mut(&mut self) -> &mut Voter<ParosRecord> {
        &mut self.voter
    }

    fn describe(&self) -> String {
        let tail = self.log_tail();
        format!(
            "term {} leader {} start {} commit {} writer {} floor {} sterm {} log <<{tail}>>",
            self.term, self.leader, self.start, self.commit, self.writer, self.floor, self.sterm,
        )
    }

    fn variables(&self) -> Vec<(&'static str, String)> {
        vec![
            ("term", self.term.to_string()),
            ("leader", u64::from(self.leader).to_string()),
            ("start", self.start.to_string()),
            ("commit", self.commit.to_string()),
            ("writer", self.writer.to_string()),
            ("floor", self.floor.to_string()),
        ]
    }
}

impl ParosNode {
    fn with_voter(broker: &Broker, voter: Voter<ParosRecord>) -> ParosNode {
        let journal = broker.journal();
        ParosNode {
            voter,
            writer: journal.writer().0,
            sterm: journal.sealed().base_term,
        }
    }

    /// `TermAt(n, i)` where the projection knows it.
    pub fn term_at(&self, offset: u64) -> Option<u64> {
        if offset == 0 {
            return Some(0);
        }
        if offset + 1 == self.start {
            return Some(self.sterm);
        }
        if offset > self.len() {
            return None;
        }
        let record = self.at(offset);
        (record.kind != Kind::Empty).then_some(record.term)
    }

    /// The writer token in force at the tail: the last uncommitted SetLeader, else the walk's.
    pub fn tail_writer(&self) -> u64 {
        self.log[self.commit.min(self.len()) as usize..]
            .iter()
            .rev()
            .find(|record| record.kind == Kind::SetLeader)
            .map_or(self.writer, |record| record.token)
    }
}

/// What a jump's sender sent: `TrimmedTo { point, state }`, as seen when it was sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sent {
    pub point: u64,
    pub writer: u64,
    pub floor: u64,
    pub base_term: u64,
}

impl Sent {
    pub fn of(state: &SealedState) -> Sent {
        Sent {
            point: state.base_offset + 1,
            writer: state.writer.0,
            floor: state.floor,
            base_term: state.base_term,
        }
    }
}
