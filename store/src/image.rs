//! A file store's directory as bytes in memory: what a `FileStore` holding a given state would
//! have written (`image`), and a `StoreFiles` that serves such bytes to `inspect` (`MemoryFiles`).
//!
//! The simulator keeps its disks as typed entries (`MemoryStore`); to damage one the way a real
//! disk does (a flipped bit, a zeroed sector, a write landing at another record's place, a failed
//! read), it renders the durable state as these bytes, damages them, and reads them back through
//! `inspect`: the same frame checksums, offset checks and torn-tail rule a real recovery runs, so
//! a check the core does not make lets the damage through. Pure: no file is touched.

use crate::inspect::{too_long, StoreFiles, META_FILE, PROMISE_FILE, SEALED_FILE};
use crate::segment;
use felix_core::codec::{encode_entry, encode_hard_state, encode_meta, encode_sealed};
use felix_core::record::Offset;
use felix_core::storage::{Recovered, SegmentLayout, StoreError, StoreMeta};
use std::collections::BTreeMap;
use std::path::Path;

/// One record's frame in an image: the file it is in, where it starts, and how long it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    pub file: String,
    pub position: u64,
    pub len: u64,
    pub offset: Offset,
}

/// A store directory as bytes: each file by name, and every record's frame in offset order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Image {
    pub files: BTreeMap<String, Vec<u8>>,
    pub frames: Vec<Frame>,
}

/// The bytes a file store holding exactly `recovered` (written with `layout`) keeps: a promise
/// file, a meta file whose synced mark is the first record of the newest segment (0 for an empty
/// log), a sealed file when something was sealed, and one segment file per segment that holds a
/// record (the first may start mid-segment, after a jump).
pub fn image(layout: SegmentLayout, recovered: &Recovered) -> Image {
    let mut files = BTreeMap::new();
    let mut frames = Vec::new();
    files.insert(
        PROMISE_FILE.to_string(),
        encode_hard_state(&recovered.hard_state),
    );
    let synced_mark = recovered
        .entries
        .last()
        .map_or(0, |last| layout.base_of(last.offset).max(recovered.start));
    let meta = StoreMeta {
        records_per_segment: layout.records_per_segment,
        synced_mark,
    };
    files.insert(META_FILE.to_string(), encode_meta(&meta));
    if let Some(sealed) = &recovered.sealed {
        files.insert(
            SEALED_FILE.to_string(),
            encode_sealed(recovered.start, sealed),
        );
    }
    for entry in &recovered.entries {
        let name = segment::file_name(layout.base_of(entry.offset));
        let bytes: &mut Vec<u8> = files.entry(name.clone()).or_default();
        let position = bytes.len() as u64;
        encode_entry(entry, bytes);
        frames.push(Frame {
            file: name,
            position,
            len: bytes.len() as u64 - position,
            offset: entry.offset,
        });
    }
    Image { files, frames }
}

/// Files held in memory, by name, as `inspect` reads them; `unreadable` names a file whose read
/// fails (an i/o error, as a bad sector that cannot be read at all reports it).
#[derive(Clone, Debug, Default)]
pub struct MemoryFiles {
    pub files: BTreeMap<String, Vec<u8>>,
    pub unreadable: Option<String>,
}

impl MemoryFiles {
    fn name(path: &Path) -> String {
        path.file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_default()
    }
}

impl StoreFiles for MemoryFiles {
    fn names(&self, _dir: &Path) -> Result<Vec<String>, StoreError> {
        Ok(self.files.keys().cloned().collect())
    }

    fn check_regular(&self, path: &Path) -> Result<bool, StoreError> {
        Ok(self.files.contains_key(&MemoryFiles::name(path)))
    }

    fn read_regular(&self, path: &Path, bytes_max: u64) -> Result<Option<Vec<u8>>, StoreError> {
        let name = MemoryFiles::name(path);
        if self.unreadable.as_ref() == Some(&name) {
            return Err(StoreError::Io {
                path: path.to_path_buf(),
                reason: "input/output error (the read failed)".to_string(),
            });
        }
        let Some(bytes) = self.files.get(&name) else {
            return Ok(None);
        };
        if bytes.len() as u64 > bytes_max {
            return Err(too_long(path, bytes.len() as u64, bytes_max));
        }
        Ok(Some(bytes.clone()))
    }
}
