//! Helpers: start a local cluster of guarded `felix-node serve` processes on 127.0.0.1.

use felix_node::addresses::Addresses;
use felix_node::process::{free_ports, NodeProcess, NodeSpec};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The node binary built with this test.
pub fn exe() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_felix-node"))
}

/// A cluster of guarded processes (killed when dropped).
pub struct TestCluster {
    pub nodes: Vec<NodeProcess>,
    pub addresses: Addresses,
}

/// Starts `count` voters in `dir` and waits until each answers.
pub fn start_cluster(dir: &Path, count: usize, extra: &[&str]) -> TestCluster {
    let ports = free_ports(count).expect("free loopback ports");
    let addresses: Addresses = ports
        .iter()
        .enumerate()
        .map(|(index, address)| ((index + 1) as u32, *address))
        .collect();
    for address in addresses.values() {
        assert!(
            address.ip().is_loopback(),
            "every test port is on 127.0.0.1"
        );
    }
    let peers: Vec<_> = addresses.iter().map(|(id, a)| (*id, *a)).collect();
    let mut nodes = Vec::new();
    for (&id, &listen) in &addresses {
        let spec = NodeSpec {
            id,
            listen,
            peers: peers.clone(),
            replicas: Vec::new(),
            dir: dir.join(format!("node-{id}")),
            twin: None,
            extra: extra.iter().map(|s| s.to_string()).collect(),
        };
        let log = dir.join(format!("node-{id}.log"));
        nodes.push(NodeProcess::start(&exe(), spec, &log).expect("start a node"));
    }
    felix_node::nemesis::wait_until_answering(&addresses, Duration::from_secs(10))
        .expect("every node answers");
    TestCluster { nodes, addresses }
}
