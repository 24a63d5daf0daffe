//! Paros runs held to the ParosTrimJump model (`felix_model::paros`, `docs/formal/ParosTrimJump.tla`).
//!
//! The projection: each voter as `term`, `leader`, `log` (each record as kind, owner fence `o`,
//! term, `up_to`), `start`, `commit`, `writer`, `floor`, and `sterm` (the sealed base term) read
//! from the real core `Broker` after every event; a jump's sender as the sealed state it sent
//! (`writer`, `floor`, `base_term`). A `Fence { new, old }` is the model's `SetLeader`, a trim its
//! `Truncate` (the trim's fence is `o`, its floor `up_to`), a write its `Write`, the noop its noop.
//! Not projected: `vote` (the model's votes follow its own actions in every window), the
//! history variables (`high`, `decided`, `acked`: the invariants', not a node's), the sealed
//! `swriter` and `sfloor` of a node that is not a jump's sender, and a write's owner `o` (the
//! core's record does not carry the fence its write was checked against at sequencing: a write
//! projects with `o = 0`, so the model's `acked`, unprojected, never takes it).
//!
//! The checker, as `crate::checker` for FelixHeadTrim: each step a fixed chain of the model's
//! own actions through `ParosTrimJump::next_state` (no second copy of the spec) on a window:
//!
//! | the node | model actions |
//! |---|---|
//! | stays leader, same term | `Write` / `Truncate` / `SetLeader` per appended record, then `Replicate(b, ·)` for its commit |
//! | becomes leader | `Promote(b, Q)` (the noop), then as above |
//! | stops leading, higher term | `StepDown(b, ·)`, then as a follower |
//! | follower | `Replicate(·, b)` once per record the step moved (at least once) |
//! | jumps to a trim point | `TrimmedTo(·, b)` (then `Replicate(·, b)` if the step moved more) |
//! | first held offset rises | `Compact(b)` (once: the model compacts to `min(floor, commit + 1)`) |
//!
//! `k` is 1 + the records moved + one `Replicate` per further window of a long leader commit +
//! at most one `Compact`; stuttering allowed. Steps that need more records in one window than
//! `MaxLen` are counted (`long_window`, `long_suffix`), as for FelixHeadTrim. Windows rename
//! offsets by a shift (or an order- and successor-preserving `Renaming` where the action compares
//! offsets with floors: `Compact`, `TrimmedTo`), terms, floors and tokens order-preservingly. A
//! token renaming keeps every fence's `new` the successor of its `old` (the model's
//! `SetLeader { new: o, old: o - 1 }`); tokens that branch (two fences naming the same `old`
//! in one window) do not fit and are counted as out of bounds.
//!
//! What the model leaves out, each hidden by a named rule and counted (`Abstraction`):
//! - `truncate_up_to`: the model's `Truncate` is up to its own slot; a core trim asks for a floor
//!   at or below its own offset (a checkpoint's start). Matched as `Truncate(o, b)` with the
//!   record keeping the core's floor; every later use of it (walks, `Compact`, `TrimmedTo`) is
//!   the model's. A floor above its own offset is a divergence.
//! - `run_tail`: a checkpoint run's records are conditional on the tail; the model's appends
//!   have none (the tail check is the owner's).
//! - `segments`: the core compacts whole segments, the model to `min(floor, commit + 1)` at once:
//!   a compaction is matched when the model's `Compact` deletes at least what the core deleted.
//! - `sealed_floor`: the core seals the floor in force, which a trim at or above the point may
//!   have set; the model seals the fold below the point. The sender's sealed floor is read clamped
//!   to the point, as the core's jumper takes it (a floor set by no trim, `NotHeld` below it).
//! - `jump_in_agreement` (not checked): the core's leader sends `TrimmedTo` on its belief about
//!   the follower; a follower that already agrees at the point jumps in the core, while the
//!   model's `TrimmedTo` is enabled only for a follower that cannot be replicated to. The jumped
//!   state is the new baseline (its term still may not fall).
//! - `unseen_sender` (not checked): a jump whose `TrimmedTo` was not seen sent.
//! - `unfenced` (not checked): a trim without a fence.
//!
//! Not seen by this model at all: when a write is acknowledged (`AckBeforeSync`: `acked` is a
//! history variable, not a node's), and reads (the model's `ReadAnswer`).
//!
//! The ghosts of `crate::checker` stand for hidden senders the same way: a follower's sender is
//! the follower after the step (its log, commit and term), a leader's acknowledging majority its
//! log up to the new commit, a jump's sender the point and the sealed state it sent, at the
//! jumper's term (a `TrimmedTo` carries no term; the model's guard wants the sender's at least
//! the jumper's).

use crate::checker::{Abstraction, Verdict};
use crate::projection::log_tail;
use crate::steps::{
    self, first_difference, mismatch, Failure, Steps, Walk, LONG, LONG_SUFFIX, OUT, UNSEEN,
};
use crate::window::Renaming;
use felix_core::broker::Broker;
use felix_core::record::{Command, Entry};
use felix_core::storage::SealedState;
use felix_model::paros::config::{ParosBounds, ParosConfig, ParosSwitches};
use felix_model::paros::spec::{Action, Kind, Log, ParosTrimJump, Record, State};
use felix_model::spec::Expectation;
use stateright::Model;

/// The configuration every window runs under: the design (every rule on), three voters, owners
/// up to 7 (the renamed tokens), and counters that never bind (a window takes one append).
/// `MaxLen` is 7: a window's slots are 0..=7.
pub static PAROS_WINDOW: ParosConfig = ParosConfig {
    name: "ParosTrimJumpValidate",
    base: None,
    bounds: ParosBounds {
        voters: 3,
        replicas: 0,
        owners: 7,
        max_writes: 2,
        max_truncates: 2,
        max_setleaders: 2,
        max_promotions: 1,
    },
    switches: ParosSwitches {
        jump_keeps_term: true,
        truncate_fenced: true,
        floor_after_commit: true,
        ack_after_sync: true,
    },
    expectation: Expectation::Pass,
    twin: None,
};

/// The highest slot of a window (`MaxLen`).
const SLOTS: u64 = 7;

fn model() -> ParosTrimJump {
    ParosTrimJump::new(&PAROS_WINDOW)
}

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

impl ParosRecord {
    /// A record the projection never saw (below the first held offset of a baseline).
    pub const UNSEEN: ParosRecord = ParosRecord {
        kind: Kind::Empty,
        token: 0,
        old: 0,
        fenced: false,
        term: 0,
        up_to: 0,
    };

    pub fn of(entry: &Entry) -> ParosRecord {
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

    pub fn describe(&self) -> String {
        match self.kind {
            Kind::Write => format!("[w t{}]", self.term),
            Kind::Truncate => format!("[t o{} t{} u{}]", self.token, self.term, self.up_to),
            Kind::SetLeader => format!("[s o{}<-{} t{}]", self.token, self.old, self.term),
            Kind::Noop => format!("[n t{}]", self.term),
            Kind::Empty => "[?]".to_string(),
        }
    }
}

/// One voter's projected ParosTrimJump variables.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParosNode {
    pub term: u64,
    pub leader: bool,
    /// Offsets 1..=len; below `start` the records last seen (or unseen).
    pub log: Vec<ParosRecord>,
    pub start: u64,
    pub commit: u64,
    /// `writer`: the token in force after the walk (`Token(0)` before the first fence).
    pub writer: u64,
    pub floor: u64,
    /// `sterm`: the term of offset `start - 1`.
    pub sterm: u64,
}

impl ParosNode {
    /// A node read in full (the first sample, after a restart, after an unchecked jump).
    pub fn read(broker: &Broker) -> ParosNode {
        let first = broker.first_held();
        let mut log = vec![ParosRecord::UNSEEN; first.saturating_sub(1) as usize];
        log.extend(broker.entries().map(ParosRecord::of));
        ParosNode::with_log(broker, log)
    }

    fn with_log(broker: &Broker, log: Vec<ParosRecord>) -> ParosNode {
        let journal = broker.journal();
        ParosNode {
            term: broker.term(),
            leader: broker.is_leader(),
            log,
            start: journal.first_held(),
            commit: journal.committed(),
            writer: journal.writer().0,
            floor: journal.floor(),
            sterm: journal.sealed().base_term,
        }
    }

    /// The node after a step, re-reading only the records above `self.commit` (committed ones
    /// are kept: CommittedPrefixAgreement audits them).
    pub fn advance(&self, broker: &Broker) -> ParosNode {
        let journal = broker.journal();
        let first = journal.first_held();
        let keep = self
            .commit
            .max(first.saturating_sub(1))
            .min(self.len())
            .min(journal.tail() - 1);
        let mut log = self.log[..keep as usize].to_vec();
        let from = (keep + 1).max(first);
        while (log.len() as u64) + 1 < from {
            log.push(ParosRecord::UNSEEN);
        }
        log.extend(journal.entries_from(from, usize::MAX).map(ParosRecord::of));
        ParosNode::with_log(broker, log)
    }

    pub fn len(&self) -> u64 {
        self.log.len() as u64
    }

    pub fn is_empty(&self) -> bool {
        self.log.is_empty()
    }

    pub fn at(&self, offset: u64) -> ParosRecord {
        self.log[(offset - 1) as usize]
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

    pub fn describe(&self) -> String {
        let tail = log_tail(&self.log, |record| record.describe());
        format!(
            "term {} leader {} start {} commit {} writer {} floor {} sterm {} log <<{tail}>>",
            self.term, self.leader, self.start, self.commit, self.writer, self.floor, self.sterm,
        )
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

/// Tokens renamed for a window: order kept, every fence's `new` the image of its `old` plus one,
/// distinct tokens distinct images, images in 1..=7.
struct Tokens {
    map: Vec<(u64, u8)>,
}

impl Tokens {
    fn new(values: &[u64], edges: &[(u64, u64)]) -> Option<Tokens> {
        let mut sorted: Vec<u64> = values
            .iter()
            .copied()
            .chain(edges.iter().flat_map(|&(old, new)| [old, new]))
            .collect();
        sorted.sort_unstable();
        sorted.dedup();
        let mut map: Vec<(u64, u8)> = Vec::with_capacity(sorted.len());
        let mut highest = 0u8;
        for value in sorted {
            let olds: Vec<u64> = edges
                .iter()
                .filter(|(_, new)| *new == value)
                .map(|(old, _)| *old)
                .collect();
            let from_old = olds.first().and_then(|old| {
                map.iter()
                    .find(|(token, _)| token == old)
                    .map(|(_, image)| image + 1)
            });
            if olds.iter().any(|old| *old != olds[0]) {
                return None;
            }
            let image = match from_old {
                Some(image) => image,
                None if highest == 0 => 1,
                None => highest + 2,
            };
            if image > 7 || map.iter().any(|(_, taken)| *taken == image) {
                return None;
            }
            highest = highest.max(image);
            map.push((value, image));
        }
        Some(Tokens { map })
    }

    fn to(&self, value: u64) -> u8 {
        self.map
            .iter()
            .find(|(token, _)| *token == value)
            .map(|(_, image)| *image)
            .unwrap_or_else(|| unreachable!("token {value} was not in the renamed set"))
    }

    fn back(&self, image: u8) -> Option<u64> {
        self.map
            .iter()
            .find(|(_, candidate)| *candidate == image)
            .map(|(token, _)| *token)
    }
}

/// One node of a window, already renamed.
#[derive(Clone, Debug)]
struct WindowNode {
    term: u8,
    leader: bool,
    records: Vec<Record>,
    start: u8,
    commit: u8,
    writer: u8,
    floor: u8,
    sterm: u8,
    swriter: u8,
    sfloor: u8,
}

impl WindowNode {
    fn absent(term: u8) -> WindowNode {
        WindowNode {
            term,
            leader: false,
            records: Vec::new(),
            start: 1,
            commit: 0,
            writer: 1,
            floor: 1,
            sterm: 0,
            swriter: 1,
            sfloor: 1,
        }
    }
}

/// The model state of a window: nodes 1..=3 (voters), every history variable at its initial
/// value. None when a node does not fit (`MaxLen`, commit outside the log).
fn window(nodes: [WindowNode; 3]) -> Option<State> {
    let mut state = model().init_states().remove(0);
    for (index, node) in nodes.into_iter().enumerate() {
        let last = u64::from(node.start) + node.records.len() as u64;
        if node.start == 0
            || last > SLOTS + 1
            || node.commit + 1 < node.start
            || u64::from(node.commit) + 1 > last
        {
            return None;
        }
        state.term[index] = node.term;
        state.vote[index] = 0;
        state.leader[index] = node.leader;
        state.log[index] = Log::from_records(&node.records);
        state.start[index] = node.start;
        state.commit[index] = node.commit;
        state.writer[index] = node.writer;
        state.floor[index] = node.floor;
        state.sterm[index] = node.sterm;
        state.swriter[index] = node.swriter;
        state.sfloor[index] = node.sfloor;
        state.high[index] = (node.term, 0);
    }
    Some(state)
}

/// Node numbers in a window.
const N1: u8 = 1;
const N2: u8 = 2;

/// Runs one action on a window (`steps::take`).
fn take(state: &State, action: Action, label: &str) -> Result<State, Failure> {
    steps::take(
        &model(),
        state,
        action,
        label,
        "the ParosTrimJump model",
        "where node 1 or 2 is the stepping node and the others ghosts",
    )
}

/// The renamings of a window's records: terms (1..=15), floors (1..=63), tokens.
struct Names {
    terms: Renaming,
    floors: Renaming,
    tokens: Tokens,
}

impl Names {
    fn new(
        records: &[ParosRecord],
        terms: &[u64],
        floors: &[u64],
        tokens: &[u64],
    ) -> Result<Names, Failure> {
        if records.iter().any(|record| record.kind == Kind::Empty) {
            return Err(UNSEEN);
        }
        if records
            .iter()
            .any(|record| record.kind == Kind::Truncate && !record.fenced)
        {
            return Err(Failure::Abstract(Abstraction::Unfenced));
        }
        let terms = Renaming::new(
            records
                .iter()
                .map(|record| record.term)
                .chain(terms.iter().copied()),
            1,
            15,
        )
        .ok_or(OUT)?;
        let floors = Renaming::new(
            records
                .iter()
                .filter(|record| record.kind == Kind::Truncate)
                .map(|record| record.up_to)
                .chain(floors.iter().copied()),
            1,
            63,
        )
        .ok_or(OUT)?;
        let values: Vec<u64> = records
            .iter()
            .filter(|record| record.kind == Kind::Truncate)
            .map(|record| record.token)
            .chain(tokens.iter().copied())
            .collect();
        let edges: Vec<(u64, u64)> = records
            .iter()
            .filter(|record| record.kind == Kind::SetLeader)
            .map(|record| (record.old, record.token))
            .collect();
        let tokens = Tokens::new(&values, &edges).ok_or(OUT)?;
        Ok(Names {
            terms,
            floors,
            tokens,
        })
    }

    fn record(&self, projected: &ParosRecord) -> Record {
        let (o, u) = match projected.kind {
            Kind::Truncate => (
                self.tokens.to(projected.token),
                self.floors.to(projected.up_to),
            ),
            Kind::SetLeader => (self.tokens.to(projected.token), 0),
            _ => (0, 0),
        };
        Record {
            k: projected.kind,
            o,
            t: self.terms.to(projected.term),
            u,
        }
    }

    fn records(&self, projected: &[ParosRecord]) -> Vec<Record> {
        projected.iter().map(|record| self.record(record)).collect()
    }

    fn term(&self, image: u8) -> u64 {
        self.terms
            .back(image)
            .unwrap_or_else(|| unreachable!("the model's terms come from the window"))
    }

    fn floor(&self, image: u8) -> u64 {
        self.floors
            .back(image)
            .unwrap_or_else(|| unreachable!("the model's floors come from the window"))
    }

    fn token(&self, image: u8) -> u64 {
        self.tokens
            .back(image)
            .unwrap_or_else(|| unreachable!("the model's tokens come from the window"))
    }
}

/// Walks one node's step through the ParosTrimJump model. `tail`: the request the step
/// delivered had a tail condition; `jump`: the step is a jump to what `Sent` says. Returns the
/// verdict and the hiding rules the step used (each counted).
pub fn check(
    node: u32,
    before: &ParosNode,
    after: &ParosNode,
    tail: bool,
    jump: Option<Sent>,
) -> (Verdict, Vec<Abstraction>) {
    steps::check(node, before, after, tail, jump)
}

impl Steps for ParosNode {
    type Record = ParosRecord;
    type Tail = bool;
    type Jump = Sent;
    const NO_TAIL: bool = false;
    const WINDOW_RECORDS: u64 = SLOTS;
    const TERMS_NEVER_LOWER: &'static str =
        "no ParosTrimJump action lowers a term (TrimmedTo never touches it)";

    fn len(&self) -> u64 {
        ParosNode::len(self)
    }
    fn at(&self, offset: u64) -> ParosRecord {
        ParosNode::at(self, offset)
    }
    fn record_term(record: &ParosRecord) -> u64 {
        record.term
    }
    fn term(&self) -> u64 {
        self.term
    }
    fn leader(&self) -> bool {
        self.leader
    }
    fn commit(&self) -> u64 {
        self.commit
    }
    fn start(&self) -> u64 {
        self.start
    }
    fn describe(&self) -> String {
        ParosNode::describe(self)
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
    fn append(
        &mut self,
        node: u32,
        appended: ParosRecord,
        tail: bool,
        walk: &mut Walk,
    ) -> Result<(), Failure> {
        if tail {
            walk.hidden.push(Abstraction::RunTail);
        }
        append(node, self, appended, &mut walk.taken, &mut walk.hidden)
    }
    fn leader_commit(&mut self, node: u32, commit: u64, walk: &mut Walk) -> Result<(), Failure> {
        leader_commit(node, self, commit, &mut walk.taken)
    }
    fn promote(&mut self, node: u32, after: &Self, walk: &mut Walk) -> Result<(), Failure> {
        promote(node, self, after, &mut walk.taken)
    }
    fn step_down(&mut self, node: u32, after: &Self, walk: &mut Walk) -> Result<(), Failure> {
        step_down(node, self, after, &mut walk.taken)
    }
    fn replicate_chain(&mut self, node: u32, after: &Self, walk: &mut Walk) -> Result<(), Failure> {
        replicate_chain(node, self, after, &mut walk.taken)
    }
    fn compact(&mut self, node: u32, after: &Self, walk: &mut Walk) -> Result<(), Failure> {
        compact(node, self, after, &mut walk.taken, &mut walk.hidden)
    }
    /// A jump: `TrimmedTo`, then `Replicate` if the step also moved the log or the commit.
    fn jump(
        &mut self,
        node: u32,
        after: &Self,
        sent: Sent,
        walk: &mut Walk,
    ) -> Result<(), Failure> {
        trimmed_to(node, self, after, sent, &mut walk.taken, &mut walk.hidden)?;
        if self.commit != after.commit || self.len() != after.len() {
            replicate_chain(node, self, after, &mut walk.taken)?;
        }
        Ok(())
    }
}

/// One appended record: `Write`, `Truncate` or `SetLeader` on a window holding the leader alone
/// (the actions read nothing of its log but its length).
fn append(
    node: u32,
    current: &mut ParosNode,
    appended: ParosRecord,
    taken: &mut Vec<String>,
    hidden: &mut Vec<Abstraction>,
) -> Result<(), Failure> {
    let offset = current.len() + 1;
    let tail_writer = current.tail_writer();
    let names = Names::new(
        std::slice::from_ref(&appended),
        &[current.term],
        &[current.floor],
        &[tail_writer, current.writer],
    )?;
    let me = WindowNode {
        term: names.terms.to(current.term),
        leader: true,
        writer: names.tokens.to(current.writer),
        floor: names.floors.to(current.floor),
        ..WindowNode::absent(1)
    };
    let state = window([me, WindowNode::absent(1), WindowNode::absent(1)]).ok_or(OUT)?;
    let record = names.record(&appended);
    let (action, label) = match appended.kind {
        Kind::Write => (Action::Write(0, N1), format!("Write(o, {node})")),
        Kind::Truncate => {
            if appended.up_to > offset {
                return mismatch(format!(
                    "a truncate at {offset} asks for floor {} above its own slot: the model's Truncate is up to its own slot",
                    appended.up_to
                ));
            }
            if appended.up_to < offset {
                hidden.push(Abstraction::TruncateUpTo);
            }
            (
                Action::Truncate(record.o, N1),
                format!("Truncate({}, {node})", appended.token),
            )
        }
        Kind::SetLeader => {
            if appended.old != tail_writer {
                return mismatch(format!(
                    "a SetLeader {{ new: {}, old: {} }} appended where the token at the tail is {tail_writer}: the model's SetLeader {{ new: o, old: o - 1 }} replaces the token in force",
                    appended.token, appended.old
                ));
            }
            (
                Action::SetLeader(record.o, N1),
                format!("SetLeader({}, {node})", appended.token),
            )
        }
        Kind::Noop | Kind::Empty => {
            return mismatch(format!(
                "a leader appended {} in its own term, not as a promotion's noop",
                appended.describe()
            ))
        }
    };
    let next = take(&state, action, &label)?;
    let made = next.log[0].at(1);
    if made.k != record.k || made.o != record.o || made.t != record.t {
        return mismatch(format!(
            "{label} appends {made} (renamed) where the core appended {}",
            appended.describe()
        ));
    }
    current.log.push(appended);
    taken.push(label);
    Ok(())
}

/// The leader's commit rises: `Replicate(b, ghost)`, the ghost holding its log up to the new
/// commit (the acknowledging majority). The model's `CommitIn` and walk give commit, writer and
/// floor.
fn leader_commit(
    node: u32,
    current: &mut ParosNode,
    commit: u64,
    taken: &mut Vec<String>,
) -> Result<(), Failure> {
    let label = format!("Replicate({node}, majority)");
    if commit < current.commit || commit > current.len() {
        return mismatch(format!(
            "a leader's commit moved from {} to {commit} (log length {}): {label} only raises it within the log",
            current.commit,
            current.len()
        ));
    }
    let base = current.commit;
    if commit - base > SLOTS {
        return Err(LONG);
    }
    let sterm = current.term_at(base).ok_or(UNSEEN)?;
    let records = &current.log[base as usize..commit as usize];
    let names = Names::new(
        records,
        &[current.term, sterm],
        &[current.floor],
        &[current.writer],
    )?;
    let term = names.terms.to(current.term);
    let me = WindowNode {
        term,
        leader: true,
        records: names.records(records),
        writer: names.tokens.to(current.writer),
        floor: names.floors.to(current.floor),
        sterm: names.terms.to(sterm),
        ..WindowNode::absent(1)
    };
    let ghost = WindowNode {
        leader: false,
        ..me.clone()
    };
    let state = window([me, ghost, WindowNode::absent(1)]).ok_or(OUT)?;
    let next = take(&state, Action::Replicate(N1, N2), &label)?;
    current.commit = base + u64::from(next.commit[0]);
    current.writer = names.token(next.writer[0]);
    current.floor = names.floor(next.floor[0]);
    taken.push(label);
    Ok(())
}

/// A new leader: `Promote(b, {1, 2, 3})` from the term below its new one, the two ghosts holding
/// its log.
fn promote(
    node: u32,
    current: &mut ParosNode,
    after: &ParosNode,
    taken: &mut Vec<String>,
) -> Result<(), Failure> {
    let label = format!("Promote({node}, Q)");
    if after.len() <= current.len()
        || first_difference(current, after, current.commit)
            .is_some_and(|offset| offset <= current.len())
    {
        return mismatch(format!(
            "{label} keeps the log and appends a noop; the simulator's new leader did not"
        ));
    }
    // `Promote` reads only the voters' last terms and lengths: the window may start above the
    // commit index, as long as it holds the last record and room for the noop.
    let base = current
        .commit
        .min(current.len())
        .max(current.len().saturating_sub(SLOTS - 1));
    let records = &current.log[base as usize..];
    if records.len() as u64 >= SLOTS {
        return Err(LONG);
    }
    let sterm = current.term_at(base).ok_or(UNSEEN)?;
    let promise = after.term - 1;
    let names = Names::new(records, &[promise, after.term, sterm], &[], &[])?;
    let voter = WindowNode {
        term: names.terms.to(promise),
        records: names.records(records),
        sterm: names.terms.to(sterm),
        ..WindowNode::absent(1)
    };
    let state = window([voter.clone(), voter.clone(), voter]).ok_or(OUT)?;
    let next = take(&state, Action::Promote(N1, 0b111), &label)?;
    let noop = next.log[0].at(next.log[0].len());
    current.term = names.term(next.term[0]);
    current.leader = next.leader[0];
    current.log.push(ParosRecord {
        kind: noop.k,
        term: current.term,
        ..ParosRecord::UNSEEN
    });
    taken.push(label);
    Ok(())
}

/// A leader learns a higher term: `StepDown(b, ghost)`.
fn step_down(
    node: u32,
    current: &mut ParosNode,
    after: &ParosNode,
    taken: &mut Vec<String>,
) -> Result<(), Failure> {
    let label = format!("StepDown({node}, ·)");
    let terms = Renaming::new([current.term, after.term], 1, 15).ok_or(OUT)?;
    let me = WindowNode {
        leader: true,
        ..WindowNode::absent(terms.to(current.term))
    };
    let ghost = WindowNode::absent(terms.to(after.term));
    let state = window([me, ghost, WindowNode::absent(1)]).ok_or(OUT)?;
    let next = take(&state, Action::StepDown(N1, N2), &label)?;
    current.term = terms
        .back(next.term[0])
        .unwrap_or_else(|| unreachable!("a step down takes the ghost's term"));
    current.leader = next.leader[0];
    taken.push(label);
    Ok(())
}

/// A follower's step: `Replicate(ghost, b)` until it holds the ghost's log and commit, one record
/// per action, on windows of `SLOTS` offsets above a base (see `crate::checker::replicate_chain`,
/// the same walk for FelixHeadTrim).
fn replicate_chain(
    node: u32,
    current: &mut ParosNode,
    after: &ParosNode,
    taken: &mut Vec<String>,
) -> Result<(), Failure> {
    let label = format!("Replicate(·, {node})");
    let width = SLOTS;
    let limit = 2 * after.len() + 4;
    for _ in 0..limit {
        let mut matched = current.commit.min(current.len()).min(after.len());
        while matched < current.len().min(after.len())
            && current.at(matched + 1).term == after.at(matched + 1).term
        {
            matched += 1;
        }
        let commit = current.commit;
        let to_send = matched < after.len();
        let base_commit = commit.min(matched);
        let commit_can_move = after.commit > commit && base_commit == commit;
        let send_fits = to_send && matched < base_commit + width;
        let commit_mode = commit_can_move || send_fits || !to_send;
        let (base, log_only) = if commit_mode {
            (base_commit, false)
        } else {
            (matched.saturating_sub(width / 2).max(commit), true)
        };
        let window_end = base + width;
        if current.len() > window_end && matched < window_end {
            return Err(LONG_SUFFIX);
        }
        let sterm = current.term_at(base).ok_or(UNSEEN)?;
        let ghost_records = &after.log[base as usize..after.len().min(window_end) as usize];
        let own_records = &current.log[base as usize..current.len().min(window_end) as usize];
        let own_tail = &current.log[current.len().min(window_end) as usize..];
        let all: Vec<ParosRecord> = ghost_records.iter().chain(own_records).copied().collect();
        let names = Names::new(
            &all,
            &[current.term, after.term, sterm],
            &[current.floor, after.floor],
            &[current.writer, after.writer],
        )?;
        let ghost_window = names.records(ghost_records);
        let own_window = names.records(own_records);
        let (ghost_commit, own_commit) = if log_only {
            (0, 0)
        } else {
            (
                after
                    .commit
                    .saturating_sub(base)
                    .min(ghost_window.len() as u64) as u8,
                (commit - base) as u8,
            )
        };
        let ghost = WindowNode {
            term: names.terms.to(after.term),
            leader: true,
            records: ghost_window.clone(),
            commit: ghost_commit,
            writer: names.tokens.to(after.writer),
            floor: names.floors.to(after.floor),
            sterm: names.terms.to(sterm),
            ..WindowNode::absent(1)
        };
        let me = WindowNode {
            term: names.terms.to(current.term),
            leader: current.leader,
            records: own_window.clone(),
            commit: own_commit,
            writer: names.tokens.to(current.writer),
            floor: names.floors.to(current.floor),
            sterm: names.terms.to(sterm),
            ..WindowNode::absent(1)
        };
        let third = WindowNode::absent(names.terms.to(current.term));
        let state = window([ghost, me, third]).ok_or(OUT)?;
        let next = take(&state, Action::Replicate(N1, N2), &label)?;
        let previous = current.clone();
        let mut log = current.log[..base as usize].to_vec();
        for (index, model_record) in next.log[1].records().enumerate() {
            let offset = base + index as u64 + 1;
            let projected = if ghost_window.get(index) == Some(&model_record) {
                after.at(offset)
            } else if own_window.get(index) == Some(&model_record) {
                current.at(offset)
            } else {
                unreachable!("a replicated record comes from the sender or the receiver")
            };
            log.push(projected);
        }
        if usize::from(next.log[1].len()) == own_window.len() {
            log.extend_from_slice(own_tail);
        } else {
            assert!(
                own_tail.is_empty(),
                "a window cut above the match point is never changed"
            );
        }
        current.log = log;
        current.commit = if log_only {
            commit
        } else {
            base + u64::from(next.commit[1])
        };
        current.writer = names.token(next.writer[1]);
        current.floor = names.floor(next.floor[1]);
        current.term = names.term(next.term[1]);
        current.leader = next.leader[1];
        taken.push(label.clone());
        let done = current.commit == after.commit
            && current.len() == after.len()
            && first_difference(current, after, base).is_none();
        if done || *current == previous {
            return Ok(());
        }
    }
    Ok(())
}

/// A jump: `TrimmedTo(ghost, b)`, the ghost holding nothing from the point it sent, with the
/// sealed state it sent, at the jumper's term.
fn trimmed_to(
    node: u32,
    current: &mut ParosNode,
    after: &ParosNode,
    sent: Sent,
    taken: &mut Vec<String>,
    hidden: &mut Vec<Abstraction>,
) -> Result<(), Failure> {
    let label = format!("TrimmedTo(·, {node})");
    let point = sent.point;
    if current.term_at(point - 1) == Some(sent.base_term) {
        return Err(Failure::Abstract(Abstraction::JumpInAgreement));
    }
    if sent.floor > point {
        hidden.push(Abstraction::SealedFloor);
    }
    let sfloor = sent.floor.min(point);
    let last = current.len();
    let offsets = Renaming::new(
        [
            current.start - 1,
            current.start,
            current.commit,
            current.floor,
            last,
            point - 1,
            point,
            sfloor,
        ],
        0,
        SLOTS as u8,
    )
    .ok_or(OUT)?;
    // The jumper's records: only the term at the point's base matters to the guard (`CanReplicate`
    // reads the one slot the ghost knows).
    let fill = current
        .term_at(point - 1)
        .or_else(|| current.term_at(last))
        .unwrap_or(current.term);
    let terms = Renaming::new([fill, sent.base_term, current.term], 1, 15).ok_or(OUT)?;
    let tokens = Tokens::new(&[current.writer, sent.writer], &[]).ok_or(OUT)?;
    let filler = Record {
        k: Kind::Write,
        o: 0,
        t: terms.to(fill),
        u: 0,
    };
    let held = offsets.to(last) + 1 - offsets.to(current.start);
    let me = WindowNode {
        term: terms.to(current.term),
        leader: current.leader,
        records: vec![filler; usize::from(held)],
        start: offsets.to(current.start),
        commit: offsets.to(current.commit),
        writer: tokens.to(current.writer),
        floor: offsets.to(current.floor),
        sterm: terms.to(fill),
        ..WindowNode::absent(1)
    };
    let ghost = WindowNode {
        term: terms.to(current.term),
        leader: true,
        records: Vec::new(),
        start: offsets.to(point),
        commit: offsets.to(point - 1),
        writer: tokens.to(sent.writer),
        floor: offsets.to(sfloor),
        sterm: terms.to(sent.base_term),
        swriter: tokens.to(sent.writer),
        sfloor: offsets.to(sfloor),
    };
    let state = window([ghost, me, WindowNode::absent(1)]).ok_or(OUT)?;
    let next = take(&state, Action::TrimmedTo(N1, N2), &label)?;
    let offset = |image: u8| {
        offsets
            .back(image)
            .unwrap_or_else(|| unreachable!("the model's offsets come from the window"))
    };
    let start = offset(next.start[1]);
    assert!(next.log[1].is_empty(), "TrimmedTo empties the jumper's log");
    current.log = vec![ParosRecord::UNSEEN; (start - 1) as usize];
    current.start = start;
    current.commit = offset(next.commit[1]);
    current.floor = offset(next.floor[1]);
    current.writer = tokens
        .back(next.writer[1])
        .unwrap_or_else(|| unreachable!("the model's tokens come from the window"));
    current.sterm = terms
        .back(next.sterm[1])
        .unwrap_or_else(|| unreachable!("the model's terms come from the window"));
    current.term = terms
        .back(next.term[1])
        .unwrap_or_else(|| unreachable!("the model's terms come from the window"));
    current.leader = next.leader[1];
    if after.start != current.start {
        return mismatch(format!(
            "{label} starts the jumper at {}, the core at {}",
            current.start, after.start
        ));
    }
    taken.push(label);
    Ok(())
}

/// The first held offset rises: `Compact(b)`, which deletes every record below
/// `min(floor, commit + 1)`; the core's deletion must be a part of it (rule `segments`).
fn compact(
    node: u32,
    current: &mut ParosNode,
    after: &ParosNode,
    taken: &mut Vec<String>,
    hidden: &mut Vec<Abstraction>,
) -> Result<(), Failure> {
    let label = format!("Compact({node})");
    if after.start < current.start {
        return mismatch(format!(
            "the first held offset went back from {} to {}",
            current.start, after.start
        ));
    }
    let offsets = Renaming::new(
        [
            current.start,
            after.start,
            current.floor,
            current.commit + 1,
        ],
        1,
        SLOTS as u8,
    )
    .ok_or(OUT)?;
    let start = offsets.to(current.start);
    let held = offsets.to(current.commit + 1).saturating_sub(start);
    let filler = Record {
        k: Kind::Write,
        o: 0,
        t: 1,
        u: 0,
    };
    let me = WindowNode {
        leader: current.leader,
        records: vec![filler; usize::from(held)],
        start,
        commit: offsets.to(current.commit + 1) - 1,
        floor: offsets.to(current.floor),
        sterm: 1,
        ..WindowNode::absent(1)
    };
    let state = window([me, WindowNode::absent(1), WindowNode::absent(1)]).ok_or(OUT)?;
    let next = take(&state, Action::Compact(N1), &label)?;
    let target = offsets.to(after.start);
    if next.start[0] < target {
        return mismatch(format!(
            "the core deleted below {} where {label} deletes only below min(floor {}, commit {} + 1)",
            after.start, current.floor, current.commit
        ));
    }
    if next.start[0] > target {
        hidden.push(Abstraction::Segments);
    }
    current.start = after.start;
    current.sterm = after.sterm;
    taken.push(label);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(term: u64) -> ParosRecord {
        ParosRecord {
            kind: Kind::Write,
            term,
            ..ParosRecord::UNSEEN
        }
    }

    fn truncate(term: u64, token: u64, up_to: u64) -> ParosRecord {
        ParosRecord {
            kind: Kind::Truncate,
            token,
            fenced: true,
            term,
            up_to,
            ..ParosRecord::UNSEEN
        }
    }

    fn fence(term: u64, new: u64, old: u64) -> ParosRecord {
        ParosRecord {
            kind: Kind::SetLeader,
            token: new,
            old,
            term,
            ..ParosRecord::UNSEEN
        }
    }

    fn noop(term: u64) -> ParosRecord {
        ParosRecord {
            kind: Kind::Noop,
            term,
            ..ParosRecord::UNSEEN
        }
    }

    fn node(term: u64, leader: bool, log: Vec<ParosRecord>, commit: u64) -> ParosNode {
        ParosNode {
            term,
            leader,
            log,
            start: 1,
            commit,
            writer: 0,
            floor: 1,
            sterm: 0,
        }
    }

    fn matched(verdict: &(Verdict, Vec<Abstraction>)) -> bool {
        matches!(verdict.0, Verdict::Matched(_))
    }

    /// Tokens keep each fence's `new` the successor of its `old`, and refuse a branch.
    #[test]
    fn tokens_keep_fence_successors() {
        let tokens = Tokens::new(&[0, 9], &[(0, 3), (3, 5)]).expect("fits");
        assert_eq!(tokens.to(0), 1);
        assert_eq!(tokens.to(3), 2);
        assert_eq!(tokens.to(5), 3);
        assert_eq!(tokens.to(9), 5);
        assert!(Tokens::new(&[], &[(1, 2), (1, 3)]).is_none());
    }

    /// A follower's walk moves the writer over a committed SetLeader and raises the floor over a
    /// committed truncate under the token in force; a truncate under a stale token leaves it.
    #[test]
    fn follower_walk_moves_writer_and_floor() {
        let log = vec![noop(1), fence(1, 1, 0), write(1), truncate(1, 1, 3)];
        let before = node(1, false, log.clone(), 1);
        let mut after = node(1, false, log.clone(), 4);
        after.writer = 1;
        after.floor = 3;
        assert!(matched(&check(1, &before, &after, false, None)));
        let mut stale = log;
        stale[3] = truncate(1, 7, 3);
        let before = node(1, false, stale.clone(), 1);
        let mut wrong = node(1, false, stale, 4);
        wrong.writer = 1;
        wrong.floor = 3;
        assert!(matches!(
            check(1, &before, &wrong, false, None).0,
            Verdict::Diverged(_)
        ));
    }

    /// A leader's fence must replace the token in force at its tail.
    #[test]
    fn set_leader_replaces_the_tail_token() {
        let before = node(1, true, vec![noop(1), fence(1, 1, 0)], 2);
        let before = ParosNode {
            writer: 1,
            ..before
        };
        let mut good = before.clone();
        good.log.push(fence(1, 2, 1));
        assert!(matched(&check(0, &before, &good, false, None)));
        let mut bad = before.clone();
        bad.log.push(fence(1, 3, 0));
        assert!(matches!(
            check(0, &before, &bad, false, None).0,
            Verdict::Diverged(_)
        ));
    }

    /// A jump is `TrimmedTo`: the jumper holds nothing below the point, commits to it, takes the
    /// sealed writer and the sealed floor (clamped to the point); another floor diverges.
    #[test]
    fn jump_is_trimmed_to() {
        let before = node(2, false, vec![noop(1), write(1)], 1);
        let sent = Sent {
            point: 20,
            writer: 4,
            floor: 25,
            base_term: 2,
        };
        let after = ParosNode {
            term: 2,
            leader: false,
            log: vec![ParosRecord::UNSEEN; 19],
            start: 20,
            commit: 19,
            writer: 4,
            floor: 20,
            sterm: 2,
        };
        let verdict = check(1, &before, &after, false, Some(sent));
        assert!(matched(&verdict), "{verdict:?}");
        assert_eq!(verdict.1, vec![Abstraction::SealedFloor]);
        let short = ParosNode {
            floor: 19,
            ..after.clone()
        };
        assert!(matches!(
            check(1, &before, &short, false, Some(sent)).0,
            Verdict::Diverged(_)
        ));
    }
}
