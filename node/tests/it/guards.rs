//! Every child process a test starts is killed when its guard drops, even when the test panics.

use super::support::start_cluster;
use std::path::Path;

fn gone(pid: u32) -> bool {
    // Reaped by the guard: no /proc entry (a zombie would still have one).
    !Path::new(&format!("/proc/{pid}")).exists()
}

/// A panic while a cluster is up still kills and reaps every node.
#[test]
fn a_panicking_test_leaves_no_node_behind() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let pids = std::sync::Mutex::new(Vec::new());
    let result = std::panic::catch_unwind(|| {
        let cluster = start_cluster(dir.path(), 3, &[]);
        let mut recorded = pids.lock().expect("pid list");
        recorded.extend(cluster.nodes.iter().filter_map(|node| node.pid()));
        drop(recorded);
        panic!("the test fails with the cluster up");
    });
    assert!(result.is_err());
    let pids = pids.into_inner().expect("pid list");
    assert_eq!(pids.len(), 3);
    for pid in pids {
        assert!(gone(pid), "node process {pid} outlived its guard");
    }
}

/// SIGTERM stops a node cleanly: exit 0, after its last sync, saying so in its log.
#[test]
fn sigterm_stops_a_node_cleanly() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let mut cluster = start_cluster(dir.path(), 1, &[]);
    let code = cluster.nodes[0].stop(std::time::Duration::from_secs(5));
    assert_eq!(code, Some(0));
    let log = std::fs::read_to_string(dir.path().join("node-1.log")).expect("the node's log");
    assert!(log.contains("node 1 stopped"), "{log}");
}
