//! The node's sockets, one plain thread each: the listener, one reader per accepted connection,
//! one writer per client connection, and one outbound link per peer. None of them touches the
//! broker: readers turn frames into `Inbound`s for the event loop (a bounded channel: a slow loop
//! slows the sockets down instead of growing a queue), writers turn the loop's deliveries into
//! frames. A peer link or a client writer whose queue is full drops the message: Raft tolerates
//! lost messages, and a client that never gets its reply learns an unknown outcome, as in the
//! simulator.
//!
//! A connection says what it is with its first frame: `PeerHello` (a peer's one-way link, only
//! `Peer` frames follow) or a client frame (`Request`, `StatusRequest`). Anything else, and any
//! frame that does not decode, closes the connection with one line on stderr.

use crate::frame::{self, Frame};
use felix_core::api::{Request, RequestId};
use felix_core::broker::Message;
use felix_core::record::NodeId;
use std::collections::BTreeSet;
use std::io::{BufWriter, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A client connection's number; the broker sees it as the `ClientId` of its requests.
pub type ConnId = u32;

/// Open connections accepted at once; one more is closed at once.
pub const CONNECTIONS_MAX: usize = 1024;
/// Frames waiting to go out on one client connection or one peer link.
pub const OUTGOING_MAX: usize = 4096;
/// How long a peer link waits for a connection, and how long before it tries again.
const CONNECT_TIMEOUT: Duration = Duration::from_millis(200);
const RECONNECT_AFTER: Duration = Duration::from_millis(100);
/// A write that blocks longer than this (a stopped peer, a full socket) drops the connection.
const WRITE_TIMEOUT: Duration = Duration::from_secs(1);

/// What the sockets hand the event loop.
pub enum Inbound {
    Peer {
        from: NodeId,
        message: Message,
    },
    Request {
        conn: ConnId,
        request_id: RequestId,
        request: Request,
    },
    Status {
        conn: ConnId,
        request_id: RequestId,
    },
    Failpoint {
        conn: ConnId,
        request_id: RequestId,
        sync_delay_millis: u32,
    },
    PowerCut {
        conn: ConnId,
        request_id: RequestId,
        tear: Option<u32>,
    },
    Opened {
        conn: ConnId,
        writer: SyncSender<Frame>,
    },
    Closed {
        conn: ConnId,
    },
}

/// Accepts connections forever (the process ends with the event loop).
pub fn spawn_listener(
    listener: TcpListener,
    id: NodeId,
    peers: BTreeSet<NodeId>,
    inbound: SyncSender<Inbound>,
) {
    let open = Arc::new(AtomicUsize::new(0));
    std::thread::spawn(move || {
        let mut next_conn: ConnId = 1;
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            if open.load(Ordering::SeqCst) >= CONNECTIONS_MAX {
                let _ = stream.shutdown(Shutdown::Both);
                continue;
            }
            open.fetch_add(1, Ordering::SeqCst);
            let conn = next_conn;
            next_conn = next_conn.wrapping_add(1).max(1);
            let inbound = inbound.clone();
            let peers = peers.clone();
            let open = open.clone();
            std::thread::spawn(move || {
                serve_connection(stream, id, conn, &peers, &inbound);
                open.fetch_sub(1, Ordering::SeqCst);
            });
        }
    });
}

/// Reads one connection until it ends or misbehaves.
/// A frame a client may send, as the event loop's input (`None`: not a client frame).
fn client_input(conn: ConnId, frame: Frame) -> Option<Inbound> {
    Some(match frame {
        Frame::Request {
            request_id,
            request,
        } => Inbound::Request {
            conn,
            request_id,
            request,
        },
        Frame::StatusRequest { request_id } => Inbound::Status { conn, request_id },
        Frame::Failpoint {
            request_id,
            sync_delay_millis,
        } => Inbound::Failpoint {
            conn,
            request_id,
            sync_delay_millis,
        },
        Frame::PowerCut { request_id, tear } => Inbound::PowerCut {
            conn,
            request_id,
            tear,
        },
        _ => return None,
    })
}

fn serve_connection(
    stream: TcpStream,
    id: NodeId,
    conn: ConnId,
    peers: &BTreeSet<NodeId>,
    inbound: &SyncSender<Inbound>,
) {
    let _ = stream.set_nodelay(true);
    let peer_address = stream
        .peer_addr()
        .map(|address| address.to_string())
        .unwrap_or_else(|_| "?".to_string());
    let mut reader = std::io::BufReader::new(match stream.try_clone() {
        Ok(clone) => clone,
        Err(_) => return,
    });
    let first = match frame::read_frame(&mut reader) {
        Ok(Some(first)) => first,
        Ok(None) => return,
        Err(error) => {
            eprintln!("node {id}: closed a connection from {peer_address}: {error}");
            return;
        }
    };
    if let Frame::PeerHello { from, to } = first {
        if to != id || !peers.contains(&from) {
            eprintln!(
                "node {id}: refused a peer link from {peer_address}: it says node {from} to node {to}"
            );
            return;
        }
        loop {
            match frame::read_frame(&mut reader) {
                Ok(Some(Frame::Peer { message })) => {
                    if inbound.send(Inbound::Peer { from, message }).is_err() {
                        return;
                    }
                }
                Ok(None) => return,
                Ok(Some(_)) => {
                    eprintln!("node {id}: closed peer link from node {from}: a non-peer frame");
                    return;
                }
                Err(error) => {
                    eprintln!("node {id}: closed peer link from node {from}: {error}");
                    return;
                }
            }
        }
    }
    // A client connection: a writer thread answers on the same socket.
    let (writer, outgoing) = std::sync::mpsc::sync_channel::<Frame>(OUTGOING_MAX);
    let write_half = match stream.try_clone() {
        Ok(clone) => clone,
        Err(_) => return,
    };
    std::thread::spawn(move || write_client(write_half, outgoing));
    if inbound.send(Inbound::Opened { conn, writer }).is_err() {
        return;
    }
    let mut next = Some(first);
    loop {
        let frame = match next.take() {
            Some(frame) => frame,
            None => match frame::read_frame(&mut reader) {
                Ok(Some(frame)) => frame,
                Ok(None) => break,
                Err(error) => {
                    eprintln!("node {id}: closed client connection from {peer_address}: {error}");
                    break;
                }
            },
        };
        let Some(input) = client_input(conn, frame) else {
            eprintln!(
                "node {id}: closed client connection from {peer_address}: not a client frame"
            );
            break;
        };
        if inbound.send(input).is_err() {
            return;
        }
    }
    let _ = inbound.send(Inbound::Closed { conn });
    let _ = stream.shutdown(Shutdown::Both);
}

/// Set by a power cut (`Frame::PowerCut`, the event loop's `power_cut`): from then on nothing
/// leaves the process but the cut's own answer, as nothing leaves a machine whose power is gone;
/// the messages and replies already queued for the sockets die with it, as they would with the
/// kill that follows. One node per process, so one flag per process.
pub static POWER_CUT: AtomicBool = AtomicBool::new(false);

fn power_cut() -> bool {
    POWER_CUT.load(Ordering::SeqCst)
}

/// Writes one frame to a client, unless the power is cut (then only the cut's answer).
fn write_to_client(writer: &mut BufWriter<TcpStream>, frame: &Frame) -> std::io::Result<()> {
    if power_cut() && !matches!(frame, Frame::PowerCutDone { .. }) {
        return Ok(());
    }
    frame::write_frame(writer, frame)
}

fn write_client(stream: TcpStream, outgoing: Receiver<Frame>) {
    let _ = stream.set_write_timeout(Some(WRITE_TIMEOUT));
    let mut writer = BufWriter::new(stream);
    while let Ok(frame) = outgoing.recv() {
        if write_to_client(&mut writer, &frame).is_err() {
            return;
        }
        while let Ok(frame) = outgoing.try_recv() {
            if write_to_client(&mut writer, &frame).is_err() {
                return;
            }
        }
        if writer.flush().is_err() {
            return;
        }
    }
}

/// Starts the outbound link to peer `to` at `address`; the returned sender queues messages
/// (`try_send`: a full queue drops).
pub fn spawn_peer_link(from: NodeId, to: NodeId, address: SocketAddr) -> SyncSender<Message> {
    let (sender, messages) = std::sync::mpsc::sync_channel::<Message>(OUTGOING_MAX);
    std::thread::spawn(move || peer_link(from, to, address, messages));
    sender
}

fn peer_link(from: NodeId, to: NodeId, address: SocketAddr, messages: Receiver<Message>) {
    let mut link: Option<BufWriter<TcpStream>> = None;
    // A power cut ends the link without flushing what it buffered (`into_parts`: no flush).
    let drop_unsent = |link: Option<BufWriter<TcpStream>>| drop(link.map(BufWriter::into_parts));
    let mut retry_at = Instant::now();
    while let Ok(message) = messages.recv() {
        if power_cut() {
            break;
        }
        if link.is_none() {
            if Instant::now() < retry_at {
                continue; // dropped: the peer is unreachable, as on a lossy network
            }
            link = connect(from, to, address);
            if link.is_none() {
                retry_at = Instant::now() + RECONNECT_AFTER;
                continue;
            }
        }
        let Some(writer) = link.as_mut() else {
            continue;
        };
        let mut sent = frame::write_frame(writer, &Frame::Peer { message }).is_ok();
        while sent && !power_cut() {
            match messages.try_recv() {
                Ok(message) => sent = frame::write_frame(writer, &Frame::Peer { message }).is_ok(),
                Err(_) => break,
            }
        }
        if power_cut() {
            break;
        }
        if !sent || writer.flush().is_err() {
            link = None;
            retry_at = Instant::now() + RECONNECT_AFTER;
        }
    }
    drop_unsent(link);
}

fn connect(from: NodeId, to: NodeId, address: SocketAddr) -> Option<BufWriter<TcpStream>> {
    let stream = TcpStream::connect_timeout(&address, CONNECT_TIMEOUT).ok()?;
    let _ = stream.set_nodelay(true);
    let _ = stream.set_write_timeout(Some(WRITE_TIMEOUT));
    let mut writer = BufWriter::new(stream);
    frame::write_frame(&mut writer, &Frame::PeerHello { from, to }).ok()?;
    writer.flush().ok()?;
    Some(writer)
}

/// Queues `item` unless the queue is full or gone; says whether it was queued.
pub fn offer<T>(sender: &SyncSender<T>, item: T) -> bool {
    match sender.try_send(item) {
        Ok(()) => true,
        Err(TrySendError::Full(_)) | Err(TrySendError::Disconnected(_)) => false,
    }
}
