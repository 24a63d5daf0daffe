//! Every child process a test starts is killed when its guard drops, even when the test panics.

use super::support::{exe, start_cluster};
use felix_node::nemesis::client_process::{ClientProcess, ClientSpec, Role};
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

/// A client process (the nemesis's felixd clients) is killed and reaped when its guard drops,
/// even frozen by SIGSTOP and with a panic unwinding; one told to stop ends on its own, exit 0,
/// with its counts.
#[test]
fn client_processes_never_outlive_their_guard() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let cluster = start_cluster(dir.path(), 1, &[]);
    let spec = |client| ClientSpec {
        role: Role::Reader,
        client,
        seed: 1,
        twin: None,
        addresses: cluster.addresses.clone(),
    };
    let log = dir.path().join("client.log");
    let mut pid = None;
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let mut process = ClientProcess::start(&exe(), spec(0), &log).expect("a client");
        pid = process.pid();
        assert!(process.pause());
        panic!("the test fails with a frozen client up");
    }));
    assert!(result.is_err());
    let pid = pid.expect("the client's pid");
    assert!(gone(pid), "client process {pid} outlived its guard");
    let mut process = ClientProcess::start(&exe(), spec(1), &log).expect("a client");
    std::thread::sleep(std::time::Duration::from_millis(500));
    let finished = process.finish(std::time::Duration::from_secs(5));
    assert_eq!(finished.failure, None);
    assert!(finished.counts.is_some_and(|counts| counts.requests > 0));
    assert!(!finished.lines.is_empty());
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
