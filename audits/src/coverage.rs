//! Coverage counters: how often the paths the invariants guard were taken, so that a passing
//! sweep is not vacuous. They are not invariants; a sweep reports their totals, and a sweep in
//! which one stays at zero has not exercised that path.
//!
//! [`CATALOG`] declares every name a run's coverage map can hold (these counters, the probes of
//! `probes.rs`, the simulator's fault and BUGGIFY counters) once, with its meaning, whether it
//! counts a behaviour a sweep must reach or a problem that must stay at zero, and, for a
//! behaviour the rules in force make impossible, why (Antithesis' catalog of *sometimes*
//! assertions: a sweep that never reaches a behaviour proves nothing about it).

use felix_core::api::Reply;
use felix_core::history::Event;
use felix_core::rules::Rules;
use serde::Serialize;

/// What a cataloged name counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A behaviour a sweep must reach (a *sometimes*), unless the rules make it impossible.
    Sometimes,
    /// A problem: it must stay at zero; a sweep prints it when it does not.
    Problem,
}

/// Who counts a cataloged name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// `Coverage`, over the history.
    Counter,
    /// `probes::probes`, over the history.
    Probe,
    /// The simulator's world (faults, the driver, BUGGIFY sites).
    Sim,
}

/// One cataloged name.
#[derive(Clone, Copy, Debug)]
pub struct Entry {
    pub name: &'static str,
    pub origin: Origin,
    pub kind: Kind,
    /// What one count means, in one line.
    pub meaning: &'static str,
    /// Why no run under these rules can count it, if none can.
    pub unreachable: fn(&Rules) -> Option<&'static str>,
}

impl Entry {
    /// Whether a sweep under `rules` must reach it: a behaviour the rules allow.
    pub fn required(&self, rules: &Rules) -> bool {
        self.kind == Kind::Sometimes && (self.unreachable)(rules).is_none()
    }
}

fn reachable(_: &Rules) -> Option<&'static str> {
    None
}

fn only_trims_delete(rules: &Rules) -> Option<&'static str> {
    (!rules.retention_deletes()).then_some("only trims delete (retention off)")
}

fn no_tag(rules: &Rules) -> Option<&'static str> {
    let tagged = rules.floor_tag && rules.trims_visible && !rules.readers_see_trims();
    (!tagged).then_some("a refusal carries no tag under these rules")
}

fn sequencing_checks_fence(_: &Rules) -> Option<&'static str> {
    Some(
        "the sequencing step refuses a stale fence (FenceMismatch) against the log with its \
         uncommitted records, and log matching gives the walk the same writer there; with the \
         fence check off the walk refuses nothing (reachable in ParosTrimJump, which does not \
         check when sequencing)",
    )
}

const fn entry(
    name: &'static str,
    origin: Origin,
    meaning: &'static str,
    unreachable: fn(&Rules) -> Option<&'static str>,
) -> Entry {
    Entry {
        name,
        origin,
        kind: Kind::Sometimes,
        meaning,
        unreachable,
    }
}

const fn sim(name: &'static str, meaning: &'static str) -> Entry {
    entry(name, Origin::Sim, meaning, reachable)
}

const fn probe(name: &'static str, meaning: &'static str) -> Entry {
    entry(name, Origin::Probe, meaning, reachable)
}

const fn counter(name: &'static str, meaning: &'static str) -> Entry {
    entry(name, Origin::Counter, meaning, reachable)
}

/// Every name a run's coverage map may hold, declared once.
pub const CATALOG: &[Entry] = &[
    Entry {
        unreachable: no_tag,
        ..counter(
            "stale_holder_retired_by_tag",
            "a stale holder retired on a tagged CursorTooOld",
        )
    },
    counter(
        "promise_sent",
        "a node sent a term it adopted in a message (PromiseSent without a vote)",
    ),
    counter(
        "vote_grant_sent",
        "a node sent a vote grant (PromiseSent with a vote)",
    ),
    counter(
        "ack_sent",
        "a node acknowledged appended records (AckSent: an accepting AppendReply left it)",
    ),
    counter(
        "broker_jumped",
        "a below-floor broker jumped to a peer's trim point",
    ),
    counter(
        "replica_jumped",
        "a below-floor replica jumped to a peer's trim point",
    ),
    counter(
        "read_below_trim_refused",
        "a read below the readable start was refused CursorTooOld",
    ),
    counter(
        "checkpoint_restored",
        "a folder restored its state from a checkpoint run",
    ),
    counter(
        "read_not_held",
        "a jumped node answered a read below its trim point NotHeld",
    ),
    counter(
        "history_checked",
        "a history was proved or refuted Linearizable within budget",
    ),
    Entry {
        kind: Kind::Problem,
        ..counter(
            "history_unchecked",
            "a history was over the Linearizable checker's budget: neither proved nor refuted",
        )
    },
    probe(
        "stale_holder_refused",
        "a holder with an older epoch than the newest was refused",
    ),
    probe(
        "stale_holder_acts",
        "a holder behind a newer fenced holder sent a write or trim",
    ),
    probe("untagged_refusal", "a CursorTooOld carried no tag"),
    Entry {
        unreachable: no_tag,
        ..probe(
            "tagged_refusal",
            "a CursorTooOld carried the floor-setting trim's headers",
        )
    },
    probe(
        "noop_trim_answered",
        "a trim at or below the floor was answered TrimNoop",
    ),
    probe(
        "noop_trim_refused",
        "a trim at or below the floor was refused by its tail or fence",
    ),
    probe(
        "trim_to_own_offset",
        "a trim landed at the very floor it asked for",
    ),
    probe("not_held", "a read was answered NotHeld"),
    probe(
        "gap_reported",
        "a reader was moved up to the floor and reported a gap",
    ),
    probe(
        "holder_retired_by_read",
        "a holder retired on what it read, not on a tag",
    ),
    Entry {
        unreachable: sequencing_checks_fence,
        ..probe(
            "truncate_refused",
            "a committed trim with a stale fence was refused in place",
        )
    },
    probe("segments_deleted", "a node deleted segments"),
    Entry {
        unreachable: only_trims_delete,
        ..probe(
            "retention_deleted",
            "retention, not the floor, chose what a node deleted",
        )
    },
    probe("earliest_read", "a client read from Earliest"),
    probe(
        "invalid_write_refused",
        "a write with malformed headers, or a body or headers over the limits, was refused Invalid",
    ),
    probe(
        "floor_past_itself_refused",
        "a trim asking for a floor above its own offset was refused Invalid",
    ),
    probe("leader_changed", "a node became leader"),
    probe(
        "deposed_leader_write",
        "a deposed leader's own write committed in its old term",
    ),
    probe(
        "ack_then_crash",
        "the node that acknowledged the last write crashed next",
    ),
    probe(
        "fence_deleted",
        "the newest writer's first write was deleted while an older one ran",
    ),
    probe(
        "stale_holder_too_old",
        "a stale holder's read was refused CursorTooOld",
    ),
    probe(
        "stale_holder_resumed",
        "a stale holder was served right after such a refusal",
    ),
    probe(
        "stale_holder_blind",
        "what it was then served names no newer writer",
    ),
    sim("crashes", "a node crashed (and restarted later)"),
    sim("clogs", "a link was clogged"),
    sim("partitions", "a partition was drawn"),
    sim("pauses", "a client was paused"),
    sim(
        "lease_moves",
        "the lease moved to another felixd process as a fault",
    ),
    sim("leases_granted", "the lease service granted a lease"),
    sim("fences_taken", "a paros owner took the writer fence"),
    sim("messages_dropped", "the network dropped a message"),
    sim(
        "appends_held_back",
        "a leader at its bound of appends in flight to a follower held records back from it \
         (`BrokerConfig::appends_in_flight_max`; counted per leader tick and follower)",
    ),
    sim("messages_duplicated", "the network duplicated a message"),
    sim(
        "messages_old",
        "a copy of a message between nodes came back a second or more later",
    ),
    sim(
        "messages_captured",
        "a message between nodes was held back and delivered a second or more later",
    ),
    sim(
        "late_replies",
        "a reply reached a client that no longer waited for it",
    ),
    sim(
        "client_timeouts",
        "a client gave up waiting (an unknown outcome)",
    ),
    sim(
        "holders_told_by_renewal",
        "a holder learned from a failed renewal that it lost",
    ),
    sim(
        "broken_runs",
        "a broken writer sent a checkpoint run no folder may restore",
    ),
    sim(
        "disk_bit_flipped",
        "a restart read its disk back with a bit flipped: found corrupt, down for good",
    ),
    sim(
        "disk_sector_zeroed",
        "a restart read its disk back with a sector zeroed: found corrupt, down for good",
    ),
    sim(
        "disk_write_misdirected",
        "a restart read a record at another record's place: found corrupt, down for good",
    ),
    sim(
        "disk_read_failed",
        "a restart could not read its disk and tried again later",
    ),
    sim(
        "file_store_runs",
        "a run whose disks were the real file store over the simulated file system (knob \
         `file_store`)",
    ),
    sim(
        "power_loss_dropped",
        "a crash of a file-store disk lost power and dropped writes or directory entry changes \
         not yet fsynced",
    ),
    sim(
        "owner_crashes_inside_run",
        "a paros owner died inside its checkpoint run",
    ),
    sim(
        "buggify_pause_after_ack",
        "BUGGIFY: a writer paused right after an acknowledgement",
    ),
    sim(
        "buggify_pause_in_flight",
        "BUGGIFY: a writer paused with a request in flight",
    ),
    sim(
        "buggify_lease_move_in_flight",
        "BUGGIFY: the lease moved with a write in flight",
    ),
    sim(
        "buggify_crash_after_ack",
        "BUGGIFY: the acknowledging node crashed",
    ),
    sim(
        "buggify_isolate_after_ack",
        "BUGGIFY: the acknowledging node was isolated",
    ),
    sim(
        "buggify_power_loss_after_ack",
        "BUGGIFY: the cluster lost power after an ack",
    ),
    sim("buggify_slow_sync", "BUGGIFY: a sync was slowed down"),
    sim(
        "buggify_read_after_jump",
        "BUGGIFY: a reader was aimed at a node that just jumped",
    ),
    sim(
        "buggify_replay_past",
        "BUGGIFY: a node's past messages came again after an election",
    ),
];

/// The catalog's entry for `name`, if it has one.
pub fn cataloged(name: &str) -> Option<&'static Entry> {
    CATALOG.iter().find(|entry| entry.name == name)
}

/// Counts over one history: the *sometimes* of the invariants (each path a judge guards was taken).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Coverage {
    /// A stale holder retired on a tagged CursorTooOld (`HolderRetired { by_tag: true }`).
    pub stale_holder_retired_by_tag: u64,
    /// A below-floor broker recovered by jumping to a peer's trim point.
    pub broker_jumped: u64,
    /// A below-floor replica did too.
    pub replica_jumped: u64,
    /// A read below the trim point was refused (`CursorTooOld` reached a client).
    pub read_below_trim_refused: u64,
    /// A folder restored its state from a checkpoint run.
    pub checkpoint_restored: u64,
    /// A jumped node answered a read below its trim point `NotHeld` before its walk reached the
    /// trim that set the sender's floor (the second seed's window; the reader asks another node).
    pub read_not_held: u64,
    /// The history was fully checked for Linearizable (proved or refuted) within its budget.
    pub history_checked: u64,
    /// The history was over the Linearizable checker's budget: neither proved nor refuted.
    pub history_unchecked: u64,
    /// A message carrying a term not sent before by its node left it (PromiseDurable judged it).
    pub promise_sent: u64,
    /// A vote grant left its node (PromiseDurable judged it against the durable vote).
    pub vote_grant_sent: u64,
    /// An acknowledgement of appended records left its node (PromiseDurable judged it against the
    /// durable log).
    pub ack_sent: u64,
}

impl Coverage {
    /// Adds another history's counts (for a sweep's totals).
    pub fn add(&mut self, other: &Coverage) {
        self.stale_holder_retired_by_tag += other.stale_holder_retired_by_tag;
        self.broker_jumped += other.broker_jumped;
        self.replica_jumped += other.replica_jumped;
        self.read_below_trim_refused += other.read_below_trim_refused;
        self.checkpoint_restored += other.checkpoint_restored;
        self.read_not_held += other.read_not_held;
        self.history_checked += other.history_checked;
        self.history_unchecked += other.history_unchecked;
        self.promise_sent += other.promise_sent;
        self.vote_grant_sent += other.vote_grant_sent;
        self.ack_sent += other.ack_sent;
    }

    /// Counts one Linearizable verdict as checked or unchecked.
    pub fn count_history_check(&mut self, verdict: &crate::linearizable::Verdict) {
        match verdict {
            crate::linearizable::Verdict::Unchecked { .. } => self.history_unchecked += 1,
            _ => self.history_checked += 1,
        }
    }

    /// The counters by name, in a fixed order (for summaries).
    pub fn named(&self) -> [(&'static str, u64); 11] {
        [
            (
                "stale_holder_retired_by_tag",
                self.stale_holder_retired_by_tag,
            ),
            ("broker_jumped", self.broker_jumped),
            ("replica_jumped", self.replica_jumped),
            ("read_below_trim_refused", self.read_below_trim_refused),
            ("checkpoint_restored", self.checkpoint_restored),
            ("read_not_held", self.read_not_held),
            ("history_checked", self.history_checked),
            ("history_unchecked", self.history_unchecked),
            ("promise_sent", self.promise_sent),
            ("vote_grant_sent", self.vote_grant_sent),
            ("ack_sent", self.ack_sent),
        ]
    }
}

/// Counts the covered paths in `history`.
pub fn coverage(history: &[Event]) -> Coverage {
    let mut counts = Coverage::default();
    for event in history {
        match event {
            Event::HolderRetired { by_tag: true, .. } => counts.stale_holder_retired_by_tag += 1,
            Event::Jumped { replica: false, .. } => counts.broker_jumped += 1,
            Event::Jumped { replica: true, .. } => counts.replica_jumped += 1,
            Event::Replied {
                reply: Reply::CursorTooOld { .. },
                ..
            } => counts.read_below_trim_refused += 1,
            Event::CheckpointRestored { .. } => counts.checkpoint_restored += 1,
            Event::Replied {
                reply: Reply::NotHeld { .. },
                ..
            } => counts.read_not_held += 1,
            Event::PromiseSent { vote: None, .. } => counts.promise_sent += 1,
            Event::PromiseSent { vote: Some(_), .. } => counts.vote_grant_sent += 1,
            Event::AckSent { .. } => counts.ack_sent += 1,
            _ => {}
        }
    }
    counts
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::read_request;

    /// Every counter and probe is cataloged once with a meaning, and every catalog entry the
    /// audits count is one of them; the marks follow the rules (retention, tags, the fence).
    #[test]
    fn the_catalog_declares_every_counter_and_probe_once() {
        let counters = Coverage::default().named().map(|(name, _)| name);
        for name in counters.iter().chain(crate::probes::PROBES.iter()) {
            let entries = CATALOG.iter().filter(|entry| entry.name == *name).count();
            assert_eq!(entries, 1, "{name}");
        }
        for entry in CATALOG {
            assert!(!entry.meaning.is_empty());
            assert_eq!(
                CATALOG
                    .iter()
                    .filter(|other| other.name == entry.name)
                    .count(),
                1,
                "{}",
                entry.name
            );
            match entry.origin {
                Origin::Counter => assert!(counters.contains(&entry.name), "{}", entry.name),
                Origin::Probe => assert!(crate::probes::PROBES.contains(&entry.name)),
                Origin::Sim => {}
            }
        }
        let rules = Rules::default();
        let required = |name| cataloged(name).is_some_and(|entry| entry.required(&rules));
        assert!(!required("retention_deleted"));
        assert!(!required("truncate_refused"));
        assert!(!required("history_unchecked"));
        assert!(required("untagged_refusal") && required("earliest_read"));
        assert!(required("tagged_refusal"));
        let retention = Rules::twin(felix_core::rules::TwinName::Retention);
        assert!(cataloged("retention_deleted").is_some_and(|entry| entry.required(&retention)));
        let untagged = Rules::twin(felix_core::rules::TwinName::Untagged);
        assert!(cataloged("tagged_refusal").is_some_and(|entry| !entry.required(&untagged)));
        assert_eq!(cataloged("nope").map(|entry| entry.name), None);
    }

    /// Each counter counts its own event and nothing else.
    #[test]
    fn counts_each_path() {
        let history = each_path();
        let counts = coverage(&history);
        assert_eq!(
            counts.named(),
            [
                ("stale_holder_retired_by_tag", 1),
                ("broker_jumped", 1),
                ("replica_jumped", 2),
                ("read_below_trim_refused", 1),
                ("checkpoint_restored", 1),
                ("read_not_held", 1),
                // Counted by `audit`, which runs the checker; `coverage` alone does not.
                ("history_checked", 0),
                ("history_unchecked", 0),
                ("promise_sent", 1),
                ("vote_grant_sent", 2),
                ("ack_sent", 1),
            ]
        );
        let mut total = counts;
        total.add(&counts);
        assert_eq!(total.replica_jumped, 4);
    }

    /// One event of each path `coverage` counts (and a few it does not).
    fn each_path() -> Vec<Event> {
        vec![
            Event::HolderRetired {
                client: 1,
                epoch: 1,
                newer_epoch: 2,
                by_tag: true,
            },
            Event::HolderRetired {
                client: 1,
                epoch: 1,
                newer_epoch: 2,
                by_tag: false,
            },
            Event::Jumped {
                node: 0,
                point: 5,
                replica: false,
            },
            Event::Jumped {
                node: 3,
                point: 5,
                replica: true,
            },
            Event::Jumped {
                node: 3,
                point: 9,
                replica: true,
            },
            Event::Replied {
                client: 2,
                node: 0,
                request: read_request(1),
                reply: Reply::CursorTooOld {
                    floor: 4,
                    tag: None,
                },
            },
            Event::CheckpointRestored {
                client: 4,
                begin: 4,
                end: 6,
            },
            Event::Replied {
                client: 2,
                node: 1,
                request: read_request(2),
                reply: Reply::NotHeld { from: 2 },
            },
            Event::PromiseSent {
                node: 1,
                to: 0,
                term: 2,
                vote: None,
            },
            Event::PromiseSent {
                node: 1,
                to: 0,
                term: 2,
                vote: Some(0),
            },
            Event::PromiseSent {
                node: 1,
                to: 2,
                term: 3,
                vote: Some(2),
            },
            Event::DurablePromise {
                node: 1,
                term: 3,
                vote: Some(2),
            },
            Event::DurableLog {
                node: 2,
                last: 4,
                term: 3,
            },
            Event::AckSent {
                node: 2,
                to: 1,
                term: 3,
                matched: 4,
                matched_term: Some(3),
            },
        ]
    }
}
