//! The driver's duties on a broker's outputs, written once (`io.rs` states them): every driver
//! (the seeded simulator, the scenario driver, the engine tests, the client test driver) carries
//! a broker's outputs through an `Outbox` instead of its own loop.
//!
//! The outbox is pure bookkeeping, no IO: it takes one step's `Output`s and hands back `Duty`s in
//! the same order. A `Persist` becomes `Duty::Persist` (the driver applies it to its store at
//! once: ids are checked to increase); a `Send` or `Reply` that follows a persist not yet durable
//! is held, the others become `Duty::Deliver`; `Observe` becomes `Duty::Observe`. When the driver
//! has made every op through `through` durable it calls `synced`, which releases the held
//! deliveries in order, and then feeds `Input::Persisted { through }` to the broker. A crash
//! (`crash`) drops what was held and restarts the ids at 1.
//!
//! The outbox also samples the node's state (`sample`): a `NodeState` event (committed index
//! included) whenever anything but the committed index changed since the last sample. The
//! committed index moves on nearly every step; the audits read it from `Committed` events.

use crate::api::{ClientId, Reply, RequestId};
use crate::broker::{Broker, Message, Output, PersistId};
use crate::history::Event;
use crate::record::{Headers, NodeId, Offset, Term};
use crate::storage::StorageOp;
use std::collections::VecDeque;

/// A send or a reply, ready to go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Delivery {
    Send {
        to: NodeId,
        message: Message,
    },
    Reply {
        client: ClientId,
        request_id: RequestId,
        reply: Reply,
    },
}

/// What the driver does now, in this order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Duty {
    /// Apply `op` to the node's store now (buffered, not yet durable).
    Persist { id: PersistId, op: StorageOp },
    /// Send or reply now: every persist before it is durable.
    Deliver(Delivery),
    /// Append to the run's history.
    Observe(Event),
    /// Draw a fresh election timeout and feed it back (`Input::ElectionTimeout`) before the
    /// next tick: local to the node, never held.
    DrawElectionTimeout,
}

/// The outbox held `held_max` deliveries waiting for a sync: a driver that never syncs, or a
/// message storm. The delivery that did not fit was dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HeldFull {
    pub held_max: usize,
}

/// The part of a node's state whose change is worth a `NodeState` sample.
type StateKey = (Term, Option<NodeId>, bool, Offset, Offset, Option<Headers>);

fn state_key(broker: &Broker) -> StateKey {
    (
        broker.term(),
        broker.vote(),
        broker.is_leader(),
        broker.floor(),
        broker.readable_start(),
        broker.floor_tag().cloned(),
    )
}

/// `state_key(broker) == *key`, without building the key.
fn same_state(key: &StateKey, broker: &Broker) -> bool {
    let (term, vote, leader, floor, readable_start, floor_tag) = key;
    *term == broker.term()
        && *vote == broker.vote()
        && *leader == broker.is_leader()
        && *floor == broker.floor()
        && *readable_start == broker.readable_start()
        && floor_tag.as_ref() == broker.floor_tag()
}

/// One node's outputs in flight between its broker and the world.
#[derive(Clone, Debug)]
pub struct Outbox {
    /// The highest persist id handed out to be applied, in this incarnation.
    applied_through: PersistId,
    /// Every persist id up to this one is durable.
    durable_through: PersistId,
    /// Deliveries that followed an unsynced persist, with that persist's id.
    held: VecDeque<(PersistId, Delivery)>,
    held_max: usize,
    /// The state of the last sample, `None` before the first one of an incarnation.
    sampled: Option<StateKey>,
}

impl Outbox {
    /// An empty outbox that holds at most `held_max` deliveries.
    pub fn new(held_max: usize) -> Outbox {
        assert!(held_max > 0);
        Outbox {
            applied_through: 0,
            durable_through: 0,
            held: VecDeque::new(),
            held_max,
            sampled: None,
        }
    }

    /// Turns one step's outputs into duties, in order (see the module doc). A delivery past
    /// `held_max` is dropped and reported once the whole step is carried.
    pub fn carry(
        &mut self,
        outputs: impl IntoIterator<Item = Output>,
        duties: &mut Vec<Duty>,
    ) -> Result<(), HeldFull> {
        let mut full = None;
        for output in outputs {
            let delivery = match output {
                Output::Persist { id, op } => {
                    assert!(id > self.applied_through, "persist ids must increase");
                    self.applied_through = id;
                    duties.push(Duty::Persist { id, op });
                    continue;
                }
                Output::Observe(event) => {
                    duties.push(Duty::Observe(event));
                    continue;
                }
                Output::DrawElectionTimeout => {
                    duties.push(Duty::DrawElectionTimeout);
                    continue;
                }
                Output::Send { to, message } => Delivery::Send { to, message },
                Output::Reply {
                    client,
                    request_id,
                    reply,
                } => Delivery::Reply {
                    client,
                    request_id,
                    reply,
                },
            };
            if self.applied_through == self.durable_through {
                duties.push(Duty::Deliver(delivery));
            } else if self.held.len() >= self.held_max {
                full = Some(HeldFull {
                    held_max: self.held_max,
                });
            } else {
                self.held.push_back((self.applied_through, delivery));
            }
        }
        match full {
            Some(full) => Err(full),
            None => Ok(()),
        }
    }

    /// The highest persist id applied and not yet durable, if any.
    pub fn unsynced_through(&self) -> Option<PersistId> {
        (self.applied_through > self.durable_through).then_some(self.applied_through)
    }

    /// Deliveries waiting for a sync.
    pub fn held_len(&self) -> usize {
        self.held.len()
    }

    /// Every op through `through` is durable: releases, in order, the deliveries it covers. The
    /// driver then feeds `Input::Persisted { through }` to the broker.
    pub fn synced(&mut self, through: PersistId, released: &mut Vec<Delivery>) {
        assert!(
            through <= self.applied_through,
            "a sync covers only applied ops"
        );
        assert!(
            through >= self.durable_through,
            "durability never goes back"
        );
        self.durable_through = through;
        while self.held.front().is_some_and(|(id, _)| *id <= through) {
            if let Some((_, delivery)) = self.held.pop_front() {
                released.push(delivery);
            }
        }
    }

    /// The node crashed: what it held is lost, and the next incarnation numbers from 1.
    pub fn crash(&mut self) {
        self.applied_through = 0;
        self.durable_through = 0;
        self.held.clear();
        self.sampled = None;
    }

    /// The node's state as a `NodeState` event if anything but its committed index changed
    /// since the last sample (always, for the first sample of an incarnation).
    pub fn sample(&mut self, broker: &Broker) -> Option<Event> {
        // Compared in place: building the key clones the floor tag, and most steps change
        // nothing.
        if self
            .sampled
            .as_ref()
            .is_some_and(|key| same_state(key, broker))
        {
            return None;
        }
        self.sampled = Some(state_key(broker));
        Some(broker.node_state())
    }

    /// The node's state as a `NodeState` event, changed or not (a boot, the end of a run).
    pub fn sample_always(&mut self, broker: &Broker) -> Event {
        self.sampled = Some(state_key(broker));
        broker.node_state()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::HardState;

    fn persist(id: PersistId) -> Output {
        Output::Persist {
            id,
            op: StorageOp::HardState(HardState {
                term: id,
                vote: None,
            }),
        }
    }

    fn send(to: NodeId) -> Output {
        Output::Send {
            to,
            message: Message::Vote {
                term: 1,
                granted: true,
            },
        }
    }

    /// A send before any persist goes at once; one after an unsynced persist waits for the sync
    /// that covers it, and a later sync releases exactly what it covers, in order.
    #[test]
    fn sends_wait_for_the_sync_that_covers_their_persist() {
        let mut outbox = Outbox::new(8);
        let mut duties = Vec::new();
        let outputs = vec![send(1), persist(1), send(2), persist(2), send(3)];
        assert_eq!(outbox.carry(outputs, &mut duties), Ok(()));
        let delivered: Vec<_> = duties
            .iter()
            .filter(|duty| matches!(duty, Duty::Deliver(_)))
            .collect();
        assert_eq!(delivered.len(), 1);
        assert_eq!(outbox.unsynced_through(), Some(2));
        assert_eq!(outbox.held_len(), 2);
        let mut released = Vec::new();
        outbox.synced(1, &mut released);
        assert_eq!(released.len(), 1);
        assert!(matches!(released[0], Delivery::Send { to: 2, .. }));
        assert_eq!(outbox.held_len(), 1);
        released.clear();
        outbox.synced(2, &mut released);
        assert!(matches!(released[..], [Delivery::Send { to: 3, .. }]));
        assert_eq!(outbox.unsynced_through(), None);
        assert_eq!(outbox.held_len(), 0);
    }

    /// A crash drops what was held and restarts the ids.
    #[test]
    fn a_crash_drops_the_held_deliveries() {
        let mut outbox = Outbox::new(8);
        let mut duties = Vec::new();
        assert_eq!(outbox.carry(vec![persist(1), send(1)], &mut duties), Ok(()));
        outbox.crash();
        assert_eq!(outbox.unsynced_through(), None);
        let mut released = Vec::new();
        duties.clear();
        assert_eq!(outbox.carry(vec![persist(1)], &mut duties), Ok(()));
        outbox.synced(1, &mut released);
        assert!(released.is_empty());
    }

    /// Past `held_max` the outbox reports the overflow instead of growing.
    #[test]
    fn the_held_queue_is_bounded() {
        let mut outbox = Outbox::new(1);
        let mut duties = Vec::new();
        let outputs = vec![persist(1), send(1), send(2)];
        assert_eq!(
            outbox.carry(outputs, &mut duties),
            Err(HeldFull { held_max: 1 })
        );
    }

    /// A sample is taken at an incarnation's first call and then only when something but the
    /// committed index changed: a newer term alone is a change, a vote alone is a change, a
    /// commit alone is none; `sample_always` samples regardless and becomes the comparison; a
    /// crash starts a new incarnation.
    #[test]
    fn samples_follow_every_change_but_the_committed_index() {
        use crate::broker::{Broker, BrokerConfig, Input};
        use crate::record::{Command, Entry};
        let mut broker = Broker::new(BrokerConfig::new(1, vec![0, 1, 2], Vec::new()));
        let mut outbox = Outbox::new(8);
        assert_eq!(outbox.sample(&broker), Some(broker.node_state()));
        assert_eq!(outbox.sample(&broker), None);
        // A newer term (no vote, no role change, floor and readable start as they were).
        broker.step_collect(Input::Message {
            from: 0,
            message: Message::Vote {
                term: 1,
                granted: false,
            },
        });
        assert_eq!((broker.term(), broker.vote()), (1, None));
        assert_eq!(outbox.sample(&broker), Some(broker.node_state()));
        assert_eq!(outbox.sample(&broker), None);
        // The committed index alone moves.
        broker.step_collect(Input::Message {
            from: 0,
            message: Message::AppendEntries {
                term: 1,
                prev_offset: 0,
                prev_term: 0,
                entries: vec![Entry {
                    offset: 1,
                    term: 1,
                    command: Command::Noop,
                }],
                committed: 1,
            },
        });
        assert_eq!(broker.committed(), 1);
        assert_eq!(outbox.sample(&broker), None);
        // A vote alone, in the same term.
        broker.step_collect(Input::Message {
            from: 2,
            message: Message::RequestVote {
                term: 1,
                last_offset: 1,
                last_term: 1,
            },
        });
        assert_eq!((broker.term(), broker.vote()), (1, Some(2)));
        assert_eq!(outbox.sample(&broker), Some(broker.node_state()));
        let always = outbox.sample_always(&broker);
        assert_eq!(always, broker.node_state());
        assert_eq!(outbox.sample(&broker), None);
        outbox.crash();
        assert_eq!(outbox.sample(&broker), Some(broker.node_state()));
    }
}
