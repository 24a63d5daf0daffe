//! Workload clients as processes of their own, so that the nemesis can freeze one with SIGSTOP
//! and thaw it with SIGCONT, as it does a node: a holder frozen in the middle of its work comes
//! back still believing in a lease that may have moved, which is what the fencing rules and the
//! audits are for.
//!
//! `felix client workload --role holder|reader --client N --seed S --cluster ADDRS [--twin T]`
//! (hidden) runs one of `workload.rs`'s clients, the same code the threads run, against the
//! cluster. Its record streams to the nemesis on standard output, one JSON line per line of the
//! record (`FromClient::Line`, timestamped in the client when it happened) and its counters at
//! the end (`FromClient::Counts`). The nemesis tells it the lease service's state, the quiesce and
//! the stop on standard input (`ToClient`); an end of input is a stop, so a client never outlives
//! a nemesis that died. The nemesis merges each client's record as one more source, like a
//! node's event log (`history::merge`).
//!
//! `ClientProcess` is the nemesis's handle: it kills and reaps the child when dropped, whatever
//! happened before.

use super::history::{Recorder, Stamped, RECORDED_MAX};
use super::workload::{self, Counts, Lease, Shared, Stats};
use crate::addresses::Addresses;
use crate::process::signal;
use clap::{Args, ValueEnum};
use felix_core::api::ClientId;
use felix_core::rules::{Layer, Rules, TwinName};
use serde::{Deserialize, Serialize};
use std::fs::OpenOptions;
use std::io::{self, BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Which client the process runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Role {
    /// A felixd lease holder (the lease service stays in the nemesis).
    Holder,
    /// A reader.
    Reader,
}

/// Arguments of the hidden `felix client workload`.
#[derive(Args, Debug, Clone)]
pub struct WorkloadArgs {
    #[arg(long, value_enum)]
    pub role: Role,
    /// The client's id in the history.
    #[arg(long)]
    pub client: ClientId,
    /// Seed of the client's own choices.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Run the client with this twin's rule off.
    #[arg(long)]
    pub twin: Option<String>,
}

/// What the nemesis tells a client process (one JSON line each).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ToClient {
    /// The lease service's state now.
    Lease {
        epoch: u64,
        holder: Option<ClientId>,
    },
    /// Writers stop writing.
    Quiesce,
    /// Stop and report.
    Stop,
}

/// What a client process tells the nemesis (one JSON line each).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum FromClient {
    Line(Stamped),
    Counts(Counts),
}

/// The client process's side: runs the client until told to stop (or standard input ends).
pub fn run_workload(args: &WorkloadArgs, addresses: Addresses) -> Result<u8, String> {
    let rules = match &args.twin {
        None => Rules::default(),
        Some(name) => Rules::twin(
            TwinName::parse_in(Layer::Sim, name)
                .ok_or_else(|| format!("--twin: no twin is named {name:?}"))?,
        ),
    };
    let sink = |message: &FromClient| {
        let mut out = io::stdout().lock();
        // A closed standard output is a nemesis gone: its end of input stops this client.
        if let Ok(line) = serde_json::to_string(message) {
            let _ = writeln!(out, "{line}").and_then(|()| out.flush());
        }
    };
    let shared = Shared {
        recorder: Recorder::streaming(move |line| sink(&FromClient::Line(line.clone()))),
        addresses,
        rules,
        lease: Arc::new(Mutex::new(Lease::default())),
        paros: Arc::default(),
        stats: Arc::new(Stats::default()),
        quiesce: Arc::new(AtomicBool::new(false)),
        stop: Arc::new(AtomicBool::new(false)),
    };
    listen(&shared);
    let seed = args.seed;
    match args.role {
        Role::Holder => workload::run_holder(shared.clone(), args.client, seed),
        Role::Reader => workload::run_reader(shared.clone(), args.client, seed),
    }
    sink(&FromClient::Counts(shared.stats.counts()));
    Ok(0)
}

/// Takes the nemesis's messages off standard input, in a thread of their own.
fn listen(shared: &Shared) {
    let lease = shared.lease.clone();
    let quiesce = shared.quiesce.clone();
    let stop = shared.stop.clone();
    std::thread::spawn(move || {
        for line in io::stdin().lock().lines() {
            let Ok(line) = line else { break };
            match crate::frame::parse_json::<ToClient>(&line) {
                Ok(ToClient::Lease { epoch, holder }) => {
                    let mut lease = match lease.lock() {
                        Ok(lease) => lease,
                        Err(poisoned) => poisoned.into_inner(),
                    };
                    lease.epoch = epoch;
                    lease.holder = holder;
                }
                Ok(ToClient::Quiesce) => quiesce.store(true, Ordering::SeqCst),
                Ok(ToClient::Stop) => break,
                Err(error) => eprintln!("client: ignored a line of input ({error}): {line}"),
            }
        }
        quiesce.store(true, Ordering::SeqCst);
        stop.store(true, Ordering::SeqCst);
    });
}

/// What a client process left when it ended.
#[derive(Debug, Default)]
pub struct Finished {
    pub lines: Vec<Stamped>,
    pub counts: Option<Counts>,
    /// Lines that did not parse (a client killed in the middle of a write).
    pub skipped: usize,
    /// What went wrong, if the client did not end on its own with exit 0 and its counts.
    pub failure: Option<String>,
}

/// How to start one client process.
#[derive(Clone, Debug)]
pub struct ClientSpec {
    pub role: Role,
    pub client: ClientId,
    pub seed: u64,
    pub twin: Option<String>,
    pub addresses: Addresses,
}

impl ClientSpec {
    /// The `client workload` arguments.
    pub fn arguments(&self) -> Vec<String> {
        let cluster: Vec<String> = self
            .addresses
            .iter()
            .map(|(id, address)| format!("{id}={address}"))
            .collect();
        let role = match self.role {
            Role::Holder => "holder",
            Role::Reader => "reader",
        };
        let mut arguments: Vec<String> = [
            "client",
            "workload",
            "--role",
            role,
            "--client",
            &self.client.to_string(),
            "--seed",
            &self.seed.to_string(),
            "--cluster",
            &cluster.join(","),
        ]
        .iter()
        .map(|word| word.to_string())
        .collect();
        if let Some(twin) = &self.twin {
            arguments.push("--twin".to_string());
            arguments.push(twin.clone());
        }
        arguments
    }
}

/// A running client process, SIGKILLed and reaped when dropped.
pub struct ClientProcess {
    pub spec: ClientSpec,
    child: Option<Child>,
    stdin: Option<ChildStdin>,
    reader: Option<JoinHandle<Finished>>,
    paused: bool,
}

impl ClientProcess {
    /// Starts `exe client workload ...`, its standard error appended to `log`.
    pub fn start(exe: &Path, spec: ClientSpec, log: &Path) -> io::Result<ClientProcess> {
        let err = OpenOptions::new().create(true).append(true).open(log)?;
        let mut child = Command::new(exe)
            .args(spec.arguments())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(err)
            .spawn()?;
        let stdin = child.stdin.take();
        let stdout = child.stdout.take();
        let reader = stdout.map(|stdout| std::thread::spawn(move || receive(stdout)));
        Ok(ClientProcess {
            spec,
            child: Some(child),
            stdin,
            reader,
            paused: false,
        })
    }

    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    pub fn client(&self) -> ClientId {
        self.spec.client
    }

    pub fn is_paused(&self) -> bool {
        self.paused
    }

    /// Sends one message (lost if the client is gone: its record says what it did).
    pub fn tell(&mut self, message: &ToClient) {
        if let (Some(stdin), Ok(line)) = (self.stdin.as_mut(), serde_json::to_string(message)) {
            if writeln!(stdin, "{line}")
                .and_then(|()| stdin.flush())
                .is_err()
            {
                self.stdin = None;
            }
        }
    }

    /// SIGSTOP: the client freezes wherever it is, a request in flight or not.
    pub fn pause(&mut self) -> bool {
        if let Some(child) = &self.child {
            if !self.paused && signal(child.id(), "STOP") {
                self.paused = true;
                return true;
            }
        }
        false
    }

    /// SIGCONT.
    pub fn resume(&mut self) -> bool {
        let was = self.paused;
        if let Some(child) = &self.child {
            if self.paused {
                signal(child.id(), "CONT");
            }
        }
        self.paused = false;
        was
    }

    /// Thaws the client, tells it to stop and waits up to `grace` for it to end (SIGKILL after
    /// that); its record, counts and whether it ended cleanly.
    pub fn finish(&mut self, grace: Duration) -> Finished {
        self.resume();
        self.tell(&ToClient::Stop);
        self.stdin = None;
        let mut failure = None;
        if let Some(mut child) = self.child.take() {
            let deadline = Instant::now() + grace;
            let status = loop {
                match child.try_wait() {
                    Ok(Some(status)) => break Some(status),
                    Ok(None) if Instant::now() < deadline => {
                        std::thread::sleep(Duration::from_millis(20));
                    }
                    _ => {
                        let _ = child.kill();
                        let _ = child.wait();
                        break None;
                    }
                };
            };
            failure = match status {
                None => Some(format!("did not stop within {grace:?} (killed)")),
                Some(status) if !status.success() => Some(format!("exited with {status}")),
                Some(_) => None,
            };
        }
        let mut finished = self
            .reader
            .take()
            .and_then(|reader| reader.join().ok())
            .unwrap_or_default();
        if failure.is_none() && finished.counts.is_none() {
            failure = Some("ended without reporting its counts".to_string());
        }
        finished.failure = failure;
        finished
    }
}

impl Drop for ClientProcess {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Reads a client's standard output to its end.
pub fn receive(stdout: impl io::Read) -> Finished {
    let mut finished = Finished::default();
    for line in BufReader::new(stdout).lines() {
        let Ok(line) = line else { break };
        match crate::frame::parse_json::<FromClient>(&line) {
            Ok(FromClient::Line(stamped)) => {
                if finished.lines.len() < RECORDED_MAX {
                    finished.lines.push(stamped);
                }
            }
            Ok(FromClient::Counts(counts)) => finished.counts = Some(counts),
            Err(_) => finished.skipped += 1,
        }
    }
    finished
}
