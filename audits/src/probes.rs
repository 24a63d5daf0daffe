//! Probes: *sometimes* counters over a run's history, finer than the coverage counters, that a
//! guided sweep uses as feedback (how often a run reached each protocol situation).
//!
//! A probe names a situation a safety rule exists for, not a rule: a stale holder refused, a
//! refusal that carries no tag, a no-op trim, a read of a range a node does not hold. None is an
//! invariant; a run that reaches a situation rarely reached is worth mutating further (AFL-style
//! feedback over semantic events instead of edges). One linear pass with `BTreeMap` state.
//!
//! Four of them (before the prober's two) follow a stale writer through deletion, the steps every
//! fenced stream with deletion must survive whatever deletes (a trim, retention, a bug): the newest
//! writer's first acknowledged write deleted while an older writer still runs (`fence_deleted`), a
//! stale holder's read refused as too old (`stale_holder_too_old`), and a stale holder served
//! records right after such a refusal, its cursor moved past what was deleted
//! (`stale_holder_resumed`), and served nothing that names a newer writer (`stale_holder_blind`: it
//! lost sight of its successor). They name the steps towards a hazard, not a rule: they give a
//! guided campaign a gradient towards runs where a stale writer meets deletion, which plain seeds
//! reach in a few runs in a hundred.

use crate::counter::Counter;
use felix_core::api::{ClientId, InvalidRequest, ReadFrom, Reply, Request};
use felix_core::history::Event;
use felix_core::{Command, Offset};
use std::collections::BTreeMap;

/// The probe an answer reaches by its kind alone, if any.
fn answer_probe(reply: &Reply) -> Option<Counter> {
    match reply {
        Reply::CursorTooOld { tag: None, .. } => Some(Counter::UntaggedRefusal),
        Reply::CursorTooOld { tag: Some(_), .. } => Some(Counter::TaggedRefusal),
        Reply::TrimNoop { .. } => Some(Counter::NoopTrimAnswered),
        Reply::Invalid(
            InvalidRequest::TooLarge { .. } | InvalidRequest::MalformedHeaders { .. },
        ) => Some(Counter::InvalidWriteRefused),
        Reply::Invalid(InvalidRequest::FloorAboveOffset { .. }) => {
            Some(Counter::FloorPastItselfRefused)
        }
        Reply::NotHeld { .. } => Some(Counter::NotHeld),
        _ => None,
    }
}

/// The probes, in a fixed order (the counters of `probes`'s result).
pub const PROBES: [Counter; 23] = [
    Counter::StaleHolderRefused,
    Counter::StaleHolderActs,
    Counter::UntaggedRefusal,
    Counter::TaggedRefusal,
    Counter::NoopTrimAnswered,
    Counter::NoopTrimRefused,
    Counter::TrimToOwnOffset,
    Counter::NotHeld,
    Counter::GapReported,
    Counter::HolderRetiredByRead,
    Counter::TruncateRefused,
    Counter::SegmentsDeleted,
    Counter::RetentionDeleted,
    Counter::EarliestRead,
    Counter::LeaderChanged,
    Counter::DeposedLeaderWrite,
    Counter::AckThenCrash,
    Counter::FenceDeleted,
    Counter::StaleHolderTooOld,
    Counter::StaleHolderResumed,
    Counter::StaleHolderBlind,
    Counter::InvalidWriteRefused,
    Counter::FloorPastItselfRefused,
];

/// Counts each probe of `history`, in `PROBES` order.
pub fn probes(history: &[Event]) -> [(Counter, u64); PROBES.len()] {
    let mut watch = Watch::new();
    for event in history {
        watch.event(event);
    }
    PROBES.map(|probe| (probe, watch.counts[probe as usize]))
}

/// What the probes remember of a history so far, and their counts.
struct Watch {
    counts: [u64; Counter::COUNT],
    /// The newest epoch granted, each client's own newest epoch, and the newest epoch whose
    /// holder got an acknowledged write (it fenced).
    epoch_newest: u64,
    epoch_of: BTreeMap<ClientId, u64>,
    fenced_newest: u64,
    floor_highest: Offset,
    /// The newest leader term, and a leader's term by node.
    term_newest: u64,
    leading: BTreeMap<u32, u64>,
    /// The node that acknowledged a write most recently, until something else happens to it.
    last_ack: Option<u32>,
    /// The offset of the newest fenced epoch's first acknowledged write (its proof that it
    /// exists), and the holders granted a lease that have not retired.
    fence_offset: Option<Offset>,
    live: BTreeMap<ClientId, u64>,
    /// Stale holders whose last read was refused as too old (their cursor jumps next).
    jumped: BTreeMap<ClientId, bool>,
}

impl Watch {
    fn new() -> Watch {
        Watch {
            counts: [0; Counter::COUNT],
            epoch_newest: 0,
            epoch_of: BTreeMap::new(),
            fenced_newest: 0,
            floor_highest: 0,
            term_newest: 0,
            leading: BTreeMap::new(),
            last_ack: None,
            fence_offset: None,
            live: BTreeMap::new(),
            jumped: BTreeMap::new(),
        }
    }

    fn bump(&mut self, probe: Counter) {
        self.counts[probe as usize] += 1;
    }

    fn event(&mut self, event: &Event) {
        match event {
            Event::LeaseGranted { client, epoch } => {
                self.epoch_newest = self.epoch_newest.max(*epoch);
                self.epoch_of.insert(*client, *epoch);
                self.live.insert(*client, *epoch);
            }
            Event::BecameLeader { node, term } => {
                self.bump(Counter::LeaderChanged);
                self.term_newest = self.term_newest.max(*term);
                self.leading.insert(*node, *term);
            }
            Event::FloorApplied { floor, .. } => {
                self.floor_highest = self.floor_highest.max(*floor)
            }
            Event::TruncateRefused { .. } => self.bump(Counter::TruncateRefused),
            Event::SegmentsDeleted {
                retention, below, ..
            } => {
                self.bump(Counter::SegmentsDeleted);
                if *retention {
                    self.bump(Counter::RetentionDeleted);
                }
                // The newest writer's proof of its fence deleted while an older writer still
                // runs: from now on only what deletion left (a tag, a later record) can stop it.
                let older_live = self.live.values().any(|epoch| *epoch < self.fenced_newest);
                if older_live && self.fence_offset.is_some_and(|offset| offset < *below) {
                    self.bump(Counter::FenceDeleted);
                }
            }
            Event::Gap { .. } => self.bump(Counter::GapReported),
            Event::HolderRetired { client, by_tag, .. } => {
                self.live.remove(client);
                if !by_tag {
                    self.bump(Counter::HolderRetiredByRead);
                }
            }
            Event::Crashed { node } if self.last_ack == Some(*node) => {
                self.bump(Counter::AckThenCrash);
                self.last_ack = None;
            }
            Event::Requested {
                client, request, ..
            } => self.requested(*client, request),
            Event::Replied {
                client,
                node,
                request,
                reply,
            } => self.replied(*client, *node, request, reply),
            Event::Committed { node, entry } => {
                // A leader of an older term than the newest still landing its own writes in its
                // log is the deposed leader the design lets keep taking writes.
                let deposed = (self.leading.get(node))
                    .is_some_and(|term| *term < self.term_newest && entry.term == *term);
                if deposed && matches!(entry.command, Command::Write { .. }) {
                    self.bump(Counter::DeposedLeaderWrite);
                }
            }
            _ => {}
        }
    }

    fn requested(&mut self, client: ClientId, request: &Request) {
        let stale = (self.epoch_of.get(&client)).is_some_and(|epoch| *epoch < self.fenced_newest);
        if stale && !matches!(request, Request::Read { .. }) {
            self.bump(Counter::StaleHolderActs);
        }
        if matches!(
            request,
            Request::Read {
                from: ReadFrom::Earliest,
                ..
            }
        ) {
            self.bump(Counter::EarliestRead);
        }
    }

    fn replied(&mut self, client: ClientId, node: u32, request: &Request, reply: &Reply) {
        let epoch = self.epoch_of.get(&client).copied();
        let stale = epoch.is_some_and(|epoch| epoch < self.epoch_newest);
        // Stale behind a holder that already wrote: the hazard of a fenced stream.
        let behind_fence = epoch.is_some_and(|epoch| epoch < self.fenced_newest);
        if behind_fence && matches!(request, Request::Read { .. }) {
            self.stale_read(client, epoch.unwrap_or(0), reply);
        }
        if let Some(probe) = answer_probe(reply) {
            self.bump(probe);
        }
        match reply {
            Reply::OffsetMismatch { .. } | Reply::FenceMismatch { .. } => {
                if stale {
                    self.bump(Counter::StaleHolderRefused);
                }
                if let Request::Trim { floor, .. } = request {
                    if *floor <= self.floor_highest {
                        self.bump(Counter::NoopTrimRefused);
                    }
                }
            }
            Reply::Appended { offset, .. } => {
                self.last_ack = Some(node);
                if let Request::Trim { floor, .. } = request {
                    if floor == offset {
                        self.bump(Counter::TrimToOwnOffset);
                    }
                }
                if !matches!(request, Request::Fence { .. }) {
                    if let Some(epoch) = epoch {
                        if epoch > self.fenced_newest {
                            self.fence_offset = Some(*offset);
                        }
                        self.fenced_newest = self.fenced_newest.max(epoch);
                    }
                }
            }
            _ => {}
        }
    }

    /// A read answered to a holder of epoch `own`, behind a holder that already wrote.
    fn stale_read(&mut self, client: ClientId, own: u64, reply: &Reply) {
        let too_old = matches!(reply, Reply::CursorTooOld { .. });
        if too_old {
            self.bump(Counter::StaleHolderTooOld);
        } else if let Reply::Records { records, .. } = reply {
            if self.jumped.get(&client).copied().unwrap_or(false) {
                self.bump(Counter::StaleHolderResumed);
                // Nothing it was served names a newer writer: it lost sight of its successor.
                let blind =
                    (records.iter()).all(|record| record.headers.epoch().is_none_or(|e| e <= own));
                if blind {
                    self.bump(Counter::StaleHolderBlind);
                }
            }
        }
        self.jumped.insert(client, too_old);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::read_request;
    use felix_core::Headers;

    fn trim(floor: Offset) -> Request {
        Request::Trim {
            expected_tail: Some(9),
            fence: None,
            floor,
            headers: Headers::with_epoch(1),
        }
    }

    fn count(history: &[Event], counter: Counter) -> u64 {
        probes(history)
            .iter()
            .find(|(probe, _)| *probe == counter)
            .map_or(0, |(_, count)| *count)
    }

    /// A stale holder (an older epoch than the newest grant) refused counts, and only then; a
    /// refused trim at or below the floor counts as a refused no-op trim.
    #[test]
    fn stale_holder_refusals_are_counted() {
        let refused = |client| Event::Replied {
            client,
            node: 0,
            request: trim(2),
            reply: Reply::OffsetMismatch { tail: 9 },
        };
        let history = vec![
            Event::LeaseGranted {
                client: 1,
                epoch: 1,
            },
            refused(1),
            Event::LeaseGranted {
                client: 2,
                epoch: 2,
            },
            Event::FloorApplied {
                node: 0,
                floor: 3,
                trim: Some(4),
            },
            refused(1),
        ];
        assert_eq!(count(&history, Counter::StaleHolderRefused), 1);
        assert_eq!(count(&history, Counter::NoopTrimRefused), 1);
    }

    /// A stale writer meeting deletion is followed step by step: the newest holder's first write
    /// deleted while an older holder runs, the stale holder refused as too old, then served right
    /// after the refusal; the same steps by the newest holder itself, or after the stale holder
    /// retired, count nothing.
    #[test]
    fn stale_writer_meeting_deletion_is_counted() {
        let appended = |client, offset| Event::Replied {
            client,
            node: 0,
            request: Request::Append {
                expected_tail: Some(offset),
                fence: None,
                body: b"w".to_vec(),
                headers: Headers::with_epoch(2),
            },
            reply: Reply::Appended {
                offset,
                tail: offset + 1,
            },
        };
        let read = |client, reply| Event::Replied {
            client,
            node: 0,
            request: read_request(1),
            reply,
        };
        let too_old = Reply::CursorTooOld {
            floor: 4,
            tag: None,
        };
        let served = Reply::Records {
            records: Vec::new(),
            next: 5,
        };
        let deleted = Event::SegmentsDeleted {
            node: 0,
            below: 4,
            readable_start: 4,
            retention: true,
        };
        let granted = |client, epoch| Event::LeaseGranted { client, epoch };
        let history = vec![
            granted(1, 1),
            granted(2, 2),
            appended(2, 3),
            // The newest holder's own refusal and read count nothing.
            read(2, too_old.clone()),
            read(2, served.clone()),
            deleted.clone(),
            read(1, too_old.clone()),
            read(1, served.clone()),
            // Served again without a refusal in between: not a resumption.
            read(1, served.clone()),
            Event::HolderRetired {
                client: 1,
                epoch: 1,
                newer_epoch: 2,
                by_tag: false,
            },
            // Nobody older runs any more.
            deleted,
        ];
        assert_eq!(count(&history, Counter::FenceDeleted), 1);
        assert_eq!(count(&history, Counter::StaleHolderTooOld), 1);
        assert_eq!(count(&history, Counter::StaleHolderResumed), 1);
        assert_eq!(count(&history, Counter::StaleHolderBlind), 1);
    }

    /// Refusals with and without a tag, no-op answers, NotHeld and earliest reads count apart.
    #[test]
    fn replies_are_told_apart() {
        let reply = |reply| Event::Replied {
            client: 3,
            node: 1,
            request: read_request(1),
            reply,
        };
        let history = vec![
            reply(Reply::CursorTooOld {
                floor: 4,
                tag: None,
            }),
            reply(Reply::CursorTooOld {
                floor: 4,
                tag: Some(Headers::with_epoch(2)),
            }),
            reply(Reply::TrimNoop { tail: 5 }),
            reply(Reply::NotHeld { from: 2 }),
            reply(Reply::Invalid(InvalidRequest::TooLarge {
                bytes: 5,
                limit: 4,
            })),
            Event::Requested {
                client: 3,
                node: 1,
                request: Request::Read {
                    from: ReadFrom::Earliest,
                    max_records: 4,
                },
            },
        ];
        for probe in [
            Counter::UntaggedRefusal,
            Counter::TaggedRefusal,
            Counter::NoopTrimAnswered,
            Counter::NotHeld,
            Counter::EarliestRead,
            Counter::InvalidWriteRefused,
        ] {
            assert_eq!(count(&history, probe), 1, "{probe}");
        }
        assert_eq!(count(&history, Counter::StaleHolderRefused), 0);
        assert_eq!(probes(&history).len(), PROBES.len());
    }
}
