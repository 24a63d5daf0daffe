//! Starting a nemesis run's processes: the proxies, the voting nodes and the non-voting
//! replicas, each on 127.0.0.1 with its peer links through the nemesis's proxies, its
//! failpoints on, and its power-loss window as drawn from the seed
//! (`schedule::draw_power_loss`); then the clients.

use super::client_process::{ClientProcess, ClientSpec, Role};
use super::faults::Cluster;
use super::proxy::Proxy;
use super::workload::{self, Shared};
use super::NemesisConfig;
use crate::process::{NodeProcess, NodeSpec};
use felix_core::record::NodeId;
use felix_sim::render::trace::SimEvent;
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// The ids of a run's processes: voters `1..=nodes`, then the replicas.
pub fn ids(config: &NemesisConfig) -> Vec<NodeId> {
    (1..=(config.nodes + config.replicas) as NodeId).collect()
}

/// The replicas' ids (after the voters').
pub fn replica_ids(config: &NemesisConfig) -> Vec<NodeId> {
    ((config.nodes + 1) as NodeId..=(config.nodes + config.replicas) as NodeId).collect()
}

/// Starts every node; `power_loss[i]` is node `i + 1`'s window in milliseconds (0: off).
pub fn start_nodes(
    config: &NemesisConfig,
    listen: &BTreeMap<NodeId, SocketAddr>,
    proxies: &[Proxy],
    power_loss: &[u32],
) -> Result<BTreeMap<NodeId, NodeProcess>, String> {
    let replicas = replica_ids(config);
    let mut nodes = BTreeMap::new();
    for (&id, &address) in listen {
        let mut peers: Vec<(NodeId, SocketAddr)> = proxies
            .iter()
            .filter(|proxy| proxy.from == id)
            .map(|proxy| (proxy.to, proxy.address))
            .collect();
        peers.push((id, address));
        let mut extra = vec!["--failpoints".to_string()];
        let window = power_loss.get(id as usize - 1).copied().unwrap_or(0);
        if window > 0 {
            extra.push("--unsynced-window-ms".to_string());
            extra.push(window.to_string());
        }
        let spec = NodeSpec {
            id,
            listen: address,
            peers,
            replicas: replicas.clone(),
            dir: super::node_dir(&config.dir, id),
            twin: config.twin.map(|twin| twin.name().to_string()),
            extra,
        };
        let log = config.dir.join(format!("node-{id}.log"));
        let process = NodeProcess::start(&config.exe, spec, &log).map_err(|error| {
            format!("cannot start node {id} ({}): {error}", config.exe.display())
        })?;
        nodes.insert(id, process);
    }
    Ok(nodes)
}

/// One proxy per directed link between the nodes (`proxy.rs`), each with its own seed.
pub fn start_proxies(
    seed: u64,
    ids: &[NodeId],
    listen: &BTreeMap<NodeId, SocketAddr>,
    stop: &Arc<AtomicBool>,
) -> Result<Vec<Proxy>, String> {
    let mut proxies = Vec::new();
    for &from in ids {
        for &to in ids {
            if from != to {
                let seed = seed ^ (u64::from(from) << 32) ^ u64::from(to);
                let proxy = Proxy::start(from, to, listen[&to], seed, stop.clone())
                    .map_err(|error| format!("cannot start a proxy: {error}"))?;
                proxies.push(proxy);
            }
        }
    }
    Ok(proxies)
}

/// Starts the clients. The felixd holders and readers are processes of their own
/// (`client_process.rs`, in `cluster.clients`), told the lease at once; the paros owners,
/// folders and readers share the fence service and the trim fence in memory, so they are
/// threads of this process (returned).
pub fn start_clients(
    config: &NemesisConfig,
    shared: &Shared,
    cluster: &mut Cluster,
) -> Result<Vec<JoinHandle<()>>, String> {
    let mut threads = Vec::new();
    if !config.paros {
        let twin = config.twin.map(|twin| twin.name().to_string());
        let holders =
            (0..config.holders).map(|holder| (Role::Holder, holder, u64::from(holder) + 1));
        let readers = (0..config.readers).map(|reader| {
            let client = config.holders + reader;
            (Role::Reader, client, u64::from(client) + 101)
        });
        for (role, client, offset) in holders.chain(readers) {
            let spec = ClientSpec {
                role,
                client,
                seed: config.seed.wrapping_add(offset),
                twin: twin.clone(),
                addresses: shared.addresses.clone(),
            };
            let log = config.dir.join(format!("client-{client}.log"));
            let process = ClientProcess::start(&config.exe, spec, &log).map_err(|error| {
                format!(
                    "cannot start client {client} ({}): {error}",
                    config.exe.display()
                )
            })?;
            cluster.clients.push(process);
        }
        shared.recorder.sim(SimEvent::LeaseMoved {
            from: None,
            to: 0,
            epoch: 1,
            told: true,
        });
        cluster.tell_lease(1, Some(0));
        return Ok(threads);
    }
    cluster.paros = Some(shared.paros.clone());
    shared.recorder.sim(SimEvent::LeaseMoved {
        from: None,
        to: 0,
        epoch: 1,
        told: true,
    });
    for holder in 0..config.holders {
        let shared = shared.clone();
        let seed = config.seed.wrapping_add(u64::from(holder) + 1);
        threads.push(std::thread::spawn(move || {
            workload::run_owner(shared, holder, seed)
        }));
    }
    // Two folders: one folds from the start, one joins later and restores from a checkpoint.
    for index in 0..2u32 {
        let shared = shared.clone();
        let client = config.holders + config.readers + index;
        let seed = config.seed.wrapping_add(u64::from(client) + 201);
        let join_after = Duration::from_millis(u64::from(index) * 3000);
        threads.push(std::thread::spawn(move || {
            workload::run_folder(shared, client, seed, join_after)
        }));
    }
    for reader in 0..config.readers {
        let shared = shared.clone();
        let client = config.holders + reader;
        let seed = config.seed.wrapping_add(u64::from(client) + 101);
        threads.push(std::thread::spawn(move || {
            workload::run_reader(shared, client, seed)
        }));
    }
    Ok(threads)
}
