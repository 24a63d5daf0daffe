//! The README's commands work as written: `cluster up` (three voters and a non-voting replica)
//! prints loopback addresses, `client
//! append` and `client read` go through the cluster's directory, `cluster status` sees a
//! leader, and `cluster down` stops every recorded process (also when the test fails: the guard
//! runs `cluster down`, then SIGKILLs whatever pid is left).

use super::support::exe;
use felix_node::cluster::ClusterState;
use std::path::{Path, PathBuf};
use std::process::Command;

fn felix(arguments: &[&str]) -> (i32, String) {
    let output = Command::new(exe())
        .args(arguments)
        .output()
        .expect("run felix-node");
    let mut text = String::from_utf8_lossy(&output.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&output.stderr));
    (output.status.code().unwrap_or(-1), text)
}

/// Stops the cluster in `dir` when dropped.
struct Down(PathBuf);

impl Drop for Down {
    fn drop(&mut self) {
        let dir = self.0.display().to_string();
        let _ = felix(&["cluster", "down", "--dir", &dir]);
        if let Ok(state) = ClusterState::read(&self.0) {
            for node in state.nodes {
                if felix_node::process::is_node_process(node.pid, &node.dir) {
                    felix_node::process::signal(node.pid, "KILL");
                }
            }
        }
    }
}

fn running(dir: &Path) -> usize {
    ClusterState::read(dir)
        .map(|state| {
            state
                .nodes
                .iter()
                .filter(|node| felix_node::process::is_node_process(node.pid, &node.dir))
                .count()
        })
        .unwrap_or(0)
}

#[test]
fn the_readme_commands_work() {
    let temp = tempfile::tempdir().expect("a temporary directory");
    let dir = temp.path().join("cluster");
    let guard = Down(dir.clone());
    let path = dir.display().to_string();
    let (code, out) = felix(&[
        "cluster",
        "up",
        "--nodes",
        "3",
        "--replicas",
        "1",
        "--dir",
        &path,
    ]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(out.matches("127.0.0.1:").count(), 8, "{out}");
    assert_eq!(running(&dir), 4);
    let (code, out) = felix(&["client", "append", "--cluster", &path, "hello"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("Appended at"), "{out}");
    let (code, out) = felix(&["client", "read", "--cluster", &path, "--from", "1"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("\"hello\""), "{out}");
    let (code, out) = felix(&["cluster", "status", "--dir", &path]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(out.matches("leader").count(), 1, "{out}");
    assert_eq!(out.matches("replica").count(), 1, "{out}");
    let (code, out) = felix(&["cluster", "up", "--nodes", "3", "--dir", &path]);
    assert_eq!(
        code, 2,
        "a second `up` on a running cluster is refused: {out}"
    );
    let (code, out) = felix(&["cluster", "down", "--dir", &path]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(running(&dir), 0);
    drop(guard);
}
