//! The prober: a client that asks what well-behaved clients never ask (knob `prober`).
//!
//! The holders, owners, readers and folders all keep the contract: a reader reads from its own
//! cursor, a writer fences with the token it holds. The journal's answers to everything else (a
//! read from `Earliest` or from offset 0, a read past the tail, a fence, truncate or append with a
//! token nobody holds, headers with an empty key, a body or headers over the limits) are guarded by
//! the core but were reached only by unit tests. The prober sends one such request now and then;
//! every mutating request carries a made-up token, malformed headers or a floor past the tail, so
//! the journal must refuse it with its typed answer (`FenceMismatch`, `Invalid`, `OffsetMismatch`,
//! a no-op) and change nothing. The judges see its requests and replies like any client's: the
//! Linearizable checker holds every answer to the state, and NoReadBelowFloor holds its reads from
//! `Earliest` to every acknowledged trim.

use felix_core::api::{ClientId, ReadFrom, Reply, Request, RequestId};
use felix_core::client::{Client, Route, Step};
use felix_core::{Headers, Offset, Token};

/// The tokens the prober makes up: far above any token a run grants.
const MADE_UP: u64 = u64::MAX / 2;
/// The bytes of an oversized header value: over any node's header limit (4,096 bytes).
const HEADERS_BYTES: usize = 8192;
/// A probe is retried at most this many times after a reply that only routes it elsewhere.
const RETRIES_MAX: u32 = 8;

/// One out-of-the-ordinary request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Probe {
    /// `Read { from: Earliest }`: legal, served from the readable start.
    ReadEarliest,
    /// A read from offset 0, below every floor: refused `CursorTooOld` (untagged while no trim
    /// has set the floor).
    ReadFromZero,
    /// A read far past the tail: `Invalid(ReadPastTail)`.
    ReadPastTail,
    /// A fence whose `old` token nobody holds: `FenceMismatch`.
    FenceMadeUp,
    /// A truncate fenced with a made-up token, to a floor of 0, 1 or far above the tail:
    /// `FenceMismatch` (or, with the fence check off, a no-op or `FloorAboveOffset`).
    TrimMadeUp { floor: Offset },
    /// A write fenced with a made-up token: `FenceMismatch`.
    AppendMadeUp,
    /// A write whose headers have an empty key (and a made-up fence): `Invalid`.
    HeadersMalformed,
    /// A write whose body is one byte over the nodes' limit: `Invalid(TooLarge)`.
    BodyTooLarge,
    /// A write whose headers are over the limit: `Invalid(MalformedHeaders)`.
    HeadersTooLarge,
    /// A trim with no fence, conditional on the tail `t` the prober last heard of, asking for the
    /// floor `t + 1`: one past the offset the trim itself would take, the smallest floor out of
    /// contract. `Invalid(FloorAboveOffset)` when `t` is the tail; when the tail moved,
    /// `OffsetMismatch` names it and the prober asks again there (a bounded number of times).
    /// The condition keeps it from ever trimming: at any other tail it is refused.
    TrimPastItself,
}

impl Probe {
    /// The kinds the driver draws among (`TrimMadeUp`'s floor is drawn apart); with the knob
    /// `prober_at_edges`, `KINDS_AT_EDGES` (the same kinds and the trim past itself).
    pub const KINDS: usize = 9;
    pub const KINDS_AT_EDGES: usize = 10;

    /// The probe of kind `index` (mod `KINDS`); `floor` is a trim's.
    pub fn of(index: usize, floor: Offset) -> Probe {
        match index % Probe::KINDS_AT_EDGES {
            0 => Probe::ReadEarliest,
            1 => Probe::ReadFromZero,
            2 => Probe::ReadPastTail,
            3 => Probe::FenceMadeUp,
            4 => Probe::TrimMadeUp { floor },
            5 => Probe::AppendMadeUp,
            6 => Probe::HeadersMalformed,
            7 => Probe::BodyTooLarge,
            8 => Probe::HeadersTooLarge,
            _ => Probe::TrimPastItself,
        }
    }

    /// The request of this probe; `tail` is the last tail the prober heard of.
    pub fn request(self, tail: Offset) -> Request {
        let token = Some(Token(MADE_UP));
        match self {
            Probe::ReadEarliest => Request::Read {
                from: ReadFrom::Earliest,
                max_records: 4,
            },
            Probe::ReadFromZero => Request::Read {
                from: ReadFrom::Offset(0),
                max_records: 4,
            },
            Probe::ReadPastTail => Request::Read {
                from: ReadFrom::Offset(MADE_UP),
                max_records: 4,
            },
            Probe::FenceMadeUp => Request::Fence {
                new: Token(MADE_UP + 1),
                old: Token(MADE_UP),
            },
            Probe::TrimMadeUp { floor } => Request::Trim {
                expected_tail: None,
                fence: token,
                floor,
                headers: Headers::default(),
            },
            Probe::AppendMadeUp => Request::Append {
                expected_tail: None,
                fence: token,
                body: b"probe".to_vec(),
                headers: Headers::default(),
            },
            Probe::HeadersMalformed | Probe::HeadersTooLarge => {
                let mut headers = Headers::default();
                match self {
                    Probe::HeadersMalformed => headers.0.insert(String::new(), "x".to_string()),
                    _ => headers.0.insert("k".to_string(), "x".repeat(HEADERS_BYTES)),
                };
                Request::Append {
                    expected_tail: None,
                    fence: token,
                    body: b"probe".to_vec(),
                    headers,
                }
            }
            Probe::BodyTooLarge => Request::Append {
                expected_tail: None,
                fence: token,
                body: vec![b'x'; crate::env::node::BODY_BYTES_MAX as usize + 1],
                headers: Headers::default(),
            },
            Probe::TrimPastItself => Request::Trim {
                expected_tail: Some(tail),
                fence: None,
                floor: tail + 1,
                headers: Headers::default(),
            },
        }
    }
}

/// The floor a made-up truncate asks for: 0, 1, or far above any tail.
pub const TRIM_FLOORS: [Offset; 3] = [0, 1, MADE_UP];

/// The prober's state machine: at most one probe planned and one in flight.
#[derive(Clone, Debug)]
pub struct Prober {
    client: ClientId,
    next_id: RequestId,
    planned: Option<Probe>,
    in_flight: Option<(RequestId, Probe)>,
    retries: u32,
    /// The last tail a reply named (0 until one does).
    tail: Offset,
}

impl Prober {
    pub fn new(client: ClientId) -> Prober {
        Prober {
            client,
            next_id: 1,
            planned: None,
            in_flight: None,
            retries: 0,
            tail: 0,
        }
    }

    /// Plans `probe` as the next request, unless one is already planned or in flight.
    pub fn plan(&mut self, probe: Probe) {
        if self.planned.is_none() && self.in_flight.is_none() {
            self.planned = Some(probe);
            self.retries = 0;
        }
    }
}

impl Client for Prober {
    fn client_id(&self) -> ClientId {
        self.client
    }

    fn next_request(&mut self) -> Option<(RequestId, Request)> {
        if self.in_flight.is_some() {
            return None;
        }
        let probe = self.planned.take()?;
        let id = self.next_id;
        self.next_id += 1;
        self.in_flight = Some((id, probe));
        Some((id, probe.request(self.tail)))
    }

    fn on_reply(&mut self, id: RequestId, reply: Reply) -> Step {
        let Some((flying, probe)) = self.in_flight else {
            return Step::ignored();
        };
        if flying != id {
            return Step::ignored();
        }
        self.in_flight = None;
        let mut moved = false;
        if let Reply::Appended { tail, .. }
        | Reply::TrimNoop { tail }
        | Reply::OffsetMismatch { tail } = reply
        {
            moved = tail != self.tail;
            self.tail = tail;
        }
        let route = match reply {
            Reply::NotLeader { hint } | Reply::NoReadIndex { hint } => Route::Leader(hint),
            Reply::NotHeld { .. } => Route::AnotherNode,
            _ => Route::Any,
        };
        let ask_again = route != Route::Any
            || (probe == Probe::TrimPastItself
                && moved
                && matches!(reply, Reply::OffsetMismatch { .. }));
        if ask_again && self.retries < RETRIES_MAX {
            // Asked the wrong node, or at a tail that moved: ask again where the reply points.
            self.retries += 1;
            self.planned = Some(probe);
        }
        Step::route(route)
    }

    fn on_unknown(&mut self, id: RequestId) -> Step {
        if self.in_flight.is_some_and(|(flying, _)| flying == id) {
            self.in_flight = None;
            Step::none()
        } else {
            Step::ignored()
        }
    }

    fn in_flight(&self) -> Option<RequestId> {
        self.in_flight.map(|(id, _)| id)
    }

    fn is_finished(&self) -> bool {
        false
    }
}
