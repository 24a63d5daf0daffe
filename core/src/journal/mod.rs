//! The node-local journal: the log as data plus the journal rules, pure (no IO).
//!
//! One `Journal` per node (broker or replica) holds the contiguous records it still has, the
//! committed index, the fold of the committed prefix (writer token, floor, the floor-setting
//! trim), the trim index and the sealed base below the first held record. Every change that must
//! be durable comes back as a `StorageOp` for the caller to persist; nothing here does IO.
//!
//! The rules, each with a switch in `Rules` (and a twin that switches it off):
//! - **Sequencing step** (`Journal::sequence`, the leader only): `expected_tail` and fence are
//!   checked against the node's own log *including uncommitted records*, in order with every other
//!   append; a mismatch writes nothing. A trim asks for a floor at most its own offset; a trim at or
//!   below the current floor is a no-op that still checks tail and fence (`noop_trim_checks_tail`).
//! - **Lazy floor** (`Journal::commit_to`): a trim's floor is applied when the walk over the
//!   committed log reaches it (`floor_after_commit`), never decreasing; a trim whose fence is not
//!   the writer token in force there is refused in place (`truncate_fenced`).
//! - **Reads** (`Journal::read`) serve the committed prefix, skip bookkeeping records, refuse below
//!   the readable start with `CursorTooOld { floor, tag }` and answer `NotHeld` for a range the node
//!   jumped over. `Journal::read_without_index` is the part of it that needs no read index (the
//!   broker's `read_index.rs` decides when the rest may run).
//! - **Compaction** (`Journal::compact`) deletes whole segments below the floor, never the active
//!   segment, never the floor record (`compaction_keeps_floor_record`), clamped to the committed
//!   prefix, and seals the folded state in the same op; **retention** (`only_trims_delete` off) may delete
//!   regardless of trims.
//! - **Jump** (`Journal::jump`): adopt a peer's trim point and sealed state in one op, after the
//!   truncation of a conflicting suffix. The node then holds nothing below `point`, its committed
//!   index is at least `point - 1` and its floor at most `point` (never past committed + 1); it
//!   keeps its records past `point` only if they follow the sealed base (`jump_checks_base_term`).
//!   When the sender's floor is above `point`, a read below `point` is `NotHeld` (the reader asks
//!   another node) until its walk reaches the trim that set that floor; after it, `CursorTooOld`
//!   with that trim's tag (the second seed's window).
//! - **The walk's order** (`floor_at_its_trim`, `writer_at_its_fence`): a trim's floor and a
//!   fence's writer take effect when the walk reaches their record, not a step before. Breaking
//!   them (the EarlyFloor and EarlyFence twins) changes no answer, so no audit sees it: they are
//!   the validation layer's twins, which only trace validation catches.
//!
//! Offsets: the journal holds `first_held() ..= last_offset()`; `tail()` is the next free offset.
//! Below `first_held()` only the sealed state remains. The walk is synchronous: the fold describes
//! the committed prefix (except under the FloorPastCommit, EarlyFloor and EarlyFence twins).

mod trim_index;

pub use trim_index::{TrimIndex, TrimIndexEntry};

use crate::api::{InvalidRequest, ReadFrom, ReadRecord, Reply, Request};
use crate::record::{Command, Entry, Headers, Offset, Term, Token};
use crate::rules::Rules;
use crate::storage::{SealedState, SegmentLayout, StorageOp};
use std::collections::VecDeque;
use std::fmt;

/// How a journal is set up: layout, rules and the bounds on what a client may send.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JournalConfig {
    pub layout: SegmentLayout,
    pub rules: Rules,
    /// Retention (used only when `rules.only_trims_delete` is false): keep at most this many whole
    /// segments of the committed prefix, regardless of trims.
    pub retention_segments_max: u64,
    /// A read answers at most this many records, whatever the request asks.
    pub read_records_max: u32,
    /// A write body above this is `Invalid(TooLarge)`.
    pub body_bytes_max: u64,
    /// Headers (keys plus values) above this are `Invalid(MalformedHeaders)`.
    pub headers_bytes_max: u64,
}

impl Default for JournalConfig {
    fn default() -> JournalConfig {
        JournalConfig {
            layout: SegmentLayout::default(),
            rules: Rules::default(),
            retention_segments_max: 1,
            read_records_max: 256,
            body_bytes_max: 1 << 20,
            headers_bytes_max: 4096,
        }
    }
}

/// The state the committed prefix folded to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fold {
    /// The writer token in force (the last committed fence record's `new`).
    pub writer: Token,
    /// The floor: the first offset a reader may be served. Starts at 1, never decreases.
    pub floor: Offset,
    /// The headers of the trim that set the floor (None when no trim set it).
    pub floor_tag: Option<Headers>,
    /// The offset of the trim that set the floor (None when no trim set it).
    pub floor_trim: Option<Offset>,
}

/// The outcome of the sequencing step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Sequenced {
    /// A record was appended at `offset`: persist `op`, answer when it is committed.
    Appended { offset: Offset, op: StorageOp },
    /// Nothing was written: answer the client now.
    Answered(Reply),
}

/// What the walk over the committed log did, in offset order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WalkEvent {
    /// The walk reached the record at `offset`.
    Committed { offset: Offset },
    /// The floor rose to `floor`, set by the trim at `trim`.
    FloorApplied { floor: Offset, trim: Offset },
    /// The committed trim at `offset` carried a stale fence and was refused in place (reported
    /// right after that offset's `Committed`).
    TruncateRefused { offset: Offset, current: Token },
}

/// What a compaction deleted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Compaction {
    /// Every record below `below` is gone.
    pub below: Offset,
    /// Where reads may start now.
    pub readable_start: Offset,
    /// Whether retention (rather than the floor) chose `below`.
    pub retention: bool,
    /// The op to persist: `StorageOp::Compact`.
    pub op: StorageOp,
}

/// The outcome of a trim-point jump.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Jump {
    /// The point was at or below what the node already had: nothing changed.
    Ignored,
    /// The node jumped: persist `ops` in order (maybe a `TruncateSuffix` of a conflicting suffix,
    /// then the `TrimmedTo`: each prefix is a log the node restarts from). Resumes at `resume`.
    Jumped { ops: Vec<StorageOp>, resume: Offset },
}

/// A recovered store that does not describe a journal (a store bug, reported, not a panic).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecoverError {
    pub reason: String,
}

impl fmt::Display for RecoverError {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "cannot rebuild the journal: {}", self.reason)
    }
}

impl std::error::Error for RecoverError {}

/// A node's journal: records, committed index, fold, trim index, sealed base.
#[derive(Clone, Debug)]
pub struct Journal {
    config: JournalConfig,
    /// What the records at or below `sealed.base_offset` folded to (the last Compact/TrimmedTo).
    sealed: SealedState,
    /// Records `sealed.base_offset + 1 ..`, contiguous.
    entries: VecDeque<Entry>,
    trim_index: TrimIndex,
    committed: Offset,
    fold: Fold,
    /// The writer token in force at the tail (committed and uncommitted fences): what the
    /// sequencing step checks fences against.
    tail_writer: Token,
    /// The first held offset after this node's own last deletion; 0 when none. It matters where
    /// the deletion went past the floor (retention, or the CompactActive twin): reads below it are
    /// refused untagged.
    deleted_start: Offset,
    /// Only with `writer_at_its_fence` off (the EarlyFence twin): the writer in force before an
    /// early fence, restored before anything reads it.
    early_writer: Option<Token>,
}

impl Journal {
    /// An empty journal: tail 1, floor 1, nothing committed.
    pub fn new(config: JournalConfig) -> Journal {
        assert!(config.layout.records_per_segment > 0);
        Journal {
            config,
            sealed: SealedState::default(),
            entries: VecDeque::new(),
            trim_index: TrimIndex::default(),
            committed: 0,
            fold: Fold {
                writer: Token(0),
                floor: 1,
                floor_tag: None,
                floor_trim: None,
            },
            tail_writer: Token(0),
            deleted_start: 0,
            early_writer: None,
        }
    }

    /// Rebuilds a journal from what a store recovered: the sealed base and the held records
    /// starting at `start`. The committed index restarts at the sealed base (it is learned again
    /// from the leader), and so does the floor: it starts at the sealed floor and the walk raises
    /// it again when it reaches the held trims (meanwhile the node is a lagging node like any other:
    /// the audits forget a node's floor at a restart). The trim index is rebuilt by a scan.
    pub fn recover(
        config: JournalConfig,
        sealed: Option<SealedState>,
        start: Offset,
        entries: Vec<Entry>,
    ) -> Result<Journal, RecoverError> {
        let mut journal = Journal::new(config);
        if let Some(sealed) = sealed {
            journal.fold = Fold {
                writer: sealed.writer,
                floor: sealed.floor.max(1),
                floor_tag: sealed.floor_tag.clone(),
                floor_trim: sealed.floor_trim,
            };
            journal.tail_writer = sealed.writer;
            journal.committed = sealed.base_offset;
            journal.sealed = sealed;
        }
        if start != journal.first_held() {
            return Err(RecoverError {
                reason: format!(
                    "the store holds records from {start} but its sealed base ends at {}",
                    journal.sealed.base_offset
                ),
            });
        }
        // A gap between the floor and the first held record is this node's own deletion when a
        // rule that deletes past the floor is off; under the default rules only a jump makes one.
        // (Where there is no gap, the first held offset is at most the floor: it changes nothing.)
        let rules = config.rules;
        if rules.retention_deletes() || !rules.compaction_keeps_floor_record {
            journal.deleted_start = start;
        }
        for entry in entries {
            if entry.offset != journal.tail() {
                return Err(RecoverError {
                    reason: format!(
                        "record at {} where {} was expected",
                        entry.offset,
                        journal.tail()
                    ),
                });
            }
            if entry.term < journal.last_term() && config.rules.jump_keeps_term {
                return Err(RecoverError {
                    reason: format!(
                        "record at {} has term {} below the term {} before it",
                        entry.offset,
                        entry.term,
                        journal.last_term()
                    ),
                });
            }
            if let Command::Trim { floor, .. } = &entry.command {
                if *floor > entry.offset {
                    return Err(RecoverError {
                        reason: format!(
                            "trim at {} asks for floor {floor} above itself",
                            entry.offset
                        ),
                    });
                }
            }
            journal.push(entry);
        }
        Ok(journal)
    }

    // ---- read-only accessors ----

    pub fn config(&self) -> &JournalConfig {
        &self.config
    }

    /// The next free offset.
    pub fn tail(&self) -> Offset {
        self.sealed.base_offset + self.entries.len() as u64 + 1
    }

    /// The last offset held (or the sealed base when nothing is held).
    pub fn last_offset(&self) -> Offset {
        self.tail() - 1
    }

    /// The term of the last record (or of the sealed base).
    pub fn last_term(&self) -> Term {
        self.entries
            .back()
            .map_or(self.sealed.base_term, |entry| entry.term)
    }

    /// The first offset this node holds a record for (or could: the log may be empty).
    pub fn first_held(&self) -> Offset {
        self.sealed.base_offset + 1
    }

    /// The term at `offset` when known: held records and the sealed base.
    pub fn term_at(&self, offset: Offset) -> Option<Term> {
        if offset == self.sealed.base_offset {
            return Some(self.sealed.base_term);
        }
        self.entry(offset).map(|entry| entry.term)
    }

    /// The record at `offset`, if held.
    pub fn entry(&self, offset: Offset) -> Option<&Entry> {
        if offset < self.first_held() {
            return None;
        }
        let entry = self.entries.get((offset - self.first_held()) as usize)?;
        assert_eq!(entry.offset, offset);
        Some(entry)
    }

    /// Held records from `from` (clamped to the held range), at most `count_max`.
    pub fn entries_from(&self, from: Offset, count_max: usize) -> impl Iterator<Item = &Entry> {
        let start = (from.saturating_sub(self.first_held()) as usize).min(self.entries.len());
        let end = start.saturating_add(count_max).min(self.entries.len());
        self.entries.range(start..end)
    }

    /// Every held record.
    pub fn entries(&self) -> impl Iterator<Item = &Entry> {
        self.entries.iter()
    }

    pub fn committed(&self) -> Offset {
        self.committed
    }

    pub fn fold(&self) -> &Fold {
        &self.fold
    }

    pub fn floor(&self) -> Offset {
        self.fold.floor
    }

    /// The headers of the floor-setting trim: from the trim index while the record is held, else
    /// from the sealed fold.
    pub fn floor_tag(&self) -> Option<&Headers> {
        let trim = self.fold.floor_trim?;
        match self.trim_index.get(trim) {
            Some(row) => Some(&row.headers),
            None => self.fold.floor_tag.as_ref(),
        }
    }

    /// The writer token in force at the committed prefix.
    pub fn writer(&self) -> Token {
        self.fold.writer
    }

    /// The writer token in force at the tail (uncommitted fences included).
    pub fn tail_writer(&self) -> Token {
        self.tail_writer
    }

    /// Where reads may start: the floor, or higher where this node's own deletion went past it.
    pub fn readable_start(&self) -> Offset {
        self.fold.floor.max(self.deleted_start)
    }

    /// The sealed base (what records below `first_held()` folded to).
    pub fn sealed(&self) -> &SealedState {
        &self.sealed
    }

    /// The incrementally maintained trim index.
    pub fn trim_index(&self) -> &TrimIndex {
        &self.trim_index
    }

    /// The trim index rebuilt from the held records (must equal `trim_index()`).
    pub fn rebuild_trim_index(&self) -> TrimIndex {
        TrimIndex::scan(self.entries.iter())
    }

    /// The sealed state a TrimmedTo sender hands a node below `first_held()`.
    pub fn trim_point(&self) -> (Offset, SealedState) {
        (self.first_held(), self.sealed.clone())
    }

    // ---- the sequencing step (leader) ----

    /// Evaluates a client request in order with every other append, against this node's own log
    /// (uncommitted records included). Appends at most one record, stamped with `term`.
    pub fn sequence(&mut self, term: Term, request: Request) -> Sequenced {
        if self.config.rules.jump_keeps_term {
            // Under JumpResetsTerm a promise can fall below the log's terms: the audits judge it.
            assert!(
                term >= self.last_term(),
                "a leader never sequences below its log's last term"
            );
        }
        let tail = self.tail();
        match request {
            Request::Append {
                expected_tail,
                fence,
                body,
                headers,
            } => {
                if let Some(invalid) = self.check_headers(&headers) {
                    return Sequenced::Answered(Reply::Invalid(invalid));
                }
                if body.len() as u64 > self.config.body_bytes_max {
                    return Sequenced::Answered(Reply::Invalid(InvalidRequest::TooLarge {
                        bytes: body.len() as u64,
                        limit: self.config.body_bytes_max,
                    }));
                }
                if let Some(refusal) = self.check_conditions(expected_tail, fence) {
                    return Sequenced::Answered(refusal);
                }
                self.append_command(term, Command::Write { body, headers })
            }
            Request::Trim {
                expected_tail,
                fence,
                floor,
                headers,
            } => {
                if let Some(invalid) = self.check_headers(&headers) {
                    return Sequenced::Answered(Reply::Invalid(invalid));
                }
                let noop = floor <= self.fold.floor;
                if noop && !self.config.rules.noop_trim_checks_tail {
                    return Sequenced::Answered(Reply::TrimNoop { tail });
                }
                let fence_checked = if self.config.rules.truncate_fenced {
                    fence
                } else {
                    None
                };
                if let Some(refusal) = self.check_conditions(expected_tail, fence_checked) {
                    return Sequenced::Answered(refusal);
                }
                if floor > tail {
                    return Sequenced::Answered(Reply::Invalid(InvalidRequest::FloorAboveOffset {
                        floor,
                        offset: tail,
                    }));
                }
                if noop {
                    return Sequenced::Answered(Reply::TrimNoop { tail });
                }
                self.append_command(
                    term,
                    Command::Trim {
                        floor,
                        headers,
                        fence,
                    },
                )
            }
            Request::Fence { new, old } => {
                if old != self.tail_writer {
                    return Sequenced::Answered(Reply::FenceMismatch {
                        current: self.tail_writer,
                    });
                }
                self.append_command(term, Command::Fence { new, old })
            }
            Request::Read { from, max_records } => {
                Sequenced::Answered(self.read(from, max_records))
            }
        }
    }

    /// Appends the leader's noop for `term`.
    pub fn append_noop(&mut self, term: Term) -> StorageOp {
        match self.append_command(term, Command::Noop) {
            Sequenced::Appended { op, .. } => op,
            Sequenced::Answered(reply) => unreachable!("a noop is never refused: {reply:?}"),
        }
    }

    fn append_command(&mut self, term: Term, command: Command) -> Sequenced {
        let offset = self.tail();
        let entry = Entry {
            offset,
            term,
            command,
        };
        self.push(entry.clone());
        assert_eq!(self.tail(), offset + 1);
        Sequenced::Appended {
            offset,
            op: StorageOp::Append(vec![entry]),
        }
    }

    fn check_conditions(
        &self,
        expected_tail: Option<Offset>,
        fence: Option<Token>,
    ) -> Option<Reply> {
        let tail = self.tail();
        if expected_tail.is_some_and(|expected| expected != tail) {
            return Some(Reply::OffsetMismatch { tail });
        }
        if fence.is_some_and(|token| token != self.tail_writer) {
            return Some(Reply::FenceMismatch {
                current: self.tail_writer,
            });
        }
        None
    }

    fn check_headers(&self, headers: &Headers) -> Option<InvalidRequest> {
        let mut bytes: u64 = 0;
        for (key, value) in &headers.0 {
            if key.is_empty() {
                return Some(InvalidRequest::MalformedHeaders {
                    reason: "a header key is empty".to_string(),
                });
            }
            bytes += (key.len() + value.len()) as u64;
        }
        if bytes > self.config.headers_bytes_max {
            return Some(InvalidRequest::MalformedHeaders {
                reason: format!(
                    "headers take {bytes} bytes, above the limit of {}",
                    self.config.headers_bytes_max
                ),
            });
        }
        None
    }

    /// Appends one record at the tail, keeping the trim index and the tail writer up to date.
    fn push(&mut self, entry: Entry) {
        assert_eq!(
            entry.offset,
            self.tail(),
            "records are appended contiguously"
        );
        if self.config.rules.jump_keeps_term {
            assert!(
                entry.term >= self.last_term(),
                "terms never decrease along the log"
            );
        }
        self.trim_index.note_appended(&entry);
        match &entry.command {
            Command::Fence { new, .. } => self.tail_writer = *new,
            Command::Trim { floor, fence, .. } if !self.config.rules.floor_after_commit => {
                // FloorPastCommit twin: the floor is applied when the trim is appended.
                let refused = self.config.rules.truncate_fenced
                    && fence.is_some_and(|token| token != self.tail_writer);
                if !refused {
                    let (floor, offset) = (*floor, entry.offset);
                    let headers = match &entry.command {
                        Command::Trim { headers, .. } => headers.clone(),
                        _ => unreachable!(),
                    };
                    self.raise_floor(floor, offset, headers);
                }
            }
            _ => {}
        }
        self.entries.push_back(entry);
    }

    /// Raises the floor (never lowers it). Returns whether it moved.
    fn raise_floor(&mut self, floor: Offset, trim: Offset, headers: Headers) -> bool {
        assert!(
            floor <= trim,
            "a trim never sets a floor above its own offset"
        );
        if floor <= self.fold.floor {
            return false;
        }
        self.fold.floor = floor;
        self.fold.floor_tag = Some(headers);
        self.fold.floor_trim = Some(trim);
        true
    }

    // ---- replication (followers and replicas) ----

    /// Log matching: accepts `entries` (contiguous, starting at `prev_offset + 1`) if this node's
    /// record at `prev_offset` has `prev_term`, truncating a conflicting uncommitted suffix.
    /// Pushes the ops to persist into `ops`. Returns `Ok(last offset now known to match)`, or
    /// `Err(next offset this node needs)` when it cannot accept.
    pub fn append_replicated(
        &mut self,
        prev_offset: Offset,
        prev_term: Term,
        entries: Vec<Entry>,
        ops: &mut Vec<StorageOp>,
    ) -> Result<Offset, Offset> {
        let matched = prev_offset + entries.len() as u64;
        if prev_offset > self.last_offset() {
            return Err(self.tail());
        }
        if prev_offset >= self.sealed.base_offset && self.term_at(prev_offset) != Some(prev_term) {
            // The conflicting term's first record is where the leader should look next, but never
            // inside the committed prefix.
            // (The committed index is never below the sealed base, so this stays in what is held.)
            let conflict_term = self.term_at(prev_offset);
            let lowest = self.committed + 1;
            let mut hint = prev_offset.max(lowest);
            while hint > lowest && self.term_at(hint - 1) == conflict_term {
                hint -= 1;
            }
            return Err(hint);
        }
        let mut new_entries: Vec<Entry> = Vec::new();
        for entry in entries {
            if entry.offset < self.first_held() {
                continue; // inside the sealed (committed) prefix
            }
            if new_entries.is_empty() && entry.offset <= self.last_offset() {
                if self.term_at(entry.offset) == Some(entry.term) {
                    continue;
                }
                // A conflicting suffix: never inside the committed prefix under the rules.
                if entry.offset <= self.committed {
                    return Err(self.committed + 1);
                }
                self.truncate_suffix(entry.offset);
                ops.push(StorageOp::TruncateSuffix { from: entry.offset });
            }
            assert_eq!(entry.offset, self.tail());
            self.push(entry.clone());
            new_entries.push(entry);
        }
        if !new_entries.is_empty() {
            ops.push(StorageOp::Append(new_entries));
        }
        assert!(self.last_offset() >= matched || matched < self.first_held());
        Ok(matched)
    }

    /// Drops every record at or above `from` (uncommitted).
    pub fn truncate_suffix(&mut self, from: Offset) {
        self.restore_early_writer();
        assert!(
            from > self.committed,
            "the committed prefix is never truncated"
        );
        assert!(from >= self.first_held());
        while self
            .entries
            .back()
            .is_some_and(|entry| entry.offset >= from)
        {
            self.entries.pop_back();
        }
        self.trim_index.truncate_suffix(from);
        self.tail_writer = self.writer_at_tail();
        assert_eq!(self.tail(), from.min(self.tail()));
    }

    /// The writer token in force at the tail: the last uncommitted fence, else the fold's.
    fn writer_at_tail(&self) -> Token {
        for entry in self.entries.iter().rev() {
            if entry.offset <= self.committed {
                break;
            }
            if let Command::Fence { new, .. } = entry.command {
                return new;
            }
        }
        self.fold.writer
    }

    // ---- the walk over the committed log ----

    /// Advances the committed index to `committed` (at most the last held offset) and walks the
    /// newly committed records: fences set the writer, trims raise the floor or are refused in
    /// place. Pushes what happened into `events`.
    pub fn commit_to(&mut self, committed: Offset, events: &mut Vec<WalkEvent>) {
        assert!(
            committed <= self.last_offset(),
            "never commit a record that is not held"
        );
        self.restore_early_writer();
        let floor_before = self.fold.floor;
        while self.committed < committed {
            let offset = self.committed + 1;
            let index = (offset - self.first_held()) as usize;
            events.push(WalkEvent::Committed { offset });
            let entry = &self.entries[index];
            assert_eq!(entry.offset, offset);
            match &entry.command {
                Command::Fence { new, .. } => self.fold.writer = *new,
                Command::Trim {
                    floor,
                    headers,
                    fence,
                } => {
                    let floor = *floor;
                    let stale = fence.is_some_and(|token| token != self.fold.writer);
                    if stale && self.config.rules.truncate_fenced {
                        events.push(WalkEvent::TruncateRefused {
                            offset,
                            current: self.fold.writer,
                        });
                    } else if self.config.rules.floor_after_commit {
                        let headers = headers.clone();
                        if self.raise_floor(floor, offset, headers) {
                            events.push(WalkEvent::FloorApplied {
                                floor,
                                trim: offset,
                            });
                        }
                    }
                }
                Command::Write { .. } | Command::Noop => {}
            }
            self.committed = offset;
        }
        if !self.config.rules.floor_at_its_trim {
            self.apply_next_trim_early(events);
        }
        if !self.config.rules.writer_at_its_fence {
            self.apply_next_fence_early();
        }
        assert!(self.fold.floor >= floor_before, "the floor never decreases");
        assert!(self.committed >= committed);
    }

    /// The EarlyFence twin (`writer_at_its_fence` off): moves the writer to the `new` of a fence
    /// held right after the commit index, one walk step before the walk reaches it. The old writer is kept and restored before
    /// the walk, a suffix truncation or a jump reads the fold, so nothing the node does or answers
    /// changes (sequencing checks fences against the tail writer, which already has it).
    fn apply_next_fence_early(&mut self) {
        let offset = self.committed + 1;
        if offset < self.first_held() || offset > self.last_offset() {
            return;
        }
        if let Command::Fence { new, .. } =
            self.entries[(offset - self.first_held()) as usize].command
        {
            self.early_writer = Some(self.fold.writer);
            self.fold.writer = new;
        }
    }

    /// Undoes `apply_next_fence_early` (nothing to undo with the rule on).
    fn restore_early_writer(&mut self) {
        if let Some(writer) = self.early_writer.take() {
            self.fold.writer = writer;
        }
    }

    /// The EarlyFloor twin (`floor_at_its_trim` off): applies the floor of an unfenced trim held
    /// right after the commit index, one walk step before the walk reaches it, only when no write
    /// lies in between (so no read, acknowledgement or deletion can tell).
    fn apply_next_trim_early(&mut self, events: &mut Vec<WalkEvent>) {
        let offset = self.committed + 1;
        if offset < self.first_held() || offset > self.last_offset() {
            return;
        }
        let entry = &self.entries[(offset - self.first_held()) as usize];
        if let Command::Trim {
            floor,
            headers,
            fence: None,
        } = &entry.command
        {
            let (floor, headers) = (*floor, headers.clone());
            // Only when nothing a reader reads lies in between: no write below the early floor
            // and at or above the floor in force.
            let quiet = (self.fold.floor.max(self.first_held())..floor).all(|below| {
                !matches!(
                    self.entries[(below - self.first_held()) as usize].command,
                    Command::Write { .. }
                )
            });
            if quiet
                && self.config.rules.floor_after_commit
                && self.raise_floor(floor, offset, headers)
            {
                events.push(WalkEvent::FloorApplied {
                    floor,
                    trim: offset,
                });
            }
        }
    }

    // ---- compaction and retention ----

    /// Deletes whole segments the rules allow (see the module doc), sealing the fold of what they
    /// held. Returns None when nothing can be deleted.
    pub fn compact(&mut self) -> Option<Compaction> {
        let layout = self.config.layout;
        let rules = self.config.rules;
        if self.entries.is_empty() {
            return None;
        }
        let last = self.last_offset();
        let committed_bound = layout.base_of(self.committed + 1);
        let mut below = if rules.compaction_keeps_floor_record {
            let mut below = layout.base_of(self.fold.floor).min(layout.base_of(last));
            if let Some(trim) = self.fold.floor_trim {
                below = below.min(layout.base_of(trim));
            }
            below
        } else {
            // CompactActive twin: up to and including the floor record's segment, active or not.
            match self.fold.floor_trim {
                Some(trim) => layout.last_of(trim) + 1,
                None => layout.base_of(self.fold.floor),
            }
        };
        below = below.min(committed_bound);
        let mut retention = false;
        if rules.retention_deletes() {
            let keep = self.config.retention_segments_max * layout.records_per_segment;
            let by_retention = committed_bound
                .saturating_sub(keep)
                .min(layout.base_of(last))
                .max(1);
            if by_retention > below {
                below = by_retention;
                retention = true;
            }
        }
        if below <= self.first_held() {
            return None;
        }
        assert!(
            below <= self.committed + 1,
            "compaction is clamped to the committed prefix"
        );
        let base_term = self
            .term_at(below - 1)
            .expect("the record before `below` is held");
        let mut writer = self.sealed.writer;
        while self
            .entries
            .front()
            .is_some_and(|entry| entry.offset < below)
        {
            if let Some(entry) = self.entries.pop_front() {
                if let Command::Fence { new, .. } = entry.command {
                    writer = new;
                }
            }
        }
        let floor_tag = self.floor_tag().cloned();
        self.trim_index.drop_below(below);
        self.sealed = SealedState {
            writer,
            floor: self.fold.floor,
            floor_tag,
            floor_trim: self.fold.floor_trim,
            base_offset: below - 1,
            base_term,
        };
        // Below the floor this changes nothing a reader sees (the readable start is the larger).
        self.deleted_start = self.deleted_start.max(below);
        assert_eq!(self.first_held(), below);
        Some(Compaction {
            below,
            readable_start: self.readable_start(),
            retention,
            op: StorageOp::Compact {
                below,
                sealed: self.sealed.clone(),
            },
        })
    }

    // ---- the trim-point jump ----

    /// A jump keeps the records past `point` if the one at its base has `base_term` (StaleSuffix).
    fn jump_keeps_suffix(&self, point: Offset, base_term: Term) -> bool {
        self.term_at(point - 1) == Some(base_term)
            || (!self.config.rules.jump_checks_base_term && self.last_offset() >= point)
    }

    /// Adopts a peer's trim point: `point` is its first held offset and `state` what its records
    /// below folded to. Ignored when `point` is at or below this node's floor or first held offset.
    /// Never touches term or vote (that is the broker's business, and it does not).
    pub fn jump(&mut self, point: Offset, state: SealedState) -> Jump {
        self.restore_early_writer();
        if point <= self.fold.floor || point <= self.first_held() {
            return Jump::Ignored;
        }
        assert_eq!(
            state.base_offset + 1,
            point,
            "a trim point is the first offset after the sealed base"
        );
        let floor_before = self.fold.floor;
        let mut ops = Vec::with_capacity(2);
        let keep_suffix = self.jump_keeps_suffix(point, state.base_term);
        if !keep_suffix && self.committed >= point - 1 {
            // This node committed a different record at the point's base: only a twin gets here,
            // and the audits judge it. Jumping would drop committed records.
            return Jump::Ignored;
        }
        let drop_suffix = !keep_suffix && self.last_offset() >= point;
        while self
            .entries
            .front()
            .is_some_and(|entry| entry.offset < point)
        {
            self.entries.pop_front();
        }
        if drop_suffix {
            self.entries.clear();
        }
        self.trim_index.drop_below(point);
        if drop_suffix {
            self.trim_index.truncate_suffix(point);
        }
        // The second seed's jump: the floor becomes the point (or the sender's floor, if lower),
        // never past committed + 1, and it covers every trim below the point. A sender's floor at
        // or below the point is adopted with its trim and tag. A floor above the point was set by
        // a trim at or above the point (the sender never deletes it): this node's floor is then the
        // point, set by no trim, and until its walk reaches that trim a read below the point is
        // `NotHeld` (see `refusal`); the walk then raises the floor with that trim's tag.
        if state.floor > self.fold.floor {
            if state.floor <= point {
                self.fold.floor = state.floor;
                self.fold.floor_tag = state.floor_tag.clone();
                self.fold.floor_trim = state.floor_trim;
            } else {
                self.fold.floor = point;
                self.fold.floor_tag = None;
                self.fold.floor_trim = None;
            }
        }
        if self.committed < point - 1 {
            // The walk resumes after the point from the state the records below it folded to. A
            // node whose walk already passed the point keeps its own (later) writer.
            self.fold.writer = state.writer;
            self.committed = point - 1;
        }
        self.sealed = SealedState {
            writer: state.writer,
            floor: self.fold.floor,
            floor_tag: self.fold.floor_tag.clone(),
            floor_trim: self.fold.floor_trim,
            base_offset: point - 1,
            base_term: state.base_term,
        };
        let front = self.entries.front().map(|entry| entry.offset);
        assert!(front.is_none_or(|front| front == point));
        self.tail_writer = self.writer_at_tail();
        if drop_suffix {
            ops.push(StorageOp::TruncateSuffix { from: point });
        }
        ops.push(StorageOp::TrimmedTo {
            point,
            state: self.sealed.clone(),
        });
        assert!(
            self.fold.floor >= floor_before,
            "a jump never lowers the floor"
        );
        assert!(self.committed >= point - 1);
        if self.config.rules.floor_after_commit {
            assert!(
                self.fold.floor <= self.committed + 1,
                "a jump never sets a floor past the committed prefix"
            );
        }
        assert_eq!(
            self.first_held(),
            point,
            "a jumped node holds nothing below the point"
        );
        Jump::Jumped {
            ops,
            resume: self.tail(),
        }
    }

    // ---- reads ----

    /// The answer a node may give at once, without a read index (`broker/read_index.rs`), because
    /// it serves nothing and rests on facts that only grow: `CursorTooOld` below the readable start
    /// (floors never decrease) and `NotHeld` in a range the node jumped over. `None`: the read needs
    /// a read index.
    pub fn read_without_index(&self, from: ReadFrom) -> Option<Reply> {
        match from {
            ReadFrom::Offset(offset) => self.refusal(offset),
            ReadFrom::Earliest => None,
        }
    }

    /// `CursorTooOld` (with the floor-setting trim's headers as the tag, when the rules show it)
    /// below the readable start; `NotHeld` below the first held record, including below a floor a
    /// jump set to its point (set by no trim: the node does not know the floor or the tag there
    /// until its walk reaches the trim that set the sender's floor, so the reader asks another
    /// node).
    fn refusal(&self, from: Offset) -> Option<Reply> {
        let rules = self.config.rules;
        let start = self.readable_start();
        let jump_floor = self.fold.floor > 1 && self.fold.floor_trim.is_none();
        // Such a floor is a jump's, at most its point, and the readable start is then at most the
        // first held offset (which never falls below the point): below it nothing is held.
        if from < start && jump_floor {
            return Some(Reply::NotHeld { from });
        }
        if from < start {
            let set_by_trim = start == self.fold.floor && self.fold.floor_trim.is_some();
            let tagged =
                set_by_trim && rules.floor_tag && rules.trims_visible && !rules.readers_see_trims();
            let tag = if tagged {
                self.floor_tag().cloned()
            } else {
                None
            };
            return Some(Reply::CursorTooOld { floor: start, tag });
        }
        if from < self.first_held() {
            return Some(Reply::NotHeld { from });
        }
        None
    }

    /// Serves a read from the committed prefix (see the module doc). Never panics on any input.
    pub fn read(&self, from: ReadFrom, max_records: u32) -> Reply {
        let rules = self.config.rules;
        let tail = self.committed + 1;
        let start = self.readable_start();
        let from = match from {
            ReadFrom::Earliest => start.max(self.first_held()),
            ReadFrom::Offset(offset) => offset,
        };
        if from > tail {
            return Reply::Invalid(InvalidRequest::ReadPastTail { from, tail });
        }
        if let Some(refusal) = self.refusal(from) {
            return refusal;
        }
        let records_max = max_records.min(self.config.read_records_max) as usize;
        let mut records = Vec::new();
        let mut next = from;
        for entry in self.entries_from(from, usize::MAX) {
            if entry.offset > self.committed || records.len() >= records_max {
                break;
            }
            assert_eq!(entry.offset, next);
            match &entry.command {
                Command::Write { body, headers } => records.push(ReadRecord {
                    offset: entry.offset,
                    body: body.clone(),
                    headers: headers.clone(),
                }),
                // VisibleTrims twin: the trim record, with its headers and an empty body.
                Command::Trim { headers, .. } if rules.readers_see_trims() => {
                    records.push(ReadRecord {
                        offset: entry.offset,
                        body: Vec::new(),
                        headers: headers.clone(),
                    })
                }
                _ => {}
            }
            next = entry.offset + 1;
        }
        Reply::Records { records, next }
    }
}
