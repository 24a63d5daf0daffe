//! kill -9 during a stream of appends loses no acknowledged append: an append is acknowledged
//! only after the fsync that covers it on a majority, so SIGKILL of any node, and of the whole
//! cluster at once, keeps every acknowledged record at its offset.

use super::support::start_cluster;
use felix_core::api::{ReadFrom, Reply, Request};
use felix_core::record::{Headers, Offset};
use felix_node::client::{route_of, ClusterClient, Router};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Appends until `stop`; returns every acknowledged (offset, body).
fn append_stream(
    addresses: felix_node::addresses::Addresses,
    stop: Arc<AtomicBool>,
) -> BTreeMap<Offset, Vec<u8>> {
    let nodes: Vec<_> = addresses.keys().copied().collect();
    let mut client = ClusterClient::new(addresses, Duration::from_millis(1000));
    let mut router = Router::new(nodes, 0, Duration::from_millis(20));
    let mut acked = BTreeMap::new();
    let mut next = 0u64;
    while !stop.load(Ordering::SeqCst) {
        next += 1;
        let body = format!("append {next}").into_bytes();
        let request = Request::Append {
            expected_tail: None,
            fence: None,
            body: body.clone(),
            headers: Headers::default(),
        };
        match client.call(router.target(), request) {
            Ok(Reply::Appended { offset, .. }) => {
                acked.insert(offset, body);
                router.follow(felix_core::client::Route::Any, false);
            }
            Ok(reply) => {
                let route = route_of(&reply).unwrap_or(felix_core::client::Route::AnotherNode);
                std::thread::sleep(router.follow(route, true));
            }
            Err(_) => router.next(),
        }
    }
    acked
}

/// Reads the whole committed log (writes only), following the leader.
fn read_all(addresses: &felix_node::addresses::Addresses) -> BTreeMap<Offset, Vec<u8>> {
    let nodes: Vec<_> = addresses.keys().copied().collect();
    let mut client = ClusterClient::new(addresses.clone(), Duration::from_millis(2000));
    let mut router = Router::new(nodes, 0, Duration::from_millis(50));
    let mut log = BTreeMap::new();
    let mut from = 1;
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        let request = Request::Read {
            from: ReadFrom::Offset(from),
            max_records: 256,
        };
        match client.call(router.target(), request) {
            Ok(Reply::Records { records, next }) => {
                let count = records.len();
                for record in records {
                    log.insert(record.offset, record.body);
                }
                from = next;
                if count < 256 {
                    return log;
                }
            }
            Ok(reply) => {
                let route = route_of(&reply).unwrap_or(felix_core::client::Route::AnotherNode);
                std::thread::sleep(router.follow(route, true));
            }
            Err(_) => router.next(),
        }
    }
    panic!("the cluster did not serve a full read within 30 s");
}

#[test]
fn kill_nine_loses_no_acknowledged_append() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let mut cluster = start_cluster(dir.path(), 3, &[]);
    let stop = Arc::new(AtomicBool::new(false));
    let acked = Arc::new(Mutex::new(BTreeMap::new()));
    let writers: Vec<_> = (0..4)
        .map(|_| {
            let addresses = cluster.addresses.clone();
            let stop = stop.clone();
            let acked = acked.clone();
            std::thread::spawn(move || {
                let mine = append_stream(addresses, stop);
                acked.lock().expect("acked").extend(mine);
            })
        })
        .collect();
    // One node at a time, then the whole cluster at once.
    for round in 0..6 {
        std::thread::sleep(Duration::from_millis(600));
        let index = round % 3;
        cluster.nodes[index].kill();
        std::thread::sleep(Duration::from_millis(300));
        cluster.nodes[index].restart().expect("restart");
    }
    std::thread::sleep(Duration::from_millis(600));
    for node in &mut cluster.nodes {
        node.kill();
    }
    std::thread::sleep(Duration::from_millis(300));
    for node in &mut cluster.nodes {
        node.restart().expect("restart");
    }
    std::thread::sleep(Duration::from_millis(1500));
    stop.store(true, Ordering::SeqCst);
    for writer in writers {
        writer.join().expect("a writer thread");
    }
    let acked = acked.lock().expect("acked").clone();
    assert!(
        acked.len() >= 20,
        "too few appends acknowledged to judge: {}",
        acked.len()
    );
    assert!(felix_node::nemesis::wait_for_convergence(
        &cluster.addresses,
        Duration::from_secs(20)
    ));
    let log = read_all(&cluster.addresses);
    for (offset, body) in &acked {
        assert_eq!(
            log.get(offset),
            Some(body),
            "acknowledged append at offset {offset} lost or changed after kill -9"
        );
    }
}

/// Power-loss mode (`--unsynced-window-ms`) holds an appended record in the process until its
/// group commit: a kill -9 inside the window loses it, as a power loss loses what the disk had
/// not made durable, and, every rule on, its client was never told it landed.
#[test]
fn kill_nine_in_power_loss_mode_loses_the_unsynced_suffix() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let mut cluster = start_cluster(dir.path(), 1, &["--unsynced-window-ms", "1000"]);
    let append = |body: &str| Request::Append {
        expected_tail: None,
        fence: None,
        body: body.as_bytes().to_vec(),
        headers: Headers::default(),
    };
    // The first append waits out an election and two windows (the leader's noop, then itself).
    let mut patient = ClusterClient::new(cluster.addresses.clone(), Duration::from_millis(5000));
    let deadline = Instant::now() + Duration::from_secs(20);
    let first = loop {
        match patient.call(1, append("synced")) {
            Ok(Reply::Appended { offset, .. }) => break offset,
            _ if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(100)),
            other => panic!("the first append was not acknowledged: {other:?}"),
        }
    };
    let started = Instant::now();
    let mut hasty = ClusterClient::new(cluster.addresses.clone(), Duration::from_millis(300));
    let outcome = hasty.call(1, append("unsynced"));
    assert!(
        outcome.is_err(),
        "acknowledged before its fsync: {outcome:?}"
    );
    assert!(
        started.elapsed() < Duration::from_millis(900),
        "still in the window"
    );
    cluster.nodes[0].kill();
    cluster.nodes[0].restart().expect("restart");
    felix_node::nemesis::wait_until_answering(&cluster.addresses, Duration::from_secs(10))
        .expect("the node answers again");
    // The same hasty append, but the kill comes after the window: the record was written and
    // fsynced, so it survives (and so the first one did reach the node).
    let mut hasty = ClusterClient::new(cluster.addresses.clone(), Duration::from_millis(300));
    let deadline = Instant::now() + Duration::from_secs(20);
    while !hasty.status(1).is_ok_and(|status| status.summary().1) {
        assert!(Instant::now() < deadline, "the node did not lead again");
        std::thread::sleep(Duration::from_millis(100));
    }
    let _ = hasty.call(1, append("late"));
    std::thread::sleep(Duration::from_millis(1500));
    cluster.nodes[0].kill();
    cluster.nodes[0].restart().expect("restart");
    felix_node::nemesis::wait_until_answering(&cluster.addresses, Duration::from_secs(10))
        .expect("the node answers again");
    let log = read_all(&cluster.addresses);
    let count = |wanted: &[u8]| {
        log.values()
            .filter(|body| body.as_slice() == wanted)
            .count()
    };
    assert_eq!(log.get(&first), Some(&b"synced".to_vec()));
    assert_eq!(
        count(b"unsynced"),
        0,
        "the record applied but not fsynced survived a kill -9 in the window"
    );
    assert_eq!(
        count(b"late"),
        1,
        "a record fsynced before the kill was lost"
    );
}
