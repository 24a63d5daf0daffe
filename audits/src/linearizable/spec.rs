//! The journal's sequential specification: one pure state machine, and for every client
//! operation the replies it allows in a state (the table is in `linearizable/mod.rs`).
//!
//! The state is the log (one slot per offset from 1: a write, a trim, a fence or a noop), the
//! floor with the headers of the trim that set it, the writer token in force, and every
//! `(floor, tag)` that has been in force so far (a node answers `CursorTooOld` from its own
//! floor, which may lag: any floor that was ever in force is a floor it may name). The tail is
//! the offset after the last slot. A `digest` over everything is kept as the state changes, so
//! the exact search can memoize a state in 8 bytes.

use felix_core::api::{ReadFrom, ReadRecord, Reply, Request};
use felix_core::journal::JournalConfig;
use felix_core::record::{Headers, Offset, Token};
use felix_core::words;

pub use super::refusal::reply_words;

mod checks;
use super::refusal::{refuse, Words};

/// An operation the specification knows: a client's request, or a record nobody requested
/// (a leader's noop, inferred from the committed log).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Op {
    Client(Request),
    Noop,
}

/// One offset's record, as the specification keeps it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Slot {
    Write {
        body: Vec<u8>,
        headers: Headers,
    },
    /// A trim; `refused` when the walk refused it in place (its fence was stale).
    Trim {
        floor: Offset,
        refused: bool,
    },
    Fence,
    Noop,
}

/// What an allowed reply does: one slot lands, maybe raising the floor or setting the token.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Effect {
    slot: Slot,
    floor: Option<(Offset, Headers)>,
    token: Option<Token>,
}

impl Effect {
    fn push(slot: Slot) -> Effect {
        Effect {
            slot,
            floor: None,
            token: None,
        }
    }
}

/// A state to return to (`Spec::mark`, `Spec::undo`): the exact search walks one state forward
/// and back instead of copying it at every step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mark {
    log: usize,
    floors: usize,
    token: Token,
    digest: u64,
}

/// The specification's state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Spec {
    log: Vec<Slot>,
    token: Token,
    /// Every `(floor, tag)` in force so far, in order: the last is the floor and its tag now.
    floors: Vec<(Offset, Option<Headers>)>,
    digest: u64,
}

/// How many records one read serves at most (the core's `JournalConfig::read_records_max`): a
/// read that served fewer than `min(max_records, this)` reached the tail.
pub fn read_records_max() -> u32 {
    JournalConfig::default().read_records_max
}

impl Default for Spec {
    fn default() -> Spec {
        Spec::new()
    }
}

impl Spec {
    /// The empty journal: tail 1, floor 1 set by no trim, no writer.
    pub fn new() -> Spec {
        Spec {
            log: Vec::new(),
            token: Token(0),
            floors: vec![(1, None)],
            digest: crate::fnv::OFFSET,
        }
    }

    pub fn tail(&self) -> Offset {
        self.log.len() as Offset + 1
    }

    pub fn floor(&self) -> Offset {
        self.in_force().0
    }

    pub fn tag(&self) -> Option<&Headers> {
        self.in_force().1.as_ref()
    }

    /// The floor and its tag now: the last of the floors in force (there is always one).
    fn in_force(&self) -> &(Offset, Option<Headers>) {
        self.floors
            .last()
            .expect("the initial floor is always in force")
    }

    pub fn token(&self) -> Token {
        self.token
    }

    /// The slot at `offset`, if the log reaches it.
    pub fn slot(&self, offset: Offset) -> Option<&Slot> {
        let index = offset.checked_sub(1)? as usize;
        self.log.get(index)
    }

    /// A fingerprint of the whole state (memoization in the exact search).
    pub fn digest(&self) -> u64 {
        self.digest
    }

    /// The state in words: tail, floor and its tag, writer token.
    pub fn describe(&self) -> String {
        let tag = match self.tag() {
            Some(headers) => format!("tag {}", words::headers(headers)),
            None => "no tag".to_string(),
        };
        format!(
            "tail {}, floor {} ({tag}), writer token {}",
            self.tail(),
            self.floor(),
            self.token.0
        )
    }

    fn mix(&mut self, value: u64) {
        // FNV-1a over 8-byte words: the digest chains every change in order.
        self.digest = crate::fnv::fnv1a(self.digest, &value.to_le_bytes());
    }

    fn mix_bytes(&mut self, bytes: &[u8]) {
        self.mix(bytes.len() as u64);
        for byte in bytes {
            self.mix(u64::from(*byte));
        }
    }

    fn mix_headers(&mut self, headers: &Headers) {
        self.mix(headers.0.len() as u64);
        for (key, value) in &headers.0 {
            self.mix_bytes(key.as_bytes());
            self.mix_bytes(value.as_bytes());
        }
    }

    fn push(&mut self, slot: Slot) {
        match &slot {
            Slot::Write { body, headers } => {
                self.mix(1);
                let (body, headers) = (body.clone(), headers.clone());
                self.mix_bytes(&body);
                self.mix_headers(&headers);
            }
            Slot::Trim { floor, refused } => {
                self.mix(2);
                self.mix(*floor);
                self.mix(u64::from(*refused));
            }
            Slot::Fence => self.mix(3),
            Slot::Noop => self.mix(4),
        }
        self.log.push(slot);
    }

    fn raise_floor(&mut self, floor: Offset, headers: &Headers) {
        if floor <= self.floor() {
            return;
        }
        self.floors.push((floor, Some(headers.clone())));
        self.mix(5);
        self.mix(floor);
        self.mix_headers(headers);
    }

    fn set_token(&mut self, token: Token) {
        self.token = token;
        self.mix(6);
        self.mix(token.0);
    }

    /// The writes in `[from, next)` as a read serves them.
    fn writes(&self, from: Offset, next: Offset) -> Vec<ReadRecord> {
        let mut records = Vec::new();
        for offset in from.max(1)..next.min(self.tail()) {
            if let Some(Slot::Write { body, headers }) = self.slot(offset) {
                records.push(ReadRecord {
                    offset,
                    body: body.clone(),
                    headers: headers.clone(),
                });
            }
        }
        records
    }

    /// Whether `reply` to `op` depends on no state: then it changes nothing and is judged alone
    /// (`Some(verdict)`); `None` when the state decides.
    pub fn local(op: &Op, reply: &Reply) -> Option<Result<(), String>> {
        Spec::local_worded(op, reply, Words::Wanted)
    }

    /// `local`, its refusal worded only when `words` asks.
    pub(crate) fn local_worded(op: &Op, reply: &Reply, words: Words) -> Option<Result<(), String>> {
        let Op::Client(request) = op else {
            return None;
        };
        let verdict = match (request, reply) {
            // Answers that serve nothing and change nothing: allowed in any state.
            (_, Reply::NotLeader { .. } | Reply::NoReadIndex { .. } | Reply::Invalid(_)) => Ok(()),
            (Request::Read { .. }, Reply::NotHeld { .. }) => Ok(()),
            // A refusal is answered at once by the sequencing leader against its own log,
            // uncommitted records included (a deposed leader's among them): the tail or token it
            // names is not the specification's. It must only be a refusal of what was asked.
            (
                Request::Append { expected_tail, .. } | Request::Trim { expected_tail, .. },
                Reply::OffsetMismatch { tail },
            ) => match expected_tail {
                Some(expected) if expected != tail => Ok(()),
                Some(_) => refuse!(
                    words,
                    "refused OffsetMismatch naming its own expected tail {tail}"
                ),
                None => refuse!(words, "refused OffsetMismatch though it expected no tail"),
            },
            (
                Request::Append { fence, .. } | Request::Trim { fence, .. },
                Reply::FenceMismatch { current },
            ) => match fence {
                Some(token) if token != current => Ok(()),
                Some(_) => refuse!(
                    words,
                    "refused FenceMismatch naming its own fence {}",
                    current.0
                ),
                None => refuse!(words, "refused FenceMismatch though it carried no fence"),
            },
            (Request::Fence { old, .. }, Reply::FenceMismatch { current }) => {
                if old != current {
                    Ok(())
                } else {
                    refuse!(
                        words,
                        "refused FenceMismatch naming its own old token {}",
                        current.0
                    )
                }
            }
            _ => return None,
        };
        Some(verdict)
    }

    /// Whether `reply` to `op` is allowed in this state, and the state after it: `Ok(None)` when
    /// it changes nothing, `Ok(Some(next))` when it does, `Err(why)` when no instant in this state
    /// gives that reply.
    pub fn step(&self, op: &Op, reply: &Reply) -> Result<Option<Spec>, String> {
        Ok(self.judge(op, reply)?.map(|effect| {
            let mut next = self.clone();
            next.apply_effect(effect);
            next
        }))
    }

    /// `step` in place: whether the state changed, or why the reply is not allowed (then the
    /// state is unchanged).
    pub fn apply(&mut self, op: &Op, reply: &Reply) -> Result<bool, String> {
        self.apply_worded(op, reply, Words::Wanted)
    }

    /// `apply`, its refusal worded only when `words` asks.
    pub(crate) fn apply_worded(
        &mut self,
        op: &Op,
        reply: &Reply,
        words: Words,
    ) -> Result<bool, String> {
        match self.judge_worded(op, reply, words)? {
            Some(effect) => {
                self.apply_effect(effect);
                Ok(true)
            }
            None => Ok(false),
        }
    }

    fn apply_effect(&mut self, effect: Effect) {
        self.push(effect.slot);
        if let Some((floor, headers)) = effect.floor {
            self.raise_floor(floor, &headers);
        }
        if let Some(token) = effect.token {
            self.set_token(token);
        }
    }

    /// What a reply allowed in this state does to it (`step`'s work without the copy).
    pub fn judge(&self, op: &Op, reply: &Reply) -> Result<Option<Effect>, String> {
        self.judge_worded(op, reply, Words::Wanted)
    }

    /// `judge`, its refusal worded only when `words` asks.
    fn judge_worded(&self, op: &Op, reply: &Reply, words: Words) -> Result<Option<Effect>, String> {
        if let Some(verdict) = Spec::local_worded(op, reply, words) {
            return verdict.map(|()| None);
        }
        let tail = self.tail();
        let request = match op {
            Op::Noop => {
                return match reply {
                    Reply::Appended { offset, .. } if *offset == tail => {
                        Ok(Some(Effect::push(Slot::Noop)))
                    }
                    _ => refuse!(words, "a noop cannot land at {reply:?} with tail {tail}"),
                };
            }
            Op::Client(request) => request,
        };
        match (request, reply) {
            (
                Request::Append {
                    expected_tail,
                    fence,
                    body,
                    headers,
                },
                Reply::Appended {
                    offset,
                    tail: after,
                },
            ) => {
                self.check_landing(*offset, *after, *expected_tail, *fence, words)?;
                Ok(Some(Effect::push(Slot::Write {
                    body: body.clone(),
                    headers: headers.clone(),
                })))
            }
            (
                Request::Trim {
                    expected_tail,
                    fence,
                    floor,
                    headers,
                },
                Reply::Appended { .. } | Reply::TruncateRefused { .. } | Reply::TrimNoop { .. },
            ) => self.judge_trim(
                request,
                (*expected_tail, *fence, *floor, headers),
                reply,
                words,
            ),
            (
                Request::Fence { new, old },
                Reply::Appended {
                    offset,
                    tail: after,
                },
            ) => {
                self.check_landing(*offset, *after, None, None, words)?;
                if *old != self.token {
                    return refuse!(
                        words,
                        "a fence from token {} landed while token {} is in force",
                        old.0,
                        self.token.0
                    );
                }
                let mut effect = Effect::push(Slot::Fence);
                effect.token = Some(*new);
                Ok(Some(effect))
            }
            (Request::Read { from, max_records }, Reply::Records { records, next }) => {
                self.check_records(*from, *max_records, records, *next, words)?;
                Ok(None)
            }
            (
                Request::Read {
                    from: ReadFrom::Offset(from),
                    ..
                },
                Reply::CursorTooOld { floor, tag },
            ) => self.judge_cursor_too_old(*from, *floor, tag.as_ref(), words),
            _ => refuse!(
                words,
                "{} cannot be answered {}",
                words::request(request),
                reply_words(reply)
            ),
        }
    }

    /// The reply this state gives `op` when its outcome is unknown (the operation takes effect
    /// now), and the state after it.
    pub fn invoke(&self, op: &Op) -> (Reply, Option<Spec>) {
        let (reply, effect) = self.invoke_effect(op);
        let next = effect.map(|effect| {
            let mut next = self.clone();
            next.apply_effect(effect);
            next
        });
        (reply, next)
    }

    /// `invoke` in place: whether the state changed.
    pub fn invoke_in_place(&mut self, op: &Op) -> bool {
        match self.invoke_effect(op).1 {
            Some(effect) => {
                self.apply_effect(effect);
                true
            }
            None => false,
        }
    }

    /// A point `undo` returns the state to. The state only grows (slots, floors in force: the last
    /// is the floor and tag now) or is overwritten (token, digest), so a mark is two lengths and
    /// two values.
    pub fn mark(&self) -> Mark {
        Mark {
            log: self.log.len(),
            floors: self.floors.len(),
            token: self.token,
            digest: self.digest,
        }
    }

    /// Returns the state to `mark`, taken on this state before the changes being undone.
    pub fn undo(&mut self, mark: Mark) {
        self.log.truncate(mark.log);
        self.floors.truncate(mark.floors);
        self.token = mark.token;
        self.digest = mark.digest;
    }

    /// `invoke`'s reply and what it does to the state, without the copy.
    fn invoke_effect(&self, op: &Op) -> (Reply, Option<Effect>) {
        let tail = self.tail();
        let landed = Reply::Appended {
            offset: tail,
            tail: tail + 1,
        };
        let request = match op {
            Op::Noop => return (landed, Some(Effect::push(Slot::Noop))),
            Op::Client(request) => request,
        };
        match request {
            Request::Append {
                expected_tail,
                fence,
                body,
                headers,
            } => {
                if let Some(refused) = self.refusal(*expected_tail, *fence) {
                    return (refused, None);
                }
                let effect = Effect::push(Slot::Write {
                    body: body.clone(),
                    headers: headers.clone(),
                });
                (landed, Some(effect))
            }
            Request::Trim {
                expected_tail,
                fence,
                floor,
                headers,
            } => match self.refusal(*expected_tail, *fence) {
                Some(refused) => (refused, None),
                None => self.trim_effect(*floor, headers, landed),
            },
            Request::Fence { new, old } => {
                if *old != self.token {
                    return (
                        Reply::FenceMismatch {
                            current: self.token,
                        },
                        None,
                    );
                }
                let effect = Effect {
                    slot: Slot::Fence,
                    floor: None,
                    token: Some(*new),
                };
                (landed, Some(effect))
            }
            Request::Read { from, max_records } => (self.read_reply(*from, *max_records), None),
        }
    }

    /// The refusal of a conditional request, if any: a tail that is not the tail, or a fence
    /// that is not the token in force.
    fn refusal(&self, expected_tail: Option<Offset>, fence: Option<Token>) -> Option<Reply> {
        let tail = self.tail();
        if expected_tail.is_some_and(|expected| expected != tail) {
            return Some(Reply::OffsetMismatch { tail });
        }
        if fence.is_some_and(|token| token != self.token) {
            return Some(Reply::FenceMismatch {
                current: self.token,
            });
        }
        None
    }

    /// An unrefused trim's reply (`landed` if it lands) and effect: invalid above the tail, a
    /// no-op at or below the floor, else a trim slot that raises the floor, tagged `headers`.
    fn trim_effect(
        &self,
        floor: Offset,
        headers: &Headers,
        landed: Reply,
    ) -> (Reply, Option<Effect>) {
        let tail = self.tail();
        if floor > tail {
            return (
                Reply::Invalid(felix_core::api::InvalidRequest::FloorAboveOffset {
                    floor,
                    offset: tail,
                }),
                None,
            );
        }
        if floor <= self.floor() {
            return (Reply::TrimNoop { tail }, None);
        }
        let effect = Effect {
            slot: Slot::Trim {
                floor,
                refused: false,
            },
            floor: Some((floor, headers.clone())),
            token: None,
        };
        (landed, Some(effect))
    }

    /// A read's reply: invalid past the tail, too old below the floor, else the writes from
    /// `from` (the floor for `Earliest`), at most `max_records` and the node's cap.
    fn read_reply(&self, from: ReadFrom, max_records: u32) -> Reply {
        let tail = self.tail();
        let start = match from {
            ReadFrom::Offset(from) => from,
            ReadFrom::Earliest => self.floor(),
        };
        if start > tail {
            return Reply::Invalid(felix_core::api::InvalidRequest::ReadPastTail {
                from: start,
                tail,
            });
        }
        if start < self.floor() {
            return Reply::CursorTooOld {
                floor: self.floor(),
                tag: self.tag().cloned(),
            };
        }
        let cap = max_records.min(read_records_max()) as usize;
        records_reply(start..tail, cap, |offset| match self.slot(offset) {
            Some(Slot::Write { body, headers }) => Some((body, headers)),
            _ => None,
        })
    }
}

/// A read's records as a node serves them: the writes at `offsets` in order (a trim or a noop is
/// passed over), at most `cap`, and `next` just past the last offset looked at. `write` gives the
/// write at an offset, if one is there.
pub(crate) fn records_reply<'a>(
    offsets: std::ops::Range<Offset>,
    cap: usize,
    mut write: impl FnMut(Offset) -> Option<(&'a Vec<u8>, &'a Headers)>,
) -> Reply {
    let mut records = Vec::new();
    let mut next = offsets.start;
    for offset in offsets {
        if records.len() >= cap {
            break;
        }
        if let Some((body, headers)) = write(offset) {
            records.push(ReadRecord {
                offset,
                body: body.clone(),
                headers: headers.clone(),
            });
        }
        next = offset + 1;
    }
    Reply::Records { records, next }
}
