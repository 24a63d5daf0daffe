//! A power cut that tears the last unsynced write (what `felix nemesis` does to a node in
//! power-loss mode before some of its kills): the node restarts, its store's recovery cuts the
//! partial frame at the end of the segment, every acknowledged append is still there at its
//! offset, and the node goes on appending.

use super::support::start_cluster;
use felix_core::api::{ReadFrom, Reply, Request};
use felix_core::client::Route;
use felix_core::record::{Headers, Offset};
use felix_node::client::{route_of, ClusterClient, Router};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

fn append(body: &str) -> Request {
    Request::Append {
        expected_tail: None,
        fence: None,
        body: body.as_bytes().to_vec(),
        headers: Headers::default(),
    }
}

/// Appends `body` until it is acknowledged (following refusals), within 20 s.
fn append_acked(client: &mut ClusterClient, body: &str) -> Offset {
    let nodes: Vec<_> = client.addresses().keys().copied().collect();
    let mut router = Router::new(nodes, 0, Duration::from_millis(50));
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline {
        match client.call(router.target(), append(body)) {
            Ok(Reply::Appended { offset, .. }) => return offset,
            Ok(reply) => {
                let route = route_of(&reply).unwrap_or(Route::AnotherNode);
                std::thread::sleep(router.follow(route, true));
            }
            Err(_) => std::thread::sleep(Duration::from_millis(50)),
        }
    }
    panic!("{body:?} was not acknowledged within 20 s");
}

/// Every write the node serves from offset 1, within 20 s.
fn read_all(client: &mut ClusterClient) -> BTreeMap<Offset, Vec<u8>> {
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut log = BTreeMap::new();
    let mut from = 1;
    while Instant::now() < deadline {
        let request = Request::Read {
            from: ReadFrom::Offset(from),
            max_records: 256,
        };
        match client.call(1, request) {
            Ok(Reply::Records { records, next }) => {
                let count = records.len();
                log.extend(records.into_iter().map(|r| (r.offset, r.body)));
                from = next;
                if count < 256 {
                    return log;
                }
            }
            _ => std::thread::sleep(Duration::from_millis(50)),
        }
    }
    panic!("the node did not serve a whole read within 20 s");
}

#[test]
fn a_torn_last_write_is_cut_by_recovery_and_nothing_acknowledged_is_lost() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    // One node in power-loss mode with the longest window: appends wait up to 1 s unsynced.
    let extra = ["--failpoints", "--unsynced-window-ms", "1000"];
    let mut cluster = start_cluster(dir.path(), 1, &extra);
    let addresses = cluster.addresses.clone();
    let mut client = ClusterClient::new(addresses.clone(), Duration::from_secs(3));
    let mut acked = BTreeMap::new();
    for index in 0..3 {
        let body = format!("acked {index}");
        acked.insert(append_acked(&mut client, &body), body.into_bytes());
    }
    // Appends that wait in the window when the power goes: never acknowledged.
    let waiting: Vec<_> = (0..3)
        .map(|index| {
            let addresses = addresses.clone();
            std::thread::spawn(move || {
                let mut client = ClusterClient::new(addresses, Duration::from_secs(3));
                client.call(1, append(&format!("in the window {index}")))
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    let mut control = ClusterClient::new(addresses.clone(), Duration::from_secs(2));
    let mut cuts = control.power_cuts(&[(1, Some(7))]);
    let cut = cuts.remove(0).expect("the node answers the cut");
    let torn = cut.torn.expect("an unsynced append was torn");
    assert!(cut.ops_lost >= 1, "{cut:?}");
    let last_acked = *acked.keys().last().expect("acknowledged appends");
    assert!(
        torn > last_acked,
        "torn {torn}, last acknowledged {last_acked}"
    );
    cluster.nodes[0].kill();
    for thread in waiting {
        let answer = thread.join().expect("a client thread");
        assert!(
            !matches!(answer, Ok(Reply::Appended { .. })),
            "a write in the window was acknowledged: {answer:?}"
        );
    }
    cluster.nodes[0].restart().expect("restart");
    felix_node::nemesis::wait_until_answering(&addresses, Duration::from_secs(10))
        .expect("the node restarts on its torn store");
    let log = std::fs::read_to_string(dir.path().join("node-1.log")).expect("the node's log");
    assert!(log.contains("cut a torn tail"), "{log}");
    let mut client = ClusterClient::new(addresses, Duration::from_secs(3));
    let after = append_acked(&mut client, "after the cut");
    let read = read_all(&mut client);
    for (offset, body) in &acked {
        assert_eq!(read.get(offset), Some(body), "acknowledged offset {offset}");
    }
    assert!(!read.contains_key(&torn), "the torn record came back");
    assert_eq!(
        read.get(&after).map(Vec::as_slice),
        Some(&b"after the cut"[..])
    );
}
