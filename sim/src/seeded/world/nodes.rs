//! A node's life in the seeded world: boot, ticks, the core's outputs (persist in order, hold a
//! send or reply behind an unsynced persist, release on sync), delivery, crash and restart.

use super::*;

impl World {
    /// Starts node `index` with `start` (fresh, restarted from its disk, or from what was read
    /// back), then its ticks and its first election timeout.
    pub(super) fn start_node(
        &mut self,
        index: usize,
        start: impl FnOnce(&mut Host) -> Result<(), HostError>,
    ) {
        let slot = &mut self.nodes[index];
        slot.incarnation += 1;
        match start(&mut slot.host) {
            Ok(()) => {}
            // The store broke its contract and the core cannot start from what it read back:
            // judged (RecoveryFaithful), and the node stays down for good, as one found corrupt.
            Err(HostError::Unfaithful { node, detail }) => {
                slot.lost = true;
                let reason = format!("it cannot start from what its store read back: {detail}");
                let decreased = slot.host.recovered_events();
                self.history(Event::RecoveryUnfaithful { node, detail });
                for event in decreased {
                    self.history(event);
                }
                self.history(Event::StoreCorrupt { node, reason });
                return;
            }
            Err(error) => {
                // What the restart read back may have broken LogTermsMonotone, which is why the
                // core refused it: recorded before the panic ends the run.
                for event in slot.host.recovered_events() {
                    self.history(event);
                }
                panic!("{error}")
            }
        }
        let incarnation = slot.incarnation;
        let tick = slot.clock.true_duration(self.knobs.tick_micros).max(1);
        let first = slot.timeouts.range(1, tick);
        let timeout = node::election_timeout(&mut slot.timeouts, &self.knobs);
        self.queue.push_after(
            first,
            Ev::Tick {
                node: index,
                incarnation,
            },
        );
        self.step_node(index, node::Input::ElectionTimeout { ticks: timeout });
        // The state the node starts from (fresh, or what it recovered from its disk).
        if let Some(event) = self.nodes[index].host.sample_always() {
            self.history(event);
        }
    }

    pub(super) fn tick(&mut self, index: usize, incarnation: u64) {
        let slot = &self.nodes[index];
        if slot.incarnation != incarnation || !slot.host.is_up() {
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
        self.count_held_back(index);
    }

    /// Coverage: each follower a leader holds records back from at its bound of appends in
    /// flight (the window full, records past what it sent), once per tick of the leader.
    fn count_held_back(&mut self, index: usize) {
        let Some(broker) = self.nodes[index].host.broker.as_ref() else {
            return;
        };
        if !broker.is_leader() {
            return;
        }
        let (bound, tail) = (broker.config().appends_in_flight_max, broker.tail());
        let held_back = (broker.progress().values())
            .filter(|progress| progress.in_flight.full(bound) && progress.next < tail)
            .count();
        for _ in 0..held_back {
            self.count(Counter::AppendsHeldBack);
        }
    }

    /// Feeds one input to a node; its host carries out the outputs, this world their effects.
    pub(super) fn step_node(&mut self, index: usize, input: node::Input) {
        let mut effects = std::mem::take(&mut self.effects);
        let result = self.nodes[index].host.step(input, &mut effects);
        self.carry_effects(index, &mut effects, result);
    }

    /// Carries out what a node's host left to do, in order, then reports its failure if any.
    fn carry_effects(
        &mut self,
        index: usize,
        effects: &mut Vec<Effect>,
        result: Result<(), HostError>,
    ) {
        let mut answered = false;
        let mut jumped = false;
        let mut elected = false;
        for effect in effects.drain(..) {
            match effect {
                Effect::SyncStarted => self.sync_started(index),
                Effect::Transmit(packet) => {
                    answered |= matches!(
                        packet.payload,
                        Payload::Reply {
                            reply: Reply::Appended { .. },
                            ..
                        }
                    );
                    self.transmit(packet.from, packet.to, packet.payload)
                }
                Effect::Observe(event) => {
                    // BUGGIFY hook (world/buggify.rs): a jump is a dangerous moment.
                    jumped |= matches!(event, Event::Jumped { .. });
                    elected |= matches!(event, Event::BecameLeader { .. });
                    self.history(event)
                }
                Effect::DrawElectionTimeout => {
                    let ticks =
                        node::election_timeout(&mut self.nodes[index].timeouts, &self.knobs);
                    self.step_node(index, node::Input::ElectionTimeout { ticks });
                }
            }
        }
        self.effects = std::mem::take(effects);
        if answered {
            self.buggify_answered(index);
        }
        if jumped {
            self.buggify_jumped(index);
        }
        if elected {
            self.buggify_elected(index);
        }
        match result {
            Ok(()) => {}
            Err(error @ HostError::HeldFull { .. }) => self.exhaust(error.to_string()),
            Err(error) => panic!("{error}"),
        }
    }

    /// Schedules the completion of the sync node `index` just started.
    fn sync_started(&mut self, index: usize) {
        let latency = Disk::latency(
            &mut self.disk_stream,
            self.knobs.sync_min_micros,
            self.knobs.sync_max_micros,
        );
        let incarnation = self.nodes[index].incarnation;
        let latency = self.buggify_sync(latency);
        self.queue.push_after(
            latency,
            Ev::SyncDone {
                node: index,
                incarnation,
            },
        );
    }

    pub(super) fn sync_done(&mut self, index: usize, incarnation: u64) {
        let slot = &mut self.nodes[index];
        if slot.incarnation != incarnation || !slot.host.is_up() {
            return;
        }
        let mut effects = std::mem::take(&mut self.effects);
        let result = slot.host.finish_sync(&mut effects).map(|_| ());
        self.carry_effects(index, &mut effects, result);
    }

    pub(super) fn transmit(&mut self, from: Address, to: Address, payload: Payload) {
        if let (Address::Node(sender), Address::Node(_)) = (from, to) {
            self.remember_sent(sender as usize, to, &payload);
        }
        self.route(from, to, payload);
    }

    /// Sends one message through the network: its copies (none, one, two, an old one) queued.
    pub(super) fn route(&mut self, from: Address, to: Address, payload: Payload) {
        let now = self.now();
        let arrivals = self.network.route(now, from, to);
        if arrivals.is_empty() {
            self.count(Counter::MessagesDropped);
            self.note_lost(from, to, &payload);
        }
        if arrivals.len() > 1 && !arrivals.old || arrivals.len() > 2 {
            self.count(Counter::MessagesDuplicated);
        }
        if arrivals.captured {
            self.count(Counter::MessagesCaptured);
        } else if arrivals.old {
            self.count(Counter::MessagesOld);
        }
        // The last copy takes the payload itself; only a duplicate clones it.
        let mut payload = Some(payload);
        for (copy, &at) in arrivals.iter().enumerate() {
            let payload = if copy + 1 == arrivals.len() {
                payload
                    .take()
                    .expect("the payload is taken once, by the last copy")
            } else {
                payload.clone().expect("the payload is still here")
            };
            self.queue.push(at, Ev::Deliver { from, to, payload });
        }
    }

    /// Notes in the schedule being recorded, if any, a packet that is lost: the network lost it,
    /// or it reached a node that was down (no broker took it). Nothing else moves.
    fn note_lost(&self, from: Address, to: Address, payload: &Payload) {
        if let Some(schedule) = &self.schedule {
            let payload = payload.clone();
            schedule.note(crate::env::tape::Step::Dropped { from, to, payload });
        }
    }

    pub(super) fn deliver(&mut self, from: Address, to: Address, payload: Payload) {
        if let (Some(_), Address::Node(node)) = (&self.schedule, to) {
            if !self.nodes[node as usize].host.is_up() {
                self.note_lost(from, to, &payload);
            }
        }
        match (to, payload) {
            (Address::Node(node), Payload::Message(message)) => {
                let Address::Node(from) = from else { return };
                self.step_node(node as usize, node::Input::Message { from, message });
            }
            (
                Address::Node(node),
                Payload::Request {
                    request_id,
                    request,
                },
            ) => {
                let Address::Client(client) = from else {
                    return;
                };
                if self.observer.is_some() {
                    self.observed_request = Some((node, request.clone()));
                }
                self.step_node(
                    node as usize,
                    node::Input::Client {
                        client,
                        request_id,
                        request,
                    },
                );
            }
            (Address::Client(client), Payload::Reply { request_id, reply }) => {
                let Address::Node(node) = from else { return };
                self.client_reply(client as usize, node, request_id, reply);
            }
            _ => {}
        }
    }

    pub(super) fn crash(&mut self, index: usize) {
        let keep = self.knobs.crash_keeps_per_million;
        let torn = self.knobs.torn_per_million;
        let slot = &mut self.nodes[index];
        if !slot.host.is_up() {
            return;
        }
        slot.incarnation += 1;
        let id = slot.id;
        let stream = &mut self.disk_stream;
        let loss = match slot.host.crash(|disk| disk.crash(stream, keep, torn)) {
            Ok(loss) => loss,
            Err(error) => panic!("{error}"),
        };
        self.count(Counter::Crashes);
        if loss
            .power_loss
            .is_some_and(|power_loss| power_loss.dropped())
        {
            self.count(Counter::PowerLossDropped);
        }
        self.history(Event::Crashed { node: id });
        self.sim(SimEvent::DiskLost {
            node: id,
            ops_lost: (loss.unsynced - loss.kept) as u64,
            torn: loss.torn,
        });
    }

    /// Restarts a node that is down, unless its store was found corrupt (it stays down for
    /// good). Under the storage faults, what the disk kept is read back as bytes (`storage.rs`).
    pub(super) fn restart(&mut self, index: usize) {
        let slot = &self.nodes[index];
        if slot.host.is_up() || slot.lost {
            return;
        }
        // The storage faults damage the bytes of an in-memory disk's image: a file-store disk
        // has no such image, and restarts through its own recovery.
        if let Some(faults) = self
            .knobs
            .storage_faults
            .filter(|_| !slot.host.disk.is_file_store())
        {
            self.restart_from_bytes(index, faults);
            return;
        }
        let id = slot.id;
        self.history(Event::Restarted { node: id });
        self.start_node(index, |host| host.start(true));
    }
}

/// Node `id`'s disk: on the seeds of knob `file_store` the real file store in directory `/n<id>`
/// of a simulated file system of its own, else the in-memory store.
pub(super) fn disk(knobs: &Knobs, layout: SegmentLayout, id: NodeId) -> Disk {
    if knobs.file_store {
        Disk::file(layout, std::path::PathBuf::from(format!("/n{id}")))
    } else {
        Disk::new(layout)
    }
}
