//! The broker: a Raft-shaped replicated journal node, sans-IO (voter or non-voting replica).
//!
//! Shape (etcd-io/raft's `Step`, openraft's Engine → Commands): the driver feeds one `Input` to
//! `Broker::step`, which pushes `Output`s into a caller-provided Vec; `io.rs` documents the
//! driver's duties (carry outputs out in order; persist before send; ack after durable).
//!
//! Protocol, in short:
//! - **Promise**: term and vote are persisted (`StorageOp::HardState`) before any message that
//!   depends on them is sent; `PromiseChanged` is observed once durable. Terms never go back.
//! - **Election** by majority of the voters, on an election timeout the driver randomizes
//!   (`BrokerConfig::election_timeout_ticks`, `Input::ElectionTimeout`), drawn afresh for every
//!   election: a campaign asks for the next draw (`Output::DrawElectionTimeout`), so voters never
//!   keep timing out in lockstep. No pre-vote: a rejoining node with a higher term forces an
//!   election, which the journal's rules do not need to prevent. The winner appends a
//!   `Noop` for its term. Replicas never campaign, never vote, never count for commit.
//! - **Deposed leader**: a leader never steps down on its own; until it hears a newer term it keeps
//!   sequencing writes into its own log. They never commit (no majority in its term) and are never
//!   acknowledged.
//! - **Sequencing**: the leader evaluates client appends, trims and fences with
//!   `Journal::sequence`, in order, against its own log. Refusals are answered at once.
//! - **Replication**: log matching with truncation of a conflicting uncommitted suffix; commit by a
//!   majority in the current term, counting the leader only through its *durable* log and followers
//!   only through what they acknowledged after persisting (rule `ack_after_sync`). `Appended` is
//!   answered when the walk reaches the record (`TruncateRefused` when the walk refused it).
//! - **Flow control** (`in_flight.rs`): at most `appends_in_flight_max` appends carrying records
//!   unanswered per peer (no bound by default); an acceptance frees the appends it covers, a
//!   rejection all of them, and a heartbeat, sent one past them all, frees them whatever was lost.
//! - **TrimmedTo**: a peer whose next needed offset is below the leader's first held offset gets
//!   `TrimmedTo { point, state }`; the receiver jumps (`Journal::jump`: it persists a conflicting
//!   suffix's `TruncateSuffix`, then the `TrimmedTo`) and never touches its term or vote (rule
//!   `jump_keeps_term`). A point at or below its floor or first held offset is ignored.
//! - **Reads** (`read_index.rs`) are served by any node or replica from its committed prefix, but
//!   only once its walk reaches a read index the leader confirmed by a majority round in its term
//!   (Raft's ReadIndex; a new leader only once its term's noop is committed), so no read is served
//!   below a trim acknowledged before it was sent. A node that cannot get an index answers the
//!   retriable `NoReadIndex`. Cost: one round trip at the leader, two at a follower or replica.
//!   Below the node's own floor (`CursorTooOld`) or in a range it jumped over (`NotHeld`) the answer
//!   needs no index and is given at once.
//! - Client requests the node cannot sequence: `NotLeader { hint }`. A leader whose
//!   `pending_acks_max` is reached drops the request unanswered (its outcome is unknown to the
//!   client, exactly as if the network had dropped it).

mod config;
mod in_flight;
mod io;
mod message;
mod outbox;
mod read_index;

pub use config::BrokerConfig;
pub use in_flight::AppendsInFlight;
pub use io::{Input, Output, PersistId};
pub use message::{AppendResult, Ask, Message};
pub use outbox::{Delivery, Duty, HeldFull, Outbox};

use crate::api::{ClientId, Reply, Request, RequestId};
use crate::history::Event;
use crate::journal::{Journal, Jump, RecoverError, Sequenced, WalkEvent};
use crate::record::{Entry, Headers, NodeId, Offset, Term, Token};
use crate::storage::{HardState, Recovered, SealedState, StorageOp};
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// What a node is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Role {
    Follower,
    Candidate,
    Leader,
    /// A non-voting replica: follows the log and serves reads.
    Replica,
}

/// The leader's view of one peer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Progress {
    /// The next offset to send (optimistic: advanced when sent).
    pub next: Offset,
    /// The highest offset known to match and be durable on the peer.
    pub matched: Offset,
    /// The appends carrying records sent and not yet answered (kept under a bound only).
    pub in_flight: AppendsInFlight,
}

/// A persist not yet reported durable, and what it makes durable.
#[derive(Clone, Copy, Debug)]
struct Unsynced {
    id: PersistId,
    /// The log's last offset once this op is applied.
    last_after: Offset,
    /// The first offset this op dropped from the end of the log, if it did.
    truncated_from: Option<Offset>,
    /// The promise this op persists, if it does.
    hard_state: Option<HardState>,
}

/// One broker or replica.
#[derive(Clone, Debug)]
pub struct Broker {
    config: BrokerConfig,
    journal: Journal,
    /// The promise as last persisted-or-about-to-be (every change is emitted as a Persist first).
    hard_state: HardState,
    role: Role,
    leader_hint: Option<NodeId>,
    election_elapsed_ticks: u64,
    heartbeat_elapsed_ticks: u64,
    election_timeout_ticks: u64,
    /// Votes granted to this candidate in its term.
    votes: BTreeSet<NodeId>,
    /// The leader's view of every other voter and replica.
    progress: BTreeMap<NodeId, Progress>,
    /// The leader's appended, unanswered client requests, by offset.
    pending: BTreeMap<Offset, (ClientId, RequestId)>,
    next_persist_id: PersistId,
    unsynced: VecDeque<Unsynced>,
    /// The highest offset of this node's log known durable (and still the same record).
    durable_last: Offset,
    walk_events: Vec<WalkEvent>,
    /// Client reads and followers' questions waiting for a read index (`read_index.rs`).
    read_index: read_index::ReadIndex,
}

impl Broker {
    /// A fresh node with an empty log and promise (term 0, no vote).
    pub fn new(config: BrokerConfig) -> Broker {
        let journal = Journal::new(config.journal);
        Broker::assemble(config, journal, HardState::default())
    }

    /// Rebuilds a node from what its store recovered (`Recovered`'s fields). The node restarts as a
    /// follower (or replica) with its promise and log; the committed index is learned again.
    pub fn recover(
        config: BrokerConfig,
        hard_state: HardState,
        sealed: Option<SealedState>,
        start: Offset,
        entries: Vec<Entry>,
    ) -> Result<Broker, RecoverError> {
        let journal = Journal::recover(config.journal, sealed, start, entries)?;
        Ok(Broker::assemble(config, journal, hard_state))
    }

    /// `Broker::recover` from a `LogStore::recover` result as a whole (its `tail_cut` is the
    /// driver's to log).
    pub fn from_recovered(
        config: BrokerConfig,
        recovered: Recovered,
    ) -> Result<Broker, RecoverError> {
        let Recovered {
            hard_state,
            sealed,
            start,
            entries,
            ..
        } = recovered;
        Broker::recover(config, hard_state, sealed, start, entries)
    }

    fn assemble(config: BrokerConfig, journal: Journal, hard_state: HardState) -> Broker {
        let is_voter = config.voters.contains(&config.id);
        let is_replica = config.replicas.contains(&config.id);
        assert!(
            is_voter != is_replica,
            "a node is either a voter or a replica"
        );
        assert!(!config.voters.is_empty());
        assert!(config.heartbeat_ticks > 0);
        assert!(config.election_timeout_ticks > 0);
        assert!(config.append_entries_max > 0);
        assert_ne!(
            config.appends_in_flight_max,
            Some(0),
            "a bound of 0 sends nothing"
        );
        let durable_last = journal.last_offset();
        Broker {
            role: if is_voter {
                Role::Follower
            } else {
                Role::Replica
            },
            election_timeout_ticks: config.election_timeout_ticks,
            config,
            journal,
            hard_state,
            leader_hint: None,
            election_elapsed_ticks: 0,
            heartbeat_elapsed_ticks: 0,
            votes: BTreeSet::new(),
            progress: BTreeMap::new(),
            pending: BTreeMap::new(),
            next_persist_id: 1,
            unsynced: VecDeque::new(),
            durable_last,
            walk_events: Vec::new(),
            read_index: read_index::ReadIndex::default(),
        }
    }

    // ---- read-only accessors (audits, describe, the simulator) ----

    pub fn id(&self) -> NodeId {
        self.config.id
    }

    pub fn config(&self) -> &BrokerConfig {
        &self.config
    }

    pub fn role(&self) -> Role {
        self.role
    }

    pub fn is_leader(&self) -> bool {
        self.role == Role::Leader
    }

    pub fn is_replica(&self) -> bool {
        self.role == Role::Replica
    }

    pub fn term(&self) -> Term {
        self.hard_state.term
    }

    pub fn vote(&self) -> Option<NodeId> {
        self.hard_state.vote
    }

    pub fn hard_state(&self) -> HardState {
        self.hard_state
    }

    /// The leader this node last heard from (itself when leading).
    pub fn leader_hint(&self) -> Option<NodeId> {
        self.leader_hint
    }

    pub fn journal(&self) -> &Journal {
        &self.journal
    }

    pub fn floor(&self) -> Offset {
        self.journal.floor()
    }

    pub fn floor_tag(&self) -> Option<&Headers> {
        self.journal.floor_tag()
    }

    pub fn committed(&self) -> Offset {
        self.journal.committed()
    }

    pub fn readable_start(&self) -> Offset {
        self.journal.readable_start()
    }

    pub fn first_held(&self) -> Offset {
        self.journal.first_held()
    }

    pub fn tail(&self) -> Offset {
        self.journal.tail()
    }

    pub fn writer(&self) -> Token {
        self.journal.writer()
    }

    /// Every held record (committed or not).
    pub fn entries(&self) -> impl Iterator<Item = &Entry> {
        self.journal.entries()
    }

    /// The leader's view of its peers (empty unless leading).
    pub fn progress(&self) -> &BTreeMap<NodeId, Progress> {
        &self.progress
    }

    /// The highest offset of this node's log known durable.
    pub fn durable_last(&self) -> Offset {
        self.durable_last
    }

    /// The node's state as a history event (for the driver to sample).
    pub fn node_state(&self) -> Event {
        Event::NodeState {
            node: self.config.id,
            term: self.hard_state.term,
            vote: self.hard_state.vote,
            leader: self.is_leader(),
            floor: self.journal.floor(),
            committed: self.journal.committed(),
            readable_start: self.journal.readable_start(),
            floor_tag: self.journal.floor_tag().cloned(),
        }
    }

    // ---- the step ----

    /// Takes one input; pushes the commands it produces into `out`, in the order the driver must
    /// carry them out.
    pub fn step(&mut self, input: Input, out: &mut Vec<Output>) {
        let term_before = self.hard_state.term;
        let floor_before = self.journal.floor();
        let committed_before = self.journal.committed();
        match input {
            Input::Tick => self.on_tick(out),
            Input::ElectionTimeout { ticks } => {
                assert!(ticks > 0, "an election timeout is at least one tick");
                self.election_timeout_ticks = ticks;
            }
            Input::Message { from, message } => self.on_message(from, message, out),
            Input::Client {
                client,
                request_id,
                request,
            } => self.on_client(client, request_id, request, out),
            Input::Persisted { through } => self.on_persisted(through, out),
        }
        self.drive_reads(out);
        if self.config.journal.rules.jump_keeps_term {
            assert!(
                self.hard_state.term >= term_before,
                "a term never decreases"
            );
        }
        assert!(
            self.journal.floor() >= floor_before,
            "a floor never decreases"
        );
        assert!(
            self.journal.committed() >= committed_before,
            "the committed index never decreases"
        );
        assert!(self.journal.committed() <= self.journal.last_offset());
        assert!(
            self.unsynced.len() <= self.config.unsynced_persists_max,
            "the driver must sync"
        );
        assert!(self.pending.len() <= self.config.pending_acks_max);
        assert!(self.read_index.waiting() <= 2 * self.config.pending_reads_max);
        if self.role != Role::Leader {
            assert!(
                self.read_index.remote_waiting() == 0,
                "only a leader holds questions"
            );
        }
    }

    /// Convenience for tests and simple drivers: one step, its outputs in a new Vec.
    pub fn step_collect(&mut self, input: Input) -> Vec<Output> {
        let mut out = Vec::new();
        self.step(input, &mut out);
        out
    }

    fn on_tick(&mut self, out: &mut Vec<Output>) {
        self.age_reads();
        match self.role {
            Role::Leader => {
                self.heartbeat_elapsed_ticks += 1;
                if self.heartbeat_elapsed_ticks >= self.config.heartbeat_ticks {
                    self.heartbeat_elapsed_ticks = 0;
                    self.broadcast_append(out);
                }
            }
            Role::Follower | Role::Candidate => {
                self.election_elapsed_ticks += 1;
                if self.election_elapsed_ticks >= self.election_timeout_ticks {
                    self.campaign(out);
                }
            }
            Role::Replica => {}
        }
    }

    // ---- persistence bookkeeping ----

    fn persist(&mut self, op: StorageOp, out: &mut Vec<Output>) {
        let id = self.next_persist_id;
        self.next_persist_id += 1;
        let truncated_from = match &op {
            StorageOp::TruncateSuffix { from } => Some(*from),
            StorageOp::TrimmedTo { point, .. } => Some(*point),
            _ => None,
        };
        let hard_state = match &op {
            StorageOp::HardState(hard_state) => Some(*hard_state),
            _ => None,
        };
        if let Some(from) = truncated_from {
            // Whatever was durable at or above `from` is no longer this log's record.
            self.durable_last = self.durable_last.min(from - 1);
        }
        self.unsynced.push_back(Unsynced {
            id,
            last_after: self.journal.last_offset(),
            truncated_from,
            hard_state,
        });
        out.push(Output::Persist { id, op });
    }

    fn persist_hard_state(&mut self, hard_state: HardState, out: &mut Vec<Output>) {
        if let Some(vote) = self.hard_state.vote {
            if hard_state.term == self.hard_state.term && self.config.journal.rules.jump_keeps_term
            {
                assert_eq!(
                    hard_state.vote,
                    Some(vote),
                    "a vote in a term is never changed"
                );
            }
        }
        self.hard_state = hard_state;
        self.persist(StorageOp::HardState(hard_state), out);
    }

    fn on_persisted(&mut self, through: PersistId, out: &mut Vec<Output>) {
        assert!(
            through < self.next_persist_id,
            "only issued persists can be durable"
        );
        let mut durable: Option<Unsynced> = None;
        while self
            .unsynced
            .front()
            .is_some_and(|unsynced| unsynced.id <= through)
        {
            if let Some(unsynced) = self.unsynced.pop_front() {
                if let Some(hard_state) = unsynced.hard_state {
                    out.push(Output::Observe(Event::PromiseChanged {
                        node: self.config.id,
                        term: hard_state.term,
                        vote: hard_state.vote,
                    }));
                }
                durable = Some(unsynced);
            }
        }
        let Some(durable) = durable else { return };
        // The durable log is the log after op `durable.id`, minus what later (unsynced) ops truncate.
        let mut durable_last = durable.last_after;
        for later in &self.unsynced {
            if let Some(from) = later.truncated_from {
                durable_last = durable_last.min(from - 1);
            }
        }
        self.durable_last = self
            .durable_last
            .max(durable_last)
            .min(self.journal.last_offset());
        if self.role == Role::Leader {
            self.advance_commit(out);
        }
    }

    // ---- elections ----

    fn majority(&self) -> usize {
        self.config.voters.len() / 2 + 1
    }

    fn campaign(&mut self, out: &mut Vec<Output>) {
        assert!(self.role == Role::Follower || self.role == Role::Candidate);
        let term = self.hard_state.term + 1;
        self.role = Role::Candidate;
        self.leader_hint = None;
        self.election_elapsed_ticks = 0;
        // A new election period: its timeout is drawn afresh by the driver.
        out.push(Output::DrawElectionTimeout);
        self.votes.clear();
        self.votes.insert(self.config.id);
        self.persist_hard_state(
            HardState {
                term,
                vote: Some(self.config.id),
            },
            out,
        );
        if self.votes.len() >= self.majority() {
            self.become_leader(out);
            return;
        }
        let message = Message::RequestVote {
            term,
            last_offset: self.journal.last_offset(),
            last_term: self.journal.last_term(),
        };
        for index in 0..self.config.voters.len() {
            let to = self.config.voters[index];
            if to != self.config.id {
                out.push(Output::Send {
                    to,
                    message: message.clone(),
                });
            }
        }
    }

    fn become_leader(&mut self, out: &mut Vec<Output>) {
        assert_eq!(self.role, Role::Candidate);
        assert_eq!(self.hard_state.vote, Some(self.config.id));
        self.role = Role::Leader;
        self.leader_hint = Some(self.config.id);
        self.heartbeat_elapsed_ticks = 0;
        self.pending.clear();
        self.progress.clear();
        self.read_index.became_leader();
        let next = self.journal.tail();
        for &peer in self.config.voters.iter().chain(self.config.replicas.iter()) {
            if peer != self.config.id {
                let in_flight = AppendsInFlight::default();
                let progress = Progress {
                    next,
                    matched: 0,
                    in_flight,
                };
                self.progress.insert(peer, progress);
            }
        }
        out.push(Output::Observe(Event::BecameLeader {
            node: self.config.id,
            term: self.hard_state.term,
        }));
        let op = self.journal.append_noop(self.hard_state.term);
        assert_eq!(self.journal.last_term(), self.hard_state.term);
        self.persist(op, out);
        self.broadcast_append(out);
        self.advance_commit(out);
    }

    /// Adopts a newer term seen in a message: follower (or replica) with no vote.
    fn adopt_term(&mut self, term: Term, out: &mut Vec<Output>) {
        assert!(term > self.hard_state.term);
        if self.role != Role::Replica {
            self.role = Role::Follower;
        }
        self.leader_hint = None;
        self.votes.clear();
        self.progress.clear();
        // A deposed leader's unanswered requests stay unanswered: their outcome is unknown.
        self.pending.clear();
        self.persist_hard_state(HardState { term, vote: None }, out);
    }

    // ---- messages ----

    fn on_message(&mut self, from: NodeId, message: Message, out: &mut Vec<Output>) {
        if let Some(term) = message.term() {
            if term > self.hard_state.term {
                self.adopt_term(term, out);
            }
        }
        match message {
            Message::RequestVote {
                term,
                last_offset,
                last_term,
            } => self.on_request_vote(from, term, last_offset, last_term, out),
            Message::Vote { term, granted } => self.on_vote(from, term, granted, out),
            Message::AppendEntries {
                term,
                prev_offset,
                prev_term,
                entries,
                committed,
            } => {
                self.on_append_entries(from, term, prev_offset, prev_term, entries, committed, out)
            }
            Message::AppendReply { term, result } => self.on_append_reply(from, term, result, out),
            Message::TrimmedTo { point, state } => self.on_trimmed_to(from, point, state, out),
            Message::ReadIndex { ask } => self.on_read_index(from, ask, out),
            Message::ReadIndexReply { ask, index } => self.on_read_index_reply(ask, index),
            Message::ReadProbe { term, round } => self.on_read_probe(from, term, round, out),
            Message::ReadProbeAck { term, round } => self.on_read_probe_ack(from, term, round),
        }
    }

    fn on_request_vote(
        &mut self,
        from: NodeId,
        term: Term,
        last_offset: Offset,
        last_term: Term,
        out: &mut Vec<Output>,
    ) {
        let current = self.hard_state.term;
        let up_to_date =
            (last_term, last_offset) >= (self.journal.last_term(), self.journal.last_offset());
        let free = self.hard_state.vote.is_none() || self.hard_state.vote == Some(from);
        let granted = term == current && self.role == Role::Follower && free && up_to_date;
        let vote = Output::Send {
            to: from,
            message: Message::Vote {
                term: current,
                granted,
            },
        };
        // VoteBeforePersist twin: the vote goes out ahead of the persist that makes it durable.
        let early = !self.config.journal.rules.vote_after_persist;
        if early {
            out.push(vote.clone());
        }
        if granted {
            self.election_elapsed_ticks = 0;
            if self.hard_state.vote != Some(from) {
                self.persist_hard_state(
                    HardState {
                        term: current,
                        vote: Some(from),
                    },
                    out,
                );
            }
        }
        if !early {
            out.push(vote);
        }
    }

    fn on_vote(&mut self, from: NodeId, term: Term, granted: bool, out: &mut Vec<Output>) {
        // StaleVotes twin: a vote granted in an earlier term counts too.
        let stale = term != self.hard_state.term && self.config.journal.rules.votes_of_current_term;
        if self.role != Role::Candidate || stale || !granted {
            return;
        }
        if !self.config.voters.contains(&from) {
            return;
        }
        self.votes.insert(from);
        if self.votes.len() >= self.majority() {
            self.become_leader(out);
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn on_append_entries(
        &mut self,
        from: NodeId,
        term: Term,
        prev_offset: Offset,
        prev_term: Term,
        entries: Vec<Entry>,
        leader_committed: Offset,
        out: &mut Vec<Output>,
    ) {
        let current = self.hard_state.term;
        if term < current {
            // A stale leader: tell it the newer term (this is how a deposed leader learns).
            self.reject_append(from, out);
            return;
        }
        assert_eq!(term, current);
        if self.role == Role::Candidate || self.role == Role::Leader {
            // Another node won this term (a leader here would mean two in one term: only a twin).
            self.step_down_in_term();
        }
        self.leader_hint = Some(from);
        self.election_elapsed_ticks = 0;
        let mut ops = Vec::new();
        let floor_before = self.journal.floor();
        let result = match self
            .journal
            .append_replicated(prev_offset, prev_term, entries, &mut ops)
        {
            Ok(matched) => AppendResult::Accepted { matched },
            Err(next) => AppendResult::Rejected { next },
        };
        let reply = Output::Send {
            to: from,
            message: Message::AppendReply {
                term: current,
                result,
            },
        };
        let ack_after_sync = self.config.journal.rules.ack_after_sync;
        if !ack_after_sync {
            // AckBeforeSync twin: the acknowledgement goes out before the records are durable.
            out.push(reply.clone());
        }
        for op in ops {
            self.persist(op, out);
        }
        self.observe_floor_at_append(floor_before, out);
        if let AppendResult::Accepted { matched } = result {
            let committed = leader_committed
                .min(matched)
                .min(self.journal.last_offset());
            self.commit_to(committed, out);
        }
        if ack_after_sync {
            out.push(reply);
        }
    }

    fn on_append_reply(
        &mut self,
        from: NodeId,
        term: Term,
        result: AppendResult,
        out: &mut Vec<Output>,
    ) {
        if self.role != Role::Leader || term != self.hard_state.term {
            return;
        }
        let tail = self.journal.tail();
        let Some(progress) = self.progress.get_mut(&from) else {
            return;
        };
        match result {
            AppendResult::Accepted { matched } => {
                let matched = matched.min(tail - 1);
                progress.matched = progress.matched.max(matched);
                progress.next = progress.next.max(progress.matched + 1);
                progress.in_flight.accepted(progress.matched);
                let behind = progress.next < tail;
                self.advance_commit(out);
                // LazyCatchUp twin: the next batch waits for a heartbeat or a client write.
                if behind && self.config.journal.rules.catch_up_at_once {
                    self.send_append(from, false, out);
                }
            }
            AppendResult::Rejected { next } => {
                progress.next = next.max(progress.matched + 1).clamp(1, tail);
                progress.in_flight.rejected();
                self.send_append(from, false, out);
            }
        }
    }

    /// Becomes a follower in the current term (another node leads it).
    fn step_down_in_term(&mut self) {
        assert!(self.role == Role::Candidate || self.role == Role::Leader);
        self.role = Role::Follower;
        self.progress.clear();
        self.pending.clear();
    }

    /// Answers `from` that this node cannot take what it sent: its current term, and the tail
    /// to resume from.
    fn reject_append(&self, from: NodeId, out: &mut Vec<Output>) {
        out.push(Output::Send {
            to: from,
            message: Message::AppendReply {
                term: self.hard_state.term,
                result: AppendResult::Rejected {
                    next: self.journal.tail(),
                },
            },
        });
    }

    fn on_trimmed_to(
        &mut self,
        from: NodeId,
        point: Offset,
        state: SealedState,
        out: &mut Vec<Output>,
    ) {
        if self.role == Role::Leader {
            return; // only a leader sends these; a leader never jumps
        }
        let promise_before = self.hard_state;
        self.election_elapsed_ticks = 0;
        let floor_before = self.journal.floor();
        let base_term = state.base_term;
        match self.journal.jump(point, state) {
            Jump::Ignored => self.reject_append(from, out),
            Jump::Jumped { ops, .. } => {
                for op in ops {
                    self.persist(op, out);
                }
                if !self.config.journal.rules.jump_keeps_term {
                    // JumpResetsTerm twin: the jump overwrites the promise with the sealed term.
                    self.persist_hard_state(
                        HardState {
                            term: base_term,
                            vote: None,
                        },
                        out,
                    );
                }
                out.push(Output::Observe(Event::Jumped {
                    node: self.config.id,
                    point,
                    replica: self.role == Role::Replica,
                }));
                if self.journal.floor() > floor_before {
                    out.push(Output::Observe(Event::FloorApplied {
                        node: self.config.id,
                        floor: self.journal.floor(),
                        trim: None,
                    }));
                }
                if self.config.journal.rules.jump_keeps_term {
                    assert_eq!(
                        self.hard_state, promise_before,
                        "a jump never touches the promise"
                    );
                }
                assert!(self.journal.committed() >= point - 1);
                assert!(self.journal.first_held() == point);
                let result = AppendResult::Accepted { matched: point - 1 };
                let term = self.hard_state.term;
                out.push(Output::Send {
                    to: from,
                    message: Message::AppendReply { term, result },
                });
            }
        }
    }

    // ---- replication (leader) ----

    fn broadcast_append(&mut self, out: &mut Vec<Output>) {
        let peers: Vec<NodeId> = self.progress.keys().copied().collect();
        for peer in peers {
            self.send_append(peer, true, out);
        }
    }

    /// Sends `peer` what it needs next: records from its `next`, or `TrimmedTo` when that is below
    /// this node's first held offset. At the in-flight bound (`in_flight.rs`) no records go: a
    /// `heartbeat` goes empty at `next`, and any other send is left out.
    fn send_append(&mut self, peer: NodeId, heartbeat: bool, out: &mut Vec<Output>) {
        assert_eq!(self.role, Role::Leader);
        let bound = self.config.appends_in_flight_max;
        let Some(progress) = self.progress.get(&peer) else {
            return;
        };
        let held_back = progress.in_flight.full(bound);
        let first_held = self.journal.first_held();
        if progress.next < first_held {
            let (point, state) = self.journal.trim_point();
            out.push(Output::Send {
                to: peer,
                message: Message::TrimmedTo { point, state },
            });
            out.push(Output::Observe(Event::TrimmedToSent {
                node: self.config.id,
                to: peer,
                point,
            }));
            if let Some(progress) = self.progress.get_mut(&peer) {
                progress.next = point;
            }
            return;
        }
        if held_back && !heartbeat {
            return;
        }
        let next = progress.next.min(self.journal.tail());
        let records_max = if held_back {
            0
        } else {
            self.config.append_entries_max
        };
        let prev_offset = next - 1;
        let prev_term = self
            .journal
            .term_at(prev_offset)
            .expect("the leader knows the term before its next record");
        let entries: Vec<Entry> = self
            .journal
            .entries_from(next, records_max)
            .cloned()
            .collect();
        let sent_through = prev_offset + entries.len() as u64;
        if let Some(progress) = self.progress.get_mut(&peer) {
            progress.next = sent_through + 1;
            if !entries.is_empty() {
                progress.in_flight.sent(sent_through, bound);
            }
            assert!(progress
                .in_flight
                .newest()
                .is_none_or(|last| last < progress.next));
        }
        let message = Message::AppendEntries {
            term: self.hard_state.term,
            prev_offset,
            prev_term,
            entries,
            committed: self.journal.committed(),
        };
        out.push(Output::Send { to: peer, message });
    }

    /// Commits the highest offset of the current term held (and durable) by a majority of voters.
    fn advance_commit(&mut self, out: &mut Vec<Output>) {
        assert_eq!(self.role, Role::Leader);
        let own = if self.config.journal.rules.ack_after_sync {
            self.durable_last
        } else {
            self.journal.last_offset() // AckBeforeSync twin: the leader counts itself before sync
        };
        let matched = self.config.voters.iter().filter_map(|&voter| {
            if voter == self.config.id {
                Some(own)
            } else {
                self.progress.get(&voter).map(|progress| progress.matched)
            }
        });
        let Some(candidate) = nth_largest(matched, self.majority()) else {
            return;
        };
        if candidate <= self.journal.committed() {
            return;
        }
        if self.journal.term_at(candidate) != Some(self.hard_state.term) {
            return; // only records of the current term commit by counting
        }
        self.commit_to(candidate, out);
    }

    /// Walks the committed log to `committed`, observing what happened, answering the leader's
    /// pending requests, and compacting what the rules allow.
    fn commit_to(&mut self, committed: Offset, out: &mut Vec<Output>) {
        if committed <= self.journal.committed() {
            return;
        }
        let node = self.config.id;
        let mut events = std::mem::take(&mut self.walk_events);
        events.clear();
        self.journal.commit_to(committed, &mut events);
        let mut floor_moved = false;
        for (index, event) in events.iter().enumerate() {
            match *event {
                WalkEvent::Committed { offset } => {
                    if self.config.observe_commits {
                        if let Some(entry) = self.journal.entry(offset) {
                            out.push(Output::Observe(Event::Committed {
                                node,
                                entry: entry.clone(),
                            }));
                        }
                    }
                    // The walk reports a refusal right after the record it refused.
                    let refused = events.get(index + 1).and_then(|other| match other {
                        WalkEvent::TruncateRefused {
                            offset: refused,
                            current,
                        } if *refused == offset => Some(*current),
                        _ => None,
                    });
                    if let Some((client, request_id)) = self.pending.remove(&offset) {
                        let reply = match refused {
                            Some(current) => Reply::TruncateRefused { current },
                            None => Reply::Appended {
                                offset,
                                tail: offset + 1,
                            },
                        };
                        out.push(Output::Reply {
                            client,
                            request_id,
                            reply,
                        });
                    }
                }
                WalkEvent::FloorApplied { floor, trim } => {
                    floor_moved = true;
                    out.push(Output::Observe(Event::FloorApplied {
                        node,
                        floor,
                        trim: Some(trim),
                    }));
                }
                WalkEvent::TruncateRefused { offset, current } => {
                    out.push(Output::Observe(Event::TruncateRefused {
                        node,
                        offset,
                        current,
                    }));
                }
            }
        }
        self.walk_events = events;
        if floor_moved || self.config.journal.rules.retention_deletes() {
            self.compact(out);
        }
    }

    fn compact(&mut self, out: &mut Vec<Output>) {
        if let Some(compaction) = self.journal.compact() {
            self.persist(compaction.op, out);
            out.push(Output::Observe(Event::SegmentsDeleted {
                node: self.config.id,
                below: compaction.below,
                readable_start: compaction.readable_start,
                retention: compaction.retention,
            }));
        }
    }

    /// FloorPastCommit twin: a floor applied when its trim was appended is observed there.
    fn observe_floor_at_append(&mut self, floor_before: Offset, out: &mut Vec<Output>) {
        if self.journal.floor() > floor_before {
            out.push(Output::Observe(Event::FloorApplied {
                node: self.config.id,
                floor: self.journal.floor(),
                trim: self.journal.fold().floor_trim,
            }));
        }
    }

    // ---- clients ----

    fn on_client(
        &mut self,
        client: ClientId,
        request_id: RequestId,
        request: Request,
        out: &mut Vec<Output>,
    ) {
        if let Request::Read { from, max_records } = request {
            self.on_read(client, request_id, from, max_records, out);
            return;
        }
        if self.role != Role::Leader {
            let reply = Reply::NotLeader {
                hint: self.leader_hint,
            };
            out.push(Output::Reply {
                client,
                request_id,
                reply,
            });
            return;
        }
        if self.pending.len() >= self.config.pending_acks_max {
            return; // dropped unanswered: the client's outcome is unknown, as with a lost message
        }
        let floor_before = self.journal.floor();
        match self.journal.sequence(self.hard_state.term, request) {
            Sequenced::Answered(reply) => out.push(Output::Reply {
                client,
                request_id,
                reply,
            }),
            Sequenced::Appended { offset, op } => {
                assert!(!self.pending.contains_key(&offset));
                self.pending.insert(offset, (client, request_id));
                self.persist(op, out);
                self.observe_floor_at_append(floor_before, out);
                let caught_up: Vec<NodeId> = self
                    .progress
                    .iter()
                    .filter(|(_, progress)| progress.next == offset)
                    .map(|(peer, _)| *peer)
                    .collect();
                for peer in caught_up {
                    self.send_append(peer, false, out);
                }
                self.advance_commit(out);
            }
        }
    }
}

/// Values a count keeps on the stack (`nth_largest`); a larger cluster spills to the heap.
const STACK_VALUES: usize = 16;

/// The `rank`-th largest of `values` (1 = the largest), or `None` when there are fewer than
/// `rank`. The commit count and the read-index count run on most steps of a leader: sorting in
/// a stack buffer spares an allocation each time (a tenth of a simulator run's allocations).
pub(crate) fn nth_largest(values: impl Iterator<Item = u64>, rank: usize) -> Option<u64> {
    assert!(rank >= 1);
    let mut stack = [0u64; STACK_VALUES];
    let mut len = 0;
    let mut spilled: Vec<u64> = Vec::new();
    for value in values {
        if len < STACK_VALUES {
            stack[len] = value;
            len += 1;
        } else {
            if spilled.is_empty() {
                spilled.extend_from_slice(&stack);
            }
            spilled.push(value);
        }
    }
    let sorted = if spilled.is_empty() {
        &mut stack[..len]
    } else {
        &mut spilled[..]
    };
    sorted.sort_unstable_by(|a, b| b.cmp(a));
    sorted.get(rank - 1).copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `nth_largest` answers what sorting a Vec answered, on the stack and past it (spilled).
    #[test]
    fn nth_largest_matches_a_sort() {
        for len in 0..(3 * STACK_VALUES) {
            let values: Vec<u64> = (0..len as u64).map(|i| (i * 7919) % 13).collect();
            let mut sorted = values.clone();
            sorted.sort_unstable_by(|a, b| b.cmp(a));
            for rank in 1..len + 2 {
                assert_eq!(
                    nth_largest(values.iter().copied(), rank),
                    sorted.get(rank - 1).copied(),
                    "len {len} rank {rank}"
                );
            }
        }
    }
}
