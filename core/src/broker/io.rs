//! What goes into a broker (`Input`) and what comes out (`Output`), and the driver's duties.
//!
//! The driver (simulator, test, real server) feeds one `Input` at a time to `Broker::step` and
//! carries out the returned `Output`s **in order**, with these duties:
//! - `Persist { id, op }`: apply `op` to the node's `LogStore`. Ops are applied in id order.
//! - A `Send` or `Reply` that comes after a `Persist` in the output sequence (of this step or of
//!   an earlier one) is carried out only once that `Persist` is durable (synced): persist before
//!   send, ack after durable. The simplest correct driver applies every `Persist` of a step, syncs,
//!   feeds back `Input::Persisted { through: last id }`, then carries out the sends and replies.
//! - After a sync, tell the broker with `Input::Persisted { through }`: every op with `id <= through`
//!   is durable. The leader counts its own log for commit only through durable ops, and
//!   `PromiseChanged` is observed only then.
//! - `Observe(event)`: append `event` to the run's history (in order with everything else).
//! - `DrawElectionTimeout`: draw a fresh random election timeout and feed it back as
//!   `Input::ElectionTimeout` before the next `Tick` (the core has no random source).
//!
//! `outbox.rs` (`Outbox`) carries out these duties once, for every driver.
//!
//! A crash loses whatever was not synced; the driver then rebuilds the node with
//! `Broker::recover` from what `LogStore::recover` returned. Persist ids restart at 1.

use crate::api::{ClientId, Reply, Request, RequestId};
use crate::broker::message::Message;
use crate::history::Event;
use crate::record::NodeId;
use crate::storage::StorageOp;
use serde::{Deserialize, Serialize};

/// A broker's own sequence number for its `Persist` outputs, from 1 per incarnation.
pub type PersistId = u64;

/// One event for a broker.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Input {
    /// One unit of logical time passed.
    Tick,
    /// The driver's (random) election timeout, in ticks, for the election period in progress;
    /// the answer to `Output::DrawElectionTimeout`, and once at boot. The core has no random
    /// source: the driver chooses it.
    ElectionTimeout { ticks: u64 },
    /// A message from another node.
    Message { from: NodeId, message: Message },
    /// A client request.
    Client {
        client: ClientId,
        request_id: RequestId,
        request: Request,
    },
    /// Every `Persist` with `id <= through` is durable.
    Persisted { through: PersistId },
}

/// One command for the driver (see the module doc for the duties).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Output {
    /// Apply `op` to the node's store; later sends and replies wait until it is durable.
    Persist { id: PersistId, op: StorageOp },
    /// Send `message` to node `to`.
    Send { to: NodeId, message: Message },
    /// Answer a client.
    Reply {
        client: ClientId,
        request_id: RequestId,
        reply: Reply,
    },
    /// Record a history event.
    Observe(Event),
    /// A new election period began (the node campaigns): answer with a freshly drawn
    /// `Input::ElectionTimeout` before the next `Tick`, so that no two voters keep timing out
    /// together election after election (Raft draws the timeout afresh for every election).
    DrawElectionTimeout,
}
