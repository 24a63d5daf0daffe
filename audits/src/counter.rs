//! The counters a run reports, named once: the audits' coverage counters (`coverage`), the
//! probes (`probes`), and the simulator's fault, driver and BUGGIFY counters. A counter is a
//! `Counter` from where it is counted to where it is printed; its name (`Counter::name`) is for
//! the edges only: summaries, JSON, and names read back from a user or a file
//! (`Counter::parse`). What each one means is in the catalog (`coverage::CATALOG`, one entry per
//! counter, checked when the crate compiles).
//!
//! `Counts` holds a run's counts (or a sweep's sums) in an array indexed by the counter.

use crate::validated::Validated;
use serde::ser::{Serialize, SerializeMap, Serializer};
use std::fmt;

/// Declares `Counter` with one variant per name. The variants are listed in the alphabetical
/// order of their names, so that a counter's order (`Ord`, and `Counts`'s iteration) is its
/// name's: every summary lists counters alphabetically, and the guided campaign walks them in
/// that order (`counters_are_in_name_order` holds the list to it).
macro_rules! counters {
    ($($variant:ident = $name:literal,)*) => {
        /// One counter a run can report.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Counter {
            $($variant,)*
        }

        impl Counter {
            /// Every counter, in name order (its index is the counter's `as usize`).
            pub const ALL: [Counter; [$(Counter::$variant,)*].len()] = [$(Counter::$variant,)*];

            /// The counter's name, as summaries, JSON and the catalog print it.
            pub const fn name(self) -> &'static str {
                match self {
                    $(Counter::$variant => $name,)*
                }
            }
        }
    };
}

counters! {
    AckSent = "ack_sent",
    AckThenCrash = "ack_then_crash",
    AppendsHeldBack = "appends_held_back",
    BrokenRuns = "broken_runs",
    BrokerJumped = "broker_jumped",
    BuggifyCrashAfterAck = "buggify_crash_after_ack",
    BuggifyIsolateAfterAck = "buggify_isolate_after_ack",
    BuggifyLeaseMoveInFlight = "buggify_lease_move_in_flight",
    BuggifyPauseAfterAck = "buggify_pause_after_ack",
    BuggifyPauseInFlight = "buggify_pause_in_flight",
    BuggifyPowerLossAfterAck = "buggify_power_loss_after_ack",
    BuggifyReadAfterJump = "buggify_read_after_jump",
    BuggifyReplayPast = "buggify_replay_past",
    BuggifyRestartAfterAck = "buggify_restart_after_ack",
    BuggifySlowSync = "buggify_slow_sync",
    CheckpointRestored = "checkpoint_restored",
    ClientTimeouts = "client_timeouts",
    Clogs = "clogs",
    Crashes = "crashes",
    DeposedLeaderWrite = "deposed_leader_write",
    DiskBitFlipped = "disk_bit_flipped",
    DiskReadFailed = "disk_read_failed",
    DiskSectorZeroed = "disk_sector_zeroed",
    DiskWriteMisdirected = "disk_write_misdirected",
    EarliestRead = "earliest_read",
    FenceDeleted = "fence_deleted",
    FencesTaken = "fences_taken",
    FileStoreRuns = "file_store_runs",
    FloorPastItselfRefused = "floor_past_itself_refused",
    GapReported = "gap_reported",
    HistoryChecked = "history_checked",
    HistoryUnchecked = "history_unchecked",
    HolderMetOwnFloor = "holder_met_own_floor",
    HolderRetiredByRead = "holder_retired_by_read",
    HoldersToldByRenewal = "holders_told_by_renewal",
    InvalidWriteRefused = "invalid_write_refused",
    LateReplies = "late_replies",
    LeaderChanged = "leader_changed",
    LeaseMoves = "lease_moves",
    LeasesGranted = "leases_granted",
    MessagesCaptured = "messages_captured",
    MessagesDropped = "messages_dropped",
    MessagesDuplicated = "messages_duplicated",
    MessagesOld = "messages_old",
    NoopTrimAnswered = "noop_trim_answered",
    NoopTrimRefused = "noop_trim_refused",
    NotHeld = "not_held",
    OwnerCrashesInsideRun = "owner_crashes_inside_run",
    Partitions = "partitions",
    Pauses = "pauses",
    PowerLossDropped = "power_loss_dropped",
    PromiseSent = "promise_sent",
    ReadBelowTrimRefused = "read_below_trim_refused",
    ReadNotHeld = "read_not_held",
    ReplicaJumped = "replica_jumped",
    RetentionDeleted = "retention_deleted",
    SegmentsDeleted = "segments_deleted",
    StaleHolderActs = "stale_holder_acts",
    StaleHolderBlind = "stale_holder_blind",
    StaleHolderRefused = "stale_holder_refused",
    StaleHolderResumed = "stale_holder_resumed",
    StaleHolderRetiredByTag = "stale_holder_retired_by_tag",
    StaleHolderTooOld = "stale_holder_too_old",
    TaggedRefusal = "tagged_refusal",
    TrimToOwnOffset = "trim_to_own_offset",
    TruncateRefused = "truncate_refused",
    UntaggedRefusal = "untagged_refusal",
    VoteGrantSent = "vote_grant_sent",
}

impl Counter {
    /// How many counters there are.
    pub const COUNT: usize = Counter::ALL.len();

    /// The counter named `name`, if there is one (names read from a user or a file).
    pub fn parse(name: &str) -> Option<Counter> {
        let index = Counter::ALL.partition_point(|counter| counter.name() < name);
        Counter::ALL
            .get(index)
            .copied()
            .filter(|counter| counter.name() == name)
    }

    /// The catalog's entry for this counter: what it means, who counts it, whether a sweep
    /// must reach it.
    pub fn entry(self) -> &'static crate::coverage::Entry {
        crate::coverage::entry(self)
    }
}

impl fmt::Display for Counter {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.name())
    }
}

/// One entry of `Counts`: a counter, or one of trace validation's counts by its name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Key {
    Counter(Counter),
    /// A count of the validation tally (`Validated::entries`: `validated_*`, by model, action
    /// and abstraction rule), named only when listed.
    Validated(String),
}

impl Key {
    pub fn name(&self) -> &str {
        match self {
            Key::Counter(counter) => counter.name(),
            Key::Validated(name) => name,
        }
    }
}

impl fmt::Display for Key {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.name())
    }
}

/// Counts by counter: one run's (the audits' coverage counters and probes, the simulator's
/// counters) or a sweep's sums. A counter is either counted (present, maybe at zero) or absent:
/// the audits report every one of theirs, the simulator only those it counted at least once,
/// and a summary of a run lists what is present.
///
/// Beside the counters, a validated run's (or a sweep's summed) validation tally, absent when
/// no run was validated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Counts {
    counters: [Option<u64>; Counter::COUNT],
    validated: Option<Validated>,
}

impl Default for Counts {
    fn default() -> Counts {
        Counts {
            counters: [None; Counter::COUNT],
            validated: None,
        }
    }
}

impl Counts {
    /// The count of `counter`, if present.
    pub fn get(&self, counter: Counter) -> Option<u64> {
        self.counters[counter as usize]
    }

    /// The count of `counter`, zero when absent.
    pub fn count(&self, counter: Counter) -> u64 {
        self.get(counter).unwrap_or(0)
    }

    /// Sets `counter`'s count (present from now on).
    pub fn set(&mut self, counter: Counter, count: u64) {
        self.counters[counter as usize] = Some(count);
    }

    /// Adds `count` to `counter` (present from now on, even when `count` is zero).
    pub fn add(&mut self, counter: Counter, count: u64) {
        let slot = &mut self.counters[counter as usize];
        *slot = Some(slot.unwrap_or(0) + count);
    }

    /// Sets the count named `name`, as a file names it: a counter's name sets that counter, a
    /// name of the validation tally (`Validated::set`) that count; any other name is an error.
    pub fn insert(&mut self, name: &str, count: u64) -> Result<(), String> {
        if let Some(counter) = Counter::parse(name) {
            self.set(counter, count);
            return Ok(());
        }
        let present = self.validated.is_some();
        let validated = self.validated.get_or_insert_with(Validated::default);
        let known = validated.set(name, count);
        if !known && !present {
            self.validated = None;
        }
        if known {
            Ok(())
        } else {
            Err(format!("unknown count {name:?}"))
        }
    }

    /// Adds every count of `other` (a sweep's totals): what either holds is present.
    pub fn sum(&mut self, other: &Counts) {
        for (counter, count) in other.counters() {
            self.add(counter, count);
        }
        if let Some(validated) = &other.validated {
            self.add_validated(validated);
        }
    }

    /// The counters present, in name order.
    pub fn counters(&self) -> impl Iterator<Item = (Counter, u64)> + '_ {
        (Counter::ALL.iter())
            .filter_map(|counter| self.get(*counter).map(|count| (*counter, count)))
    }

    /// The validation tally, when a run was validated.
    pub fn validated(&self) -> Option<&Validated> {
        self.validated.as_ref()
    }

    /// Adds a validated run's tally.
    pub fn add_validated(&mut self, validated: &Validated) {
        self.validated
            .get_or_insert_with(Validated::default)
            .sum(validated);
    }

    /// Every count present, counters and the validation tally's counts together, in name order
    /// (as summaries list them).
    pub fn entries(&self) -> Vec<(Key, u64)> {
        let mut entries: Vec<(Key, u64)> = (self.counters())
            .map(|(counter, count)| (Key::Counter(counter), count))
            .collect();
        if let Some(validated) = &self.validated {
            let named = validated.entries().into_iter();
            entries.extend(named.map(|(name, count)| (Key::Validated(name), count)));
            entries.sort_by(|(one, _), (other, _)| one.name().cmp(other.name()));
        }
        entries
    }
}

impl Serialize for Counts {
    /// A JSON object of every count present, by name, in name order.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let entries = self.entries();
        let mut map = serializer.serialize_map(Some(entries.len()))?;
        for (key, count) in &entries {
            map.serialize_entry(key.name(), count)?;
        }
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The variants are declared in the alphabetical order of their names, so that iterating
    /// counters in their own order lists them as a map by name would (summaries, the guided
    /// campaign's walk); `ALL` holds each at its index.
    #[test]
    fn counters_are_in_name_order() {
        for (index, counter) in Counter::ALL.iter().enumerate() {
            assert_eq!(*counter as usize, index, "{counter}");
        }
        for pair in Counter::ALL.windows(2) {
            assert!(pair[0].name() < pair[1].name(), "{} {}", pair[0], pair[1]);
            assert!(pair[0] < pair[1]);
        }
    }

    /// Every name parses back to its counter; anything else parses to nothing.
    #[test]
    fn names_parse_back() {
        for counter in Counter::ALL {
            assert_eq!(Counter::parse(counter.name()), Some(counter));
        }
        for other in [
            "",
            "crash",
            "crashes ",
            "Crashes",
            "validated_steps",
            "zzz",
            "aaa",
        ] {
            assert_eq!(Counter::parse(other), None, "{other:?}");
        }
    }

    /// Absent is not zero; a sum keeps whatever either side held; the validation tally's counts
    /// are listed by name among the counters; JSON is the same list; unknown names are refused.
    #[test]
    fn counts_keep_presence_and_name_order() {
        let mut run = Counts::default();
        assert!(run.entries().is_empty());
        run.set(Counter::Crashes, 0);
        run.add(Counter::AckSent, 2);
        assert_eq!(run.insert("validated_steps", 5), Ok(()));
        assert_eq!(run.insert("vote_grant_sent", 1), Ok(()));
        assert!(run.insert("validated_nothing", 1).is_err());
        assert!(run.insert("nothing", 1).is_err());
        assert_eq!(run.get(Counter::Crashes), Some(0));
        assert_eq!(run.get(Counter::Clogs), None);
        assert_eq!(run.count(Counter::Clogs), 0);
        let mut total = Counts::default();
        total.sum(&run);
        total.sum(&run);
        let listed: Vec<String> = (total.entries().iter())
            .map(|(key, count)| format!("{key}={count}"))
            .collect();
        assert_eq!(
            listed,
            [
                "ack_sent=4",
                "crashes=0",
                "validated_holder_requests=0",
                "validated_matched=0",
                "validated_steps=10",
                "validated_stutters=0",
                "vote_grant_sent=2"
            ]
        );
        let json = serde_json::to_string(&total).ok();
        assert_eq!(
            json.as_deref(),
            Some(concat!(
                r#"{"ack_sent":4,"crashes":0,"validated_holder_requests":0,"validated_matched":0,"#,
                r#""validated_steps":10,"validated_stutters":0,"vote_grant_sent":2}"#
            ))
        );
    }
}
