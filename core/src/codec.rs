//! The binary encoding of records and of the store's small metadata files, with checksums.
//!
//! Every unit on disk is a *frame*:
//!
//! ```text
//! [payload_len: u32 LE][payload_crc: u32 LE][header_crc: u32 LE = crc32(bytes 0..8)][payload]
//! ```
//!
//! The header carries its own checksum so that a flipped length byte is reported as corruption,
//! never mistaken for a frame that runs past the end of the file (a torn write). Decoding tells the
//! two apart: `DecodeError::Torn` when the bytes end before the frame does (what a crash in the
//! middle of a write leaves), `DecodeError::Corrupt` when bytes are present but wrong. The payload
//! starts with a kind byte, so an entry can never be read as a metadata record or the reverse.
//! Integers are little-endian; strings and bodies are length-prefixed (u32).

use crate::record::{Command, Entry, Headers, Offset, Token};
use crate::storage::{HardState, SealedState, StoreMeta};
use std::collections::BTreeMap;

/// Bytes in a frame header.
pub const FRAME_HEADER_BYTES: usize = 12;

/// The largest payload a frame may carry; a longer length is corruption, never an allocation.
pub const PAYLOAD_BYTES_MAX: usize = 64 << 20;

const KIND_ENTRY: u8 = b'E';
const KIND_HARD_STATE: u8 = b'H';
const KIND_SEALED: u8 = b'S';
const KIND_META: u8 = b'M';

const COMMAND_WRITE: u8 = 1;
const COMMAND_TRIM: u8 = 2;
const COMMAND_FENCE: u8 = 3;
const COMMAND_NOOP: u8 = 4;

/// Why bytes did not decode.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DecodeError {
    /// The bytes end before the frame does: a torn write (or a short buffer).
    Torn { needed: usize, available: usize },
    /// Bytes are present but no writer produced them: bad checksum, impossible length, malformed
    /// payload.
    Corrupt { reason: String },
}

impl std::fmt::Display for DecodeError {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DecodeError::Torn { needed, available } => write!(
                formatter,
                "torn frame: needs {needed} bytes, only {available} present"
            ),
            DecodeError::Corrupt { reason } => write!(formatter, "corrupt frame: {reason}"),
        }
    }
}

fn corrupt(reason: impl Into<String>) -> DecodeError {
    DecodeError::Corrupt {
        reason: reason.into(),
    }
}

/// Appends one frame to `out`, its payload written by `write_payload`.
fn put_frame(out: &mut Vec<u8>, write_payload: impl FnOnce(&mut Vec<u8>)) {
    let frame_start = out.len();
    out.extend_from_slice(&[0u8; FRAME_HEADER_BYTES]);
    write_payload(out);
    let payload_len = out.len() - frame_start - FRAME_HEADER_BYTES;
    assert!(
        payload_len <= PAYLOAD_BYTES_MAX,
        "record too large to encode"
    );
    let payload_crc = crc32fast::hash(&out[frame_start + FRAME_HEADER_BYTES..]);
    out[frame_start..frame_start + 4].copy_from_slice(&(payload_len as u32).to_le_bytes());
    out[frame_start + 4..frame_start + 8].copy_from_slice(&payload_crc.to_le_bytes());
    let header_crc = crc32fast::hash(&out[frame_start..frame_start + 8]);
    out[frame_start + 8..frame_start + 12].copy_from_slice(&header_crc.to_le_bytes());
}

/// Reads one frame from the front of `buffer`: its payload and the frame's total length.
pub fn take_frame(buffer: &[u8]) -> Result<(&[u8], usize), DecodeError> {
    if buffer.len() < FRAME_HEADER_BYTES {
        return Err(DecodeError::Torn {
            needed: FRAME_HEADER_BYTES,
            available: buffer.len(),
        });
    }
    let header_crc = u32::from_le_bytes([buffer[8], buffer[9], buffer[10], buffer[11]]);
    if crc32fast::hash(&buffer[0..8]) != header_crc {
        return Err(corrupt("frame header checksum mismatch"));
    }
    let payload_len = u32::from_le_bytes([buffer[0], buffer[1], buffer[2], buffer[3]]) as usize;
    if payload_len > PAYLOAD_BYTES_MAX {
        return Err(corrupt(format!(
            "payload length {payload_len} above the maximum {PAYLOAD_BYTES_MAX}"
        )));
    }
    let frame_len = FRAME_HEADER_BYTES + payload_len;
    if buffer.len() < frame_len {
        return Err(DecodeError::Torn {
            needed: frame_len,
            available: buffer.len(),
        });
    }
    let payload = &buffer[FRAME_HEADER_BYTES..frame_len];
    let payload_crc = u32::from_le_bytes([buffer[4], buffer[5], buffer[6], buffer[7]]);
    if crc32fast::hash(payload) != payload_crc {
        return Err(corrupt("payload checksum mismatch"));
    }
    Ok((payload, frame_len))
}

fn put_u8(out: &mut Vec<u8>, value: u8) {
    out.push(value);
}

fn put_u32(out: &mut Vec<u8>, value: u32) {
    out.extend_from_slice(&value.to_le_bytes());
}

fn put_u64(out: &mut Vec<u8>, value: u64) {
    out.extend_from_slice(&value.to_le_bytes());
}

fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    put_u32(out, bytes.len() as u32);
    out.extend_from_slice(bytes);
}

fn put_headers(out: &mut Vec<u8>, headers: &Headers) {
    put_u32(out, headers.0.len() as u32);
    for (key, value) in &headers.0 {
        put_bytes(out, key.as_bytes());
        put_bytes(out, value.as_bytes());
    }
}

fn put_option_u64(out: &mut Vec<u8>, value: Option<u64>) {
    match value {
        None => put_u8(out, 0),
        Some(value) => {
            put_u8(out, 1);
            put_u64(out, value);
        }
    }
}

/// A reader over a payload whose checksum already matched; every read is bounds-checked.
struct Payload<'a> {
    bytes: &'a [u8],
    position: usize,
}

impl<'a> Payload<'a> {
    fn take(&mut self, count: usize) -> Result<&'a [u8], DecodeError> {
        let end = self
            .position
            .checked_add(count)
            .filter(|end| *end <= self.bytes.len())
            .ok_or_else(|| {
                corrupt(format!(
                    "payload ends inside a field at byte {}",
                    self.position
                ))
            })?;
        let slice = &self.bytes[self.position..end];
        self.position = end;
        Ok(slice)
    }

    fn u8(&mut self) -> Result<u8, DecodeError> {
        Ok(self.take(1)?[0])
    }

    fn u32(&mut self) -> Result<u32, DecodeError> {
        let bytes = self.take(4)?;
        Ok(u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]))
    }

    fn u64(&mut self) -> Result<u64, DecodeError> {
        let bytes = self.take(8)?;
        let mut array = [0u8; 8];
        array.copy_from_slice(bytes);
        Ok(u64::from_le_bytes(array))
    }

    fn bytes(&mut self) -> Result<&'a [u8], DecodeError> {
        let len = self.u32()? as usize;
        self.take(len)
    }

    fn string(&mut self) -> Result<String, DecodeError> {
        let bytes = self.bytes()?;
        String::from_utf8(bytes.to_vec()).map_err(|_| corrupt("header is not UTF-8"))
    }

    fn headers(&mut self) -> Result<Headers, DecodeError> {
        let count = self.u32()?;
        let mut map = BTreeMap::new();
        for _ in 0..count {
            let key = self.string()?;
            let value = self.string()?;
            if map.insert(key, value).is_some() {
                return Err(corrupt("duplicate header key"));
            }
        }
        Ok(Headers(map))
    }

    fn option_u64(&mut self) -> Result<Option<u64>, DecodeError> {
        match self.u8()? {
            0 => Ok(None),
            1 => Ok(Some(self.u64()?)),
            flag => Err(corrupt(format!("bad option flag {flag}"))),
        }
    }

    fn finish(&self) -> Result<(), DecodeError> {
        if self.position == self.bytes.len() {
            Ok(())
        } else {
            Err(corrupt(format!(
                "{} trailing bytes after the payload",
                self.bytes.len() - self.position
            )))
        }
    }
}

/// The payload length `encode_entry` gives `entry`, without encoding it (the stores refuse an
/// entry above `PAYLOAD_BYTES_MAX` before it reaches a file).
pub fn entry_payload_bytes(entry: &Entry) -> usize {
    let headers_bytes = |headers: &Headers| {
        4 + headers
            .0
            .iter()
            .map(|(key, value)| 8 + key.len() + value.len())
            .sum::<usize>()
    };
    let command_bytes = match &entry.command {
        Command::Write { body, headers } => 4 + body.len() + headers_bytes(headers),
        Command::Trim { headers, fence, .. } => {
            8 + headers_bytes(headers) + if fence.is_some() { 9 } else { 1 }
        }
        Command::Fence { .. } => 16,
        Command::Noop => 0,
    };
    1 + 8 + 8 + 1 + command_bytes
}

/// Appends the frame of `entry` to `out`.
pub fn encode_entry(entry: &Entry, out: &mut Vec<u8>) {
    put_frame(out, |payload| {
        put_u8(payload, KIND_ENTRY);
        put_u64(payload, entry.offset);
        put_u64(payload, entry.term);
        match &entry.command {
            Command::Write { body, headers } => {
                put_u8(payload, COMMAND_WRITE);
                put_bytes(payload, body);
                put_headers(payload, headers);
            }
            Command::Trim {
                floor,
                headers,
                fence,
            } => {
                put_u8(payload, COMMAND_TRIM);
                put_u64(payload, *floor);
                put_headers(payload, headers);
                put_option_u64(payload, fence.map(|token| token.0));
            }
            Command::Fence { new, old } => {
                put_u8(payload, COMMAND_FENCE);
                put_u64(payload, new.0);
                put_u64(payload, old.0);
            }
            Command::Noop => put_u8(payload, COMMAND_NOOP),
        }
    });
}

/// Decodes the entry framed at the front of `buffer`; returns it and the frame's length in bytes.
pub fn decode_entry(buffer: &[u8]) -> Result<(Entry, usize), DecodeError> {
    let (bytes, frame_len) = take_frame(buffer)?;
    let mut payload = Payload { bytes, position: 0 };
    let kind = payload.u8()?;
    if kind != KIND_ENTRY {
        return Err(corrupt(format!("expected an entry, found kind {kind}")));
    }
    let offset = payload.u64()?;
    let term = payload.u64()?;
    let command = match payload.u8()? {
        COMMAND_WRITE => {
            let body = payload.bytes()?.to_vec();
            let headers = payload.headers()?;
            Command::Write { body, headers }
        }
        COMMAND_TRIM => {
            let floor = payload.u64()?;
            let headers = payload.headers()?;
            let fence = payload.option_u64()?.map(Token);
            Command::Trim {
                floor,
                headers,
                fence,
            }
        }
        COMMAND_FENCE => {
            let new = Token(payload.u64()?);
            let old = Token(payload.u64()?);
            Command::Fence { new, old }
        }
        COMMAND_NOOP => Command::Noop,
        tag => return Err(corrupt(format!("unknown command tag {tag}"))),
    };
    payload.finish()?;
    if offset == 0 {
        return Err(corrupt("entry at offset 0"));
    }
    Ok((
        Entry {
            offset,
            term,
            command,
        },
        frame_len,
    ))
}

/// The whole content of the promise file.
pub fn encode_hard_state(hard_state: &HardState) -> Vec<u8> {
    let mut out = Vec::new();
    put_frame(&mut out, |payload| {
        put_u8(payload, KIND_HARD_STATE);
        put_u64(payload, hard_state.term);
        put_option_u64(payload, hard_state.vote.map(u64::from));
    });
    out
}

/// Decodes a whole promise file (one frame, nothing after it).
pub fn decode_hard_state(buffer: &[u8]) -> Result<HardState, DecodeError> {
    let (bytes, frame_len) = take_frame(buffer)?;
    if frame_len != buffer.len() {
        return Err(corrupt("bytes after the promise frame"));
    }
    let mut payload = Payload { bytes, position: 0 };
    if payload.u8()? != KIND_HARD_STATE {
        return Err(corrupt("not a promise record"));
    }
    let term = payload.u64()?;
    let vote = match payload.option_u64()? {
        None => None,
        Some(vote) => Some(u32::try_from(vote).map_err(|_| corrupt("vote out of range"))?),
    };
    payload.finish()?;
    Ok(HardState { term, vote })
}

/// The whole content of the sealed-state file: the store's first held offset and the sealed state.
pub fn encode_sealed(start: Offset, sealed: &SealedState) -> Vec<u8> {
    let mut out = Vec::new();
    put_frame(&mut out, |payload| {
        put_u8(payload, KIND_SEALED);
        put_u64(payload, start);
        put_u64(payload, sealed.writer.0);
        put_u64(payload, sealed.floor);
        match &sealed.floor_tag {
            None => put_u8(payload, 0),
            Some(headers) => {
                put_u8(payload, 1);
                put_headers(payload, headers);
            }
        }
        put_option_u64(payload, sealed.floor_trim);
        put_u64(payload, sealed.base_offset);
        put_u64(payload, sealed.base_term);
    });
    out
}

/// Decodes a whole sealed-state file.
pub fn decode_sealed(buffer: &[u8]) -> Result<(Offset, SealedState), DecodeError> {
    let (bytes, frame_len) = take_frame(buffer)?;
    if frame_len != buffer.len() {
        return Err(corrupt("bytes after the sealed-state frame"));
    }
    let mut payload = Payload { bytes, position: 0 };
    if payload.u8()? != KIND_SEALED {
        return Err(corrupt("not a sealed-state record"));
    }
    let start = payload.u64()?;
    let writer = Token(payload.u64()?);
    let floor = payload.u64()?;
    let floor_tag = match payload.u8()? {
        0 => None,
        1 => Some(payload.headers()?),
        flag => return Err(corrupt(format!("bad option flag {flag}"))),
    };
    let floor_trim = payload.option_u64()?;
    let base_offset = payload.u64()?;
    let base_term = payload.u64()?;
    payload.finish()?;
    if start == 0 {
        return Err(corrupt("sealed start offset 0"));
    }
    Ok((
        start,
        SealedState {
            writer,
            floor,
            floor_tag,
            floor_trim,
            base_offset,
            base_term,
        },
    ))
}

/// The whole content of the file store's meta file: its layout and its synced mark.
pub fn encode_meta(meta: &StoreMeta) -> Vec<u8> {
    let mut out = Vec::new();
    put_frame(&mut out, |payload| {
        put_u8(payload, KIND_META);
        put_u64(payload, meta.records_per_segment);
        put_u64(payload, meta.synced_mark);
    });
    out
}

/// Decodes a whole meta file (one frame, nothing after it).
pub fn decode_meta(buffer: &[u8]) -> Result<StoreMeta, DecodeError> {
    let (bytes, frame_len) = take_frame(buffer)?;
    if frame_len != buffer.len() {
        return Err(corrupt("bytes after the meta frame"));
    }
    let mut payload = Payload { bytes, position: 0 };
    if payload.u8()? != KIND_META {
        return Err(corrupt("not a meta record"));
    }
    let records_per_segment = payload.u64()?;
    let synced_mark = payload.u64()?;
    payload.finish()?;
    if records_per_segment == 0 {
        return Err(corrupt("a layout of 0 records per segment"));
    }
    Ok(StoreMeta {
        records_per_segment,
        synced_mark,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn samples() -> Vec<Entry> {
        let mut headers = Headers::with_epoch(7);
        headers.0.insert("k".to_string(), "v".to_string());
        vec![
            Entry {
                offset: 1,
                term: 1,
                command: Command::Noop,
            },
            Entry {
                offset: 2,
                term: 1,
                command: Command::Write {
                    body: b"hello".to_vec(),
                    headers: headers.clone(),
                },
            },
            Entry {
                offset: 3,
                term: 2,
                command: Command::Trim {
                    floor: 2,
                    headers: headers.clone(),
                    fence: Some(Token(9)),
                },
            },
            Entry {
                offset: 4,
                term: 2,
                command: Command::Trim {
                    floor: 3,
                    headers: Headers::default(),
                    fence: None,
                },
            },
            Entry {
                offset: u64::MAX,
                term: u64::MAX,
                command: Command::Fence {
                    new: Token(5),
                    old: Token(4),
                },
            },
        ]
    }

    #[test]
    fn entry_round_trip() {
        // Proves every command kind decodes to exactly what was encoded, frame length included, and
        // that the size computed without encoding is the size encoded.
        for entry in samples() {
            let mut bytes = Vec::new();
            encode_entry(&entry, &mut bytes);
            let (decoded, used) = decode_entry(&bytes).expect("decodes");
            assert_eq!(decoded, entry);
            assert_eq!(used, bytes.len());
            assert_eq!(
                entry_payload_bytes(&entry) + FRAME_HEADER_BYTES,
                bytes.len()
            );
        }
    }

    #[test]
    fn every_flipped_byte_is_detected_as_corrupt() {
        // Proves any change to a single byte anywhere in a frame (header or payload, every one of
        // the 255 wrong values) is reported as corruption, never decoded and never mistaken for a
        // torn write.
        for entry in samples() {
            let mut bytes = Vec::new();
            encode_entry(&entry, &mut bytes);
            for index in 0..bytes.len() {
                for mask in 1..=255u8 {
                    let mut flipped = bytes.clone();
                    flipped[index] ^= mask;
                    match decode_entry(&flipped) {
                        Err(DecodeError::Corrupt { .. }) => {}
                        other => panic!("xor {mask} at byte {index} gave {other:?}"),
                    }
                }
            }
        }
    }

    #[test]
    fn truncated_frame_is_torn() {
        // Proves every strict prefix of a frame decodes as Torn (what a crash mid-write leaves).
        for entry in samples() {
            let mut bytes = Vec::new();
            encode_entry(&entry, &mut bytes);
            for len in 0..bytes.len() {
                // Short of a header, the header is what is missing; past it, the whole frame.
                let whole = if len < FRAME_HEADER_BYTES {
                    FRAME_HEADER_BYTES
                } else {
                    bytes.len()
                };
                match decode_entry(&bytes[..len]) {
                    Err(DecodeError::Torn { needed, available }) => {
                        assert_eq!((needed, available), (whole, len))
                    }
                    other => panic!("prefix of {len} bytes gave {other:?}"),
                }
            }
        }
    }

    #[test]
    fn decode_errors_say_what_went_wrong() {
        // Proves the text recovery puts in a torn tail's reason and a corrupt file's error: how
        // many bytes a torn frame needed and had, and why a frame is corrupt.
        assert_eq!(
            decode_entry(&[0u8; 3]).map(|_| ()).unwrap_err().to_string(),
            "torn frame: needs 12 bytes, only 3 present"
        );
        let mut bytes = Vec::new();
        encode_entry(&samples()[0], &mut bytes);
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        assert_eq!(
            decode_entry(&bytes).map(|_| ()).unwrap_err().to_string(),
            "corrupt frame: payload checksum mismatch"
        );
    }

    #[test]
    fn the_largest_payload_length_is_a_frame_and_one_more_is_corrupt() {
        // Proves the length limit is inclusive: a good header announcing exactly
        // `PAYLOAD_BYTES_MAX` payload bytes is a frame whose bytes have not arrived (a torn
        // write), while one byte more is corruption, never an allocation.
        let header = |payload_len: usize| {
            let mut bytes = Vec::new();
            bytes.extend_from_slice(&(payload_len as u32).to_le_bytes());
            bytes.extend_from_slice(&0u32.to_le_bytes());
            let header_crc = crc32fast::hash(&bytes);
            bytes.extend_from_slice(&header_crc.to_le_bytes());
            bytes
        };
        assert_eq!(
            take_frame(&header(PAYLOAD_BYTES_MAX)),
            Err(DecodeError::Torn {
                needed: FRAME_HEADER_BYTES + PAYLOAD_BYTES_MAX,
                available: FRAME_HEADER_BYTES,
            })
        );
        assert!(matches!(
            take_frame(&header(PAYLOAD_BYTES_MAX + 1)),
            Err(DecodeError::Corrupt { .. })
        ));
    }

    #[test]
    fn metadata_round_trip_and_kinds_do_not_mix() {
        // Proves the promise and sealed files round-trip, and that an entry frame is refused where
        // a promise is expected (the kind byte keeps them apart).
        let hard_state = HardState {
            term: 12,
            vote: Some(2),
        };
        assert_eq!(
            decode_hard_state(&encode_hard_state(&hard_state)),
            Ok(hard_state)
        );
        let sealed = SealedState {
            writer: Token(3),
            floor: 9,
            floor_tag: Some(Headers::with_epoch(4)),
            floor_trim: Some(11),
            base_offset: 8,
            base_term: 2,
        };
        assert_eq!(
            decode_sealed(&encode_sealed(9, &sealed)),
            Ok((9, sealed.clone()))
        );
        let mut entry_bytes = Vec::new();
        encode_entry(&samples()[0], &mut entry_bytes);
        assert!(matches!(
            decode_hard_state(&entry_bytes),
            Err(DecodeError::Corrupt { .. })
        ));
        assert!(matches!(
            decode_sealed(&encode_hard_state(&hard_state)),
            Err(DecodeError::Corrupt { .. })
        ));
    }

    #[test]
    fn garbage_never_panics() {
        // Proves decoding arbitrary bytes (including a valid header over a bogus payload) returns an
        // error or a value, never a panic.
        let mut state: u32 = 1;
        for len in 0..200usize {
            let mut bytes = Vec::with_capacity(len);
            for _ in 0..len {
                state = state.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                bytes.push((state >> 16) as u8);
            }
            let _ = decode_entry(&bytes);
            let _ = decode_hard_state(&bytes);
            let _ = decode_sealed(&bytes);
            // A well-formed frame around a random payload: the checksums pass, the payload parser
            // must still refuse cleanly.
            let mut framed = Vec::new();
            put_frame(&mut framed, |payload| payload.extend_from_slice(&bytes));
            assert!(decode_entry(&framed).is_err() || bytes.first() == Some(&KIND_ENTRY));
            let _ = decode_hard_state(&framed);
            let _ = decode_sealed(&framed);
        }
    }
}
