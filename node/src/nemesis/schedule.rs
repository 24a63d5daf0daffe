//! The fault schedule: drawn from `--seed` alone, before the run, so the same seed injects the
//! same faults at the same offsets into the run (the run itself is not deterministic: real time,
//! scheduling and sockets decide what the faults meet).
//!
//! Faults start every 0.3 to 1.2 s and last 0.3 to 2 s; each is two actions, a start and an end,
//! and overlapping faults are allowed (an action that no longer applies, such as restarting a
//! node that is already up, does nothing).
//!
//! Power loss (`draw_power_loss`) is drawn from the same seed on a stream of its own, so it
//! leaves the schedule of a seed as it was: for each node, whether its disk loses what was not
//! yet fsynced when the node is killed (the node's power-loss mode, `felix serve
//! --unsynced-window-ms`), and how long its group commit holds records unsynced. Every kill of
//! such a node is then a power loss; half of them, as `draw_tear` says, also tear the node's
//! last unsynced write. Client pauses (`draw_client_pauses`) have a stream of their own too.

use felix_core::api::ClientId;
use felix_core::record::NodeId;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::time::Duration;

/// One thing the nemesis does at one moment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// SIGKILL these nodes at the same instant.
    Kill(Vec<NodeId>),
    Restart(Vec<NodeId>),
    /// SIGSTOP / SIGCONT.
    Pause(NodeId),
    Resume(NodeId),
    /// Cut every link to and from the node (a full partition of one node).
    Isolate(NodeId),
    /// Cut the link `from -> to` only (a one-way partition).
    CutOneWay {
        from: NodeId,
        to: NodeId,
    },
    /// Drop this share of the frames on every link to and from the node.
    Lossy {
        node: NodeId,
        drop_per_million: u32,
    },
    /// Delay every frame on the node's links.
    Slow {
        node: NodeId,
        delay_millis: u32,
    },
    /// Heal the links of the node (to and from).
    HealLinks(NodeId),
    HealLink {
        from: NodeId,
        to: NodeId,
    },
    /// A slow disk on the node (its failpoint: every fsync waits this long first).
    SlowDisk {
        node: NodeId,
        sync_delay_millis: u32,
    },
    HealDisk(NodeId),
    /// The lease service moves the felixd lease to the other holder, silently.
    MoveLease,
    /// SIGSTOP a client process; with `lease_expires`, a holder that holds the lease when it
    /// freezes loses it while frozen (it cannot renew), and is not told.
    PauseClient {
        client: ClientId,
        lease_expires: bool,
    },
    /// SIGCONT a client process.
    ResumeClient(ClientId),
}

impl Action {
    /// The action in words (the trace's `network_fault` description).
    pub fn describe(&self) -> String {
        let nodes = |ids: &[NodeId]| {
            ids.iter()
                .map(|id| format!("n{id}"))
                .collect::<Vec<_>>()
                .join(" ")
        };
        match self {
            Action::Kill(ids) => format!("kill -9 {}", nodes(ids)),
            Action::Restart(ids) => format!("restart {}", nodes(ids)),
            Action::Pause(id) => format!("SIGSTOP n{id}"),
            Action::Resume(id) => format!("SIGCONT n{id}"),
            Action::Isolate(id) => format!("isolate n{id} (every link to and from it cut)"),
            Action::CutOneWay { from, to } => format!("cut n{from} -> n{to} (one way)"),
            Action::Lossy {
                node,
                drop_per_million,
            } => format!(
                "drop {}% of the frames on n{node}'s links",
                drop_per_million / 10_000
            ),
            Action::Slow { node, delay_millis } => {
                format!("delay every frame on n{node}'s links by {delay_millis}ms")
            }
            Action::HealLinks(id) => format!("heal n{id}'s links"),
            Action::HealLink { from, to } => format!("heal n{from} -> n{to}"),
            Action::SlowDisk {
                node,
                sync_delay_millis,
            } => format!("slow n{node}'s disk: every fsync waits {sync_delay_millis}ms"),
            Action::HealDisk(id) => format!("heal n{id}'s disk"),
            Action::MoveLease => "move the lease".to_string(),
            Action::PauseClient {
                client,
                lease_expires,
            } => format!(
                "SIGSTOP c{client}{}",
                if *lease_expires {
                    " (a lease it holds expires)"
                } else {
                    ""
                }
            ),
            Action::ResumeClient(client) => format!("SIGCONT c{client}"),
        }
    }
}

/// Draws the schedule for a run of `length` over nodes `1..=nodes`, sorted by time.
pub fn draw(seed: u64, nodes: usize, length: Duration) -> Vec<(Duration, Action)> {
    assert!(nodes >= 1);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut actions = Vec::new();
    let node = |rng: &mut ChaCha8Rng| rng.random_range(1..=nodes as NodeId);
    let mut at = Duration::from_millis(rng.random_range(300..1000u64));
    while at < length {
        let lasts = Duration::from_millis(rng.random_range(300..2000u64));
        let end = at + lasts;
        let kind = rng.random_range(0..100u32);
        match kind {
            0..=24 => {
                let id = node(&mut rng);
                actions.push((at, Action::Kill(vec![id])));
                actions.push((end, Action::Restart(vec![id])));
            }
            25..=34 if nodes >= 2 => {
                let first = node(&mut rng);
                let mut second = node(&mut rng);
                while second == first {
                    second = node(&mut rng);
                }
                actions.push((at, Action::Kill(vec![first, second])));
                actions.push((end, Action::Restart(vec![first, second])));
            }
            35..=49 => {
                let id = node(&mut rng);
                actions.push((at, Action::Pause(id)));
                actions.push((end, Action::Resume(id)));
            }
            50..=64 => {
                let id = node(&mut rng);
                actions.push((at, Action::Isolate(id)));
                actions.push((end, Action::HealLinks(id)));
            }
            65..=74 if nodes >= 2 => {
                let from = node(&mut rng);
                let mut to = node(&mut rng);
                while to == from {
                    to = node(&mut rng);
                }
                actions.push((at, Action::CutOneWay { from, to }));
                actions.push((end, Action::HealLink { from, to }));
            }
            75..=84 => {
                let id = node(&mut rng);
                let drop_per_million = rng.random_range(200_000..500_000u32);
                actions.push((
                    at,
                    Action::Lossy {
                        node: id,
                        drop_per_million,
                    },
                ));
                actions.push((end, Action::HealLinks(id)));
            }
            85..=88 => {
                let id = node(&mut rng);
                let delay_millis = rng.random_range(10..60u32);
                actions.push((
                    at,
                    Action::Slow {
                        node: id,
                        delay_millis,
                    },
                ));
                actions.push((end, Action::HealLinks(id)));
            }
            89..=91 => {
                // Every node at once: a whole-cluster crash (a rack's power).
                let all: Vec<NodeId> = (1..=nodes as NodeId).collect();
                actions.push((at, Action::Kill(all.clone())));
                actions.push((end, Action::Restart(all)));
            }
            92..=95 => {
                let id = node(&mut rng);
                let sync_delay_millis = rng.random_range(5..200u32);
                actions.push((
                    at,
                    Action::SlowDisk {
                        node: id,
                        sync_delay_millis,
                    },
                ));
                actions.push((end, Action::HealDisk(id)));
            }
            _ => actions.push((at, Action::MoveLease)),
        }
        at += Duration::from_millis(rng.random_range(300..1200u64));
    }
    actions.sort_by_key(|(at, _)| *at);
    actions
}

/// Client pauses, on a stream of their own (so a seed's node faults stay as they were): over the
/// client processes `0..clients`, one every 1 to 4 s, each 0.3 to 2.5 s long; 7 in 10 let a
/// lease the frozen client holds expire.
pub fn draw_client_pauses(seed: u64, clients: u32, length: Duration) -> Vec<(Duration, Action)> {
    let mut actions = Vec::new();
    if clients == 0 {
        return actions;
    }
    // "clientps": the client pauses' stream.
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x636c_6965_6e74_7073);
    let mut at = Duration::from_millis(rng.random_range(500..2500u64));
    while at < length {
        let client = rng.random_range(0..clients);
        let lasts = Duration::from_millis(rng.random_range(300..2500u64));
        let lease_expires = rng.random_range(0..10u32) < 7;
        actions.push((
            at,
            Action::PauseClient {
                client,
                lease_expires,
            },
        ));
        actions.push((at + lasts, Action::ResumeClient(client)));
        at += Duration::from_millis(rng.random_range(1000..4000u64));
    }
    actions.sort_by_key(|(at, _)| *at);
    actions
}

/// The whole schedule of a run: the node faults (`draw`) and the client pauses
/// (`draw_client_pauses`) in time order (at equal times, node faults first).
pub fn draw_all(
    seed: u64,
    nodes: usize,
    clients: u32,
    length: Duration,
) -> Vec<(Duration, Action)> {
    let mut actions = draw(seed, nodes, length);
    actions.extend(draw_client_pauses(seed, clients, length));
    actions.sort_by_key(|(at, _)| *at);
    actions
}

/// A kill of a node in power-loss mode tears its last unsynced write with this chance (in
/// percent).
pub const TEAR_PERCENT: u32 = 50;

/// Whether the run's `kill`-th kill action (counted from 0) tears node `node`'s last unsynced
/// write, and the draw that picks the entry torn inside it (`Frame::PowerCut`): a function of the
/// seed, on a stream of its own.
pub fn draw_tear(seed: u64, kill: usize, node: NodeId) -> Option<u32> {
    // "tear": the tears' stream, one generator per (kill, node).
    let key = seed ^ 0x7465_6172 ^ ((kill as u64) << 24) ^ (u64::from(node) << 8);
    let mut rng = ChaCha8Rng::seed_from_u64(key.rotate_left(17));
    (rng.random_range(0..100u32) < TEAR_PERCENT).then(|| rng.random_range(0..u32::MAX))
}

/// A node runs in power-loss mode with this chance (in percent).
pub const POWER_LOSS_PERCENT: u32 = 80;
/// The power-loss window of a node in that mode is drawn from this range (milliseconds): short
/// beside an election timeout (150 to 300 ms), long beside an fsync.
pub const POWER_LOSS_WINDOW_MS: std::ops::RangeInclusive<u32> = 2..=30;

/// For each node `1..=nodes`, the milliseconds its group commit holds unsynced records in the
/// process (0: not in power-loss mode, a kill loses nothing it wrote).
pub fn draw_power_loss(seed: u64, nodes: usize) -> Vec<u32> {
    // "power-lo": a stream of its own, independent of the fault schedule's.
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x706f_7765_722d_6c6f);
    (0..nodes)
        .map(|_| {
            if rng.random_range(0..100u32) < POWER_LOSS_PERCENT {
                rng.random_range(POWER_LOSS_WINDOW_MS)
            } else {
                0
            }
        })
        .collect()
}
