//! Records, requests and their parts in words: the vocabulary shared by the simulator's renderer
//! (`felix_sim::render::describe`, which re-exports these) and the audits' findings, so a finding names a
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn two_headers() -> Headers {
        let mut map = BTreeMap::new();
        map.insert("epoch".to_string(), "3".to_string());
        map.insert("a".to_string(), "b".to_string());
        Headers(map)
    }

    /// Nodes, votes and headers read the same in a replay summary and in an audit finding: `n2`,
    /// `none`, `{key=value,...}` in key order, and a headers suffix only when there are headers.
    #[test]
    fn nodes_votes_and_headers_in_words() {
        assert_eq!(node(2), "n2");
        assert_eq!(vote(Some(1)), "n1");
        assert_eq!(vote(None), "none");
        assert_eq!(headers(&Headers::default()), "{}");
        assert_eq!(headers(&two_headers()), "{a=b,epoch=3}");
        assert_eq!(headers_suffix(&Headers::default()), "");
        assert_eq!(headers_suffix(&Headers::with_epoch(4)), " {epoch=4}");
    }

    /// A body is named by its checkpoint kind when it is a run record, quoted when it is
    /// printable text, and in hex otherwise (control characters included).
    #[test]
    fn bodies_in_words() {
        assert_eq!(body(&RunRecord::Begin.encode()), "ckpt-begin");
        let chunk = RunRecord::Chunk {
            index: 7,
            payload: vec![1, 2],
        };
        assert_eq!(body(&chunk.encode()), "ckpt-chunk#7");
        let end = RunRecord::End {
            chunks: 3,
            checksum: 9,
        };
        assert_eq!(body(&end.encode()), "ckpt-end(3 chunks)");
        let mut malformed = RunRecord::Begin.encode();
        malformed.push(0);
        assert_eq!(body(&malformed), "ckpt-malformed");
        assert_eq!(body(b"w1"), "\"w1\"");
        assert_eq!(body(b"a\nb"), "0x610a62");
        assert_eq!(body(&[0xff, 0x00]), "0xff00");
    }

    /// Records and requests as a log listing shows them: conditions and headers only when present.
    #[test]
    fn records_and_requests_in_words() {
        let write = Command::Write {
            body: b"w".to_vec(),
            headers: Headers::with_epoch(1),
        };
        assert_eq!(command(&write), "write \"w\" {epoch=1}");
        let trim = Command::Trim {
            floor: 4,
            headers: Headers::default(),
            fence: Some(Token(2)),
        };
        assert_eq!(command(&trim), "trim floor=4 fence=2");
        let unfenced = Command::Trim {
            floor: 4,
            headers: Headers::with_epoch(2),
            fence: None,
        };
        assert_eq!(command(&unfenced), "trim floor=4 {epoch=2}");
        let fence = Command::Fence {
            new: Token(3),
            old: Token(1),
        };
        assert_eq!(command(&fence), "fence 1->3");
        let noop = Entry {
            offset: 5,
            term: 2,
            command: Command::Noop,
        };
        assert_eq!(entry(&noop), "5@2 noop");

        assert_eq!(read_from(ReadFrom::Offset(3)), "from 3");
        assert_eq!(read_from(ReadFrom::Earliest), "from earliest");
        assert_eq!(conditions(None, None), "");
        assert_eq!(conditions(Some(4), Some(Token(2))), " tail=4 fence=2");
        let append = Request::Append {
            expected_tail: Some(4),
            fence: None,
            body: b"x".to_vec(),
            headers: Headers::with_epoch(1),
        };
        assert_eq!(request(&append), "Append \"x\" tail=4 {epoch=1}");
        let trim = Request::Trim {
            expected_tail: None,
            fence: Some(Token(2)),
            floor: 3,
            headers: Headers::default(),
        };
        assert_eq!(request(&trim), "Trim floor=3 fence=2");
        let fence = Request::Fence {
            new: Token(2),
            old: Token(0),
        };
        assert_eq!(request(&fence), "Fence 0->2");
        let read = Request::Read {
            from: ReadFrom::Earliest,
            max_records: 8,
        };
        assert_eq!(request(&read), "Read from earliest");
    }
}
