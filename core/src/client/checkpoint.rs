//! The checkpoint owner (paros' `client::checkpoint`): fold, checkpoint, truncate, under a fence.
//!
//! The owner holds the writer fence: it first appends `Fence { new: token, old }`. It folds the
//! journal by reading it (the same [`Fold`] as every folder) and, when the driver asks for a
//! checkpoint, writes its state as a **run** at the journal's next offset `s`:
//! `Begin`, the state cut into `Chunk`s, and `End { chunks, checksum }`. Each is a fenced
//! `Append` conditional on the tail, so a run is contiguous or abandoned (a refused record leaves
//! a run with no `End`, which nobody restores). Every body starts with [`MAGIC`]. `End` is the
//! commit point (`CheckpointWritten`). The owner then truncates: a fenced `Trim` asking for floor
//! `s`, so the run becomes the start of the journal.
//!
//! The truncate is only sent if the driver's trim limit (the simulator's shared trim fence: the
//! lowest cursor of any client still folding) allows `s`; otherwise it is skipped, never clamped
//! to a floor that is not a checkpoint. A truncate, append or fence under a stale fence is
//! answered `TruncateRefused { current }` (committed, refused in place) or
//! `FenceMismatch { current }` (refused at sequencing): either way the owner learns the fence in
//! force, emits `OwnerStopped` and asks nothing more. The driver may make the owner crash inside a
//! run (`crash_inside_run`), which leaves a run without `End`.
//!
//! An owner may pipeline its application writes (`OwnerConfig::writes_in_flight_max`): they are
//! fenced, not tail-conditional, so each lands or is refused on its own, in whatever order the
//! network delivers them. The fence, reads, run records and truncates go out alone, once every
//! write in flight is answered.

use super::folder::{Fold, FoldCore};
use super::{Client, InFlight, Route, Step};
use crate::api::{ClientId, ReadFrom, Reply, Request, RequestId};
use crate::history::Event;
use crate::record::{Headers, Offset, Token};
use std::collections::VecDeque;

/// Every checkpoint record's body starts with these bytes.
pub const MAGIC: &[u8] = b"\xF0FELIX-CKPT\x00";

const KIND_BEGIN: u8 = b'B';
const KIND_CHUNK: u8 = b'C';
const KIND_END: u8 = b'E';

/// A checkpoint record, as decoded from a write's body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RunRecord {
    Begin,
    Chunk {
        index: u32,
        payload: Vec<u8>,
    },
    End {
        chunks: u32,
        checksum: u32,
    },
    /// The magic prefix with a body that is none of the above: breaks a run, never folded.
    Malformed,
}

impl RunRecord {
    /// The body of this record.
    pub fn encode(&self) -> Vec<u8> {
        let mut body = MAGIC.to_vec();
        match self {
            RunRecord::Begin => body.push(KIND_BEGIN),
            RunRecord::Chunk { index, payload } => {
                body.push(KIND_CHUNK);
                body.extend_from_slice(&index.to_be_bytes());
                body.extend_from_slice(payload);
            }
            RunRecord::End { chunks, checksum } => {
                body.push(KIND_END);
                body.extend_from_slice(&chunks.to_be_bytes());
                body.extend_from_slice(&checksum.to_be_bytes());
            }
            RunRecord::Malformed => {}
        }
        body
    }

    /// `None` for an application write (no magic prefix).
    pub fn decode(body: &[u8]) -> Option<RunRecord> {
        let rest = body.strip_prefix(MAGIC)?;
        let Some((kind, rest)) = rest.split_first() else {
            return Some(RunRecord::Malformed);
        };
        let record = match (*kind, rest.len()) {
            (KIND_BEGIN, 0) => RunRecord::Begin,
            (KIND_CHUNK, length) if length >= 4 => RunRecord::Chunk {
                index: u32::from_be_bytes([rest[0], rest[1], rest[2], rest[3]]),
                payload: rest[4..].to_vec(),
            },
            (KIND_END, 8) => RunRecord::End {
                chunks: u32::from_be_bytes([rest[0], rest[1], rest[2], rest[3]]),
                checksum: u32::from_be_bytes([rest[4], rest[5], rest[6], rest[7]]),
            },
            _ => RunRecord::Malformed,
        };
        Some(record)
    }
}

/// The checksum `End` names: CRC-32 of the chunk payloads in order.
pub fn checksum(chunks: &[Vec<u8>]) -> u32 {
    let mut hasher = crc32fast::Hasher::new();
    for chunk in chunks {
        hasher.update(chunk);
    }
    hasher.finalize()
}

/// The run's records for `state`, cut into chunks of at most `chunk_bytes`.
pub fn encode_run(state: Fold, chunk_bytes: usize) -> Vec<RunRecord> {
    assert!(chunk_bytes > 0);
    let bytes = state.encode();
    let chunks: Vec<Vec<u8>> = bytes.chunks(chunk_bytes).map(<[u8]>::to_vec).collect();
    let mut records = Vec::with_capacity(chunks.len() + 2);
    records.push(RunRecord::Begin);
    let count = chunks.len() as u32;
    let sum = checksum(&chunks);
    for (index, payload) in chunks.into_iter().enumerate() {
        records.push(RunRecord::Chunk {
            index: index as u32,
            payload,
        });
    }
    records.push(RunRecord::End {
        chunks: count,
        checksum: sum,
    });
    assert!(records.len() >= 3);
    records
}

/// The state a run's chunks carry, if `End`'s count and checksum match them.
pub(crate) fn decode_state(chunks: &[Vec<u8>], count: u32, sum: u32) -> Option<Fold> {
    if chunks.len() != count as usize || checksum(chunks) != sum {
        return None;
    }
    Fold::decode(&chunks.concat())
}

/// Limits of an owner.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OwnerConfig {
    /// `max_records` of every read.
    pub read_batch_max: u32,
    /// The largest chunk payload of a run.
    pub chunk_bytes: usize,
    /// The most chunks a run may have (a folder's bound too).
    pub chunks_max: usize,
    /// Submitted operations waiting to be sent or answered.
    pub ops_max: usize,
    /// Application writes in flight at once, as a pipelining producer keeps them (1: one request
    /// at a time). Every other request (the fence, a read, a run's record, a truncate) goes out
    /// alone, with nothing else in flight.
    pub writes_in_flight_max: usize,
}

impl Default for OwnerConfig {
    fn default() -> OwnerConfig {
        OwnerConfig {
            read_batch_max: 64,
            chunk_bytes: 8,
            chunks_max: 64,
            ops_max: 16,
            writes_in_flight_max: 1,
        }
    }
}

/// Work the driver asks an owner to do, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OwnerOp {
    /// A fenced application write (its body must not start with [`MAGIC`]).
    Write { body: Vec<u8> },
    /// Read to the tail, write a checkpoint run at the tail, then truncate to it.
    Checkpoint,
    /// A fenced truncate to an arbitrary floor: what a buggy or stale caller does. Lets the
    /// driver exercise `TruncateRefused` and the `UnfencedTruncate` twin.
    Truncate { floor: Offset },
}

/// Where an owner is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OwnerStatus {
    /// Its fence record is not acknowledged yet.
    Fencing,
    /// Fenced; working through its operations (or idle).
    Fenced,
    /// Writing a run.
    Writing { begin: Option<Offset> },
    /// Learned that `current` is the fence in force; asks nothing more.
    Stopped { current: Token },
    /// Crashed inside a run, on the driver's order; asks nothing more.
    Crashed,
}

/// A run being written.
#[derive(Clone, Debug, PartialEq, Eq)]
struct RunPlan {
    records: Vec<RunRecord>,
    written: usize,
    begin: Option<Offset>,
    /// The tail the next record of the run is conditional on.
    expected_tail: Offset,
}

/// What the request in flight was.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Pending {
    Fence,
    Read,
    Write,
    RunRecord,
    Truncate { explicit: bool },
}

/// The checkpoint owner state machine.
#[derive(Clone, Debug)]
pub struct Owner {
    client: ClientId,
    token: Token,
    old: Token,
    config: OwnerConfig,
    fenced: bool,
    core: FoldCore,
    cursor: Offset,
    /// Set when a read reached the tail; forgotten after any own append.
    caught_up_at: Option<Offset>,
    ops: VecDeque<OwnerOp>,
    /// The bodies of the application writes in flight, by request id: taken out of `ops` when
    /// sent, put back in front when a node answers that it does not lead.
    writes: Vec<(RequestId, Vec<u8>)>,
    run: Option<RunPlan>,
    truncate_to: Option<Offset>,
    trim_limit: Option<Offset>,
    crash_after_records: Option<usize>,
    stopped: Option<Token>,
    crashed: bool,
    in_flight: InFlight<Pending>,
}

impl Owner {
    /// An owner taking the fence with `token`, replacing `old` (the token it believes in force;
    /// `Token(0)` on a fresh journal). It folds from the start of the journal.
    pub fn new(client: ClientId, token: Token, old: Token, config: OwnerConfig) -> Owner {
        assert!(token != old, "a fence must change the token");
        assert!(config.read_batch_max > 0);
        assert!(config.chunk_bytes > 0);
        assert!(config.ops_max > 0);
        assert!(config.writes_in_flight_max > 0);
        assert!(16usize.div_ceil(config.chunk_bytes) <= config.chunks_max);
        Owner {
            client,
            token,
            old,
            config,
            fenced: false,
            core: FoldCore::new(client, config.chunks_max),
            cursor: 1,
            caught_up_at: None,
            ops: VecDeque::new(),
            writes: Vec::new(),
            run: None,
            truncate_to: None,
            trim_limit: None,
            crash_after_records: None,
            stopped: None,
            crashed: false,
            in_flight: InFlight::new(),
        }
    }

    pub fn token(&self) -> Token {
        self.token
    }

    /// The owner's own fold (what its next checkpoint would carry).
    pub fn fold(&self) -> Option<Fold> {
        self.core.fold()
    }

    pub fn cursor(&self) -> Offset {
        self.cursor
    }

    pub fn status(&self) -> OwnerStatus {
        if let Some(current) = self.stopped {
            OwnerStatus::Stopped { current }
        } else if self.crashed {
            OwnerStatus::Crashed
        } else if !self.fenced {
            OwnerStatus::Fencing
        } else if let Some(run) = &self.run {
            OwnerStatus::Writing { begin: run.begin }
        } else {
            OwnerStatus::Fenced
        }
    }

    /// Queues an operation. `Err(op)` when `ops_max` are waiting or the owner is finished.
    pub fn submit(&mut self, op: OwnerOp) -> Result<(), OwnerOp> {
        if self.is_finished() || self.ops.len() + self.writes.len() >= self.config.ops_max {
            return Err(op);
        }
        self.ops.push_back(op);
        Ok(())
    }

    /// The simulator's shared trim fence: a checkpoint truncate to `s` is sent only if
    /// `s <= limit`. `None` (the default) allows any.
    pub fn set_trim_limit(&mut self, limit: Option<Offset>) {
        self.trim_limit = limit;
    }

    /// Crash once `records` records of the next run are acknowledged (1 ..= chunks + 1: a run
    /// without `End`). The owner then asks nothing more.
    pub fn crash_inside_run(&mut self, records: usize) {
        assert!(records >= 1);
        self.crash_after_records = Some(records);
    }

    fn stop(&mut self, current: Token) -> Step {
        self.stopped = Some(current);
        self.ops.clear();
        self.writes.clear();
        self.run = None;
        self.truncate_to = None;
        Step::events(vec![Event::OwnerStopped {
            client: self.client,
            token: self.token,
            current,
        }])
    }

    fn read_request(&self) -> (Pending, Request) {
        let request = Request::Read {
            from: ReadFrom::Offset(self.cursor),
            max_records: self.config.read_batch_max,
        };
        (Pending::Read, request)
    }

    fn trim_request(&self, floor: Offset, explicit: bool) -> (Pending, Request) {
        let request = Request::Trim {
            expected_tail: None,
            fence: Some(self.token),
            floor,
            headers: Headers::default(),
        };
        (Pending::Truncate { explicit }, request)
    }

    /// The next request, computed without side effects other than starting a run or skipping a
    /// truncate the trim limit forbids.
    fn plan(&mut self) -> Option<(Pending, Request)> {
        if !self.fenced {
            let request = Request::Fence {
                new: self.token,
                old: self.old,
            };
            return Some((Pending::Fence, request));
        }
        if let Some(floor) = self.truncate_to {
            if self.trim_limit.is_none_or(|limit| floor <= limit) {
                return Some(self.trim_request(floor, false));
            }
            self.truncate_to = None;
        }
        if let Some(run) = &self.run {
            if self.crash_after_records == Some(run.written) {
                self.crashed = true;
                self.run = None;
                self.ops.clear();
                return None;
            }
            let request = Request::Append {
                expected_tail: Some(run.expected_tail),
                fence: Some(self.token),
                body: run.records[run.written].encode(),
                headers: Headers::default(),
            };
            return Some((Pending::RunRecord, request));
        }
        match self.ops.front()? {
            OwnerOp::Write { body } => {
                let request = Request::Append {
                    expected_tail: None,
                    fence: Some(self.token),
                    body: body.clone(),
                    headers: Headers::default(),
                };
                Some((Pending::Write, request))
            }
            OwnerOp::Truncate { floor } => Some(self.trim_request(*floor, true)),
            OwnerOp::Checkpoint => {
                let Some(tail) = self.caught_up_at else {
                    return Some(self.read_request());
                };
                // The fold covers every write below the tail: the run lands exactly there.
                self.ops.pop_front();
                let Some(state) = self.core.fold() else {
                    // Moved up to a floor it could not restore from: it has no honest state to
                    // checkpoint. Drop the request.
                    return self.plan();
                };
                let run = RunPlan {
                    records: encode_run(state, self.config.chunk_bytes),
                    written: 0,
                    begin: None,
                    expected_tail: tail,
                };
                let request = Request::Append {
                    expected_tail: Some(tail),
                    fence: Some(self.token),
                    body: run.records[0].encode(),
                    headers: Headers::default(),
                };
                self.run = Some(run);
                Some((Pending::RunRecord, request))
            }
        }
    }

    fn on_read(&mut self, reply: Reply) -> Step {
        match reply {
            Reply::Records { records, next } => {
                let ordered = records
                    .windows(2)
                    .all(|pair| pair[0].offset < pair[1].offset);
                let cursor = self.cursor;
                let in_range = records
                    .iter()
                    .all(|record| record.offset >= cursor && record.offset < next);
                if next < cursor || !ordered || !in_range {
                    return Step::none();
                }
                let mut events = Vec::new();
                for record in &records {
                    events.extend(self.core.ingest(record));
                }
                self.cursor = next;
                if records.len() < self.config.read_batch_max as usize {
                    self.caught_up_at = Some(next);
                }
                Step::events(events)
            }
            Reply::CursorTooOld { floor, .. } if floor > self.cursor => {
                let gap = Event::Gap {
                    client: self.client,
                    from: self.cursor,
                    to: floor,
                };
                self.cursor = floor;
                self.core.lose_base();
                Step::events(vec![gap])
            }
            Reply::NotLeader { hint } | Reply::NoReadIndex { hint } => {
                Step::route(Route::Leader(hint))
            }
            _ => Step::route(Route::AnotherNode),
        }
    }

    fn on_run_record(&mut self, reply: Reply) -> Step {
        let Some(run) = self.run.as_mut() else {
            return Step::none();
        };
        match reply {
            Reply::Appended { offset, tail } if offset == run.expected_tail && tail > offset => {
                run.begin.get_or_insert(offset);
                run.written += 1;
                run.expected_tail = tail;
                self.caught_up_at = None;
                if run.written < run.records.len() {
                    return Step::none();
                }
                let begin = run.begin.unwrap_or(offset);
                self.run = None;
                self.truncate_to = Some(begin);
                Step::events(vec![Event::CheckpointWritten {
                    client: self.client,
                    begin,
                    end: offset,
                }])
            }
            Reply::FenceMismatch { current } => self.stop(current),
            Reply::NotLeader { hint } => Step::route(Route::Leader(hint)),
            _ => {
                // Refused (someone wrote in between) or malformed: the run is abandoned without
                // an `End`; the driver may ask for another checkpoint.
                self.run = None;
                self.caught_up_at = None;
                Step::none()
            }
        }
    }

    fn on_truncate(&mut self, explicit: bool, reply: Reply) -> Step {
        match reply {
            Reply::TruncateRefused { current } | Reply::FenceMismatch { current } => {
                self.stop(current)
            }
            Reply::NotLeader { hint } => Step::route(Route::Leader(hint)),
            _ => {
                // Appended, a no-op, malformed, or an unexpected answer: done with this truncate.
                self.finish_truncate(explicit);
                self.caught_up_at = None;
                Step::none()
            }
        }
    }

    fn finish_truncate(&mut self, explicit: bool) {
        if explicit {
            self.ops.pop_front();
        } else {
            self.truncate_to = None;
        }
    }

    fn unknown(&mut self, id: RequestId, pending: Pending) -> Step {
        self.caught_up_at = None;
        match pending {
            Pending::Fence | Pending::Read => {}
            Pending::Write => {
                self.end_write(id);
            }
            Pending::RunRecord => self.run = None,
            Pending::Truncate { explicit, .. } => self.finish_truncate(explicit),
        }
        Step::none()
    }

    /// The body of write `id`, which is no longer in flight.
    fn end_write(&mut self, id: RequestId) -> Option<Vec<u8>> {
        let index = self.writes.iter().position(|(write, _)| *write == id)?;
        Some(self.writes.remove(index).1)
    }

    /// Whether another request may go out now: with nothing in flight, or, in a pipeline, while
    /// only writes are in flight, fewer than the bound, and the next request is a write too.
    fn may_send(&self) -> bool {
        let in_flight = self.in_flight.len();
        if in_flight == 0 {
            return true;
        }
        let writes_only = self.writes.len() == in_flight;
        // A run and a truncate start only with nothing in flight and go out alone.
        assert!(!writes_only || (self.run.is_none() && self.truncate_to.is_none()));
        writes_only
            && in_flight < self.config.writes_in_flight_max
            && matches!(self.ops.front(), Some(OwnerOp::Write { .. }))
    }

    /// Handles the reply to request `id` (no longer in flight).
    fn on_reply_to(&mut self, id: RequestId, pending: Pending, reply: Reply) -> Step {
        match pending {
            Pending::Fence => match reply {
                Reply::Appended { .. } => {
                    self.fenced = true;
                    Step::none()
                }
                // Our own fence is in force: an earlier attempt whose outcome was unknown landed.
                Reply::FenceMismatch { current } if current == self.token => {
                    self.fenced = true;
                    Step::none()
                }
                Reply::FenceMismatch { current } => self.stop(current),
                Reply::NotLeader { hint } => Step::route(Route::Leader(hint)),
                _ => Step::none(),
            },
            Pending::Read => self.on_read(reply),
            Pending::Write => match reply {
                Reply::FenceMismatch { current } => self.stop(current),
                Reply::NotLeader { hint } => {
                    // Not sent anywhere that leads: the write goes out again, first.
                    if let Some(body) = self.end_write(id) {
                        self.ops.push_front(OwnerOp::Write { body });
                    }
                    Step::route(Route::Leader(hint))
                }
                Reply::Appended { .. } | Reply::Invalid(_) => {
                    self.end_write(id);
                    self.caught_up_at = None;
                    Step::none()
                }
                _ => self.unknown(id, pending),
            },
            Pending::RunRecord => self.on_run_record(reply),
            Pending::Truncate { explicit } => self.on_truncate(explicit, reply),
        }
    }
}

impl Client for Owner {
    fn client_id(&self) -> ClientId {
        self.client
    }

    fn next_request(&mut self) -> Option<(RequestId, Request)> {
        if self.is_finished() || !self.may_send() {
            return None;
        }
        let (pending, request) = self.plan()?;
        let id = self
            .in_flight
            .start_bounded(pending, self.config.writes_in_flight_max);
        if pending == Pending::Write {
            // In flight now: out of the queue, kept by id until its answer.
            if let Some(OwnerOp::Write { body }) = self.ops.pop_front() {
                self.writes.push((id, body));
            }
        }
        Some((id, request))
    }

    fn on_reply(&mut self, id: RequestId, reply: Reply) -> Step {
        let Some(pending) = self.in_flight.get(id) else {
            return Step::ignored();
        };
        if self.is_finished() {
            return Step::ignored();
        }
        self.in_flight.end(id);
        let cursor_before = self.cursor;
        let step = self.on_reply_to(id, pending, reply);
        assert!(
            self.cursor >= cursor_before,
            "an owner's cursor never goes back"
        );
        assert!(
            !self.is_finished() || (self.ops.is_empty() && self.writes.is_empty()),
            "a finished owner has no work"
        );
        step
    }

    fn on_unknown(&mut self, id: RequestId) -> Step {
        match self.in_flight.get(id) {
            Some(pending) if !self.is_finished() => {
                self.in_flight.end(id);
                self.unknown(id, pending)
            }
            _ => Step::ignored(),
        }
    }

    fn in_flight(&self) -> Option<RequestId> {
        self.in_flight.id()
    }

    fn is_finished(&self) -> bool {
        self.stopped.is_some() || self.crashed
    }
}
