//! A reader that closes stdout early (`felix serve | head -1`, `felix bench cluster | head -1`)
//! ends the command quietly: exit 0 (`felix_node::output`), no broken-pipe panic, and no node
//! left running behind it.

use super::support::exe;
use felix_node::output::EXIT_PIPE_CLOSED;
use felix_node::process::{free_ports, signal, NodeSpec};
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Kills the child when dropped, so a failing test leaves no process behind.
struct Guard(Child);

impl Drop for Guard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `felix-node ARGS` with stdout and stderr piped, reads its first line, and closes the
/// pipe.
fn start_and_read_one_line(arguments: &[String]) -> (Guard, String) {
    let child = Command::new(exe())
        .args(arguments)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn felix-node");
    let mut guard = Guard(child);
    let stdout = guard.0.stdout.take().expect("piped stdout");
    let mut first = String::new();
    BufReader::new(stdout)
        .read_line(&mut first)
        .expect("read the first line");
    (guard, first)
}

/// Waits up to `limit` for the child to exit; its exit code and its stderr.
fn wait_for_exit(guard: &mut Guard, limit: Duration) -> (Option<i32>, String) {
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(status) = guard.0.try_wait().expect("try_wait") {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "felix-node still running after {limit:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut stderr = String::new();
    if let Some(mut pipe) = guard.0.stderr.take() {
        pipe.read_to_string(&mut stderr).expect("read stderr");
    }
    (status.code(), stderr)
}

/// `felix serve` whose reader took its first line and went: told to stop, it prints "node 1
/// stopped" into the closed pipe and exits 0, where `println!` would panic (exit 101).
#[test]
fn serve_into_a_closed_pipe_stops_with_exit_0() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let listen = free_ports(1).expect("a free loopback port")[0];
    assert!(listen.ip().is_loopback());
    let spec = NodeSpec {
        id: 1,
        listen,
        peers: vec![(1, listen)],
        replicas: Vec::new(),
        dir: dir.path().join("node-1"),
        twin: None,
        extra: Vec::new(),
    };
    let (mut guard, first) = start_and_read_one_line(&spec.arguments());
    assert!(
        first.starts_with("node 1 listening on 127.0.0.1:"),
        "{first}"
    );
    assert!(signal(guard.0.id(), "TERM"), "SIGTERM to the node");
    let (code, stderr) = wait_for_exit(&mut guard, Duration::from_secs(20));
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(code, Some(EXIT_PIPE_CLOSED), "{stderr}");
}

/// The processes whose command line names `dir`.
fn processes_in(dir: &Path) -> Vec<String> {
    let needle = dir.display().to_string();
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("read /proc").flatten() {
        let Ok(command_line) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let command_line = String::from_utf8_lossy(&command_line).replace('\0', " ");
        if command_line.contains(&needle) {
            found.push(format!(
                "{}: {command_line}",
                entry.file_name().to_string_lossy()
            ));
        }
    }
    found
}

/// `felix bench cluster` whose reader took its first line and went: it exits 0 at its next line,
/// and the three nodes it ran under guards are gone too (an `exit` runs no destructors).
#[test]
fn bench_cluster_into_a_closed_pipe_leaves_no_node_behind() {
    let parent = tempfile::tempdir().expect("a temporary directory");
    // The bench makes its directory itself.
    let dir = parent.path().join("bench");
    let arguments: Vec<String> = ["bench-cluster", "--seconds", "1", "--writers", "1"]
        .iter()
        .map(|argument| argument.to_string())
        .chain(["--dir".to_string(), dir.display().to_string()])
        .collect();
    let (mut guard, first) = start_and_read_one_line(&arguments);
    assert!(first.starts_with("felix bench cluster: 3 nodes"), "{first}");
    let (code, stderr) = wait_for_exit(&mut guard, Duration::from_secs(60));
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(code, Some(EXIT_PIPE_CLOSED), "{stderr}");
    // A node killed by SIGKILL is reaped by init shortly after its parent exits.
    let deadline = Instant::now() + Duration::from_secs(10);
    while !processes_in(&dir).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(processes_in(&dir), Vec::<String>::new());
}
