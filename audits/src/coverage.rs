//! Coverage counters: how often the paths the invariants guard were taken, so that a passing
//! sweep is not vacuous. They are not invariants; a sweep reports their totals, and a sweep in
//! which one stays at zero has not exercised that path.
//!
//! [`CATALOG`] declares every `Counter` a run can report (these counters, the probes of
//! `probes.rs`, the simulator's fault and BUGGIFY counters) once, with its meaning, whether it
//! counts a behaviour a sweep must reach or a problem that must stay at zero, and, for a
//! behaviour the rules in force make impossible, why (Antithesis' catalog of *sometimes*
//! assertions: a sweep that never reaches a behaviour proves nothing about it).

use crate::counter::Counter;
use felix_core::api::Reply;
use felix_core::history::Event;
use felix_core::rules::Rules;
use serde::Serialize;

/// What a cataloged counter counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A behaviour a sweep must reach (a *sometimes*), unless the rules make it impossible.
    Sometimes,
    /// A problem: it must stay at zero; a sweep prints it when it does not.
    Problem,
}

/// Who counts a cataloged counter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// `Coverage`, over the history.
    Counter,
    /// `probes::probes`, over the history.
    Probe,
    /// The simulator's world (faults, the driver, BUGGIFY sites).
    Sim,
}

/// One cataloged counter.
#[derive(Clone, Copy, Debug)]
pub struct Entry {
    pub counter: Counter,
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

const fn sometimes(
    counter: Counter,
    origin: Origin,
    meaning: &'static str,
    unreachable: fn(&Rules) -> Option<&'static str>,
) -> Entry {
    Entry {
        counter,
        origin,
        kind: Kind::Sometimes,
        meaning,
        unreachable,
    }
}

const fn sim(counter: Counter, meaning: &'static str) -> Entry {
    sometimes(counter, Origin::Sim, meaning, reachable)
}

const fn probe(counter: Counter, meaning: &'static str) -> Entry {
    sometimes(counter, Origin::Probe, meaning, reachable)
}

const fn counter(counter: Counter, meaning: &'static str) -> Entry {
    sometimes(counter, Origin::Counter, meaning, reachable)
}

/// Every counter, declared once (in any order: `INDEX` places each).
pub const CATALOG: [Entry; Counter::COUNT] = [
    Entry {
        unreachable: no_tag,
        ..counter(
            Counter::StaleHolderRetiredByTag,
            "a stale holder retired on a tagged CursorTooOld",
        )
    },
    counter(
        Counter::PromiseSent,
        "a node sent a term it adopted in a message (PromiseSent without a vote)",
    ),
    counter(
        Counter::VoteGrantSent,
        "a node sent a vote grant (PromiseSent with a vote)",
    ),
    counter(
        Counter::AckSent,
        "a node acknowledged appended records (AckSent: an accepting AppendReply left it)",
    ),
    counter(
        Counter::BrokerJumped,
        "a below-floor broker jumped to a peer's trim point",
    ),
    counter(
        Counter::ReplicaJumped,
        "a below-floor replica jumped to a peer's trim point",
    ),
    counter(
        Counter::ReadBelowTrimRefused,
        "a read below the readable start was refused CursorTooOld",
    ),
    counter(
        Counter::CheckpointRestored,
        "a folder restored its state from a checkpoint run",
    ),
    counter(
        Counter::ReadNotHeld,
        "a jumped node answered a read below its trim point NotHeld",
    ),
    counter(
        Counter::HistoryChecked,
        "a history was proved or refuted Linearizable within budget",
    ),
    Entry {
        kind: Kind::Problem,
        ..counter(
            Counter::HistoryUnchecked,
            "a history was over the Linearizable checker's budget: neither proved nor refuted",
        )
    },
    probe(
        Counter::StaleHolderRefused,
        "a holder with an older epoch than the newest was refused",
    ),
    probe(
        Counter::StaleHolderActs,
        "a holder behind a newer fenced holder sent a write or trim",
    ),
    probe(Counter::UntaggedRefusal, "a CursorTooOld carried no tag"),
    Entry {
        unreachable: no_tag,
        ..probe(
            Counter::TaggedRefusal,
            "a CursorTooOld carried the floor-setting trim's headers",
        )
    },
    probe(
        Counter::NoopTrimAnswered,
        "a trim at or below the floor was answered TrimNoop",
    ),
    probe(
        Counter::NoopTrimRefused,
        "a trim at or below the floor was refused by its tail or fence",
    ),
    probe(
        Counter::TrimToOwnOffset,
        "a trim landed at the very floor it asked for",
    ),
    probe(Counter::NotHeld, "a read was answered NotHeld"),
    probe(
        Counter::GapReported,
        "a reader was moved up to the floor and reported a gap",
    ),
    probe(
        Counter::HolderRetiredByRead,
        "a holder retired on what it read, not on a tag",
    ),
    Entry {
        unreachable: sequencing_checks_fence,
        ..probe(
            Counter::TruncateRefused,
            "a committed trim with a stale fence was refused in place",
        )
    },
    probe(Counter::SegmentsDeleted, "a node deleted segments"),
    Entry {
        unreachable: only_trims_delete,
        ..probe(
            Counter::RetentionDeleted,
            "retention, not the floor, chose what a node deleted",
        )
    },
    probe(Counter::EarliestRead, "a client read from Earliest"),
    probe(
        Counter::InvalidWriteRefused,
        "a write with malformed headers, or a body or headers over the limits, was refused Invalid",
    ),
    probe(
        Counter::FloorPastItselfRefused,
        "a trim asking for a floor above its own offset was refused Invalid",
    ),
    probe(Counter::LeaderChanged, "a node became leader"),
    probe(
        Counter::DeposedLeaderWrite,
        "a deposed leader's own write committed in its old term",
    ),
    probe(
        Counter::AckThenCrash,
        "the node that acknowledged the last write crashed next",
    ),
    probe(
        Counter::FenceDeleted,
        "the newest writer's first write was deleted while an older one ran",
    ),
    probe(
        Counter::StaleHolderTooOld,
        "a stale holder's read was refused CursorTooOld",
    ),
    probe(
        Counter::StaleHolderResumed,
        "a stale holder was served right after such a refusal",
    ),
    probe(
        Counter::StaleHolderBlind,
        "what it was then served names no newer writer",
    ),
    sim(Counter::Crashes, "a node crashed (and restarted later)"),
    sim(Counter::Clogs, "a link was clogged"),
    sim(Counter::Partitions, "a partition was drawn"),
    sim(Counter::Pauses, "a client was paused"),
    sim(
        Counter::LeaseMoves,
        "the lease moved to another felixd process as a fault",
    ),
    sim(Counter::LeasesGranted, "the lease service granted a lease"),
    sim(Counter::FencesTaken, "a paros owner took the writer fence"),
    sim(Counter::MessagesDropped, "the network dropped a message"),
    sim(
        Counter::AppendsHeldBack,
        "a leader at its bound of appends in flight to a follower held records back from it \
         (`BrokerConfig::appends_in_flight_max`; counted per leader tick and follower)",
    ),
    sim(
        Counter::MessagesDuplicated,
        "the network duplicated a message",
    ),
    sim(
        Counter::MessagesOld,
        "a copy of a message between nodes came back a second or more later",
    ),
    sim(
        Counter::MessagesCaptured,
        "a message between nodes was held back and delivered a second or more later",
    ),
    sim(
        Counter::LateReplies,
        "a reply reached a client that no longer waited for it",
    ),
    sim(
        Counter::ClientTimeouts,
        "a client gave up waiting (an unknown outcome)",
    ),
    sim(
        Counter::HoldersToldByRenewal,
        "a holder learned from a failed renewal that it lost",
    ),
    sim(
        Counter::BrokenRuns,
        "a broken writer sent a checkpoint run no folder may restore",
    ),
    sim(
        Counter::DiskBitFlipped,
        "a restart read its disk back with a bit flipped: found corrupt, down for good",
    ),
    sim(
        Counter::DiskSectorZeroed,
        "a restart read its disk back with a sector zeroed: found corrupt, down for good",
    ),
    sim(
        Counter::DiskWriteMisdirected,
        "a restart read a record at another record's place: found corrupt, down for good",
    ),
    sim(
        Counter::DiskReadFailed,
        "a restart could not read its disk and tried again later",
    ),
    sim(
        Counter::FileStoreRuns,
        "a run whose disks were the real file store over the simulated file system (knob \
         `file_store`)",
    ),
    sim(
        Counter::PowerLossDropped,
        "a crash of a file-store disk lost power and dropped writes or directory entry changes \
         not yet fsynced",
    ),
    sim(
        Counter::OwnerCrashesInsideRun,
        "a paros owner died inside its checkpoint run",
    ),
    sim(
        Counter::BuggifyPauseAfterAck,
        "BUGGIFY: a writer paused right after an acknowledgement",
    ),
    sim(
        Counter::BuggifyPauseInFlight,
        "BUGGIFY: a writer paused with a request in flight",
    ),
    sim(
        Counter::BuggifyLeaseMoveInFlight,
        "BUGGIFY: the lease moved with a write in flight",
    ),
    sim(
        Counter::BuggifyCrashAfterAck,
        "BUGGIFY: the acknowledging node crashed",
    ),
    sim(
        Counter::BuggifyIsolateAfterAck,
        "BUGGIFY: the acknowledging node was isolated",
    ),
    sim(
        Counter::BuggifyPowerLossAfterAck,
        "BUGGIFY: the cluster lost power after an ack",
    ),
    sim(Counter::BuggifySlowSync, "BUGGIFY: a sync was slowed down"),
    sim(
        Counter::BuggifyReadAfterJump,
        "BUGGIFY: a reader was aimed at a node that just jumped",
    ),
    sim(
        Counter::BuggifyReplayPast,
        "BUGGIFY: a node's past messages came again after an election",
    ),
    sim(
        Counter::HolderMetOwnFloor,
        "a lease holder's read met a floor its own epoch set",
    ),
    sim(
        Counter::BuggifyRestartAfterAck,
        "BUGGIFY: a lease holder restarted from the start, keeping its lease",
    ),
];

/// Where each counter's entry sits in `CATALOG`, by counter. Built when the crate compiles: a
/// counter cataloged twice fails the build, and so does one left out (the catalog has one entry
/// per counter, so a missing one means another is there twice).
const INDEX: [usize; Counter::COUNT] = index(&CATALOG);

const fn index(catalog: &[Entry; Counter::COUNT]) -> [usize; Counter::COUNT] {
    let mut index = [usize::MAX; Counter::COUNT];
    let mut at = 0;
    while at < catalog.len() {
        let counter = catalog[at].counter as usize;
        assert!(
            index[counter] == usize::MAX,
            "a counter is cataloged twice (and another left out)"
        );
        index[counter] = at;
        at += 1;
    }
    index
}

/// The catalog's entry for `counter` (`Counter::entry`).
pub fn entry(counter: Counter) -> &'static Entry {
    &CATALOG[INDEX[counter as usize]]
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

    /// The counters with their counts, in a fixed order (for summaries).
    pub fn named(&self) -> [(Counter, u64); 11] {
        [
            (
                Counter::StaleHolderRetiredByTag,
                self.stale_holder_retired_by_tag,
            ),
            (Counter::BrokerJumped, self.broker_jumped),
            (Counter::ReplicaJumped, self.replica_jumped),
            (Counter::ReadBelowTrimRefused, self.read_below_trim_refused),
            (Counter::CheckpointRestored, self.checkpoint_restored),
            (Counter::ReadNotHeld, self.read_not_held),
            (Counter::HistoryChecked, self.history_checked),
            (Counter::HistoryUnchecked, self.history_unchecked),
            (Counter::PromiseSent, self.promise_sent),
            (Counter::VoteGrantSent, self.vote_grant_sent),
            (Counter::AckSent, self.ack_sent),
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

    /// Every counter is cataloged once (`INDEX`, checked when the crate compiles) with a meaning,
    /// under the origin that counts it: the audits' counters are `Coverage`'s, the probes are
    /// `PROBES`; the marks follow the rules (retention, tags, the fence).
    #[test]
    fn the_catalog_declares_every_counter_and_probe_once() {
        let counters = Coverage::default().named().map(|(counter, _)| counter);
        for counter in Counter::ALL {
            let entry = counter.entry();
            assert_eq!(entry.counter, counter);
            assert!(!entry.meaning.is_empty(), "{counter}");
            let origin = match (
                counters.contains(&counter),
                crate::probes::PROBES.contains(&counter),
            ) {
                (true, false) => Origin::Counter,
                (false, true) => Origin::Probe,
                (false, false) => Origin::Sim,
                (true, true) => panic!("{counter} is both a coverage counter and a probe"),
            };
            assert_eq!(entry.origin, origin, "{counter}");
        }
        let rules = Rules::default();
        let required = |counter: Counter| counter.entry().required(&rules);
        assert!(!required(Counter::RetentionDeleted));
        assert!(!required(Counter::TruncateRefused));
        assert!(!required(Counter::HistoryUnchecked));
        assert!(required(Counter::UntaggedRefusal) && required(Counter::EarliestRead));
        assert!(required(Counter::TaggedRefusal));
        let retention = Rules::twin(felix_core::rules::TwinName::Retention);
        assert!(Counter::RetentionDeleted.entry().required(&retention));
        let untagged = Rules::twin(felix_core::rules::TwinName::Untagged);
        assert!(!Counter::TaggedRefusal.entry().required(&untagged));
    }

    /// Each counter counts its own event and nothing else.
    #[test]
    fn counts_each_path() {
        let history = each_path();
        let counts = coverage(&history);
        assert_eq!(
            counts.named(),
            [
                (Counter::StaleHolderRetiredByTag, 1),
                (Counter::BrokerJumped, 1),
                (Counter::ReplicaJumped, 2),
                (Counter::ReadBelowTrimRefused, 1),
                (Counter::CheckpointRestored, 1),
                (Counter::ReadNotHeld, 1),
                // Counted by `audit`, which runs the checker; `coverage` alone does not.
                (Counter::HistoryChecked, 0),
                (Counter::HistoryUnchecked, 0),
                (Counter::PromiseSent, 1),
                (Counter::VoteGrantSent, 2),
                (Counter::AckSent, 1),
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
