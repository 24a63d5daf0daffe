//! A node's life in the seeded world: boot, ticks, the core's outputs (persist in order, hold a
//! send or reply behind an unsynced persist, release on sync), delivery, crash and restart.

use super::*;

impl World {
    pub(super) fn start_node(&mut self, index: usize, restart: bool) {
        let rules = self.rules;
        let knobs = &self.knobs;
        let slot = &mut self.nodes[index];
        assert!(slot.node.is_none());
        slot.incarnation += 1;
        slot.persist_last = 0;
        slot.durable_through = 0;
        slot.held.clear();
        let node = if restart {
            match slot.disk.recover() {
                Ok(recovered) => node::recover(slot.id, knobs, rules, recovered),
                Err(error) => panic!("node {} store failed to recover: {error}", slot.id),
            }
        } else {
            node::fresh(slot.id, knobs, rules)
        };
        slot.node = Some(node);
        let incarnation = slot.incarnation;
        let tick = slot.clock.true_duration(self.knobs.tick_micros).max(1);
        let first = slot.timeouts.range(1, tick);
        let timeout = node::election_timeout(&mut slot.timeouts);
        self.queue.push_after(
            first,
            Ev::Tick {
                node: index,
                incarnation,
            },
        );
        self.step_node(index, node::Input::ElectionTimeout { ticks: timeout });
        // The state the node starts from (fresh, or what it recovered from its disk).
        if let Some(node) = self.nodes[index].node.as_ref() {
            let event = node::state_event(node);
            self.history(event);
        }
    }

    pub(super) fn tick(&mut self, index: usize, incarnation: u64) {
        let slot = &self.nodes[index];
        if slot.incarnation != incarnation || slot.node.is_none() {
            return;
        }
        let tick = slot.clock.true_duration(self.knobs.tick_micros).max(1);
        self.queue.push_after(
            tick,
            Ev::Tick {
                node: index,
                incarnation,
            },
        );
        self.step_node(index, node::Input::Tick);
    }

    /// Feeds one input to a node and carries out its outputs in order.
    pub(super) fn step_node(&mut self, index: usize, input: node::Input) {
        let Some(node) = self.nodes[index].node.as_mut() else {
            return;
        };
        let state_before = node::state_key(node);
        let outputs = node.step_collect(input);
        // Persist before send, always: the AckBeforeSync twin is the broker's (it emits its
        // acknowledgement ahead of the persist), not the driver's.
        let persist_before_send = true;
        for output in outputs {
            match output {
                Output::Persist { id, op } => {
                    let slot = &mut self.nodes[index];
                    assert!(id > slot.persist_last, "persist ids must increase");
                    match slot.disk.apply(&op) {
                        // The disk numbers ops as the broker does (from 1 per incarnation), so a
                        // sync's coverage is a persist id.
                        Ok(number) => assert_eq!(number, id, "persist ids are contiguous from 1"),
                        Err(error) => panic!(
                            "node {} refused its own storage op {op:?}: {error}",
                            slot.id
                        ),
                    }
                    slot.persist_last = id;
                    self.start_sync(index);
                }
                Output::Send { to, message } => {
                    let from = Address::Node(self.nodes[index].id);
                    self.send_or_hold(
                        index,
                        persist_before_send,
                        from,
                        Address::Node(to),
                        Payload::Peer(message),
                    );
                }
                Output::Reply {
                    client,
                    request_id,
                    reply,
                } => {
                    let from = Address::Node(self.nodes[index].id);
                    let payload = Payload::Reply {
                        id: request_id,
                        reply,
                    };
                    self.send_or_hold(
                        index,
                        persist_before_send,
                        from,
                        Address::Client(client),
                        payload,
                    );
                }
                Output::Observe(event) => self.history(event),
            }
        }
        // The audits judge floors, leadership and promises from sampled states: record one after
        // every step that changed them, after the step's own events.
        if let Some(node) = self.nodes[index].node.as_ref() {
            if node::state_key(node) != state_before {
                let event = node::state_event(node);
                self.history(event);
            }
        }
    }

    pub(super) fn send_or_hold(
        &mut self,
        index: usize,
        persist_before_send: bool,
        from: Address,
        to: Address,
        payload: Payload,
    ) {
        let slot = &mut self.nodes[index];
        let durable = slot.durable_through;
        if persist_before_send && slot.persist_last > durable {
            if slot.held.len() >= HELD_MAX {
                let reason = format!(
                    "node {} holds {HELD_MAX} messages waiting for one sync (HELD_MAX): a message storm",
                    slot.id
                );
                self.exhaust(reason);
                return;
            }
            slot.held.push_back(Held {
                barrier: slot.persist_last,
                to,
                payload,
            });
        } else {
            self.transmit(from, to, payload);
        }
    }

    pub(super) fn start_sync(&mut self, index: usize) {
        let slot = &mut self.nodes[index];
        if slot.disk.start_sync() {
            let latency = Disk::latency(
                &mut self.disk_stream,
                self.knobs.sync_min_micros,
                self.knobs.sync_max_micros,
            );
            let incarnation = slot.incarnation;
            self.queue.push_after(
                latency,
                Ev::SyncDone {
                    node: index,
                    incarnation,
                },
            );
        }
    }

    pub(super) fn sync_done(&mut self, index: usize, incarnation: u64) {
        let slot = &mut self.nodes[index];
        if slot.incarnation != incarnation || slot.node.is_none() {
            return;
        }
        if let Err(error) = slot.disk.finish_sync() {
            panic!("node {} sync failed: {error}", slot.id);
        }
        // Exactly the ops applied before the sync started are durable now.
        let through = slot.disk.synced();
        slot.durable_through = through;
        let from = Address::Node(slot.id);
        let mut released = Vec::new();
        while slot
            .held
            .front()
            .is_some_and(|held| held.barrier <= through)
        {
            if let Some(held) = slot.held.pop_front() {
                released.push(held);
            }
        }
        for held in released {
            self.transmit(from, held.to, held.payload);
        }
        self.step_node(index, node::Input::Persisted { through });
        self.start_sync(index);
    }

    pub(super) fn transmit(&mut self, from: Address, to: Address, payload: Payload) {
        let now = self.now();
        let arrivals = self.network.route(now, from, to);
        if arrivals.is_empty() {
            self.count("messages_dropped");
        }
        if arrivals.len() > 1 {
            self.count("messages_duplicated");
        }
        for at in arrivals {
            self.queue.push(
                at,
                Ev::Deliver {
                    from,
                    to,
                    payload: Box::new(payload.clone()),
                },
            );
        }
    }

    pub(super) fn deliver(&mut self, from: Address, to: Address, payload: Payload) {
        match (to, payload) {
            (Address::Node(node), Payload::Peer(message)) => {
                let Address::Node(from) = from else { return };
                self.step_node(node as usize, node::Input::Message { from, message });
            }
            (Address::Node(node), Payload::Request { id, request }) => {
                let Address::Client(client) = from else {
                    return;
                };
                self.step_node(
                    node as usize,
                    node::Input::Client {
                        client,
                        request_id: id,
                        request,
                    },
                );
            }
            (Address::Client(client), Payload::Reply { id, reply }) => {
                let Address::Node(node) = from else { return };
                self.client_reply(client as usize, node, id, reply);
            }
            _ => {}
        }
    }

    pub(super) fn crash(&mut self, index: usize) {
        let keep = self.knobs.crash_keeps_per_million;
        let torn = self.knobs.torn_per_million;
        let slot = &mut self.nodes[index];
        if slot.node.is_none() {
            return;
        }
        slot.node = None;
        slot.held.clear();
        slot.incarnation += 1;
        let id = slot.id;
        let loss = match slot.disk.crash(&mut self.disk_stream, keep, torn) {
            Ok(loss) => loss,
            Err(error) => panic!("node {id} store refused a crash: {error}"),
        };
        self.count("crashes");
        self.history(Event::Crashed { node: id });
        self.sim(SimEvent::DiskLost {
            node: id,
            ops_lost: (loss.unsynced - loss.kept) as u64,
            torn: loss.torn,
        });
    }

    pub(super) fn restart(&mut self, index: usize) {
        if self.nodes[index].node.is_some() {
            return;
        }
        let id = self.nodes[index].id;
        self.history(Event::Restarted { node: id });
        self.start_node(index, true);
    }
}
