//! The history of a run: what the audits judge.
//!
//! Brokers and replicas emit node events as `Observe` commands; the driver records them, and adds
//! what clients sent and were answered (`Requested`, `Replied`: acks, reads, refusals), the lease
//! grants, what clients concluded (retirements, gaps, folds, checkpoints), its own events about the
//! nodes (crashes, restarts, corrupt stores, sampled node states, what each store holds durably,
//! promises and acknowledgements as they leave a node, what its witness finds) and the run's
//! phases. Audits (`felix-audits`) are pure functions over a `Vec<Event>`. An operation whose
//! outcome its client never learned is *unknown*, never failed: there is simply no `Replied` event
//! for it.

use crate::api::{ClientId, Reply, Request};
use crate::record::{Entry, Headers, NodeId, Offset, Term, Token};
use serde::{Deserialize, Serialize};

/// One thing that happened, in the order it happened.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Event {
    // ---- node events (emitted by brokers and replicas) ----
    /// The node's durable promise changed (after it was persisted).
    PromiseChanged {
        node: NodeId,
        term: Term,
        vote: Option<NodeId>,
    },
    /// The node became leader of `term`.
    BecameLeader {
        node: NodeId,
        term: Term,
    },
    /// The node's walk over its committed prefix reached `entry`.
    Committed {
        node: NodeId,
        entry: Entry,
    },
    /// The node applied a floor; `trim` is the offset of the trim record that set it, `None` for a
    /// floor taken from a TrimmedTo jump.
    FloorApplied {
        node: NodeId,
        floor: Offset,
        trim: Option<Offset>,
    },
    /// A committed trim was refused in place by the fence check.
    TruncateRefused {
        node: NodeId,
        offset: Offset,
        current: Token,
    },
    /// Whole segments below `below` were deleted; the node can now serve from `readable_start`.
    SegmentsDeleted {
        node: NodeId,
        below: Offset,
        readable_start: Offset,
        retention: bool,
    },
    /// The node answered a catch-up below its floor with TrimmedTo.
    TrimmedToSent {
        node: NodeId,
        to: NodeId,
        point: Offset,
    },
    /// The node jumped to a peer's trim point.
    Jumped {
        node: NodeId,
        point: Offset,
        replica: bool,
    },
    /// The node's state as the driver sees it after a step (sampled by the driver where it needs to).
    NodeState {
        node: NodeId,
        term: Term,
        vote: Option<NodeId>,
        leader: bool,
        floor: Offset,
        committed: Offset,
        readable_start: Offset,
        floor_tag: Option<Headers>,
    },
    /// What the node's store holds durably of its promise changed: the term and vote a crash now
    /// would recover (recorded by the driver from its own store as a sync completes, or at the
    /// first step after a restart whose recovery kept more; the node's `PromiseChanged` is the
    /// node's word, this is the disk's).
    DurablePromise {
        node: NodeId,
        term: Term,
        vote: Option<NodeId>,
    },
    /// A message carrying a promise left the node (recorded by the driver as the message leaves,
    /// whatever held it back): the term it carries, and the candidate `vote` it grants its vote
    /// to, if it does. The driver records a promise it has not recorded before for this node (a
    /// higher term, another grant); a repeat is covered by the first, since what a store holds
    /// durably of a promise never goes back.
    PromiseSent {
        node: NodeId,
        to: NodeId,
        term: Term,
        vote: Option<NodeId>,
    },
    /// What the node's store holds durably of its log changed: the durable log now ends at offset
    /// `last`, whose record has term `term` (recorded by the driver from its own store as a sync
    /// completes, or at the first step after a restart whose recovery kept more). Records below
    /// `last` are the ones earlier events described, up to the previous end; when `last` is above
    /// that end, every record after it through `last` has term `term` (the driver records one event
    /// per run of one term). A log cut back (a synced truncation) ends at the offset it was cut to;
    /// `last` 0 is an empty log.
    DurableLog {
        node: NodeId,
        last: Offset,
        term: Term,
    },
    /// An acknowledgement of appended records left the node (recorded by the driver as the message
    /// leaves, whatever held it back): it tells node `to`, in `term`, that the node's log matches
    /// through offset `matched`; `matched_term` is the term of the record at `matched` in the log
    /// the node acknowledged (when the acknowledgement was made), `None` when the node held it
    /// only folded below its first record. The driver records an acknowledgement in a term above the
    /// last one recorded for the node, or of an offset above the last one recorded in that term;
    /// a repeat is covered by the first, since within one term the node's durable log never loses
    /// what it matched of its leader's.
    AckSent {
        node: NodeId,
        to: NodeId,
        term: Term,
        matched: Offset,
        matched_term: Option<Term>,
    },
    Crashed {
        node: NodeId,
    },
    Restarted {
        node: NodeId,
    },
    /// A restart found the node's store corrupt (in the store's words: the file, the byte, what
    /// is wrong): the node may have acknowledged or voted on what it lost, so it stays down for
    /// good. Recorded by the driver instead of `Restarted`; no event of the node follows it.
    StoreCorrupt {
        node: NodeId,
        reason: String,
    },

    // ---- client events (recorded by the driver) ----
    /// A client sent a request.
    Requested {
        client: ClientId,
        node: NodeId,
        request: Request,
    },
    /// A client received a reply (acks, refusals, reads).
    Replied {
        client: ClientId,
        node: NodeId,
        request: Request,
        reply: Reply,
    },
    /// The lease service granted a lease.
    LeaseGranted {
        client: ClientId,
        epoch: u64,
    },
    /// A holder retired: it saw a newer epoch in a write it read or in a CursorTooOld tag.
    HolderRetired {
        client: ClientId,
        epoch: u64,
        newer_epoch: u64,
        by_tag: bool,
    },
    /// A reader moved past a range it can no longer read and reported it.
    Gap {
        client: ClientId,
        from: Offset,
        to: Offset,
    },
    /// A folding client folded the record at `offset` to a state with this digest.
    Folded {
        client: ClientId,
        offset: Offset,
        digest: u64,
    },
    /// A folder restored its state from the checkpoint run ending at `end`.
    CheckpointRestored {
        client: ClientId,
        begin: Offset,
        end: Offset,
    },
    /// A folder that already held the whole prefix met the complete checkpoint run `begin..=end`
    /// and compared it with its own state (then reset its fold on it). `digest !=
    /// checkpoint_digest` is a FoldAgreement violation.
    CheckpointCompared {
        client: ClientId,
        begin: Offset,
        end: Offset,
        digest: u64,
        checkpoint_digest: u64,
    },
    /// A checkpoint owner's run `begin..=end` is fully acknowledged (its `End` is the commit point).
    CheckpointWritten {
        client: ClientId,
        begin: Offset,
        end: Offset,
    },
    /// A checkpoint owner learned that the writer fence in force is `current`, not its `token`,
    /// and stopped (a refused fence, append, or truncate).
    OwnerStopped {
        client: ClientId,
        token: Token,
        current: Token,
    },

    // ---- run markers (recorded by the driver) ----
    /// The run entered `phase`. The driver records `Phase::Liveness` when the faults heal and
    /// `Phase::End` when the liveness deadline passes, right after a `NodeState` of every live
    /// node; the Convergence audit judges the run at `Phase::End` (a history without it is not
    /// judged for liveness).
    PhaseChanged {
        phase: Phase,
    },
    // ---- a node event last, so that the variants before it keep their index (the trace hash
    // feeds a variant's index) ----
    /// A restart read back from the node's store a state that its disk never held durably plus
    /// a prefix of the ops it took since its last sync (the store's contract; the witness of the
    /// driver that saw every op says what differs: RecoveryFaithful). Recorded by the driver
    /// before the node starts from it.
    RecoveryUnfaithful {
        node: NodeId,
        detail: String,
    },
    /// Along the node's log, from its sealed base on, a record's term fell below the one before
    /// it: the record at `offset` has `term`, below `before`, the term of the record at
    /// `offset - 1` (of the sealed base, when `base`). Recorded by the driver's witness right
    /// after the step that left the log so, or, when `restart`, from what a restart read back
    /// from the node's store (LogTermsMonotone). Last, like `RecoveryUnfaithful`, so that no
    /// earlier variant's index moves.
    LogTermsDecreased {
        node: NodeId,
        offset: Offset,
        term: Term,
        before: Term,
        base: bool,
        restart: bool,
    },
}

impl Event {
    /// The node this event is about: the node that did it, that the driver did it to, or, for a
    /// client's `Requested` and `Replied`, the node the client talked to. Every variant says
    /// whether it names a node (no catch-all arm), so a new one must say too.
    pub fn node(&self) -> Option<NodeId> {
        match self {
            Event::PromiseChanged { node, .. }
            | Event::BecameLeader { node, .. }
            | Event::Committed { node, .. }
            | Event::FloorApplied { node, .. }
            | Event::TruncateRefused { node, .. }
            | Event::SegmentsDeleted { node, .. }
            | Event::TrimmedToSent { node, .. }
            | Event::Jumped { node, .. }
            | Event::NodeState { node, .. }
            | Event::DurablePromise { node, .. }
            | Event::PromiseSent { node, .. }
            | Event::DurableLog { node, .. }
            | Event::AckSent { node, .. }
            | Event::Crashed { node }
            | Event::Restarted { node }
            | Event::StoreCorrupt { node, .. }
            | Event::RecoveryUnfaithful { node, .. }
            | Event::LogTermsDecreased { node, .. }
            | Event::Requested { node, .. }
            | Event::Replied { node, .. } => Some(*node),
            Event::LeaseGranted { .. }
            | Event::HolderRetired { .. }
            | Event::Gap { .. }
            | Event::Folded { .. }
            | Event::CheckpointRestored { .. }
            | Event::CheckpointCompared { .. }
            | Event::CheckpointWritten { .. }
            | Event::OwnerStopped { .. }
            | Event::PhaseChanged { .. } => None,
        }
    }

    /// The other node a node's event names: the one a message it recorded was sent to
    /// (`TrimmedToSent`, `PromiseSent`, `AckSent`); `None` for every other event.
    pub fn peer(&self) -> Option<NodeId> {
        match self {
            Event::TrimmedToSent { to, .. }
            | Event::PromiseSent { to, .. }
            | Event::AckSent { to, .. } => Some(*to),
            _ => None,
        }
    }
}

/// The phases of a simulated run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Phase {
    /// Faults are on; only safety is judged.
    Safety,
    /// Faults have healed; the cluster must converge before the deadline.
    Liveness,
    /// The liveness deadline passed: every live node must have reached the committed prefix.
    End,
}
