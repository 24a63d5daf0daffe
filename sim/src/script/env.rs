//! The scripted environment: the real core's brokers, replicas and clients, moved one verb at a
//! time.
//!
//! Nothing moves unless a verb moves it. Every message (broker to broker, client to broker,
//! broker to client) waits in one FIFO network queue until `deliver` or `stabilize` carries it;
//! every storage op a broker persists waits in its in-memory store, unsynced, until `sync` or
//! `stabilize` completes it, and every send or reply that followed an unsynced persist is held
//! back until then (persist before send, ack after durable: `felix_core::broker` io.rs). There is
//! no clock, no random source and no thread: the same script gives the same trace, byte for byte.
//!
//! The environment records the run's history (`felix_core::history::Event`) exactly as the
//! audits expect it (felix-audits' lib doc, "What the audits need from the driver"): node
//! events in output order, a `NodeState` after every step that changed it, `Requested` and
//! `Replied` for every client exchange, `LeaseGranted`, the clients' own events, crashes and
//! restarts.

use crate::env::disk::Disk;
use crate::env::host::{Effect, Host, SyncStart};
use crate::render::describe;
use felix_core::api::{ClientId, Reply, Request, RequestId};
use felix_core::broker::{BrokerConfig, Input};
use felix_core::client::{
    Client, Folder, Holder, HolderConfig, Owner, OwnerConfig, Reader, Route, Step,
};
use felix_core::history::Event;
use felix_core::journal::JournalConfig;
use felix_core::storage::SegmentLayout;
use felix_core::{NodeId, Rules};
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// A voter campaigns after this many ticks without a leader. Nobody ticks unless a verb says so.
pub const ELECTION_TIMEOUT_TICKS: u64 = 10;
/// A leader sends heartbeats every this many ticks.
pub const HEARTBEAT_TICKS: u64 = 3;
/// `max_records` of every client read: small enough that traces stay short.
pub const READ_BATCH_MAX: u32 = 16;
/// The most rounds (deliver everything, then sync everything) one `stabilize` may take.
pub const STABILIZE_ROUNDS_MAX: usize = 1_000;
/// The most messages the network may hold: a script that floods it is a bug in the script.
pub const NETWORK_PACKETS_MAX: usize = 100_000;
/// Operations a holder may have queued (writes and trims not yet answered).
pub const HOLDER_OPS_MAX: usize = 16;
/// Storage ops a node may have applied and not synced: past this, the script must `sync`
/// (the broker's own bound is far higher; this keeps a script from reaching it).
pub const UNSYNCED_OPS_MAX: usize = 4_096;
/// The most reads one `read ... all` or `fold` may send.
pub const READS_MAX: u32 = 64;

pub use super::trace::{Shape, Syncs, Trace};
pub use crate::env::network::{Address, Packet, Payload};

/// One broker or replica: its host (broker, disk, outbox), and whether a verb paused it.
pub struct NodeSlot {
    pub host: Host,
    pub paused: bool,
}

/// Which client state machine a slot runs.
pub enum ClientKind {
    Holder(Holder),
    /// Boxed: an owner is much larger than the other clients.
    Owner(Box<Owner>),
    Reader(Reader),
    Folder(Folder),
}

impl ClientKind {
    pub fn client(&mut self) -> &mut dyn Client {
        match self {
            ClientKind::Holder(holder) => holder,
            ClientKind::Owner(owner) => owner.as_mut(),
            ClientKind::Reader(reader) => reader,
            ClientKind::Folder(folder) => folder,
        }
    }

    /// Readers and folders read only when a verb asks; holders and owners drive themselves.
    pub fn is_passive(&self) -> bool {
        matches!(self, ClientKind::Reader(_) | ClientKind::Folder(_))
    }
}

/// One client and the driver's bookkeeping for it.
pub struct ClientSlot {
    pub name: String,
    pub id: ClientId,
    pub kind: ClientKind,
    /// A paused client processes replies but sends nothing until resumed.
    pub paused: bool,
    /// Passive clients: reads still to send.
    pub reads_wanted: u32,
    /// Passive clients: stop reading once a read reaches the tail.
    pub until_tail: bool,
    /// Requests go here when set (`via=`).
    pub pinned: Option<NodeId>,
    /// Where the next request goes, from the last reply's `Route`.
    pub next_target: Option<NodeId>,
    /// Where the next request goes, whatever the last reply said (`target`): used once.
    pub aimed: Option<NodeId>,
    /// The request in flight: its id, the node it went to, the request.
    pub in_flight: Option<(RequestId, NodeId, Request)>,
    /// The client process crashed: it never sends again and replies to it are lost.
    pub down: bool,
    /// Crash the client right after its checkpoint run's `End` is acknowledged (before the
    /// truncate goes out).
    pub crash_after_end: bool,
}

/// A failure of the environment itself (a store refusing an op the core asked for): printed as
/// the verb's output so that the scenario shows it, never a panic.
pub type EnvResult<T> = Result<T, String>;

/// The scripted world.
pub struct Env {
    /// Rules of the cluster in place.
    pub rules: Rules,
    /// Rules the next `cluster` will use (`twin` sets them).
    pub next_rules: Rules,
    pub layout: SegmentLayout,
    pub retention_segments_max: u64,
    pub nodes: Vec<NodeSlot>,
    pub network: VecDeque<Packet>,
    /// Cut links between nodes (both directions are listed).
    pub cut: BTreeSet<(NodeId, NodeId)>,
    pub clients: Vec<ClientSlot>,
    pub names: BTreeMap<String, ClientId>,
    /// The last lease epoch granted.
    pub epoch: u64,
    pub history: Vec<Event>,
    /// How the cluster's storage syncs.
    pub syncs: Syncs,
    /// Ticks a voter waits without a leader before it campaigns (`cluster ... election=`).
    pub election_ticks: u64,
    /// Leave the events out of what the verbs print (a check that reads only the audit's lines,
    /// such as the shrinker's, runs faster); kept by `cluster`.
    pub quiet: bool,
    /// `audit` runs this invariant's audit alone, with no coverage (`felix_audits::audit_one`: a
    /// check that asks only whether it breaks, such as the shrinker's twin half); `None`, every
    /// audit. Kept by `cluster`.
    pub audit_only: Option<felix_core::rules::Invariant>,
    /// While `deliver_copies` delivers: how many of the queued packets at the front of `network`
    /// were waiting before the call. `send`'s bound counts only the packets behind them (the ones
    /// sent during the delivery), as when the waiting ones were taken out of the queue.
    pub(super) held_aside: usize,
}

impl describe::Names for Env {
    fn client(&self, id: ClientId) -> String {
        self.client_name(id)
    }
}

impl Default for Env {
    fn default() -> Env {
        Env::new()
    }
}

impl Env {
    /// An environment with no cluster yet and every rule on.
    pub fn new() -> Env {
        Env {
            rules: Rules::default(),
            next_rules: Rules::default(),
            layout: SegmentLayout::default(),
            retention_segments_max: JournalConfig::default().retention_segments_max,
            nodes: Vec::new(),
            network: VecDeque::new(),
            cut: BTreeSet::new(),
            clients: Vec::new(),
            names: BTreeMap::new(),
            epoch: 0,
            history: Vec::new(),
            syncs: Syncs::All,
            quiet: false,
            audit_only: None,
            election_ticks: ELECTION_TIMEOUT_TICKS,
            held_aside: 0,
        }
    }

    /// Replaces everything with a fresh cluster of `brokers` voters and `replicas` replicas.
    pub fn build(
        &mut self,
        brokers: u32,
        replicas: u32,
        rules: Rules,
        layout: SegmentLayout,
        retention_segments_max: u64,
    ) {
        self.build_tuned(
            brokers,
            replicas,
            rules,
            layout,
            retention_segments_max,
            &|_| {},
        );
    }

    /// `build`, with `tune` changing every node's broker configuration last (the model-path
    /// runner of `felix-validate` sends one record per `AppendEntries`, as the model does).
    pub fn build_tuned(
        &mut self,
        brokers: u32,
        replicas: u32,
        rules: Rules,
        layout: SegmentLayout,
        retention_segments_max: u64,
        tune: &dyn Fn(&mut BrokerConfig),
    ) {
        let shape = Shape {
            brokers,
            replicas,
            rules,
            layout,
            retention_segments_max,
            syncs: Syncs::All,
            election_ticks: ELECTION_TIMEOUT_TICKS,
            heartbeat_ticks: HEARTBEAT_TICKS,
            appends_in_flight_max: None,
        };
        self.build_shaped(shape, tune);
    }

    /// `build_tuned` for any `Shape`, its storage's syncs included.
    pub fn build_shaped(&mut self, shape: Shape, tune: &dyn Fn(&mut BrokerConfig)) {
        let Shape {
            brokers,
            replicas,
            rules,
            layout,
            retention_segments_max,
            syncs,
            election_ticks,
            heartbeat_ticks,
            appends_in_flight_max,
        } = shape;
        assert!(brokers > 0);
        let (next_rules, quiet, audit_only) = (self.next_rules, self.quiet, self.audit_only);
        *self = Env::new();
        self.next_rules = next_rules;
        self.quiet = quiet;
        self.audit_only = audit_only;
        self.rules = rules;
        self.layout = layout;
        self.retention_segments_max = retention_segments_max;
        self.syncs = syncs;
        self.election_ticks = election_ticks;
        let sync_start = match syncs {
            Syncs::All => SyncStart::OnDemand,
            Syncs::Eager => SyncStart::Eager,
        };
        let voters: Vec<NodeId> = (0..brokers).collect();
        let replica_ids: Vec<NodeId> = (brokers..brokers + replicas).collect();
        for id in 0..brokers + replicas {
            let mut config = BrokerConfig::new(id, voters.clone(), replica_ids.clone());
            config.election_timeout_ticks = election_ticks;
            config.heartbeat_ticks = heartbeat_ticks;
            config.appends_in_flight_max = appends_in_flight_max;
            config.journal = JournalConfig {
                layout,
                rules,
                retention_segments_max,
                ..JournalConfig::default()
            };
            tune(&mut config);
            let mut host = Host::new(
                config,
                Disk::new(layout),
                NETWORK_PACKETS_MAX,
                sync_start,
                None,
            );
            if let Err(error) = host.start(false) {
                panic!("a fresh node cannot fail to start: {error}");
            }
            if let Some(state) = host.sample_always() {
                self.history.push(state);
            }
            self.nodes.push(NodeSlot {
                host,
                paused: false,
            });
        }
    }

    pub fn has_cluster(&self) -> bool {
        !self.nodes.is_empty()
    }

    /// The node clients send to by default: the live leader of the highest term, else node 0.
    pub fn leader(&self) -> NodeId {
        let mut best: Option<(u64, NodeId)> = None;
        for slot in &self.nodes {
            if let Some(broker) = &slot.host.broker {
                if broker.is_leader() && best.is_none_or(|(term, _)| broker.term() > term) {
                    best = Some((broker.term(), broker.id()));
                }
            }
        }
        best.map(|(_, id)| id).unwrap_or(0)
    }

    pub fn client_name(&self, id: ClientId) -> String {
        self.clients
            .get(id as usize)
            .map(|slot| slot.name.clone())
            .unwrap_or_else(|| format!("client{id}"))
    }

    pub fn addr_name(&self, addr: Address) -> String {
        match addr {
            Address::Node(id) => describe::node(id),
            Address::Client(id) => self.client_name(id),
        }
    }

    // ---- history ----

    fn observe(&mut self, event: Event, trace: &mut Trace) {
        match &event {
            Event::Committed { node, entry } => trace.committed(*node, entry.offset),
            Event::NodeState { .. }
            | Event::DurablePromise { .. }
            | Event::PromiseSent { .. }
            | Event::DurableLog { .. }
            | Event::AckSent { .. } => {}
            other if !self.quiet => trace.line(describe::event(other, self)),
            _ => {}
        }
        self.history.push(event);
    }

    /// A client event, rendered and recorded.
    fn client_event(&mut self, event: Event, trace: &mut Trace) {
        if !self.quiet {
            trace.line(describe::event(&event, self));
        }
        self.history.push(event);
    }

    // ---- nodes ----

    /// One input to one node, its outputs carried out by its host. A crashed node takes nothing.
    pub fn step_node(&mut self, id: NodeId, input: Input, trace: &mut Trace) -> EnvResult<()> {
        let slot = &mut self.nodes[id as usize];
        if slot.host.disk.unsynced_ops() >= UNSYNCED_OPS_MAX {
            return Err(format!(
                "{} has UNSYNCED_OPS_MAX={UNSYNCED_OPS_MAX} storage ops unsynced: `sync` it",
                describe::node(id)
            ));
        }
        let mut effects = Vec::new();
        let result = slot.host.step(input, &mut effects);
        self.carry_effects(effects, trace)?;
        result.map_err(|error| error.to_string())
    }

    /// Carries out what a host left to do, in order.
    fn carry_effects(&mut self, effects: Vec<Effect>, trace: &mut Trace) -> EnvResult<()> {
        for effect in effects {
            match effect {
                // A sync completes only when a verb says so (`sync_node`).
                Effect::SyncStarted => {}
                Effect::Transmit(packet) => self.send(packet, trace)?,
                Effect::Observe(event) => self.observe(event, trace),
                // A script has no random source: every election period gets the same timeout.
                Effect::DrawElectionTimeout => {}
            }
        }
        Ok(())
    }

    /// Puts a packet on the network, unless a partition cuts its link.
    fn send(&mut self, packet: Packet, trace: &mut Trace) -> EnvResult<()> {
        if let (Address::Node(from), Address::Node(to)) = (packet.from, packet.to) {
            if self.cut.contains(&(from, to)) {
                if trace.verbose {
                    trace.line(format!(
                        "{} -> {}: lost to the partition",
                        describe::node(from),
                        describe::node(to)
                    ));
                }
                return Ok(());
            }
        }
        if self.network.len() - self.held_aside >= NETWORK_PACKETS_MAX {
            return Err(format!(
                "the network holds NETWORK_PACKETS_MAX={NETWORK_PACKETS_MAX} packets"
            ));
        }
        self.network.push_back(packet);
        Ok(())
    }

    /// Completes node `id`'s storage: syncs, releases what was held, tells the broker.
    /// Returns false when there was nothing to sync (or the node is down or paused).
    pub fn sync_node(&mut self, id: NodeId, trace: &mut Trace) -> EnvResult<bool> {
        let slot = &mut self.nodes[id as usize];
        if slot.paused {
            return Ok(false);
        }
        let mut effects = Vec::new();
        let synced = match self.syncs {
            Syncs::All => slot.host.sync_all(&mut effects),
            // A sync is in flight whenever an up node has unsynced ops: one starts after every
            // op written with none in flight, and after every sync that leaves ops waiting.
            Syncs::Eager if slot.host.is_up() && slot.host.disk.unsynced_ops() > 0 => {
                slot.host.finish_sync(&mut effects).map(Some)
            }
            Syncs::Eager => Ok(None),
        };
        if let Ok(Some(through)) = synced {
            if trace.verbose {
                trace.line(format!(
                    "{}: synced through op {through}",
                    describe::node(id)
                ));
            }
        }
        self.carry_effects(effects, trace)?;
        synced
            .map(|through| through.is_some())
            .map_err(|error| error.to_string())
    }

    /// Delivers and syncs until nothing moves, leaving every message to or from `held` queued
    /// (none: every message moves). Returns the rounds taken, or an error past
    /// `STABILIZE_ROUNDS_MAX`.
    pub fn stabilize(&mut self, held: Option<Address>, trace: &mut Trace) -> EnvResult<usize> {
        let moves = |packet: &Packet| held.is_none_or(|at| packet.from != at && packet.to != at);
        for round in 0..STABILIZE_ROUNDS_MAX {
            let delivered = self.deliver(&moves, usize::MAX, trace)?;
            let mut synced = false;
            for id in 0..self.nodes.len() as NodeId {
                synced |= self.sync_node(id, trace)?;
            }
            if delivered == 0 && !synced {
                return Ok(round);
            }
        }
        Err(format!(
            "stabilize did not quiesce within STABILIZE_ROUNDS_MAX={STABILIZE_ROUNDS_MAX} rounds"
        ))
    }

    /// A crash: the node loses its unsynced ops but the first `kept` (a power loss that
    /// happened to keep them), and whatever it held back. Returns how many ops it lost.
    pub fn crash(&mut self, id: NodeId, kept: usize, trace: &mut Trace) -> EnvResult<usize> {
        let host = &mut self.nodes[id as usize].host;
        let unsynced = host.disk.unsynced_ops();
        let kept = kept.min(unsynced);
        let lost = unsynced - kept;
        host.crash(|disk| disk.crash_keeping(kept, 0))
            .map_err(|error| error.to_string())?;
        self.observe(Event::Crashed { node: id }, trace);
        Ok(lost)
    }

    /// A restart from what the disk kept.
    pub fn restart(&mut self, id: NodeId, trace: &mut Trace) -> EnvResult<()> {
        let host = &mut self.nodes[id as usize].host;
        host.start(true).map_err(|error| error.to_string())?;
        let state = host.sample_always();
        self.observe(Event::Restarted { node: id }, trace);
        self.history.extend(state);
        Ok(())
    }

    // ---- clients ----

    /// Adds a client; its id is its index.
    pub fn add_client(&mut self, name: &str, kind: ClientKind, pinned: Option<NodeId>) -> ClientId {
        let id = self.clients.len() as ClientId;
        self.names.insert(name.to_string(), id);
        self.clients.push(ClientSlot {
            name: name.to_string(),
            id,
            kind,
            paused: false,
            reads_wanted: 0,
            until_tail: false,
            pinned,
            next_target: None,
            aimed: None,
            in_flight: None,
            down: false,
            crash_after_end: false,
        });
        id
    }

    pub fn owner_config() -> OwnerConfig {
        OwnerConfig {
            read_batch_max: READ_BATCH_MAX,
            ..OwnerConfig::default()
        }
    }

    /// The lease service grants the next epoch to a new holder `name` (recorded as
    /// `LeaseGranted`); nobody tells the previous holder.
    pub fn lease_holder(
        &mut self,
        name: &str,
        pinned: Option<NodeId>,
        trace: &mut Trace,
    ) -> ClientId {
        self.epoch += 1;
        let epoch = self.epoch;
        let client = self.clients.len() as ClientId;
        let config = HolderConfig {
            read_batch_max: READ_BATCH_MAX,
            ops_max: HOLDER_OPS_MAX,
        };
        let holder = Holder::new(client, epoch, 1, self.rules, config);
        let id = self.add_client(name, ClientKind::Holder(holder), pinned);
        assert_eq!(id, client);
        self.client_event(Event::LeaseGranted { client, epoch }, trace);
        id
    }

    /// Sends the client's next request if it has one and may send.
    pub fn pump(&mut self, client: ClientId, trace: &mut Trace) -> EnvResult<()> {
        let leader = self.leader();
        let slot = &mut self.clients[client as usize];
        if slot.paused || slot.down || slot.in_flight.is_some() {
            return Ok(());
        }
        let passive = slot.kind.is_passive();
        if passive && slot.reads_wanted == 0 {
            return Ok(());
        }
        let Some((request_id, request)) = slot.kind.client().next_request() else {
            return Ok(());
        };
        if passive {
            slot.reads_wanted -= 1;
        }
        let aimed = slot.aimed.take();
        let routed = slot.next_target.take();
        let target = aimed.or(routed).or(slot.pinned).unwrap_or(leader);
        slot.in_flight = Some((request_id, target, request.clone()));
        let requested = Event::Requested {
            client,
            node: target,
            request: request.clone(),
        };
        if !self.quiet {
            trace.line(describe::event(&requested, self));
        }
        self.history.push(requested);
        let packet = Packet {
            from: Address::Client(client),
            to: Address::Node(target),
            payload: Payload::Request {
                request_id,
                request,
            },
        };
        self.send(packet, trace)
    }

    pub(super) fn client_reply(
        &mut self,
        client: ClientId,
        from: NodeId,
        request_id: RequestId,
        reply: Reply,
        trace: &mut Trace,
    ) -> EnvResult<()> {
        let name = self.client_name(client);
        let slot = &mut self.clients[client as usize];
        if slot.down {
            trace.line(format!(
                "{} -> {name}: {} (lost: {name} is down)",
                describe::node(from),
                describe::reply(&reply)
            ));
            return Ok(());
        }
        let in_flight = slot.in_flight.clone();
        let Some((id, _, request)) = in_flight.filter(|(id, _, _)| *id == request_id) else {
            trace.line(format!(
                "{} -> {name}: {} (ignored: not the request in flight)",
                describe::node(from),
                describe::reply(&reply)
            ));
            return Ok(());
        };
        let replied = Event::Replied {
            client,
            node: from,
            request,
            reply: reply.clone(),
        };
        if !self.quiet {
            trace.line(describe::event(&replied, self));
        }
        self.history.push(replied);
        let slot = &mut self.clients[client as usize];
        if slot.until_tail {
            if let Reply::Records { records, .. } = &reply {
                if records.len() < READ_BATCH_MAX as usize {
                    slot.reads_wanted = 0;
                    slot.until_tail = false;
                }
            }
        }
        let step = slot.kind.client().on_reply(id, reply);
        slot.in_flight = None;
        self.apply_step(client, from, step, trace);
        self.pump(client, trace)
    }

    /// The client process crashes: it sends nothing more, and replies to it are lost.
    pub fn crash_client(&mut self, client: ClientId, trace: &mut Trace) {
        let slot = &mut self.clients[client as usize];
        slot.down = true;
        slot.in_flight = None;
        trace.line(format!("{}: crashed", slot.name));
    }

    /// The driver gave up waiting for `client`'s request: its outcome is unknown.
    pub fn time_out(&mut self, client: ClientId, trace: &mut Trace) -> EnvResult<bool> {
        let slot = &mut self.clients[client as usize];
        let Some((id, node, _)) = slot.in_flight.take() else {
            return Ok(false);
        };
        let step = slot.kind.client().on_unknown(id);
        self.apply_step(client, node, step, trace);
        self.pump(client, trace)?;
        Ok(true)
    }

    fn apply_step(&mut self, client: ClientId, from: NodeId, step: Step, trace: &mut Trace) {
        let Step {
            events,
            delivered,
            route,
            ..
        } = step;
        if !delivered.is_empty() {
            let listed: Vec<String> = delivered.iter().map(describe::read_record).collect();
            trace.line(format!(
                "{}: delivered {}",
                self.client_name(client),
                listed.join(", ")
            ));
        }
        for event in events {
            let written = matches!(event, Event::CheckpointWritten { .. });
            self.client_event(event, trace);
            let slot = &mut self.clients[client as usize];
            if written && slot.crash_after_end {
                self.crash_client(client, trace);
            }
        }
        let next = match route {
            Route::Any => None,
            Route::Leader(hint) => hint,
            Route::AnotherNode => {
                let count = self.nodes.len() as NodeId;
                (1..count)
                    .map(|step| (from + step) % count)
                    .find(|id| self.nodes[*id as usize].host.is_up())
            }
        };
        self.clients[client as usize].next_target = next;
    }
}
