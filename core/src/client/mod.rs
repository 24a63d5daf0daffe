//! Clients of the journal: sans-IO state machines over the client protocol (`crate::api`).
//!
//! Four clients, one concept per file:
//! - [`holder::Holder`], the lease holder (felixd): reads to the tail, makes its fenced write,
//!   then writes and trims under the tail check, and retires when it sees a newer epoch
//!   (the five holder rules: tag, re-read from the cursor, tail never from a refusal, a no-op
//!   trim checks the tail, retention off).
//! - [`checkpoint::Owner`], the checkpoint owner (paros): holds the writer fence, folds the
//!   journal, writes a `Begin`/`Chunk`/`End` checkpoint run at the next offset `s`, then truncates
//!   to `s` under its fence.
//! - [`reader::Reader`]: keeps a cursor, reports a `Gap` when it is moved up to the floor.
//! - [`folder::Folder`]: a reader that folds every write into a digest, restores from the
//!   checkpoint run at the floor and compares when it already holds the prefix.
//!
//! # The driver contract (uniform for every client, see [`Client`])
//!
//! A client never reads a clock or a random source and never sends anything by itself. The driver
//! (simulator or test) decides *when* a client acts:
//! 1. `next_request()` returns the client's next request with a fresh [`RequestId`], or `None`
//!    when it has nothing to ask right now (a request is already in flight, it has no work, or it
//!    retired/stopped). Every client has **at most one request in flight**, except a pipelining
//!    owner (`OwnerConfig::writes_in_flight_max`): it keeps up to that many fenced application
//!    writes in flight, as a producer pipelines its appends, and sends anything else alone. Its
//!    writes are unconditional (fenced, not tail-conditional), so the journal may land them in
//!    any order. The holder does not pipeline: its appends are conditional on the tail, and a
//!    second append conditional on `t + 1` lands after any one foreign record at `t` (a new
//!    holder's fenced write, a leader's noop) when the first is refused.
//! 2. The driver sends the request to a node of its choosing and later calls exactly one of
//!    `on_reply(id, reply)` (the node answered) or `on_unknown(id)` (the driver gave up waiting:
//!    a timeout, a lost message, a crashed node). An unknown outcome is *unknown*, not failed:
//!    the write may still land. Each client treats it conservatively (it forgets what it knew
//!    about the tail and re-reads).
//! 3. Both return a [`Step`]: the `history::Event`s the client emits (the driver appends them to
//!    the run's history, after its own `Replied` event), the records delivered to the
//!    application (readers only), and a [`Route`]: where the driver should send the *next*
//!    request (`NotLeader { hint }`, or `NoReadIndex { hint }` to a read -> the hinted leader,
//!    `NotHeld` -> another node).
//!
//! A reply for an id that is not in flight (late duplicate, stale) is ignored: the returned step
//! has `ignored == true` and nothing changes. A reply of the wrong kind for the request in flight
//! (e.g. `Records` for an append) is handled as an unknown outcome, except by the owner for a
//! read: it asks another node, as from a node that cannot serve (`Route::AnotherNode`). No reply
//! makes a client panic.
//!
//! The driver records `Requested`, `Replied` and `LeaseGranted` itself (it knows the node and the
//! lease service); clients emit only what they concluded: `HolderRetired`, `Gap`, `Folded`,
//! `CheckpointRestored`, `CheckpointCompared`, `CheckpointWritten`, `OwnerStopped`.

pub mod checkpoint;
pub mod folder;
pub mod holder;
mod in_flight;
pub mod reader;

use crate::api::{ClientId, ReadRecord, Reply, Request, RequestId};
use crate::history::Event;
use crate::record::NodeId;

pub use checkpoint::{Owner, OwnerConfig, OwnerStatus};
pub use folder::{Fold, Folder};
pub use holder::{Holder, HolderConfig, HolderOp, HolderStatus, SubmitError};
pub use reader::Reader;

use in_flight::InFlight;

/// Where the driver should send the client's next request.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Route {
    /// Wherever the driver likes (usually the node it believes is the leader).
    #[default]
    Any,
    /// The node answered `NotLeader` (or, to a read, `NoReadIndex`); try the hinted node if any.
    Leader(Option<NodeId>),
    /// The node could not serve the read (`NotHeld`, or it is behind the cursor): ask another one.
    AnotherNode,
}

/// What a client concluded from one reply or unknown outcome.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Step {
    /// Events for the run's history, in order.
    pub events: Vec<Event>,
    /// Records handed to the application (reader and folder only), in offset order.
    pub delivered: Vec<ReadRecord>,
    /// Where the next request should go.
    pub route: Route,
    /// True when the reply did not match the request in flight and was dropped.
    pub ignored: bool,
}

impl Step {
    /// A step with nothing to report.
    pub fn none() -> Step {
        Step::default()
    }

    /// A reply that did not belong to the request in flight.
    pub fn ignored() -> Step {
        Step {
            ignored: true,
            ..Step::default()
        }
    }

    /// A step that only routes the next request.
    pub fn route(route: Route) -> Step {
        Step {
            route,
            ..Step::default()
        }
    }

    /// A step carrying events.
    pub fn events(events: Vec<Event>) -> Step {
        Step {
            events,
            ..Step::default()
        }
    }
}

/// The uniform driver-facing API of every client.
pub trait Client {
    /// The identity the driver gave this client.
    fn client_id(&self) -> ClientId;

    /// The next request to send, if any. Returns `None` while a request is in flight.
    fn next_request(&mut self) -> Option<(RequestId, Request)>;

    /// The node answered request `id`.
    fn on_reply(&mut self, id: RequestId, reply: Reply) -> Step;

    /// The driver will never learn the outcome of request `id` (timeout, loss, crash).
    fn on_unknown(&mut self, id: RequestId) -> Step;

    /// The request in flight, if any (the oldest, for a pipelining owner; for the driver's
    /// bookkeeping and traces).
    fn in_flight(&self) -> Option<RequestId>;

    /// True once the client will never ask anything again (a retired holder, a stopped owner).
    fn is_finished(&self) -> bool;
}

/// Hands out request ids: strictly increasing per client, starting at 1.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct RequestIds {
    next: RequestId,
}

impl RequestIds {
    pub(crate) fn new() -> RequestIds {
        RequestIds { next: 1 }
    }

    pub(crate) fn take(&mut self) -> RequestId {
        let id = self.next;
        self.next += 1;
        assert!(self.next > id);
        id
    }
}
