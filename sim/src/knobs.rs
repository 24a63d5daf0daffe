//! Swarm testing: the seed draws the knobs of its run.
//!
//! Sizes, fault rates, timings and the workload all come from the knobs stream, so a sweep covers
//! many shapes of world instead of one tuned configuration (swarm testing: a fault that masks
//! another is simply absent from some seeds). With a twin, the draw is biased towards the faults
//! and the workload that twin needs (more lease moves and pauses for the fencing twins, stranded
//! nodes for the jump twin, crashes for the durability twins), so `felix replay --seed S --twin T`
//! reruns exactly what `felix sweep --twin T` ran.

use crate::network::NetworkKnobs;
use crate::queue::Time;
use crate::rng::{Component, Stream};
use felix_core::Twin;
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
}

impl Knobs {
    /// Draws the knobs of `seed`, biased towards `twin` when one is given.
    pub fn draw(seed: u64, twin: Option<Twin>) -> Knobs {
        let mut stream = Stream::new(seed, Component::Knobs);
        let s = &mut stream;
        let brokers = if s.chance(200_000) { 5 } else { 3 };
        // The defaults (1 replica, 2 holders) are the most likely draws; the others keep the
        // swarm honest.
        let replicas = [0, 1, 1, 1, 2][s.index(5)];
        let workload = if s.chance(550_000) {
            Workload::Felixd {
                holders: [2, 2, 2, 3][s.index(4)],
            }
        } else {
            Workload::Paros {
                owners: s.range(1, 2) as u32,
                folders: s.range(1, 3) as u32,
            }
        };
        let delay_min_micros = s.range(100, 1_000);
        let delay_max_micros = delay_min_micros + s.range(0, 5_000);
        let network = NetworkKnobs {
            drop_per_million: [0, 10_000, 50_000, 150_000][s.index(4)],
            duplicate_per_million: [0, 10_000, 50_000][s.index(3)],
            delay_min_micros,
            delay_max_micros,
            long_delay_per_million: [0, 20_000, 100_000][s.index(3)],
            long_delay_max_micros: delay_max_micros + s.range(10_000, 200_000),
        };
        let sync_min_micros = s.range(50, 500);
        let sync_max_micros = sync_min_micros + s.range(0, 5_000);
        let tick_micros = s.range(5, 20) * 1_000;
        let lease_micros = s.range(100, 500) * 1_000;
        let renew_micros = lease_micros * s.range(1, 3) / 4;
        let mut knobs = Knobs {
            brokers,
            replicas,
            workload,
            readers: s.range(0, 2) as u32,
            records_per_segment: s.range(2, 8),
            network,
            sync_min_micros,
            sync_max_micros,
            tick_micros,
            lease_micros,
            renew_micros,
            clock_skew_max_micros: s.range(0, 50) as i64 * 1_000,
            clock_drift_max_ppm: [0, 1_000, 50_000, 200_000][s.index(4)],
            fault_gap_micros: s.range(50, 400) * 1_000,
            weight_partition: s.range(0, 4) as u32,
            weight_clog: s.range(0, 3) as u32,
            weight_crash: s.range(0, 4) as u32,
            weight_pause: s.range(0, 4) as u32,
            weight_lease_move: s.range(0, 4) as u32,
            downtime_max_micros: s.range(100, 2_000) * 1_000,
            fault_duration_max_micros: s.range(50, 1_000) * 1_000,
            lease_move_told_per_million: [0, 500_000, 900_000][s.index(3)],
            crash_keeps_per_million: s.range(0, 1_000_000) as u32,
            torn_per_million: s.range(0, 1_000_000) as u32,
            client_gap_micros: s.range(1, 30) * 1_000,
            op_per_million: [1_000_000, 1_000_000, 500_000, 200_000][s.index(4)],
            trim_per_million: [50_000, 150_000, 300_000][s.index(3)],
            owner_crash_per_million: [0, 50_000, 200_000][s.index(3)],
            trim_lag_min: 0,
            trim_lag_max: s.range(1, 6),
            client_timeout_micros: s.range(100, 600) * 1_000,
            safety_micros: s.range(2, 6) * 1_000_000,
            liveness_micros: 10_000_000,
        };
        if let Some(twin) = twin {
            knobs.bias(twin, s);
        }
        // An election needs two durable round trips (the candidate's vote, the voter's): with a
        // timeout shorter than that, candidates time each other out forever (seen with 48 ms
        // syncs and 5 ms ticks). Operators size election timeouts to their disks; so do we: the
        // shortest timeout (`node::ELECTION_TIMEOUT_TICKS_MIN` ticks) spans four of them.
        let round_trip = knobs.sync_max_micros + knobs.network.delay_max_micros;
        let tick_floor = (4 * round_trip).div_ceil(crate::node::ELECTION_TIMEOUT_TICKS_MIN);
        knobs.tick_micros = knobs.tick_micros.max(tick_floor);
        knobs.check();
        knobs
    }

    /// Pushes the draw towards what `twin` needs to show its bug.
    fn bias(&mut self, twin: Twin, s: &mut Stream) {
        match twin {
            Twin::HiddenTrims | Twin::Untagged | Twin::ReadFromEarliest => {
                // The trim that hides the fence: the new holder trims up to its own records right
                // after its fenced write, while the old holder is frozen below the new floor.
                self.workload = Workload::Felixd {
                    holders: s.range(2, 3) as u32,
                };
                self.weight_lease_move = self.weight_lease_move.max(3) + 3;
                self.weight_pause = self.weight_pause.max(3) + 3;
                self.lease_move_told_per_million = 0;
                self.renew_micros = self.lease_micros * 3 / 4;
                self.trim_per_million = 700_000;
                self.trim_lag_min = 0;
                self.trim_lag_max = 1;
                self.records_per_segment = self.records_per_segment.min(3);
            }
            Twin::NoopSkip | Twin::TailFromRefusal | Twin::CompactActive => {
                self.workload = Workload::Felixd {
                    holders: s.range(2, 3) as u32,
                };
                self.weight_lease_move = self.weight_lease_move.max(3) + 3;
                self.weight_pause = self.weight_pause.max(2) + 2;
                self.lease_move_told_per_million = 0;
                self.renew_micros = self.lease_micros * 3 / 4;
                self.trim_per_million = self.trim_per_million.max(300_000);
                self.records_per_segment = self.records_per_segment.min(3);
            }
            Twin::VisibleTrims => {
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
            Twin::Retention => {
                // Retention must delete the new holder's fenced write while every record above it
                // is bookkeeping (its trims, leader noops): a holder that mostly trims, small
                // segments, and a stale holder frozen with work queued.
                self.workload = Workload::Felixd {
                    holders: [2, 2, 2, 3][s.index(4)],
                };
                self.weight_lease_move = self.weight_lease_move.max(3) + 3;
                self.weight_pause = self.weight_pause.max(3) + 3;
                self.lease_move_told_per_million = 0;
                self.renew_micros = self.lease_micros * 3 / 4;
                self.op_per_million = 1_000_000;
                self.trim_per_million = 850_000;
                // Floors well below the tail: retention, not the trims, decides where reads
                // start, so a refusal carries no tag.
                self.trim_lag_min = 3;
                self.trim_lag_max = 8;
                self.records_per_segment = s.range(1, 2);
            }
            Twin::JumpResetsTerm => {
                self.weight_crash = self.weight_crash.max(3) + 3;
                self.downtime_max_micros = self.downtime_max_micros.max(2_000_000);
                self.trim_per_million = self.trim_per_million.max(300_000);
                self.records_per_segment = 2;
            }
            Twin::UnfencedTruncate => {
                self.workload = Workload::Paros {
                    owners: 2,
                    folders: s.range(1, 3) as u32,
                };
                self.weight_lease_move = self.weight_lease_move.max(3) + 3;
                self.weight_pause = self.weight_pause.max(2) + 2;
                self.lease_move_told_per_million = 0;
                self.trim_per_million = self.trim_per_million.max(300_000);
            }
            Twin::FloorPastCommit => {
                self.weight_crash = self.weight_crash.max(3) + 3;
                self.weight_partition = self.weight_partition.max(2) + 2;
                self.crash_keeps_per_million = 0;
                self.sync_max_micros = self.sync_max_micros.max(self.sync_min_micros + 20_000);
                self.trim_per_million = self.trim_per_million.max(300_000);
            }
            Twin::AckBeforeSync => {
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
            Twin::LocalReads => {}
        }
    }

    /// The knobs are consistent (a bug in `draw` otherwise).
    fn check(&self) {
        assert!(self.brokers >= 3 && self.brokers % 2 == 1);
        assert!(self.records_per_segment >= 1);
        assert!(self.sync_min_micros <= self.sync_max_micros);
        assert!(self.safety_micros > 0 && self.liveness_micros > 0);
        assert!(self.clock_drift_max_ppm < 1_000_000);
    }

    /// Total weight of the fault kinds (0: a fault-free safety phase).
    pub fn fault_weight(&self) -> u32 {
        self.weight_partition
            + self.weight_clog
            + self.weight_crash
            + self.weight_pause
            + self.weight_lease_move
    }

    /// One line for humans.
    pub fn describe(&self) -> String {
        let workload = match &self.workload {
            Workload::Felixd { holders } => format!("felixd holders={holders}"),
            Workload::Paros { owners, folders } => {
                format!("paros owners={owners} folders={folders}")
            }
        };
        format!(
            "brokers={} replicas={} {workload} readers={} ops={} segment={} drop={} dup={} delay={}..{}us long={} sync={}..{}us tick={}us lease={}us skew<={}us drift<={}ppm faults: gap={}us partition={} clog={} crash={} pause={} lease_move={} told={} trim={} safety={}us liveness={}us",
            self.brokers,
            self.replicas,
            self.readers,
            self.op_per_million,
            self.records_per_segment,
            self.network.drop_per_million,
            self.network.duplicate_per_million,
            self.network.delay_min_micros,
            self.network.delay_max_micros,
            self.network.long_delay_per_million,
            self.sync_min_micros,
            self.sync_max_micros,
            self.tick_micros,
            self.lease_micros,
            self.clock_skew_max_micros,
            self.clock_drift_max_ppm,
            self.fault_gap_micros,
            self.weight_partition,
            self.weight_clog,
            self.weight_crash,
            self.weight_pause,
            self.weight_lease_move,
            self.lease_move_told_per_million,
            self.trim_per_million,
            self.safety_micros,
            self.liveness_micros,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every draw, biased or not, leaves the shortest election timeout four durable round trips
    /// long, so elections can finish once the faults heal.
    #[test]
    fn election_timeouts_outlast_durable_round_trips() {
        let twins = std::iter::once(None).chain(Twin::ALL.into_iter().map(Some));
        for twin in twins {
            for seed in 0..200 {
                let knobs = Knobs::draw(seed, twin);
                let round_trip = knobs.sync_max_micros + knobs.network.delay_max_micros;
                let timeout = knobs.tick_micros * crate::node::ELECTION_TIMEOUT_TICKS_MIN;
                assert!(
                    timeout >= 4 * round_trip,
                    "{twin:?} seed {seed}: {}",
                    knobs.describe()
                );
            }
        }
    }

    /// A seed always draws the same knobs, different seeds draw different worlds, and a twin's
    /// bias gives it the workload it needs.
    #[test]
    fn knobs_are_drawn_by_the_seed() {
        assert_eq!(Knobs::draw(11, None), Knobs::draw(11, None));
        let shapes: std::collections::BTreeSet<String> = (0..50)
            .map(|seed| Knobs::draw(seed, None).describe())
            .collect();
        assert!(shapes.len() > 40);
        for seed in 0..50 {
            let knobs = Knobs::draw(seed, Some(Twin::Untagged));
            assert!(matches!(knobs.workload, Workload::Felixd { .. }));
            assert_eq!(knobs.lease_move_told_per_million, 0);
            let knobs = Knobs::draw(seed, Some(Twin::UnfencedTruncate));
            assert!(matches!(knobs.workload, Workload::Paros { owners: 2, .. }));
        }
    }
}
