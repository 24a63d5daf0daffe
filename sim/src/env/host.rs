//! One node's host: the real broker, its disk and its outbox, carrying out the broker's outputs
//! the one way both schedulers share (the seeded world and the scenario driver).
//!
//! `step` feeds one input to the broker and turns its outputs into `Effect`s, in order: every
//! persist is applied to the disk at once (the `Outbox` checks the order), every send or reply that
//! follows an unsynced persist waits in the outbox, the others come out as packets to transmit;
//! history events come out as they were observed, followed by a `NodeState` sample when the node's
//! state changed. `finish_sync` completes the disk's sync in flight, releases what it covers and
//! tells the broker (`Input::Persisted`). `crash` keeps what was synced (and what the caller's draw
//! keeps of the rest); `start(true)` (or `start_from`, with what the caller read back) rebuilds the
//! broker from what the disk recovered. What differs between the schedulers (when a sync completes,
//! which message arrives next, what a crash keeps) stays with them.

use crate::env::disk::Disk;
use crate::env::network::{Address, Packet, Payload};
use crate::env::tape::Schedule;
use felix_audits::witness::Witness;
use felix_core::broker::{
    AppendResult, Broker, BrokerConfig, Delivery, Duty, Input, Message, Outbox, Output,
};
use felix_core::history::Event;
use felix_core::storage::Recovered;
use felix_core::NodeId;
use std::fmt;

/// When a disk sync starts: the one choice about storage the schedulers make differently.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SyncStart {
    /// As soon as an op is applied and no sync is in flight (the seeded world: a sync thread
    /// that is always at work; the scheduler completes it after a drawn latency).
    Eager,
    /// Only when the scheduler asks (`sync_all`: the scenario's `sync` verb).
    OnDemand,
}

/// What the scheduler carries out after a step, in this order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Effect {
    /// A sync started (`SyncStart::Eager`): the scheduler completes it with `finish_sync`.
    SyncStarted,
    /// Put this packet on the network.
    Transmit(Packet),
    /// Append this event to the run's history.
    Observe(Event),
    /// The node began a new election period: the scheduler draws a fresh election timeout and
    /// feeds it back with `step(Input::ElectionTimeout { ticks })` before the next tick.
    DrawElectionTimeout,
}

/// A host could not carry out its broker's outputs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HostError {
    /// The disk refused an op, a sync or a recovery (a bug in the core or the store).
    Store { node: NodeId, what: String },
    /// The outbox held `held_max` deliveries waiting for one sync: a message storm.
    HeldFull { node: NodeId, held_max: usize },
    /// A restart read back what the disk never held (RecoveryFaithful, `detail` says what
    /// differs), and the core refused to start from it or the store could not read it at all: the
    /// node cannot start. The driver records it and keeps the node down for good.
    Unfaithful { node: NodeId, detail: String },
}

impl fmt::Display for HostError {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HostError::Store { node, what } => write!(formatter, "node {node}: {what}"),
            HostError::Unfaithful { node, detail } => {
                write!(formatter, "node {node}: unfaithful recovery: {detail}")
            }
            HostError::HeldFull { node, held_max } => write!(
                formatter,
                "node {node} holds {held_max} messages waiting for one sync: a message storm"
            ),
        }
    }
}

/// A broker (or `None` while crashed), its disk and its outbox.
pub struct Host {
    pub id: NodeId,
    pub config: BrokerConfig,
    pub broker: Option<Broker>,
    pub disk: Disk,
    sync_start: SyncStart,
    outbox: Outbox,
    /// The world's schedule, when it records one (the shrinker's final replay).
    schedule: Option<Schedule>,
    /// Buffers reused across steps.
    outputs: Vec<Output>,
    duties: Vec<Duty>,
    released: Vec<Delivery>,
    /// The durable promise and log and what the node's messages promised, for the PromiseDurable
    /// judge (`felix_audits::witness`, which the real node's event loop keeps as well).
    witness: Witness,
    /// A buffer reused for the witness's events.
    durable_events: Vec<Event>,
    /// A planted slip (tests only, `World::plant_ack_one_high`): every acknowledgement of appended
    /// records goes on the wire claiming one record more than the node matched, as an encoder
    /// off by one would send it. The witness sees the acknowledgement the node made.
    ack_one_high: bool,
}

impl Host {
    /// A node with an empty disk, not started yet.
    pub fn new(
        config: BrokerConfig,
        disk: Disk,
        held_max: usize,
        sync_start: SyncStart,
        schedule: Option<Schedule>,
    ) -> Host {
        Host {
            id: config.id,
            broker: None,
            config,
            disk,
            sync_start,
            outbox: Outbox::new(held_max),
            schedule,
            outputs: Vec::new(),
            duties: Vec::new(),
            released: Vec::new(),
            witness: Witness::default(),
            durable_events: Vec::new(),
            ack_one_high: false,
        }
    }

    /// Plants the slip `ack_one_high` (tests only).
    pub fn plant_ack_one_high(&mut self) {
        self.ack_one_high = true;
    }

    pub fn is_up(&self) -> bool {
        self.broker.is_some()
    }

    /// The highest persist id applied and not yet durable, if any.
    pub fn unsynced_through(&self) -> Option<u64> {
        self.outbox.unsynced_through()
    }

    /// Sends and replies waiting for a sync.
    pub fn held_len(&self) -> usize {
        self.outbox.held_len()
    }

    /// Feeds one input to the broker (nothing, while crashed) and carries out its outputs.
    pub fn step(&mut self, input: Input, effects: &mut Vec<Effect>) -> Result<(), HostError> {
        let Some(broker) = self.broker.as_mut() else {
            return Ok(());
        };
        // The shrinker's final replay records what each host was given (`world::Setup::schedule`).
        let noted = self.schedule.is_some().then(|| {
            (
                input.clone(),
                broker.term(),
                effects.len(),
                self.outbox.held_len(),
            )
        });
        // What a restart recovered is durable: recorded before anything the node sends.
        // (The fields, not `observe_durable`: the broker is borrowed.)
        self.witness
            .durable_changed(self.id, &mut self.durable_events);
        effects.extend(self.durable_events.drain(..).map(Effect::Observe));
        self.outputs.clear();
        let outputs = &mut self.outputs;
        crate::env::stopwatch::time(crate::env::stopwatch::Section::BrokerStep, || {
            broker.step(input, outputs)
        });
        self.witness.made(broker, &self.outputs);
        self.duties.clear();
        let carried = self.outbox.carry(self.outputs.drain(..), &mut self.duties);
        let mut duties = std::mem::take(&mut self.duties);
        for duty in duties.drain(..) {
            match duty {
                Duty::Persist { id, op } => {
                    // The disk numbers ops as the broker does (from 1 per incarnation), so a
                    // sync's coverage is a persist id.
                    let number = self.disk.apply(&op).map_err(|error| HostError::Store {
                        node: self.id,
                        what: format!("the store refused op {id}: {error}"),
                    })?;
                    assert_eq!(number, id, "persist ids are contiguous from 1");
                    self.witness.applied(number, &op);
                    self.start_sync(effects);
                }
                Duty::Deliver(delivery) => self.transmit(delivery, effects),
                Duty::Observe(event) => effects.push(Effect::Observe(event)),
                Duty::DrawElectionTimeout => effects.push(Effect::DrawElectionTimeout),
            }
        }
        self.duties = duties;
        // The terms along the log as the step left it (LogTermsMonotone): nothing, unless one
        // went down.
        if let Some(broker) = self.broker.as_ref() {
            self.witness
                .log_checked(self.id, broker, &mut self.durable_events);
            effects.extend(self.durable_events.drain(..).map(Effect::Observe));
        }
        if let Err(full) = carried {
            return Err(HostError::HeldFull {
                node: self.id,
                held_max: full.held_max,
            });
        }
        // The audits judge floors, leadership and promises from sampled states: one after every
        // step that changed them, after the step's own events.
        if let Some(event) = self.broker.as_ref().and_then(|b| self.outbox.sample(b)) {
            effects.push(Effect::Observe(event));
        }
        if let Some((input, term, before, held_before)) = noted {
            // A send held for a sync counts as sent: the sync releases it.
            let held = self.outbox.held_len() > held_before;
            self.note(input, term, &effects[before.min(effects.len())..], held);
        }
        Ok(())
    }

    /// Puts a delivery on the network, recording the promise and the acknowledgement it carries
    /// first (`felix_audits::witness`).
    fn transmit(&mut self, mut delivery: Delivery, effects: &mut Vec<Effect>) {
        if let Delivery::Send { to, message } = &delivery {
            self.witness
                .leaving(self.id, *to, message, &mut self.durable_events);
            effects.extend(self.durable_events.drain(..).map(Effect::Observe));
        }
        if self.ack_one_high {
            if let Delivery::Send {
                message:
                    Message::AppendReply {
                        result: AppendResult::Accepted { matched },
                        ..
                    },
                ..
            } = &mut delivery
            {
                if *matched > 0 {
                    *matched += 1;
                }
            }
        }
        effects.push(Effect::Transmit(packet(Address::Node(self.id), delivery)));
    }

    /// Records one input in the schedule being recorded (`tape::Step`), if any.
    /// `held`: the step held a send back for a sync.
    fn note(&self, input: Input, term_before: u64, effects: &[Effect], held: bool) {
        let to = self.id;
        let step = match input {
            Input::Message { from, message } => {
                crate::env::tape::Step::Message { from, to, message }
            }
            Input::Client {
                client, request, ..
            } => crate::env::tape::Step::Request {
                client,
                to,
                request,
            },
            Input::Tick => crate::env::tape::Step::Tick {
                node: to,
                campaigned: self.broker.as_ref().map_or(0, Broker::term) > term_before,
                sent: held
                    || effects
                        .iter()
                        .any(|effect| matches!(effect, Effect::Transmit(_))),
            },
            Input::ElectionTimeout { .. } | Input::Persisted { .. } => return,
        };
        if let Some(schedule) = &self.schedule {
            schedule.note(step);
        }
    }

    /// Completes the sync in flight: every op applied before it started is durable. Releases the
    /// deliveries it covers, then tells the broker. Returns how far the disk is durable.
    pub fn finish_sync(&mut self, effects: &mut Vec<Effect>) -> Result<u64, HostError> {
        if let Some(schedule) = &self.schedule {
            schedule.note(crate::env::tape::Step::Synced { node: self.id });
        }
        self.disk.finish_sync().map_err(|error| HostError::Store {
            node: self.id,
            what: format!("sync failed: {error}"),
        })?;
        let through = self.disk.synced();
        self.witness.synced(through);
        self.observe_durable(effects);
        self.released.clear();
        self.outbox.synced(through, &mut self.released);
        let mut released = std::mem::take(&mut self.released);
        for delivery in released.drain(..) {
            self.transmit(delivery, effects);
        }
        self.released = released;
        self.step(Input::Persisted { through }, effects)?;
        self.start_sync(effects);
        Ok(through)
    }

    /// Records the durable promise and log's changes since the last ones recorded.
    fn observe_durable(&mut self, effects: &mut Vec<Effect>) {
        self.witness
            .durable_changed(self.id, &mut self.durable_events);
        effects.extend(self.durable_events.drain(..).map(Effect::Observe));
    }

    /// Under `SyncStart::Eager`, starts a sync of what is pending unless one is in flight.
    fn start_sync(&mut self, effects: &mut Vec<Effect>) {
        if self.sync_start == SyncStart::Eager && self.disk.start_sync() {
            effects.push(Effect::SyncStarted);
        }
    }

    /// Makes everything applied durable now, in one sync (`SyncStart::OnDemand`), and tells the
    /// broker. Returns how far the disk is durable, or `None` when nothing was pending.
    pub fn sync_all(&mut self, effects: &mut Vec<Effect>) -> Result<Option<u64>, HostError> {
        assert_eq!(self.sync_start, SyncStart::OnDemand);
        if !self.is_up() || !self.disk.start_sync() {
            return Ok(None);
        }
        self.finish_sync(effects).map(Some)
    }

    /// The node's state now, changed or not (a boot, the end of a run); `None` while crashed.
    pub fn sample_always(&mut self) -> Option<Event> {
        let broker = self.broker.as_ref()?;
        Some(self.outbox.sample_always(broker))
    }

    /// A crash: the broker is gone, what the outbox held is lost, and the disk keeps what was
    /// synced plus what `crash_disk` decides of the rest.
    pub fn crash<T>(
        &mut self,
        crash_disk: impl FnOnce(&mut Disk) -> Result<T, felix_core::storage::StoreError>,
    ) -> Result<T, HostError> {
        self.broker = None;
        self.outbox.crash();
        self.witness.restarted();
        crash_disk(&mut self.disk).map_err(|error| HostError::Store {
            node: self.id,
            what: format!("the store refused a crash: {error}"),
        })
    }

    /// Starts the broker: fresh on an empty disk, or (`restart`) rebuilt from what the disk
    /// kept, as the next incarnation (`BrokerConfig::incarnation`). The outbox starts empty either
    /// way.
    pub fn start(&mut self, restart: bool) -> Result<(), HostError> {
        assert!(self.broker.is_none(), "only a node that is down starts");
        if restart {
            // No fault touched this disk: a store that cannot read back what a crash left broke
            // its contract.
            let recovered = self.disk.recover().map_err(|error| HostError::Unfaithful {
                node: self.id,
                detail: format!("its store could not read back what the crash left: {error}"),
            })?;
            return self.start_from(recovered, true);
        }
        self.outbox.crash();
        self.witness.restarted();
        // Every start is a new incarnation, a number this node was never given before.
        self.config.incarnation += 1;
        self.broker = Some(Broker::new(self.config.clone()));
        self.prime_sample();
        Ok(())
    }

    /// Starts the broker rebuilt from `recovered` (what the caller read back from the disk), as
    /// the next incarnation. The outbox starts empty. When `judged` (no drawn storage fault
    /// touched what was read back), the witness first holds `recovered` to what the disk held
    /// (RecoveryFaithful): a difference is recorded as `RecoveryUnfaithful` before the node's
    /// first event, and is an error if the core then refuses to start from it.
    pub fn start_from(&mut self, recovered: Recovered, judged: bool) -> Result<(), HostError> {
        assert!(self.broker.is_none(), "only a node that is down starts");
        let unfaithful = judged
            .then(|| self.witness.explain_recovery(&recovered).err())
            .flatten();
        self.outbox.crash();
        self.config.incarnation += 1;
        self.witness.recovered(&recovered);
        let broker = match Broker::from_recovered(self.config.clone(), recovered) {
            Ok(broker) => broker,
            Err(error) => {
                return Err(match unfaithful {
                    Some(detail) => HostError::Unfaithful {
                        node: self.id,
                        detail: format!("{detail}; the core refused to start from it: {error:?}"),
                    },
                    None => HostError::Store {
                        node: self.id,
                        what: format!("the core refused its own store: {error:?}"),
                    },
                })
            }
        };
        if let Some(detail) = unfaithful {
            self.durable_events.push(Event::RecoveryUnfaithful {
                node: self.id,
                detail,
            });
        }
        self.broker = Some(broker);
        self.prime_sample();
        Ok(())
    }

    /// What the last restart read back broke of LogTermsMonotone, when the broker could not start
    /// from it: the scheduler records these before it gives up on the node.
    pub fn recovered_events(&mut self) -> Vec<Event> {
        let mut events = Vec::new();
        self.witness.recovered_events(self.id, &mut events);
        events
    }

    /// The state the node starts from counts as sampled: the scheduler records it (with
    /// `sample_always`) where its history wants it.
    fn prime_sample(&mut self) {
        if let Some(broker) = self.broker.as_ref() {
            self.outbox.sample_always(broker);
        }
    }
}

fn packet(from: Address, delivery: Delivery) -> Packet {
    match delivery {
        Delivery::Send { to, message } => Packet {
            from,
            to: Address::Node(to),
            payload: Payload::Message(message),
        },
        Delivery::Reply {
            client,
            request_id,
            reply,
        } => Packet {
            from,
            to: Address::Client(client),
            payload: Payload::Reply { request_id, reply },
        },
    }
}
