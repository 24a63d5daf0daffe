//! Storage faults on a disk's bytes (knob `storage_faults`): a flipped bit, a zeroed sector, a
//! record written at another record's place (a misdirected write). A read that fails is the
//! disk's other storage fault (`disk::StorageFault::ReadError`).
//!
//! The damage is done to the bytes a file store holding the disk's state would keep
//! (`felix_store::image`), which the disk then reads back through the file store's own recovery
//! (`felix_store::inspect`): whether the damage is found is the store's frame checksums and offset
//! checks, not
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
pub fn regions(image: &Image) -> Vec<(String, u64)> {
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
