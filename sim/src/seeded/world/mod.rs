//! The world of one run: the real core's brokers, replicas and clients on simulated time.
//!
//! A single-threaded loop pops the next event (message delivery, broker tick, sync completion,
//! client wake-up, timeout, fault, repair, phase change) and carries out what the core returns:
//! `Persist` ops go to the node's disk in order, and every `Send`/`Reply` that follows a persist
//! waits until a sync covers it (persist before send); `Observe` events go to the history. The
//! safety phase injects faults drawn by the seed; then everything heals and the liveness phase
//! must converge before its deadline.
//!
//! Phases, in order:
//! 1. **safety** (`safety_micros`): the workload runs and faults are drawn.
//! 2. **liveness** (`liveness_micros`): every fault healed, every node restarted, every client
//!    resumed; clients submit no new work but finish what they had queued.
//! 3. **quiesce**, the last [`QUIESCE_SHARE`]th of the liveness phase: writers (holders, owners)
//!    send nothing more, so the committed prefix stops moving and the cluster can converge; readers
//!    and folders keep reading. As in VOPR's liveness mode, a cluster is judged on whether it
//!    converges once requests stop, not on whether the last write of a live workload reached
//!    every follower before an arbitrary instant.
//! 4. **end**: at the deadline (or earlier, once every node holds the same committed prefix
//!    twice in a row) the Convergence audit judges the nodes.
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
//! - the prober (knob `prober`) now and then asks what the others never ask: reads from
//!   `Earliest`, from 0 or past the tail, writes, fences and truncates with made-up tokens, and a
//!   trim for the floor one past its own offset, which must be refused with their typed answers
//!   (`prober.rs`).
//!
//! Faults (safety phase): message drop, duplication, long delays (reordering), partitions
//! (isolate a node, split, one-way cut, cut a client off), clogging, node crash and restart with
//! the disk model, client pauses, lease moves without telling. A livelock or message storm ends the
//! run with a budget finding instead of hanging.
//!
//! Simplifications, on purpose: the lease service is an oracle reached by a round trip that is
//! never lost; brokers never pause (a clog stands in for it).

pub mod breaker;
mod buggify;
mod clients;
mod faults;
mod forks;
mod nodes;
pub mod prober;
mod storage;

use crate::env::clock::Clock;
use crate::env::disk::Disk;
use crate::env::disk::NodeDisk;
use crate::env::host::{Effect, Host, HostError, SyncStart};
use crate::env::lease::LeaseService;
use crate::env::network::Payload;
use crate::env::network::{Address, Network};
use crate::env::node;
use crate::env::queue::{EventQueue, Time};
use crate::env::rng::{Component, Stream};
use crate::env::tape::{Schedule, Tape};
use crate::render::trace::{Recorder, SimEvent};
use crate::seeded::knobs::{Knobs, Workload};
use felix_audits::{Counter, Counts};
use felix_core::api::{ClientId, Reply, Request, RequestId};
use felix_core::broker::Broker;
use felix_core::client::checkpoint::OwnerOp;
use felix_core::client::{
    Client, Folder, Holder, HolderConfig, HolderOp, HolderStatus, Owner, OwnerConfig, OwnerStatus,
    Reader, Route,
};
use felix_core::history::{Event, Phase};
use felix_core::storage::SegmentLayout;
use felix_core::{Command, NodeId, Rules, Token};

/// The most events one run may process per simulated second of its length (safety plus
/// liveness): a run that needs more is a livelock or a storm (a bug). A rate, not a count, so a
/// long run gets the budget of its length (1,000,000 events for an 18 s run, as before runs grew).
pub const EVENTS_PER_SECOND_MAX: u64 = 55_556;
/// A run's event budget: `EVENTS_PER_SECOND_MAX` per simulated second of its safety and
/// liveness phases (rounded up).
pub fn events_max(knobs: &Knobs) -> u64 {
    let micros = knobs.safety_micros.saturating_add(knobs.liveness_micros);
    micros
        .div_ceil(1_000_000)
        .saturating_mul(EVENTS_PER_SECOND_MAX)
}

/// The most events pending at once.
const PENDING_MAX: usize = 1_000_000;
/// Messages a node may hold back waiting for a sync.
const HELD_MAX: usize = 20_000;
/// The quiesce starts this fraction (1/N) of the liveness phase before its deadline.
pub const QUIESCE_SHARE: u64 = 4;

/// One scheduled event.
#[derive(Clone, Debug)]
enum Ev {
    /// Not boxed: pending events wait in the queue's slab and never move while pending (the
    /// heap moves 16-byte keys), so a box would only cost an allocation per message.
    Deliver {
        from: Address,
        to: Address,
        payload: Payload,
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
    /// Writers stop sending: the committed prefix settles before the deadline.
    Quiesce,
    SettleCheck,
    End,
    /// A BUGGIFY site fired (`world/buggify.rs`).
    Buggify(buggify::Act),
}

struct NodeSlot {
    id: NodeId,
    /// The broker, its disk and its outbox.
    host: Host,
    clock: Clock,
    timeouts: Stream,
    incarnation: u64,
    /// The last messages it sent to its peers, kept only while BUGGIFY's ReplayPast is active.
    past: std::collections::VecDeque<(Address, Payload)>,
    /// Its store was found corrupt at a restart: it stays down for good (`storage.rs`).
    lost: bool,
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
    /// The client that asks what others never ask (`prober.rs`, knob `prober`).
    Prober(prober::Prober),
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
    /// Its requests in flight, oldest first: one at most, or a pipelining owner's writes.
    in_flight: Vec<InFlight>,
    generation: u64,
    clock: Clock,
    /// Consecutive replies that only sent the client elsewhere (`NotLeader`, `NoReadIndex`,
    /// `NotHeld`, `ReadPastTail`): once it has tried every node, it backs off.
    refusals: usize,
    /// Consecutive unknown outcomes at its target (knob `sticky_timeouts`).
    timeouts: u32,
    /// The client sends nothing before this time (its backoff after refusals).
    backoff_until: Time,
}

/// Watches the world after every event the loop handles (trace validation, `felix-validate`).
/// It reads the world through `World`'s read-only accessors and never changes the run: a run with
/// an observer is the same run, event for event, as one without.
pub trait Observer {
    /// Called after each handled event (not after the one that panicked or exhausted a budget).
    fn after_event(&mut self, world: &World);

    /// What the observer found wrong with the run, judged with the audits' findings
    /// (`judge::judge`): trace validation's divergence.
    fn finding(&self) -> Option<crate::Finding> {
        None
    }
}

/// The outcome of the loop, before the audits.
pub struct Ran {
    pub recorder: Recorder,
    pub events: u64,
    pub simulated_micros: Time,
    /// What the simulator counted (its faults, the driver's events, BUGGIFY firings): only the
    /// counters it counted at least once are present.
    pub counters: Counts,
    /// Why the run was cut short by a budget (a livelock or a storm), if it was.
    pub exhausted: Option<String>,
    /// The message of a panic that ended the run, if one did.
    pub panicked: Option<String>,
    /// The observer the world was given, handed back.
    pub observer: Option<Box<dyn Observer>>,
    /// What each node's disk durably held at the end, in node order, if asked (`keep_disks`).
    pub disks: Vec<NodeDisk>,
    /// The Progress judge's bounds, worked out from the run's knobs (`None`: the world was never
    /// built).
    pub progress: Option<felix_audits::progress::Bounds>,
    /// How many voters the run's cluster has (nodes `0..voters`), for CommittedDurable (`None`:
    /// the world was never built).
    pub voters: Option<felix_core::NodeId>,
}

pub struct World {
    /// The seed every stream of this world was split from (named in the trace's first line).
    seed: u64,
    /// The schedule this world records, if asked (`Setup::schedule`).
    schedule: Option<Schedule>,
    /// What the last node step left to carry out (a buffer reused across steps).
    effects: Vec<Effect>,
    rules: Rules,
    knobs: Knobs,
    queue: EventQueue<Ev>,
    network: Network,
    disk_stream: Stream,
    /// The storage faults' draws (knob `storage_faults`), apart so that no other draw moves.
    storage_stream: Stream,
    fault_stream: Stream,
    workload: Stream,
    nodes: Vec<NodeSlot>,
    clients: Vec<ClientSlot>,
    lease: LeaseService,
    /// The broken writer, when the knob `broken_runs` is on (`breaker.rs`).
    breaker: Option<breaker::Breaker>,
    /// The paros writer token in force (as the lease service sees owners) and the owner holding it.
    owner_token: u64,
    owner_current: Option<usize>,
    recorder: Recorder,
    phase: Phase,
    /// The quiesce began: writers send nothing more.
    quiesced: bool,
    events: u64,
    /// This run's event budget: `EVENTS_PER_SECOND_MAX` per simulated second of its length.
    events_max: u64,
    /// What `count` counted: an array indexed by the counter, so counting is one add.
    counters: Counts,
    finished: bool,
    /// The committed index of every node at the previous settle check, when they agreed.
    settle_last: Option<Vec<Option<u64>>>,
    exhausted: Option<String>,
    panicked: Option<String>,
    /// The highest offset any node has reported committed.
    cluster_committed: u64,
    /// The newest writer token of a committed fence record.
    fence_committed: u64,
    buggify: crate::seeded::buggify::Buggify,
    /// Trace validation's observer, if any (`run_observed`).
    observer: Option<Box<dyn Observer>>,
    /// With an observer: the client request the current event delivered, and to which node.
    observed_request: Option<(NodeId, Request)>,
    /// Stop once the history holds more events than `.0`, after `.1` events, or once the tape
    /// holds more draws than `.2` (`cut`), if set.
    cut: Option<(usize, u64, usize)>,
    /// The tape every draw goes through, if any: told where each event ends (`Tape::event_done`).
    tape: Option<Tape>,
    /// Hand back each node's durable disk at the end (`keep_disks`).
    keep_disks: bool,
    /// The fork this world is a continuation of (`Setup::fork`), until its streams are re-keyed.
    fork: Option<crate::seeded::fork::Fork>,
}

impl World {
    /// Hands back what each node's disk durably holds at the end of the run (`Ran::disks`).
    /// Reading the disks changes nothing: the run is the same, event for event.
    pub fn keep_disks(&mut self) {
        self.keep_disks = true;
    }

    /// Sets the observer called after every handled event.
    pub fn set_observer(&mut self, observer: Box<dyn Observer>) {
        self.observer = Some(observer);
    }

    /// Ends the run after the event that records history event `history`, after `events` events,
    /// or after the first event that leaves more than `draws` draws on the world's tape, whichever
    /// comes first (or when it ends on its own): the shrinker judges a run only up to its
    /// violation, and a safety violation at history step `history` shows in every prefix that
    /// holds it. The run up to the cut is the same, event for event; a cut run is neither finished
    /// nor exhausted (no End marker, so liveness is not judged).
    pub fn cut(&mut self, history: usize, events: u64, draws: usize) {
        self.cut = Some((history, events, draws));
    }

    /// Every node of the world in id order: voters first, then replicas; `None` while crashed.
    pub fn brokers(&self) -> impl Iterator<Item = Option<&Broker>> + '_ {
        self.nodes.iter().map(|slot| slot.host.broker.as_ref())
    }

    /// The number of voting brokers (nodes `0..voters`); the rest are replicas.
    pub fn voters(&self) -> usize {
        self.knobs.brokers as usize
    }

    /// The rules this run is under.
    pub fn rules(&self) -> Rules {
        self.rules
    }

    /// Trace lines written so far: the step of the next line.
    pub fn trace_steps(&self) -> u64 {
        self.recorder.steps()
    }

    /// The client request the event just handled delivered to a node, if any (recorded only
    /// while an observer is set).
    pub fn delivered_request(&self) -> Option<(NodeId, &Request)> {
        self.observed_request
            .as_ref()
            .map(|(node, request)| (*node, request))
    }

    /// The history recorded so far.
    pub fn history_events(&self) -> &[Event] {
        &self.recorder.history
    }

    /// The world `setup` describes, before its first event.
    fn new(setup: Setup) -> World {
        let Setup {
            seed,
            rules,
            knobs,
            keep_trace,
            tape,
            schedule,
            ..
        } = setup;
        let tape = tape.as_ref();
        let mut clocks = Stream::taped(seed, Component::Clocks, tape);
        let mut draw_clock = |knobs: &Knobs| Clock {
            skew_micros: clocks.range(0, 2 * knobs.clock_skew_max_micros as u64) as i64
                - knobs.clock_skew_max_micros,
            drift_ppm: clocks.range(0, 2 * knobs.clock_drift_max_ppm as u64) as i64
                - knobs.clock_drift_max_ppm,
        };
        let layout = knobs.layout();
        let node_count = knobs.brokers + knobs.replicas;
        let nodes: Vec<NodeSlot> = (0..node_count)
            .map(|id| NodeSlot {
                id,
                host: Host::new(
                    node::config(id, &knobs, rules),
                    nodes::disk(&knobs, layout, id),
                    HELD_MAX,
                    SyncStart::Eager,
                    schedule.clone(),
                ),
                clock: draw_clock(&knobs),
                timeouts: Stream::taped(seed, Component::Timeouts(id), tape),
                past: std::collections::VecDeque::new(),
                incarnation: 0,
                lost: false,
            })
            .collect();
        let roles = clients::client_roles(&knobs);
        let breaker = breaker::Breaker::of(&roles, &knobs);
        let clients: Vec<ClientSlot> = roles
            .into_iter()
            .enumerate()
            .map(|(index, (role, joined))| {
                ClientSlot::new(index as ClientId, role, joined, draw_clock(&knobs))
            })
            .collect();
        World {
            seed,
            effects: Vec::new(),
            rules,
            queue: EventQueue::new(PENDING_MAX),
            network: Network::new(
                Stream::taped(seed, Component::Network, tape),
                knobs.network.clone(),
            ),
            disk_stream: Stream::taped(seed, Component::Disk, tape),
            storage_stream: Stream::taped(seed, Component::Storage, tape),
            fault_stream: Stream::taped(seed, Component::Faults, tape),
            workload: Stream::taped(seed, Component::Workload, tape),
            nodes,
            clients,
            lease: LeaseService::new(knobs.lease_micros),
            breaker,
            owner_token: 0,
            owner_current: None,
            recorder: Recorder::new(keep_trace, schedule.clone()),
            schedule,
            phase: Phase::Safety,
            quiesced: false,
            events: 0,
            events_max: events_max(&knobs),
            counters: Counts::default(),
            finished: false,
            settle_last: None,
            exhausted: None,
            panicked: None,
            cluster_committed: 0,
            fence_committed: 0,
            buggify: crate::seeded::buggify::Buggify::new(
                Stream::taped(seed, Component::Buggify, tape),
                &knobs.buggify,
            ),
            observer: None,
            observed_request: None,
            cut: None,
            tape: tape.cloned(),
            keep_disks: false,
            fork: None,
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

    fn count(&mut self, counter: Counter) {
        self.counters.add(counter, 1);
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

    /// Plants `slip` in every file-store disk's file system (a test proving that the judges catch
    /// a store that skips fsyncs; `world::run`'s `prepare`). Changes nothing on in-memory disks.
    pub fn plant_slip(&mut self, slip: crate::env::file_system::Slip) {
        for slot in &mut self.nodes {
            slot.host.disk.plant_slip(slip);
        }
    }

    /// Plants a slip in every node's host: each acknowledgement of appended records goes on the
    /// wire claiming one record more than its node matched (a test proving that CommittedDurable
    /// catches a leader that counts records a follower does not hold; `world::run`'s `prepare`).
    /// No run the CLI makes has it.
    pub fn plant_ack_one_high(&mut self) {
        for slot in &mut self.nodes {
            slot.host.plant_ack_one_high();
        }
    }

    /// Lowers this run's event budget to `max` events (never raises it): a test that plants a slip
    /// whose runs livelock (`plant_ack_one_high`'s walk back and forth) cuts them sooner, as an
    /// `EventBudget` finding, instead of spending the whole budget on each. `world::run`'s
    /// `prepare`; no run the CLI makes has it.
    pub fn cap_events(&mut self, max: u64) {
        self.events_max = self.events_max.min(max);
    }

    fn sim(&mut self, event: SimEvent) {
        let now = self.now();
        self.recorder.sim(now, event);
    }

    /// Starts the run: the trace's first line, the nodes, the clients' first wakes, the
    /// workload, the first fault and the phase deadlines. `label` names the configuration in the
    /// trace (a twin name, or a control run).
    fn start(&mut self, label: Option<String>) {
        let knobs_json = serde_json::to_value(&self.knobs).unwrap_or_default();
        self.sim(SimEvent::Started {
            trace_format: crate::render::trace::TRACE_FORMAT,
            seed: self.seed,
            twin: label,
            knobs: knobs_json,
        });
        self.history(Event::PhaseChanged {
            phase: Phase::Safety,
        });
        if self.knobs.file_store {
            self.count(Counter::FileStoreRuns);
        }
        for index in 0..self.nodes.len() {
            self.start_node(index, |host| host.start(false));
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
        let quiesce = self.knobs.liveness_micros / QUIESCE_SHARE;
        self.queue.push_after(
            self.knobs.safety_micros + self.knobs.liveness_micros - quiesce,
            Ev::Quiesce,
        );
        self.queue.push_after(
            self.knobs.safety_micros + self.knobs.liveness_micros,
            Ev::End,
        );
    }

    /// The run's outcome, after the loop stopped (at its end, its budget, its cut, or the event
    /// that panicked with `panicked`).
    fn finish(mut self, panicked: Option<String>) -> Ran {
        if let Some(message) = panicked {
            self.sim(SimEvent::Finished {
                reason: format!("panic: {message}"),
            });
            self.panicked = Some(message);
        }
        let simulated_micros = self.now();
        let layout = SegmentLayout {
            records_per_segment: self.knobs.records_per_segment,
        };
        let disks = (self.nodes.iter())
            .filter(|_| self.keep_disks)
            .map(|slot| NodeDisk::of(slot.id, layout, &slot.host))
            .collect();
        Ran {
            recorder: self.recorder,
            events: self.events,
            simulated_micros,
            counters: self.counters,
            exhausted: self.exhausted,
            panicked: self.panicked,
            observer: self.observer,
            disks,
            progress: Some(crate::judge::progress_bounds(&self.knobs)),
            voters: Some(felix_core::NodeId::from(self.knobs.brokers)),
        }
    }
}

/// What a world is made of: the seed its streams split from, the rules and the knobs, and what
/// the caller records. A run is a function of its setup.
#[derive(Clone, Debug)]
pub struct Setup {
    pub seed: u64,
    pub rules: Rules,
    pub knobs: Knobs,
    /// Keep every trace line (for `--trace`, determinism checks and the failing-run summary).
    pub keep_trace: bool,
    /// Names the configuration in the trace (a twin name, or a control run).
    pub label: Option<String>,
    /// Every draw of the world's streams goes through this tape (recorded or replayed), if set.
    pub tape: Option<Tape>,
    /// The world records its schedule here, if set (what each host was given, and the lines).
    pub schedule: Option<Schedule>,
    /// A continuation: the run of (seed, rules, knobs) with every stream that draws the future
    /// re-keyed after trace step `fork.step` (`fork`).
    pub fork: Option<crate::seeded::fork::Fork>,
}

impl Setup {
    /// A plain run: nothing recorded but the history (and the lines, if `keep_trace`).
    pub fn new(seed: u64, rules: Rules, knobs: Knobs, keep_trace: bool) -> Setup {
        Setup {
            seed,
            rules,
            knobs,
            keep_trace,
            label: None,
            tape: None,
            schedule: None,
            fork: None,
        }
    }
}

/// Builds a world and runs it to the end of its liveness phase (or its budget, or its cut):
/// the one place a run's panics are caught. `prepare` sets what the caller watches or cuts
/// (`World::set_observer`, `World::cut`) before the first event. A panic is an assert of the core
/// (or of the simulator) firing, a bug found: it is caught around the whole build and loop (not
/// around each event: moving every popped event into a closure of its own cost a tenth of a
/// sweep's time), so the trace up to that event survives for the replay, and the loop stops at
/// the event that panicked either way.
pub fn run(setup: Setup, prepare: impl FnOnce(&mut World)) -> Ran {
    let keep_trace = setup.keep_trace;
    let label = forks::label(setup.label.clone(), setup.fork);
    let fork = setup.fork;
    let mut slot: Option<World> = None;
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let world = slot.insert(World::new(setup));
        world.fork = fork;
        prepare(world);
        world.start(label);
        world.drive();
    }));
    let panicked = outcome.err().map(|payload| panic_message(payload.as_ref()));
    match slot {
        Some(world) => world.finish(panicked),
        // The world panicked while it was built: nothing ran, nothing was recorded.
        None => Ran {
            recorder: Recorder::new(keep_trace, None),
            events: 0,
            simulated_micros: 0,
            counters: Counts::default(),
            exhausted: None,
            panicked: Some(panicked.unwrap_or_default()),
            observer: None,
            disks: Vec::new(),
            progress: None,
            voters: None,
        },
    }
}

impl World {
    /// The event loop: pops and handles events until the run ends, its event budget is spent,
    /// or the shrinker's cut is reached. A panic unwinds out of it to `run`.
    fn drive(&mut self) {
        while let Some(event) = self.queue.pop() {
            self.events += 1;
            if self.events > self.events_max {
                self.exhaust(format!(
                    "the run processed {} events without finishing ({EVENTS_PER_SECOND_MAX} per \
                     simulated second of its length, EVENTS_PER_SECOND_MAX): a livelock",
                    self.events_max
                ));
            }
            if self.exhausted.is_some() {
                break;
            }
            if self.fork.is_some() {
                self.fork_if_due();
            }
            self.handle(event);
            if self.exhausted.is_none() {
                if let Some(mut observer) = self.observer.take() {
                    observer.after_event(self);
                    self.observer = Some(observer);
                    self.observed_request = None;
                }
            }
            if let Some(tape) = &self.tape {
                tape.event_done(self.recorder.history.len(), self.events);
            }
            if self.finished || self.exhausted.is_some() {
                break;
            }
            if let Some((history, events, draws)) = self.cut {
                let drawn = self.tape.as_ref().map_or(0, Tape::drawn);
                if self.recorder.history.len() > history || self.events >= events || drawn > draws {
                    break;
                }
            }
        }
    }

    fn handle(&mut self, event: Ev) {
        match event {
            Ev::Deliver { from, to, payload } => self.deliver(from, to, payload),
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
            Ev::Quiesce => self.quiesce(),
            Ev::SettleCheck => self.settle_check(),
            Ev::End => self.end("liveness deadline"),
            Ev::Buggify(act) => self.buggify_act(act),
        }
    }

    /// Ends the liveness phase early once every node is up and holds the same committed prefix,
    /// unchanged since the previous check (so in-flight work has landed).
    fn settle_check(&mut self) {
        if self.finished {
            return;
        }
        let committed: Vec<Option<u64>> = (self.nodes.iter())
            .filter(|slot| !slot.lost)
            .map(|slot| slot.host.broker.as_ref().map(Broker::committed))
            .collect();
        // Every node up (but those down for good), all at one committed index, and that index is
        // the cluster's: a node that just restarted has relearned nothing yet (committed 0),
        // which is not convergence.
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
            if let Some(event) = self.nodes[index].host.sample_always() {
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
