//! The world of one run: the real core's brokers, replicas and clients on simulated time.
//!
//! A single-threaded loop pops the next event (message delivery, broker tick, sync completion,
//! client wake-up, timeout, fault, repair, phase change) and carries out what the core returns:
//! `Persist` ops go to the node's disk in order, and every `Send`/`Reply` that follows a persist
//! waits until a sync covers it (persist before send); `Observe` events go to the history. The
//! safety phase injects faults drawn by the seed; then everything heals and the liveness phase
//! must converge before its deadline.
//!
//! Clients are the core's own state machines, one per client slot at a time:
//! - felixd processes get a new `Holder` with every lease grant. A holder renews on its own
//!   (skewed, drifting) clock with a round trip to the lease service, and learns that it lost the
//!   lease only from a failed renewal, so a frozen or slow holder keeps writing with a stale epoch
//!   until the tail fence stops it. Lease moves are faults (told or not) or expiries on the
//!   service's clock (a frozen holder is never told).
//! - paros owners take the writer fence in turn (`Fence { new, old }`, `old` the last committed
//!   fence), fold, checkpoint and truncate; every truncate is clamped below the cursor of every
//!   client still folding (the shared trim fence). A stale owner (the fence moved on) is the one
//!   that sends arbitrary truncates: refused in place, unless `UnfencedTruncate`.
//! - readers and folders read on their own schedule; some folders join late and must restore.
//!
//! Faults (safety phase): message drop, duplication, long delays (reordering), partitions
//! (isolate a node, split, one-way cut, cut a client off), clogging, node crash and restart with
//! the disk model, client pauses, lease moves without telling. A livelock or message storm ends the
//! run with a budget finding instead of hanging.
//!
//! Simplifications, on purpose: the lease service is an oracle reached by a round trip that is
//! never lost; brokers never pause (a clog stands in for it).

use crate::clock::Clock;
use crate::disk::Disk;
use crate::knobs::{Knobs, Workload};
use crate::lease::LeaseService;
use crate::network::{Address, Network};
use crate::node::{self, Node};
use crate::queue::{EventQueue, Time};
use crate::rng::{Component, Stream};
use crate::trace::{Recorder, SimEvent};
use felix_core::api::{ClientId, Reply, Request, RequestId};
use felix_core::broker::{Message, Output};
use felix_core::client::checkpoint::OwnerOp;
use felix_core::client::{
    Client, Folder, Holder, HolderConfig, HolderOp, HolderStatus, Owner, OwnerConfig, OwnerStatus,
    Reader, Route,
};
use felix_core::history::{Event, Phase};
use felix_core::storage::SegmentLayout;
use felix_core::{Command, NodeId, Rules, Token};
use std::collections::{BTreeMap, VecDeque};

mod buggify;

/// The most events one run may process: a run that needs more is a livelock (a bug).
pub const EVENTS_MAX: u64 = 1_000_000;
/// The most events pending at once.
const PENDING_MAX: usize = 1_000_000;
/// Messages a node may hold back waiting for a sync.
const HELD_MAX: usize = 20_000;

/// What travels on the network.
#[derive(Clone, Debug)]
enum Payload {
    Peer(Message),
    Request { id: RequestId, request: Request },
    Reply { id: RequestId, reply: Reply },
}

/// One scheduled event.
#[derive(Clone, Debug)]
enum Ev {
    /// Boxed so that every event stays small: the heap moves events on every push and pop.
    Deliver {
        from: Address,
        to: Address,
        payload: Box<Payload>,
    },
    Tick {
        node: usize,
        incarnation: u64,
    },
    SyncDone {
        node: usize,
        incarnation: u64,
    },
    ClientWake {
        client: usize,
    },
    ClientTimeout {
        client: usize,
        id: RequestId,
        generation: u64,
    },
    /// The lease service's answer to a holder's renewal of `epoch`.
    RenewReply {
        client: usize,
        epoch: u64,
    },
    ClientJoin {
        client: usize,
    },
    Fault,
    RepairPartitions,
    Restart {
        node: usize,
    },
    Resume {
        client: usize,
    },
    LeaseCheck,
    Heal,
    SettleCheck,
    End,
    /// A BUGGIFY site fired (`world/buggify.rs`).
    Buggify(buggify::Act),
}

/// A message waiting for a sync (persist before send).
struct Held {
    barrier: u64,
    to: Address,
    payload: Payload,
}

struct NodeSlot {
    id: NodeId,
    node: Option<Node>,
    disk: Disk,
    clock: Clock,
    timeouts: Stream,
    incarnation: u64,
    /// The highest persist id applied in this incarnation.
    persist_last: u64,
    /// Every persist id up to this one is durable.
    durable_through: u64,
    held: VecDeque<Held>,
}

enum Role {
    /// A felixd process: holds a `Holder` while it believes it holds the lease.
    Felixd {
        holder: Option<Holder>,
        renew_at_local: Time,
    },
    /// A paros owner process: an `Owner` once it took the fence.
    Owner {
        owner: Option<Owner>,
    },
    Reader(Reader),
    Folder(Folder),
}

struct InFlight {
    id: RequestId,
    request: Request,
    node: NodeId,
    generation: u64,
}

struct ClientSlot {
    id: ClientId,
    role: Role,
    joined: bool,
    paused: bool,
    /// Events that reached the client while it was paused, replayed on resume.
    stash: Vec<Ev>,
    target: usize,
    in_flight: Option<InFlight>,
    generation: u64,
    clock: Clock,
}

/// Counters of what the simulator did (for the sweep summary).
pub type SimCounters = BTreeMap<&'static str, u64>;

/// The outcome of the loop, before the audits.
pub struct Ran {
    pub recorder: Recorder,
    pub events: u64,
    pub simulated_micros: Time,
    pub counters: SimCounters,
    /// The run hit `EVENTS_MAX` and was cut short.
    /// Why the run was cut short by a budget (a livelock or a storm), if it was.
    pub exhausted: Option<String>,
    /// The message of a panic that ended the run, if one did.
    pub panicked: Option<String>,
}

pub struct World {
    rules: Rules,
    knobs: Knobs,
    queue: EventQueue<Ev>,
    network: Network,
    disk_stream: Stream,
    fault_stream: Stream,
    workload: Stream,
    nodes: Vec<NodeSlot>,
    clients: Vec<ClientSlot>,
    lease: LeaseService,
    /// The paros writer token in force (as the lease service sees owners) and the owner holding it.
    owner_token: u64,
    owner_current: Option<usize>,
    recorder: Recorder,
    phase: Phase,
    events: u64,
    counters: SimCounters,
    finished: bool,
    /// The committed index of every node at the previous settle check, when they agreed.
    settle_last: Option<Vec<Option<u64>>>,
    exhausted: Option<String>,
    panicked: Option<String>,
    /// The highest offset any node has reported committed.
    cluster_committed: u64,
    /// The newest writer token of a committed fence record.
    fence_committed: u64,
    buggify: crate::buggify::Buggify,
}

impl World {
    pub fn new(seed: u64, rules: Rules, knobs: Knobs, keep_trace: bool) -> World {
        let mut clocks = Stream::new(seed, Component::Clocks);
        let mut draw_clock = |knobs: &Knobs| Clock {
            skew_micros: clocks.range(0, 2 * knobs.clock_skew_max_micros as u64) as i64
                - knobs.clock_skew_max_micros,
            drift_ppm: clocks.range(0, 2 * knobs.clock_drift_max_ppm as u64) as i64
                - knobs.clock_drift_max_ppm,
        };
        let layout = SegmentLayout {
            records_per_segment: knobs.records_per_segment,
        };
        let node_count = knobs.brokers + knobs.replicas;
        let nodes: Vec<NodeSlot> = (0..node_count)
            .map(|id| NodeSlot {
                id,
                node: None,
                disk: Disk::new(layout),
                clock: draw_clock(&knobs),
                timeouts: Stream::new(seed, Component::Timeouts(id)),
                incarnation: 0,
                persist_last: 0,
                durable_through: 0,
                held: VecDeque::new(),
            })
            .collect();
        // (role, joined at start) of every client, in id order.
        let mut roles: Vec<(Role, bool)> = Vec::new();
        match knobs.workload {
            Workload::Felixd { holders } => {
                for _ in 0..holders {
                    roles.push((
                        Role::Felixd {
                            holder: None,
                            renew_at_local: 0,
                        },
                        true,
                    ));
                }
            }
            Workload::Paros { owners, folders } => {
                for _ in 0..owners {
                    roles.push((Role::Owner { owner: None }, true));
                }
                for index in 0..folders {
                    let id = roles.len() as ClientId;
                    // The first folder starts with the journal; the others join later and must
                    // restore from a checkpoint at the floor.
                    roles.push((Role::Folder(Folder::new(id, 16, 64)), index == 0));
                }
            }
        }
        for _ in 0..knobs.readers {
            let id = roles.len() as ClientId;
            roles.push((Role::Reader(Reader::new(id, 1, 16)), true));
        }
        let clients: Vec<ClientSlot> = roles
            .into_iter()
            .enumerate()
            .map(|(index, (role, joined))| ClientSlot {
                id: index as ClientId,
                role,
                joined,
                paused: false,
                stash: Vec::new(),
                target: 0,
                in_flight: None,
                generation: 0,
                clock: draw_clock(&knobs),
            })
            .collect();
        World {
            rules,
            queue: EventQueue::new(PENDING_MAX),
            network: Network::new(seed, knobs.network.clone()),
            disk_stream: Stream::new(seed, Component::Disk),
            fault_stream: Stream::new(seed, Component::Faults),
            workload: Stream::new(seed, Component::Workload),
            nodes,
            clients,
            lease: LeaseService::new(knobs.lease_micros),
            owner_token: 0,
            owner_current: None,
            recorder: Recorder::new(keep_trace),
            phase: Phase::Safety,
            events: 0,
            counters: SimCounters::new(),
            finished: false,
            settle_last: None,
            exhausted: None,
            panicked: None,
            cluster_committed: 0,
            fence_committed: 0,
            buggify: crate::buggify::Buggify::new(seed, &knobs.buggify),
            knobs,
        }
    }

    /// Cuts the run short: a budget ran out (a livelock or a storm). The run is not judged for
    /// liveness (no End marker); the report names the budget and the trace shows the storm.
    fn exhaust(&mut self, reason: String) {
        if self.exhausted.is_none() {
            self.sim(SimEvent::Finished {
                reason: reason.clone(),
            });
            self.exhausted = Some(reason);
        }
    }

    fn count(&mut self, name: &'static str) {
        *self.counters.entry(name).or_insert(0) += 1;
    }

    fn now(&self) -> Time {
        self.queue.now()
    }

    fn history(&mut self, event: Event) {
        if let Event::Committed { entry, .. } = &event {
            self.cluster_committed = self.cluster_committed.max(entry.offset);
            if let Command::Fence { new, .. } = entry.command {
                self.fence_committed = self.fence_committed.max(new.0);
            }
        }
        let now = self.now();
        self.recorder.history(now, event);
    }

    fn sim(&mut self, event: SimEvent) {
        let now = self.now();
        self.recorder.sim(now, event);
    }

    /// Runs the world to the end of the liveness phase.
    /// `label` names the configuration in the trace (a twin name, or a control run).
    pub fn run(mut self, seed: u64, label: Option<String>) -> Ran {
        let knobs_json = serde_json::to_string(&self.knobs).unwrap_or_default();
        self.sim(SimEvent::Started {
            seed,
            twin: label,
            knobs: knobs_json,
        });
        self.history(Event::PhaseChanged {
            phase: Phase::Safety,
        });
        for index in 0..self.nodes.len() {
            self.start_node(index, false);
        }
        for index in 0..self.clients.len() {
            if self.clients[index].joined {
                let first = self.workload.range(0, self.knobs.client_gap_micros);
                self.queue
                    .push_after(first, Ev::ClientWake { client: index });
            } else {
                let join = self
                    .workload
                    .range(self.knobs.safety_micros / 4, self.knobs.safety_micros);
                self.queue
                    .push_after(join, Ev::ClientJoin { client: index });
            }
        }
        self.start_workload();
        if self.knobs.fault_weight() > 0 {
            let first = self.fault_stream.range(1, 2 * self.knobs.fault_gap_micros);
            self.queue.push_after(first, Ev::Fault);
        }
        self.queue
            .push_after(self.knobs.lease_micros / 4, Ev::LeaseCheck);
        self.queue.push_after(self.knobs.safety_micros, Ev::Heal);
        self.queue.push_after(
            self.knobs.safety_micros + self.knobs.liveness_micros,
            Ev::End,
        );
        while let Some((_, event)) = self.queue.pop() {
            self.events += 1;
            if self.events > EVENTS_MAX {
                self.exhaust(format!(
                    "the run processed {EVENTS_MAX} events without finishing (EVENTS_MAX): a livelock"
                ));
            }
            if self.exhausted.is_some() {
                break;
            }
            // A panic is an assert of the core (or the simulator) firing: a bug found. Catch it
            // here, so the trace up to that event survives for the replay.
            let handled =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.handle(event)));
            if let Err(payload) = handled {
                let message = panic_message(payload.as_ref());
                self.sim(SimEvent::Finished {
                    reason: format!("panic: {message}"),
                });
                self.panicked = Some(message);
                break;
            }
            if self.finished || self.exhausted.is_some() {
                break;
            }
        }
        let simulated_micros = self.now();
        Ran {
            recorder: self.recorder,
            events: self.events,
            simulated_micros,
            counters: self.counters,
            exhausted: self.exhausted,
            panicked: self.panicked,
        }
    }

    fn handle(&mut self, event: Ev) {
        match event {
            Ev::Deliver { from, to, payload } => self.deliver(from, to, *payload),
            Ev::Tick { node, incarnation } => self.tick(node, incarnation),
            Ev::SyncDone { node, incarnation } => self.sync_done(node, incarnation),
            Ev::ClientWake { client } => self.client_wake(client),
            Ev::ClientTimeout {
                client,
                id,
                generation,
            } => self.client_timeout(client, id, generation),
            Ev::ClientJoin { client } => {
                self.clients[client].joined = true;
                self.client_wake(client);
            }
            Ev::RenewReply { client, epoch } => self.renew_reply(client, epoch),
            Ev::Fault => self.fault(),
            Ev::RepairPartitions => {
                if self.phase == Phase::Safety {
                    self.network.repair_partitions();
                    self.sim(SimEvent::NetworkFault {
                        description: "partitions repaired".into(),
                    });
                }
            }
            Ev::Restart { node } => self.restart(node),
            Ev::Resume { client } => self.resume(client),
            Ev::LeaseCheck => self.lease_check(),
            Ev::Heal => self.heal(),
            Ev::SettleCheck => self.settle_check(),
            Ev::End => self.end("liveness deadline"),
            Ev::Buggify(act) => self.buggify_act(act),
        }
    }

    // ---------------------------------------------------------------- nodes

    fn start_node(&mut self, index: usize, restart: bool) {
        let rules = self.rules;
        let knobs = &self.knobs;
        let slot = &mut self.nodes[index];
        assert!(slot.node.is_none());
        slot.incarnation += 1;
        slot.persist_last = 0;
        slot.durable_through = 0;
        slot.held.clear();
        let node = if restart {
            match slot.disk.recover() {
                Ok(recovered) => node::recover(slot.id, knobs, rules, recovered),
                Err(error) => panic!("node {} store failed to recover: {error}", slot.id),
            }
        } else {
            node::fresh(slot.id, knobs, rules)
        };
        slot.node = Some(node);
        let incarnation = slot.incarnation;
        let tick = slot.clock.true_duration(self.knobs.tick_micros).max(1);
        let first = slot.timeouts.range(1, tick);
        let timeout = node::election_timeout(&mut slot.timeouts);
        self.queue.push_after(
            first,
            Ev::Tick {
                node: index,
                incarnation,
            },
        );
        self.step_node(index, node::Input::ElectionTimeout { ticks: timeout });
        // The state the node starts from (fresh, or what it recovered from its disk).
        if let Some(node) = self.nodes[index].node.as_ref() {
            let event = node::state_event(node);
            self.history(event);
        }
    }

    fn tick(&mut self, index: usize, incarnation: u64) {
        let slot = &self.nodes[index];
        if slot.incarnation != incarnation || slot.node.is_none() {
            return;
        }
        let tick = slot.clock.true_duration(self.knobs.tick_micros).max(1);
        self.queue.push_after(
            tick,
            Ev::Tick {
                node: index,
                incarnation,
            },
        );
        self.step_node(index, node::Input::Tick);
    }

    /// Feeds one input to a node and carries out its outputs in order.
    fn step_node(&mut self, index: usize, input: node::Input) {
        let Some(node) = self.nodes[index].node.as_mut() else {
            return;
        };
        let state_before = node::state_key(node);
        let outputs = node.step_collect(input);
        // Persist before send, always: the AckBeforeSync twin is the broker's (it emits its
        // acknowledgement ahead of the persist), not the driver's.
        let persist_before_send = true;
        let mut answered = false;
        for output in outputs {
            match output {
                Output::Persist { id, op } => {
                    let slot = &mut self.nodes[index];
                    assert!(id > slot.persist_last, "persist ids must increase");
                    match slot.disk.apply(&op) {
                        // The disk numbers ops as the broker does (from 1 per incarnation), so a
                        // sync's coverage is a persist id.
                        Ok(number) => assert_eq!(number, id, "persist ids are contiguous from 1"),
                        Err(error) => panic!(
                            "node {} refused its own storage op {op:?}: {error}",
                            slot.id
                        ),
                    }
                    slot.persist_last = id;
                    self.start_sync(index);
                }
                Output::Send { to, message } => {
                    let from = Address::Node(self.nodes[index].id);
                    self.send_or_hold(
                        index,
                        persist_before_send,
                        from,
                        Address::Node(to),
                        Payload::Peer(message),
                    );
                }
                Output::Reply {
                    client,
                    request_id,
                    reply,
                } => {
                    answered |= matches!(reply, Reply::Appended { .. });
                    let from = Address::Node(self.nodes[index].id);
                    let payload = Payload::Reply {
                        id: request_id,
                        reply,
                    };
                    self.send_or_hold(
                        index,
                        persist_before_send,
                        from,
                        Address::Client(client),
                        payload,
                    );
                }
                Output::Observe(event) => self.history(event),
            }
        }
        if answered {
            self.buggify_answered(index);
        }
        // The audits judge floors, leadership and promises from sampled states: record one after
        // every step that changed them, after the step's own events.
        if let Some(node) = self.nodes[index].node.as_ref() {
            if node::state_key(node) != state_before {
                let event = node::state_event(node);
                self.history(event);
            }
        }
    }

    fn send_or_hold(
        &mut self,
        index: usize,
        persist_before_send: bool,
        from: Address,
        to: Address,
        payload: Payload,
    ) {
        let slot = &mut self.nodes[index];
        let durable = slot.durable_through;
        if persist_before_send && slot.persist_last > durable {
            if slot.held.len() >= HELD_MAX {
                let reason = format!(
                    "node {} holds {HELD_MAX} messages waiting for one sync (HELD_MAX): a message storm",
                    slot.id
                );
                self.exhaust(reason);
                return;
            }
            slot.held.push_back(Held {
                barrier: slot.persist_last,
                to,
                payload,
            });
        } else {
            self.transmit(from, to, payload);
        }
    }

    fn start_sync(&mut self, index: usize) {
        let slot = &mut self.nodes[index];
        if slot.disk.start_sync() {
            let latency = Disk::latency(
                &mut self.disk_stream,
                self.knobs.sync_min_micros,
                self.knobs.sync_max_micros,
            );
            let incarnation = slot.incarnation;
            let latency = self.buggify_sync(latency);
            self.queue.push_after(
                latency,
                Ev::SyncDone {
                    node: index,
                    incarnation,
                },
            );
        }
    }

    fn sync_done(&mut self, index: usize, incarnation: u64) {
        let slot = &mut self.nodes[index];
        if slot.incarnation != incarnation || slot.node.is_none() {
            return;
        }
        if let Err(error) = slot.disk.finish_sync() {
            panic!("node {} sync failed: {error}", slot.id);
        }
        // Exactly the ops applied before the sync started are durable now.
        let through = slot.disk.synced();
        slot.durable_through = through;
        let from = Address::Node(slot.id);
        let mut released = Vec::new();
        while slot
            .held
            .front()
            .is_some_and(|held| held.barrier <= through)
        {
            if let Some(held) = slot.held.pop_front() {
                released.push(held);
            }
        }
        for held in released {
            self.transmit(from, held.to, held.payload);
        }
        self.step_node(index, node::Input::Persisted { through });
        self.start_sync(index);
    }

    fn transmit(&mut self, from: Address, to: Address, payload: Payload) {
        let now = self.now();
        let arrivals = self.network.route(now, from, to);
        if arrivals.is_empty() {
            self.count("messages_dropped");
        }
        if arrivals.len() > 1 {
            self.count("messages_duplicated");
        }
        for at in arrivals {
            self.queue.push(
                at,
                Ev::Deliver {
                    from,
                    to,
                    payload: Box::new(payload.clone()),
                },
            );
        }
    }

    fn deliver(&mut self, from: Address, to: Address, payload: Payload) {
        match (to, payload) {
            (Address::Node(node), Payload::Peer(message)) => {
                let Address::Node(from) = from else { return };
                self.step_node(node as usize, node::Input::Message { from, message });
            }
            (Address::Node(node), Payload::Request { id, request }) => {
                let Address::Client(client) = from else {
                    return;
                };
                self.step_node(
                    node as usize,
                    node::Input::Client {
                        client,
                        request_id: id,
                        request,
                    },
                );
            }
            (Address::Client(client), Payload::Reply { id, reply }) => {
                let Address::Node(node) = from else { return };
                self.client_reply(client as usize, node, id, reply);
            }
            _ => {}
        }
    }

    fn crash(&mut self, index: usize) {
        let keep = self.knobs.crash_keeps_per_million;
        let torn = self.knobs.torn_per_million;
        let slot = &mut self.nodes[index];
        if slot.node.is_none() {
            return;
        }
        slot.node = None;
        slot.held.clear();
        slot.incarnation += 1;
        let id = slot.id;
        let loss = match slot.disk.crash(&mut self.disk_stream, keep, torn) {
            Ok(loss) => loss,
            Err(error) => panic!("node {id} store refused a crash: {error}"),
        };
        self.count("crashes");
        self.history(Event::Crashed { node: id });
        self.sim(SimEvent::DiskLost {
            node: id,
            ops_lost: (loss.unsynced - loss.kept) as u64,
            torn: loss.torn,
        });
    }

    fn restart(&mut self, index: usize) {
        if self.nodes[index].node.is_some() {
            return;
        }
        let id = self.nodes[index].id;
        self.history(Event::Restarted { node: id });
        self.start_node(index, true);
    }
}

impl World {
    // ---------------------------------------------------------------- clients

    fn start_workload(&mut self) {
        for index in 0..self.clients.len() {
            let target = self.workload.index(self.knobs.brokers as usize);
            self.clients[index].target = target;
        }
        match self.knobs.workload {
            Workload::Felixd { .. } => self.grant_lease(0),
            Workload::Paros { .. } => self.take_fence(0),
        }
    }

    /// The lease service grants the felixd lease to `client`, which builds a new holder.
    fn grant_lease(&mut self, client: usize) {
        let now = self.now();
        let slot = &self.clients[client];
        let grant = self.lease.grant(slot.id, now);
        let local_now = slot.clock.local(now);
        let holder = Holder::new(slot.id, grant.epoch, 1, self.rules, HolderConfig::default());
        let renew_at_local = local_now + self.knobs.renew_micros;
        let id = slot.id;
        self.set_role(
            client,
            Role::Felixd {
                holder: Some(holder),
                renew_at_local,
            },
        );
        self.count("leases_granted");
        self.history(Event::LeaseGranted {
            client: id,
            epoch: grant.epoch,
        });
    }

    /// Replaces a client's state machine. The old one's request in flight is abandoned: its outcome
    /// stays unknown, and a late reply to it must not reach the new state machine (request ids
    /// restart with every state machine).
    fn set_role(&mut self, client: usize, role: Role) {
        let slot = &mut self.clients[client];
        slot.role = role;
        slot.in_flight = None;
    }

    /// The next paros owner takes the writer fence, replacing the token it believes in force.
    fn take_fence(&mut self, client: usize) {
        // The new owner replaces the token it finds in force, as a real owner learns it by
        // reading the journal: the last committed fence (not the last one granted, which may
        // never have landed).
        let old = self.fence_committed;
        self.owner_token += 1;
        let slot = &mut self.clients[client];
        let owner = Owner::new(
            slot.id,
            Token(self.owner_token),
            Token(old),
            OwnerConfig::default(),
        );
        slot.role = Role::Owner { owner: Some(owner) };
        // A new client state machine: the old one's request in flight is abandoned (unknown).
        slot.in_flight = None;
        let id = slot.id;
        self.owner_current = Some(client);
        self.count("fences_taken");
        self.history(Event::LeaseGranted {
            client: id,
            epoch: self.owner_token,
        });
    }

    /// The lowest cursor of every joined client still folding: no truncate may pass it.
    fn trim_fence(&self) -> Option<u64> {
        self.clients
            .iter()
            .filter(|slot| slot.joined)
            .filter_map(|slot| match &slot.role {
                Role::Folder(folder) => Some(folder.cursor()),
                Role::Owner { owner: Some(owner) } if !owner.is_finished() => Some(owner.cursor()),
                _ => None,
            })
            .min()
    }

    fn client_wake(&mut self, client: usize) {
        if self.finished || !self.clients[client].joined {
            return;
        }
        if self.clients[client].paused {
            self.clients[client].stash.push(Ev::ClientWake { client });
            return;
        }
        let gap = self
            .workload
            .range(
                self.knobs.client_gap_micros / 2,
                self.knobs.client_gap_micros * 3 / 2,
            )
            .max(1);
        self.queue.push_after(gap, Ev::ClientWake { client });
        let working = self.phase == Phase::Safety;
        let now = self.now();
        let fence = self.trim_fence();
        let trim_chance = self.knobs.trim_per_million;
        let op_chance = self.knobs.op_per_million;
        let stale_owner = self.owner_current != Some(client);
        let mut renew = None;
        let mut owner_crashes = 0;
        let owner_crash_chance = self.knobs.owner_crash_per_million;
        let slot = &mut self.clients[client];
        let local_now = slot.clock.local(now);
        match &mut slot.role {
            Role::Felixd {
                holder: Some(holder),
                renew_at_local,
            } => {
                if local_now >= *renew_at_local {
                    // Renewal is a round trip to the lease service: the holder keeps working
                    // until the answer comes back (and a pause stretches that).
                    *renew_at_local = Time::MAX;
                    renew = Some(holder.epoch());
                }
                let busy = self.workload.chance(op_chance);
                if working
                    && busy
                    && holder.status() == HolderStatus::Serving
                    && holder.ops_waiting() < 2
                {
                    let op = if self.workload.chance(trim_chance) {
                        let known = holder.tail().unwrap_or(1);
                        let back = self
                            .workload
                            .range(self.knobs.trim_lag_min, self.knobs.trim_lag_max);
                        HolderOp::Trim {
                            floor: known.saturating_sub(back).max(1),
                        }
                    } else {
                        HolderOp::Write {
                            body: format!("w{}", self.workload.next_u64() % 1_000_000).into_bytes(),
                        }
                    };
                    let _ = holder.submit(op);
                }
            }
            Role::Owner { owner: Some(owner) } => {
                owner.set_trim_limit(fence);
                let busy = self.workload.chance(op_chance);
                if working && busy && owner.status() == OwnerStatus::Fenced {
                    if stale_owner {
                        if self.workload.chance(trim_chance) {
                            let floor = owner.cursor().min(fence.unwrap_or(1)).max(1);
                            let _ = owner.submit(OwnerOp::Truncate { floor });
                        }
                    } else if self.workload.chance(trim_chance) {
                        // Now and then the owner dies inside its run: a run with no `End`, which
                        // no folder may restore. The lease service then hands the fence on.
                        if self.workload.chance(owner_crash_chance) {
                            let records = self.workload.range(1, 3) as usize;
                            owner.crash_inside_run(records);
                            owner_crashes += 1;
                        }
                        let _ = owner.submit(OwnerOp::Checkpoint);
                    } else {
                        let body =
                            format!("w{}", self.workload.next_u64() % 1_000_000).into_bytes();
                        let _ = owner.submit(OwnerOp::Write { body });
                    }
                }
            }
            _ => {}
        }
        if owner_crashes > 0 {
            self.count("owner_crashes_inside_run");
        }
        if let Some(epoch) = renew {
            let delay = self.workload.range(
                self.knobs.network.delay_min_micros,
                self.knobs.network.delay_max_micros,
            ) * 2;
            self.queue
                .push_after(delay, Ev::RenewReply { client, epoch });
        }
        self.try_send(client);
    }

    fn renew_reply(&mut self, client: usize, epoch: u64) {
        let now = self.now();
        let lost = self.phase == Phase::Safety
            && self.fault_stream.chance(self.knobs.renew_lost_per_million);
        let slot = &mut self.clients[client];
        if slot.paused {
            slot.stash.push(Ev::RenewReply { client, epoch });
            return;
        }
        let local_now = slot.clock.local(now);
        let id = slot.id;
        let Role::Felixd {
            holder: Some(holder),
            renew_at_local,
        } = &mut slot.role
        else {
            return;
        };
        if holder.epoch() != epoch {
            return;
        }
        if lost {
            // The answer never came back: the holder keeps believing and tries again later.
            *renew_at_local = local_now + self.knobs.renew_micros;
            return;
        }
        if self.lease.renew(id, epoch, now) {
            *renew_at_local = local_now + self.knobs.renew_micros;
        } else {
            self.set_role(
                client,
                Role::Felixd {
                    holder: None,
                    renew_at_local: 0,
                },
            );
            self.count("holders_told_by_renewal");
        }
    }

    /// The client as the `Client` trait, if it has one now.
    fn client_mut(role: &mut Role) -> Option<&mut dyn Client> {
        match role {
            Role::Felixd {
                holder: Some(holder),
                ..
            } => Some(holder),
            Role::Owner { owner: Some(owner) } => Some(owner),
            Role::Reader(reader) => Some(reader),
            Role::Folder(folder) => Some(folder),
            _ => None,
        }
    }

    fn try_send(&mut self, client: usize) {
        let slot = &mut self.clients[client];
        if slot.in_flight.is_some() || slot.paused || self.finished {
            return;
        }
        let Some(handle) = World::client_mut(&mut slot.role) else {
            return;
        };
        let Some((id, request)) = handle.next_request() else {
            return;
        };
        let node = self.nodes[slot.target].id;
        slot.generation += 1;
        let generation = slot.generation;
        slot.in_flight = Some(InFlight {
            id,
            request: request.clone(),
            node,
            generation,
        });
        let client_id = slot.id;
        let writes = !matches!(request, Request::Read { .. });
        self.history(Event::Requested {
            client: client_id,
            node,
            request: request.clone(),
        });
        self.transmit(
            Address::Client(client_id),
            Address::Node(node),
            // On the wire the request id is the slot's send generation: unique across the state
            // machines a client slot goes through, so a late reply never reaches the wrong one.
            Payload::Request {
                id: generation,
                request,
            },
        );
        self.queue.push_after(
            self.knobs.client_timeout_micros,
            Ev::ClientTimeout {
                client,
                id,
                generation,
            },
        );
        self.buggify_sent(client, writes);
    }

    fn client_reply(&mut self, client: usize, node: NodeId, wire: RequestId, reply: Reply) {
        let slot = &mut self.clients[client];
        if slot.paused {
            slot.stash.push(Ev::Deliver {
                from: Address::Node(node),
                to: Address::Client(slot.id),
                payload: Box::new(Payload::Reply { id: wire, reply }),
            });
            return;
        }
        let matches = slot
            .in_flight
            .as_ref()
            .is_some_and(|flight| flight.generation == wire && flight.node == node);
        if !matches {
            self.count("late_replies");
            return;
        }
        let Some(flight) = slot.in_flight.take() else {
            return;
        };
        let id = flight.id;
        let client_id = slot.id;
        let reads = matches!(slot.role, Role::Reader(_) | Role::Folder(_));
        let acked = matches!(reply, Reply::Appended { .. } | Reply::TrimNoop { .. });
        let step = match World::client_mut(&mut slot.role) {
            Some(handle) => handle.on_reply(id, reply.clone()),
            None => return,
        };
        self.history(Event::Replied {
            client: client_id,
            node,
            request: flight.request,
            reply,
        });
        let progressed = !step.delivered.is_empty() || step.route != Route::Any;
        self.apply_step(client, step);
        if acked {
            self.buggify_acked(client);
        }
        if !reads || progressed {
            self.try_send(client);
        }
    }

    fn client_timeout(&mut self, client: usize, id: RequestId, generation: u64) {
        let slot = &mut self.clients[client];
        let current = slot
            .in_flight
            .as_ref()
            .is_some_and(|flight| flight.id == id && flight.generation == generation);
        if !current {
            return;
        }
        if slot.paused {
            slot.stash.push(Ev::ClientTimeout {
                client,
                id,
                generation,
            });
            return;
        }
        slot.in_flight = None;
        let step = match World::client_mut(&mut slot.role) {
            Some(handle) => handle.on_unknown(id),
            None => return,
        };
        self.count("client_timeouts");
        self.apply_step(client, step);
        let target = self.workload.index(self.nodes.len());
        self.clients[client].target = target;
        self.try_send(client);
    }

    /// Records a client's conclusions and routes its next request.
    fn apply_step(&mut self, client: usize, step: felix_core::client::Step) {
        for event in step.events {
            self.history(event);
        }
        let brokers = self.knobs.brokers as usize;
        let nodes = self.nodes.len();
        let slot = &mut self.clients[client];
        slot.target = match step.route {
            Route::Any => slot.target,
            Route::Leader(Some(hint)) if (hint as usize) < brokers => hint as usize,
            Route::Leader(_) => (slot.target + 1) % brokers,
            Route::AnotherNode => (slot.target + 1) % nodes,
        };
    }

    fn pause(&mut self, client: usize, until: Time) {
        let slot = &mut self.clients[client];
        if slot.paused || !slot.joined {
            return;
        }
        slot.paused = true;
        let id = slot.id;
        self.count("pauses");
        self.sim(SimEvent::Paused { client: id });
        self.queue.push(until, Ev::Resume { client });
    }

    fn resume(&mut self, client: usize) {
        let slot = &mut self.clients[client];
        if !slot.paused {
            return;
        }
        slot.paused = false;
        let id = slot.id;
        let stash = std::mem::take(&mut slot.stash);
        self.sim(SimEvent::Resumed { client: id });
        // The stash holds the wake-up that came during the pause, if one did; otherwise the
        // client's next wake-up is still queued. One more would start a second wake-up chain,
        // and every pause another (a storm with pauses a few milliseconds apart).
        for event in stash {
            self.queue.push_after(0, event);
        }
    }

    /// The lease service's own clock: a lapsed lease (its holder paused or cut off) moves on.
    fn lease_check(&mut self) {
        if self.finished {
            return;
        }
        self.queue
            .push_after((self.knobs.lease_micros / 4).max(1), Ev::LeaseCheck);
        let now = self.now();
        match self.knobs.workload {
            Workload::Felixd { .. } => {
                if self.lease.expired(now) {
                    let current = self.lease.current().map(|grant| grant.holder as usize);
                    if let Some(next) = self.pick_felixd(current) {
                        self.move_lease(current, next, false);
                    }
                }
            }
            Workload::Paros { .. } => {
                let stalled =
                    self.owner_current
                        .is_none_or(|current| match &self.clients[current].role {
                            Role::Owner { owner: Some(owner) } => owner.is_finished(),
                            _ => true,
                        });
                if stalled {
                    let current = self.owner_current;
                    if let Some(next) = self.pick_owner(current) {
                        self.move_owner(current, next, true);
                    }
                }
            }
        }
    }

    /// Another felixd process than `current` that is not paused, drawn from the fault stream.
    fn pick_felixd(&mut self, current: Option<usize>) -> Option<usize> {
        self.pick_client(current, |role| matches!(role, Role::Felixd { .. }))
    }

    /// Another checkpoint owner than `current` that is not paused, drawn from the fault stream.
    fn pick_owner(&mut self, current: Option<usize>) -> Option<usize> {
        self.pick_client(current, |role| matches!(role, Role::Owner { .. }))
    }

    /// A client other than `current`, not paused, whose role `wanted` accepts; one draw from the
    /// fault stream when there is a candidate, none otherwise.
    fn pick_client(
        &mut self,
        current: Option<usize>,
        wanted: impl Fn(&Role) -> bool,
    ) -> Option<usize> {
        let candidates: Vec<usize> = (0..self.clients.len())
            .filter(|&index| wanted(&self.clients[index].role))
            .filter(|&index| Some(index) != current && !self.clients[index].paused)
            .collect();
        if candidates.is_empty() {
            return None;
        }
        Some(candidates[self.fault_stream.index(candidates.len())])
    }

    fn move_lease(&mut self, from: Option<usize>, to: usize, told: bool) {
        if told {
            if let Some(from) = from {
                self.set_role(
                    from,
                    Role::Felixd {
                        holder: None,
                        renew_at_local: 0,
                    },
                );
            }
        }
        self.grant_lease(to);
        let epoch = self.lease.current().map_or(0, |grant| grant.epoch);
        let (from_id, to_id) = (
            from.map(|index| self.clients[index].id),
            self.clients[to].id,
        );
        self.count("lease_moves");
        self.sim(SimEvent::LeaseMoved {
            from: from_id,
            to: to_id,
            epoch,
            told,
        });
    }

    fn move_owner(&mut self, from: Option<usize>, to: usize, told: bool) {
        if told {
            if let Some(from) = from {
                self.set_role(from, Role::Owner { owner: None });
            }
        }
        self.take_fence(to);
        let (from_id, to_id) = (
            from.map(|index| self.clients[index].id),
            self.clients[to].id,
        );
        self.count("lease_moves");
        self.sim(SimEvent::LeaseMoved {
            from: from_id,
            to: to_id,
            epoch: self.owner_token,
            told,
        });
    }

    // ---------------------------------------------------------------- faults and phases

    fn fault(&mut self) {
        if self.phase != Phase::Safety || self.finished {
            return;
        }
        let gap = self.fault_stream.range(1, 2 * self.knobs.fault_gap_micros);
        self.queue.push_after(gap, Ev::Fault);
        let knobs = &self.knobs;
        let weights = [
            knobs.weight_partition,
            knobs.weight_clog,
            knobs.weight_crash,
            knobs.weight_pause,
            knobs.weight_lease_move,
        ];
        let total: u32 = weights.iter().sum();
        let mut pick = self.fault_stream.range(0, u64::from(total) - 1) as u32;
        let mut kind = 0;
        for (index, weight) in weights.iter().enumerate() {
            if pick < *weight {
                kind = index;
                break;
            }
            pick -= weight;
        }
        let now = self.now();
        let duration = self
            .fault_stream
            .range(1_000, self.knobs.fault_duration_max_micros.max(1_000));
        match kind {
            0 => self.partition(duration),
            1 => {
                let address = self.random_address();
                self.network.clog(address, now + duration);
                self.count("clogs");
                self.sim(SimEvent::NetworkFault {
                    description: format!("clog {address:?} for {duration}us"),
                });
            }
            2 => {
                let index = self.fault_stream.index(self.nodes.len());
                if self.nodes[index].node.is_some() {
                    self.crash(index);
                    let downtime = self
                        .fault_stream
                        .range(1_000, self.knobs.downtime_max_micros.max(1_000));
                    self.queue.push_after(downtime, Ev::Restart { node: index });
                }
            }
            3 => {
                let client = self.pause_target();
                if let Some(client) = client {
                    self.pause(client, now + duration);
                }
            }
            _ => self.lease_move_fault(),
        }
    }

    fn random_address(&mut self) -> Address {
        let total = self.nodes.len() + self.clients.len();
        let index = self.fault_stream.index(total);
        if index < self.nodes.len() {
            Address::Node(self.nodes[index].id)
        } else {
            Address::Client(self.clients[index - self.nodes.len()].id)
        }
    }

    fn partition(&mut self, duration: Time) {
        let node_addresses: Vec<Address> = self
            .nodes
            .iter()
            .map(|slot| Address::Node(slot.id))
            .collect();
        let client_addresses: Vec<Address> = self
            .clients
            .iter()
            .map(|slot| Address::Client(slot.id))
            .collect();
        let description = match self.fault_stream.index(4) {
            0 => {
                let isolated = node_addresses[self.fault_stream.index(node_addresses.len())];
                let rest: Vec<Address> = node_addresses
                    .iter()
                    .chain(&client_addresses)
                    .copied()
                    .filter(|a| *a != isolated)
                    .collect();
                self.network.split(&[isolated], &rest);
                format!("isolate {isolated:?}")
            }
            1 => {
                let mut side = Vec::new();
                let mut rest = Vec::new();
                for address in node_addresses.iter().chain(&client_addresses) {
                    if self.fault_stream.chance(500_000) {
                        side.push(*address);
                    } else {
                        rest.push(*address);
                    }
                }
                self.network.split(&side, &rest);
                format!("split {side:?} from {rest:?}")
            }
            2 => {
                let from = node_addresses[self.fault_stream.index(node_addresses.len())];
                let to = node_addresses[self.fault_stream.index(node_addresses.len())];
                self.network.block(from, to);
                format!("one-way cut {from:?} -> {to:?}")
            }
            _ => {
                if client_addresses.is_empty() {
                    return;
                }
                let client = client_addresses[self.fault_stream.index(client_addresses.len())];
                self.network.split(&[client], &node_addresses);
                format!("isolate {client:?} from every node")
            }
        };
        self.count("partitions");
        self.sim(SimEvent::NetworkFault {
            description: format!("{description} for {duration}us"),
        });
        self.queue.push_after(duration, Ev::RepairPartitions);
    }

    /// Mostly the current lease holder or owner: a frozen holder whose lease moves on is the case
    /// fencing exists for.
    fn pause_target(&mut self) -> Option<usize> {
        let current = match self.knobs.workload {
            Workload::Felixd { .. } => self.lease.current().map(|grant| grant.holder as usize),
            Workload::Paros { .. } => self.owner_current,
        };
        if let Some(current) = current {
            if self.fault_stream.chance(700_000) {
                return Some(current);
            }
        }
        let joined: Vec<usize> = (0..self.clients.len())
            .filter(|&index| self.clients[index].joined)
            .collect();
        if joined.is_empty() {
            return None;
        }
        Some(joined[self.fault_stream.index(joined.len())])
    }

    fn lease_move_fault(&mut self) {
        let told = self
            .fault_stream
            .chance(self.knobs.lease_move_told_per_million);
        match self.knobs.workload {
            Workload::Felixd { .. } => {
                let current = self.lease.current().map(|grant| grant.holder as usize);
                if let Some(next) = self.pick_felixd(current) {
                    self.move_lease(current, next, told);
                }
            }
            Workload::Paros { .. } => {
                let current = self.owner_current;
                if let Some(next) = self.pick_owner(current) {
                    self.move_owner(current, next, told);
                }
            }
        }
    }

    fn heal(&mut self) {
        if self.finished {
            return;
        }
        self.phase = Phase::Liveness;
        self.network.heal();
        self.sim(SimEvent::Healed);
        for index in 0..self.nodes.len() {
            self.restart(index);
        }
        for index in 0..self.clients.len() {
            self.resume(index);
        }
        self.history(Event::PhaseChanged {
            phase: Phase::Liveness,
        });
        self.sim(SimEvent::Phase {
            name: "liveness".into(),
        });
        self.queue
            .push_after(self.knobs.tick_micros * 20, Ev::SettleCheck);
    }

    /// Ends the liveness phase early once every node is up and holds the same committed prefix,
    /// unchanged since the previous check (so in-flight work has landed).
    fn settle_check(&mut self) {
        if self.finished {
            return;
        }
        let committed: Vec<Option<u64>> = self
            .nodes
            .iter()
            .map(|slot| slot.node.as_ref().map(node::committed))
            .collect();
        // Every node up, all at one committed index, and that index is the cluster's: a node that
        // just restarted has relearned nothing yet (committed 0), which is not convergence.
        let agreed = committed.iter().all(|value| {
            value.is_some() && *value == committed[0] && *value >= Some(self.cluster_committed)
        });
        if agreed && self.settle_last.as_ref() == Some(&committed) {
            self.end("converged");
            return;
        }
        self.settle_last = agreed.then_some(committed);
        self.queue
            .push_after(self.knobs.tick_micros * 10, Ev::SettleCheck);
    }

    fn end(&mut self, reason: &str) {
        if self.finished {
            return;
        }
        for index in 0..self.nodes.len() {
            if let Some(node) = &self.nodes[index].node {
                let event = node::state_event(node);
                self.history(event);
            }
        }
        self.history(Event::PhaseChanged { phase: Phase::End });
        self.sim(SimEvent::Finished {
            reason: reason.to_string(),
        });
        self.finished = true;
    }
}

/// The text of a panic payload.
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|text| text.to_string()))
        .unwrap_or_else(|| "a panic with no message".to_string())
}
