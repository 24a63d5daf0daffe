//! The node's event loop: the real-IO twin of the simulator's host (`sim/src/env/host.rs`).
//!
//! One thread owns the broker, the file store, the core `Outbox` and the event log; nothing else
//! touches them. Each turn of the loop:
//! 1. waits for the first input (a socket frame, or the next tick of the monotonic clock), then
//!    takes whatever else is already waiting, up to `BATCH_MAX` inputs;
//! 2. feeds each to `Broker::step` and carries the outputs through the `Outbox`: a `Persist` is
//!    applied to the store (queued, not yet written), a delivery the outbox releases goes out
//!    at once (after the buffered events are written), a held one waits; `Observe` goes to the
//!    event log; `DrawElectionTimeout` is answered with a draw from the OS-seeded generator;
//! 3. **group commit**: one `FileStore::sync` (write + fsync) covers every op the whole batch
//!    applied; then `Outbox::synced` releases the sends and replies that waited for it (persist
//!    before send, ack after durable) and the broker hears `Persisted { through }`.
//!
//! So many appends share one fsync: while the loop is inside an fsync, new requests queue on
//! the inbound channel and the next turn takes them all. Nothing is acknowledged before the fsync
//! that covers it, because acknowledgements are the outbox's held deliveries.
//!
//! **Power-loss mode** (`unsynced_window`, `felix serve --unsynced-window-ms N`): the group
//! commit waits up to N ms after the first unsynced op before it writes and fsyncs, while the
//! loop goes on taking inputs. The file store writes nothing before its `sync` (its `apply` only
//! queues), so the unsynced suffix lives only in this process for that window, and a kill -9
//! loses it as a power loss loses what the disk had not made durable. Every rule on, nothing
//! depends on it (sends and replies wait for the sync), so the mode only adds latency; with
//! acknowledgements before the sync (the AckBeforeSync twin) a kill in the window loses
//! acknowledged records, which a kill -9 of a node that syncs at once almost never does: a
//! process's writes survive it in the page cache.
//!
//! **Power cut** (`Frame::PowerCut`, a failpoint the nemesis sends right before a kill): the
//! loop stops taking inputs, nothing more leaves the process (not even the messages and replies
//! already queued for the sockets: `net::POWER_CUT`), and it answers how many unsynced ops the
//! kill will lose; with a tear,
//! `LogStore::crash` first writes the unsynced ops before the last append and that append up to
//! the middle of one of its entries, a torn frame the next recovery must cut.

use super::event_log::EventLog;
use super::net::{offer, ConnId, Inbound};
use crate::frame::{Frame, NodeStatus, PowerCut};
use felix_audits::witness::Witness;
use felix_core::api::RequestId;
use felix_core::broker::{Broker, Delivery, Duty, Input, Message, Outbox, Output};
use felix_core::record::{NodeId, Offset};
use felix_core::storage::{LogStore, StorageOp};
use felix_store::FileStore;
use rand::rngs::StdRng;
use rand::RngExt;
use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Inputs taken in one turn (one fsync) at most.
pub const BATCH_MAX: usize = 4096;
/// Sync rounds in one turn at most (a sync's `Persisted` can cause more persists, e.g. a commit
/// that compacts); the rest waits for the next turn.
const SYNC_ROUNDS_MAX: usize = 16;
/// The longest slow-disk delay a failpoint may set.
pub const SYNC_DELAY_MAX: Duration = Duration::from_secs(1);
/// Ops a power-loss window holds at most: past it the group commit syncs at once (the store
/// refuses more than `UNSYNCED_OPS_MAX` between syncs).
const WINDOW_OPS_MAX: usize = 1 << 16;
/// Deliveries the outbox may hold waiting for one sync.
pub const HELD_MAX: usize = 1 << 16;

/// A failure that stops the node: the store or the event log refused, or the outbox overflowed.
#[derive(Debug)]
pub struct LoopError(pub String);

/// The loop's state.
pub struct NodeLoop {
    pub id: NodeId,
    pub broker: Broker,
    pub store: FileStore,
    pub events: EventLog,
    outbox: Outbox,
    peers: BTreeMap<NodeId, SyncSender<Message>>,
    clients: BTreeMap<ConnId, SyncSender<Frame>>,
    rng: StdRng,
    /// Election timeouts are drawn from `election_ticks .. 2 * election_ticks`.
    election_ticks: u64,
    tick: Duration,
    /// Failpoints accepted (`--failpoints`), and the slow-disk delay before every fsync.
    pub failpoints: bool,
    sync_delay: Duration,
    /// Power-loss mode: how long the group commit may hold unsynced ops in the process (zero:
    /// it syncs at the end of every turn).
    pub unsynced_window: Duration,
    /// When the held ops are due to be written and fsynced (power-loss mode).
    sync_due: Option<Instant>,
    /// Ops applied since the last sync.
    unsynced_ops: usize,
    /// The appends among them: (index among the unsynced ops, entries, first offset).
    unsynced_appends: Vec<(usize, usize, Offset)>,
    /// A power cut came (`Frame::PowerCut`): the node takes no more inputs until it is killed.
    cut: bool,
    inputs: VecDeque<Input>,
    outputs: Vec<Output>,
    duties: Vec<Duty>,
    released: Vec<Delivery>,
    /// The durable promise and log and what the node's messages promised, recorded for the
    /// PromiseDurable judge as the simulator's host records them (`felix_audits::witness`); a
    /// restart's `serve` tells it what the store recovered.
    pub witness: Witness,
    /// A buffer for the witness's events.
    witnessed: Vec<felix_core::history::Event>,
}

impl NodeLoop {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        id: NodeId,
        broker: Broker,
        store: FileStore,
        events: EventLog,
        peers: BTreeMap<NodeId, SyncSender<Message>>,
        election_ticks: u64,
        tick: Duration,
    ) -> NodeLoop {
        assert!(election_ticks > 0);
        NodeLoop {
            id,
            broker,
            store,
            events,
            outbox: Outbox::new(HELD_MAX),
            peers,
            clients: BTreeMap::new(),
            rng: rand::make_rng::<StdRng>(),
            election_ticks,
            tick,
            failpoints: false,
            sync_delay: Duration::ZERO,
            unsynced_window: Duration::ZERO,
            sync_due: None,
            unsynced_ops: 0,
            unsynced_appends: Vec::new(),
            cut: false,
            inputs: VecDeque::new(),
            outputs: Vec::new(),
            duties: Vec::new(),
            released: Vec::new(),
            witness: Witness::default(),
            witnessed: Vec::new(),
        }
    }

    fn draw_election_timeout(&mut self) -> u64 {
        self.rng
            .random_range(self.election_ticks..2 * self.election_ticks)
    }

    /// Boots the broker: its first election timeout, and the state it starts from in the log.
    pub fn boot(&mut self) -> Result<(), LoopError> {
        let event = self.outbox.sample_always(&self.broker);
        self.record(event)?;
        let ticks = self.draw_election_timeout();
        self.feed(Input::ElectionTimeout { ticks })?;
        self.sync()?;
        self.flush()
    }

    /// Runs until `stop` is set or every input source is gone.
    pub fn run(
        &mut self,
        inbound: &Receiver<Inbound>,
        stop: &Arc<AtomicBool>,
    ) -> Result<(), LoopError> {
        let mut next_tick = Instant::now() + self.tick;
        while !stop.load(Ordering::SeqCst) {
            let now = Instant::now();
            let wake = self.sync_due.map_or(next_tick, |due| due.min(next_tick));
            let wait = wake
                .saturating_duration_since(now)
                .min(Duration::from_millis(50));
            let mut taken = 0;
            match inbound.recv_timeout(wait) {
                Ok(input) => {
                    self.take(input)?;
                    taken += 1;
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => break,
            }
            while taken < BATCH_MAX && !self.cut {
                let Ok(input) = inbound.try_recv() else { break };
                self.take(input)?;
                taken += 1;
            }
            if self.cut {
                return self.hold_still(stop);
            }
            let now = Instant::now();
            if now >= next_tick {
                // One tick per turn, however late: a node thawed from SIGSTOP or starved of
                // CPU does not fire a burst of ticks.
                self.feed(Input::Tick)?;
                next_tick += self.tick;
                if next_tick < now {
                    next_tick = now + self.tick;
                }
            }
            self.group_commit()?;
            self.flush()?;
        }
        // Shutdown: everything applied is made durable and every event written.
        self.sync()?;
        self.flush()
    }

    /// After a power cut: nothing more happens (no input, no sync, no tick) until the kill; a
    /// SIGTERM ends the node without a sync (its store is in the state the cut left).
    fn hold_still(&mut self, stop: &Arc<AtomicBool>) -> Result<(), LoopError> {
        while !stop.load(Ordering::SeqCst) {
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(())
    }

    /// `Frame::PowerCut`: what the kill that follows will lose, and with `tear` the store's own
    /// crash (`LogStore::crash`) writes the unsynced ops before the last append whole and tears
    /// that append inside an entry; then the node holds still (`cut`).
    fn power_cut(&mut self, tear: Option<u32>) -> PowerCut {
        // First of all, nothing more leaves the process (`net::POWER_CUT`).
        super::net::POWER_CUT.store(true, Ordering::SeqCst);
        self.cut = true;
        let unsynced_ops = self.unsynced_ops as u64;
        let mut cut = PowerCut {
            node: self.id,
            unsynced_ops,
            ops_lost: unsynced_ops,
            torn: None,
        };
        let last = self.unsynced_appends.last().copied();
        if let (Some(draw), Some((index, entries, first))) = (tear, last) {
            let kept = draw as usize % entries;
            match self.store.crash(index, kept) {
                Ok(()) => {
                    cut.ops_lost = unsynced_ops - index as u64;
                    cut.torn = Some(first + kept as u64);
                }
                Err(error) => eprintln!("node {}: the torn write failed: {error}", self.id),
            }
        }
        cut
    }

    /// Handles one input from the sockets.
    fn take(&mut self, inbound: Inbound) -> Result<(), LoopError> {
        match inbound {
            Inbound::Peer { from, message } => self.feed(Input::Message { from, message }),
            Inbound::Request {
                conn,
                request_id,
                request,
            } => self.feed(Input::Client {
                client: conn,
                request_id,
                request,
            }),
            Inbound::Status { conn, request_id } => self.status(conn, request_id),
            Inbound::Failpoint {
                conn,
                request_id,
                sync_delay_millis,
            } => {
                if !self.failpoints {
                    // Not a test node: the request is refused by closing the connection.
                    eprintln!(
                        "node {}: a failpoint was asked for, but failpoints are off",
                        self.id
                    );
                    self.clients.remove(&conn);
                    return Ok(());
                }
                self.sync_delay =
                    Duration::from_millis(u64::from(sync_delay_millis)).min(SYNC_DELAY_MAX);
                self.status(conn, request_id)
            }
            Inbound::PowerCut {
                conn,
                request_id,
                tear,
            } => {
                if !self.failpoints {
                    eprintln!(
                        "node {}: a power cut was asked for, but failpoints are off",
                        self.id
                    );
                    self.clients.remove(&conn);
                    return Ok(());
                }
                let cut = self.power_cut(tear);
                // What the node observed up to the cut is written (a kill keeps it).
                self.flush()?;
                if let Some(writer) = self.clients.get(&conn) {
                    offer(writer, Frame::PowerCutDone { request_id, cut });
                }
                Ok(())
            }
            Inbound::Opened { conn, writer } => {
                self.clients.insert(conn, writer);
                Ok(())
            }
            Inbound::Closed { conn } => {
                self.clients.remove(&conn);
                Ok(())
            }
        }
    }

    /// The node's state, sampled into the event log and sent to the asker.
    fn status(&mut self, conn: ConnId, request_id: RequestId) -> Result<(), LoopError> {
        let state = self.outbox.sample_always(&self.broker);
        self.record(state.clone())?;
        self.flush()?;
        let status = NodeStatus {
            node: self.id,
            replica: self.broker.is_replica(),
            state,
            leader_hint: self.broker.leader_hint(),
            tail: self.broker.tail(),
            durable_last: self.broker.durable_last(),
        };
        if let Some(writer) = self.clients.get(&conn) {
            offer(writer, Frame::Status { request_id, status });
        }
        Ok(())
    }

    /// Feeds `input` (and the election timeouts it asks for) to the broker, carrying out the
    /// outputs through the outbox.
    pub fn feed(&mut self, input: Input) -> Result<(), LoopError> {
        self.inputs.push_back(input);
        while let Some(input) = self.inputs.pop_front() {
            // What a restart recovered is durable: recorded before anything the node sends.
            self.record_durable()?;
            self.outputs.clear();
            self.broker.step(input, &mut self.outputs);
            self.witness.made(&self.broker, &self.outputs);
            self.duties.clear();
            let carried = self.outbox.carry(self.outputs.drain(..), &mut self.duties);
            let mut duties = std::mem::take(&mut self.duties);
            for duty in duties.drain(..) {
                match duty {
                    Duty::Persist { id, op } => {
                        self.store.apply(&op).map_err(|error| {
                            LoopError(format!("the store refused op {id}: {error}"))
                        })?;
                        // The store numbers nothing; the broker's persist ids (from 1 per
                        // incarnation) are what `Persisted { through }` covers.
                        self.witness.applied(id, &op);
                        if let StorageOp::Append(entries) = &op {
                            if let Some(first) = entries.first() {
                                let at = (self.unsynced_ops, entries.len(), first.offset);
                                self.unsynced_appends.push(at);
                            }
                        }
                        self.unsynced_ops += 1;
                    }
                    Duty::Deliver(delivery) => {
                        // The events observed before this delivery (and what it promises) are
                        // written before it leaves.
                        self.witness_leaving(&delivery)?;
                        self.flush()?;
                        self.deliver(delivery);
                    }
                    Duty::Observe(event) => self.record(event)?,
                    Duty::DrawElectionTimeout => {
                        let ticks = self.draw_election_timeout();
                        self.inputs.push_front(Input::ElectionTimeout { ticks });
                    }
                }
            }
            self.duties = duties;
            // The terms along the log as the step left it (LogTermsMonotone): nothing, unless
            // one went down.
            self.witness
                .log_checked(self.id, &self.broker, &mut self.witnessed);
            self.record_witnessed()?;
            if let Err(full) = carried {
                return Err(LoopError(format!(
                    "{} sends and replies waited for one sync: a message storm",
                    full.held_max
                )));
            }
            if let Some(event) = self.outbox.sample(&self.broker) {
                self.record(event)?;
            }
        }
        Ok(())
    }

    /// The end of a turn: the group commit, at once or (power-loss mode) once the oldest
    /// unsynced op has waited `unsynced_window`.
    fn group_commit(&mut self) -> Result<(), LoopError> {
        if self.unsynced_window.is_zero() {
            return self.sync();
        }
        if self.outbox.unsynced_through().is_none() {
            self.sync_due = None;
            return Ok(());
        }
        let now = Instant::now();
        let due = *self.sync_due.get_or_insert(now + self.unsynced_window);
        if now < due && self.unsynced_ops < WINDOW_OPS_MAX {
            return Ok(());
        }
        self.sync()?;
        self.sync_due = None;
        Ok(())
    }

    /// Group commit: one fsync for every op applied so far, then the deliveries it releases.
    pub fn sync(&mut self) -> Result<(), LoopError> {
        for _ in 0..SYNC_ROUNDS_MAX {
            let Some(through) = self.outbox.unsynced_through() else {
                return Ok(());
            };
            // What the node observed happened whether or not this fsync completes (a walk may
            // have committed records counted before their sync, under the AckBeforeSync twin):
            // written before the fsync, so a kill during it cannot hide it.
            self.flush()?;
            if !self.sync_delay.is_zero() {
                // The slow-disk failpoint: the fsync takes this much longer.
                std::thread::sleep(self.sync_delay);
            }
            self.store
                .sync()
                .map_err(|error| LoopError(format!("the store could not sync: {error}")))?;
            self.unsynced_ops = 0;
            self.unsynced_appends.clear();
            self.witness.synced(through);
            self.record_durable()?;
            self.released.clear();
            let mut released = std::mem::take(&mut self.released);
            self.outbox.synced(through, &mut released);
            for delivery in &released {
                self.witness_leaving(delivery)?;
            }
            self.flush()?;
            for delivery in released.drain(..) {
                self.deliver(delivery);
            }
            self.released = released;
            self.feed(Input::Persisted { through })?;
        }
        Ok(())
    }

    fn deliver(&mut self, delivery: Delivery) {
        match delivery {
            Delivery::Send { to, message } => {
                if let Some(link) = self.peers.get(&to) {
                    offer(link, message);
                }
            }
            Delivery::Reply {
                client,
                request_id,
                reply,
            } => {
                if let Some(writer) = self.clients.get(&client) {
                    offer(
                        writer,
                        Frame::Reply {
                            request_id,
                            node: self.id,
                            reply,
                        },
                    );
                }
            }
        }
    }

    /// Records the durable promise and log's changes since the last ones recorded.
    fn record_durable(&mut self) -> Result<(), LoopError> {
        self.witness.durable_changed(self.id, &mut self.witnessed);
        self.record_witnessed()
    }

    /// Records the promise and the acknowledgement `delivery` carries, if it is a message.
    fn witness_leaving(&mut self, delivery: &Delivery) -> Result<(), LoopError> {
        if let Delivery::Send { to, message } = delivery {
            self.witness
                .leaving(self.id, *to, message, &mut self.witnessed);
        }
        self.record_witnessed()
    }

    fn record_witnessed(&mut self) -> Result<(), LoopError> {
        let mut witnessed = std::mem::take(&mut self.witnessed);
        for event in witnessed.drain(..) {
            self.record(event)?;
        }
        self.witnessed = witnessed;
        Ok(())
    }

    fn record(&mut self, event: felix_core::history::Event) -> Result<(), LoopError> {
        self.events
            .record(event)
            .map_err(|error| LoopError(format!("the event log refused a line: {error}")))
    }

    fn flush(&mut self) -> Result<(), LoopError> {
        self.events
            .flush()
            .map_err(|error| LoopError(format!("the event log could not be written: {error}")))
    }
}
