//! The wire: length-prefixed frames between nodes, and between clients and nodes.
//!
//! A frame on the wire is a 4-byte big-endian length `n` followed by `n` bytes: one version byte
//! (`VERSION`) and a JSON body (`Frame`, serde, the same types the simulator moves: `Message`,
//! `Request`, `Reply`). `n` is at most `FRAME_BYTES_MAX`; a longer frame, a zero length, an
//! unknown version or a body that is not a `Frame` is a `FrameError`, never a panic: bytes on a
//! socket are input anyone can write, so the decoder is bounded (no allocation above the limit,
//! serde_json's own recursion limit) and fuzzed (`tests/it/frame_fuzz.rs`).
//!
//! JSON rather than the store's binary codec: the codec encodes records, not messages, and a
//! message body is a few hundred bytes, so the cost is small next to an fsync; JSON also keeps a
//! captured stream readable.

use felix_core::api::{Reply, Request, RequestId};
use felix_core::broker::Message;
use felix_core::history::Event;
use felix_core::record::{NodeId, Offset};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::io::{self, Read, Write};

/// The wire version this code speaks, the first byte of every frame body.
pub const VERSION: u8 = 1;

/// The largest frame (version byte plus body) a reader accepts. A leader's `AppendEntries`
/// carries at most `append_entries_max` records of at most `body_bytes_max` each; the node's
/// configuration keeps that product under this limit.
pub const FRAME_BYTES_MAX: u32 = 16 << 20;

/// One frame.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Frame {
    /// The first frame on a peer link: the sending node and the node it meant to reach.
    PeerHello { from: NodeId, to: NodeId },
    /// A message between brokers (after `PeerHello`, on a one-way link).
    Peer { message: Message },
    /// A client request; the answer comes back on the same connection with the same id.
    Request {
        request_id: RequestId,
        request: Request,
    },
    /// A node's answer to `Request`.
    Reply {
        request_id: RequestId,
        node: NodeId,
        reply: Reply,
    },
    /// Asks a node for its state (cluster status, the nemesis's convergence wait). The node
    /// also records the state in its event log, so the history holds a fresh sample.
    StatusRequest { request_id: RequestId },
    /// Fault injection (a failpoint, as etcd's robustness tests compile in): every fsync of the
    /// node waits this long first, a slow disk. Honoured only by a node started with
    /// `--failpoints`; answered with `Status`.
    Failpoint {
        request_id: RequestId,
        sync_delay_millis: u32,
    },
    /// Fault injection: a power cut, asked for right before the nemesis kills a node in
    /// power-loss mode (`--unsynced-window-ms`). The node stops taking inputs and answers
    /// `PowerCutDone`; its unsynced ops are lost with the kill, except that with `tear` the ops
    /// before its last unsynced append reach the file and that append is torn inside one of its
    /// entries (`tear` modulo its length picks which): a partial frame at the end of a segment,
    /// as a power loss in the middle of a write leaves it. Honoured only with `--failpoints`.
    PowerCut {
        request_id: RequestId,
        tear: Option<u32>,
    },
    /// The node's answer to `PowerCut`: it holds still until it is killed.
    PowerCutDone {
        request_id: RequestId,
        cut: PowerCut,
    },
    /// A node's state.
    Status {
        request_id: RequestId,
        status: NodeStatus,
    },
}

/// What a node reports about itself.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeStatus {
    pub node: NodeId,
    pub replica: bool,
    /// The `NodeState` history event of the node now.
    pub state: Event,
    pub leader_hint: Option<NodeId>,
    /// The next free offset of the node's own log.
    pub tail: Offset,
    /// The highest offset of its log known durable.
    pub durable_last: Offset,
}

/// What a power cut will lose on a node (`Frame::PowerCutDone`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PowerCut {
    pub node: NodeId,
    /// Storage ops applied since the last fsync.
    pub unsynced_ops: u64,
    /// Of those, the ops the kill loses (the torn one counted).
    pub ops_lost: u64,
    /// The offset of the entry torn in the middle (the entries before it in its append reached
    /// the file whole).
    pub torn: Option<Offset>,
}

impl NodeStatus {
    /// (term, leader, committed) out of the sampled state.
    pub fn summary(&self) -> (u64, bool, Offset) {
        match &self.state {
            Event::NodeState {
                term,
                leader,
                committed,
                ..
            } => (*term, *leader, *committed),
            _ => (0, false, 0),
        }
    }
}

/// Why bytes are not a frame.
#[derive(Debug)]
pub enum FrameError {
    /// The length prefix is zero or above `FRAME_BYTES_MAX`.
    Size { bytes: u32 },
    /// The version byte is not `VERSION`.
    Version { version: u8 },
    /// The body is not a `Frame`.
    Body { reason: String },
    /// The stream ended inside a frame, or the socket failed.
    Io(io::Error),
}

impl fmt::Display for FrameError {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FrameError::Size { bytes } => write!(
                formatter,
                "a frame of {bytes} bytes (a frame holds 1 to {FRAME_BYTES_MAX} bytes)"
            ),
            FrameError::Version { version } => write!(
                formatter,
                "wire version {version} (this node speaks version {VERSION})"
            ),
            FrameError::Body { reason } => write!(formatter, "not a frame: {reason}"),
            FrameError::Io(error) => write!(formatter, "{error}"),
        }
    }
}

impl std::error::Error for FrameError {}

/// The frame as bytes on the wire: length prefix, version, JSON body.
pub fn encode(frame: &Frame) -> Vec<u8> {
    // Serializing our own types to JSON cannot fail (string keys only, no foreign Serialize).
    let body = serde_json::to_vec(frame).unwrap_or_default();
    let length = body.len() + 1;
    let mut bytes = Vec::with_capacity(4 + length);
    bytes.extend_from_slice(&(length as u32).to_be_bytes());
    bytes.push(VERSION);
    bytes.extend_from_slice(&body);
    bytes
}

/// Checks a length prefix.
pub fn check_length(length: u32) -> Result<usize, FrameError> {
    if length == 0 || length > FRAME_BYTES_MAX {
        return Err(FrameError::Size { bytes: length });
    }
    Ok(length as usize)
}

/// Decodes a frame's payload (version byte and body, without the length prefix).
pub fn decode(payload: &[u8]) -> Result<Frame, FrameError> {
    let Some((&version, body)) = payload.split_first() else {
        return Err(FrameError::Size { bytes: 0 });
    };
    if version != VERSION {
        return Err(FrameError::Version { version });
    }
    serde_json::from_slice(body).map_err(|error| FrameError::Body {
        reason: error.to_string(),
    })
}

/// Parses one JSON text (a cluster file, a history line, a line between the nemesis and a client)
/// as the frames' bodies are parsed, from bytes: every JSON the node reads goes through one reader
/// type, so serde's deserializers for the journal's events, requests and replies are compiled
/// once into this crate, not once per reader (a valid `&str` parses the same either way).
pub fn parse_json<T: serde::de::DeserializeOwned>(text: &str) -> serde_json::Result<T> {
    serde_json::from_slice(text.as_bytes())
}

/// Reads one frame's payload (version byte and body): `Ok(None)` at a clean end of stream
/// (before a length prefix). Never allocates more than `FRAME_BYTES_MAX`.
pub fn read_payload(reader: &mut impl Read) -> Result<Option<Vec<u8>>, FrameError> {
    let mut prefix = [0u8; 4];
    let mut filled = 0;
    while filled < prefix.len() {
        match reader.read(&mut prefix[filled..]) {
            Ok(0) if filled == 0 => return Ok(None),
            Ok(0) => {
                return Err(FrameError::Io(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the stream ended inside a length prefix",
                )))
            }
            Ok(read) => filled += read,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(error) => return Err(FrameError::Io(error)),
        }
    }
    let length = check_length(u32::from_be_bytes(prefix))?;
    let mut payload = vec![0u8; length];
    reader.read_exact(&mut payload).map_err(FrameError::Io)?;
    Ok(Some(payload))
}

/// Reads one frame: `Ok(None)` at a clean end of stream.
pub fn read_frame(reader: &mut impl Read) -> Result<Option<Frame>, FrameError> {
    match read_payload(reader)? {
        Some(payload) => decode(&payload).map(Some),
        None => Ok(None),
    }
}

/// Writes one frame.
pub fn write_frame(writer: &mut impl Write, frame: &Frame) -> io::Result<()> {
    writer.write_all(&encode(frame))
}
