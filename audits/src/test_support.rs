//! Builders for synthetic histories in the audits' unit tests.

use felix_core::api::{ReadFrom, ReadRecord, Reply, Request};
use felix_core::history::{Event, Phase};
use felix_core::record::{Command, Entry, Headers, NodeId, Offset, Term};

/// A write record from the holder of `epoch`; its body is its offset and epoch.
pub fn write(offset: Offset, term: Term, epoch: u64) -> Entry {
    Entry {
        offset,
        term,
        command: Command::Write {
            body: body(offset, epoch),
            headers: Headers::with_epoch(epoch),
        },
    }
}

/// The body the builders give the write at `offset` from `epoch`.
pub fn body(offset: Offset, epoch: u64) -> Vec<u8> {
    format!("{offset}/{epoch}").into_bytes()
}

/// A trim record asking for `floor`, from the holder of `epoch`.
pub fn trim(offset: Offset, term: Term, floor: Offset, epoch: u64) -> Entry {
    Entry {
        offset,
        term,
        command: Command::Trim {
            floor,
            headers: Headers::with_epoch(epoch),
            fence: None,
        },
    }
}

/// A leader noop.
pub fn noop(offset: Offset, term: Term) -> Entry {
    Entry {
        offset,
        term,
        command: Command::Noop,
    }
}

/// Leader noops at `offsets`, all of `term`.
pub fn noops(offsets: std::ops::RangeInclusive<Offset>, term: Term) -> Vec<Entry> {
    offsets.map(|offset| noop(offset, term)).collect()
}

/// `node`'s walk reached `entry`.
pub fn committed(node: NodeId, entry: Entry) -> Event {
    Event::Committed { node, entry }
}

/// A sampled node state with the fields the audits read most.
pub fn state(node: NodeId, term: Term, leader: bool, floor: Offset, committed: Offset) -> Event {
    Event::NodeState {
        node,
        term,
        vote: None,
        leader,
        floor,
        committed,
        readable_start: floor,
        floor_tag: None,
    }
}

/// The append request whose acknowledged record is `write(offset, _, epoch)`.
pub fn append_request(offset: Offset, epoch: u64) -> Request {
    Request::Append {
        expected_tail: Some(offset),
        fence: None,
        body: body(offset, epoch),
        headers: Headers::with_epoch(epoch),
    }
}

/// `client` was told the write from `epoch` landed at `offset`.
pub fn write_acked(client: u32, offset: Offset, epoch: u64) -> Event {
    Event::Replied {
        client,
        node: 0,
        request: append_request(offset, epoch),
        reply: Reply::Appended {
            offset,
            tail: offset + 1,
        },
    }
}

/// `client` was told its trim to `floor` from `epoch` landed at `offset`.
pub fn trim_acked(client: u32, offset: Offset, floor: Offset, epoch: u64) -> Event {
    Event::Replied {
        client,
        node: 0,
        request: Request::Trim {
            expected_tail: Some(offset),
            fence: None,
            floor,
            headers: Headers::with_epoch(epoch),
        },
        reply: Reply::Appended {
            offset,
            tail: offset + 1,
        },
    }
}

/// A read request from `from`.
pub fn read_request(from: Offset) -> Request {
    Request::Read {
        from: ReadFrom::Offset(from),
        max_records: 16,
    }
}

/// `client` asked `node` to read from `from`.
pub fn read_sent(client: u32, node: NodeId, from: Offset) -> Event {
    Event::Requested {
        client,
        node,
        request: read_request(from),
    }
}

/// `node` served `client` the writes at `offsets` for a read from `from`.
pub fn read_served(client: u32, node: NodeId, from: Offset, offsets: &[Offset]) -> Event {
    let records = offsets
        .iter()
        .map(|offset| ReadRecord {
            offset: *offset,
            body: body(*offset, 1),
            headers: Headers::with_epoch(1),
        })
        .collect();
    let next = offsets.last().map_or(from, |last| last + 1);
    Event::Replied {
        client,
        node,
        request: read_request(from),
        reply: Reply::Records { records, next },
    }
}

/// The end-of-run marker.
pub fn end() -> Event {
    Event::PhaseChanged { phase: Phase::End }
}
