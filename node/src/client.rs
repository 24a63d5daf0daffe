//! A blocking connection to a cluster, and the simulator's retry rules on top of it.
//!
//! `ClusterClient::call` sends one request to one node and waits at most `timeout` for its answer.
//! Its error says what the client knows: `Unreachable` (the request never left: nothing happened)
//! or `Unknown` (it left and no answer came: the outcome is unknown, exactly the simulator's client
//! timeout). `Router` follows a core client's `Route` the way the simulator's world does
//! (`sim/src/seeded/world/clients.rs`): `NotLeader`/`NoReadIndex` go to the hinted node or the next
//! voter, `NotHeld` to another node, and a client refused by every node in a row backs off (the
//! `Duration` its caller gives) before trying again.

use crate::addresses::Addresses;
use crate::frame::{self, Frame, NodeStatus, PowerCut};
use felix_core::api::{Reply, Request, RequestId};
use felix_core::client::Route;
use felix_core::record::NodeId;
use std::collections::BTreeMap;
use std::io::{BufReader, BufWriter, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// Why a call got no answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CallError {
    /// The request was never sent (no connection): nothing happened.
    Unreachable(String),
    /// The request was sent and no answer came in time: its outcome is unknown.
    Unknown(String),
}

impl std::fmt::Display for CallError {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CallError::Unreachable(why) => write!(formatter, "not sent: {why}"),
            CallError::Unknown(why) => write!(formatter, "outcome unknown: {why}"),
        }
    }
}

struct Link {
    reader: BufReader<TcpStream>,
    writer: BufWriter<TcpStream>,
}

/// Connections to the nodes of one cluster, one request at a time.
pub struct ClusterClient {
    addresses: Addresses,
    links: BTreeMap<NodeId, Link>,
    next_wire: RequestId,
    pub timeout: Duration,
}

impl ClusterClient {
    pub fn new(addresses: Addresses, timeout: Duration) -> ClusterClient {
        ClusterClient {
            addresses,
            links: BTreeMap::new(),
            next_wire: 1,
            timeout,
        }
    }

    pub fn addresses(&self) -> &Addresses {
        &self.addresses
    }

    /// Sends `request` to `node` and waits for its reply.
    pub fn call(&mut self, node: NodeId, request: Request) -> Result<Reply, CallError> {
        let wire = self.next_wire;
        self.next_wire += 1;
        let frame = Frame::Request {
            request_id: wire,
            request,
        };
        match self.exchange(node, &frame, wire)? {
            Frame::Reply { reply, .. } => Ok(reply),
            _ => Err(CallError::Unknown(
                "the node answered with another frame".to_string(),
            )),
        }
    }

    /// Asks `node` for its state (the node also samples it into its event log).
    pub fn status(&mut self, node: NodeId) -> Result<NodeStatus, CallError> {
        let wire = self.next_wire;
        self.next_wire += 1;
        match self.exchange(node, &Frame::StatusRequest { request_id: wire }, wire)? {
            Frame::Status { status, .. } => Ok(status),
            _ => Err(CallError::Unknown(
                "the node answered with another frame".to_string(),
            )),
        }
    }

    /// Sets `node`'s slow-disk failpoint (a node started with `--failpoints`).
    pub fn failpoint(
        &mut self,
        node: NodeId,
        sync_delay_millis: u32,
    ) -> Result<NodeStatus, CallError> {
        let wire = self.next_wire;
        self.next_wire += 1;
        let frame = Frame::Failpoint {
            request_id: wire,
            sync_delay_millis,
        };
        match self.exchange(node, &frame, wire)? {
            Frame::Status { status, .. } => Ok(status),
            _ => Err(CallError::Unknown(
                "the node answered with another frame".to_string(),
            )),
        }
    }

    /// Cuts the power of several nodes at once (nodes started with `--failpoints`, right
    /// before their kill): every `Frame::PowerCut` is sent before any answer is awaited, so the
    /// nodes hold still within the same moment; each answer says what its kill will lose.
    pub fn power_cuts(
        &mut self,
        cuts: &[(NodeId, Option<u32>)],
    ) -> Vec<Result<PowerCut, CallError>> {
        let sent: Vec<Result<RequestId, CallError>> = cuts
            .iter()
            .map(|&(node, tear)| {
                let wire = self.next_wire;
                self.next_wire += 1;
                let frame = Frame::PowerCut {
                    request_id: wire,
                    tear,
                };
                self.send(node, &frame).map(|()| wire)
            })
            .collect();
        cuts.iter()
            .zip(sent)
            .map(|(&(node, _), sent)| match self.receive(node, sent?)? {
                Frame::PowerCutDone { cut, .. } => Ok(cut),
                _ => Err(CallError::Unknown(
                    "the node answered with another frame".to_string(),
                )),
            })
            .collect()
    }

    /// Drops the connection to `node` (a late reply on it can then never be mistaken).
    pub fn disconnect(&mut self, node: NodeId) {
        self.links.remove(&node);
    }

    fn exchange(
        &mut self,
        node: NodeId,
        frame: &Frame,
        wire: RequestId,
    ) -> Result<Frame, CallError> {
        self.send(node, frame)?;
        self.receive(node, wire)
    }

    /// Writes one frame to `node` (connecting first if needed).
    fn send(&mut self, node: NodeId, frame: &Frame) -> Result<(), CallError> {
        if !self.links.contains_key(&node) {
            let link = self.connect(node)?;
            self.links.insert(node, link);
        }
        let Some(link) = self.links.get_mut(&node) else {
            return Err(CallError::Unreachable(format!("no link to node {node}")));
        };
        let sent = frame::write_frame(&mut link.writer, frame).and_then(|()| link.writer.flush());
        if let Err(error) = sent {
            // A write that failed may still have reached the node in part or in whole.
            self.links.remove(&node);
            return Err(CallError::Unknown(format!("node {node}: {error}")));
        }
        Ok(())
    }

    /// Reads `node`'s answer to the request numbered `wire` (skipping late answers to earlier
    /// ones), within the timeout.
    fn receive(&mut self, node: NodeId, wire: RequestId) -> Result<Frame, CallError> {
        let deadline = Instant::now() + self.timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                self.links.remove(&node);
                return Err(CallError::Unknown(format!(
                    "node {node} did not answer in time"
                )));
            }
            let Some(link) = self.links.get_mut(&node) else {
                return Err(CallError::Unknown(format!("node {node}: link gone")));
            };
            let _ = link.reader.get_ref().set_read_timeout(Some(left));
            match frame::read_frame(&mut link.reader) {
                Ok(Some(answer)) => {
                    let id = match &answer {
                        Frame::Reply { request_id, .. }
                        | Frame::Status { request_id, .. }
                        | Frame::PowerCutDone { request_id, .. } => *request_id,
                        _ => 0,
                    };
                    if id == wire {
                        return Ok(answer);
                    }
                    // A late answer to an earlier request: skipped.
                }
                Ok(None) => {
                    self.links.remove(&node);
                    return Err(CallError::Unknown(format!(
                        "node {node} closed the connection"
                    )));
                }
                Err(error) => {
                    self.links.remove(&node);
                    return Err(CallError::Unknown(format!("node {node}: {error}")));
                }
            }
        }
    }

    fn connect(&self, node: NodeId) -> Result<Link, CallError> {
        let Some(address) = self.addresses.get(&node) else {
            return Err(CallError::Unreachable(format!(
                "node {node} has no address"
            )));
        };
        let stream = TcpStream::connect_timeout(address, self.timeout).map_err(|error| {
            CallError::Unreachable(format!("node {node} at {address}: {error}"))
        })?;
        let _ = stream.set_nodelay(true);
        let _ = stream.set_write_timeout(Some(self.timeout));
        let clone = stream
            .try_clone()
            .map_err(|error| CallError::Unreachable(format!("node {node}: {error}")))?;
        Ok(Link {
            reader: BufReader::new(clone),
            writer: BufWriter::new(stream),
        })
    }
}

/// Where a client sends its next request: the simulator's routing rules.
#[derive(Clone, Debug)]
pub struct Router {
    nodes: Vec<NodeId>,
    target: usize,
    refusals: usize,
    /// How long to wait once every node refused in a row.
    pub backoff: Duration,
}

impl Router {
    pub fn new(nodes: Vec<NodeId>, start: usize, backoff: Duration) -> Router {
        assert!(!nodes.is_empty());
        let target = start % nodes.len();
        Router {
            nodes,
            target,
            refusals: 0,
            backoff,
        }
    }

    pub fn target(&self) -> NodeId {
        self.nodes[self.target]
    }

    /// Follows `route` after a reply; `refused` when the reply served nothing. Returns how long
    /// to wait before the next request.
    pub fn follow(&mut self, route: Route, refused: bool) -> Duration {
        match route {
            Route::Any => {}
            Route::Leader(Some(hint)) => match self.nodes.iter().position(|&n| n == hint) {
                Some(index) => self.target = index,
                None => self.next(),
            },
            Route::Leader(None) | Route::AnotherNode => self.next(),
        }
        if !refused {
            self.refusals = 0;
            return Duration::ZERO;
        }
        self.refusals += 1;
        if self.refusals >= self.nodes.len() {
            self.backoff
        } else {
            Duration::ZERO
        }
    }

    /// Moves to the next node (after a timeout or an unreachable node).
    pub fn next(&mut self) {
        self.target = (self.target + 1) % self.nodes.len();
    }
}

/// The route a plain request's reply asks for (the core's clients say the same for theirs).
pub fn route_of(reply: &Reply) -> Option<Route> {
    match reply {
        Reply::NotLeader { hint } | Reply::NoReadIndex { hint } => Some(Route::Leader(*hint)),
        Reply::NotHeld { .. } => Some(Route::AnotherNode),
        _ => None,
    }
}
