//! The clients of the seeded world: the workload, lease grants and renewals, the writer fence,
//! the requests in flight (one per client, or a pipelining owner's writes), replies and timeouts.

use super::*;
use crate::seeded::knobs::PIPELINE_DEPTH_MAX;

/// The prober wakes this many client gaps apart: a few hundred probes in a run, few enough to
/// leave the Linearizable checker's budget to the workload.
const PROBER_GAPS: u64 = 16;

impl Role {
    /// A writer's process (a felixd lease holder or a paros owner), whether or not it holds a
    /// lease or the fence right now.
    pub(super) fn is_writer(&self) -> bool {
        matches!(self, Role::Felixd { .. } | Role::Owner { .. })
    }

    /// The lease holder a felixd process runs, if it holds a lease.
    pub(super) fn holder(&self) -> Option<&Holder> {
        match self {
            Role::Felixd {
                holder: Some(holder),
                ..
            } => Some(holder),
            _ => None,
        }
    }
}

impl World {
    pub(super) fn start_workload(&mut self) {
        for index in 0..self.clients.len() {
            let target = self.workload.index(self.knobs.brokers as usize);
            self.clients[index].target = target;
        }
        match self.knobs.workload {
            Workload::Felixd { .. } => self.grant_lease(0),
            Workload::Paros { .. } => self.take_fence(0),
        }
    }

    /// The lease service grants the felixd lease to `client`, which builds a new holder.
    pub(super) fn grant_lease(&mut self, client: usize) {
        let now = self.now();
        let slot = &self.clients[client];
        let grant = self.lease.grant(slot.id, now);
        let local_now = slot.clock.local(now);
        let holder = Holder::new(slot.id, grant.epoch, 1, self.rules, HolderConfig::default());
        let renew_at_local = local_now + self.knobs.renew_micros;
        let id = slot.id;
        self.set_role(
            client,
            Role::Felixd {
                holder: Some(holder),
                renew_at_local,
            },
        );
        self.count(Counter::LeasesGranted);
        self.history(Event::LeaseGranted {
            client: id,
            epoch: grant.epoch,
        });
    }

    /// Replaces a client's state machine. The old one's request in flight is abandoned: its outcome
    /// stays unknown, and a late reply to it must not reach the new state machine (request ids
    /// restart with every state machine).
    pub(super) fn set_role(&mut self, client: usize, role: Role) {
        let slot = &mut self.clients[client];
        slot.role = role;
        slot.in_flight.clear();
    }

    /// The next paros owner takes the writer fence, replacing the token it believes in force.
    pub(super) fn take_fence(&mut self, client: usize) {
        // The new owner replaces the token it finds in force, as a real owner learns it by
        // reading the journal: the last committed fence (not the last one granted, which may
        // never have landed).
        let old = self.fence_committed;
        self.owner_token += 1;
        let slot = &mut self.clients[client];
        let config = OwnerConfig {
            writes_in_flight_max: self.knobs.pipeline_depth as usize,
            ..OwnerConfig::default()
        };
        let owner = Owner::new(slot.id, Token(self.owner_token), Token(old), config);
        slot.role = Role::Owner { owner: Some(owner) };
        // A new client state machine: the old one's requests in flight are abandoned (unknown).
        slot.in_flight.clear();
        let id = slot.id;
        self.owner_current = Some(client);
        self.count(Counter::FencesTaken);
        self.history(Event::LeaseGranted {
            client: id,
            epoch: self.owner_token,
        });
    }

    /// The lowest cursor of every joined client still folding: no truncate may pass it.
    pub(super) fn trim_fence(&self) -> Option<u64> {
        self.clients
            .iter()
            .filter(|slot| slot.joined)
            .filter_map(|slot| match &slot.role {
                Role::Folder(folder) => Some(folder.cursor()),
                Role::Owner { owner: Some(owner) } if !owner.is_finished() => Some(owner.cursor()),
                _ => None,
            })
            .min()
    }

    pub(super) fn client_wake(&mut self, client: usize) {
        if self.finished || !self.clients[client].joined {
            return;
        }
        if self.clients[client].paused {
            self.clients[client].stash.push(Ev::ClientWake { client });
            return;
        }
        self.schedule_wake(client);
        let working = self.phase == Phase::Safety;
        let now = self.now();
        let fence = self.trim_fence();
        let trim_chance = self.knobs.trim_per_million;
        let op_chance = self.knobs.op_per_million;
        // An owner is stale once a newer fence is committed: from then on every fenced request
        // it sends is refused (the fence in force only moves forward). Being replaced by the
        // lease service is not enough: the successor's fence may never land (it named an `old`
        // that had already moved on), and then this owner still holds the fence in force and a
        // truncate it sends lands, at a floor with no checkpoint.
        let fence_committed = self.fence_committed;
        let mut renew = None;
        let mut owner_crashes = 0;
        let owner_crash_chance = self.knobs.owner_crash_per_million;
        let slot = &mut self.clients[client];
        let local_now = slot.clock.local(now);
        match &mut slot.role {
            Role::Felixd {
                holder: Some(holder),
                renew_at_local,
            } => {
                if local_now >= *renew_at_local {
                    // Renewal is a round trip to the lease service: the holder keeps working
                    // until the answer comes back (and a pause stretches that).
                    *renew_at_local = Time::MAX;
                    renew = Some(holder.epoch());
                }
                let busy = self.workload.chance(op_chance);
                if working
                    && busy
                    && holder.status() == HolderStatus::Serving
                    && holder.ops_waiting() < 2
                {
                    let op = if self.workload.chance(trim_chance) {
                        let known = holder.tail().unwrap_or(1);
                        let back = self
                            .workload
                            .range(self.knobs.trim_lag_min, self.knobs.trim_lag_max);
                        HolderOp::Trim {
                            floor: known.saturating_sub(back).max(1),
                        }
                    } else {
                        HolderOp::Write {
                            body: format!("w{}", self.workload.next_u64() % 1_000_000).into_bytes(),
                        }
                    };
                    let _ = holder.submit(op);
                }
            }
            Role::Owner { owner: Some(owner) } => {
                owner.set_trim_limit(breaker::trim_limit(self.breaker.as_ref(), client, fence));
                let busy = self.workload.chance(op_chance);
                let stale_owner = owner.token().0 < fence_committed;
                if working && busy && owner.status() == OwnerStatus::Fenced {
                    if stale_owner {
                        if self.workload.chance(trim_chance) {
                            let floor = owner.cursor().min(fence.unwrap_or(1)).max(1);
                            let _ = owner.submit(OwnerOp::Truncate { floor });
                        }
                    } else if self.workload.chance(trim_chance) {
                        // Now and then the owner dies inside its run: a run with no `End`, which
                        // no folder may restore. The lease service then hands the fence on.
                        if self.workload.chance(owner_crash_chance) {
                            let records = self.workload.range(1, 3) as usize;
                            owner.crash_inside_run(records);
                            owner_crashes += 1;
                        }
                        let _ = owner.submit(OwnerOp::Checkpoint);
                    } else {
                        let _ = owner.submit(OwnerOp::Write {
                            body: write_body(self.workload.next_u64(), self.knobs.pipeline_depth),
                        });
                    }
                }
            }
            _ => {}
        }
        if owner_crashes > 0 {
            self.count(Counter::OwnerCrashesInsideRun);
        }
        if let Some(epoch) = renew {
            let delay = self.workload.range(
                self.knobs.network.delay_min_micros,
                self.knobs.network.delay_max_micros,
            ) * 2;
            self.queue
                .push_after(delay, Ev::RenewReply { client, epoch });
        }
        self.try_send(client);
    }

    /// Schedules the client's next wake-up; the prober plans its next probe now (in the safety
    /// phase), and asks now and then, not at a workload's pace.
    fn schedule_wake(&mut self, client: usize) {
        let probing = matches!(self.clients[client].role, Role::Prober(_));
        let gap = self
            .workload
            .range(
                self.knobs.client_gap_micros / 2,
                self.knobs.client_gap_micros * 3 / 2,
            )
            .max(1)
            * if probing { PROBER_GAPS } else { 1 };
        self.queue.push_after(gap, Ev::ClientWake { client });
        if probing && self.phase == Phase::Safety {
            let kinds = if self.knobs.prober_at_edges {
                prober::Probe::KINDS_AT_EDGES
            } else {
                prober::Probe::KINDS
            };
            let kind = self.workload.index(kinds);
            let floor = prober::TRIM_FLOORS[self.workload.index(prober::TRIM_FLOORS.len())];
            if let Role::Prober(prober) = &mut self.clients[client].role {
                prober.plan(prober::Probe::of(kind, floor));
            }
        }
    }

    pub(super) fn renew_reply(&mut self, client: usize, epoch: u64) {
        let now = self.now();
        let lost = self.phase == Phase::Safety
            && self.fault_stream.chance(self.knobs.renew_lost_per_million);
        let slot = &mut self.clients[client];
        if slot.paused {
            slot.stash.push(Ev::RenewReply { client, epoch });
            return;
        }
        let local_now = slot.clock.local(now);
        let id = slot.id;
        let Role::Felixd {
            holder: Some(holder),
            renew_at_local,
        } = &mut slot.role
        else {
            return;
        };
        if holder.epoch() != epoch {
            return;
        }
        if lost {
            // The answer never came back: the holder keeps believing and tries again later.
            *renew_at_local = local_now + self.knobs.renew_micros;
            return;
        }
        if self.lease.renew(id, epoch, now) {
            *renew_at_local = local_now + self.knobs.renew_micros;
        } else {
            self.set_role(
                client,
                Role::Felixd {
                    holder: None,
                    renew_at_local: 0,
                },
            );
            self.count(Counter::HoldersToldByRenewal);
        }
    }

    /// The client as the `Client` trait, if it has one now.
    pub(super) fn client_mut(role: &mut Role) -> Option<&mut dyn Client> {
        match role {
            Role::Felixd {
                holder: Some(holder),
                ..
            } => Some(holder),
            Role::Owner { owner: Some(owner) } => Some(owner),
            Role::Reader(reader) => Some(reader),
            Role::Folder(folder) => Some(folder),
            Role::Prober(prober) => Some(prober),
            _ => None,
        }
    }

    /// Sends what the client asks now: one request, or a pipelining owner's writes up to its
    /// bound.
    pub(super) fn try_send(&mut self, client: usize) {
        while self.send_one(client) {}
    }

    /// Sends the client's next request, if it has one and may send; true if it sent.
    fn send_one(&mut self, client: usize) -> bool {
        let now = self.now();
        let slot = &mut self.clients[client];
        if slot.paused || self.finished || now < slot.backoff_until {
            return false;
        }
        // After the quiesce writers send nothing more (see the phases in `world/mod.rs`).
        let writer = slot.role.is_writer();
        if self.quiesced && writer {
            return false;
        }
        let Some(handle) = World::client_mut(&mut slot.role) else {
            return false;
        };
        let Some((id, request)) = handle.next_request() else {
            return false;
        };
        let request = match &mut self.breaker {
            Some(breaker) if breaker.client == client => {
                let (request, broken) = breaker.send(&mut self.workload, request);
                if broken {
                    self.count(Counter::BrokenRuns);
                }
                request
            }
            _ => request,
        };
        let slot = &mut self.clients[client];
        let node = self.nodes[slot.target].id;
        slot.generation += 1;
        let generation = slot.generation;
        slot.in_flight.push(InFlight {
            id,
            request: request.clone(),
            node,
            generation,
        });
        // A client asks for one request at a time and says `None` while it is in flight; only a
        // pipelining owner asks again, up to its bound.
        assert!(slot.in_flight.len() <= PIPELINE_DEPTH_MAX as usize);
        let client_id = slot.id;
        let writes = !matches!(request, Request::Read { .. });
        self.history(Event::Requested {
            client: client_id,
            node,
            request: request.clone(),
        });
        self.transmit(
            Address::Client(client_id),
            Address::Node(node),
            // On the wire the request id is the slot's send generation: unique across the state
            // machines a client slot goes through, so a late reply never reaches the wrong one.
            Payload::Request {
                request_id: generation,
                request,
            },
        );
        self.queue.push_after(
            self.knobs.client_timeout_micros,
            Ev::ClientTimeout {
                client,
                id,
                generation,
            },
        );
        self.buggify_sent(client, writes);
        true
    }

    pub(super) fn client_reply(
        &mut self,
        client: usize,
        node: NodeId,
        wire: RequestId,
        reply: Reply,
    ) {
        let slot = &mut self.clients[client];
        if slot.paused {
            slot.stash.push(Ev::Deliver {
                from: Address::Node(node),
                to: Address::Client(slot.id),
                payload: Payload::Reply {
                    request_id: wire,
                    reply,
                },
            });
            return;
        }
        let position = slot
            .in_flight
            .iter()
            .position(|flight| flight.generation == wire && flight.node == node);
        let Some(position) = position else {
            self.count(Counter::LateReplies);
            return;
        };
        let flight = slot.in_flight.remove(position);
        slot.timeouts = 0;
        let id = flight.id;
        let client_id = slot.id;
        let reads = matches!(slot.role, Role::Reader(_) | Role::Folder(_));
        let acked = matches!(reply, Reply::Appended { .. } | Reply::TrimNoop { .. });
        let own_floor = match (slot.role.holder(), &reply) {
            (Some(holder), Reply::CursorTooOld { tag: Some(tag), .. }) => {
                tag.epoch() == Some(holder.epoch())
            }
            _ => false,
        };
        let step = match World::client_mut(&mut slot.role) {
            Some(handle) => handle.on_reply(id, reply.clone()),
            None => return,
        };
        self.history(Event::Replied {
            client: client_id,
            node,
            request: flight.request,
            reply,
        });
        if own_floor {
            self.count(Counter::HolderMetOwnFloor);
        }
        let progressed = !step.delivered.is_empty() || step.route != Route::Any;
        self.back_off_after_refusals(client, &step);
        self.apply_step(client, step);
        if acked {
            self.buggify_acked(client);
        }
        if !reads || progressed {
            self.try_send(client);
        }
    }

    pub(super) fn client_timeout(&mut self, client: usize, id: RequestId, generation: u64) {
        let slot = &mut self.clients[client];
        let position = slot
            .in_flight
            .iter()
            .position(|flight| flight.id == id && flight.generation == generation);
        let Some(position) = position else {
            return;
        };
        if slot.paused {
            slot.stash.push(Ev::ClientTimeout {
                client,
                id,
                generation,
            });
            return;
        }
        slot.in_flight.remove(position);
        let client_id = slot.id;
        let step = match World::client_mut(&mut slot.role) {
            Some(handle) => handle.on_unknown(id),
            None => return,
        };
        if let Some(schedule) = &self.schedule {
            schedule.note(crate::env::tape::Step::TimedOut { client: client_id });
        }
        self.count(Counter::ClientTimeouts);
        self.apply_step(client, step);
        // A writer keeps its node through `sticky_timeouts` unknown outcomes in a row, as a
        // producer retries its leader until its metadata refresh; then it picks another.
        let slot = &mut self.clients[client];
        let writer = slot.role.is_writer();
        slot.timeouts += 1;
        if !writer || slot.timeouts > self.knobs.sticky_timeouts {
            slot.timeouts = 0;
            let target = self.workload.index(self.nodes.len());
            self.clients[client].target = target;
        }
        self.try_send(client);
    }

    /// A reply that only sends the client elsewhere (no records, a route) is a refusal. The first
    /// refusals are retried at once (following the hint finds a leader in one round trip), but a
    /// client that has been refused by as many nodes in a row as there are nodes waits a broker
    /// tick before each further try, as a real client backs off: with no leader anywhere (an
    /// election after a mass crash) an immediate retry on a 10 us network is a storm of
    /// hundreds of thousands of round trips per simulated second, which ends the run with an
    /// event budget instead of letting the election finish.
    fn back_off_after_refusals(&mut self, client: usize, step: &felix_core::client::Step) {
        let refused = step.delivered.is_empty() && step.route != Route::Any;
        let nodes = self.nodes.len();
        let backoff = self.knobs.tick_micros.max(1);
        let now = self.now();
        let slot = &mut self.clients[client];
        if !refused {
            slot.refusals = 0;
            return;
        }
        slot.refusals += 1;
        if slot.refusals >= nodes {
            slot.backoff_until = now + backoff;
        }
    }

    /// Records a client's conclusions and routes its next request.
    pub(super) fn apply_step(&mut self, client: usize, step: felix_core::client::Step) {
        for event in step.events {
            self.history(event);
        }
        let brokers = self.knobs.brokers as usize;
        let nodes = self.nodes.len();
        let slot = &mut self.clients[client];
        slot.target = match step.route {
            Route::Any => slot.target,
            Route::Leader(Some(hint)) if (hint as usize) < brokers => hint as usize,
            Route::Leader(_) => (slot.target + 1) % brokers,
            Route::AnotherNode => (slot.target + 1) % nodes,
        };
    }
}

impl ClientSlot {
    /// Client `id` with `role` at the start of a run: nothing in flight, nothing stashed.
    pub(super) fn new(id: ClientId, role: Role, joined: bool, clock: Clock) -> ClientSlot {
        ClientSlot {
            id,
            role,
            joined,
            paused: false,
            stash: Vec::new(),
            target: 0,
            in_flight: Vec::new(),
            generation: 0,
            clock,
            refusals: 0,
            timeouts: 0,
            backoff_until: 0,
        }
    }
}

/// The body of an owner's application write, from a draw of the workload stream. A pipeline's
/// writes keep the whole draw: the Linearizable checker pairs an answer with the client's latest
/// request in flight asking the same, so no two writes in flight may ask the same.
fn write_body(draw: u64, pipeline_depth: u32) -> Vec<u8> {
    if pipeline_depth > 1 {
        format!("w{draw}").into_bytes()
    } else {
        format!("w{}", draw % 1_000_000).into_bytes()
    }
}

/// (role, joined at start) of every client, in id order: the workload's, then the readers and
/// the prober.
pub(super) fn client_roles(knobs: &Knobs) -> Vec<(Role, bool)> {
    let mut roles: Vec<(Role, bool)> = Vec::new();
    match knobs.workload {
        Workload::Felixd { holders } => {
            for _ in 0..holders {
                roles.push((
                    Role::Felixd {
                        holder: None,
                        renew_at_local: 0,
                    },
                    true,
                ));
            }
        }
        Workload::Paros { owners, folders } => {
            for _ in 0..owners {
                roles.push((Role::Owner { owner: None }, true));
            }
            for index in 0..folders {
                let id = roles.len() as ClientId;
                // The first folder starts with the journal; the others join later and must
                // restore from a checkpoint at the floor.
                roles.push((Role::Folder(Folder::new(id, 16, 64)), index == 0));
            }
        }
    }
    readers_and_prober(&mut roles, knobs);
    roles
}

/// The readers' roles, then the prober's, after the workload's (ids follow positions).
fn readers_and_prober(roles: &mut Vec<(Role, bool)>, knobs: &Knobs) {
    for _ in 0..knobs.readers {
        let id = roles.len() as ClientId;
        roles.push((Role::Reader(Reader::new(id, 1, 16)), true));
    }
    if knobs.prober {
        let id = roles.len() as ClientId;
        roles.push((Role::Prober(prober::Prober::new(id)), true));
    }
}
