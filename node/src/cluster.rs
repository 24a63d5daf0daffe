//! `felix cluster up|down|status --dir D`: a local cluster of `felix serve` processes on
//! 127.0.0.1, for trying the node by hand (the nemesis and the tests keep their own processes
//! under guards instead).
//!
//! `up` picks free loopback ports, starts one process per node in a process group of its own
//! (so the cluster outlives the terminal), logs each node to `D/node-N.log`, waits until every
//! node answers, and records ids, addresses, pids and directories in `D/cluster.json`. `down`
//! sends SIGTERM to each recorded pid that is still that node's `serve` process (a pid can be
//! reused), waits, then SIGKILLs what is left. `status` asks every node for its state.

use crate::addresses::Addresses;
use crate::client::ClusterClient;
use crate::process::{self, free_ports, NodeSpec};
use clap::{Args, Subcommand};
use felix_core::record::NodeId;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The most nodes `cluster up` starts.
pub const CLUSTER_NODES_MAX: usize = 9;
const STATE_FILE: &str = "cluster.json";

/// Arguments of `felix cluster`.
#[derive(Args, Debug)]
pub struct ClusterArgs {
    #[command(subcommand)]
    pub command: ClusterCommand,
}

#[derive(Subcommand, Debug)]
pub enum ClusterCommand {
    /// Start a local cluster on 127.0.0.1 and print its addresses.
    Up {
        /// Voting nodes.
        #[arg(long, default_value_t = 3)]
        nodes: usize,
        /// Non-voting replicas, on top of the voters.
        #[arg(long, default_value_t = 0)]
        replicas: usize,
        /// The cluster's directory (node stores, logs, cluster.json).
        #[arg(long)]
        dir: PathBuf,
    },
    /// Stop the cluster recorded in DIR (SIGTERM, then SIGKILL after 5 s).
    Down {
        #[arg(long)]
        dir: PathBuf,
    },
    /// Ask every node of the cluster in DIR for its state.
    Status {
        #[arg(long)]
        dir: PathBuf,
    },
}

/// One node of a recorded cluster.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ClusterNode {
    pub id: NodeId,
    pub address: String,
    pub pid: u32,
    pub dir: PathBuf,
    pub replica: bool,
}

/// `D/cluster.json`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ClusterState {
    pub nodes: Vec<ClusterNode>,
}

impl ClusterState {
    pub fn read(dir: &Path) -> Result<ClusterState, String> {
        let path = dir.join(STATE_FILE);
        let text = std::fs::read_to_string(&path)
            .map_err(|error| format!("{}: cannot read: {error}", path.display()))?;
        crate::frame::parse_json(&text)
            .map_err(|error| format!("{}: not a cluster file: {error}", path.display()))
    }

    fn write(&self, dir: &Path) -> Result<(), String> {
        let path = dir.join(STATE_FILE);
        let text = serde_json::to_string_pretty(self).unwrap_or_default();
        std::fs::write(&path, text + "\n")
            .map_err(|error| format!("{}: cannot write: {error}", path.display()))
    }

    /// The nodes' client addresses.
    pub fn addresses(&self) -> Result<Addresses, String> {
        self.nodes
            .iter()
            .map(|node| crate::addresses::parse_address(&node.address).map(|a| (node.id, a)))
            .collect()
    }
}

pub fn run_cluster(args: ClusterArgs) -> u8 {
    let result = match args.command {
        ClusterCommand::Up {
            nodes,
            replicas,
            dir,
        } => up(nodes, replicas, &dir),
        ClusterCommand::Down { dir } => down(&dir),
        ClusterCommand::Status { dir } => status(&dir),
    };
    match result {
        Ok(code) => code,
        Err(message) => crate::bad_input(message),
    }
}

fn up(voters: usize, replicas: usize, dir: &Path) -> Result<u8, String> {
    if voters == 0 || voters + replicas > CLUSTER_NODES_MAX {
        return Err(format!(
            "--nodes must be at least 1 and --nodes + --replicas at most {CLUSTER_NODES_MAX}"
        ));
    }
    if let Ok(state) = ClusterState::read(dir) {
        if state
            .nodes
            .iter()
            .any(|node| process::is_node_process(node.pid, &node.dir))
        {
            return Err(format!(
                "a cluster is already up in {} (felix cluster down --dir {} first)",
                dir.display(),
                dir.display()
            ));
        }
    }
    std::fs::create_dir_all(dir)
        .map_err(|error| format!("{}: cannot create: {error}", dir.display()))?;
    let dir = dir
        .canonicalize()
        .map_err(|error| format!("{}: {error}", dir.display()))?;
    let exe = std::env::current_exe()
        .map_err(|error| format!("cannot find the felix binary: {error}"))?;
    let count = voters + replicas;
    let ports = free_ports(count).map_err(|error| format!("no free loopback port: {error}"))?;
    let ids: Vec<NodeId> = (1..=count as NodeId).collect();
    let peers: Vec<(NodeId, std::net::SocketAddr)> =
        ids.iter().copied().zip(ports.iter().copied()).collect();
    let replica_ids: Vec<NodeId> = ids[voters..].to_vec();
    let mut state = ClusterState { nodes: Vec::new() };
    for (&id, &listen) in ids.iter().zip(&ports) {
        let spec = NodeSpec {
            id,
            listen,
            peers: peers.clone(),
            replicas: replica_ids.clone(),
            dir: dir.join(format!("node-{id}")),
            twin: None,
            extra: Vec::new(),
        };
        let log = dir.join(format!("node-{id}.log"));
        let child = process::spawn(&exe, &spec, &log, true)
            .map_err(|error| format!("cannot start node {id}: {error}"))?;
        state.nodes.push(ClusterNode {
            id,
            address: listen.to_string(),
            pid: child.id(),
            dir: spec.dir.clone(),
            replica: replica_ids.contains(&id),
        });
        // The child runs on in its own process group; this process does not wait for it.
        std::mem::forget(child);
    }
    state.write(&dir)?;
    let addresses = state.addresses()?;
    let mut client = ClusterClient::new(addresses, Duration::from_millis(500));
    let deadline = Instant::now() + Duration::from_secs(10);
    for node in &state.nodes {
        loop {
            if client.status(node.id).is_ok() {
                break;
            }
            if Instant::now() > deadline {
                let _ = down(&dir);
                return Err(format!(
                    "node {} did not answer within 10 s (see {}/node-{}.log); the cluster was stopped",
                    node.id,
                    dir.display(),
                    node.id
                ));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    for node in &state.nodes {
        out!(
            "node {} {} pid {}{} (log {}/node-{}.log)",
            node.id,
            node.address,
            node.pid,
            if node.replica { " replica" } else { "" },
            dir.display(),
            node.id
        );
    }
    let list: Vec<&str> = state
        .nodes
        .iter()
        .map(|node| node.address.as_str())
        .collect();
    out!("cluster up: --cluster {}", list.join(","));
    Ok(0)
}

fn down(dir: &Path) -> Result<u8, String> {
    let state = ClusterState::read(dir)?;
    let live: Vec<&ClusterNode> = state
        .nodes
        .iter()
        .filter(|node| process::is_node_process(node.pid, &node.dir))
        .collect();
    for node in &live {
        process::signal(node.pid, "CONT");
        process::signal(node.pid, "TERM");
    }
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline
        && live
            .iter()
            .any(|node| process::is_node_process(node.pid, &node.dir))
    {
        std::thread::sleep(Duration::from_millis(50));
    }
    for node in &live {
        if process::is_node_process(node.pid, &node.dir) {
            process::signal(node.pid, "KILL");
            out!("node {} (pid {}) killed after 5 s", node.id, node.pid);
        } else {
            out!("node {} (pid {}) stopped", node.id, node.pid);
        }
    }
    if live.is_empty() {
        out!("no node of {} was running", dir.display());
    }
    Ok(0)
}

fn status(dir: &Path) -> Result<u8, String> {
    let state = ClusterState::read(dir)?;
    let mut client = ClusterClient::new(state.addresses()?, Duration::from_millis(1000));
    let mut unreachable = 0;
    for node in &state.nodes {
        let running = process::is_node_process(node.pid, &node.dir);
        match client.status(node.id) {
            Ok(status) => {
                let (term, leader, committed) = status.summary();
                let role = if status.replica {
                    "replica"
                } else if leader {
                    "leader"
                } else {
                    "follower"
                };
                out!(
                    "node {} {} pid {}: {role}, term {term}, committed {committed}, tail {}",
                    node.id,
                    node.address,
                    node.pid,
                    status.tail
                );
            }
            Err(error) => {
                unreachable += 1;
                out!(
                    "node {} {} pid {}: {} ({error})",
                    node.id,
                    node.address,
                    node.pid,
                    if running {
                        "not answering"
                    } else {
                        "not running"
                    }
                );
            }
        }
    }
    Ok(if unreachable == 0 { 0 } else { 1 })
}
