//! `felix nemesis`: real `felix serve` processes, real clients, real faults, one history judged
//! by the same audits as a simulated run (Jepsen's shape; TigerBeetle's Vörtex for the proxies).
//!
//! A run: start `--nodes` processes on 127.0.0.1 whose peer links each go through a proxy the
//! nemesis controls (`proxy.rs`); start the clients (`workload.rs`: felixd holders with a lease
//! service and readers, or with `--workload paros` checkpoint owners with a fence service,
//! folders and readers); carry out the fault schedule drawn from `--seed` (`schedule.rs`: SIGKILL
//! and restart of one node, two, or all of them at once, SIGSTOP/SIGCONT, full and one-way
//! partitions, drops, delays, a slow disk through the node's failpoint, silent lease moves) for
//! `--time`; then heal everything, stop the writers, wait for the nodes
//! to converge (every node answers with the same committed index), record the end, stop the
//! processes (SIGTERM), merge every node's event log with the clients' record into one trace in
//! the simulator's format (`history.rs`) and judge it with `felix_audits::audit`.
//!
//! Not deterministic: `--seed` fixes the fault schedule, not what the faults meet. A failing run
//! keeps its directory (trace, node logs, stores) and prints the command that re-runs its
//! schedule. `--twin T` runs every node and client with that twin's rule off.

pub mod command;
pub mod history;
pub mod proxy;
pub mod schedule;
pub mod start;
pub mod workload;

pub use command::{config_from_args, parse_duration, run_nemesis, NemesisArgs};

use crate::client::ClusterClient;
use crate::process::{free_ports, NodeProcess};
use crate::serve::event_log::now_micros;
use felix_audits::Report;
use felix_core::history::{Event, Phase};
use felix_core::record::NodeId;
use felix_core::rules::{Invariant, Rules, TwinName};
use felix_sim::trace::{SimEvent, TraceLine};
use history::Recorder;
use proxy::Proxy;
use schedule::Action;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use workload::{Lease, Shared, Stats};

/// The most nodes a nemesis run starts.
pub const NEMESIS_NODES_MAX: usize = 7;
/// The most non-voting replicas a nemesis run starts.
pub const NEMESIS_REPLICAS_MAX: usize = 3;
/// The longest run.
pub const TIME_MAX: Duration = Duration::from_secs(24 * 3600);
/// How long the healed cluster has to converge.
const CONVERGE_DEADLINE: Duration = Duration::from_secs(30);

/// A checked nemesis configuration.
#[derive(Clone, Debug)]
pub struct NemesisConfig {
    /// The binary that has the `serve` subcommand.
    pub exe: PathBuf,
    pub nodes: usize,
    /// Non-voting replicas, numbered after the voters.
    pub replicas: usize,
    pub time: Duration,
    pub seed: u64,
    pub twin: Option<TwinName>,
    pub dir: PathBuf,
    pub trace: PathBuf,
    pub holders: u32,
    pub readers: u32,
    /// Paros owners and folders instead of felixd holders.
    pub paros: bool,
}

/// What a run found.
pub struct NemesisOutcome {
    pub report: Report,
    pub trace: PathBuf,
    /// Microseconds into the run of the event at which the first violation was found.
    pub first_violation_micros: Option<u64>,
    /// For each invariant broken, microseconds into the run of its first violation's event.
    pub first_micros: BTreeMap<Invariant, u64>,
    pub converged: bool,
    /// Nodes that exited on their own (a refused store, a crash), with the exit code.
    pub unexpected_exits: Vec<(NodeId, i32)>,
    pub lines: usize,
    pub summary: Vec<String>,
}

impl NemesisOutcome {
    pub fn passed(&self) -> bool {
        self.report.ok() && self.unexpected_exits.is_empty()
    }
}

/// The running cluster under the nemesis's hands.
struct Cluster {
    nodes: BTreeMap<NodeId, NodeProcess>,
    proxies: Vec<Proxy>,
    recorder: Recorder,
    unexpected_exits: Vec<(NodeId, i32)>,
    /// The nemesis's own connections to the nodes (failpoints).
    control: ClusterClient,
    /// The paros fence service, when the workload is paros (lease moves move the fence).
    paros: Option<Arc<Mutex<workload::Paros>>>,
}

impl Cluster {
    fn links_of(&self, node: NodeId) -> impl Iterator<Item = &Proxy> {
        self.proxies
            .iter()
            .filter(move |proxy| proxy.from == node || proxy.to == node)
    }

    fn note(&self, description: String) {
        self.recorder.sim(SimEvent::NetworkFault { description });
    }

    /// Notices nodes that exited on their own.
    fn reap(&mut self) {
        for (id, node) in self.nodes.iter_mut() {
            if let Some(code) = node.exited() {
                self.unexpected_exits.push((*id, code));
                self.recorder.history(Event::Crashed { node: *id });
                self.recorder.sim(SimEvent::NetworkFault {
                    description: format!("n{id} exited on its own with code {code}"),
                });
            }
        }
    }

    fn apply(&mut self, action: &Action, lease: &Mutex<Lease>, holders: u32) {
        match action {
            Action::Kill(ids) => {
                let up: Vec<NodeId> = ids
                    .iter()
                    .copied()
                    .filter(|id| self.nodes.get(id).is_some_and(NodeProcess::is_up))
                    .collect();
                if up.is_empty() {
                    return;
                }
                self.note(Action::Kill(up.clone()).describe());
                for id in &up {
                    if let Some(node) = self.nodes.get_mut(id) {
                        node.kill();
                    }
                }
                for id in up {
                    self.recorder.history(Event::Crashed { node: id });
                }
            }
            Action::Restart(ids) => {
                for id in ids {
                    self.restart(*id);
                }
            }
            Action::Pause(id) => {
                if let Some(node) = self.nodes.get_mut(id) {
                    if node.is_up() && !node.is_paused() {
                        node.pause();
                        self.note(action.describe());
                    }
                }
            }
            Action::Resume(id) => {
                if let Some(node) = self.nodes.get_mut(id) {
                    if node.is_paused() {
                        node.resume();
                        self.note(action.describe());
                    }
                }
            }
            Action::Isolate(id) => {
                for proxy in self.links_of(*id) {
                    proxy.faults.cut.store(true, Ordering::SeqCst);
                }
                self.note(action.describe());
            }
            Action::CutOneWay { from, to } => {
                for proxy in &self.proxies {
                    if proxy.from == *from && proxy.to == *to {
                        proxy.faults.cut.store(true, Ordering::SeqCst);
                    }
                }
                self.note(action.describe());
            }
            Action::Lossy {
                node,
                drop_per_million,
            } => {
                for proxy in self.links_of(*node) {
                    proxy
                        .faults
                        .drop_per_million
                        .store(*drop_per_million, Ordering::SeqCst);
                }
                self.note(action.describe());
            }
            Action::Slow { node, delay_millis } => {
                for proxy in self.links_of(*node) {
                    proxy
                        .faults
                        .delay_millis
                        .store(*delay_millis, Ordering::SeqCst);
                }
                self.note(action.describe());
            }
            Action::HealLinks(id) => {
                for proxy in self.links_of(*id) {
                    proxy.faults.heal();
                }
                self.note(action.describe());
            }
            Action::HealLink { from, to } => {
                for proxy in &self.proxies {
                    if proxy.from == *from && proxy.to == *to {
                        proxy.faults.heal();
                    }
                }
                self.note(action.describe());
            }
            Action::SlowDisk {
                node,
                sync_delay_millis,
            } => self.failpoint(*node, *sync_delay_millis, action),
            Action::HealDisk(node) => self.failpoint(*node, 0, action),
            Action::MoveLease if self.paros.is_some() => {
                let Some(paros) = &self.paros else { return };
                let mut paros = match paros.lock() {
                    Ok(paros) => paros,
                    Err(poisoned) => poisoned.into_inner(),
                };
                let from = paros.owner;
                let to = from.map_or(0, |from| (from + 1) % holders.max(1));
                paros.token_last += 1;
                paros.owner = Some(to);
                self.recorder.sim(SimEvent::LeaseMoved {
                    from,
                    to,
                    epoch: paros.token_last,
                    told: false,
                });
            }
            Action::MoveLease => {
                let mut lease = match lease.lock() {
                    Ok(lease) => lease,
                    Err(poisoned) => poisoned.into_inner(),
                };
                let from = lease.holder;
                let to = from.map_or(0, |from| (from + 1) % holders.max(1));
                lease.epoch += 1;
                lease.holder = Some(to);
                self.recorder.sim(SimEvent::LeaseMoved {
                    from,
                    to,
                    epoch: lease.epoch,
                    told: false,
                });
            }
        }
    }

    /// Sets a node's slow-disk failpoint (nothing if it is down or does not answer: a
    /// restarted node starts with a healthy disk).
    fn failpoint(&mut self, node: NodeId, sync_delay_millis: u32, action: &Action) {
        let up = self
            .nodes
            .get(&node)
            .is_some_and(|process| process.is_up() && !process.is_paused());
        if up && self.control.failpoint(node, sync_delay_millis).is_ok() {
            self.note(action.describe());
        }
    }

    fn restart(&mut self, id: NodeId) {
        let Some(node) = self.nodes.get_mut(&id) else {
            return;
        };
        if node.is_up() {
            return;
        }
        self.recorder.history(Event::Restarted { node: id });
        self.recorder.sim(SimEvent::NetworkFault {
            description: format!("restart n{id}"),
        });
        if let Err(error) = node.restart() {
            self.recorder.sim(SimEvent::NetworkFault {
                description: format!("n{id} could not be restarted: {error}"),
            });
        }
    }

    /// Every fault off: links healed, paused nodes resumed, killed nodes restarted.
    fn heal(&mut self) {
        for proxy in &self.proxies {
            proxy.faults.heal();
        }
        let ids: Vec<NodeId> = self.nodes.keys().copied().collect();
        for id in ids {
            if let Some(node) = self.nodes.get_mut(&id) {
                if node.is_paused() {
                    node.resume();
                }
            }
            self.restart(id);
            // A node that stayed up may still have a slow disk.
            let _ = self.control.failpoint(id, 0);
        }
        self.recorder.sim(SimEvent::Healed);
    }
}

/// Runs one nemesis run (the caller prints); an error is a setup failure (exit 2).
pub fn run(config: &NemesisConfig) -> Result<NemesisOutcome, String> {
    let ids = start::ids(config);
    let listens =
        free_ports(ids.len()).map_err(|error| format!("no free loopback port: {error}"))?;
    let listen: BTreeMap<NodeId, std::net::SocketAddr> =
        ids.iter().copied().zip(listens.iter().copied()).collect();
    let proxies_stop = Arc::new(AtomicBool::new(false));
    let mut proxies = Vec::new();
    for &from in &ids {
        for &to in &ids {
            if from != to {
                let seed = config.seed ^ (u64::from(from) << 32) ^ u64::from(to);
                let proxy = Proxy::start(from, to, listen[&to], seed, proxies_stop.clone())
                    .map_err(|error| format!("cannot start a proxy: {error}"))?;
                proxies.push(proxy);
            }
        }
    }
    let recorder = Recorder::default();
    let start_micros = now_micros();
    recorder.sim(SimEvent::Phase {
        name: "safety".to_string(),
    });
    recorder.history(Event::PhaseChanged {
        phase: Phase::Safety,
    });
    let power_loss = schedule::draw_power_loss(config.seed, ids.len());
    for description in start::describe_power_loss(&power_loss) {
        recorder.sim(SimEvent::NetworkFault { description });
    }
    let nodes = start::start_nodes(config, &listen, &proxies, &power_loss)?;
    let mut cluster = Cluster {
        nodes,
        proxies,
        recorder: recorder.clone(),
        unexpected_exits: Vec::new(),
        control: ClusterClient::new(listen.clone(), Duration::from_millis(300)),
        paros: None,
    };
    wait_until_answering(&listen, Duration::from_secs(10))?;
    let rules = config.twin.map_or(Rules::default(), Rules::twin);
    let lease = Arc::new(Mutex::new(Lease {
        epoch: 1,
        holder: Some(0),
    }));
    recorder.sim(SimEvent::LeaseMoved {
        from: None,
        to: 0,
        epoch: 1,
        told: true,
    });
    let shared = Shared {
        recorder: recorder.clone(),
        addresses: listen.clone(),
        rules,
        lease: lease.clone(),
        paros: Arc::new(Mutex::new(workload::Paros {
            token_last: 1,
            fence_committed: 0,
            owner: Some(0),
            cursors: BTreeMap::new(),
        })),
        stats: Arc::new(Stats::default()),
        quiesce: Arc::new(AtomicBool::new(false)),
        stop: Arc::new(AtomicBool::new(false)),
    };
    if config.paros {
        cluster.paros = Some(shared.paros.clone());
    }
    let mut threads = Vec::new();
    for holder in 0..config.holders {
        let shared = shared.clone();
        let seed = config.seed.wrapping_add(u64::from(holder) + 1);
        let paros = config.paros;
        threads.push(std::thread::spawn(move || {
            if paros {
                workload::run_owner(shared, holder, seed)
            } else {
                workload::run_holder(shared, holder, seed)
            }
        }));
    }
    if config.paros {
        // Two folders: one folds from the start, one joins later and restores from a checkpoint.
        for index in 0..2u32 {
            let shared = shared.clone();
            let client = config.holders + config.readers + index;
            let seed = config.seed.wrapping_add(u64::from(client) + 201);
            let join_after = Duration::from_millis(u64::from(index) * 3000);
            threads.push(std::thread::spawn(move || {
                workload::run_folder(shared, client, seed, join_after)
            }));
        }
    }
    for reader in 0..config.readers {
        let shared = shared.clone();
        let client = config.holders + reader;
        let seed = config.seed.wrapping_add(u64::from(client) + 101);
        threads.push(std::thread::spawn(move || {
            workload::run_reader(shared, client, seed)
        }));
    }
    // The faults.
    let schedule = schedule::draw(config.seed, ids.len(), config.time);
    let faults = schedule.len();
    let begun = Instant::now();
    for (at, action) in &schedule {
        let due = begun + *at;
        while Instant::now() < due {
            std::thread::sleep(
                due.saturating_duration_since(Instant::now())
                    .min(Duration::from_millis(50)),
            );
            cluster.reap();
        }
        cluster.apply(action, &lease, config.holders);
    }
    let end = begun + config.time;
    while Instant::now() < end {
        std::thread::sleep(
            end.saturating_duration_since(Instant::now())
                .min(Duration::from_millis(50)),
        );
        cluster.reap();
    }
    // Heal, stop the writers, wait for convergence.
    cluster.heal();
    recorder.sim(SimEvent::Phase {
        name: "liveness".to_string(),
    });
    recorder.history(Event::PhaseChanged {
        phase: Phase::Liveness,
    });
    shared.quiesce.store(true, Ordering::SeqCst);
    recorder.sim(SimEvent::Phase {
        name: "quiesce".to_string(),
    });
    let converged = wait_for_convergence(&listen, CONVERGE_DEADLINE);
    cluster.reap();
    recorder.history(Event::PhaseChanged { phase: Phase::End });
    shared.stop.store(true, Ordering::SeqCst);
    for thread in threads {
        let _ = thread.join();
    }
    recorder.sim(SimEvent::Finished {
        reason: if converged {
            "converged".to_string()
        } else {
            "convergence deadline".to_string()
        },
    });
    for node in cluster.nodes.values_mut() {
        node.stop(Duration::from_secs(5));
    }
    proxies_stop.store(true, Ordering::SeqCst);
    // One history.
    let mut sources = vec![recorder.take()];
    let mut torn = 0;
    for &id in &ids {
        let (lines, skipped) =
            history::read_node_log(&config.dir.join(format!("node-{id}")).join("events.jsonl"))?;
        torn += skipped;
        sources.push(lines);
    }
    let merged = history::merge(sources);
    let knobs = serde_json::json!({
        "nodes": config.nodes,
        "replicas": config.replicas,
        "unsynced_window_millis": power_loss,
        "time_micros": config.time.as_micros() as u64,
        "holders": config.holders,
        "readers": config.readers,
        "workload": if config.paros { "paros" } else { "felixd" },
        "faults": faults,
        "real_processes": true,
    });
    let twin_name = config.twin.map(|twin| twin.name().to_string());
    let lines = history::trace_lines(&merged, start_micros, config.seed, twin_name, knobs);
    let (report, history_events) = audit_trace(&lines);
    let written = [lines.as_slice(), &verdict(&lines, &report)].concat();
    history::write_trace(&config.trace, &written)?;
    let first_violation_micros = report
        .first()
        .and_then(|violation| lines.get(violation.step))
        .map(|line| line.time);
    let mut first_micros = BTreeMap::new();
    for violation in &report.violations {
        if let Some(line) = lines.get(violation.step) {
            let first = first_micros.entry(violation.invariant).or_insert(line.time);
            *first = (*first).min(line.time);
        }
    }
    let stats = &shared.stats;
    let coverage: Vec<String> = report
        .coverage
        .named()
        .iter()
        .map(|(name, count)| format!("{name} {count}"))
        .collect();
    let summary = vec![
        format!(
            "nemesis: {faults} fault actions; {} requests, {} acknowledged writes and trims, {} records served to readers, {} refusals that route, {} unknown outcomes",
            stats.requests.load(Ordering::Relaxed),
            stats.acked.load(Ordering::Relaxed),
            stats.reads_served.load(Ordering::Relaxed),
            stats.refused.load(Ordering::Relaxed),
            stats.unknown.load(Ordering::Relaxed),
        ),
        format!(
            "nemesis: {} history events ({} trace lines, {torn} torn event-log lines skipped); converged after heal: {}",
            history_events,
            lines.len(),
            if converged { "yes" } else { "NO" }
        ),
        format!("nemesis: coverage: {}", coverage.join(", ")),
    ];
    Ok(NemesisOutcome {
        report,
        trace: config.trace.clone(),
        first_violation_micros,
        first_micros,
        converged,
        unexpected_exits: cluster.unexpected_exits.clone(),
        lines: lines.len(),
        summary,
    })
}

/// Waits until every node answers a status request.
pub fn wait_until_answering(
    addresses: &BTreeMap<NodeId, std::net::SocketAddr>,
    deadline: Duration,
) -> Result<(), String> {
    let mut client = ClusterClient::new(addresses.clone(), Duration::from_millis(500));
    let until = Instant::now() + deadline;
    for &id in addresses.keys() {
        while client.status(id).is_err() {
            if Instant::now() > until {
                return Err(format!("node {id} did not answer within {deadline:?}"));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    Ok(())
}

/// Polls every node until all answer with the same committed index, each has committed its whole
/// log, and one of them leads; the last round's answers are the `NodeState`s the Convergence
/// audit reads. A whole log committed everywhere is what rules out the moment right after an
/// election, when a new leader still stands at the commit index its followers told it and its
/// own first record (which commits everything before it) is not yet committed: equal indexes
/// then would be a converged cluster that has not yet re-committed what a restarted node forgot.
pub fn wait_for_convergence(
    addresses: &BTreeMap<NodeId, std::net::SocketAddr>,
    deadline: Duration,
) -> bool {
    let mut client = ClusterClient::new(addresses.clone(), Duration::from_millis(500));
    let until = Instant::now() + deadline;
    loop {
        let mut committed = Vec::new();
        let mut leader = false;
        let mut whole = true;
        for &id in addresses.keys() {
            if let Ok(status) = client.status(id) {
                let (_, leads, at) = status.summary();
                leader |= leads;
                committed.push(at);
                whole &= status.tail == at + 1;
            }
        }
        let all = committed.len() == addresses.len() && whole;
        if all && leader && committed.windows(2).all(|pair| pair[0] == pair[1]) {
            return true;
        }
        if Instant::now() > until {
            return false;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The directory a node of a nemesis run lives in.
pub fn node_dir(dir: &Path, id: NodeId) -> PathBuf {
    dir.join(format!("node-{id}"))
}

/// The audits over the trace's history; a violation names the trace line (what `felix trace
/// show` numbers), not the history index. With the number of history events.
fn audit_trace(lines: &[TraceLine]) -> (Report, usize) {
    let (events, at) = history::history_of(lines);
    let mut report = felix_audits::audit(&events);
    for violation in &mut report.violations {
        let step_of = |index: usize| at.get(index).copied().unwrap_or(index);
        violation.step = step_of(violation.step);
        // The events the message names, as trace lines too (no history index is left in it).
        violation.message = violation.render(&|index| step_of(index) as u64);
    }
    (report, events.len())
}

/// The trace's last lines, as a simulated run's: one `violation` line per finding of the audits
/// (their steps already name trace lines).
fn verdict(lines: &[TraceLine], report: &Report) -> Vec<TraceLine> {
    let findings: Vec<felix_sim::Finding> = report
        .violations
        .iter()
        .map(|violation| felix_sim::Finding {
            invariant: violation.invariant,
            step: Some(violation.step as u64),
            clients: violation.clients.clone(),
            detail: violation.message.clone(),
        })
        .collect();
    felix_sim::trace::violation_lines(lines, &findings)
}
