//! Faults and phases of the seeded world: drops, partitions, pauses, lease moves without telling,
//! the heal that starts the liveness phase and the quiesce before its deadline.

use super::*;

impl World {
    pub(super) fn pause(&mut self, client: usize, until: Time) {
        let slot = &mut self.clients[client];
        if slot.paused || !slot.joined {
            return;
        }
        slot.paused = true;
        let id = slot.id;
        self.count(Counter::Pauses);
        self.sim(SimEvent::Paused { client: id });
        self.queue.push(until, Ev::Resume { client });
    }

    pub(super) fn resume(&mut self, client: usize) {
        let slot = &mut self.clients[client];
        if !slot.paused {
            return;
        }
        slot.paused = false;
        let id = slot.id;
        let stash = std::mem::take(&mut slot.stash);
        self.sim(SimEvent::Resumed { client: id });
        // The stash holds the wake-up that came during the pause, if one did; otherwise the
        // client's next wake-up is still queued. One more would start a second wake-up chain,
        // and every pause another (a storm with pauses a few milliseconds apart).
        for event in stash {
            self.queue.push_after(0, event);
        }
    }

    /// The lease service's own clock: a lapsed lease (its holder paused or cut off) moves on.
    pub(super) fn lease_check(&mut self) {
        if self.finished {
            return;
        }
        self.queue
            .push_after((self.knobs.lease_micros / 4).max(1), Ev::LeaseCheck);
        let now = self.now();
        match self.knobs.workload {
            Workload::Felixd { .. } => {
                if self.lease.expired(now) {
                    let current = self.lease.current().map(|grant| grant.holder as usize);
                    if let Some(next) = self.pick_felixd(current) {
                        self.move_lease(current, next, false);
                    }
                }
            }
            Workload::Paros { .. } => {
                let stalled =
                    self.owner_current
                        .is_none_or(|current| match &self.clients[current].role {
                            Role::Owner { owner: Some(owner) } => owner.is_finished(),
                            _ => true,
                        });
                if stalled {
                    let current = self.owner_current;
                    if let Some(next) = self.pick_owner(current) {
                        self.move_owner(current, next, true);
                    }
                }
            }
        }
    }

    /// Another felixd process than `current` that is not paused, drawn from the fault stream.
    pub(super) fn pick_felixd(&mut self, current: Option<usize>) -> Option<usize> {
        self.pick_client(current, |role| matches!(role, Role::Felixd { .. }))
    }

    /// Another checkpoint owner than `current` that is not paused, drawn from the fault stream.
    pub(super) fn pick_owner(&mut self, current: Option<usize>) -> Option<usize> {
        self.pick_client(current, |role| matches!(role, Role::Owner { .. }))
    }

    /// A client other than `current`, not paused, whose role `wanted` accepts; one draw from the
    /// fault stream when there is a candidate, none otherwise.
    pub(super) fn pick_client(
        &mut self,
        current: Option<usize>,
        wanted: impl Fn(&Role) -> bool,
    ) -> Option<usize> {
        let candidates: Vec<usize> = (0..self.clients.len())
            .filter(|&index| wanted(&self.clients[index].role))
            .filter(|&index| Some(index) != current && !self.clients[index].paused)
            .collect();
        if candidates.is_empty() {
            return None;
        }
        Some(candidates[self.fault_stream.index(candidates.len())])
    }

    pub(super) fn move_lease(&mut self, from: Option<usize>, to: usize, told: bool) {
        if told {
            if let Some(from) = from {
                self.set_role(
                    from,
                    Role::Felixd {
                        holder: None,
                        renew_at_local: 0,
                    },
                );
            }
        }
        self.grant_lease(to);
        let epoch = self.lease.current().map_or(0, |grant| grant.epoch);
        self.lease_moved(from, to, epoch, told);
    }

    pub(super) fn move_owner(&mut self, from: Option<usize>, to: usize, told: bool) {
        if told {
            if let Some(from) = from {
                self.set_role(from, Role::Owner { owner: None });
            }
        }
        self.take_fence(to);
        self.lease_moved(from, to, self.owner_token, told);
    }

    /// Counts and records a move of the lease (a felixd holder's) or of the writer token (an
    /// owner's) from client `from` to client `to`, now at `epoch`.
    fn lease_moved(&mut self, from: Option<usize>, to: usize, epoch: u64, told: bool) {
        let (from_id, to_id) = (
            from.map(|index| self.clients[index].id),
            self.clients[to].id,
        );
        self.count(Counter::LeaseMoves);
        self.sim(SimEvent::LeaseMoved {
            from: from_id,
            to: to_id,
            epoch,
            told,
        });
    }

    // ---------------------------------------------------------------- faults and phases

    pub(super) fn fault(&mut self) {
        if self.phase != Phase::Safety || self.finished {
            return;
        }
        let gap = self.fault_stream.range(1, 2 * self.knobs.fault_gap_micros);
        self.queue.push_after(gap, Ev::Fault);
        let knobs = &self.knobs;
        let weights = [
            knobs.weight_partition,
            knobs.weight_clog,
            knobs.weight_crash,
            knobs.weight_pause,
            knobs.weight_lease_move,
        ];
        let total: u32 = weights.iter().sum();
        let mut pick = self.fault_stream.range(0, u64::from(total) - 1) as u32;
        let mut kind = 0;
        for (index, weight) in weights.iter().enumerate() {
            if pick < *weight {
                kind = index;
                break;
            }
            pick -= weight;
        }
        let now = self.now();
        let duration = self
            .fault_stream
            .range(1_000, self.knobs.fault_duration_max_micros.max(1_000));
        match kind {
            0 => self.partition(duration),
            1 => {
                let address = self.random_address();
                self.network.clog(address, now + duration);
                self.count(Counter::Clogs);
                self.sim(SimEvent::NetworkFault {
                    description: format!("clog {address} for {duration}us"),
                });
            }
            2 => {
                let index = self.fault_stream.index(self.nodes.len());
                if self.nodes[index].host.is_up() {
                    self.crash(index);
                    let downtime = self
                        .fault_stream
                        .range(1_000, self.knobs.downtime_max_micros.max(1_000));
                    self.queue.push_after(downtime, Ev::Restart { node: index });
                }
            }
            3 => {
                let client = self.pause_target();
                if let Some(client) = client {
                    self.pause(client, now + duration);
                }
            }
            _ => self.lease_move_fault(),
        }
    }

    pub(super) fn random_address(&mut self) -> Address {
        let total = self.nodes.len() + self.clients.len();
        let index = self.fault_stream.index(total);
        if index < self.nodes.len() {
            Address::Node(self.nodes[index].id)
        } else {
            Address::Client(self.clients[index - self.nodes.len()].id)
        }
    }

    pub(super) fn partition(&mut self, duration: Time) {
        let node_addresses: Vec<Address> = self
            .nodes
            .iter()
            .map(|slot| Address::Node(slot.id))
            .collect();
        let client_addresses: Vec<Address> = self
            .clients
            .iter()
            .map(|slot| Address::Client(slot.id))
            .collect();
        // With `leader_partitions` a fifth shape is drawn: the leader and its writers cut off.
        let shapes = if self.knobs.leader_partitions { 5 } else { 4 };
        let description = match self.fault_stream.index(shapes) {
            0 => {
                let isolated = node_addresses[self.fault_stream.index(node_addresses.len())];
                let rest: Vec<Address> = node_addresses
                    .iter()
                    .chain(&client_addresses)
                    .copied()
                    .filter(|a| *a != isolated)
                    .collect();
                self.network.split(&[isolated], &rest);
                format!("isolate {isolated}")
            }
            1 => {
                let mut side = Vec::new();
                let mut rest = Vec::new();
                for address in node_addresses.iter().chain(&client_addresses) {
                    if self.fault_stream.chance(500_000) {
                        side.push(*address);
                    } else {
                        rest.push(*address);
                    }
                }
                self.network.split(&side, &rest);
                format!("split [{}] from [{}]", listed(&side), listed(&rest))
            }
            2 => {
                let from = node_addresses[self.fault_stream.index(node_addresses.len())];
                let to = node_addresses[self.fault_stream.index(node_addresses.len())];
                self.network.block(from, to);
                format!("one-way cut {from} -> {to}")
            }
            3 => {
                if client_addresses.is_empty() {
                    return;
                }
                let client = client_addresses[self.fault_stream.index(client_addresses.len())];
                self.network.split(&[client], &node_addresses);
                format!("isolate {client} from every node")
            }
            _ => {
                let Some(side) = self.leader_side() else {
                    return;
                };
                let rest: Vec<Address> = node_addresses
                    .iter()
                    .chain(&client_addresses)
                    .copied()
                    .filter(|address| !side.contains(address))
                    .collect();
                self.network.split(&side, &rest);
                format!("cut the leader off with its writers: [{}]", listed(&side))
            }
        };
        self.count(Counter::Partitions);
        self.sim(SimEvent::NetworkFault {
            description: format!("{description} for {duration}us"),
        });
        self.queue.push_after(duration, Ev::RepairPartitions);
    }

    /// The leader of the newest term among the nodes up, with the writers (lease holders, owners)
    /// whose requests go to it: the minority side of Jepsen's partition of the primary, where a
    /// deposed leader goes on taking writes it can never commit. `None` when no node leads.
    fn leader_side(&self) -> Option<Vec<Address>> {
        let leader = (0..self.nodes.len())
            .filter_map(|index| {
                let broker = self.nodes[index].host.broker.as_ref()?;
                broker.is_leader().then_some((broker.term(), index))
            })
            .max()?
            .1;
        let writers = (self.clients.iter())
            .filter(|slot| slot.target == leader)
            .filter(|slot| slot.role.is_writer())
            .map(|slot| Address::Client(slot.id));
        Some(
            std::iter::once(Address::Node(self.nodes[leader].id))
                .chain(writers)
                .collect(),
        )
    }

    /// Mostly the current lease holder or owner: a frozen holder whose lease moves on is the case
    /// fencing exists for.
    pub(super) fn pause_target(&mut self) -> Option<usize> {
        let current = match self.knobs.workload {
            Workload::Felixd { .. } => self.lease.current().map(|grant| grant.holder as usize),
            Workload::Paros { .. } => self.owner_current,
        };
        if let Some(current) = current {
            if self.fault_stream.chance(700_000) {
                return Some(current);
            }
        }
        let joined: Vec<usize> = (0..self.clients.len())
            .filter(|&index| self.clients[index].joined)
            .collect();
        if joined.is_empty() {
            return None;
        }
        Some(joined[self.fault_stream.index(joined.len())])
    }

    pub(super) fn lease_move_fault(&mut self) {
        let told = self
            .fault_stream
            .chance(self.knobs.lease_move_told_per_million);
        match self.knobs.workload {
            Workload::Felixd { .. } => {
                let current = self.lease.current().map(|grant| grant.holder as usize);
                if let Some(next) = self.pick_felixd(current) {
                    self.move_lease(current, next, told);
                }
            }
            Workload::Paros { .. } => {
                let current = self.owner_current;
                if let Some(next) = self.pick_owner(current) {
                    self.move_owner(current, next, told);
                }
            }
        }
    }

    pub(super) fn heal(&mut self) {
        if self.finished {
            return;
        }
        self.phase = Phase::Liveness;
        self.network.heal();
        self.sim(SimEvent::Healed);
        for index in 0..self.nodes.len() {
            self.restart(index);
        }
        for index in 0..self.clients.len() {
            self.resume(index);
        }
        self.history(Event::PhaseChanged {
            phase: Phase::Liveness,
        });
        self.sim(SimEvent::Phase {
            name: "liveness".into(),
        });
        self.queue
            .push_after(self.knobs.tick_micros * 20, Ev::SettleCheck);
    }

    /// The quiesce: writers send nothing more (a request in flight still gets its answer or its
    /// timeout), so the committed prefix stops moving and Convergence is judged on a cluster at
    /// rest. Readers keep reading: reads never move the committed prefix.
    pub(super) fn quiesce(&mut self) {
        if self.finished {
            return;
        }
        self.quiesced = true;
        self.sim(SimEvent::Phase {
            name: "quiesce".into(),
        });
    }
}

/// Addresses as `n0 n2 c1`.
fn listed(addresses: &[Address]) -> String {
    let names: Vec<String> = addresses.iter().map(Address::to_string).collect();
    names.join(" ")
}
