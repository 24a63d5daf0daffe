//! One segment file of the file-backed store: its name, and a scan of its frames.
//!
//! A segment file is named by the base offset of its segment (`SegmentLayout`) and holds a run of
//! contiguous entry frames (`codec`). The scan stops at the first frame that does not decode and
//! says whether it looks like a torn tail (the bytes simply end, or nothing valid follows) or like
//! corruption in the middle (a valid frame follows the bad one); the store decides what to do,
//! because only the last segment may have a torn tail.

use felix_core::codec::{decode_entry, take_frame, DecodeError, FRAME_HEADER_BYTES};
use felix_core::record::{Entry, Offset};

const PREFIX: &str = "seg-";
const SUFFIX: &str = ".log";

/// The file name of the segment whose base offset is `base`.
pub fn file_name(base: Offset) -> String {
    format!("{PREFIX}{base:020}{SUFFIX}")
}

/// Whether `name` is meant to be a segment file (even a badly named one).
pub fn looks_like_segment(name: &str) -> bool {
    name.starts_with(PREFIX) && name.ends_with(SUFFIX)
}

/// The base offset named by a segment file name, if it is well formed.
pub fn parse_file_name(name: &str) -> Option<Offset> {
    let digits = name.strip_prefix(PREFIX)?.strip_suffix(SUFFIX)?;
    if digits.len() != 20 || !digits.bytes().all(|byte| byte.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok().filter(|base| *base >= 1)
}

/// How a scan ended.
#[derive(Debug, PartialEq, Eq)]
pub enum ScanEnd {
    /// Every byte belongs to a good frame.
    Clean,
    /// The frame at `position` did not decode.
    Bad {
        position: u64,
        error: DecodeError,
        /// A valid frame starts somewhere after `position`: the damage is in the middle, not a
        /// torn tail.
        valid_frame_after: bool,
    },
}

/// The good frames at the front of a segment file, and how the scan ended.
#[derive(Debug)]
pub struct Scan {
    pub entries: Vec<Entry>,
    /// The byte position of each entry's frame.
    pub positions: Vec<u64>,
    pub end: ScanEnd,
}

/// Scans `bytes` (a whole segment file). Never panics on any content.
pub fn scan(bytes: &[u8]) -> Scan {
    let mut entries = Vec::new();
    let mut positions = Vec::new();
    let mut position = 0usize;
    while position < bytes.len() {
        match decode_entry(&bytes[position..]) {
            Ok((entry, frame_len)) => {
                entries.push(entry);
                positions.push(position as u64);
                position += frame_len;
            }
            Err(error) => {
                let valid_frame_after = match error {
                    // A good header whose frame runs past the end: nothing can follow it.
                    DecodeError::Torn { .. } => false,
                    DecodeError::Corrupt { .. } => valid_frame_after(bytes, position),
                };
                return Scan {
                    entries,
                    positions,
                    end: ScanEnd::Bad {
                        position: position as u64,
                        error,
                        valid_frame_after,
                    },
                };
            }
        }
    }
    Scan {
        entries,
        positions,
        end: ScanEnd::Clean,
    }
}

/// Whether a frame with good checksums starts at any byte after `position`.
fn valid_frame_after(bytes: &[u8], position: usize) -> bool {
    let last_start = match bytes.len().checked_sub(FRAME_HEADER_BYTES) {
        Some(last_start) => last_start,
        None => return false,
    };
    (position + 1..=last_start).any(|start| take_frame(&bytes[start..]).is_ok())
}

#[cfg(test)]
mod tests {
    use super::*;
    use felix_core::codec::encode_entry;
    use felix_core::record::Command;

    fn frames(offsets: std::ops::RangeInclusive<Offset>) -> Vec<u8> {
        let mut bytes = Vec::new();
        for offset in offsets {
            let entry = Entry {
                offset,
                term: 1,
                command: Command::Write {
                    body: vec![offset as u8; 10],
                    headers: Default::default(),
                },
            };
            encode_entry(&entry, &mut bytes);
        }
        bytes
    }

    #[test]
    fn names_round_trip_and_bad_names_are_refused() {
        // Proves a segment name parses back to its base and malformed names parse to nothing.
        assert_eq!(parse_file_name(&file_name(17)), Some(17));
        assert_eq!(parse_file_name("seg-17.log"), None);
        assert_eq!(parse_file_name("seg-0000000000000000000x.log"), None);
        assert_eq!(parse_file_name(&file_name(0)), None);
        assert!(looks_like_segment("seg-17.log"));
        // Other files in the directory are not the store's segments (and are left alone).
        assert!(!looks_like_segment("notes.log"));
        assert!(!looks_like_segment("seg-17.txt"));
    }

    #[test]
    fn a_frame_that_is_not_an_entry_at_the_end_is_a_tail() {
        // Proves the search for a valid frame looks only after the bad one: a frame with good
        // checksums that holds no entry (a promise record), last in the file, ends the scan there
        // with nothing valid after it.
        let mut bytes = frames(1..=2);
        let position = bytes.len() as u64;
        bytes.extend_from_slice(&felix_core::codec::encode_hard_state(&Default::default()));
        let scan = scan(&bytes);
        assert_eq!(scan.entries.len(), 2);
        assert!(matches!(
            scan.end,
            ScanEnd::Bad {
                position: at,
                error: DecodeError::Corrupt { .. },
                valid_frame_after: false,
            } if at == position
        ));
    }

    #[test]
    fn scan_tells_a_torn_tail_from_damage_in_the_middle() {
        // Proves a cut frame and appended garbage end the scan as a tail (nothing valid after),
        // while a flipped byte in an early frame is followed by valid frames.
        let bytes = frames(1..=3);
        let clean = scan(&bytes);
        assert_eq!(clean.entries.len(), 3);
        assert_eq!(clean.end, ScanEnd::Clean);

        let torn = scan(&bytes[..bytes.len() - 5]);
        assert_eq!(torn.entries.len(), 2);
        assert!(matches!(
            torn.end,
            ScanEnd::Bad {
                valid_frame_after: false,
                error: DecodeError::Torn { .. },
                ..
            }
        ));

        let mut garbage = bytes.clone();
        garbage.extend_from_slice(&[0xAB; 40]);
        let tail = scan(&garbage);
        assert_eq!(tail.entries.len(), 3);
        assert!(matches!(
            tail.end,
            ScanEnd::Bad {
                valid_frame_after: false,
                ..
            }
        ));

        let mut flipped = bytes.clone();
        flipped[20] ^= 0x10;
        let middle = scan(&flipped);
        assert_eq!(middle.entries.len(), 0);
        assert!(matches!(
            middle.end,
            ScanEnd::Bad {
                position: 0,
                valid_frame_after: true,
                ..
            }
        ));
    }
}
