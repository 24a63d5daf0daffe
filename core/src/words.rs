//! Records, requests and their parts in words: the vocabulary shared by the simulator's renderer
//! (`felix_sim::describe`, which re-exports these) and the audits' findings, so a finding names a
//! record exactly as a replay summary does. Deterministic text, no `Debug`.

use crate::api::{ReadFrom, Request};
use crate::client::checkpoint::RunRecord;
use crate::record::{Command, Entry, Headers, NodeId, Token};

/// A node's name in traces.
pub fn node(id: NodeId) -> String {
    format!("n{id}")
}

/// Headers as `{key=value,...}`; empty headers as `{}`.
pub fn headers(headers: &Headers) -> String {
    let pairs: Vec<String> = headers
        .0
        .iter()
        .map(|(key, value)| format!("{key}={value}"))
        .collect();
    format!("{{{}}}", pairs.join(","))
}

/// A body: checkpoint run records by kind, UTF-8 text quoted, anything else in hex.
pub fn body(body: &[u8]) -> String {
    if let Some(record) = RunRecord::decode(body) {
        return match record {
            RunRecord::Begin => "ckpt-begin".to_string(),
            RunRecord::Chunk { index, .. } => format!("ckpt-chunk#{index}"),
            RunRecord::End { chunks, .. } => format!("ckpt-end({chunks} chunks)"),
            RunRecord::Malformed => "ckpt-malformed".to_string(),
        };
    }
    match std::str::from_utf8(body) {
        Ok(text) if text.chars().all(|c| !c.is_control()) => format!("{text:?}"),
        _ => {
            let hex: Vec<String> = body.iter().map(|byte| format!("{byte:02x}")).collect();
            format!("0x{}", hex.join(""))
        }
    }
}

pub fn headers_suffix(value: &Headers) -> String {
    if value.0.is_empty() {
        String::new()
    } else {
        format!(" {}", headers(value))
    }
}

/// A command, as a log listing shows it.
pub fn command(command: &Command) -> String {
    match command {
        Command::Write {
            body: bytes,
            headers: value,
        } => format!("write {}{}", body(bytes), headers_suffix(value)),
        Command::Trim {
            floor,
            headers: value,
            fence,
        } => {
            let fence = fence
                .map(|token| format!(" fence={}", token.0))
                .unwrap_or_default();
            format!("trim floor={floor}{fence}{}", headers_suffix(value))
        }
        Command::Fence { new, old } => format!("fence {}->{}", old.0, new.0),
        Command::Noop => "noop".to_string(),
    }
}

/// A record as `offset@term command`.
pub fn entry(entry: &Entry) -> String {
    format!(
        "{}@{} {}",
        entry.offset,
        entry.term,
        command(&entry.command)
    )
}

pub fn read_from(from: ReadFrom) -> String {
    match from {
        ReadFrom::Offset(offset) => format!("from {offset}"),
        ReadFrom::Earliest => "from earliest".to_string(),
    }
}

pub fn conditions(expected_tail: Option<u64>, fence: Option<Token>) -> String {
    let mut text = String::new();
    if let Some(tail) = expected_tail {
        text.push_str(&format!(" tail={tail}"));
    }
    if let Some(token) = fence {
        text.push_str(&format!(" fence={}", token.0));
    }
    text
}

/// A client request.
pub fn request(request: &Request) -> String {
    match request {
        Request::Append {
            expected_tail,
            fence,
            body: bytes,
            headers: value,
        } => format!(
            "Append {}{}{}",
            body(bytes),
            conditions(*expected_tail, *fence),
            headers_suffix(value)
        ),
        Request::Trim {
            expected_tail,
            fence,
            floor,
            headers: value,
        } => format!(
            "Trim floor={floor}{}{}",
            conditions(*expected_tail, *fence),
            headers_suffix(value)
        ),
        Request::Fence { new, old } => format!("Fence {}->{}", old.0, new.0),
        Request::Read { from, .. } => format!("Read {}", read_from(*from)),
    }
}

/// A vote: the node voted for, or `none`.
pub fn vote(vote: Option<NodeId>) -> String {
    vote.map(node).unwrap_or_else(|| "none".to_string())
}
