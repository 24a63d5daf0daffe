//! Describe functions: how the scripted driver renders requests, replies, messages, records and
//! history events as protocol-trace lines.
//!
//! Scenario expectations are golden text, so every function here is deterministic: maps are
//! BTreeMaps, no addresses, no timings, no `Debug` of types whose layout may change. Names are
//! the ones DESIGN.md uses (`CursorTooOld`, `TrimmedTo`, floor, tail, tag).

use felix_core::api::{InvalidRequest, ReadFrom, ReadRecord, Reply, Request};
use felix_core::broker::{AppendResult, Message};
use felix_core::client::checkpoint::RunRecord;
use felix_core::history::Event;
use felix_core::storage::SealedState;
use felix_core::{Command, Entry, Headers, NodeId, Token};

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

fn headers_suffix(value: &Headers) -> String {
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

fn read_from(from: ReadFrom) -> String {
    match from {
        ReadFrom::Offset(offset) => format!("from {offset}"),
        ReadFrom::Earliest => "from earliest".to_string(),
    }
}

fn conditions(expected_tail: Option<u64>, fence: Option<Token>) -> String {
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

/// A record a reader was served.
pub fn read_record(record: &ReadRecord) -> String {
    format!(
        "{} {}{}",
        record.offset,
        body(&record.body),
        headers_suffix(&record.headers)
    )
}

/// A broker's answer.
pub fn reply(reply: &Reply) -> String {
    match reply {
        Reply::Appended { offset, tail } => format!("Appended at {offset} (tail {tail})"),
        Reply::TrimNoop { tail } => format!("TrimNoop (tail {tail})"),
        Reply::OffsetMismatch { tail } => format!("OffsetMismatch (tail {tail})"),
        Reply::FenceMismatch { current } => format!("FenceMismatch (current {})", current.0),
        Reply::TruncateRefused { current } => format!("TruncateRefused (current {})", current.0),
        Reply::Records { records, next } => {
            let listed: Vec<String> = records.iter().map(read_record).collect();
            format!("Records [{}] next {next}", listed.join(", "))
        }
        Reply::CursorTooOld { floor, tag } => match tag {
            Some(tag) => format!("CursorTooOld floor {floor} tag {}", headers(tag)),
            None => format!("CursorTooOld floor {floor} untagged"),
        },
        Reply::NotHeld { from } => format!("NotHeld from {from}"),
        Reply::NotLeader { hint } => match hint {
            Some(hint) => format!("NotLeader (hint {})", node(*hint)),
            None => "NotLeader (no hint)".to_string(),
        },
        Reply::NoReadIndex { hint } => match hint {
            Some(hint) => format!("NoReadIndex (hint {})", node(*hint)),
            None => "NoReadIndex (no hint)".to_string(),
        },
        Reply::Invalid(invalid) => format!("Invalid: {}", invalid_request(invalid)),
    }
}

fn invalid_request(invalid: &InvalidRequest) -> String {
    match invalid {
        InvalidRequest::FloorAboveOffset { floor, offset } => {
            format!("floor {floor} above the trim's offset {offset}")
        }
        InvalidRequest::ReadPastTail { from, tail } => {
            format!("read from {from} past the committed tail {tail}")
        }
        InvalidRequest::MalformedHeaders { reason } => format!("malformed headers: {reason}"),
        InvalidRequest::TooLarge { bytes, limit } => {
            format!("{bytes} bytes, limit {limit}")
        }
    }
}

/// A sealed state, as a jump or a describe shows it.
pub fn sealed(state: &SealedState) -> String {
    let tag = state
        .floor_tag
        .as_ref()
        .map(|tag| format!(" tag {}", headers(tag)))
        .unwrap_or_default();
    format!(
        "base {}@{}, floor {}{tag}, writer {}",
        state.base_offset, state.base_term, state.floor, state.writer.0
    )
}

/// A broker-to-broker message.
pub fn message(message: &Message) -> String {
    match message {
        Message::RequestVote {
            term,
            last_offset,
            last_term,
        } => format!("RequestVote term {term} last {last_offset}@{last_term}"),
        Message::Vote { term, granted } => {
            let answer = if *granted { "granted" } else { "refused" };
            format!("Vote term {term} {answer}")
        }
        Message::AppendEntries {
            term,
            prev_offset,
            prev_term,
            entries,
            committed,
        } => {
            let listed = match (entries.first(), entries.last()) {
                (Some(first), Some(last)) if first.offset == last.offset => {
                    format!("[{}]", first.offset)
                }
                (Some(first), Some(last)) => format!("[{}..{}]", first.offset, last.offset),
                _ => "[]".to_string(),
            };
            format!(
                "AppendEntries term {term} prev {prev_offset}@{prev_term} {listed} commit {committed}"
            )
        }
        Message::AppendReply { term, result } => match result {
            AppendResult::Accepted { matched } => {
                format!("AppendReply term {term} accepted {matched}")
            }
            AppendResult::Rejected { next } => {
                format!("AppendReply term {term} rejected, next {next}")
            }
        },
        Message::TrimmedTo { point, state } => {
            format!("TrimmedTo point {point} ({})", sealed(state))
        }
        Message::ReadIndex { ask } => format!("ReadIndex ask {ask}"),
        Message::ReadIndexReply { ask, index } => match index {
            Some(index) => format!("ReadIndexReply ask {ask} index {index}"),
            None => format!("ReadIndexReply ask {ask} refused"),
        },
        Message::ReadProbe { term, round } => format!("ReadProbe term {term} round {round}"),
        Message::ReadProbeAck { term, round } => format!("ReadProbeAck term {term} round {round}"),
    }
}

fn vote(vote: Option<NodeId>) -> String {
    vote.map(node).unwrap_or_else(|| "none".to_string())
}

/// A node event from the history, or None for events a trace leaves out (`Committed` is
/// coalesced by the trace itself, `NodeState` samples are for the audits).
pub fn node_event(event: &Event) -> Option<String> {
    let line = match event {
        Event::PromiseChanged {
            node: id,
            term,
            vote: voted,
        } => {
            format!("{}: promise term {term} vote {}", node(*id), vote(*voted))
        }
        Event::BecameLeader { node: id, term } => {
            format!("{}: became leader of term {term}", node(*id))
        }
        Event::FloorApplied {
            node: id,
            floor,
            trim,
        } => match trim {
            Some(trim) => format!("{}: floor {floor} (trim at {trim})", node(*id)),
            None => format!("{}: floor {floor} (from a jump)", node(*id)),
        },
        Event::TruncateRefused {
            node: id,
            offset,
            current,
        } => format!(
            "{}: trim at {offset} refused in place (fence in force {})",
            node(*id),
            current.0
        ),
        Event::SegmentsDeleted {
            node: id,
            below,
            readable_start,
            retention,
        } => {
            let why = if *retention { " by retention" } else { "" };
            format!(
                "{}: deleted segments below {below}{why}, serves from {readable_start}",
                node(*id)
            )
        }
        Event::TrimmedToSent {
            node: id,
            to,
            point,
        } => format!("{}: TrimmedTo {} point {point}", node(*id), node(*to)),
        Event::Jumped {
            node: id,
            point,
            replica,
        } => {
            let who = if *replica { " (replica)" } else { "" };
            format!("{}{who}: jumped to trim point {point}", node(*id))
        }
        Event::Crashed { node: id } => format!("{}: crashed", node(*id)),
        Event::Restarted { node: id } => format!("{}: restarted", node(*id)),
        _ => return None,
    };
    Some(line)
}
