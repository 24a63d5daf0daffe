//! Swarm testing: the seed draws the knobs of its run.
//!
//! Sizes, fault rates, timings and the workload all come from the knobs stream, so a sweep covers
//! many shapes of world instead of one tuned configuration (swarm testing: a fault that masks
//! another is simply absent from some seeds). Each knob is drawn by the generic rules of `swarm`
//! (extremes, omitted features, weighted fault kinds and operations) and the active BUGGIFY sites
//! are drawn here too, so the knobs (printed in full) are everything the seed decided about its
//! world. With a twin (`felix sweep --twin`, the fast canary), the draw is biased towards the
//! faults and the workload that twin needs (more lease moves and pauses for the fencing twins,
//! stranded nodes for the jump twin, crashes for the durability twins), so
//! `felix replay --seed S --twin T` reruns exactly what `felix sweep --twin T` ran.

use crate::env::network::NetworkKnobs;
use crate::env::queue::Time;
use crate::env::rng::{Component, Stream};
use crate::seeded::buggify::Site;
use crate::seeded::swarm::Swarm;
use felix_core::TwinName;
use serde::{Deserialize, Serialize};

/// The workload of a run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Workload {
    /// felixd: lease holders writing and trimming, failing over as the lease moves.
    Felixd { holders: u32 },
    /// paros: a checkpoint owner (and its successors) with folders keeping the shared trim fence.
    Paros { owners: u32, folders: u32 },
}

/// Everything the seed decided about its run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Knobs {
    pub brokers: u32,
    pub replicas: u32,
    pub workload: Workload,
    pub readers: u32,
    pub records_per_segment: u64,
    pub network: NetworkKnobs,
    pub sync_min_micros: Time,
    pub sync_max_micros: Time,
    /// Broker tick period (elections and heartbeats are counted in ticks).
    pub tick_micros: Time,
    /// Lease duration on the lease service's clock.
    pub lease_micros: Time,
    /// How often (on its own clock) a holder renews its lease; it learns it lost the lease only
    /// from a failed renewal.
    pub renew_micros: Time,
    pub clock_skew_max_micros: i64,
    pub clock_drift_max_ppm: i64,
    /// Mean gap between two faults in the safety phase.
    pub fault_gap_micros: Time,
    /// Relative weights of the fault kinds.
    pub weight_partition: u32,
    pub weight_clog: u32,
    pub weight_crash: u32,
    pub weight_pause: u32,
    pub weight_lease_move: u32,
    /// How long a crashed node stays down (upper bound of the draw).
    pub downtime_max_micros: Time,
    /// How long a partition or a pause lasts (upper bound of the draw).
    pub fault_duration_max_micros: Time,
    /// The chance that a moved lease is announced to the old holder.
    pub lease_move_told_per_million: u32,
    /// The chance that the lease service's answer to a renewal is lost (the holder keeps
    /// believing it holds the lease and retries later); at one million, holders never learn from
    /// renewals that the lease moved: only the tail fence stops them.
    #[serde(default)]
    pub renew_lost_per_million: u32,
    /// The chance that a crash keeps some unsynced ops, and tears the next record.
    pub crash_keeps_per_million: u32,
    pub torn_per_million: u32,
    /// Gap between two client wake-ups.
    pub client_gap_micros: Time,
    /// Chance that a working writer (holder, owner) submits an operation when it wakes.
    pub op_per_million: u32,
    /// Chance that a client operation is a trim (or a checkpoint for the paros owner).
    pub trim_per_million: u32,
    /// Chance that a paros owner's checkpoint is one it dies inside (a run with no `End`).
    pub owner_crash_per_million: u32,
    /// A holder's trim asks for a floor this many offsets (drawn in the range) below its tail.
    pub trim_lag_min: u64,
    pub trim_lag_max: u64,
    /// How long a client waits for a reply before it calls the outcome unknown.
    pub client_timeout_micros: Time,
    /// Length of the safety phase (faults on).
    pub safety_micros: Time,
    /// Deadline of the liveness phase (faults healed) to reach Convergence.
    pub liveness_micros: Time,
    /// The BUGGIFY sites active in this run (`buggify`).
    #[serde(default)]
    pub buggify: Vec<Site>,
    /// The replication shape: at most this many records per AppendEntries (1..=64; 64 before
    /// the knob existed, the default of knobs printed without it).
    #[serde(default = "Replication::append_entries_max")]
    pub append_entries_max: u64,
    /// Ticks between a leader's heartbeats (at most half the shortest election timeout).
    #[serde(default = "Replication::heartbeat_ticks")]
    pub heartbeat_ticks: u64,
    /// Election timeouts are drawn in `election_ticks_min..=election_ticks_max` ticks.
    #[serde(default = "Replication::election_ticks_min")]
    pub election_ticks_min: u64,
    #[serde(default = "Replication::election_ticks_max")]
    pub election_ticks_max: u64,
    /// At most this many appends carrying records unanswered per follower at a leader
    /// (`BrokerConfig::appends_in_flight_max`); `null`: no bound, the default of knobs printed
    /// without it (a leader pipelined without limit before the knob existed).
    #[serde(default)]
    pub appends_in_flight_max: Option<u64>,
    /// A client that asks legal but rare things (reads from `Earliest` or from offset 0, reads
    /// past the tail) and breaks the contract (fences and truncates with made-up tokens, bodies
    /// and headers over the limits): `world/prober.rs`. Off in knobs printed without it.
    #[serde(default)]
    pub prober: bool,
    /// A broken writer (paros): the first owner now and then breaks the checkpoint run it writes
    /// (a chunk misnumbered, missing or altered, an `End` counting or summing wrong) and never
    /// truncates: `world/breaker.rs`. Left out of the knobs when false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub broken_runs: bool,
    /// The prober also asks at the edge of the contract: a trim for the floor one past its own
    /// offset (`world/prober.rs`, `Probe::TrimPastItself`). Only with the prober; left out of the
    /// knobs when false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub prober_at_edges: bool,
    /// Storage faults at a restart (`disk.rs`, `world/nodes.rs`): what the disk kept read back
    /// damaged (a flipped bit, a zeroed sector, a record written at another's place) or not read
    /// at all (a failed read, retried). Left out of the knobs when off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub storage_faults: Option<StorageFaults>,
    /// Each node's disk is the real file store over a simulated file system with power-loss
    /// semantics (`disk.rs`, `file_system.rs`): a crash is a power loss, a restart the store's
    /// own recovery. False (the in-memory store) in knobs printed without it; left out when false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub file_store: bool,
    /// Application writes a paros owner keeps in flight at once, as a producer pipelines its
    /// appends (`OwnerConfig::writes_in_flight_max`; a holder never pipelines). 1 (one request at
    /// a time) in knobs printed without it; left out when 1.
    #[serde(default = "pipeline_one", skip_serializing_if = "pipeline_is_one")]
    pub pipeline_depth: u32,
    /// A writer keeps sending to the same node through this many unknown outcomes in a row
    /// before it picks another, as a producer retries its leader until its metadata refresh (0:
    /// another node after each, as in knobs printed without it; left out when 0).
    #[serde(default, skip_serializing_if = "sticky_is_zero")]
    pub sticky_timeouts: u32,
    /// Partitions may also cut the current leader off together with the writers that send to it
    /// (Jepsen's partition of the primary): the minority side goes on taking writes it can never
    /// commit while the majority elects, fences and trims past them (`world/faults.rs`). False
    /// in knobs printed without it; left out when false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub leader_partitions: bool,
}

/// The most writes in flight `pipeline_depth` takes.
pub const PIPELINE_DEPTH_MAX: u32 = 16;
/// The longest a duration knob may be (and the widest clock skew), in microseconds: an hour of
/// simulated time, far above what the swarm draws (its longest phase is 64 s), and short enough
/// that no sum or product the run makes of its times overflows.
pub const DURATION_MAX_MICROS: Time = 3_600_000_000;
/// The most one fault kind may weigh: the five weights are added up in a `u32`.
pub const WEIGHT_MAX: u32 = 1_000_000;
/// The most records a segment may hold (as `felix serve --segment-records`): a segment's last
/// offset, and the records retention keeps, stay far inside an offset, so the file store can
/// name and read back every segment it writes.
pub const SEGMENT_RECORDS_MAX: u64 = 1 << 20;
/// The most unknown outcomes in a row `sticky_timeouts` takes.
pub const STICKY_TIMEOUTS_MAX: u32 = 64;

fn pipeline_one() -> u32 {
    1
}

fn pipeline_is_one(depth: &u32) -> bool {
    *depth == 1
}

fn sticky_is_zero(timeouts: &u32) -> bool {
    *timeouts == 0
}

/// The chances, per restart, of the storage faults (knob `storage_faults`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StorageFaults {
    /// The disk's bytes come back damaged, which the store must report as corruption; the node
    /// then stays down for good (at most a minority of the voters in a run: `disk.rs`).
    pub damage_per_million: u32,
    /// Reading the disk fails; the node tries again after a while.
    pub read_error_per_million: u32,
}

/// The share of `part` in `part + rest`, per million.
fn share_per_million(part: u32, rest: u32) -> u32 {
    (u64::from(part) * 1_000_000 / u64::from(part + rest)) as u32
}

/// The replication shape before it was drawn (the defaults of knobs printed without it).
pub struct Replication;

impl Replication {
    pub fn append_entries_max() -> u64 {
        64
    }
    pub fn heartbeat_ticks() -> u64 {
        3
    }
    pub fn election_ticks_min() -> u64 {
        10
    }
    pub fn election_ticks_max() -> u64 {
        20
    }
}

impl Knobs {
    /// Draws the knobs of `seed`, biased towards `twin` when one is given.
    ///
    /// The default swarm (no twin) is the same for every bug: every knob is drawn by one of the
    /// generic rules of `swarm` (a usual range, or with P = 1/4 an extreme), the fault kinds and
    /// the writers' operations get TigerBeetle-style weights (a random subset, weights 1..=100),
    /// and a random quarter of the BUGGIFY sites is active.
    pub fn draw(seed: u64, twin: Option<TwinName>) -> Knobs {
        let mut stream = Stream::new(seed, Component::Knobs);
        let mut w = Swarm::new(&mut stream);
        let brokers = w.pick(&[3, 3, 3, 3, 5]);
        let replicas = w.pick(&[0, 1, 1, 1, 2]);
        let workload = if w.stream().chance(550_000) {
            // One holder is the extreme that switches failover off.
            Workload::Felixd {
                holders: w.pick(&[1, 2, 2, 2, 3]),
            }
        } else {
            Workload::Paros {
                owners: w.pick(&[1, 2, 2, 3]),
                folders: w.pick(&[1, 1, 2, 3]),
            }
        };
        let readers = w.pick(&[0, 1, 2, 4]);
        let records_per_segment = w.span(2, 8, 1, 64);
        let network = Knobs::draw_network(&mut w);
        let sync_min_micros = w.span(50, 500, 10, 5_000);
        let sync_max_micros = sync_min_micros + w.span(0, 5_000, 0, 40_000);
        let tick_micros = w.span(5, 20, 1, 50) * 1_000;
        let lease_micros = w.span(100, 500, 20, 2_000) * 1_000;
        // Renewal from early to the brink of expiry (eighths of the lease).
        let renew_micros = lease_micros * w.pick(&[1, 2, 4, 6, 7]) / 8;
        let clock_skew_max_micros = w.span(0, 50, 0, 500) as i64 * 1_000;
        let clock_drift_max_ppm = w.pick(&[0, 1_000, 50_000, 200_000]);
        let fault_gap_micros = w.span(50, 400, 5, 2_000) * 1_000;
        let [weight_partition, weight_clog, weight_crash, weight_pause, weight_lease_move] =
            w.weights::<5>();
        let downtime_max_micros = w.span(100, 2_000, 1, 5_000) * 1_000;
        let fault_duration_max_micros = w.span(50, 1_000, 1, 3_000) * 1_000;
        let lease_move_told_per_million = w.pick(&[0, 100_000, 500_000, 900_000, 1_000_000]);
        let renew_lost_per_million = w.pick(&[0, 0, 0, 100_000, 500_000, 1_000_000]);
        let crash_keeps_per_million = w.span(0, 1_000_000, 0, 1_000_000) as u32;
        let torn_per_million = w.span(0, 1_000_000, 0, 1_000_000) as u32;
        let client_gap_micros = w.span(2_000, 30_000, 1_000, 200_000);
        let op_per_million = w.pick(&[50_000, 200_000, 500_000, 1_000_000, 1_000_000]);
        // The writers' operations: writes and trims (checkpoints for an owner), weighted.
        let [weight_write, weight_trim] = w.weights::<2>();
        let trim_per_million = share_per_million(weight_trim, weight_write);
        let owner_crash_per_million = w.pick(&[0, 50_000, 200_000, 500_000]);
        let trim_lag_max = w.pick(&[0, 1, 2, 3, 4, 6, 16]);
        let client_timeout_micros = w.span(100, 600, 10, 3_000) * 1_000;
        // Run length (simulated seconds of faults and work). Long enough for slow-burn histories:
        // a stale writer needs its lease to lapse, another holder to be appointed, fence, write
        // and fill segments before deletion, and the stale one to resume; leases last up to 2 s
        // and faults come every 5 ms to 2 s, so a 2-6 s run (the first rounds' range) saw a few
        // lease generations at most. VOPR and FoundationDB's simulator run long histories for the
        // same reason; a 1,000-seed sweep stays well inside CI's time budget.
        let safety_micros = w.span(16, 48, 8, 64) * 1_000_000;
        let buggify = Site::draw_active(w.stream());
        let knobs = Knobs {
            brokers,
            replicas,
            workload,
            readers,
            records_per_segment,
            network,
            sync_min_micros,
            sync_max_micros,
            tick_micros,
            lease_micros,
            renew_micros,
            clock_skew_max_micros,
            clock_drift_max_ppm,
            fault_gap_micros,
            weight_partition,
            weight_clog,
            weight_crash,
            weight_pause,
            weight_lease_move,
            downtime_max_micros,
            fault_duration_max_micros,
            lease_move_told_per_million,
            renew_lost_per_million,
            crash_keeps_per_million,
            torn_per_million,
            client_gap_micros,
            op_per_million,
            trim_per_million,
            owner_crash_per_million,
            trim_lag_min: 0,
            trim_lag_max,
            client_timeout_micros,
            safety_micros,
            liveness_micros: 10_000_000,
            buggify,
            append_entries_max: Replication::append_entries_max(),
            heartbeat_ticks: Replication::heartbeat_ticks(),
            election_ticks_min: Replication::election_ticks_min(),
            election_ticks_max: Replication::election_ticks_max(),
            appends_in_flight_max: None,
            prober: false,
            broken_runs: false,
            storage_faults: None,
            prober_at_edges: false,
            file_store: false,
            pipeline_depth: 1,
            sticky_timeouts: 0,
            leader_partitions: false,
        };
        knobs.drawn_late(twin, &mut stream)
    }

    /// The rest of `draw`: the twin's bias, the knobs drawn late and last, then the checks.
    fn drawn_late(mut self, twin: Option<TwinName>, stream: &mut Stream) -> Knobs {
        if let Some(twin) = twin {
            self.bias(twin, stream);
        }
        self.draw_late(stream);
        self.draw_last(stream);
        self.normalize();
        self.check();
        self
    }

    /// The network's delays and fault rates.
    fn draw_network(w: &mut Swarm) -> NetworkKnobs {
        let delay_min_micros = w.span(100, 1_000, 10, 1_000);
        let delay_max_micros = delay_min_micros + w.span(0, 5_000, 0, 30_000);
        NetworkKnobs {
            drop_per_million: w.pick(&[0, 10_000, 50_000, 150_000, 300_000]),
            duplicate_per_million: w.pick(&[0, 10_000, 50_000, 200_000]),
            delay_min_micros,
            delay_max_micros,
            long_delay_per_million: w.pick(&[0, 20_000, 100_000, 300_000]),
            long_delay_max_micros: delay_max_micros + w.span(10_000, 200_000, 10_000, 1_000_000),
            ancient_per_million: 0,
            ancient_max_micros: 0,
            ancient_captures: false,
        }
    }

    /// The knobs drawn after every other (a twin's bias included), so that adding them moved no
    /// earlier draw of any seed: the late BUGGIFY sites first, then the replication shape, the
    /// prober, old messages.
    fn draw_late(&mut self, s: &mut Stream) {
        self.buggify.extend(Site::draw_active_late(s));
        let mut w = Swarm::new(s);
        self.append_entries_max = w.pick(&[1, 2, 3, 4, 8, 16, 32, 64]);
        self.heartbeat_ticks = w.pick(&[1, 2, 3, 4, 6]);
        self.election_ticks_min = w.pick(&[3, 5, 10, 10, 20]);
        self.election_ticks_max = self.election_ticks_min + w.pick(&[1, 5, 10, 10, 30]);
        self.prober = !w.omitted();
        if !w.omitted() {
            self.network.ancient_per_million = w.pick(&[100, 1_000, 10_000, 50_000]);
            self.network.ancient_max_micros = w.span(2, 8, 1, 20) * 1_000_000;
        }
    }

    /// The knobs drawn after `draw_late`, for the same reason: whether old messages are captured
    /// rather than copied (only where old messages are on), the BUGGIFY sites added last, the
    /// broken writer (only where the workload has checkpoint owners), and the storage faults (in
    /// half the seeds), then the appends a leader keeps in flight per follower (1 to no bound).
    fn draw_last(&mut self, s: &mut Stream) {
        if self.network.ancient_per_million > 0 {
            self.network.ancient_captures = Swarm::new(s).pick(&[false, true]);
        }
        self.buggify.extend(Site::draw_active_last(s));
        // Only where there are checkpoint owners to break: a knob with no effect is not drawn.
        if matches!(self.workload, Workload::Paros { .. }) {
            self.broken_runs = Swarm::new(s).pick(&[false, true]);
        }
        let mut w = Swarm::new(s);
        if w.pick(&[false, true]) {
            self.storage_faults = Some(StorageFaults {
                damage_per_million: w.pick(&[20_000, 100_000, 300_000, 1_000_000]),
                read_error_per_million: w.pick(&[0, 0, 0, 20_000, 100_000]),
            });
        }
        // Only where there is a prober to ask.
        if self.prober {
            self.prober_at_edges = Swarm::new(s).pick(&[false, true]);
        }
        self.appends_in_flight_max =
            Swarm::new(s).pick(&[Some(1), Some(2), Some(3), Some(4), Some(8), None]);
        // Drawn after every other knob, so that it moved no earlier draw of any seed.
        self.file_store = Swarm::new(s).pick(&[false, false, false, true]);
        // Only where owners write, and after the file store for the same reason. A holder
        // re-reads after an unknown outcome, and a node cut off from the majority refuses the
        // read, which moves the holder elsewhere: stickiness is drawn with the pipeline.
        if matches!(self.workload, Workload::Paros { .. }) {
            self.pipeline_depth = Swarm::new(s).pick(&[1, 1, 2, 3, 5, 8]);
            self.sticky_timeouts = Swarm::new(s).pick(&[0, 0, 1, 2, 4, 8]);
        }
        // Only where lease holders write (a site with no moment is not drawn), and last, for the
        // reason the pipeline's comment gives.
        if matches!(self.workload, Workload::Felixd { .. }) {
            self.buggify.extend(Site::draw_active_final(s));
        }
        // Only where partitions come: a knob with no effect is not drawn.
        if self.weight_partition > 0 {
            self.leader_partitions = Swarm::new(s).pick(&[false, true]);
        }
    }

    /// Restores what `draw` guarantees after knobs were changed one by one (a guided sweep's
    /// mutations): ordered ranges, a renewal inside the lease, election timeouts that outlast
    /// durable round trips.
    pub fn normalize(&mut self) {
        self.sync_max_micros = self.sync_max_micros.max(self.sync_min_micros);
        let network = &mut self.network;
        network.delay_max_micros = network.delay_max_micros.max(network.delay_min_micros);
        network.long_delay_max_micros = network.long_delay_max_micros.max(network.delay_max_micros);
        self.trim_lag_max = self.trim_lag_max.max(self.trim_lag_min);
        self.buggify.sort();
        self.buggify.dedup();
        // The edges are the prober's: no prober, no edges.
        self.prober_at_edges &= self.prober;
        self.pipeline_depth = self.pipeline_depth.clamp(1, PIPELINE_DEPTH_MAX);
        self.sticky_timeouts = self.sticky_timeouts.min(STICKY_TIMEOUTS_MAX);
        // A live holder renews in time: its renewal (on its drifting clock, checked when it wakes,
        // a round trip to the lease service) lands before the lease lapses. Operators size leases
        // to their clients' renewal path; a lease shorter than that moves on forever, even after
        // every fault healed (seen with 20 ms leases and 27 ms client gaps), and no cluster fed
        // a fenced write every few milliseconds converges. Lapses still come from pauses,
        // partitions and slow clocks of the safety phase.
        let slack = self.client_gap_micros * 3 / 2 + 2 * self.network.delay_max_micros;
        self.lease_micros = self.lease_micros.max(2 * slack);
        let drift = self.clock_drift_max_ppm.clamp(0, 999_999) as u64;
        let renew_max = (self.lease_micros - slack) * (1_000_000 - drift) / 1_000_000;
        self.renew_micros = self.renew_micros.clamp(1, renew_max.max(1));
        // An election needs two durable round trips (the candidate's vote, the voter's): with a
        // timeout shorter than that, candidates time each other out forever (seen with 48 ms
        // syncs and 5 ms ticks). Operators size election timeouts to their disks; so do we: the
        // shortest timeout (`election_ticks_min` ticks) spans four of them.
        self.append_entries_max = self.append_entries_max.clamp(1, 64);
        self.appends_in_flight_max = self
            .appends_in_flight_max
            .map(|max| max.clamp(1, 1_000_000));
        self.election_ticks_min = self.election_ticks_min.max(2);
        self.election_ticks_max = self.election_ticks_max.max(self.election_ticks_min + 1);
        // A leader heartbeats well inside the shortest timeout, or followers campaign against it
        // forever once the faults heal.
        self.heartbeat_ticks = self
            .heartbeat_ticks
            .clamp(1, (self.election_ticks_min / 2).max(1));
        let round_trip = self.sync_max_micros + self.network.delay_max_micros;
        let tick_floor = (4 * round_trip).div_ceil(self.election_ticks_min);
        self.tick_micros = self.tick_micros.max(tick_floor);
    }

    /// A stale lease holder, what every fencing twin needs: leases that move more often without
    /// the old holder being told, holders paused more often (`pause` more, from at least
    /// `pause`), and renewals with a quarter of the lease to spare.
    fn untold_lease_moves(&mut self, pause: u32) {
        self.weight_lease_move = self.weight_lease_move.max(3) + 3;
        self.weight_pause = self.weight_pause.max(pause) + pause;
        self.lease_move_told_per_million = 0;
        self.renew_micros = self.lease_micros * 3 / 4;
    }

    /// Pushes the draw towards what `twin` needs to show its bug.
    fn bias(&mut self, twin: TwinName, s: &mut Stream) {
        match twin {
            TwinName::HiddenTrims | TwinName::Untagged | TwinName::ReadFromEarliest => {
                // The trim that hides the fence: the new holder trims up to its own records right
                // after its fenced write, while the old holder is frozen below the new floor.
                self.workload = Workload::Felixd {
                    holders: s.range(2, 3) as u32,
                };
                self.untold_lease_moves(3);
                self.trim_per_million = 700_000;
                self.trim_lag_min = 0;
                self.trim_lag_max = 1;
                self.records_per_segment = self.records_per_segment.min(3);
            }
            TwinName::NoopSkip | TwinName::TailFromRefusal | TwinName::CompactActive => {
                self.workload = Workload::Felixd {
                    holders: s.range(2, 3) as u32,
                };
                self.untold_lease_moves(2);
                self.trim_per_million = self.trim_per_million.max(300_000);
                self.records_per_segment = self.records_per_segment.min(3);
            }
            TwinName::VisibleTrims => {
                // Retention must delete the new holder's fenced write while only noops stay above
                // the readable start (a visible trim would tell): a quiet new holder, small
                // segments, frequent leader changes.
                self.workload = Workload::Felixd { holders: 3 };
                self.weight_lease_move = self.weight_lease_move.max(3) + 6;
                self.weight_pause = self.weight_pause.max(3) + 6;
                self.weight_partition = self.weight_partition.max(3) + 3;
                self.weight_crash = self.weight_crash.max(3) + 3;
                self.fault_gap_micros = s.range(20, 80) * 1_000;
                self.lease_move_told_per_million = 0;
                self.renew_micros = self.lease_micros * 3 / 4;
                self.op_per_million = 100_000;
                self.trim_per_million = 300_000;
                self.records_per_segment = 1;
            }
            TwinName::Retention => {
                // Retention must delete the new holder's fenced write while every record above it
                // is bookkeeping (its trims, leader noops): a holder that mostly trims, small
                // segments, and a stale holder frozen with work queued.
                self.workload = Workload::Felixd {
                    holders: [2, 2, 2, 3][s.index(4)],
                };
                self.untold_lease_moves(3);
                self.op_per_million = 1_000_000;
                self.trim_per_million = 850_000;
                // Floors well below the tail: retention, not the trims, decides where reads
                // start, so a refusal carries no tag.
                self.trim_lag_min = 3;
                self.trim_lag_max = 8;
                self.records_per_segment = s.range(1, 2);
            }
            TwinName::JumpResetsTerm => {
                self.weight_crash = self.weight_crash.max(3) + 3;
                self.downtime_max_micros = self.downtime_max_micros.max(2_000_000);
                self.trim_per_million = self.trim_per_million.max(300_000);
                self.records_per_segment = 2;
            }
            TwinName::UnfencedTruncate => {
                self.workload = Workload::Paros {
                    owners: 2,
                    folders: s.range(1, 3) as u32,
                };
                self.weight_lease_move = self.weight_lease_move.max(3) + 3;
                self.weight_pause = self.weight_pause.max(2) + 2;
                self.lease_move_told_per_million = 0;
                self.trim_per_million = self.trim_per_million.max(300_000);
            }
            TwinName::FloorPastCommit => {
                self.weight_crash = self.weight_crash.max(3) + 3;
                self.weight_partition = self.weight_partition.max(2) + 2;
                self.crash_keeps_per_million = 0;
                self.sync_max_micros = self.sync_max_micros.max(self.sync_min_micros + 20_000);
                self.trim_per_million = self.trim_per_million.max(300_000);
            }
            TwinName::AckBeforeSync => {
                // An acknowledgement that outruns the sync is lost only if a crash lands inside
                // the sync window and the rest of the cluster moves on without the record: slow
                // syncs, a busy writer, frequent crashes and partitions.
                self.weight_crash = self.weight_crash.max(4) + 4;
                self.weight_partition = self.weight_partition.max(2) + 2;
                self.fault_gap_micros = s.range(20, 80) * 1_000;
                self.crash_keeps_per_million = 0;
                self.sync_min_micros = s.range(5, 15) * 1_000;
                self.sync_max_micros = self.sync_min_micros + s.range(10, 40) * 1_000;
                self.op_per_million = 1_000_000;
                self.client_gap_micros = s.range(1, 5) * 1_000;
            }
            // LocalReads and the others need nothing drawn on purpose; TagAtFloor is the model's.
            _ => {}
        }
    }

    /// The knobs are consistent (a bug in `draw` otherwise).
    fn check(&self) {
        if let Err(message) = self.validate() {
            panic!("inconsistent knobs: {message}: {}", self.describe());
        }
    }

    /// Knobs printed as JSON (`felix replay --knobs`), checked.
    pub fn parse(json: &str) -> Result<Knobs, String> {
        let knobs: Knobs =
            serde_json::from_str(json).map_err(|error| format!("not knobs JSON: {error}"))?;
        knobs.validate()?;
        Ok(knobs)
    }

    /// The nodes' segment layout.
    pub fn layout(&self) -> felix_core::storage::SegmentLayout {
        felix_core::storage::SegmentLayout {
            records_per_segment: self.records_per_segment,
        }
    }

    /// Total weight of the fault kinds (0: a fault-free safety phase).
    pub fn fault_weight(&self) -> u32 {
        self.weight_partition
            + self.weight_clog
            + self.weight_crash
            + self.weight_pause
            + self.weight_lease_move
    }
}

mod describe;
mod validate;
