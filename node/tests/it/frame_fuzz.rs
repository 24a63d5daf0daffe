//! The frame decoder is an attack surface: any bytes a peer or a client can send are refused
//! with an error, never a panic, and never an allocation above the frame limit.

use felix_core::api::{ReadFrom, Request};
use felix_node::frame::{self, Frame, FRAME_BYTES_MAX, VERSION};
use proptest::prelude::*;

fn valid_frames() -> Vec<Vec<u8>> {
    vec![
        frame::encode(&Frame::PeerHello { from: 1, to: 2 }),
        frame::encode(&Frame::StatusRequest { request_id: 9 }),
        frame::encode(&Frame::Request {
            request_id: 3,
            request: Request::Read {
                from: ReadFrom::Offset(4),
                max_records: 5,
            },
        }),
        frame::encode(&Frame::Request {
            request_id: 4,
            request: Request::Append {
                expected_tail: Some(7),
                fence: None,
                body: b"hello".to_vec(),
                headers: Default::default(),
            },
        }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// Arbitrary bytes: an error or a frame, never a panic.
    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let mut reader = &bytes[..];
        for _ in 0..8 {
            match frame::read_frame(&mut reader) {
                Ok(Some(_)) => continue,
                Ok(None) | Err(_) => break,
            }
        }
    }

    /// A well-formed length and version with an arbitrary body: refused or decoded, no panic.
    #[test]
    fn arbitrary_bodies_never_panic(body in proptest::collection::vec(any::<u8>(), 0..512)) {
        let mut bytes = ((body.len() + 1) as u32).to_be_bytes().to_vec();
        bytes.push(VERSION);
        bytes.extend_from_slice(&body);
        let mut reader = &bytes[..];
        let _ = frame::read_frame(&mut reader);
    }

    /// A valid frame with bytes flipped, cut or extended: never a panic; untouched, it round-trips.
    #[test]
    fn mutated_frames_never_panic(
        which in 0usize..4,
        flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 0..6),
        cut in any::<usize>(),
    ) {
        let original = valid_frames()[which].clone();
        let mut reader = &original[..];
        let decoded = matches!(frame::read_frame(&mut reader), Ok(Some(_)));
        prop_assert!(decoded);
        let mut bytes = original.clone();
        for (at, value) in flips {
            let index = at % bytes.len();
            bytes[index] = value;
        }
        bytes.truncate(cut % (bytes.len() + 1));
        let mut reader = &bytes[..];
        let _ = frame::read_frame(&mut reader);
    }

    /// Any length prefix above the limit is refused before reading the body.
    #[test]
    fn oversized_lengths_are_refused(length in (FRAME_BYTES_MAX + 1)..=u32::MAX) {
        let bytes = length.to_be_bytes();
        let mut reader = &bytes[..];
        let refused = matches!(frame::read_frame(&mut reader), Err(frame::FrameError::Size { .. }));
        prop_assert!(refused);
    }
}
