//! Storage faults on a disk's bytes (knob `storage_faults`): a flipped bit, a zeroed sector, a
//! record written at another record's place (a misdirected write), and a read that fails.
//!
//! The damage is done to the bytes a file store holding the disk's state would keep
//! (`felix_store::image`), which the disk then reads back through the core's own recovery
//! (`inspect`): whether the damage is found is the core's frame checksums and offset checks, not
//! a flag of the simulator's. Damage lands only where a store can tell it from a crash: never in
//! the last record of the newest segment file, where a damaged frame with nothing valid after it
//! reads exactly as a torn write, which recovery cuts (what `FileStore` cannot tell is listed in
//! `store/src/file.rs`).

use crate::env::rng::Stream;
use felix_audits::Counter;
use felix_store::image::Image;

/// The bytes of one disk sector.
pub const SECTOR_BYTES: u64 = 512;

/// The kinds of damage to a disk's bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Damage {
    BitFlip,
    ZeroedSector,
    Misdirected,
}

impl Damage {
    pub const ALL: [Damage; 3] = [Damage::BitFlip, Damage::ZeroedSector, Damage::Misdirected];

    /// The counter of this damage (in the run's coverage).
    pub fn counter(self) -> Counter {
        match self {
            Damage::BitFlip => Counter::DiskBitFlipped,
            Damage::ZeroedSector => Counter::DiskSectorZeroed,
            Damage::Misdirected => Counter::DiskWriteMisdirected,
        }
    }
}

/// The bytes of `image` damage may touch in each file: all of it, except from the start of the
/// last record's frame on in the file that holds it.
fn regions(image: &Image) -> Vec<(String, u64)> {
    let last = image.frames.last();
    image
        .files
        .iter()
        .map(|(name, bytes)| {
            let end = match last {
                Some(frame) if &frame.file == name => frame.position,
                _ => bytes.len() as u64,
            };
            (name.clone(), end)
        })
        .filter(|(_, end)| *end > 0)
        .collect()
}

/// Damages `image` by `kind`, drawing where from `stream`. Returns what it did, in words, or
/// `None` when it changed no byte (nothing to damage, or the bytes were already what the damage
/// writes).
pub fn damage(image: &mut Image, kind: Damage, stream: &mut Stream) -> Option<String> {
    match kind {
        Damage::BitFlip => {
            let regions = regions(image);
            if regions.is_empty() {
                return None;
            }
            let (name, end) = &regions[stream.index(regions.len())];
            let byte = stream.range(0, end - 1);
            let bit = stream.range(0, 7);
            let bytes = image.files.get_mut(name)?;
            bytes[byte as usize] ^= 1 << bit;
            Some(format!("bit {bit} of byte {byte} of {name} flipped"))
        }
        Damage::ZeroedSector => {
            // Whole sectors inside a file's region (a file's last sector may be short).
            let sectors: Vec<(String, u64)> = regions(image)
                .into_iter()
                .flat_map(|(name, end)| {
                    let len = image.files.get(&name).map_or(0, |bytes| bytes.len() as u64);
                    (0..len.div_ceil(SECTOR_BYTES))
                        .filter(move |sector| ((sector + 1) * SECTOR_BYTES).min(len) <= end)
                        .map(move |sector| (name.clone(), sector))
                })
                .collect();
            if sectors.is_empty() {
                return None;
            }
            let (name, sector) = &sectors[stream.index(sectors.len())];
            let bytes = image.files.get_mut(name)?;
            let start = (sector * SECTOR_BYTES) as usize;
            let end = (start + SECTOR_BYTES as usize).min(bytes.len());
            if bytes[start..end].iter().all(|byte| *byte == 0) {
                return None;
            }
            bytes[start..end].fill(0);
            Some(format!(
                "sector {sector} of {name} (bytes {start}..{end}) zeroed"
            ))
        }
        Damage::Misdirected => {
            let frames = image.frames.len();
            if frames < 2 {
                return None;
            }
            let at = stream.index(frames);
            let other = (at + 1 + stream.index(frames - 1)) % frames;
            let (place, written) = (image.frames[at].clone(), image.frames[other].clone());
            let source = image.files.get(&written.file)?;
            let start = written.position as usize;
            let frame = source[start..start + written.len as usize].to_vec();
            let bytes = image.files.get_mut(&place.file)?;
            let position = place.position as usize;
            let end = position + frame.len();
            if bytes.len() < end {
                bytes.resize(end, 0);
            }
            bytes[position..end].copy_from_slice(&frame);
            Some(format!(
                "the record at offset {} written at byte {position} of {}, the place of offset {}",
                written.offset, place.file, place.offset
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::rng::Component;
    use felix_core::record::{Command, Entry};
    use felix_core::storage::{HardState, Recovered, SegmentLayout, StoreError};
    use felix_store::image::{image, MemoryFiles};
    use felix_store::inspect::inspect;
    use std::path::Path;

    const LAYOUT: SegmentLayout = SegmentLayout {
        records_per_segment: 4,
    };

    /// A log of `records` writes (bodies of 300 bytes: several sectors per segment file).
    fn held(records: u64) -> Recovered {
        Recovered {
            hard_state: HardState {
                term: 3,
                vote: Some(1),
            },
            sealed: None,
            start: 1,
            entries: (1..=records)
                .map(|offset| Entry {
                    offset,
                    term: 1 + offset / 5,
                    command: Command::Write {
                        body: vec![offset as u8 | 1; 300],
                        headers: Default::default(),
                    },
                })
                .collect(),
            tail_cut: None,
        }
    }

    fn read_back(files: MemoryFiles) -> Result<Recovered, StoreError> {
        inspect(&files, Path::new("n1"), Some(LAYOUT)).map(|inspection| inspection.recovered)
    }

    /// The bytes of an undamaged image read back as exactly the state they were made of.
    #[test]
    fn an_image_reads_back_as_what_it_holds() {
        for records in [0, 1, 4, 9] {
            let held = held(records);
            let image = image(LAYOUT, &held);
            let files = MemoryFiles {
                files: image.files,
                unreadable: None,
            };
            assert_eq!(read_back(files), Ok(held));
        }
    }

    /// Every kind of damage, wherever it is drawn, is reported by the core's recovery as
    /// corruption (never read back as a log, never cut as a torn tail).
    #[test]
    fn every_damage_is_found_by_the_core() {
        let held = held(9);
        for kind in Damage::ALL {
            for seed in 0..200 {
                let mut image = image(LAYOUT, &held);
                let mut stream = Stream::new(seed, Component::Disk);
                let Some(what) = damage(&mut image, kind, &mut stream) else {
                    panic!("{kind:?} seed {seed}: nothing damaged");
                };
                let files = MemoryFiles {
                    files: image.files,
                    unreadable: None,
                };
                let read = read_back(files);
                assert!(
                    matches!(read, Err(StoreError::Corrupt { .. })),
                    "{kind:?} seed {seed} ({what}): {read:?}"
                );
            }
        }
    }

    /// What damage cannot be told from is left alone: a cut last record is a torn tail, which
    /// recovery cuts and reports (not corruption), and no damage is drawn in that last record.
    #[test]
    fn a_torn_tail_is_cut_not_called_corrupt() {
        let held = held(6);
        let image = image(LAYOUT, &held);
        let last = image.frames.last().cloned();
        let Some(last) = last else {
            panic!("six records, no frame");
        };
        let mut files = image.files.clone();
        if let Some(bytes) = files.get_mut(&last.file) {
            bytes.truncate((last.position + last.len / 2) as usize);
        }
        let read = read_back(MemoryFiles {
            files,
            unreadable: None,
        });
        let Ok(read) = read else {
            panic!("a torn tail refused: {read:?}");
        };
        assert_eq!(read.entries.len(), 5);
        assert!(read.tail_cut.is_some());
        let regions = regions(&image);
        assert!(regions
            .iter()
            .any(|(name, end)| *name == last.file && *end == last.position));
    }

    /// A failed read is an i/o error, not corruption: the node may try again.
    #[test]
    fn a_failed_read_is_an_io_error() {
        let image = image(LAYOUT, &held(5));
        let read = read_back(MemoryFiles {
            files: image.files,
            unreadable: Some("seg-00000000000000000001.log".to_string()),
        });
        assert!(matches!(read, Err(StoreError::Io { .. })), "{read:?}");
    }
}
