//! Synthetic *correct* histories from a trivial reference cluster, for the audits' property tests
//! and benchmark.
//!
//! The reference keeps one committed log (the cluster agrees by construction) and, per node, how
//! far its walk has gone, its floor, what it sealed, and its promise. Each step draws one action
//! from a seeded SplitMix64 stream: a holder takes the lease, the current holder writes or trims
//! under its epoch, the checkpoint client folds, a node walks (applying trims lazily and deleting
//! whole segments below its floor), a node crashes or restarts (recovering its sealed state), a
//! lagging node jumps to a peer's trim point, a new leader is elected, or a reader reads (served
//! only by a node whose walk reached the cluster's commit, as at a read index). Every rule the
//! audits check holds by construction, so any violation an audit reports on these histories is a
//! false alarm. The generator knows nothing of the audits' code.
//!
//! It is deliberately simple (no network, no uncommitted suffixes): the simulator produces the
//! realistic histories; this one only exercises the audits' bookkeeping (restarts, jumps, lazy
//! floors, stale-read matching) at scale.

use crate::linearizable::spec::records_reply;
use crate::splitmix::{splitmix64, SPLITMIX64_INCREMENT};
use felix_core::api::{ReadFrom, Reply, Request};
use felix_core::client::folder::Fold;
use felix_core::history::{Event, Phase};
use felix_core::record::{Command, Entry, Headers, NodeId, Offset, Term};

/// Records per segment in the reference's storage.
const SEGMENT_RECORDS: Offset = 4;

/// A seeded SplitMix64 stream (the reference's only randomness; also the conformance walks'):
/// its state steps by SplitMix64's increment, and each draw is `splitmix64` of the state before.
pub struct Draw(pub u64);

impl Draw {
    fn next(&mut self) -> u64 {
        let drawn = splitmix64(self.0);
        self.0 = self.0.wrapping_add(SPLITMIX64_INCREMENT);
        drawn
    }

    /// Uniform in `0..bound` (bound > 0).
    pub fn below(&mut self, bound: u64) -> u64 {
        assert!(bound > 0);
        self.next() % bound
    }
}

#[derive(Clone, Default)]
struct Node {
    live: bool,
    walked: Offset,
    floor: Offset,
    floor_trim: Option<Offset>,
    sealed_base: Offset,
    sealed_floor: Offset,
    sealed_floor_trim: Option<Offset>,
    term: Term,
    vote: Option<NodeId>,
}

struct Reference {
    draw: Draw,
    history: Vec<Event>,
    log: Vec<Entry>,
    nodes: Vec<Node>,
    leader: NodeId,
    term: Term,
    epoch: u64,
    /// The floor of the committed trims (only the leader's trims raise it).
    floor: Offset,
    /// The fold digest after each offset (index offset - 1).
    digests: Vec<u64>,
    /// The fold of the application writes appended so far.
    fold: Fold,
    folded: Offset,
}

impl Reference {
    fn entry(&self, offset: Offset) -> &Entry {
        &self.log[(offset - 1) as usize]
    }

    fn tail(&self) -> Offset {
        self.log.len() as Offset + 1
    }

    fn state(&mut self, node: NodeId) {
        let view = &self.nodes[node as usize];
        let floor_tag = view
            .floor_trim
            .and_then(|trim| match &self.entry(trim).command {
                Command::Trim { headers, .. } => Some(headers.clone()),
                _ => None,
            });
        self.history.push(Event::NodeState {
            node,
            term: view.term,
            vote: view.vote,
            leader: node == self.leader,
            floor: view.floor,
            committed: view.walked,
            readable_start: view.floor.max(1),
            floor_tag,
        });
    }

    /// The leader appends `command`; it commits at once and the leader's walk reaches it. The
    /// client that sent `request` is told, unless its acknowledgement is lost.
    fn append(&mut self, command: Command, request: Option<Request>) {
        if let Some(request) = &request {
            self.history.push(Event::Requested {
                client: 1,
                node: self.leader,
                request: request.clone(),
            });
        }
        let offset = self.tail();
        let entry = Entry {
            offset,
            term: self.term,
            command,
        };
        // The folders' state: the fold of every application write so far (FoldAgreement holds
        // each fold to the committed log's).
        if let Command::Write { body, .. } = &entry.command {
            self.fold.apply(offset, body);
        }
        self.digests.push(self.fold.digest);
        if let Command::Trim { floor, .. } = entry.command {
            self.floor = self.floor.max(floor);
        }
        self.log.push(entry);
        let leader = self.leader;
        while self.nodes[leader as usize].walked < offset {
            self.walk(leader);
        }
        // One in four acknowledgements is lost: the outcome is unknown to the client.
        if let Some(request) = request.filter(|_| self.draw.below(4) > 0) {
            self.history.push(Event::Replied {
                client: 1,
                node: leader,
                request,
                reply: Reply::Appended {
                    offset,
                    tail: offset + 1,
                },
            });
        }
        self.state(leader);
    }

    /// `node`'s walk reaches its next committed record.
    fn walk(&mut self, node: NodeId) {
        let view = &self.nodes[node as usize];
        if !view.live || view.walked as usize >= self.log.len() {
            return;
        }
        let offset = view.walked + 1;
        let entry = self.entry(offset).clone();
        self.history.push(Event::Committed {
            node,
            entry: entry.clone(),
        });
        let view = &mut self.nodes[node as usize];
        view.walked = offset;
        let Command::Trim { floor, .. } = entry.command else {
            return;
        };
        if floor <= view.floor {
            return;
        }
        view.floor = floor;
        view.floor_trim = Some(offset);
        self.history.push(Event::FloorApplied {
            node,
            floor,
            trim: Some(offset),
        });
        let below = (floor - 1) / SEGMENT_RECORDS * SEGMENT_RECORDS + 1;
        if below > view.sealed_base + 1 {
            view.sealed_base = below - 1;
            view.sealed_floor = floor;
            view.sealed_floor_trim = Some(offset);
            self.history.push(Event::SegmentsDeleted {
                node,
                below,
                readable_start: floor,
                retention: false,
            });
        }
    }

    fn promise(&mut self, node: NodeId, term: Term, vote: Option<NodeId>) {
        let view = &mut self.nodes[node as usize];
        view.term = term;
        view.vote = vote;
        self.history
            .push(Event::PromiseChanged { node, term, vote });
    }

    fn elect(&mut self) {
        let candidates: Vec<NodeId> = (0..self.nodes.len() as NodeId)
            .filter(|node| {
                let view = &self.nodes[*node as usize];
                view.live && view.walked as usize == self.log.len()
            })
            .collect();
        if candidates.is_empty() {
            return;
        }
        let leader = candidates[self.draw.below(candidates.len() as u64) as usize];
        self.term += 1;
        for node in 0..self.nodes.len() as NodeId {
            if self.nodes[node as usize].live {
                self.promise(node, self.term, Some(leader));
            }
        }
        self.leader = leader;
        self.history.push(Event::BecameLeader {
            node: leader,
            term: self.term,
        });
        self.append(Command::Noop, None);
    }

    fn crash(&mut self, node: NodeId) {
        if node == self.leader || !self.nodes[node as usize].live {
            return;
        }
        self.nodes[node as usize].live = false;
        self.history.push(Event::Crashed { node });
    }

    fn restart(&mut self, node: NodeId) {
        let view = &mut self.nodes[node as usize];
        if view.live {
            return;
        }
        view.live = true;
        view.walked = view.sealed_base;
        view.floor = view.sealed_floor;
        view.floor_trim = view.sealed_floor_trim;
        self.history.push(Event::Restarted { node });
        self.state(node);
    }

    /// A live node below the leader's sealed base takes the trim point.
    fn jump(&mut self, node: NodeId) {
        let leader = self.nodes[self.leader as usize].clone();
        let view = &mut self.nodes[node as usize];
        if !view.live || view.walked >= leader.sealed_base || view.floor >= leader.sealed_floor {
            return;
        }
        let point = leader.sealed_base + 1;
        self.history.push(Event::TrimmedToSent {
            node: self.leader,
            to: node,
            point,
        });
        view.walked = point - 1;
        view.sealed_base = point - 1;
        view.floor = leader.sealed_floor;
        view.floor_trim = leader.sealed_floor_trim;
        view.sealed_floor = leader.sealed_floor;
        view.sealed_floor_trim = leader.sealed_floor_trim;
        self.history.push(Event::Jumped {
            node,
            point,
            replica: false,
        });
        self.history.push(Event::FloorApplied {
            node,
            floor: leader.sealed_floor,
            trim: None,
        });
        self.state(node);
    }

    fn read(&mut self, node: NodeId) {
        if !self.nodes[node as usize].live {
            return;
        }
        let from = 1 + self.draw.below(self.tail());
        let request = Request::Read {
            from: ReadFrom::Offset(from),
            max_records: 4,
        };
        self.history.push(Event::Requested {
            client: 2,
            node,
            request: request.clone(),
        });
        let view = &self.nodes[node as usize];
        let reply = if from < view.floor.max(1) {
            // Tagged with the headers of the trim that set the floor, as the core answers.
            let tag = view
                .floor_trim
                .and_then(|trim| match &self.entry(trim).command {
                    Command::Trim { headers, .. } => Some(headers.clone()),
                    _ => None,
                });
            Reply::CursorTooOld {
                floor: view.floor,
                tag,
            }
        } else if from > view.walked + 1 {
            return; // an unanswered read: unknown
        } else if (view.walked as usize) < self.log.len() {
            // The read index is the cluster's commit: a node whose walk is behind it refuses.
            Reply::NoReadIndex { hint: None }
        } else {
            // As the core serves: up to 4 writes, `next` past the last record looked at.
            records_reply(from..view.walked + 1, 4, |offset| {
                match &self.entry(offset).command {
                    Command::Write { body, headers } => Some((body, headers)),
                    _ => None,
                }
            })
        };
        self.history.push(Event::Replied {
            client: 2,
            node,
            request,
            reply,
        });
    }

    fn fold(&mut self) {
        if self.folded as usize >= self.log.len() {
            return;
        }
        self.folded += 1;
        // A folder folds the records a read delivers: writes.
        if !matches!(self.entry(self.folded).command, Command::Write { .. }) {
            return;
        }
        for client in [3, 4] {
            self.history.push(Event::Folded {
                client,
                offset: self.folded,
                digest: self.digests[(self.folded - 1) as usize],
            });
        }
    }

    fn step(&mut self) {
        let nodes = self.nodes.len() as u64;
        let node = self.draw.below(nodes) as NodeId;
        match self.draw.below(100) {
            0..=1 => {
                self.epoch += 1;
                self.history.push(Event::LeaseGranted {
                    client: 1,
                    epoch: self.epoch,
                });
            }
            2..=24 => {
                let body = format!("{}/{}", self.tail(), self.epoch).into_bytes();
                let headers = Headers::with_epoch(self.epoch);
                let request = Request::Append {
                    expected_tail: Some(self.tail()),
                    fence: None,
                    body: body.clone(),
                    headers: headers.clone(),
                };
                self.append(Command::Write { body, headers }, Some(request));
            }
            25..=29 => {
                let offset = self.tail();
                let floor = self.floor + 1 + self.draw.below(offset - self.floor);
                let headers = Headers::with_epoch(self.epoch);
                let request = Request::Trim {
                    expected_tail: Some(offset),
                    fence: None,
                    floor,
                    headers: headers.clone(),
                };
                self.append(
                    Command::Trim {
                        floor,
                        headers,
                        fence: None,
                    },
                    Some(request),
                );
            }
            30..=59 => self.walk(node),
            60..=64 => self.state(node),
            65..=66 => self.crash(node),
            67..=71 => self.restart(node),
            72..=74 => self.jump(node),
            75..=76 => self.elect(),
            77..=89 => self.read(node),
            _ => self.fold(),
        }
    }

    fn finish(&mut self) {
        self.history.push(Event::PhaseChanged {
            phase: Phase::Liveness,
        });
        for node in 0..self.nodes.len() as NodeId {
            self.restart(node);
            self.jump(node);
            while (self.nodes[node as usize].walked as usize) < self.log.len() {
                self.walk(node);
            }
            self.state(node);
        }
        self.history.push(Event::PhaseChanged { phase: Phase::End });
    }
}

/// A correct history of about `steps` actions of a three-node reference cluster, drawn from
/// `seed`, ending with every node converged and `PhaseChanged { phase: End }`.
pub fn correct_history(seed: u64, steps: usize) -> Vec<Event> {
    let nodes = 3;
    let mut reference = Reference {
        draw: Draw(seed),
        history: Vec::with_capacity(steps * 2),
        log: Vec::new(),
        nodes: vec![
            Node {
                live: true,
                ..Node::default()
            };
            nodes
        ],
        leader: 0,
        term: 0,
        epoch: 1,
        floor: 0,
        digests: Vec::new(),
        fold: Fold::empty(),
        folded: 0,
    };
    reference.history.push(Event::LeaseGranted {
        client: 1,
        epoch: 1,
    });
    reference.elect();
    for _ in 0..steps {
        reference.step();
    }
    reference.finish();
    reference.history
}
