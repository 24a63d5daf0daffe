//! A fault-injecting TCP proxy on one directed peer link (the Vörtex pattern: no root, no
//! iptables, loopback only). Node `from` is told that node `to` lives at the proxy's address; the
//! proxy forwards whole frames (it reads the length prefix, so a dropped message never tears the
//! stream) and applies the link's faults as they stand for each frame:
//! - `cut`: the link is partitioned: open connections are closed and new ones refused (a
//!   one-way partition is one cut link; a full one cuts both directions);
//! - `drop_per_million`: each frame after the `PeerHello` is dropped with this chance;
//! - `delay_millis`: each frame waits this long before it is forwarded (in order, like a slow
//!   TCP path).

use crate::frame;
use felix_core::record::NodeId;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::io::{BufReader, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// The faults of one link, changed by the nemesis while frames flow.
#[derive(Default, Debug)]
pub struct LinkFaults {
    pub cut: AtomicBool,
    pub drop_per_million: AtomicU32,
    pub delay_millis: AtomicU32,
}

impl LinkFaults {
    pub fn heal(&self) {
        self.cut.store(false, Ordering::SeqCst);
        self.drop_per_million.store(0, Ordering::SeqCst);
        self.delay_millis.store(0, Ordering::SeqCst);
    }
}

/// One directed link's proxy.
pub struct Proxy {
    pub from: NodeId,
    pub to: NodeId,
    pub address: SocketAddr,
    pub faults: Arc<LinkFaults>,
}

impl Proxy {
    /// Listens on a fresh 127.0.0.1 port and forwards to `target` until `stop` is set.
    pub fn start(
        from: NodeId,
        to: NodeId,
        target: SocketAddr,
        seed: u64,
        stop: Arc<AtomicBool>,
    ) -> std::io::Result<Proxy> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        listener.set_nonblocking(true)?;
        let address = listener.local_addr()?;
        let faults = Arc::new(LinkFaults::default());
        let shared = faults.clone();
        std::thread::spawn(move || {
            let mut connection = 0u64;
            while !stop.load(Ordering::SeqCst) {
                match listener.accept() {
                    Ok((stream, _)) => {
                        connection += 1;
                        if shared.cut.load(Ordering::SeqCst) {
                            let _ = stream.shutdown(Shutdown::Both);
                            continue;
                        }
                        let faults = shared.clone();
                        let stop = stop.clone();
                        let seed = seed ^ connection.wrapping_mul(0x9e37_79b9_7f4a_7c15);
                        std::thread::spawn(move || pump(stream, target, faults, seed, stop));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        Ok(Proxy {
            from,
            to,
            address,
            faults,
        })
    }
}

/// Forwards frames from `incoming` to a fresh connection to `target`.
fn pump(
    incoming: TcpStream,
    target: SocketAddr,
    faults: Arc<LinkFaults>,
    seed: u64,
    stop: Arc<AtomicBool>,
) {
    let Ok(mut outgoing) = TcpStream::connect_timeout(&target, Duration::from_millis(200)) else {
        let _ = incoming.shutdown(Shutdown::Both);
        return;
    };
    let _ = outgoing.set_nodelay(true);
    let _ = outgoing.set_write_timeout(Some(Duration::from_secs(1)));
    // A read timeout lets an idle pump notice a cut or the end of the run.
    let _ = incoming.set_read_timeout(Some(Duration::from_millis(100)));
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let Ok(clone) = incoming.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(clone);
    let mut first = true;
    loop {
        if stop.load(Ordering::SeqCst) || faults.cut.load(Ordering::SeqCst) {
            break;
        }
        let payload = match frame::read_payload(&mut reader) {
            Ok(Some(payload)) => payload,
            Ok(None) => break,
            Err(frame::FrameError::Io(error))
                if matches!(
                    error.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                // No frame began within the timeout (a timeout inside a frame ends the link).
                continue;
            }
            Err(_) => break,
        };
        if faults.cut.load(Ordering::SeqCst) {
            break;
        }
        let drop_chance = faults.drop_per_million.load(Ordering::SeqCst);
        if !first && drop_chance > 0 && rng.random_range(0..1_000_000u32) < drop_chance {
            continue;
        }
        first = false;
        let delay = faults.delay_millis.load(Ordering::SeqCst);
        if delay > 0 {
            std::thread::sleep(Duration::from_millis(u64::from(delay)));
        }
        let length = (payload.len() as u32).to_be_bytes();
        if outgoing.write_all(&length).is_err() || outgoing.write_all(&payload).is_err() {
            break;
        }
    }
    let _ = incoming.shutdown(Shutdown::Both);
    let _ = outgoing.shutdown(Shutdown::Both);
}
