//! Starting a nemesis run's processes: the voting nodes and the non-voting replicas, each on
//! 127.0.0.1 with its peer links through the nemesis's proxies, its failpoints on, and its
//! power-loss window as drawn from the seed (`schedule::draw_power_loss`).

use super::proxy::Proxy;
use super::NemesisConfig;
use crate::process::{NodeProcess, NodeSpec};
use felix_core::record::NodeId;
use std::collections::BTreeMap;
use std::net::SocketAddr;

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

/// The power-loss draw in words, for the trace (one sentence per node in the mode).
pub fn describe_power_loss(power_loss: &[u32]) -> Vec<String> {
    power_loss
        .iter()
        .enumerate()
        .filter(|(_, window)| **window > 0)
        .map(|(index, window)| {
            format!(
                "n{}'s disk loses what is not fsynced on a kill (power-loss mode: records wait up to {window}ms for their fsync)",
                index + 1
            )
        })
        .collect()
}
