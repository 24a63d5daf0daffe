//! Node addresses on the command line: `1=127.0.0.1:7001,2=127.0.0.1:7002` (or, for a client,
//! a plain list `127.0.0.1:7001,127.0.0.1:7002`, numbered 1, 2, ... as `felix cluster up`
//! numbers its nodes). Parsing is the only place a typo in an address is caught: it is bad input
//! with a message naming the entry, never a panic.

use felix_core::record::NodeId;
use std::collections::BTreeMap;
use std::net::{SocketAddr, ToSocketAddrs};

/// The most nodes a cluster may name: the broker keeps per-peer state, and a typo must not make
/// a node open thousands of links.
pub const NODES_MAX: usize = 64;

/// Every node's address, by id.
pub type Addresses = BTreeMap<NodeId, SocketAddr>;

/// Resolves `host:port` to one socket address.
pub fn parse_address(text: &str) -> Result<SocketAddr, String> {
    let text = text.trim();
    if let Ok(address) = text.parse::<SocketAddr>() {
        return Ok(address);
    }
    match text.to_socket_addrs() {
        Ok(mut resolved) => resolved
            .next()
            .ok_or_else(|| format!("{text:?} resolves to no address")),
        Err(error) => Err(format!("{text:?} is not host:port ({error})")),
    }
}

/// Parses `ID=ADDR,...`; with `numbered_ok`, a list of plain addresses is numbered from 1.
pub fn parse_addresses(text: &str, numbered_ok: bool) -> Result<Addresses, String> {
    let mut addresses = Addresses::new();
    let entries: Vec<&str> = text.split(',').filter(|entry| !entry.is_empty()).collect();
    if entries.is_empty() {
        return Err("no node addresses given".to_string());
    }
    if entries.len() > NODES_MAX {
        return Err(format!(
            "{} nodes named (at most {NODES_MAX})",
            entries.len()
        ));
    }
    for (index, entry) in entries.iter().enumerate() {
        let (id, address) = match entry.split_once('=') {
            Some((id, address)) => {
                let id = id
                    .trim()
                    .parse::<NodeId>()
                    .map_err(|_| format!("{entry:?}: the node id before '=' is not a number"))?;
                (id, address)
            }
            None if numbered_ok => ((index + 1) as NodeId, *entry),
            None => return Err(format!("{entry:?} is not ID=HOST:PORT")),
        };
        let address = parse_address(address).map_err(|error| format!("{entry:?}: {error}"))?;
        if addresses.insert(id, address).is_some() {
            return Err(format!("node {id} is named twice"));
        }
    }
    Ok(addresses)
}

/// Parses a list of node ids `4,5`.
pub fn parse_ids(text: &str) -> Result<Vec<NodeId>, String> {
    text.split(',')
        .filter(|entry| !entry.is_empty())
        .map(|entry| {
            entry
                .trim()
                .parse::<NodeId>()
                .map_err(|_| format!("{entry:?} is not a node id"))
        })
        .collect()
}
