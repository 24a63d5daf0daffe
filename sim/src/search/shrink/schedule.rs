//! From a shrunk run's schedule to verbs that keep its timing: deliveries, ticks and syncs.
//!
//! `script::translate` carries messages and syncs with `stabilize`, which delivers everything:
//! a bug that needs one message to arrive before another, a follower whose storage has not
//! completed, or a node that crashes before its sync is lost that way. This translation reads the
//! run's schedule (`tape::Step`: what each node's host was given, interleaved with the trace
//! lines) and replays it in a scripted environment in lockstep, one verb at a time:
//! - a message or request a node took is `deliver from=X to=Y n=1`, with `skip=K` when the
//!   matching packet is not the first queued on its link (the world's network reorders; packets
//!   the world lost simply stay queued), and `dup` when the world's network duplicated it (a
//!   later step delivers the other copy);
//! - a reply a client took (`Replied`) is the same `deliver` to the client;
//! - a client's timeout (it gave up on its request in flight) is `timeout <client>`;
//! - a completed sync is `sync nK` (under `cluster ... syncs=eager`, whose syncs cover what the
//!   world's disks covered: only the ops written before the sync started); a tick that made a
//!   node campaign is `campaign nK`, a leader's tick that sent something (or held a send for a
//!   sync) is `tick nK`, a follower's that did is its ticks since the leader's last append, short
//!   of what makes the driver's node campaign (a follower with a read waiting gets its ticks
//!   before each append, so the read ages as it did); crashes, restarts, client pauses, lease
//!   grants and the operations the world's clients chose are their verbs (as in
//!   `script::translate`), a paros owner's checkpoint asked for at its first read.
//!
//! Running the verbs while translating lets each delivery name the packet the environment really
//! holds (a request the driver's client never sent is not asked for). Like `script::translate`,
//! the result is a candidate: `script::scenario` verifies it in the driver and minimizes it.

use super::packets::{on_link, same_but_counters, same_payload, same_request, skip_word};
use super::Attempt;
use crate::env::network::{Address, Packet, Payload};
use crate::env::tape::Step;
use crate::render::trace::{SimEvent, TraceEvent, TraceLine};
use crate::script::env::{Env, Syncs};
use crate::script::{parse, verbs};
use crate::seeded::knobs::{Knobs, Workload};
use felix_core::api::Request;
use felix_core::broker::{Input, Message, Role};
use felix_core::client::checkpoint::MAGIC;
use felix_core::history::Event;
use felix_core::NodeId;
use std::collections::{BTreeMap, BTreeSet};

/// The most passes of the translation that look for duplicated packets.
const DUP_PASSES: usize = 6;

/// The most ticks one `tick` verb gives (the verb's own bound).
const TICKS_MAX: u64 = 1_000;

/// What a world client is, from its id (`world::World::new` numbers them in this order: the
/// workload's clients, the readers, then the prober).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    Holder,
    Owner,
    Folder,
    Reader,
    /// The prober (knob `prober`): by contract every request it makes is refused or changes
    /// nothing, so neither translation writes a verb for it (the driver has no such client, and
    /// its made-up fences and reads would be an owner and a reader of the driver's own).
    Prober,
}

pub(super) fn kind_of(knobs: &Knobs, client: u32) -> Kind {
    let workload = match knobs.workload {
        Workload::Felixd { holders } => holders,
        Workload::Paros { owners, folders } => owners + folders,
    };
    match knobs.workload {
        Workload::Felixd { holders } if client < holders => Kind::Holder,
        Workload::Paros { owners, .. } if client < owners => Kind::Owner,
        Workload::Paros { owners, folders } if client < owners + folders => Kind::Folder,
        _ if knobs.prober && client == workload + knobs.readers => Kind::Prober,
        _ => Kind::Reader,
    }
}

/// A message a world node took: the step, the message, and the payload the driver delivered for it.
type Taken = (usize, Message, Payload);

/// The environment run in lockstep with the verbs written so far.
struct Lockstep {
    env: Env,
    verbs: Vec<String>,
    names: Vec<&'static str>,
    /// World client -> the driver's name for it now.
    clients: BTreeMap<u32, String>,
    /// Operations already asked for, per driver name (a world retry is not a new verb).
    seen: BTreeSet<(String, String)>,
    /// Per world client, the trace line and node of each request it sent.
    sent: BTreeMap<u32, Vec<(usize, NodeId)>>,
    /// The trace line being read (or the count read so far, between lines).
    at: usize,
    /// Per node, the ticks the world gave it since the last tick verb written for it.
    ticks: BTreeMap<NodeId, u64>,
    /// Aim clients at the world's nodes (`via=`, `target`); off, they route as the driver does.
    aiming: bool,
    /// The schedule step being translated.
    step: usize,
    /// Steps whose delivery is `dup`: the world's network duplicated that packet, and a later
    /// step delivers the other copy (found by an earlier pass of the translation).
    dups: BTreeSet<usize>,
    /// Exact deliveries so far, per link (the driver's sender and receiver): the step and the
    /// packet the driver delivered, in order.
    delivered: BTreeMap<(Address, Address), Vec<(usize, Packet)>>,
    /// Per link between nodes, the messages the world's nodes took so far, each with its step
    /// and the payload the driver delivered for it (the message itself, or its kin).
    copies: BTreeMap<(NodeId, NodeId), Vec<Taken>>,
    /// The packets a `dup` delivery left queued (the copy a later step delivers).
    kept: Vec<Packet>,
    /// Steps found this pass to deliver an earlier delivery's duplicate.
    found_dups: BTreeSet<usize>,
    /// Followers a client's read reached that have not answered since (its read may be waiting).
    reading: BTreeSet<NodeId>,
    /// Per world owner, where its checkpoint stands (what its last request was).
    owners: BTreeMap<u32, OwnerPhase>,
    /// Per world owner, the trace line and request of each request it sent (`kept`).
    owner_requests: BTreeMap<u32, Vec<(usize, Request)>>,
}

/// What a paros owner's last request was: a checkpoint starts with reads up to the tail (unless
/// the owner is caught up), then writes its run; reads and run records that continue one are not
/// a new `checkpoint`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum OwnerPhase {
    Other,
    Reading,
    Run,
}

impl Lockstep {
    /// A lockstep with nothing run yet: `aiming` and `dups` as `translate_pass` takes them.
    fn new(aiming: bool, dups: BTreeSet<usize>) -> Lockstep {
        Lockstep {
            env: Env::new(),
            verbs: Vec::new(),
            names: verbs::verb_names(),
            clients: BTreeMap::new(),
            seen: BTreeSet::new(),
            sent: BTreeMap::new(),
            at: 0,
            ticks: BTreeMap::new(),
            aiming,
            step: 0,
            dups,
            delivered: BTreeMap::new(),
            copies: BTreeMap::new(),
            kept: Vec::new(),
            found_dups: BTreeSet::new(),
            owners: BTreeMap::new(),
            owner_requests: BTreeMap::new(),
            reading: BTreeSet::new(),
        }
    }

    /// The world's client `client` sent `request` to node `to`: the driver's copy is delivered.
    fn requested(&mut self, client: u32, to: NodeId, request: &Request) {
        let Some(id) = self.driver_id(client) else {
            return;
        };
        if matches!(request, Request::Read { .. }) && self.role(to) != Some(Role::Leader) {
            self.reading.insert(to);
        }
        // The world's network lost the requests a client sent to a node cut off (the
        // driver's stay queued, asking the same): the copy the world's node took is the
        // one the driver's client has in flight, when it is queued.
        let current = self.in_flight_queued(id, to, request);
        let wanted = |payload: &Payload| {
            matches!(payload, Payload::Request { request_id, request: r }
                if same_request(r, request)
                    && current.is_none_or(|current| *request_id == current))
        };
        let similar = |payload: &Payload| {
            matches!(payload, Payload::Request { request: r, .. }
                if std::mem::discriminant(r) == std::mem::discriminant(request))
        };
        self.deliver(
            Address::Client(id),
            Address::Node(to),
            &wanted,
            &|_| false,
            &similar,
        );
    }

    /// A tick of the world's node: silent ones are counted, and written when the node campaigned
    /// or sent something.
    fn tick(&mut self, node: NodeId, campaigned: bool, sent: bool) {
        // Silent ticks count: a leader heartbeats on every third, so the tick verb gives
        // the node every tick since the last one written.
        let count = self.ticks.entry(node).or_insert(0);
        *count += 1;
        let count = *count;
        match self.role(node) {
            Some(Role::Follower | Role::Candidate) if campaigned => {
                self.ticks.insert(node, 0);
                self.run(format!("campaign n{node}"));
            }
            // A follower's tick that sent something (a read waiting too long refused):
            // its ticks since the leader last reached it, short of a campaign in the
            // driver (the world's follower did not campaign).
            Some(Role::Follower | Role::Candidate) if sent => {
                self.ticks.insert(node, 0);
                let count = self.short_of_campaign(node, count);
                if count > 0 {
                    self.run(format!("tick n{node} {count}"));
                }
            }
            Some(Role::Leader) if sent => {
                self.ticks.insert(node, 0);
                let count = count.min(TICKS_MAX);
                if count == 1 {
                    self.run(format!("tick n{node}"));
                } else {
                    self.run(format!("tick n{node} {count}"));
                }
            }
            _ => {}
        }
    }

    /// The world's client `client` gave up on its request.
    fn timed_out(&mut self, client: u32) {
        // The world's client gave up and sends its next request (to a node it draws):
        // the driver's client gives up on the same request, aimed where the world's went.
        let Some(id) = self.driver_id(client) else {
            return;
        };
        let slot = &self.env.clients[id as usize];
        if slot.in_flight.is_none() {
            return;
        }
        let name = slot.name.clone();
        if let Some(node) = self.next_node(client) {
            self.run(format!("target {name} n{node}"));
        }
        self.run(format!("timeout {name}"));
    }

    /// Runs `verb` on the environment and keeps it. A verb the driver refuses is dropped.
    fn run(&mut self, verb: String) {
        let text = format!("{verb}\n----\n\n");
        let Ok(script) = parse::parse("schedule", &text, &self.names) else {
            return;
        };
        let Some(block) = script.blocks.first() else {
            return;
        };
        let Some(handler) = verbs::VERBS
            .iter()
            .find(|(name, _)| *name == block.verb)
            .map(|(_, handler)| *handler)
        else {
            return;
        };
        let Ok(args) = verbs::Args::new(&block.verb, &block.args) else {
            return;
        };
        let env = &mut self.env;
        let outcome =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| handler(env, &args)));
        if let Ok(Ok(_)) = outcome {
            self.verbs.push(verb);
        }
    }

    fn name(&self, address: Address) -> Option<String> {
        match address {
            Address::Node(id) => Some(format!("n{id}")),
            Address::Client(id) => self.env.clients.get(id as usize).map(|c| c.name.clone()),
        }
    }

    /// Delivers the queued packet from `from` to `to` that `wanted` picks (else the newest that
    /// `kin` accepts, else the first on that link that `similar` accepts), naming it by its place
    /// among that link's packets; returns what it delivered when `wanted` or `kin` picked it.
    /// When no queued packet is the one wanted, the world delivered a copy of one delivered
    /// before (its network duplicates): that earlier step is noted, for the next pass to deliver
    /// it with `dup`.
    fn deliver(
        &mut self,
        from: Address,
        to: Address,
        wanted: &dyn Fn(&Payload) -> bool,
        kin: &dyn Fn(&Payload) -> bool,
        similar: &dyn Fn(&Payload) -> bool,
    ) -> Option<Payload> {
        let link = on_link(&self.env.network, from, to);
        let exact = link.iter().position(|packet| wanted(&packet.payload));
        // Short of the packet itself, its kin (`packets::same_but_counters`), newest first.
        let kindred = exact
            .is_none()
            .then(|| link.iter().rposition(|packet| kin(&packet.payload)))
            .flatten();
        if exact.is_none() && kindred.is_none() {
            let earlier = (self.delivered.get(&(from, to))).and_then(|on_link| {
                (on_link.iter().rev())
                    .find(|(_, packet)| wanted(&packet.payload) || kin(&packet.payload))
            });
            if let Some((step, _)) = earlier {
                self.found_dups.insert(*step);
            }
        }
        let matched = exact.or(kindred);
        let skip = matched.or_else(|| link.iter().position(|packet| similar(&packet.payload)))?;
        let packet = link[skip].clone();
        let (Some(from), Some(to)) = (self.name(from), self.name(to)) else {
            return None;
        };
        let skip = skip_word(skip);
        let dup = if matched.is_some() && self.dups.contains(&self.step) {
            " dup"
        } else {
            ""
        };
        let count = self.verbs.len();
        self.run(format!("deliver from={from} to={to}{skip} n=1{dup}"));
        if self.verbs.len() > count {
            // A copy left queued is kept for the step that delivers it (`dropped` spares it).
            match self.kept.iter().position(|kept| *kept == packet) {
                Some(index) if dup.is_empty() => {
                    self.kept.swap_remove(index);
                }
                _ if !dup.is_empty() => self.kept.push(packet.clone()),
                _ => {}
            }
        }
        if matched.is_some() && self.verbs.len() > count {
            let payload = packet.payload.clone();
            let on_link = self.delivered.entry((packet.from, packet.to)).or_default();
            on_link.push((self.step, packet));
            return Some(payload);
        }
        None
    }

    /// Node `to` took `message` from node `from` in the world: the driver's node takes the same
    /// message (else its kin, else the oldest of its kind: `deliver`).
    fn message(&mut self, from: NodeId, to: NodeId, message: &Message) {
        // A leader's append resets a follower's election clock: its silent ticks since then are
        // the ones a later tick verb gives it.
        // A follower with a read waiting gets those ticks first: they age the read as they did
        // in the world, between the appends that keep it from campaigning.
        if matches!(message, Message::AppendEntries { .. }) && self.role(to) != Some(Role::Leader) {
            let count = self.ticks.insert(to, 0).unwrap_or(0);
            if count > 0 && self.reading.contains(&to) {
                let count = self.short_of_campaign(to, count);
                if count > 0 {
                    self.run(format!("tick n{to} {count}"));
                }
            }
        }
        // The world took this very message before, and its network kept another copy (it
        // duplicated the packet, or delivered an old copy late): the driver's packet that took
        // its place then, left queued by `dup`, is this one (not a kin, which may be the copy a
        // later step wants).
        let (sender, receiver) = (Address::Node(from), Address::Node(to));
        let queued = |payload: &Payload| {
            (on_link(&self.env.network, sender, receiver).iter())
                .any(|packet| packet.payload == *payload)
        };
        let copy = if queued(&Payload::Message(message.clone())) {
            None
        } else {
            (self.copies.get(&(from, to)))
                .and_then(|copies| copies.iter().rev().find(|(_, world, _)| world == message))
                .map(|(step, _, driver)| (*step, driver.clone()))
        };
        let copy = match copy {
            Some((_, driver)) if queued(&driver) => Some(driver),
            Some((step, _)) => {
                self.found_dups.insert(step);
                None
            }
            None => None,
        };
        let wanted = |payload: &Payload| match &copy {
            Some(driver) => payload == driver,
            None => matches!(payload, Payload::Message(m) if m == message),
        };
        let kin = |payload: &Payload| matches!(payload, Payload::Message(m) if same_but_counters(m, message));
        let similar = |payload: &Payload| {
            matches!(payload, Payload::Message(m)
                if std::mem::discriminant(m) == std::mem::discriminant(message))
        };
        if let Some(driver) = self.deliver(sender, receiver, &wanted, &kin, &similar) {
            let copies = self.copies.entry((from, to)).or_default();
            copies.push((self.step, message.clone(), driver));
        }
    }

    /// The world's network lost a packet from `from` to `to` (world addresses): the driver's
    /// copy, the newest queued on that link that says the same (the one its sender just sent),
    /// is dropped too, so no later delivery takes it for another packet it resembles.
    fn dropped(&mut self, from: Address, to: Address, payload: &Payload) {
        let driver = |address: Address| match address {
            Address::Node(_) => Some(address),
            Address::Client(client) => self.driver_id(client).map(Address::Client),
        };
        let (Some(from), Some(to)) = (driver(from), driver(to)) else {
            return;
        };
        let link = on_link(&self.env.network, from, to);
        let exact = link
            .iter()
            .rposition(|packet| same_payload(&packet.payload, payload));
        // Short of it, its kin, but not a copy a `dup` delivery left queued: a later step
        // delivers that one.
        let kin = |packet: &&Packet| match (&packet.payload, payload) {
            (Payload::Message(driver), Payload::Message(world)) => {
                same_but_counters(driver, world) && !self.kept.contains(*packet)
            }
            _ => false,
        };
        let Some(skip) = exact.or_else(|| link.iter().rposition(kin)) else {
            return;
        };
        let (Some(from), Some(to)) = (self.name(from), self.name(to)) else {
            return;
        };
        let skip = skip_word(skip);
        self.run(format!("drop from={from} to={to}{skip} n=1"));
    }

    /// The node the world's client sends its next request to (from the current line on).
    fn next_node(&self, client: u32) -> Option<NodeId> {
        if !self.aiming {
            return None;
        }
        let sent = self.sent.get(&client)?;
        let index = sent.partition_point(|(line, _)| *line < self.at);
        sent.get(index).map(|(_, node)| *node)
    }

    /// ` via=nK` for a client about to be created: where the world's client first sends.
    fn via(&self, client: u32) -> String {
        self.next_node(client)
            .map(|node| format!(" via=n{node}"))
            .unwrap_or_default()
    }

    /// Before a verb that makes the client send: `target` it where the world's client sent, when
    /// the driver's client would send elsewhere.
    /// `reply`: the verb delivers a reply, which replaces the client's route.
    fn aim(&mut self, client: u32, reply: bool) {
        let (Some(node), Some(id)) = (self.next_node(client), self.driver_id(client)) else {
            return;
        };
        let leader = self.env.leader();
        let slot = &self.env.clients[id as usize];
        let routed = if reply { None } else { slot.next_target };
        let natural = slot.aimed.or(routed).or(slot.pinned).unwrap_or(leader);
        if natural != node {
            let name = slot.name.clone();
            self.run(format!("target {name} n{node}"));
        }
    }

    /// The id of the request driver client `id` has in flight, when it asks `request` and is
    /// queued to node `to`.
    fn in_flight_queued(&self, id: u32, to: NodeId, request: &Request) -> Option<u64> {
        let (request_id, _, asked) = self.env.clients.get(id as usize)?.in_flight.as_ref()?;
        let queued = self.env.network.iter().any(|packet| {
            packet.from == Address::Client(id)
                && packet.to == Address::Node(to)
                && matches!(&packet.payload, Payload::Request { request_id: r, .. } if r == request_id)
        });
        (same_request(asked, request) && queued).then_some(*request_id)
    }

    /// Reads the world's requests off its trace: where each client sent each (`sent`) and what
    /// each owner asked (`owner_requests`).
    fn scan(&mut self, lines: &[TraceLine], knobs: &Knobs) {
        for (index, line) in lines.iter().enumerate() {
            let TraceEvent::History(Event::Requested {
                client,
                node,
                request,
            }) = &line.event
            else {
                continue;
            };
            self.sent.entry(*client).or_default().push((index, *node));
            if kind_of(knobs, *client) == Kind::Owner {
                let requests = self.owner_requests.entry(*client).or_default();
                requests.push((index, request.clone()));
            }
        }
    }

    /// ` keep` when the world's owner `client` wrote the checkpoint run it starts at the current
    /// line without truncating to it (a folder's cursor was below the run: the world's trim
    /// limit): its first request past the run's reads and records is not a fenced trim, or there
    /// is none before the violation.
    fn kept(&self, client: u32) -> &'static str {
        let after_run = self.owner_requests.get(&client).and_then(|requests| {
            requests
                .iter()
                .skip_while(|(line, _)| *line < self.at)
                .map(|(_, request)| request)
                .find(|request| match request {
                    Request::Read { .. } => false,
                    Request::Append { body, .. } => !body.starts_with(MAGIC),
                    _ => true,
                })
        });
        match after_run {
            Some(Request::Trim { fence: Some(_), .. }) => "",
            _ => " keep",
        }
    }

    fn driver_id(&self, client: u32) -> Option<u32> {
        let name = self.clients.get(&client)?;
        self.env.names.get(name).copied()
    }

    /// The most of `count` ticks the driver's node takes without campaigning, counted on a copy
    /// of it: a world follower whose tick did not campaign must not campaign in the driver, whose
    /// election clock was last reset by its own deliveries (the ticks since the world's last
    /// append are no bound on it).
    fn short_of_campaign(&self, node: NodeId, count: u64) -> u64 {
        let slot = self.env.nodes.get(node as usize);
        let Some(broker) = slot.and_then(|slot| slot.host.broker.as_ref()) else {
            return 0;
        };
        let mut copy = broker.clone();
        let term = copy.term();
        let count = count.min(TICKS_MAX);
        (0..count)
            .find(|_| {
                copy.step_collect(Input::Tick);
                copy.term() != term
            })
            .unwrap_or(count)
    }

    fn role(&self, node: NodeId) -> Option<Role> {
        let slot = self.env.nodes.get(node as usize)?;
        slot.host.broker.as_ref().map(|broker| broker.role())
    }

    /// A sync the world's disk completed: `sync nK`, when the driver's node has one to do.
    /// Under `syncs=eager` every sync of the world's is one in flight in the driver's (it covers
    /// what the world's covered); else only a sync that releases a held send or reply is written.
    fn synced(&mut self, node: NodeId) {
        let eager = self.env.syncs == Syncs::Eager;
        let pending = self.env.nodes.get(node as usize).is_some_and(|slot| {
            if eager {
                slot.host.disk.unsynced_ops() > 0
            } else {
                slot.host.unsynced_through().is_some()
            }
        });
        if pending {
            self.run(format!("sync n{node}"));
        }
    }

    /// The verb for a request a world client chose (not one its state machine sends on its own).
    fn request(&mut self, kind: Kind, client: u32, request: &Request) {
        match (kind, request) {
            (Kind::Prober, _) => {}
            (_, Request::Fence { new, old }) => {
                let name = format!("o{}", new.0);
                let via = self.via(client);
                self.clients.insert(client, name.clone());
                self.owners.insert(client, OwnerPhase::Other);
                self.run(format!("owner {name} token={} old={}{via}", new.0, old.0));
            }
            (Kind::Reader | Kind::Folder, Request::Read { .. }) => {
                let name = match self.clients.get(&client) {
                    Some(name) => name.clone(),
                    None => {
                        let (verb, name) = if kind == Kind::Folder {
                            ("folder", format!("f{client}"))
                        } else {
                            ("reader", format!("r{client}"))
                        };
                        let via = self.via(client);
                        self.run(format!("{verb} {name}{via}"));
                        self.clients.insert(client, name.clone());
                        name
                    }
                };
                // One read per read the world's client sent, unless one is already on its way.
                let busy = self.driver_id(client).is_some_and(|id| {
                    let slot = &self.env.clients[id as usize];
                    slot.in_flight.is_some() || slot.reads_wanted > 0
                });
                if !busy {
                    self.aim(client, false);
                    self.run(format!("read {name}"));
                }
            }
            (Kind::Owner, Request::Read { .. }) => {
                // An owner reads only for a checkpoint at the head of its queue: the first read
                // of a row is the checkpoint asked for (the world's owner chose it then).
                let phase = self.owners.insert(client, OwnerPhase::Reading);
                if phase != Some(OwnerPhase::Reading) {
                    if let Some(name) = self.clients.get(&client).cloned() {
                        self.aim(client, false);
                        let keep = self.kept(client);
                        self.run(format!("checkpoint {name}{keep}"));
                    }
                }
            }
            (_, Request::Append { body, .. }) => {
                let Some(name) = self.clients.get(&client).cloned() else {
                    return;
                };
                if body.starts_with(MAGIC) {
                    // A run with no read before it: the owner was caught up when it was asked.
                    let phase = self.owners.insert(client, OwnerPhase::Run);
                    if phase.is_none_or(|phase| phase == OwnerPhase::Other) {
                        self.aim(client, false);
                        let keep = self.kept(client);
                        self.run(format!("checkpoint {name}{keep}"));
                    }
                    return;
                }
                if kind == Kind::Owner {
                    self.owners.insert(client, OwnerPhase::Other);
                }
                let text = String::from_utf8_lossy(body).to_string();
                if text.starts_with("fenced write of epoch") || text.contains(char::is_whitespace) {
                    return;
                }
                if self.seen.insert((name.clone(), format!("write {text}"))) {
                    self.aim(client, false);
                    self.run(format!("write {name} {text}"));
                }
            }
            (_, Request::Trim { floor, fence, .. }) => {
                if kind == Kind::Owner {
                    self.owners.insert(client, OwnerPhase::Other);
                }
                let Some(name) = self.clients.get(&client).cloned() else {
                    return;
                };
                let verb = if fence.is_some() {
                    format!("truncate {name} floor={floor}")
                } else {
                    format!("trim {name} floor={floor}")
                };
                if self.seen.insert((name, verb.clone())) {
                    self.aim(client, false);
                    self.run(verb);
                }
            }
            _ => {}
        }
    }
}

/// The verbs (without `cluster` and `audit`) that replay `attempt`'s schedule in the driver.
/// With `aiming`, each client's requests go to the node the world's client sent them to.
pub fn translate(attempt: &Attempt, cluster: &str, twin_rules: &str, aiming: bool) -> Vec<String> {
    // A pass finds the packets the world's network duplicated (a delivery whose packet the
    // driver no longer holds); the next pass delivers their first copy with `dup`. A duplicate
    // found may reveal another (the copy's effects), so a few passes, until none is new.
    let mut dups = BTreeSet::new();
    let mut verbs = Vec::new();
    for _ in 0..DUP_PASSES {
        let (pass, found) = translate_pass(attempt, cluster, twin_rules, aiming, &dups);
        verbs = pass;
        let before = dups.len();
        dups.extend(found);
        if dups.len() == before {
            break;
        }
    }
    verbs
}

/// One pass of `translate`, delivering the steps `dups` with `dup`; returns the verbs and the
/// steps that turned out to deliver a duplicate's first copy.
fn translate_pass(
    attempt: &Attempt,
    cluster: &str,
    twin_rules: &str,
    aiming: bool,
    dups: &BTreeSet<usize>,
) -> (Vec<String>, BTreeSet<usize>) {
    let lines: &[TraceLine] = attempt.trace_lines.as_deref().unwrap_or(&[]);
    let knobs = attempt.knobs.clone();
    let mut lock = Lockstep::new(aiming, dups.clone());
    lock.scan(lines, &knobs);
    // Only the environment's state matters here, not what the verbs print.
    lock.env.quiet = true;
    lock.run(format!("{cluster} twin={twin_rules}"));
    lock.verbs.clear();
    let mut line_index = 0;
    for (index, step) in attempt.schedule.iter().enumerate() {
        lock.step = index;
        match step {
            Step::Line => {
                let line = lines.get(line_index).cloned();
                lock.at = line_index;
                if let Some(line) = line {
                    on_line(&mut lock, &knobs, line.event);
                }
                line_index += 1;
                lock.at = line_index;
            }
            Step::Message { from, to, message } => lock.message(*from, *to, message),
            Step::Request {
                client,
                to,
                request,
            } => lock.requested(*client, *to, request),
            Step::Tick {
                node,
                campaigned,
                sent,
            } => lock.tick(*node, *campaigned, *sent),
            Step::Synced { node } => lock.synced(*node),
            Step::Dropped { from, to, payload } => lock.dropped(*from, *to, payload),
            Step::TimedOut { client } => lock.timed_out(*client),
        }
    }
    (lock.verbs, lock.found_dups)
}

fn on_line(lock: &mut Lockstep, knobs: &Knobs, event: TraceEvent) {
    match event {
        TraceEvent::History(event) => match event {
            // Only felixd processes hold leases as holders (a paros owner's grant is no holder).
            Event::LeaseGranted { client, epoch } if kind_of(knobs, client) == Kind::Holder => {
                let name = format!("h{epoch}");
                let via = lock.via(client);
                lock.clients.insert(client, name.clone());
                lock.run(format!("lease {name}{via}"));
            }
            Event::Requested {
                client, request, ..
            } => {
                let kind = kind_of(knobs, client);
                lock.request(kind, client, &request);
            }
            Event::Replied { client, node, .. } => {
                lock.reading.remove(&node);
                let Some(id) = lock.driver_id(client) else {
                    return;
                };
                // The reply to the request the driver's client has in flight, if it is that one.
                let in_flight = lock.env.clients[id as usize]
                    .in_flight
                    .as_ref()
                    .map(|(request_id, _, _)| *request_id);
                let wanted = |payload: &Payload| matches!(payload, Payload::Reply { request_id, .. } if Some(*request_id) == in_flight);
                let similar = |_: &Payload| true;
                lock.aim(client, true);
                lock.deliver(
                    Address::Node(node),
                    Address::Client(id),
                    &wanted,
                    &|_| false,
                    &similar,
                );
            }
            // The crash is written when its disk loss is known (`DiskLost`, the next line).
            Event::Crashed { .. } => {}
            Event::Restarted { node } => lock.run(format!("restart n{node}")),
            _ => {}
        },
        TraceEvent::Sim(event) => match event {
            SimEvent::DiskLost { node, ops_lost, .. } => {
                let unsynced = lock
                    .env
                    .nodes
                    .get(node as usize)
                    .map_or(0, |slot| slot.host.disk.unsynced_ops() as u64);
                let kept = unsynced.saturating_sub(ops_lost);
                if kept == 0 {
                    lock.run(format!("crash n{node}"));
                } else {
                    lock.run(format!("crash n{node} keep={kept}"));
                }
            }
            SimEvent::Paused { client } => {
                if let Some(name) = lock.clients.get(&client).cloned() {
                    if lock.driver_id(client).is_some() {
                        lock.run(format!("pause {name}"));
                    }
                }
            }
            SimEvent::Resumed { client } => {
                if let Some(name) = lock.clients.get(&client).cloned() {
                    if lock.driver_id(client).is_some() {
                        lock.aim(client, false);
                        lock.run(format!("resume {name}"));
                    }
                }
            }
            _ => {}
        },
    }
}
