//! The node's wires, each read back as written: peer and client frames (and the two refusals a
//! frame's header can earn), the JSON lines between the nemesis and its client processes, and
//! the `--peers` address lists.

use felix_core::api::{ReadFrom, Request};
use felix_node::addresses::parse_addresses;
use felix_node::frame::{encode, read_frame, Frame, FrameError, FRAME_BYTES_MAX};
use felix_node::nemesis::client_process::{receive, FromClient, ToClient};
use felix_node::nemesis::history::Stamped;
use felix_node::nemesis::workload::Counts;
use felix_sim::render::trace::{SimEvent, TraceEvent};

/// A frame read back is the frame written; a clean end of stream is `None`.
#[test]
fn a_frame_round_trips() {
    let frame = Frame::Request {
        request_id: 7,
        request: Request::Read {
            from: ReadFrom::Earliest,
            max_records: 3,
        },
    };
    let bytes = encode(&frame);
    let mut reader = &bytes[..];
    assert_eq!(read_frame(&mut reader).ok().flatten(), Some(frame));
    assert!(matches!(read_frame(&mut reader), Ok(None)));
}

/// A length above the limit is refused before anything is allocated.
#[test]
fn an_oversized_length_is_refused() {
    let bytes = (FRAME_BYTES_MAX + 1).to_be_bytes();
    let mut reader = &bytes[..];
    assert!(matches!(
        read_frame(&mut reader),
        Err(FrameError::Size { .. })
    ));
}

/// Another version byte is refused with its number.
#[test]
fn another_version_is_refused() {
    let mut bytes = encode(&Frame::StatusRequest { request_id: 1 });
    bytes[4] = 9;
    let mut reader = &bytes[..];
    assert!(matches!(
        read_frame(&mut reader),
        Err(FrameError::Version { version: 9 })
    ));
}

/// The wire between the nemesis and a client: a line written is the line read.
#[test]
fn messages_round_trip_as_json_lines() {
    let told = ToClient::Lease {
        epoch: 3,
        holder: Some(1),
    };
    let line = serde_json::to_string(&told).expect("serializes");
    assert_eq!(serde_json::from_str::<ToClient>(&line).ok(), Some(told));
    let counts = Counts {
        requests: 5,
        acked: 2,
        ..Counts::default()
    };
    let text = format!(
        "{}\nnot json\n{}\n",
        serde_json::to_string(&FromClient::Line(Stamped {
            time_micros: 9,
            event: TraceEvent::Sim(SimEvent::Healed),
        }))
        .expect("serializes"),
        serde_json::to_string(&FromClient::Counts(counts)).expect("serializes"),
    );
    let finished = receive(text.as_bytes());
    assert_eq!(finished.lines.len(), 1);
    assert_eq!(finished.lines[0].time_micros, 9);
    assert_eq!(finished.counts, Some(counts));
    assert_eq!(finished.skipped, 1);
}

/// Both spellings parse; a duplicate, a bad id and a bad address are refused.
#[test]
fn addresses_parse_or_explain() {
    let named = parse_addresses("1=127.0.0.1:7001,2=127.0.0.1:7002", false);
    assert_eq!(named.map(|a| a.len()), Ok(2));
    let plain = parse_addresses("127.0.0.1:7001,127.0.0.1:7002", true);
    assert_eq!(
        plain.map(|a| a.keys().copied().collect::<Vec<_>>()),
        Ok(vec![1, 2])
    );
    assert!(parse_addresses("127.0.0.1:7001", false).is_err());
    assert!(parse_addresses("1=127.0.0.1:7001,1=127.0.0.1:7002", false).is_err());
    assert!(parse_addresses("x=127.0.0.1:7001", false).is_err());
    assert!(parse_addresses("1=nowhere", false).is_err());
}
