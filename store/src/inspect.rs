//! A read-only look at a file store directory: what recovery reads back, and which repairs it
//! makes on disk, without making any.
//!
//! `FileStore::recover` inspects first and then carries the repairs out; `felix store check|dump`
//! only inspects. Nothing here writes, and nothing here trusts the directory:
//! - every file is checked to be a regular file (`symlink_metadata`, then `fstat` on the open
//!   handle) before it is read: opening a FIFO would block forever, a directory or a symlink loop
//!   is not a file the store wrote;
//! - every file length is bounded before it is read into memory;
//! - every offset read from disk (a file name, a record, the sealed state, the meta file) is
//!   checked to leave room for one more segment before any arithmetic is done on it.
//!
//! What the directory must hold once a store lives in it: `meta` (the layout and the synced mark)
//! and `promise` (term and vote), both written when the store is created, before any record. So a
//! missing `promise` or `meta` beside segment files or a sealed state is `Corrupt`: a node that lost
//! its promise must not rejoin as if it never voted. A log that ends before the synced mark (a mark
//! at or above its first held offset) lost synced records and is `Corrupt`; a log whose last record
//! is at the mark is accepted. A wholly empty directory is a new store; see `file.rs` for what the
//! store cannot tell.

use crate::segment::{self, ScanEnd};
use felix_core::codec::{
    decode_hard_state, decode_meta, decode_sealed, DecodeError, FRAME_HEADER_BYTES,
    PAYLOAD_BYTES_MAX,
};
use felix_core::record::Offset;
use felix_core::storage::{Recovered, SealedState, SegmentLayout, StoreError, StoreMeta, TailCut};
use std::fmt;
use std::fs::{self, File};
use std::io::Read;
use std::path::{Path, PathBuf};

pub(crate) const PROMISE_FILE: &str = "promise";
pub(crate) const SEALED_FILE: &str = "sealed";
pub(crate) const META_FILE: &str = "meta";
pub(crate) const TEMP_SUFFIX: &str = ".tmp";

/// The promise, sealed and meta files are one small frame each; anything longer is not ours.
const METADATA_BYTES_MAX: u64 = 1 << 20;

/// One segment file that recovery keeps.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SegmentFile {
    pub path: PathBuf,
    /// The base offset its name carries.
    pub base: Offset,
    /// Offset of the first record in the file (the base, or above it after a trim-point jump).
    pub first: Offset,
    /// Byte position of each record's frame: record `first + i` starts at `positions[i]`.
    pub positions: Vec<u64>,
    /// Bytes of whole frames (a torn tail left out).
    pub len_bytes: u64,
}

impl SegmentFile {
    /// The offset after the last record in the file.
    pub fn next(&self) -> Offset {
        self.first + self.positions.len() as u64
    }
}

/// A change recovery makes on disk to finish what a crash interrupted. Never a loss of a synced
/// record: each one drops only bytes the store had already decided to drop, or never synced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Repair {
    /// A replacement that never reached its rename: the temp file goes, the old file stays.
    RemoveTemp { path: PathBuf },
    /// A segment entirely below the first held offset: a compaction or jump sealed it away but
    /// had not deleted it yet.
    FinishDeletion { path: PathBuf },
    /// The torn tail of the last segment is cut.
    CutTornTail(TailCut),
    /// A segment file without a record (created just before a crash) is removed.
    RemoveEmpty { path: PathBuf },
    /// The first segment still holds records below the first held offset (a jump into it sealed
    /// but did not rewrite it yet): it is rewritten without them.
    DropFront { path: PathBuf, below: Offset },
    /// A store is being created: the missing promise (term 0, no vote) and meta files are written.
    Initialize { promise: bool, meta: bool },
}

impl fmt::Display for Repair {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Repair::RemoveTemp { path } => write!(
                formatter,
                "remove {}: a replacement that never reached its rename",
                path.display()
            ),
            Repair::FinishDeletion { path } => write!(
                formatter,
                "remove {}: below the first held offset (finishes an interrupted compaction)",
                path.display()
            ),
            Repair::CutTornTail(cut) => write!(formatter, "{cut}"),
            Repair::RemoveEmpty { path } => write!(
                formatter,
                "remove {}: a segment without a record (created just before a crash)",
                path.display()
            ),
            Repair::DropFront { path, below } => write!(
                formatter,
                "rewrite {} without its records below {below} (finishes an interrupted jump)",
                path.display()
            ),
            Repair::Initialize { promise, meta } => {
                let mut names = Vec::new();
                if *promise {
                    names.push(PROMISE_FILE);
                }
                if *meta {
                    names.push(META_FILE);
                }
                write!(
                    formatter,
                    "create the store: write {} (term 0, no vote)",
                    names.join(" and ")
                )
            }
        }
    }
}

/// Everything a read-only look at a store directory found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Inspection {
    /// The layout read from `meta` (or the one asked for, for a new store).
    pub layout: SegmentLayout,
    /// The directory holds no store yet: no promise, meta, sealed state or segment file.
    pub fresh: bool,
    /// The meta file, None for a store being created.
    pub meta: Option<StoreMeta>,
    /// What recovery returns.
    pub recovered: Recovered,
    /// The segment files recovery keeps, in offset order (their records may start below
    /// `recovered.start` until the `DropFront` repair).
    pub segments: Vec<SegmentFile>,
    /// What recovery changes on disk, in order. Empty for a cleanly closed store.
    pub repairs: Vec<Repair>,
}

fn io_error(path: &Path, error: std::io::Error) -> StoreError {
    StoreError::Io {
        path: path.to_path_buf(),
        reason: error.to_string(),
    }
}

fn corrupt(path: &Path, position: u64, reason: impl Into<String>) -> StoreError {
    StoreError::Corrupt {
        path: path.to_path_buf(),
        position,
        reason: reason.into(),
    }
}

fn file_kind(file_type: &fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if file_type.is_dir() {
        "a directory"
    } else if file_type.is_symlink() {
        "a symbolic link"
    } else if file_type.is_fifo() {
        "a FIFO"
    } else if file_type.is_socket() {
        "a socket"
    } else if file_type.is_block_device() || file_type.is_char_device() {
        "a device"
    } else {
        "not a regular file"
    }
}

/// Where `inspect` reads a store directory from: the file system (`DirFiles`, what `FileStore`
/// reads), or bytes held in memory (`image::MemoryFiles`: the simulator's disk, read back through
/// the very checks a file store's recovery makes).
pub trait StoreFiles {
    /// The UTF-8 names of the entries of `dir` (other names are not the store's), in any order.
    fn names(&self, dir: &Path) -> Result<Vec<String>, StoreError>;
    /// Refuses anything at `path` that is not a regular file (the store writes nothing else).
    /// Ok(false) when nothing is there.
    fn check_regular(&self, path: &Path) -> Result<bool, StoreError>;
    /// The bytes of the regular file at `path` (None when missing), refusing a file longer than
    /// `bytes_max`.
    fn read_regular(&self, path: &Path, bytes_max: u64) -> Result<Option<Vec<u8>>, StoreError>;
}

/// The file system: what a `FileStore` reads.
#[derive(Clone, Copy, Debug, Default)]
pub struct DirFiles;

impl StoreFiles for DirFiles {
    fn names(&self, dir: &Path) -> Result<Vec<String>, StoreError> {
        let metadata = fs::metadata(dir).map_err(|error| io_error(dir, error))?;
        if !metadata.is_dir() {
            return Err(StoreError::Io {
                path: dir.to_path_buf(),
                reason: "not a directory".to_string(),
            });
        }
        let listing = fs::read_dir(dir).map_err(|error| io_error(dir, error))?;
        let mut names = Vec::new();
        for item in listing {
            let item = item.map_err(|error| io_error(dir, error))?;
            // Not ours: the store never writes a name that is not UTF-8.
            if let Ok(name) = item.file_name().into_string() {
                names.push(name);
            }
        }
        Ok(names)
    }

    fn check_regular(&self, path: &Path) -> Result<bool, StoreError> {
        check_regular(path)
    }

    fn read_regular(&self, path: &Path, bytes_max: u64) -> Result<Option<Vec<u8>>, StoreError> {
        read_regular(path, bytes_max)
    }
}

/// Refuses anything at `path` that is not a regular file (the store writes nothing else), without
/// following a symbolic link. Ok(false) when nothing is there.
fn check_regular(path: &Path) -> Result<bool, StoreError> {
    match fs::symlink_metadata(path) {
        Ok(metadata) if metadata.file_type().is_file() => Ok(true),
        Ok(metadata) => Err(corrupt(
            path,
            0,
            format!(
                "{} stands where the store keeps a regular file",
                file_kind(&metadata.file_type())
            ),
        )),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(error) => Err(io_error(path, error)),
    }
}

/// A store file of `len` bytes, longer than the `bytes_max` the store ever writes to it: every
/// `StoreFiles::read_regular` refuses it so.
pub fn too_long(path: &Path, len: u64, bytes_max: u64) -> StoreError {
    corrupt(
        path,
        bytes_max,
        format!("{len} bytes, more than the store ever writes to this file ({bytes_max})"),
    )
}

/// Reads the regular file at `path` (None when missing), refusing one longer than `bytes_max`.
fn read_regular(path: &Path, bytes_max: u64) -> Result<Option<Vec<u8>>, StoreError> {
    if !check_regular(path)? {
        return Ok(None);
    }
    let mut handle = File::open(path).map_err(|error| io_error(path, error))?;
    let metadata = handle.metadata().map_err(|error| io_error(path, error))?;
    if !metadata.is_file() {
        // Swapped between the check and the open.
        return Err(corrupt(path, 0, "not a regular file"));
    }
    if metadata.len() > bytes_max {
        return Err(too_long(path, metadata.len(), bytes_max));
    }
    let mut bytes = Vec::with_capacity(metadata.len() as usize);
    handle
        .by_ref()
        .take(bytes_max + 1)
        .read_to_end(&mut bytes)
        .map_err(|error| io_error(path, error))?;
    if bytes.len() as u64 > bytes_max {
        return Err(corrupt(path, bytes_max, "the file grew while it was read"));
    }
    Ok(Some(bytes))
}

fn decode_error(path: &Path, error: DecodeError) -> StoreError {
    corrupt(path, 0, error.to_string())
}

/// Whether `offset` read from disk leaves room for a whole segment after it (no arithmetic the
/// store does on it can overflow).
fn offset_in_range(layout: SegmentLayout, offset: Offset) -> bool {
    offset
        .checked_add(layout.records_per_segment)
        .and_then(|after| after.checked_add(layout.records_per_segment))
        .is_some()
}

/// Reads `dir` from `files` without changing it: what recovery returns, the segments it keeps and
/// the repairs it makes. `layout` is the layout the caller opens the store with (None: whatever
/// `meta` says); a `meta` file written with another layout is `Corrupt`.
pub fn inspect(
    files: &dyn StoreFiles,
    dir: &Path,
    layout: Option<SegmentLayout>,
) -> Result<Inspection, StoreError> {
    let mut names = files.names(dir)?;
    names.sort();

    let mut repairs = Vec::new();
    let mut segment_names = Vec::new();
    for name in &names {
        let path = dir.join(name);
        if name.ends_with(TEMP_SUFFIX) {
            files.check_regular(&path)?;
            repairs.push(Repair::RemoveTemp { path });
        } else if segment::looks_like_segment(name) {
            files.check_regular(&path)?;
            segment_names.push((name.clone(), path));
        }
    }

    let meta_path = dir.join(META_FILE);
    let meta = files
        .read_regular(&meta_path, METADATA_BYTES_MAX)?
        .map(|bytes| decode_meta(&bytes).map_err(|error| decode_error(&meta_path, error)))
        .transpose()?;
    let layout = match (meta, layout) {
        (Some(meta), Some(asked)) if meta.records_per_segment != asked.records_per_segment => {
            return Err(corrupt(
                &meta_path,
                0,
                format!(
                    "the store was written with {} records per segment, opened with {}",
                    meta.records_per_segment, asked.records_per_segment
                ),
            ));
        }
        (Some(meta), _) => SegmentLayout {
            records_per_segment: meta.records_per_segment,
        },
        (None, Some(asked)) => asked,
        (None, None) => SegmentLayout::default(),
    };
    if let Some(meta) = meta {
        if !offset_in_range(layout, meta.synced_mark) {
            return Err(corrupt(
                &meta_path,
                0,
                format!("synced mark {} out of range", meta.synced_mark),
            ));
        }
    }

    let mut bases = Vec::new();
    for (name, path) in &segment_names {
        let base = segment::parse_file_name(name).ok_or_else(|| {
            corrupt(
                path,
                0,
                "a segment file name must be seg-<20-digit base offset>.log",
            )
        })?;
        if layout.base_of(base) != base {
            return Err(corrupt(
                path,
                0,
                format!(
                    "offset {base} is not a segment base with {} records per segment (was the \
                     store written with another layout?)",
                    layout.records_per_segment
                ),
            ));
        }
        if !offset_in_range(layout, base) {
            return Err(corrupt(
                path,
                0,
                format!("segment base {base} is beyond the largest offset a store can hold"),
            ));
        }
        bases.push(base);
    }

    let promise_path = dir.join(PROMISE_FILE);
    let promise = files
        .read_regular(&promise_path, METADATA_BYTES_MAX)?
        .map(|bytes| decode_hard_state(&bytes).map_err(|error| decode_error(&promise_path, error)))
        .transpose()?;
    let sealed_path = dir.join(SEALED_FILE);
    let sealed: Option<(Offset, SealedState)> = files
        .read_regular(&sealed_path, METADATA_BYTES_MAX)?
        .map(|bytes| decode_sealed(&bytes).map_err(|error| decode_error(&sealed_path, error)))
        .transpose()?;
    if let Some((start, state)) = &sealed {
        let offsets = [
            ("first held offset", Some(*start)),
            ("floor", Some(state.floor)),
            ("floor trim offset", state.floor_trim),
            ("base offset", Some(state.base_offset)),
        ];
        for (what, offset) in offsets {
            if let Some(offset) = offset.filter(|offset| !offset_in_range(layout, *offset)) {
                return Err(corrupt(
                    &sealed_path,
                    0,
                    format!("{what} {offset} is beyond the largest offset a store can hold"),
                ));
            }
        }
    }

    // A store writes promise, then meta, when it is created, before any record or sealed state.
    let holds_log = !bases.is_empty() || sealed.is_some();
    if holds_log && promise.is_none() {
        return Err(corrupt(
            &promise_path,
            0,
            "missing while the store holds a log: the term and vote this node promised are lost, \
             and it must not rejoin as if it never voted",
        ));
    }
    if holds_log && meta.is_none() {
        return Err(corrupt(
            &meta_path,
            0,
            "missing while the store holds a log: the layout and the synced mark are lost",
        ));
    }
    if meta.is_some() && promise.is_none() {
        return Err(corrupt(
            &promise_path,
            0,
            "missing from a store that was created: the term and vote this node promised are lost, \
             and it must not rejoin as if it never voted",
        ));
    }
    let fresh = !holds_log && promise.is_none() && meta.is_none();
    if meta.is_none() {
        repairs.push(Repair::Initialize {
            promise: promise.is_none(),
            meta: true,
        });
    }

    let (start, sealed) = match sealed {
        None => (1, None),
        Some((start, state)) => (start, Some(state)),
    };
    let segment_bytes_max = layout
        .records_per_segment
        .saturating_add(1)
        .saturating_mul((FRAME_HEADER_BYTES + PAYLOAD_BYTES_MAX) as u64);
    let mut segments = Vec::new();
    let mut entries = Vec::new();
    let mut tail_cut = None;
    let mut expected: Option<Offset> = None;
    let last_base = bases.last().copied();
    for base in bases {
        let path = dir.join(segment::file_name(base));
        // In range (checked above), so the segment's last offset is representable.
        let last = layout
            .checked_last_of(base)
            .expect("a base in range has a representable segment end");
        if last < start {
            repairs.push(Repair::FinishDeletion { path });
            continue;
        }
        let bytes = files
            .read_regular(&path, segment_bytes_max)?
            .ok_or_else(|| StoreError::Io {
                path: path.clone(),
                reason: "the file vanished while the store was read".to_string(),
            })?;
        let scan = segment::scan(&bytes);
        let mut len_bytes = bytes.len() as u64;
        if let ScanEnd::Bad {
            position,
            error,
            valid_frame_after,
        } = scan.end
        {
            if Some(base) != last_base || valid_frame_after {
                return Err(corrupt(
                    &path,
                    position,
                    format!("{error} (records follow it, or it is not the last segment)"),
                ));
            }
            let cut = TailCut {
                path: path.clone(),
                position,
                bytes_dropped: bytes.len() as u64 - position,
                reason: error.to_string(),
            };
            repairs.push(Repair::CutTornTail(cut.clone()));
            tail_cut = Some(cut);
            len_bytes = position;
        }
        for (entry, position) in scan.entries.iter().zip(&scan.positions) {
            let wrong = if entry.offset < base || entry.offset > last {
                Some(format!(
                    "offset {} does not belong in this segment",
                    entry.offset
                ))
            } else {
                match expected {
                    Some(expected) if entry.offset != expected => Some(format!(
                        "offset {} where the log continues at {expected} (missing or misplaced \
                         records)",
                        entry.offset
                    )),
                    None if entry.offset > start => Some(format!(
                        "the log starts at {start} but the first record is at {}",
                        entry.offset
                    )),
                    _ => None,
                }
            };
            if let Some(reason) = wrong {
                return Err(corrupt(&path, *position, reason));
            }
            // entry.offset <= last < Offset::MAX (the base is in range).
            expected = Some(entry.offset + 1);
        }
        if scan.entries.is_empty() {
            // Only a segment created just before a crash is empty; it holds nothing.
            repairs.push(Repair::RemoveEmpty { path });
            continue;
        }
        segments.push(SegmentFile {
            path,
            base,
            first: scan.entries[0].offset,
            positions: scan.positions,
            len_bytes,
        });
        entries.extend(
            scan.entries
                .into_iter()
                .filter(|entry| entry.offset >= start),
        );
    }
    let next = expected.unwrap_or(start).max(start);

    // The synced mark: a record at the mark was synced, and only a suffix truncation (which lowers
    // the mark first) drops a record at or above the start. A log that ends at or before it lost
    // synced records: the last segment file was deleted or emptied.
    if let Some(mark) = meta.map(|meta| meta.synced_mark) {
        if mark >= start && next <= mark {
            let holder = dir.join(segment::file_name(layout.base_of(mark)));
            return Err(corrupt(
                &holder,
                0,
                format!(
                    "offset {mark} was synced in this file, but the log read back {}: the file \
                     (or the records from its start) went missing",
                    if next == start {
                        "is empty".to_string()
                    } else {
                        format!("ends at {}", next - 1)
                    }
                ),
            ));
        }
    }

    if let Some(first) = segments.first() {
        if first.first < start {
            repairs.push(Repair::DropFront {
                path: first.path.clone(),
                below: start,
            });
        }
    }
    assert_eq!(next - start, entries.len() as u64);
    Ok(Inspection {
        layout,
        fresh,
        meta,
        recovered: Recovered {
            hard_state: promise.unwrap_or_default(),
            sealed,
            start,
            entries,
            tail_cut,
        },
        segments,
        repairs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_kinds_are_named() {
        // Proves the error for a non-regular file names what stands there: a directory, a
        // symbolic link, a device (/dev/null, a character device on every Linux).
        let dir = tempfile::tempdir().expect("a temporary directory");
        let kind = |path: &Path| file_kind(&fs::symlink_metadata(path).expect("stat").file_type());
        assert_eq!(kind(dir.path()), "a directory");
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(dir.path(), &link).expect("a symbolic link");
        assert_eq!(kind(&link), "a symbolic link");
        assert_eq!(kind(Path::new("/dev/null")), "a device");
    }
}
