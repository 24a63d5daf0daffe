//! The nemesis's real clients, each a thread (paros) or a process of its own running the same
//! function (felixd holders and readers: `client_process.rs`), driving the core's client state
//! machines over TCP exactly as the simulator's world drives them
//! (`sim/src/seeded/world/clients.rs`): one request in flight, `Requested` recorded before it
//! leaves and `Replied` when it comes back, the client's own conclusions after it, routing by
//! `Route`, and a timeout that makes the outcome unknown.
//!
//! - **Holders** (felixd) with a lease service in this process: the nemesis moves the lease
//!   without telling the old holder, which keeps writing until its next renewal (every
//!   `RENEW_EVERY`) or until the journal refuses it (its tail, a newer epoch, a tagged
//!   `CursorTooOld`). A serving holder writes, and now and then trims a little behind its tail.
//! - **Readers**: read from random nodes, and now and then start over from offset 1 (a consumer
//!   joining late), which reads below the floor: the answer must be `CursorTooOld` or records no
//!   acknowledged trim has passed (NoReadBelowFloor).
//!
//! - **Paros** (`--workload paros`): checkpoint owners take the writer fence from a fence
//!   service (a lease move hands it to the other owner, which replaces the fence it knows
//!   committed; the old owner runs on until the journal refuses it), write, checkpoint and
//!   truncate; a folder folds from the start and another joins 3 s later and must restore from
//!   the checkpoint at the floor; no truncate passes the lowest folding cursor (the simulator's
//!   shared trim fence).
//!
//! Writers stop at the quiesce (`quiesce`), readers at the end (`stop`).

use super::history::Recorder;
use crate::addresses::Addresses;
use crate::client::{route_of, CallError, ClusterClient, Router};
use felix_core::api::{ClientId, Reply, Request, RequestId};
use felix_core::client::checkpoint::OwnerOp;
use felix_core::client::{
    Client, Folder, Holder, HolderConfig, HolderOp, HolderStatus, Owner, OwnerConfig, OwnerStatus,
    Reader,
};
use felix_core::history::Event;
use felix_core::record::{Offset, Token};
use felix_core::rules::Rules;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A holder asks the lease service whether it still holds the lease this often.
const RENEW_EVERY: Duration = Duration::from_millis(700);
/// How long a client waits for an answer before its outcome is unknown.
pub const CLIENT_TIMEOUT: Duration = Duration::from_millis(1000);

/// The lease service: the current epoch and who holds it.
#[derive(Debug, Default)]
pub struct Lease {
    pub epoch: u64,
    pub holder: Option<ClientId>,
}

/// Counters for the summary.
#[derive(Debug, Default)]
pub struct Stats {
    pub requests: AtomicU64,
    pub acked: AtomicU64,
    pub unknown: AtomicU64,
    pub refused: AtomicU64,
    pub reads_served: AtomicU64,
}

/// The counters as plain numbers: what a client process reports at its end.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    pub requests: u64,
    pub acked: u64,
    pub unknown: u64,
    pub refused: u64,
    pub reads_served: u64,
}

impl Stats {
    pub fn counts(&self) -> Counts {
        Counts {
            requests: self.requests.load(Ordering::Relaxed),
            acked: self.acked.load(Ordering::Relaxed),
            unknown: self.unknown.load(Ordering::Relaxed),
            refused: self.refused.load(Ordering::Relaxed),
            reads_served: self.reads_served.load(Ordering::Relaxed),
        }
    }

    /// Adds a client process's counters to these.
    pub fn add(&self, counts: &Counts) {
        self.requests.fetch_add(counts.requests, Ordering::Relaxed);
        self.acked.fetch_add(counts.acked, Ordering::Relaxed);
        self.unknown.fetch_add(counts.unknown, Ordering::Relaxed);
        self.refused.fetch_add(counts.refused, Ordering::Relaxed);
        self.reads_served
            .fetch_add(counts.reads_served, Ordering::Relaxed);
    }
}

/// The paros workload's fence service and shared trim fence: the token last handed out, the
/// newest fence known committed (from acknowledged fences and refusals naming the fence in
/// force), the slot that should own the fence, and every folding client's cursor (no truncate
/// may pass the lowest, as in the simulator).
#[derive(Debug, Default)]
pub struct Paros {
    pub token_last: u64,
    pub fence_committed: u64,
    pub owner: Option<ClientId>,
    pub cursors: BTreeMap<ClientId, Offset>,
}

/// What every client thread shares.
#[derive(Clone)]
pub struct Shared {
    pub recorder: Recorder,
    pub addresses: Addresses,
    pub rules: Rules,
    pub lease: Arc<Mutex<Lease>>,
    pub paros: Arc<Mutex<Paros>>,
    pub stats: Arc<Stats>,
    pub quiesce: Arc<AtomicBool>,
    pub stop: Arc<AtomicBool>,
}

impl Shared {
    fn paros(&self) -> std::sync::MutexGuard<'_, Paros> {
        match self.paros.lock() {
            Ok(paros) => paros,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    fn lease(&self) -> (u64, Option<ClientId>) {
        let lease = match self.lease.lock() {
            Ok(lease) => lease,
            Err(poisoned) => poisoned.into_inner(),
        };
        (lease.epoch, lease.holder)
    }
}

/// What one request came to.
#[derive(Default)]
struct Outcome {
    /// The client was sent elsewhere (a refusal that routes, or no answer).
    routed: bool,
    reply: Option<Reply>,
    /// The client's own conclusions (already recorded).
    events: Vec<Event>,
}

/// Sends one request of `client`, hands it the answer and records both.
fn drive(
    shared: &Shared,
    cluster: &mut ClusterClient,
    router: &mut Router,
    client: &mut dyn Client,
    id: RequestId,
    request: Request,
) -> Outcome {
    let client_id = client.client_id();
    let node = router.target();
    shared.recorder.history(Event::Requested {
        client: client_id,
        node,
        request: request.clone(),
    });
    shared.stats.requests.fetch_add(1, Ordering::Relaxed);
    match cluster.call(node, request.clone()) {
        Ok(reply) => {
            let refused = route_of(&reply).is_some();
            let acked = matches!(
                reply,
                felix_core::api::Reply::Appended { .. } | felix_core::api::Reply::TrimNoop { .. }
            );
            let step = client.on_reply(id, reply.clone());
            shared.recorder.history(Event::Replied {
                client: client_id,
                node,
                request,
                reply: reply.clone(),
            });
            for event in &step.events {
                shared.recorder.history(event.clone());
            }
            if acked {
                shared.stats.acked.fetch_add(1, Ordering::Relaxed);
            }
            if refused {
                shared.stats.refused.fetch_add(1, Ordering::Relaxed);
            }
            if !step.delivered.is_empty() {
                shared
                    .stats
                    .reads_served
                    .fetch_add(step.delivered.len() as u64, Ordering::Relaxed);
            }
            let routed = step.route != felix_core::client::Route::Any;
            let wait = router.follow(step.route, refused);
            if !wait.is_zero() {
                std::thread::sleep(wait);
            }
            Outcome {
                routed,
                reply: Some(reply),
                events: step.events,
            }
        }
        Err(error) => {
            if matches!(error, CallError::Unknown(_)) {
                shared.stats.unknown.fetch_add(1, Ordering::Relaxed);
            }
            let step = client.on_unknown(id);
            for event in &step.events {
                shared.recorder.history(event.clone());
            }
            router.next();
            if matches!(error, CallError::Unreachable(_)) {
                std::thread::sleep(Duration::from_millis(20));
            }
            Outcome {
                routed: true,
                reply: None,
                events: step.events,
            }
        }
    }
}

/// A felixd holder slot: builds a holder whenever the lease service grants it the lease.
pub fn run_holder(shared: Shared, client_id: ClientId, seed: u64) {
    let nodes: Vec<_> = shared.addresses.keys().copied().collect();
    let mut cluster = ClusterClient::new(shared.addresses.clone(), CLIENT_TIMEOUT);
    let mut router = Router::new(nodes, client_id as usize, Duration::from_millis(20));
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut holder: Option<Holder> = None;
    let mut epoch_held = 0;
    let mut renewed_at = Instant::now();
    let mut written = 0u64;
    while !shared.stop.load(Ordering::SeqCst) && !shared.quiesce.load(Ordering::SeqCst) {
        let (epoch, lease_holder) = shared.lease();
        if lease_holder == Some(client_id) && epoch > epoch_held {
            holder = Some(Holder::new(
                client_id,
                epoch,
                1,
                shared.rules,
                HolderConfig::default(),
            ));
            epoch_held = epoch;
            renewed_at = Instant::now();
            shared.recorder.history(Event::LeaseGranted {
                client: client_id,
                epoch,
            });
        }
        if renewed_at.elapsed() >= RENEW_EVERY {
            renewed_at = Instant::now();
            // Renewal: a holder whose lease moved is told now (it may have written until now).
            if holder.as_ref().is_some_and(|h| h.epoch() != epoch) {
                holder = None;
            }
        }
        let Some(current) = holder.as_mut() else {
            std::thread::sleep(Duration::from_millis(20));
            continue;
        };
        if current.is_finished() {
            holder = None;
            continue;
        }
        if current.status() == HolderStatus::Serving && current.ops_waiting() < 2 {
            let op = if rng.random_range(0..10u32) == 0 {
                let known = current.tail().unwrap_or(1);
                let back = rng.random_range(2..20u64);
                HolderOp::Trim {
                    floor: known.saturating_sub(back).max(1),
                }
            } else {
                written += 1;
                HolderOp::Write {
                    body: format!("c{client_id}e{epoch_held}w{written}").into_bytes(),
                }
            };
            let _ = current.submit(op);
        }
        let Some((id, request)) = current.next_request() else {
            std::thread::sleep(Duration::from_millis(5));
            continue;
        };
        let _ = drive(&shared, &mut cluster, &mut router, current, id, request);
        std::thread::sleep(Duration::from_millis(rng.random_range(1..8u64)));
    }
}

/// A reader: reads from random nodes, starting over from offset 1 now and then.
pub fn run_reader(shared: Shared, client_id: ClientId, seed: u64) {
    let nodes: Vec<_> = shared.addresses.keys().copied().collect();
    let count = nodes.len();
    let mut cluster = ClusterClient::new(shared.addresses.clone(), CLIENT_TIMEOUT);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut router = Router::new(nodes, rng.random_range(0..count), Duration::from_millis(20));
    let mut reader = Reader::new(client_id, 1, 16);
    let mut restart_at = Instant::now() + Duration::from_millis(rng.random_range(500..3000u64));
    while !shared.stop.load(Ordering::SeqCst) {
        if Instant::now() >= restart_at {
            reader = Reader::new(client_id, 1, 16);
            restart_at = Instant::now() + Duration::from_millis(rng.random_range(500..3000u64));
        }
        let Some((id, request)) = reader.next_request() else {
            std::thread::sleep(Duration::from_millis(5));
            continue;
        };
        let routed = drive(&shared, &mut cluster, &mut router, &mut reader, id, request).routed;
        // Another node for the next read (unless a refusal routed it): lagging and partitioned
        // nodes get asked too.
        if !routed {
            for _ in 0..rng.random_range(0..count) {
                router.next();
            }
        }
        std::thread::sleep(Duration::from_millis(rng.random_range(2..15u64)));
    }
}

/// A paros owner slot: takes the writer fence when the fence service names it (replacing the
/// fence it knows committed), writes, checkpoints and truncates under it; a stopped owner that
/// is still the designated one takes a fresh token.
pub fn run_owner(shared: Shared, client_id: ClientId, seed: u64) {
    let nodes: Vec<_> = shared.addresses.keys().copied().collect();
    let mut cluster = ClusterClient::new(shared.addresses.clone(), CLIENT_TIMEOUT);
    let mut router = Router::new(nodes, client_id as usize, Duration::from_millis(20));
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut owner: Option<Owner> = None;
    let mut written = 0u64;
    while !shared.stop.load(Ordering::SeqCst) && !shared.quiesce.load(Ordering::SeqCst) {
        let (fence_committed, limit) = {
            let mut paros = shared.paros();
            if paros.owner == Some(client_id) {
                let needs = owner.as_ref().is_none_or(|current| {
                    current.is_finished() || current.token().0 < paros.token_last
                });
                if needs {
                    let spent = owner.as_ref().is_some_and(|current| {
                        current.is_finished() && current.token().0 == paros.token_last
                    });
                    if spent {
                        paros.token_last += 1;
                    }
                    let token = paros.token_last;
                    let old = paros.fence_committed;
                    if token > old {
                        owner = Some(Owner::new(
                            client_id,
                            Token(token),
                            Token(old),
                            OwnerConfig::default(),
                        ));
                        shared.recorder.history(Event::LeaseGranted {
                            client: client_id,
                            epoch: token,
                        });
                    }
                }
            }
            (paros.fence_committed, paros.cursors.values().copied().min())
        };
        let Some(current) = owner.as_mut() else {
            std::thread::sleep(Duration::from_millis(20));
            continue;
        };
        let own_cursor = current.cursor();
        current.set_trim_limit(Some(limit.map_or(own_cursor, |l| l.min(own_cursor))));
        let stale = current.token().0 < fence_committed;
        if stale && current.status() == OwnerStatus::Fenced && rng.random_range(0..40u32) == 0 {
            // A stale owner still believes it holds the fence and truncates now and then, as
            // the simulator's stale owners do: the journal must refuse it (`TruncateRefused`).
            let floor = own_cursor.min(limit.unwrap_or(own_cursor)).max(1);
            let _ = current.submit(OwnerOp::Truncate { floor });
        }
        if !stale && current.status() == OwnerStatus::Fenced && rng.random_range(0..4u32) == 0 {
            let op = if rng.random_range(0..10u32) == 0 {
                OwnerOp::Checkpoint
            } else {
                written += 1;
                OwnerOp::Write {
                    body: format!("o{client_id}t{}w{written}", current.token().0).into_bytes(),
                }
            };
            let _ = current.submit(op);
        }
        let Some((id, request)) = current.next_request() else {
            std::thread::sleep(Duration::from_millis(5));
            continue;
        };
        let fence = match &request {
            Request::Fence { new, .. } => Some(new.0),
            _ => None,
        };
        let outcome = drive(&shared, &mut cluster, &mut router, current, id, request);
        let mut paros = shared.paros();
        if let (Some(token), Some(Reply::Appended { .. })) = (fence, &outcome.reply) {
            paros.fence_committed = paros.fence_committed.max(token);
        }
        for event in &outcome.events {
            if let Event::OwnerStopped { current, .. } = event {
                paros.fence_committed = paros.fence_committed.max(current.0);
                paros.token_last = paros.token_last.max(current.0);
            }
        }
        drop(paros);
        std::thread::sleep(Duration::from_millis(rng.random_range(1..8u64)));
    }
}

/// A folder: folds the journal from offset 1 (or joins after `join_after` and restores from the
/// checkpoint at the floor), its cursor part of the shared trim fence.
pub fn run_folder(shared: Shared, client_id: ClientId, seed: u64, join_after: Duration) {
    std::thread::sleep(join_after);
    let nodes: Vec<_> = shared.addresses.keys().copied().collect();
    let count = nodes.len();
    let mut cluster = ClusterClient::new(shared.addresses.clone(), CLIENT_TIMEOUT);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut router = Router::new(nodes, rng.random_range(0..count), Duration::from_millis(20));
    let mut folder = Folder::new(client_id, 16, 64);
    shared.paros().cursors.insert(client_id, folder.cursor());
    while !shared.stop.load(Ordering::SeqCst) {
        let Some((id, request)) = folder.next_request() else {
            std::thread::sleep(Duration::from_millis(5));
            continue;
        };
        let routed = drive(&shared, &mut cluster, &mut router, &mut folder, id, request).routed;
        shared.paros().cursors.insert(client_id, folder.cursor());
        if !routed {
            for _ in 0..rng.random_range(0..count) {
                router.next();
            }
        }
        std::thread::sleep(Duration::from_millis(rng.random_range(2..15u64)));
    }
    shared.paros().cursors.remove(&client_id);
}
