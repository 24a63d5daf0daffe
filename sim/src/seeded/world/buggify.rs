//! The world's BUGGIFY sites (`crate::seeded::buggify`): where each is evaluated, and what a firing
//! does.
//!
//! The hooks in the world are one call each (after a client's acknowledged append, after a client
//! sent an append or trim, after a node answered one, jumped or became leader, when a sync starts);
//! a firing is carried out as an event at the same instant (`Ev::Buggify`), so it never runs in the
//! middle of another step, but SlowSync's, which stretches the sync it starts. Sites fire only in
//! the safety phase: the liveness phase is fault-free.

use super::{Ev, Holder, HolderConfig, Reader, Role, World};
use crate::env::network::{Address, Payload};
use crate::env::queue::Time;
use crate::render::trace::SimEvent;
use crate::seeded::buggify::Site;
use felix_core::history::Phase;

/// What a firing site does, at the instant it fired.
#[derive(Clone, Debug)]
pub(super) enum Act {
    /// Freeze a client for `micros`.
    Pause { client: usize, micros: Time },
    /// Move the lease (felixd) or the writer fence (paros) away from `client`, silently.
    MoveLease { client: usize },
    /// Crash a node; it restarts after `downtime` micros.
    Crash { node: usize, downtime: Time },
    /// Crash every node; each restarts after its own downtime, up to `downtime` micros.
    PowerLoss { downtime: Time },
    /// Cut a node off from everyone for `micros`.
    Isolate { node: usize, micros: Time },
    /// Restart reader `client` from offset 1, its first read to node `node`.
    RewindReader { client: usize, node: usize },
    /// Send again the last messages node `node` sent to its peers.
    ReplayPast { node: usize },
    /// Restart lease holder `client`'s process: the same epoch, read from offset 1.
    RestartHolder { client: usize },
}

/// How many of a node's last messages to its peers are kept for ReplayPast.
const PAST_MAX: usize = 16;

impl World {
    fn buggify_armed(&self) -> bool {
        self.phase == Phase::Safety && !self.finished
    }

    fn is_writer(&self, client: usize) -> bool {
        matches!(
            self.clients[client].role,
            Role::Felixd {
                holder: Some(_),
                ..
            } | Role::Owner { owner: Some(_) }
        )
    }

    fn holds_lease(&self, client: usize) -> bool {
        match self.clients[client].role {
            Role::Felixd { .. } => self
                .lease
                .current()
                .is_some_and(|grant| grant.holder == self.clients[client].id),
            Role::Owner { .. } => self.owner_current == Some(client),
            _ => false,
        }
    }

    fn buggify_schedule(&mut self, site: Site, act: Act) {
        self.count(site.counter());
        self.queue.push_after(0, Ev::Buggify(act));
    }

    /// A pause long enough to matter to a lease: up to twice its duration.
    fn buggify_pause_micros(&mut self) -> Time {
        let lease = self.knobs.lease_micros;
        self.buggify.range(1_000, (2 * lease).max(1_000))
    }

    /// Hook: a writer's append or trim was just acknowledged to `client`.
    pub(super) fn buggify_acked(&mut self, client: usize) {
        if self.buggify_armed() && self.is_writer(client) && self.buggify.fire(Site::PauseAfterAck)
        {
            let micros = self.buggify_pause_micros();
            self.buggify_schedule(Site::PauseAfterAck, Act::Pause { client, micros });
        }
        let holder = self.clients[client].role.holder().is_some();
        if self.buggify_armed() && holder && self.buggify.fire(Site::RestartAfterAck) {
            self.buggify_schedule(Site::RestartAfterAck, Act::RestartHolder { client });
        }
    }

    /// Hook: `client` just sent a request; `writes` when it was an append, trim or fence.
    pub(super) fn buggify_sent(&mut self, client: usize, writes: bool) {
        if !writes || !self.buggify_armed() || !self.is_writer(client) {
            return;
        }
        if self.holds_lease(client) && self.buggify.fire(Site::LeaseMoveInFlight) {
            self.buggify_schedule(Site::LeaseMoveInFlight, Act::MoveLease { client });
        }
        if self.buggify.fire(Site::PauseInFlight) {
            let micros = self.buggify_pause_micros();
            self.buggify_schedule(Site::PauseInFlight, Act::Pause { client, micros });
        }
    }

    /// Hook: node `index` just answered a client's append or trim.
    pub(super) fn buggify_answered(&mut self, index: usize) {
        if !self.buggify_armed() {
            return;
        }
        if self.buggify.fire(Site::CrashAfterAck) {
            let downtime = self
                .buggify
                .range(1_000, self.knobs.downtime_max_micros.max(1_000));
            self.buggify_schedule(
                Site::CrashAfterAck,
                Act::Crash {
                    node: index,
                    downtime,
                },
            );
        }
        if self.buggify.fire(Site::PowerLossAfterAck) {
            let downtime = self
                .buggify
                .range(1_000, self.knobs.downtime_max_micros.max(1_000));
            self.buggify_schedule(Site::PowerLossAfterAck, Act::PowerLoss { downtime });
        }
        if self.buggify.fire(Site::IsolateAfterAck) {
            let micros = self
                .buggify
                .range(1_000, self.knobs.fault_duration_max_micros.max(1_000));
            self.buggify_schedule(
                Site::IsolateAfterAck,
                Act::Isolate {
                    node: index,
                    micros,
                },
            );
        }
    }

    /// Hook: node `index` just installed a jump (`TrimmedTo`).
    pub(super) fn buggify_jumped(&mut self, index: usize) {
        if !self.buggify_armed() {
            return;
        }
        let readers: Vec<usize> = (0..self.clients.len())
            .filter(|&client| self.clients[client].joined && !self.clients[client].paused)
            .filter(|&client| matches!(self.clients[client].role, Role::Reader(_)))
            .collect();
        if readers.is_empty() || !self.buggify.fire(Site::ReadAfterJump) {
            return;
        }
        let client = readers[self.buggify.range(0, readers.len() as u64 - 1) as usize];
        self.buggify_schedule(
            Site::ReadAfterJump,
            Act::RewindReader {
                client,
                node: index,
            },
        );
    }

    /// Hook: node `index` became leader. Another node's past messages are replayed, drawn among
    /// the nodes that sent any.
    pub(super) fn buggify_elected(&mut self, index: usize) {
        if !self.buggify_armed() {
            return;
        }
        let senders: Vec<usize> = (0..self.nodes.len())
            .filter(|&node| node != index && !self.nodes[node].past.is_empty())
            .collect();
        if senders.is_empty() || !self.buggify.fire(Site::ReplayPast) {
            return;
        }
        let node = senders[self.buggify.range(0, senders.len() as u64 - 1) as usize];
        self.buggify_schedule(Site::ReplayPast, Act::ReplayPast { node });
    }

    /// Keeps what node `index` just sent to peer `to`, while ReplayPast is active (a clone per
    /// message otherwise spent for nothing).
    pub(super) fn remember_sent(&mut self, index: usize, to: Address, payload: &Payload) {
        if !self.buggify.is_active(Site::ReplayPast) {
            return;
        }
        let past = &mut self.nodes[index].past;
        if past.len() == PAST_MAX {
            past.pop_front();
        }
        past.push_back((to, payload.clone()));
    }

    /// Hook: a sync of `latency` micros starts; a stalled disk makes it up to 50 times longer.
    pub(super) fn buggify_sync(&mut self, latency: Time) -> Time {
        if self.buggify_armed() && self.buggify.fire(Site::SlowSync) {
            self.count(Site::SlowSync.counter());
            let factor = self.buggify.range(10, 50);
            latency.max(1) * factor
        } else {
            latency
        }
    }

    /// Carries out a firing.
    pub(super) fn buggify_act(&mut self, act: Act) {
        if !self.buggify_armed() {
            return;
        }
        match act {
            Act::Pause { client, micros } => {
                let until = self.now() + micros;
                self.pause(client, until);
            }
            Act::MoveLease { client } => self.buggify_move_lease(client),
            Act::ReplayPast { node } => {
                // Through the network as any message (a cut link still cuts), not kept again.
                let from = Address::Node(self.nodes[node].id);
                let past: Vec<(Address, Payload)> = self.nodes[node].past.drain(..).collect();
                self.sim(SimEvent::NetworkFault {
                    description: format!(
                        "buggify: {} messages {from} sent are replayed",
                        past.len()
                    ),
                });
                for (to, payload) in past {
                    self.route(from, to, payload);
                }
            }
            Act::RestartHolder { client } => self.restart_holder(client),
            Act::RewindReader { client, node } => {
                let slot = &self.clients[client];
                if slot.paused || !matches!(slot.role, Role::Reader(_)) {
                    return;
                }
                // A new reader state machine (its request in flight is abandoned, as a restarted
                // process abandons it) whose first read goes to the node that just jumped.
                // The batch size every reader of the world starts with.
                let reader = Reader::new(slot.id, 1, 16);
                self.set_role(client, Role::Reader(reader));
                self.clients[client].target = node;
                self.try_send(client);
            }
            Act::Crash { node, downtime } => {
                if self.nodes[node].host.is_up() {
                    self.crash(node);
                    self.queue.push_after(downtime, Ev::Restart { node });
                }
            }
            Act::PowerLoss { downtime } => {
                // Machines come back one by one, each after its own boot time.
                for node in 0..self.nodes.len() {
                    if self.nodes[node].host.is_up() {
                        self.crash(node);
                        let boot = self.buggify.range(1_000, downtime.max(1_000));
                        self.queue.push_after(boot, Ev::Restart { node });
                    }
                }
            }
            Act::Isolate { node, micros } => {
                let isolated = Address::Node(self.nodes[node].id);
                let rest: Vec<Address> = (0..self.nodes.len())
                    .map(|index| Address::Node(self.nodes[index].id))
                    .chain(self.clients.iter().map(|slot| Address::Client(slot.id)))
                    .filter(|address| *address != isolated)
                    .collect();
                self.network.split(&[isolated], &rest);
                self.sim(SimEvent::NetworkFault {
                    description: format!("buggify: isolate {isolated:?} for {micros}us"),
                });
                self.queue.push_after(micros, Ev::RepairPartitions);
            }
        }
    }

    /// A lease holder's process restarts: a new `Holder` with the old one's epoch, reading from
    /// offset 1, its renewal timer kept (the lease is the service's, not the process's). The old
    /// process's request in flight is abandoned, as `set_role` abandons any: it may still land,
    /// and a late reply to it never reaches the new process.
    fn restart_holder(&mut self, client: usize) {
        let slot = &self.clients[client];
        let Role::Felixd {
            holder: Some(holder),
            renew_at_local,
        } = &slot.role
        else {
            return;
        };
        if slot.paused {
            return;
        }
        let (id, epoch, renew_at_local) = (slot.id, holder.epoch(), *renew_at_local);
        let holder = Holder::new(id, epoch, 1, self.rules, HolderConfig::default());
        self.sim(SimEvent::HolderRestarted { client: id, epoch });
        self.set_role(
            client,
            Role::Felixd {
                holder: Some(holder),
                renew_at_local,
            },
        );
        self.try_send(client);
    }

    /// Moves the lease (or the writer fence) from `client` to another client of its kind that is
    /// not paused, drawn from the BUGGIFY stream; nobody tells `client`.
    fn buggify_move_lease(&mut self, client: usize) {
        if !self.holds_lease(client) {
            return;
        }
        let felixd = matches!(self.clients[client].role, Role::Felixd { .. });
        let candidates: Vec<usize> = (0..self.clients.len())
            .filter(|&index| index != client && !self.clients[index].paused)
            .filter(|&index| match self.clients[index].role {
                Role::Felixd { .. } => felixd,
                Role::Owner { .. } => !felixd,
                _ => false,
            })
            .collect();
        if candidates.is_empty() {
            return;
        }
        let next = candidates[self.buggify.range(0, candidates.len() as u64 - 1) as usize];
        if felixd {
            self.move_lease(Some(client), next, false);
        } else {
            self.move_owner(Some(client), next, false);
        }
    }
}
