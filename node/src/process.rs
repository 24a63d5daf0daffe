//! Child processes: `felix serve` nodes started by a cluster, a nemesis or a test.
//!
//! `NodeProcess` kills its child (SIGKILL) and reaps it when dropped, whatever happened before:
//! a test that fails, a nemesis that returns early, a panic that unwinds. Signals other than
//! SIGKILL (SIGTERM, SIGSTOP, SIGCONT) go through the system's `kill` command, so this crate
//! needs no `unsafe`.

use felix_core::record::NodeId;
use std::collections::BTreeSet;
use std::fs::OpenOptions;
use std::io;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// How to start one node.
#[derive(Clone, Debug)]
pub struct NodeSpec {
    pub id: NodeId,
    pub listen: SocketAddr,
    /// The addresses this node uses for its peers (the proxies', under a nemesis).
    pub peers: Vec<(NodeId, SocketAddr)>,
    pub replicas: Vec<NodeId>,
    pub dir: PathBuf,
    pub twin: Option<String>,
    pub extra: Vec<String>,
}

impl NodeSpec {
    /// The `serve` arguments.
    pub fn arguments(&self) -> Vec<String> {
        let peers: Vec<String> = self
            .peers
            .iter()
            .map(|(id, address)| format!("{id}={address}"))
            .collect();
        let mut arguments = vec![
            "serve".to_string(),
            "--id".to_string(),
            self.id.to_string(),
            "--peers".to_string(),
            peers.join(","),
            "--listen".to_string(),
            self.listen.to_string(),
            "--dir".to_string(),
            self.dir.display().to_string(),
        ];
        if !self.replicas.is_empty() {
            let replicas: Vec<String> = self.replicas.iter().map(|id| id.to_string()).collect();
            arguments.push("--replicas".to_string());
            arguments.push(replicas.join(","));
        }
        if let Some(twin) = &self.twin {
            arguments.push("--twin".to_string());
            arguments.push(twin.clone());
        }
        arguments.extend(self.extra.iter().cloned());
        arguments
    }
}

/// Starts `exe serve ...` with stdout and stderr appended to `log`. `own_group` puts it in a
/// process group of its own (a cluster that outlives the terminal's Ctrl-C).
pub fn spawn(exe: &Path, spec: &NodeSpec, log: &Path, own_group: bool) -> io::Result<Child> {
    let out = OpenOptions::new().create(true).append(true).open(log)?;
    let err = out.try_clone()?;
    let mut command = Command::new(exe);
    command
        .args(spec.arguments())
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err);
    if own_group {
        use std::os::unix::process::CommandExt;
        command.process_group(0);
    }
    command.spawn()
}

/// Sends `signal` (a name: TERM, STOP, CONT, KILL) to `pid`; true when `kill` succeeded.
pub fn signal(pid: u32, signal: &str) -> bool {
    Command::new("kill")
        .arg(format!("-{signal}"))
        .arg(pid.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map(|status| status.success())
        .unwrap_or(false)
}

/// Whether `pid` is a live `serve` process of the node in `dir` (a pid may be reused).
pub fn is_node_process(pid: u32, dir: &Path) -> bool {
    let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
        return false;
    };
    let words: Vec<&[u8]> = cmdline.split(|byte| *byte == 0).collect();
    let dir = dir.display().to_string();
    words.contains(&&b"serve"[..]) && words.contains(&dir.as_bytes()) && !is_zombie(pid)
}

fn is_zombie(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|stat| {
            stat.rsplit_once(')')
                .map(|(_, rest)| rest.trim_start().starts_with('Z'))
                .unwrap_or(false)
        })
        .unwrap_or(false)
}

/// A running node that is SIGKILLed and reaped when dropped.
pub struct NodeProcess {
    pub spec: NodeSpec,
    child: Option<Child>,
    exe: PathBuf,
    log: PathBuf,
    paused: bool,
}

impl NodeProcess {
    pub fn start(exe: &Path, spec: NodeSpec, log: &Path) -> io::Result<NodeProcess> {
        let child = spawn(exe, &spec, log, false)?;
        Ok(NodeProcess {
            spec,
            child: Some(guard(child)),
            exe: exe.to_path_buf(),
            log: log.to_path_buf(),
            paused: false,
        })
    }

    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    pub fn is_up(&self) -> bool {
        self.child.is_some()
    }

    pub fn is_paused(&self) -> bool {
        self.paused
    }

    /// SIGKILL now, and reap.
    pub fn kill(&mut self) {
        if let Some(mut child) = unguard(self.child.take()) {
            let _ = child.kill();
            let _ = child.wait();
        }
        self.paused = false;
    }

    /// SIGTERM, then wait up to `grace` for a clean exit; SIGKILL after that. Returns the exit
    /// status code when the node exited on its own.
    pub fn stop(&mut self, grace: Duration) -> Option<i32> {
        let mut child = unguard(self.child.take())?;
        if self.paused {
            signal(child.id(), "CONT");
            self.paused = false;
        }
        signal(child.id(), "TERM");
        let deadline = Instant::now() + grace;
        while Instant::now() < deadline {
            if let Ok(Some(status)) = child.try_wait() {
                return status.code();
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = child.kill();
        let _ = child.wait();
        None
    }

    /// SIGSTOP (a frozen process: its sockets stay open, nothing answers).
    pub fn pause(&mut self) {
        if let Some(pid) = self.pid() {
            if signal(pid, "STOP") {
                self.paused = true;
            }
        }
    }

    /// SIGCONT.
    pub fn resume(&mut self) {
        if let Some(pid) = self.pid() {
            signal(pid, "CONT");
        }
        self.paused = false;
    }

    /// Starts the node again on the same directory (after `kill`).
    pub fn restart(&mut self) -> io::Result<()> {
        if self.child.is_some() {
            return Ok(());
        }
        self.child = Some(guard(spawn(&self.exe, &self.spec, &self.log, false)?));
        Ok(())
    }

    /// Whether the child exited on its own (a crash, a refusal to start).
    pub fn exited(&mut self) -> Option<i32> {
        let child = self.child.as_mut()?;
        match child.try_wait() {
            Ok(Some(status)) => {
                unguard(self.child.take());
                Some(status.code().unwrap_or(-1))
            }
            _ => None,
        }
    }
}

impl Drop for NodeProcess {
    fn drop(&mut self) {
        if let Some(mut child) = unguard(self.child.take()) {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// The pids of the nodes running under a `NodeProcess` guard, for `kill_guarded`.
static GUARDED: Mutex<BTreeSet<u32>> = Mutex::new(BTreeSet::new());

fn guarded() -> MutexGuard<'static, BTreeSet<u32>> {
    GUARDED.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Notes a child a guard now holds.
fn guard(child: Child) -> Child {
    guarded().insert(child.id());
    child
}

/// Forgets a child its guard gave up (to kill, stop or reap it).
fn unguard(child: Option<Child>) -> Option<Child> {
    if let Some(child) = &child {
        guarded().remove(&child.id());
    }
    child
}

/// SIGKILLs every node running under a guard. For a process about to `exit`, which runs no
/// destructors: its nodes go with it, as the guards' drops would have taken them
/// (`output`'s closed pipe).
pub fn kill_guarded() {
    for pid in std::mem::take(&mut *guarded()) {
        signal(pid, "KILL");
    }
}

/// Starts `count` voters on free ports of 127.0.0.1, numbered from 1, each a guarded process
/// with its store in `dir/node-ID`, its log in `dir/node-ID.log` and the flags `extra`, and waits
/// up to 10 s until every one answers: the local cluster of `felix bench cluster` and the tests.
pub fn start_voters(
    exe: &Path,
    dir: &Path,
    count: usize,
    extra: &[String],
) -> Result<(Vec<NodeProcess>, crate::addresses::Addresses), String> {
    let ports = free_ports(count).map_err(|error| format!("no free loopback port: {error}"))?;
    let addresses: crate::addresses::Addresses = (1..).zip(ports).collect();
    let peers: Vec<(NodeId, SocketAddr)> = addresses.iter().map(|(id, a)| (*id, *a)).collect();
    let mut nodes = Vec::new();
    for (&id, &listen) in &addresses {
        let spec = NodeSpec {
            id,
            listen,
            peers: peers.clone(),
            replicas: Vec::new(),
            dir: dir.join(format!("node-{id}")),
            twin: None,
            extra: extra.to_vec(),
        };
        let log = dir.join(format!("node-{id}.log"));
        let node = NodeProcess::start(exe, spec, &log)
            .map_err(|error| format!("cannot start node {id}: {error}"))?;
        nodes.push(node);
    }
    crate::nemesis::wait_until_answering(&addresses, Duration::from_secs(10))?;
    Ok((nodes, addresses))
}

/// Picks `count` free ports on 127.0.0.1 (bound and released: another process could take one
/// in between, and the node then fails to listen with a clear message).
pub fn free_ports(count: usize) -> io::Result<Vec<SocketAddr>> {
    let (_held, addresses) = reserve_ports(count)?;
    Ok(addresses)
}

/// `count` free ports on 127.0.0.1, each held by a listener until the caller drops them: a port
/// bound to 0 while they are held (a proxy's) cannot be one of them.
pub fn reserve_ports(count: usize) -> io::Result<(Vec<std::net::TcpListener>, Vec<SocketAddr>)> {
    let listeners: Vec<std::net::TcpListener> = (0..count)
        .map(|_| std::net::TcpListener::bind("127.0.0.1:0"))
        .collect::<io::Result<_>>()?;
    let addresses = listeners
        .iter()
        .map(|listener| listener.local_addr())
        .collect::<io::Result<_>>()?;
    Ok((listeners, addresses))
}
