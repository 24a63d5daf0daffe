//! The knobs in words: one line for humans, every knob in it.

use super::{Knobs, Workload};

impl Knobs {
    /// One line for humans, every knob in it (the JSON form is in the trace's first line and in
    /// `felix replay --knobs`).
    pub fn describe(&self) -> String {
        let workload = match &self.workload {
            Workload::Felixd { holders } => format!("felixd holders={holders}"),
            Workload::Paros { owners, folders } => {
                format!("paros owners={owners} folders={folders}")
            }
        };
        let network = &self.network;
        let buggify: Vec<String> = self
            .buggify
            .iter()
            .map(|site| format!("{site:?}"))
            .collect();
        format!(
            "brokers={} replicas={} {workload} readers={} segment={} \
             net: drop={} dup={} delay={}..{}us long={}<={}us \
             sync={}..{}us tick={}us lease={}us renew={}us skew<={}us drift<={}ppm \
             faults: gap={}us partition={} clog={} crash={} pause={} lease_move={} \
             downtime<={}us duration<={}us told={} renew_lost={} keeps={} torn={} \
             clients: gap={}us ops={} trim={} owner_crash={} lag={}..{} timeout={}us \
             safety={}us liveness={}us buggify=[{}] \
             raft: append<={} in_flight<={} heartbeat={} election={}..{} ticks prober={} \
             old messages={}<={}us{}{}{}{}{}{}",
            self.brokers,
            self.replicas,
            self.readers,
            self.records_per_segment,
            network.drop_per_million,
            network.duplicate_per_million,
            network.delay_min_micros,
            network.delay_max_micros,
            network.long_delay_per_million,
            network.long_delay_max_micros,
            self.sync_min_micros,
            self.sync_max_micros,
            self.tick_micros,
            self.lease_micros,
            self.renew_micros,
            self.clock_skew_max_micros,
            self.clock_drift_max_ppm,
            self.fault_gap_micros,
            self.weight_partition,
            self.weight_clog,
            self.weight_crash,
            self.weight_pause,
            self.weight_lease_move,
            self.downtime_max_micros,
            self.fault_duration_max_micros,
            self.lease_move_told_per_million,
            self.renew_lost_per_million,
            self.crash_keeps_per_million,
            self.torn_per_million,
            self.client_gap_micros,
            self.op_per_million,
            self.trim_per_million,
            self.owner_crash_per_million,
            self.trim_lag_min,
            self.trim_lag_max,
            self.client_timeout_micros,
            self.safety_micros,
            self.liveness_micros,
            buggify.join(","),
            self.append_entries_max,
            self.appends_in_flight_max
                .map_or("unbounded".to_string(), |max| max.to_string()),
            self.heartbeat_ticks,
            self.election_ticks_min,
            self.election_ticks_max,
            self.prober,
            network.ancient_per_million,
            network.ancient_max_micros,
            if network.ancient_captures {
                " captured"
            } else {
                ""
            },
            if self.broken_runs {
                " broken_runs=true"
            } else {
                ""
            },
            self.storage_faults
                .map(|faults| format!(
                    " storage: damage={} read_error={}",
                    faults.damage_per_million, faults.read_error_per_million
                ))
                .unwrap_or_default(),
            if self.prober_at_edges {
                " prober_at_edges=true"
            } else {
                ""
            },
            if self.file_store {
                " file_store=true"
            } else {
                ""
            },
            self.writer_words(),
        )
    }
}

impl Knobs {
    /// The writers' pipeline and stickiness, and the partitions of the leader with its writers,
    /// in `describe`'s words: nothing at one write in flight, none and off.
    fn writer_words(&self) -> String {
        let mut words = String::new();
        if self.pipeline_depth > 1 {
            words += &format!(" pipeline_depth={}", self.pipeline_depth);
        }
        if self.sticky_timeouts > 0 {
            words += &format!(" sticky_timeouts={}", self.sticky_timeouts);
        }
        if self.leader_partitions {
            words += " leader_partitions=true";
        }
        words
    }
}
