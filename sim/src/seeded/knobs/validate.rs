//! The knobs' checks: what a run can take (for knobs given by a user, and of every draw).

use super::{
    Knobs, Workload, DURATION_MAX_MICROS, PIPELINE_DEPTH_MAX, SEGMENT_RECORDS_MAX,
    STICKY_TIMEOUTS_MAX, WEIGHT_MAX,
};

impl Knobs {
    /// Why these knobs cannot drive a run, if they cannot (for knobs given by a user).
    pub fn validate(&self) -> Result<(), String> {
        self.validate_storage_faults()?;
        self.validate_replication()?;
        self.validate_sizes()?;
        let per_million = [
            ("drop_per_million", self.network.drop_per_million),
            ("duplicate_per_million", self.network.duplicate_per_million),
            (
                "long_delay_per_million",
                self.network.long_delay_per_million,
            ),
            ("ancient_per_million", self.network.ancient_per_million),
            (
                "lease_move_told_per_million",
                self.lease_move_told_per_million,
            ),
            ("crash_keeps_per_million", self.crash_keeps_per_million),
            ("renew_lost_per_million", self.renew_lost_per_million),
            ("torn_per_million", self.torn_per_million),
            ("op_per_million", self.op_per_million),
            ("trim_per_million", self.trim_per_million),
            ("owner_crash_per_million", self.owner_crash_per_million),
        ];
        // The bounds kept as constants are written from them, so a message states its check.
        let segment = format!("records_per_segment: 1..={SEGMENT_RECORDS_MAX}");
        let pipeline = format!("pipeline_depth: 1..={PIPELINE_DEPTH_MAX} writes in flight");
        let sticky = format!("sticky_timeouts: at most {STICKY_TIMEOUTS_MAX}");
        let checks = [
            (
                self.brokers >= 3 && self.brokers % 2 == 1 && self.brokers <= 9,
                "brokers: an odd number in 3..=9",
            ),
            (self.replicas <= 8, "replicas: at most 8"),
            (self.readers <= 8, "readers: at most 8"),
            (
                match self.workload {
                    Workload::Felixd { holders } => (1..=8).contains(&holders),
                    Workload::Paros { owners, folders } => {
                        (1..=8).contains(&owners) && folders <= 8
                    }
                },
                "workload: 1..=8 holders or owners, at most 8 folders",
            ),
            (
                (1..=SEGMENT_RECORDS_MAX).contains(&self.records_per_segment),
                segment.as_str(),
            ),
            (
                self.sync_min_micros <= self.sync_max_micros,
                "sync_min_micros <= sync_max_micros",
            ),
            (
                self.network.delay_min_micros <= self.network.delay_max_micros,
                "delay_min_micros <= delay_max_micros",
            ),
            (
                self.tick_micros > 0 && self.lease_micros > 0 && self.renew_micros > 0,
                "tick, lease and renew durations above 0",
            ),
            (
                self.client_gap_micros > 0 && self.client_timeout_micros > 0,
                "client gap and timeout above 0",
            ),
            (self.fault_gap_micros > 0, "fault_gap_micros above 0"),
            (
                (1..=PIPELINE_DEPTH_MAX).contains(&self.pipeline_depth),
                pipeline.as_str(),
            ),
            (self.sticky_timeouts <= STICKY_TIMEOUTS_MAX, sticky.as_str()),
            (
                self.trim_lag_min <= self.trim_lag_max,
                "trim_lag_min <= trim_lag_max",
            ),
            (
                self.safety_micros > 0 && self.liveness_micros > 0,
                "safety and liveness phases above 0",
            ),
            (
                (0..1_000_000).contains(&self.clock_drift_max_ppm)
                    && self.clock_skew_max_micros >= 0,
                "clock drift in 0..1000000 ppm, skew at least 0",
            ),
        ];
        all_hold(&checks)?;
        at_most(&per_million, 1_000_000, "")
    }

    /// The replication shape is one a broker can run: a batch of 1..=64 records, a bound on
    /// appends in flight of at least one, heartbeats inside the shortest election timeout.
    fn validate_replication(&self) -> Result<(), String> {
        let checks = [
            (
                (1..=64).contains(&self.append_entries_max),
                "append_entries_max: 1..=64",
            ),
            (
                self.appends_in_flight_max
                    .is_none_or(|max| (1..=1_000_000).contains(&max)),
                "appends_in_flight_max: 1..=1000000 (null: no bound)",
            ),
            (
                self.election_ticks_min >= 2
                    && self.election_ticks_min < self.election_ticks_max
                    && self.election_ticks_max <= 1_000,
                "election ticks: 2 <= election_ticks_min < election_ticks_max <= 1000",
            ),
            (
                self.heartbeat_ticks >= 1
                    && self.heartbeat_ticks <= self.election_ticks_min.max(2) / 2,
                "heartbeat_ticks: at least 1, at most half of election_ticks_min",
            ),
        ];
        all_hold(&checks)
    }

    /// Every duration (and the clock skew) at most `DURATION_MAX_MICROS`, every fault weight at
    /// most `WEIGHT_MAX`, and the network's usual delays within its long ones (a long delay is
    /// drawn up from the usual ones' bound).
    fn validate_sizes(&self) -> Result<(), String> {
        let network = &self.network;
        let durations = [
            ("sync_min_micros", self.sync_min_micros),
            ("sync_max_micros", self.sync_max_micros),
            ("tick_micros", self.tick_micros),
            ("lease_micros", self.lease_micros),
            ("renew_micros", self.renew_micros),
            (
                "clock_skew_max_micros",
                self.clock_skew_max_micros.unsigned_abs(),
            ),
            ("fault_gap_micros", self.fault_gap_micros),
            ("downtime_max_micros", self.downtime_max_micros),
            ("fault_duration_max_micros", self.fault_duration_max_micros),
            ("client_gap_micros", self.client_gap_micros),
            ("client_timeout_micros", self.client_timeout_micros),
            ("safety_micros", self.safety_micros),
            ("liveness_micros", self.liveness_micros),
            ("network.delay_min_micros", network.delay_min_micros),
            ("network.delay_max_micros", network.delay_max_micros),
            (
                "network.long_delay_max_micros",
                network.long_delay_max_micros,
            ),
            ("network.ancient_max_micros", network.ancient_max_micros),
        ];
        at_most(
            &durations,
            DURATION_MAX_MICROS,
            " (an hour of simulated time)",
        )?;
        let weights = [
            ("weight_partition", self.weight_partition),
            ("weight_clog", self.weight_clog),
            ("weight_crash", self.weight_crash),
            ("weight_pause", self.weight_pause),
            ("weight_lease_move", self.weight_lease_move),
        ];
        at_most(&weights, WEIGHT_MAX, "")?;
        if network.delay_max_micros > network.long_delay_max_micros {
            return Err("network.delay_max_micros <= network.long_delay_max_micros".to_string());
        }
        Ok(())
    }

    /// The storage faults' chances are chances (at most one million per million).
    fn validate_storage_faults(&self) -> Result<(), String> {
        let Some(faults) = self.storage_faults else {
            return Ok(());
        };
        let chances = [
            (
                "storage_faults.damage_per_million",
                faults.damage_per_million,
            ),
            (
                "storage_faults.read_error_per_million",
                faults.read_error_per_million,
            ),
        ];
        at_most(&chances, 1_000_000, "")
    }
}

/// The message of the first of `checks` that fails: the one check of every knob whose bound is a
/// condition on it or on its relation to another.
fn all_hold(checks: &[(bool, &str)]) -> Result<(), String> {
    match checks.iter().find(|(ok, _)| !ok) {
        Some((_, message)) => Err(message.to_string()),
        None => Ok(()),
    }
}

/// The first of `named` above `max`, refused as `{name}: at most {max}{after}`: the one check of
/// every knob that has a ceiling of its own (chances, durations, weights).
fn at_most<T: Copy + PartialOrd + std::fmt::Display>(
    named: &[(&str, T)],
    max: T,
    after: &str,
) -> Result<(), String> {
    match named.iter().find(|&&(_, value)| value > max) {
        Some((name, _)) => Err(format!("{name}: at most {max}{after}")),
        None => Ok(()),
    }
}
