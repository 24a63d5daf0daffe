//! A simulator run as a `Diagram`: one row per trace line, words from the simulator's renderer.
//!
//! Requests and replies are arrows between a client and a node; the lease service grants leases
//! from its own lifeline; crashes, pauses, partitions and a lease moved without telling its holder
//! are fault marks; commits, floors and deletions are marks on the node. Of the messages between
//! brokers the run records `TrimmedTo`, drawn as a peer arrow, and the witness's `PromiseSent` and
//! `AckSent`, not drawn. `NodeState` samples are not drawn; with `Committed` they give each node's
//! state (term, role, floor, tag, commit, records). A client's state is what it believes (epoch,
//! tail, cursor, reply).

use super::{Diagram, Finding, Header, Lane, LaneKind, Mark, Row, Style, Violation, Window};
use felix_core::api::{ClientId, Reply, Request};
use felix_core::history::Event;
// Drawn as nothing: samples and the PromiseDurable bookkeeping.
use felix_core::history::Event::{AckSent, DurableLog, DurablePromise, NodeState, PromiseSent};
use felix_core::{Headers, NodeId, Offset};
use felix_sim::render::describe;
use felix_sim::render::trace::{SimEvent, TraceEvent, TraceLine};
use felix_sim::RunReport;
use std::collections::{BTreeMap, BTreeSet};

/// Display rows shown before the violation at first (enough for a lease move, a fenced write,
/// a trim and a stale holder's refused read on a three-broker cluster).
const WINDOW_BEFORE: usize = 64;
/// Display rows shown after the violation at first.
const WINDOW_AFTER: usize = 6;
/// Retained records listed per node in its state.
const LOG_SHOWN_MAX: usize = 6;

/// The diagram of a run kept with `keep_trace` (`command` reproduces it). A run without trace
/// lines (one that panicked before recording) gives a diagram with its violations and no rows.
pub fn diagram(report: &RunReport, command: &str) -> Diagram {
    let lines: &[TraceLine] = report.trace_lines.as_deref().unwrap_or(&[]);
    let twin = report
        .twin
        .map(|twin| {
            let control = if report.control { " control" } else { "" };
            format!(" twin {twin}{control}")
        })
        .unwrap_or_default();
    let header = Header {
        title: format!("seed {}{twin}", report.seed),
        subtitle: vec![
            super::words::run_in_words(report),
            report.knobs.describe(),
            format!(
                "{} trace lines, {:.3} s simulated, trace hash {:016x}; {command}",
                report.steps,
                report.simulated_micros as f64 / 1e6,
                report.trace_hash
            ),
        ],
        first_node: 0,
        brokers: report.knobs.brokers,
        replicas: report.knobs.replicas,
    };
    let findings: Vec<Finding> = report
        .violations
        .iter()
        .map(|finding| Finding {
            step: finding.step,
            invariant: finding.invariant.to_string(),
            detail: finding.detail.clone(),
        })
        .collect();
    draw(lines, &header, &findings)
}

/// The diagram of trace lines: a simulated run's, or a trace file's (`felix trace show --html`).
pub fn draw(lines: &[TraceLine], header: &Header, findings: &[Finding]) -> Diagram {
    let clients: BTreeSet<ClientId> = lines.iter().filter_map(client_of).collect();
    let mut lanes = vec![Lane {
        name: "lease".to_string(),
        kind: LaneKind::Lease,
        note: "service".to_string(),
    }];
    let client_lane: BTreeMap<ClientId, usize> = clients
        .iter()
        .map(|client| {
            lanes.push(Lane {
                name: format!("c{client}"),
                kind: LaneKind::Client,
                note: role(lines, *client).to_string(),
            });
            (*client, lanes.len() - 1)
        })
        .collect();
    let node_base = lanes.len();
    let nodes = header.brokers + header.replicas;
    for index in 0..nodes {
        let replica = index >= header.brokers;
        lanes.push(Lane {
            name: describe::node(header.first_node + index),
            kind: if replica {
                LaneKind::Replica
            } else {
                LaneKind::Broker
            },
            note: if replica { "replica" } else { "broker" }.to_string(),
        });
    }
    let lane_count = lanes.len();
    let mut diagram = Diagram {
        title: header.title.clone(),
        subtitle: header.subtitle.clone(),
        lanes,
        rows: Vec::with_capacity(lines.len()),
        violations: Vec::new(),
        states: vec![Vec::new(); lane_count],
        window: Window {
            before: WINDOW_BEFORE,
            after: WINDOW_AFTER,
        },
        omitted: String::new(),
        why: Vec::new(),
        story: Vec::new(),
    };
    let lanes = Lanes {
        client: client_lane,
        node_base,
        first: header.first_node,
        nodes,
    };
    let mut world = Views::default();
    for line in lines {
        let row = diagram.rows.len();
        diagram.rows.push(Row {
            step: line.step,
            time: format!("{:.6}s", line.time as f64 / 1e6),
            text: describe::trace_event(&line.event),
            mark: mark(&lanes, &line.event),
        });
        for (lane, lines) in world.apply(&lanes, &line.event) {
            diagram.set_state(lane, row, lines);
        }
    }
    for finding in findings {
        let row = finding
            .step
            .and_then(|step| diagram.rows.iter().position(|row| row.step == step));
        if let Some(row) = row {
            diagram.violations.push(Violation {
                row,
                invariant: finding.invariant.clone(),
                detail: finding.detail.clone(),
            });
        }
    }
    super::why::mark_why(&mut diagram, lines, findings);
    diagram.clip();
    diagram
}

/// Lane indices of clients and nodes.
struct Lanes {
    client: BTreeMap<ClientId, usize>,
    node_base: usize,
    /// The first node's id (0 in the simulator, 1 on real nodes) and how many there are.
    first: NodeId,
    nodes: NodeId,
}

impl Lanes {
    const LEASE: usize = 0;

    fn client(&self, client: ClientId) -> usize {
        self.client[&client]
    }

    /// Whether the node has a lifeline.
    fn has(&self, node: NodeId) -> bool {
        (self.first..self.first + self.nodes).contains(&node)
    }

    /// A node's lane; a node id outside the header's nodes is a bug in the caller (a trace file
    /// is checked against its nodes before it is drawn), not in the input.
    fn node(&self, node: NodeId) -> usize {
        assert!(self.has(node), "node n{node} outside the run's knobs");
        self.node_base + (node - self.first) as usize
    }
}

/// The client a line is about, if any: a history event's, or the lease's new holder, or a
/// frozen or thawed client.
fn client_of(line: &TraceLine) -> Option<ClientId> {
    match &line.event {
        TraceEvent::History(event) => felix_sim::render::why::client_of(event),
        TraceEvent::Sim(event) => match event {
            SimEvent::LeaseMoved { to, .. } => Some(*to),
            SimEvent::Paused { client } | SimEvent::Resumed { client } => Some(*client),
            _ => None,
        },
    }
}

/// A client's role, from the first event that shows it; a client that only ever read is a reader.
fn role(lines: &[TraceLine], client: ClientId) -> &'static str {
    let mut only_reads = false;
    for line in lines {
        if let TraceEvent::History(event) = &line.event {
            match event {
                Event::LeaseGranted { client: c, .. } if *c == client => return "holder",
                Event::Folded { client: c, .. } if *c == client => return "folder",
                Event::CheckpointWritten { client: c, .. }
                | Event::OwnerStopped { client: c, .. }
                    if *c == client =>
                {
                    return "owner"
                }
                Event::Requested {
                    client: c,
                    request: Request::Fence { .. },
                    ..
                } if *c == client => return "owner",
                Event::Requested {
                    client: c, request, ..
                } if *c == client => match request {
                    Request::Read { .. } => only_reads = true,
                    _ => return "client",
                },
                _ => {}
            }
        }
    }
    if only_reads {
        "reader"
    } else {
        "client"
    }
}

/// Whether an answer refused what was asked.
fn refused(reply: &Reply) -> bool {
    !matches!(
        reply,
        Reply::Appended { .. } | Reply::TrimNoop { .. } | Reply::Records { .. }
    )
}

fn point(lane: usize, label: String, style: Style) -> Mark {
    Mark::Point { lane, label, style }
}

/// How one trace line is drawn.
fn mark(lanes: &Lanes, event: &TraceEvent) -> Mark {
    match event {
        TraceEvent::History(event) => history_mark(lanes, event),
        TraceEvent::Sim(event) => sim_mark(lanes, event),
    }
}

/// The mark of a restart whose store failed the node (corrupt, or read back unfaithfully), or of a
/// log whose terms go down.
fn store_fault(event: &Event) -> &'static str {
    match event {
        Event::StoreCorrupt { .. } => "store corrupt",
        Event::LogTermsDecreased { .. } => "log terms go down",
        _ => "unfaithful recovery",
    }
}

/// How one history event is drawn.
fn history_mark(lanes: &Lanes, event: &Event) -> Mark {
    match event {
        Event::Requested {
            client,
            node,
            request,
        } => Mark::Arrow {
            from: lanes.client(*client),
            to: lanes.node(*node),
            label: describe::request(request),
            style: Style::Request,
        },
        Event::Replied {
            client,
            node,
            reply,
            ..
        } => Mark::Arrow {
            from: lanes.node(*node),
            to: lanes.client(*client),
            label: describe::reply(reply),
            style: if refused(reply) {
                Style::Refusal
            } else {
                Style::Reply
            },
        },
        Event::LeaseGranted { client, epoch } => Mark::Arrow {
            from: Lanes::LEASE,
            to: lanes.client(*client),
            label: format!("lease epoch {epoch}"),
            style: Style::Lease,
        },
        Event::TrimmedToSent { node, to, point } => Mark::Arrow {
            from: lanes.node(*node),
            to: lanes.node(*to),
            label: format!("TrimmedTo {point}"),
            style: Style::Peer,
        },
        Event::Committed { node, entry } => {
            point(lanes.node(*node), describe::entry(entry), Style::Commit)
        }
        Event::FloorApplied { node, floor, .. } => {
            point(lanes.node(*node), format!("floor {floor}"), Style::Floor)
        }
        Event::SegmentsDeleted { node, below, .. } => {
            point(lanes.node(*node), format!("deleted <{below}"), Style::Floor)
        }
        Event::Jumped {
            node, point: at, ..
        } => point(lanes.node(*node), format!("jump {at}"), Style::Floor),
        Event::TruncateRefused { node, offset, .. } => point(
            lanes.node(*node),
            format!("trim {offset} refused"),
            Style::Refusal,
        ),
        Event::PromiseChanged { node, term, .. } => {
            point(lanes.node(*node), format!("term {term}"), Style::Note)
        }
        Event::BecameLeader { node, term } => {
            point(lanes.node(*node), format!("leader {term}"), Style::Note)
        }
        Event::Crashed { node } => point(lanes.node(*node), "crash".into(), Style::Fault),
        Event::Restarted { node } => point(lanes.node(*node), "restart".into(), Style::Note),
        Event::StoreCorrupt { node, .. }
        | Event::RecoveryUnfaithful { node, .. }
        | Event::LogTermsDecreased { node, .. } => {
            point(lanes.node(*node), store_fault(event).into(), Style::Fault)
        }
        NodeState { .. } | DurablePromise { .. } | PromiseSent { .. } => Mark::Hidden,
        DurableLog { .. } | AckSent { .. } => Mark::Hidden,
        Event::HolderRetired { client, .. } => {
            point(lanes.client(*client), "retires".into(), Style::Note)
        }
        Event::Gap { client, from, to } => point(
            lanes.client(*client),
            format!("gap {from}..{to}"),
            Style::Note,
        ),
        Event::Folded { client, offset, .. } => {
            point(lanes.client(*client), format!("fold {offset}"), Style::Note)
        }
        Event::CheckpointRestored { client, end, .. } => {
            point(lanes.client(*client), format!("restore {end}"), Style::Note)
        }
        Event::CheckpointCompared { client, end, .. } => {
            point(lanes.client(*client), format!("compare {end}"), Style::Note)
        }
        Event::CheckpointWritten { client, end, .. } => {
            point(lanes.client(*client), format!("ckpt {end}"), Style::Note)
        }
        Event::OwnerStopped { client, .. } => {
            point(lanes.client(*client), "stops".into(), Style::Note)
        }
        Event::PhaseChanged { phase } => Mark::Band {
            label: format!("phase {phase:?}"),
            style: Style::Note,
        },
    }
}

/// What a node is known to hold and be, from the events so far.
#[derive(Clone, Debug, Default)]
struct NodeView {
    term: u64,
    vote: Option<NodeId>,
    leader: bool,
    floor: Offset,
    tag: Option<Headers>,
    committed: Offset,
    readable_start: Offset,
    crashed: bool,
    /// Committed records, described, by offset.
    log: BTreeMap<Offset, String>,
}

impl NodeView {
    fn lines(&self) -> Vec<String> {
        let mut lines = Vec::new();
        let role = if self.leader { "leader" } else { "follower" };
        let vote = self
            .vote
            .map(|vote| format!(", vote {}", describe::node(vote)))
            .unwrap_or_default();
        let crashed = if self.crashed { " CRASHED" } else { "" };
        lines.push(format!("term {} {role}{vote}{crashed}", self.term));
        let tag = match &self.tag {
            Some(tag) => format!("tag {}", describe::headers(tag)),
            None => "untagged".to_string(),
        };
        lines.push(format!(
            "floor {} ({tag}), serves from {}",
            self.floor, self.readable_start
        ));
        lines.push(format!("committed through {}", self.committed));
        let retained: Vec<&String> = self
            .log
            .range(self.readable_start..)
            .map(|(_, entry)| entry)
            .collect();
        let skipped = retained.len().saturating_sub(LOG_SHOWN_MAX);
        if skipped > 0 {
            lines.push(format!("... {skipped} earlier records"));
        }
        lines.extend(retained.into_iter().skip(skipped).cloned());
        lines
    }
}

/// What a client believes, from its own requests and answers.
#[derive(Clone, Debug, Default)]
struct ClientView {
    epoch: Option<u64>,
    retired: Option<String>,
    frozen: bool,
    tail: Option<Offset>,
    cursor: Option<String>,
    last_answer: Option<String>,
}

impl ClientView {
    fn lines(&self) -> Vec<String> {
        let mut lines = Vec::new();
        if let Some(epoch) = self.epoch {
            lines.push(format!("holds lease epoch {epoch} (it believes)"));
        }
        if let Some(retired) = &self.retired {
            lines.push(format!("RETIRED: {retired}"));
        }
        if self.frozen {
            lines.push("frozen".to_string());
        }
        if let Some(tail) = self.tail {
            lines.push(format!("believes the tail is {tail}"));
        }
        if let Some(cursor) = &self.cursor {
            lines.push(format!("cursor: {cursor}"));
        }
        if let Some(answer) = &self.last_answer {
            lines.push(format!("last answer: {answer}"));
        }
        if lines.is_empty() {
            lines.push("nothing yet".to_string());
        }
        lines
    }
}

/// The lanes one event changed: their state lines are drawn again.
#[derive(Default)]
struct Touched {
    nodes: Vec<NodeId>,
    clients: Vec<ClientId>,
    lease: bool,
}

/// Every lane's view, updated event by event.
#[derive(Default)]
struct Views {
    nodes: BTreeMap<NodeId, NodeView>,
    clients: BTreeMap<ClientId, ClientView>,
    lease: Option<(u64, ClientId)>,
    untold: BTreeSet<ClientId>,
}

impl Views {
    /// Applies one event; returns the lanes whose state it may have changed, with their lines.
    fn apply(&mut self, lanes: &Lanes, event: &TraceEvent) -> Vec<(usize, Vec<String>)> {
        let mut touched = Touched::default();
        match event {
            TraceEvent::History(event) => match self.node_event(event) {
                Some(node) => touched.nodes.push(node),
                None => self.client_event(event, &mut touched),
            },
            TraceEvent::Sim(event) => match event {
                SimEvent::LeaseMoved { from, told, .. } => {
                    if let (Some(from), false) = (from, told) {
                        self.untold.insert(*from);
                    }
                    touched.lease = true;
                }
                SimEvent::Paused { client } => {
                    self.clients.entry(*client).or_default().frozen = true;
                    touched.clients.push(*client);
                }
                SimEvent::Resumed { client } => {
                    self.clients.entry(*client).or_default().frozen = false;
                    touched.clients.push(*client);
                }
                _ => {}
            },
        }
        self.changed(lanes, touched)
    }

    /// Applies a history event about a node; returns the node, or `None` for any other event.
    fn node_event(&mut self, event: &Event) -> Option<NodeId> {
        match event {
            Event::NodeState {
                node,
                term,
                vote,
                leader,
                floor,
                committed,
                readable_start,
                floor_tag,
            } => {
                let view = self.nodes.entry(*node).or_default();
                view.term = *term;
                view.vote = *vote;
                view.leader = *leader;
                view.floor = *floor;
                view.committed = *committed;
                view.readable_start = *readable_start;
                view.tag = floor_tag.clone();
                Some(*node)
            }
            Event::Committed { node, entry } => {
                let view = self.nodes.entry(*node).or_default();
                view.log.insert(entry.offset, describe::entry(entry));
                view.committed = view.committed.max(entry.offset);
                Some(*node)
            }
            Event::PromiseChanged { node, term, vote } => {
                let view = self.nodes.entry(*node).or_default();
                view.term = *term;
                view.vote = *vote;
                Some(*node)
            }
            Event::BecameLeader { node, term } => {
                let view = self.nodes.entry(*node).or_default();
                view.term = *term;
                view.leader = true;
                Some(*node)
            }
            Event::FloorApplied { node, floor, .. } => {
                self.nodes.entry(*node).or_default().floor = *floor;
                Some(*node)
            }
            Event::SegmentsDeleted {
                node,
                readable_start,
                ..
            } => {
                let view = self.nodes.entry(*node).or_default();
                view.readable_start = *readable_start;
                view.log = view.log.split_off(readable_start);
                Some(*node)
            }
            Event::Jumped { node, point, .. } => {
                let view = self.nodes.entry(*node).or_default();
                view.log = view.log.split_off(point);
                view.committed = view.committed.max(point.saturating_sub(1));
                Some(*node)
            }
            Event::Crashed { node } => {
                let view = self.nodes.entry(*node).or_default();
                view.crashed = true;
                view.leader = false;
                Some(*node)
            }
            Event::Restarted { node } => {
                self.nodes.entry(*node).or_default().crashed = false;
                Some(*node)
            }
            _ => None,
        }
    }

    /// Applies a history event about a client or the lease (any other changes nothing).
    fn client_event(&mut self, event: &Event, touched: &mut Touched) {
        match event {
            Event::Requested {
                client, request, ..
            } => {
                let view = self.clients.entry(*client).or_default();
                match request {
                    Request::Append { expected_tail, .. } | Request::Trim { expected_tail, .. } => {
                        if let Some(tail) = expected_tail {
                            view.tail = Some(*tail);
                        }
                    }
                    Request::Read { .. } => {
                        view.cursor = Some(describe::request(request));
                    }
                    Request::Fence { .. } => {}
                }
                touched.clients.push(*client);
            }
            Event::Replied {
                client,
                node,
                reply,
                ..
            } => {
                let view = self.clients.entry(*client).or_default();
                view.last_answer = Some(format!(
                    "{} from {}",
                    describe::reply(reply),
                    describe::node(*node)
                ));
                touched.clients.push(*client);
            }
            Event::LeaseGranted { client, epoch } => {
                self.clients.entry(*client).or_default().epoch = Some(*epoch);
                self.lease = Some((*epoch, *client));
                self.untold.remove(client);
                touched.clients.push(*client);
                touched.lease = true;
            }
            Event::HolderRetired {
                client,
                newer_epoch,
                by_tag,
                ..
            } => {
                let how = if *by_tag { "a tag" } else { "a newer write" };
                self.clients.entry(*client).or_default().retired =
                    Some(format!("saw epoch {newer_epoch} in {how}"));
                self.untold.remove(client);
                touched.clients.push(*client);
                touched.lease = true;
            }
            _ => {}
        }
    }

    /// The lines of every lane `touched` names that the page draws.
    fn changed(&self, lanes: &Lanes, touched: Touched) -> Vec<(usize, Vec<String>)> {
        let mut changed = Vec::new();
        for node in touched.nodes {
            if lanes.has(node) {
                changed.push((lanes.node(node), self.nodes[&node].lines()));
            }
        }
        for client in touched.clients {
            if lanes.client.contains_key(&client) {
                changed.push((lanes.client(client), self.clients[&client].lines()));
            }
        }
        if touched.lease {
            let mut lines = match self.lease {
                Some((epoch, client)) => vec![format!("epoch {epoch} granted to c{client}")],
                None => vec!["no lease granted".to_string()],
            };
            for client in &self.untold {
                lines.push(format!("c{client} lost its lease and was NOT told"));
            }
            changed.push((Lanes::LEASE, lines));
        }
        changed
    }
}

/// The mark of a simulator event.
fn sim_mark(lanes: &Lanes, event: &SimEvent) -> Mark {
    match event {
        SimEvent::NetworkFault { description } => Mark::Band {
            label: description.clone(),
            style: Style::Fault,
        },
        SimEvent::Healed => Mark::Band {
            label: "every fault healed".into(),
            style: Style::Note,
        },
        SimEvent::LeaseMoved {
            from,
            to,
            epoch,
            told,
        } => {
            let from = from.filter(|from| lanes.client.contains_key(from));
            let lane = from.map_or(lanes.client(*to), |from| lanes.client(from));
            let label = if *told {
                format!("lease {epoch} -> c{to} (told)")
            } else {
                format!("lease {epoch} -> c{to}, NOT told")
            };
            point(lane, label, if *told { Style::Note } else { Style::Fault })
        }
        SimEvent::Paused { client } => point(lanes.client(*client), "frozen".into(), Style::Fault),
        SimEvent::Resumed { client } => point(lanes.client(*client), "thawed".into(), Style::Note),
        SimEvent::HolderRestarted { client, epoch } => point(
            lanes.client(*client),
            format!("restarted (keeps epoch {epoch})"),
            Style::Fault,
        ),
        SimEvent::DiskLost { node, ops_lost, .. } => point(
            lanes.node(*node),
            format!("lost {ops_lost} ops"),
            Style::Fault,
        ),
        SimEvent::DiskReadFailed { node, .. } => {
            point(lanes.node(*node), "disk read failed".into(), Style::Fault)
        }
        // The run's start, its phases, a continuation's fork, its end and its verdict: a band
        // with their sentence.
        SimEvent::Started { .. }
        | SimEvent::Forked { .. }
        | SimEvent::Phase { .. }
        | SimEvent::Finished { .. }
        | SimEvent::Violation { .. } => Mark::Band {
            label: describe::trace_event(&TraceEvent::Sim(event.clone())),
            style: Style::Note,
        },
    }
}

#[cfg(test)]
mod tests;
