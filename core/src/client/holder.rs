//! The lease holder (felixd): fencing a stream by its tail.
//!
//! The driver's lease service grants a lease with an epoch; the holder is built with it and never
//! learns that the lease moved. It then:
//! 1. reads the stream from its cursor to the tail (`Reading`);
//! 2. makes its **fenced write**: an `Append` conditional on the tail it read, its epoch in the
//!    headers (`Fencing`);
//! 3. writes and trims what the driver submits, each conditional on the tail (`Serving`).
//!
//! It retires (emits `HolderRetired`, asks nothing more) when it reads a write with a newer
//! epoch, or when a `CursorTooOld` carries a tag with a newer epoch (rule 1). After a refusal it
//! re-reads from its own cursor (rule 2; the `ReadFromEarliest` twin reads from `Earliest`) and
//! never takes the tail from a refusal (rule 3; the `TailFromRefusal` twin adopts
//! `OffsetMismatch.tail`). The tail comes only from a read that reached the end or from its own
//! acknowledged answers, including a no-op trim's `TrimNoop { tail }` (rule 4 makes that safe on
//! the broker side). Rule 5 (retention off) is the broker's.
//!
//! A read "reached the tail" when it returned fewer writes than `read_batch_max`; its `next` is
//! then the tail. An unknown outcome forgets the tail and re-reads; a write the holder reads back
//! with its own epoch is its own (one holder per epoch), which is how it learns that an unknown
//! fenced write landed.

use super::{Client, InFlight, Route, Step};
use crate::api::{ClientId, InvalidRequest, ReadFrom, ReadRecord, Reply, Request, RequestId};
use crate::history::Event;
use crate::record::{Headers, Offset};
use crate::rules::Rules;
use std::collections::VecDeque;

/// Limits of a holder.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HolderConfig {
    /// `max_records` of every read.
    pub read_batch_max: u32,
    /// Submitted operations waiting to be sent.
    pub ops_max: usize,
}

impl Default for HolderConfig {
    fn default() -> HolderConfig {
        HolderConfig {
            read_batch_max: 64,
            ops_max: 16,
        }
    }
}

/// Work the driver asks a serving holder to do, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HolderOp {
    /// A write, conditional on the tail, epoch in the headers.
    Write { body: Vec<u8> },
    /// A trim asking for `floor`, conditional on the tail. The holder clamps the floor to the
    /// offset the trim lands at (its known tail): a trim may not ask above its own offset.
    Trim { floor: Offset },
}

/// Why `submit` refused an operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SubmitError {
    /// `ops_max` operations are already waiting.
    Full,
    /// The holder retired; it will never write again.
    Retired,
}

/// Where a holder is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HolderStatus {
    /// Reading to the tail (first time, or after a refusal or an unknown outcome).
    Reading,
    /// Knows the tail, its fenced write is not acknowledged yet.
    Fencing,
    /// Fenced: writes and trims under the tail check.
    Serving,
    /// Saw a newer epoch; asks nothing more.
    Retired { newer_epoch: u64, by_tag: bool },
}

/// What the request in flight was.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Pending {
    Read { from: ReadFrom },
    FencedWrite { expected_tail: Offset },
    Write { expected_tail: Offset },
    Trim { expected_tail: Offset },
}

/// The lease holder state machine.
#[derive(Clone, Debug)]
pub struct Holder {
    client: ClientId,
    epoch: u64,
    rules: Rules,
    config: HolderConfig,
    /// The next offset to read from: everything below it has been read or written by this holder.
    cursor: Offset,
    /// The tail the next conditional append expects; `None` until a read reaches the tail.
    tail: Option<Offset>,
    /// The next read is the one re-read after a refusal, from `Earliest` (ReadFromEarliest twin).
    reread_from_earliest: bool,
    fenced: bool,
    ops: VecDeque<HolderOp>,
    in_flight: InFlight<Pending>,
    retired: Option<(u64, bool)>,
}

impl Holder {
    /// A holder granted `epoch`, reading from offset `cursor` (1 for a fresh stream).
    pub fn new(
        client: ClientId,
        epoch: u64,
        cursor: Offset,
        rules: Rules,
        config: HolderConfig,
    ) -> Holder {
        assert!(cursor >= 1, "offsets start at 1");
        assert!(config.read_batch_max > 0);
        assert!(config.ops_max > 0);
        Holder {
            client,
            epoch,
            rules,
            config,
            cursor,
            tail: None,
            reread_from_earliest: false,
            fenced: false,
            ops: VecDeque::new(),
            in_flight: InFlight::new(),
            retired: None,
        }
    }

    /// The lease epoch this holder was granted.
    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    /// The next offset this holder will read from.
    pub fn cursor(&self) -> Offset {
        self.cursor
    }

    /// The tail the next conditional append expects, if known.
    pub fn tail(&self) -> Option<Offset> {
        self.tail
    }

    /// Operations submitted and not yet answered (the one in flight included).
    pub fn ops_waiting(&self) -> usize {
        self.ops.len()
    }

    pub fn status(&self) -> HolderStatus {
        if let Some((newer_epoch, by_tag)) = self.retired {
            HolderStatus::Retired {
                newer_epoch,
                by_tag,
            }
        } else if self.tail.is_none() {
            HolderStatus::Reading
        } else if !self.fenced {
            HolderStatus::Fencing
        } else {
            HolderStatus::Serving
        }
    }

    /// Queues a write or a trim; it is sent once the holder is fenced and knows the tail.
    pub fn submit(&mut self, op: HolderOp) -> Result<(), SubmitError> {
        if self.retired.is_some() {
            return Err(SubmitError::Retired);
        }
        if self.ops.len() >= self.config.ops_max {
            return Err(SubmitError::Full);
        }
        self.ops.push_back(op);
        assert!(self.ops.len() <= self.config.ops_max);
        Ok(())
    }

    /// The body of the fenced write: recognisable in traces, opaque to the journal.
    pub fn fenced_write_body(epoch: u64) -> Vec<u8> {
        format!("fenced write of epoch {epoch}").into_bytes()
    }

    fn headers(&self) -> Headers {
        Headers::with_epoch(self.epoch)
    }

    fn retire(&mut self, newer_epoch: u64, by_tag: bool) -> Event {
        assert!(newer_epoch > self.epoch);
        assert!(self.retired.is_none());
        self.retired = Some((newer_epoch, by_tag));
        self.ops.clear();
        Event::HolderRetired {
            client: self.client,
            epoch: self.epoch,
            newer_epoch,
            by_tag,
        }
    }

    /// Forget the tail and read again (after a refusal or an unknown outcome).
    fn forget_tail(&mut self, refused: bool) {
        self.tail = None;
        if refused && !self.rules.reread_from_cursor {
            self.reread_from_earliest = true;
        }
    }

    /// An acknowledged append of this holder at `offset`, leaving `tail`.
    fn own_ack(&mut self, expected_tail: Offset, offset: Offset, tail: Offset) -> bool {
        if offset != expected_tail || tail <= offset {
            return false;
        }
        if self.cursor == offset {
            self.cursor = tail;
        }
        self.tail = Some(tail);
        true
    }

    fn on_read(&mut self, from: ReadFrom, reply: Reply) -> Step {
        match reply {
            Reply::Records { records, next } => self.on_records(from, records, next),
            Reply::CursorTooOld { floor, tag } => {
                let newer = tag
                    .as_ref()
                    .and_then(Headers::epoch)
                    .filter(|epoch| *epoch > self.epoch);
                if let Some(newer_epoch) = newer {
                    return Step::events(vec![self.retire(newer_epoch, true)]);
                }
                if floor <= self.cursor {
                    // A node that cannot serve what another node did not refuse: not news about
                    // the floor, just a node behind. Ask another one.
                    return Step::route(Route::AnotherNode);
                }
                let gap = Event::Gap {
                    client: self.client,
                    from: self.cursor,
                    to: floor,
                };
                self.cursor = floor;
                Step::events(vec![gap])
            }
            Reply::NotHeld { .. } | Reply::Invalid(InvalidRequest::ReadPastTail { .. }) => {
                Step::route(Route::AnotherNode)
            }
            // A node that could not learn a read index is handled like one that does not lead.
            Reply::NotLeader { hint } | Reply::NoReadIndex { hint } => {
                Step::route(Route::Leader(hint))
            }
            _ => self.unknown(),
        }
    }

    fn on_records(&mut self, from: ReadFrom, records: Vec<ReadRecord>, next: Offset) -> Step {
        let start = match from {
            ReadFrom::Offset(offset) => offset,
            ReadFrom::Earliest => 1,
        };
        let ordered = records
            .windows(2)
            .all(|pair| pair[0].offset < pair[1].offset);
        let in_range = records
            .iter()
            .all(|record| record.offset >= start && record.offset < next);
        if next < start || !ordered || !in_range {
            return self.unknown();
        }
        for record in &records {
            let Some(epoch) = record.headers.epoch() else {
                continue;
            };
            if epoch > self.epoch {
                return Step::events(vec![self.retire(epoch, false)]);
            }
            if epoch == self.epoch {
                // One holder per epoch: this is our own write (an unknown outcome that landed).
                self.fenced = true;
            }
        }
        if next > self.cursor || matches!(from, ReadFrom::Offset(_)) {
            self.cursor = next;
        }
        if records.len() < self.config.read_batch_max as usize {
            self.tail = Some(next);
        }
        Step::none()
    }

    fn on_append(&mut self, pending: Pending, expected_tail: Offset, reply: Reply) -> Step {
        match reply {
            Reply::Appended { offset, tail } => {
                if !self.own_ack(expected_tail, offset, tail) {
                    return self.unknown();
                }
                match pending {
                    Pending::FencedWrite { .. } => self.fenced = true,
                    _ => {
                        self.ops.pop_front();
                    }
                }
                Step::none()
            }
            Reply::TrimNoop { tail } if matches!(pending, Pending::Trim { .. }) => {
                // Rule 4 is the broker's: with it, the tail in a no-op answer was checked and is
                // our own. Without it (NoopSkip) this is where a stale holder learns a newer tail.
                self.ops.pop_front();
                self.tail = Some(tail);
                Step::none()
            }
            Reply::OffsetMismatch { tail } => {
                if self.rules.tail_not_from_refusal {
                    self.forget_tail(true);
                } else {
                    // TailFromRefusal twin: adopt the tail named by the refusal and go again.
                    self.tail = Some(tail);
                }
                Step::none()
            }
            Reply::NotLeader { hint } => Step::route(Route::Leader(hint)),
            Reply::Invalid(_) => {
                // Our own request was malformed: drop the operation (never retry a bad request)
                // and re-read before the next conditional append.
                if !matches!(pending, Pending::FencedWrite { .. }) {
                    self.ops.pop_front();
                }
                self.forget_tail(false);
                Step::none()
            }
            _ => self.unknown(),
        }
    }

    fn unknown(&mut self) -> Step {
        // The outcome is unknown: forget the tail and re-read from the cursor. A submitted
        // operation whose outcome is unknown is dropped, not retried (it may have landed).
        if let Some(pending) = self.in_flight.take() {
            if matches!(pending, Pending::Write { .. } | Pending::Trim { .. }) {
                self.ops.pop_front();
            }
        }
        self.forget_tail(false);
        Step::none()
    }
}

impl Client for Holder {
    fn client_id(&self) -> ClientId {
        self.client
    }

    fn next_request(&mut self) -> Option<(RequestId, Request)> {
        if self.retired.is_some() || self.in_flight.is_some() {
            return None;
        }
        let (pending, request) = match self.tail {
            None => {
                let from = if self.reread_from_earliest {
                    ReadFrom::Earliest
                } else {
                    ReadFrom::Offset(self.cursor)
                };
                self.reread_from_earliest = false;
                let request = Request::Read {
                    from,
                    max_records: self.config.read_batch_max,
                };
                (Pending::Read { from }, request)
            }
            Some(tail) if !self.fenced => {
                let request = Request::Append {
                    expected_tail: Some(tail),
                    fence: None,
                    body: Holder::fenced_write_body(self.epoch),
                    headers: self.headers(),
                };
                (
                    Pending::FencedWrite {
                        expected_tail: tail,
                    },
                    request,
                )
            }
            Some(tail) => match self.ops.front()? {
                HolderOp::Write { body } => {
                    let request = Request::Append {
                        expected_tail: Some(tail),
                        fence: None,
                        body: body.clone(),
                        headers: self.headers(),
                    };
                    (
                        Pending::Write {
                            expected_tail: tail,
                        },
                        request,
                    )
                }
                HolderOp::Trim { floor } => {
                    let request = Request::Trim {
                        expected_tail: Some(tail),
                        fence: None,
                        floor: (*floor).min(tail),
                        headers: self.headers(),
                    };
                    (
                        Pending::Trim {
                            expected_tail: tail,
                        },
                        request,
                    )
                }
            },
        };
        let id = self.in_flight.start(pending);
        Some((id, request))
    }

    fn on_reply(&mut self, id: RequestId, reply: Reply) -> Step {
        let Some(pending) = self.in_flight.get(id) else {
            return Step::ignored();
        };
        if self.retired.is_some() {
            return Step::ignored();
        }
        let cursor_before = self.cursor;
        let step = match pending {
            Pending::Read { from } => self.on_read(from, reply),
            Pending::FencedWrite { expected_tail }
            | Pending::Write { expected_tail }
            | Pending::Trim { expected_tail } => self.on_append(pending, expected_tail, reply),
        };
        // `unknown()` already took the request in flight; every other path ends it here.
        self.in_flight.take();
        assert!(
            self.cursor >= cursor_before,
            "a holder's cursor never goes back"
        );
        assert!(
            self.retired.is_none() || self.ops.is_empty(),
            "a retired holder has no work"
        );
        step
    }

    fn on_unknown(&mut self, id: RequestId) -> Step {
        if self.in_flight.get(id).is_none() || self.retired.is_some() {
            return Step::ignored();
        }
        self.unknown()
    }

    fn in_flight(&self) -> Option<RequestId> {
        self.in_flight.id()
    }

    fn is_finished(&self) -> bool {
        self.retired.is_some()
    }
}
