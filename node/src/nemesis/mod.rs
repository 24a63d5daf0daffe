//! `felix nemesis`: real `felix serve` processes, real clients, real faults, one history judged
//! by the same audits as a simulated run (Jepsen's shape; TigerBeetle's Vörtex for the proxies).
//!
//! A run: start `--nodes` processes on 127.0.0.1 whose peer links each go through a proxy the
//! nemesis controls (`proxy.rs`); start the clients (`workload.rs`: felixd holders with a lease
//! service and readers, each a process of its own, `client_process.rs`; or with `--workload
//! paros` checkpoint owners with a fence service, folders and readers, threads); carry out the
//! fault schedule drawn from `--seed` (`schedule.rs`, carried out by `faults.rs`: SIGKILL and
//! restart of one node, two, or all of them at once, a power cut first for nodes in power-loss
//! mode and now and then a torn write, SIGSTOP/SIGCONT of nodes and of client processes, full and
//! one-way partitions, drops, delays, a slow disk through the node's failpoint, silent lease
//! moves) for `--time`; then heal everything, stop the writers, wait for the nodes
//! to converge (every node answers with the same committed index), record the end, stop the
//! processes (SIGTERM), merge every node's event log with the clients' records into one trace in
//! the simulator's format (`history.rs`) and judge it with `felix_audits::audit`.
//!
//! Not deterministic: `--seed` fixes the fault schedule, not what the faults meet. A failing run
//! keeps its directory (trace, node logs, stores) and prints the command that re-runs its
//! schedule. `--twin T` runs every node and client with that twin's rule off.

pub mod client_process;
pub mod command;
pub mod faults;
pub mod history;
pub mod proxy;
pub mod schedule;
pub mod start;
pub mod workload;

pub use command::{config_from_args, parse_duration, run_nemesis, NemesisArgs};

use crate::client::ClusterClient;
use crate::process::reserve_ports;
use crate::serve::event_log::now_micros;
use faults::{Cluster, Cuts};
use felix_audits::Report;
use felix_core::history::{Event, Phase};
use felix_core::record::NodeId;
use felix_core::rules::{Invariant, Rules, TwinName};
use felix_sim::render::trace::{SimEvent, TraceEvent, TraceLine};
use history::Recorder;
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
    /// Client processes that did not end cleanly (a crash, a hang), in words.
    pub client_failures: Vec<String>,
    /// What the power cuts of kills in power-loss mode lost and tore.
    pub cuts: Cuts,
    /// Recoveries that cut a torn tail (from the node logs).
    pub tails_cut: usize,
    pub lines: usize,
    pub summary: Vec<String>,
}

impl NemesisOutcome {
    pub fn passed(&self) -> bool {
        self.report.ok() && self.unexpected_exits.is_empty() && self.client_failures.is_empty()
    }
}

/// Runs one nemesis run (the caller prints); an error is a setup failure (exit 2).
pub fn run(config: &NemesisConfig) -> Result<NemesisOutcome, String> {
    let ids = start::ids(config);
    let (held, listens) =
        reserve_ports(ids.len()).map_err(|error| format!("no free loopback port: {error}"))?;
    let listen: BTreeMap<NodeId, std::net::SocketAddr> =
        ids.iter().copied().zip(listens.iter().copied()).collect();
    let proxies_stop = Arc::new(AtomicBool::new(false));
    let proxies = start::start_proxies(config.seed, &ids, &listen, &proxies_stop)?;
    // The nodes' ports were held while the proxies bound theirs (to port 0), so no proxy took
    // one; released now for the nodes to listen on.
    drop(held);
    let recorder = Recorder::default();
    let start_micros = now_micros();
    recorder.sim(SimEvent::Phase {
        name: "safety".to_string(),
    });
    recorder.history(Event::PhaseChanged {
        phase: Phase::Safety,
    });
    let power_loss = schedule::draw_power_loss(config.seed, ids.len());
    let nodes = start::start_nodes(config, &listen, &proxies, &power_loss)?;
    let mut cluster = Cluster::new(config, nodes, proxies, &recorder, &listen, &power_loss);
    if let Err(id) = first_not_answering(&listen, Duration::from_secs(10)) {
        let log = config.dir.join(format!("node-{id}.log"));
        return Err(format!(
            "node {id} did not answer within 10s; its log ({}) ends:\n{}",
            log.display(),
            log_tail(&log, 8)
        ));
    }
    let shared = shared_state(config, &recorder, &listen, cluster.lease.clone());
    let threads = start::start_clients(config, &shared, &mut cluster)?;
    // The faults.
    let clients = cluster.clients.len() as u32;
    let schedule = schedule::draw_all(config.seed, ids.len(), clients, config.time);
    run_schedule(&mut cluster, &schedule, config.time);
    // Heal, stop the writers, wait for convergence.
    cluster.heal();
    recorder.sim(SimEvent::Phase {
        name: "liveness".to_string(),
    });
    recorder.history(Event::PhaseChanged {
        phase: Phase::Liveness,
    });
    shared.quiesce.store(true, Ordering::SeqCst);
    cluster.quiesce_clients();
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
    let (client_sources, client_torn, client_failures) = cluster.finish_clients(&shared.stats);
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
    // One history: the nemesis's record, each client process's and each node's event log.
    let mut sources = vec![recorder.take()];
    sources.extend(client_sources);
    let (merged, torn, tails_cut) = one_history(config, &ids, sources)?;
    let torn = torn + client_torn;
    let knobs = knobs(config, &power_loss, clients, schedule.len());
    let twin_name = config.twin.map(|twin| twin.name().to_string());
    let lines = history::trace_lines(&merged, start_micros, config.seed, twin_name, knobs);
    let (report, history_events) = audit_trace(&lines, &ids[..config.nodes]);
    let written = [lines.as_slice(), &verdict(&lines, &report)].concat();
    history::write_trace(&config.trace, &written)?;
    let counted = Counted {
        faults: schedule.len(),
        history_events,
        lines: &lines,
        torn,
        converged,
        cuts: cluster.cuts,
        tails_cut,
    };
    let summary = summarize(&counted, &shared.stats, &report);
    Ok(outcome(
        config,
        report,
        &lines,
        converged,
        &cluster,
        client_failures,
        tails_cut,
        summary,
    ))
}

/// What every client shares (the threads', and the processes' lease service).
fn shared_state(
    config: &NemesisConfig,
    recorder: &Recorder,
    listen: &BTreeMap<NodeId, std::net::SocketAddr>,
    lease: Arc<Mutex<Lease>>,
) -> Shared {
    Shared {
        recorder: recorder.clone(),
        addresses: listen.clone(),
        rules: config.twin.map_or(Rules::default(), Rules::twin),
        lease,
        paros: Arc::new(Mutex::new(workload::Paros {
            token_last: 1,
            fence_committed: 0,
            owner: Some(0),
            cursors: BTreeMap::new(),
        })),
        stats: Arc::new(Stats::default()),
        quiesce: Arc::new(AtomicBool::new(false)),
        stop: Arc::new(AtomicBool::new(false)),
    }
}

/// The sources merged with every node's event log: the merged lines, the torn event-log lines
/// skipped, and the recoveries that cut a torn tail (from the node logs).
fn one_history(
    config: &NemesisConfig,
    ids: &[NodeId],
    mut sources: Vec<Vec<history::Stamped>>,
) -> Result<(Vec<history::Stamped>, usize, usize), String> {
    let mut torn = 0;
    let mut tails_cut = 0;
    for &id in ids {
        let events = node_dir(&config.dir, id).join("events.jsonl");
        let (lines, skipped) = history::read_node_log(&events)?;
        torn += skipped;
        sources.push(lines);
        tails_cut += torn_tails_cut(&config.dir.join(format!("node-{id}.log")));
    }
    Ok((history::merge(sources), torn, tails_cut))
}

/// The run's knobs, on the trace's first line.
fn knobs(
    config: &NemesisConfig,
    power_loss: &[u32],
    clients: u32,
    faults: usize,
) -> serde_json::Value {
    serde_json::json!({
        "nodes": config.nodes,
        "replicas": config.replicas,
        "unsynced_window_millis": power_loss,
        "time_micros": config.time.as_micros() as u64,
        "holders": config.holders,
        "readers": config.readers,
        "workload": if config.paros { "paros" } else { "felixd" },
        "client_processes": clients,
        "faults": faults,
        "real_processes": true,
    })
}

/// Carries out the schedule, noticing nodes that exit on their own, until `time` is up.
fn run_schedule(cluster: &mut Cluster, schedule: &[(Duration, Action)], time: Duration) {
    let begun = Instant::now();
    let wait_until = |cluster: &mut Cluster, due: Instant| {
        while Instant::now() < due {
            let left = due.saturating_duration_since(Instant::now());
            std::thread::sleep(left.min(Duration::from_millis(50)));
            cluster.reap();
        }
    };
    for (at, action) in schedule {
        wait_until(cluster, begun + *at);
        cluster.apply(action);
    }
    wait_until(cluster, begun + time);
}

/// Recoveries that cut a torn tail, from a node's log (`felix serve` prints each).
fn torn_tails_cut(log: &Path) -> usize {
    std::fs::read_to_string(log)
        .map(|text| text.matches("cut a torn tail").count())
        .unwrap_or(0)
}

/// What the summary counts.
struct Counted<'a> {
    faults: usize,
    history_events: usize,
    lines: &'a [TraceLine],
    torn: usize,
    converged: bool,
    cuts: Cuts,
    tails_cut: usize,
}

/// The run in a few lines (printed by the command).
fn summarize(counted: &Counted, stats: &Stats, report: &Report) -> Vec<String> {
    let counts = stats.counts();
    let coverage: Vec<String> = report
        .coverage
        .named()
        .iter()
        .map(|(name, count)| format!("{name} {count}"))
        .collect();
    let frozen = counted
        .lines
        .iter()
        .filter(|line| matches!(line.event, TraceEvent::Sim(SimEvent::Paused { .. })))
        .count();
    let cuts = counted.cuts;
    vec![
        format!(
            "nemesis: {} fault actions; {} requests, {} acknowledged writes and trims, {} records served to readers, {} refusals that route, {} unknown outcomes",
            counted.faults, counts.requests, counts.acked, counts.reads_served, counts.refused, counts.unknown,
        ),
        format!(
            "nemesis: {frozen} client processes frozen (SIGSTOP); {} power cuts lost {} unsynced ops, {} of them tore the last unsynced write; recoveries cut {} torn tails",
            cuts.cuts, cuts.ops_lost, cuts.torn, counted.tails_cut
        ),
        format!(
            "nemesis: {} history events ({} trace lines, {} torn event-log lines skipped); converged after heal: {}",
            counted.history_events,
            counted.lines.len(),
            counted.torn,
            if counted.converged { "yes" } else { "NO" }
        ),
        format!("nemesis: coverage: {}", coverage.join(", ")),
    ]
}

/// The outcome of a judged run.
#[allow(clippy::too_many_arguments)]
fn outcome(
    config: &NemesisConfig,
    report: Report,
    lines: &[TraceLine],
    converged: bool,
    cluster: &Cluster,
    client_failures: Vec<String>,
    tails_cut: usize,
    summary: Vec<String>,
) -> NemesisOutcome {
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
    NemesisOutcome {
        report,
        trace: config.trace.clone(),
        first_violation_micros,
        first_micros,
        converged,
        unexpected_exits: cluster.unexpected_exits.clone(),
        client_failures,
        cuts: cluster.cuts,
        tails_cut,
        lines: lines.len(),
        summary,
    }
}

/// Waits until every node answers a status request.
pub fn wait_until_answering(
    addresses: &BTreeMap<NodeId, std::net::SocketAddr>,
    deadline: Duration,
) -> Result<(), String> {
    first_not_answering(addresses, deadline)
        .map_err(|id| format!("node {id} did not answer within {deadline:?}"))
}

/// Waits until every node answers a status request; `Err` names the first that did not by the
/// deadline.
fn first_not_answering(
    addresses: &BTreeMap<NodeId, std::net::SocketAddr>,
    deadline: Duration,
) -> Result<(), NodeId> {
    let mut client = ClusterClient::new(addresses.clone(), Duration::from_millis(500));
    let until = Instant::now() + deadline;
    for &id in addresses.keys() {
        while client.status(id).is_err() {
            if Instant::now() > until {
                return Err(id);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    Ok(())
}

/// The last `count` lines of a node's log, indented, for an error that says why it did not come
/// up (a port it could not listen on, a store it could not open).
pub fn log_tail(path: &Path, count: usize) -> String {
    match std::fs::read(path) {
        Ok(bytes) => {
            let text = String::from_utf8_lossy(&bytes);
            let lines: Vec<&str> = text.lines().collect();
            let tail = &lines[lines.len().saturating_sub(count)..];
            if tail.is_empty() {
                return "  (empty)".to_string();
            }
            tail.iter()
                .map(|line| format!("  {line}"))
                .collect::<Vec<_>>()
                .join("\n")
        }
        Err(error) => format!("  (cannot read it: {error})"),
    }
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

/// The audits over the trace's history, and CommittedDurable under the run's `voters` (a history
/// does not say which nodes vote); a violation names the trace line (what `felix trace show`
/// numbers), not the history index. With the number of history events.
fn audit_trace(lines: &[TraceLine], voters: &[NodeId]) -> (Report, usize) {
    let (events, at) = history::history_of(lines);
    let mut report = felix_audits::audit(&events);
    let committed_durable = felix_audits::committed_durable::check_among(&events, voters);
    if !committed_durable.is_empty() {
        report.violations.extend(committed_durable);
        report.violations.sort_by_key(|violation| violation.step);
    }
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
    felix_sim::render::trace::violation_lines(lines, &findings)
}
