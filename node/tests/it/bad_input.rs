//! Bad input never panics a node: bad arguments and a damaged store are exit 2 with a clear
//! message; garbage on a socket closes that connection and nothing else.

use super::support::{exe, start_cluster};
use felix_core::api::{Reply, Request};
use felix_core::record::{Command, Entry, Headers};
use felix_core::storage::{LogStore, SegmentLayout, StorageOp};
use felix_node::client::ClusterClient;
use felix_store::FileStore;
use std::io::Write;
use std::net::TcpStream;
use std::process::Command as Process;
use std::time::Duration;

fn serve(arguments: &[&str]) -> (Option<i32>, String) {
    let output = Process::new(exe())
        .arg("serve")
        .args(arguments)
        .output()
        .expect("run felix-node serve");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// Arguments that make no sense are exit 2 with a message, never a panic.
#[test]
fn bad_arguments_are_exit_2() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().display().to_string();
    let cases: [&[&str]; 5] = [
        &[
            "--id",
            "1",
            "--peers",
            "nonsense",
            "--listen",
            "127.0.0.1:0",
            "--dir",
            &path,
        ],
        &[
            "--id",
            "1",
            "--peers",
            "1=127.0.0.1:1",
            "--listen",
            "nowhere",
            "--dir",
            &path,
        ],
        &[
            "--id",
            "1",
            "--peers",
            "1=127.0.0.1:1",
            "--listen",
            "127.0.0.1:0",
            "--dir",
            &path,
            "--twin",
            "NoSuchTwin",
        ],
        &[
            "--id",
            "1",
            "--peers",
            "1=127.0.0.1:1",
            "--listen",
            "127.0.0.1:0",
            "--dir",
            &path,
            "--tick-ms",
            "0",
        ],
        &[
            "--id",
            "1",
            "--peers",
            "1=127.0.0.1:1",
            "--listen",
            "127.0.0.1:0",
            "--dir",
            &path,
            "--unsynced-window-ms",
            "5000",
        ],
    ];
    for arguments in cases {
        let (code, stderr) = serve(arguments);
        assert_eq!(code, Some(2), "{arguments:?}: {stderr}");
        assert!(stderr.contains("felix: error:"), "{arguments:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{arguments:?}: {stderr}");
    }
    // The nemesis's own bounds: too many replicas is exit 2 before anything starts.
    let output = Process::new(exe())
        .args(["nemesis", "--replicas", "9", "--time", "1s"])
        .output()
        .expect("run felix-node nemesis");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--replicas must be at most 3"), "{stderr}");
}

/// A store damaged in the middle (not a torn tail) stops the node before it listens: exit 2
/// with the store's own Corrupt message naming the file.
#[test]
fn a_damaged_store_refuses_to_start() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let store_dir = dir.path().join("node").join("store");
    let layout = SegmentLayout {
        records_per_segment: 2,
    };
    let mut store = FileStore::open(&store_dir, layout).expect("open a store");
    store.recover().expect("recover an empty store");
    let entries: Vec<Entry> = (1..=6)
        .map(|offset| Entry {
            offset,
            term: 1,
            command: Command::Write {
                body: format!("record {offset}").into_bytes(),
                headers: Headers::default(),
            },
        })
        .collect();
    store.apply(&StorageOp::Append(entries)).expect("append");
    store.sync().expect("sync");
    drop(store);
    // Flip a byte inside the middle segment's first record.
    let middle = store_dir.join(felix_store::segment::file_name(3));
    let mut bytes = std::fs::read(&middle).expect("the middle segment exists");
    let at = bytes.len() / 2;
    bytes[at] ^= 0xff;
    std::fs::write(&middle, bytes).expect("damage the segment");
    let node_dir = dir.path().join("node").display().to_string();
    let (code, stderr) = serve(&[
        "--id",
        "1",
        "--peers",
        "1=127.0.0.1:1",
        "--listen",
        "127.0.0.1:0",
        "--dir",
        &node_dir,
        "--segment-records",
        "2",
    ]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("refuses to start"), "{stderr}");
    assert!(stderr.contains("corrupt"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// Garbage, an oversized length and a wrong version on client connections close those
/// connections; the node keeps serving.
#[test]
fn garbage_on_a_socket_does_not_stop_the_node() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let cluster = start_cluster(dir.path(), 1, &[]);
    let address = cluster.addresses[&1];
    let garbage: [&[u8]; 4] = [
        b"GET / HTTP/1.1\r\n\r\n",
        &[0xff, 0xff, 0xff, 0xff, 1, 2, 3],
        &[0, 0, 0, 3, 99, b'{', b'}'],
        &[0, 0, 0, 5, 1, b'[', b'[', b'[', b'['],
    ];
    for bytes in garbage {
        let mut stream = TcpStream::connect(address).expect("connect");
        let _ = stream.write_all(bytes);
        let _ = stream.flush();
    }
    std::thread::sleep(Duration::from_millis(200));
    let mut client = ClusterClient::new(cluster.addresses.clone(), Duration::from_secs(5));
    let mut landed = false;
    for _ in 0..50 {
        let reply = client.call(
            1,
            Request::Append {
                expected_tail: None,
                fence: None,
                body: b"still here".to_vec(),
                headers: Headers::default(),
            },
        );
        if let Ok(Reply::Appended { .. }) = reply {
            landed = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(landed, "the node stopped serving after garbage");
    let log = std::fs::read_to_string(dir.path().join("node-1.log")).unwrap_or_default();
    assert!(!log.contains("panicked"), "{log}");
}
