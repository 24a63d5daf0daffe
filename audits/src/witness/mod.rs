//! The witness a host keeps for the PromiseDurable judge: what its node's store holds durably
//! (the promise, `promises.rs`; the log, `acks.rs`) and the promises and acknowledgements its
//! node's messages carry as they leave, recorded as history events; and for the LogTermsMonotone
//! judge, the terms along its node's log after each step and at each restart (`monotone.rs`).
//!
//! A host is whatever runs a broker against a store and a network: the simulator's host
//! (`felix_sim`) and the real node's event loop (`felix_node`) keep one `Witness` each and call it
//! at the same moments, so both histories are judged alike:
//! - `applied` when the store takes an op, `synced` when a sync makes ops durable, `recovered`
//!   when a restart read the store back (the simulator's host asks `explain_recovery` first: the
//!   RecoveryFaithful check), `restarted` when the broker starts or crashes;
//! - `made` right after each broker step (an acknowledgement describes the log as the step left
//!   it), `log_checked` once the step's outputs are carried out (the terms along the log as the
//!   step left it), `leaving` as each message goes onto the network, whatever held it before;
//! - `durable_changed` whenever the durable state may have changed (after a sync, before a step
//!   of a restarted broker): the durable promise first, then the durable log, then what a restart
//!   read back broke of LogTermsMonotone.
//!
//! Everything is read from what the host does, never from the outbox's bookkeeping, so a send
//! that the broker or the outbox lets out too early is seen.

pub mod acks;
pub mod monotone;
pub mod promises;
mod recovery;

use acks::Acks;
use felix_core::broker::{Broker, Message, Output};
use felix_core::history::Event;
use felix_core::storage::{Recovered, StorageOp};
use felix_core::NodeId;
use monotone::Monotone;
use promises::Promises;

/// One node's durable promise and log, and what its messages promised, as its host sees them.
#[derive(Clone, Debug, Default)]
pub struct Witness {
    promises: Promises,
    acks: Acks,
    monotone: Monotone,
}

impl Witness {
    /// The store took op `number` (numbered from 1 per incarnation, as the broker's persist ids;
    /// not yet durable).
    pub fn applied(&mut self, number: u64, op: &StorageOp) {
        self.promises.applied(number, op);
        self.acks.applied(number, op);
        if let StorageOp::TruncateSuffix { from } = op {
            self.monotone.truncated(*from);
        }
    }

    /// The store is durable through op `through`.
    pub fn synced(&mut self, through: u64) {
        self.promises.synced(through);
        self.acks.synced(through);
    }

    /// RecoveryFaithful: `Ok` when `recovered` (what the node's store read back at a restart) is
    /// what the disk held durably plus a prefix of the ops it took since its last sync (the last
    /// maybe partial), else why not (`recovery.rs`). Call it before `recovered`. Only a host that
    /// saw every op of this store since it was created can ask (the simulator's; a real node's
    /// process starts with a witness that knows nothing of the disk it opens).
    pub fn explain_recovery(&self, recovered: &Recovered) -> Result<(), String> {
        recovery::explain(&self.promises, &self.acks, recovered)
    }

    /// The node restarts from a store that recovered `recovered` (what a crash kept is durable
    /// now); op numbers restart at 1.
    pub fn recovered(&mut self, recovered: &Recovered) {
        self.promises.recovered(recovered.hard_state);
        self.acks.recovered(recovered);
        self.monotone.recovered(recovered);
    }

    /// The node starts afresh or crashed: no acknowledgement it made is waiting, and nothing is
    /// known of its log.
    pub fn restarted(&mut self) {
        self.acks.restarted();
        self.monotone.restarted();
    }

    /// What a restart read back broke of LogTermsMonotone, as events, when the broker could not
    /// start from it (a host records them before it gives up on the node; otherwise
    /// `durable_changed` does, before the node's first step).
    pub fn recovered_events(&mut self, node: NodeId, events: &mut Vec<Event>) {
        self.monotone.recovered_events(node, events);
    }

    /// The durable promise and log's changes since the last ones recorded, as events: the promise
    /// first, then the log, one `DurableLog` per run of one term.
    pub fn durable_changed(&mut self, node: NodeId, events: &mut Vec<Event>) {
        events.extend(self.promises.durable_changed(node));
        self.acks.durable_changed(node, events);
        self.monotone.recovered_events(node, events);
    }

    /// `broker` just took a step whose outputs are `outputs`: notes the acknowledgements it made.
    pub fn made(&mut self, broker: &Broker, outputs: &[Output]) {
        self.acks.made(broker, outputs);
    }

    /// `broker` just took a step and its outputs were carried out: each record along its log whose
    /// term fell below the one before it, as events (LogTermsMonotone), once per record and term.
    pub fn log_checked(&mut self, node: NodeId, broker: &Broker, events: &mut Vec<Event>) {
        self.monotone.stepped(node, broker, events);
    }

    /// `message` leaves `node` for `to`: the promise and the acknowledgement it carries, as events,
    /// when no earlier record covers them.
    pub fn leaving(
        &mut self,
        node: NodeId,
        to: NodeId,
        message: &Message,
        events: &mut Vec<Event>,
    ) {
        events.extend(self.promises.leaving(node, to, message));
        events.extend(self.acks.leaving(node, to, message));
    }
}
