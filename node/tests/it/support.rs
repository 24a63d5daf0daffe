//! Helpers: start a local cluster of guarded `felix-node serve` processes on 127.0.0.1.

use felix_node::addresses::Addresses;
use felix_node::process::NodeProcess;
use std::path::{Path, PathBuf};

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
    let extra: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
    let (nodes, addresses) =
        felix_node::process::start_voters(&exe(), dir, count, &extra).expect("start the cluster");
    for address in addresses.values() {
        assert!(
            address.ip().is_loopback(),
            "every test port is on 127.0.0.1"
        );
    }
    TestCluster { nodes, addresses }
}
