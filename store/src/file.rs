//! The file-backed store: segment files, a promise file and a sealed-state file in one directory.
//!
//! Layout of the directory:
//! - `seg-<base, 20 digits>.log`: the entries of one segment (`SegmentLayout`), as checksummed
//!   frames (`codec`), contiguous. After a trim-point jump the first file may start mid-segment.
//! - `promise`: the `HardState`, one frame, replaced atomically. Written (term 0, no vote) when the
//!   store is created, so it is never missing beside a log.
//! - `meta`: the `StoreMeta` (the layout, and the synced mark), one frame, replaced atomically.
//!   Written right after the first promise; a store opened with another layout is `Corrupt`.
//! - `sealed`: the first held offset and the `SealedState`, one frame, replaced atomically.
//!
//! `apply` only checks and queues an op; `sync` carries the queued ops out in order and fsyncs.
//! Ordering is what makes a crash lose only a suffix of the unsynced ops:
//! - only the last segment file ever holds unsynced bytes (the previous one is fsynced before a
//!   new one is written), so a torn frame can only be at the tail of the last file;
//! - segment data is fsynced before any promise or sealed-state file is replaced;
//! - atomic replacement is write temp + fsync + rename + fsync directory;
//! - `Compact`/`TrimmedTo` write the sealed file (with the new first offset) *first*, then delete
//!   files; recovery finishes an interrupted deletion from the sealed file, so the sealed state and
//!   the deletion land together or not at all;
//! - `TruncateSuffix` deletes later files (last first), cuts the file holding `from`, and fsyncs
//!   both at once. A power loss in the middle leaves the log cut somewhere between `from` and the
//!   old tail: a shorter suffix of records that were being dropped anyway, never a gap. (The
//!   `crash` hook applies each op whole, so the proptests do not produce that state.)
//!
//! - the synced mark is raised (to the first record of the newest segment) only after that
//!   segment is fsynced, once per segment; a `TruncateSuffix` at or below the mark lowers it
//!   before it deletes or cuts anything.
//!
//! Recovery (`inspect`, then the repairs it lists) cuts a torn tail of the last segment (and
//! reports it in `Recovered::tail_cut`) and refuses anything else that is wrong with
//! `StoreError::Corrupt`, naming the file and the byte: a gap between segments, a missing or
//! damaged promise or meta file beside a log, a non-regular file where a store file belongs, an
//! offset too large to compute with, and a log that ends before the synced mark (the last segment
//! file deleted or emptied; a log whose last record is at the mark is accepted).
//!
//! What the store cannot tell, because no metadata records it without a second write per sync:
//! - the records of the newest segment after its first one, cut at a frame boundary or with the
//!   file cut back to its first record: that looks exactly like a crash that lost unsynced
//!   appends (the mark only says the segment's first record was synced);
//! - a directory wiped whole (or the promise and meta deleted together while the log is empty and
//!   nothing was ever compacted): it reads as a new store with term 0 and no vote. Telling a
//!   wiped node from a new one needs a fact from outside this directory (the cluster's
//!   membership), so a driver must not add a node back only because its store opened cleanly;
//! - every file replaced together by an older, self-consistent copy.

use crate::file_system::FileSystem;
use crate::inspect::{
    inspect, DirFiles, Inspection, Repair, META_FILE, PROMISE_FILE, SEALED_FILE, TEMP_SUFFIX,
};
use crate::segment;
use felix_core::codec::{encode_entry, encode_hard_state, encode_meta, encode_sealed};
use felix_core::record::{Entry, Offset};
use felix_core::storage::bounds::Bounds;
use felix_core::storage::{
    HardState, LogStore, Recovered, SegmentLayout, StorageOp, StoreError, StoreMeta,
    UNSYNCED_OPS_MAX,
};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn io_error(path: &Path, error: std::io::Error) -> StoreError {
    StoreError::Io {
        path: path.to_path_buf(),
        reason: error.to_string(),
    }
}

/// Told of each directory fsync, with the directory (`FileStore::observe_directory_syncs`).
type DirectoryObserver = Box<dyn FnMut(&Path) + Send>;

/// The directory fsyncs a store made, and who is told of each (`FileStore::directory_syncs`,
/// `FileStore::observe_directory_syncs`).
#[derive(Default)]
struct DirectorySyncs {
    count: u64,
    observer: Option<DirectoryObserver>,
}

impl std::fmt::Debug for DirectorySyncs {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("DirectorySyncs")
            .field("count", &self.count)
            .field("observed", &self.observer.is_some())
            .finish()
    }
}

/// Fsyncs the directory: files created, renamed or deleted in it since survive a power loss only
/// after this. Counts it in `syncs` and tells its observer, if any.
fn sync_dir<F: FileSystem>(
    files: &mut F,
    dir: &Path,
    syncs: &mut DirectorySyncs,
) -> Result<(), StoreError> {
    files.sync_dir(dir).map_err(|error| io_error(dir, error))?;
    syncs.count += 1;
    if let Some(observer) = &mut syncs.observer {
        observer(dir);
    }
    Ok(())
}

/// Replaces `dir/name` with `bytes`: write temp, fsync, rename, fsync the directory.
fn write_atomic<F: FileSystem>(
    files: &mut F,
    dir: &Path,
    name: &str,
    bytes: &[u8],
    syncs: &mut DirectorySyncs,
) -> Result<(), StoreError> {
    let temp = dir.join(format!("{name}{TEMP_SUFFIX}"));
    let path = dir.join(name);
    let mut handle = files
        .create(&temp)
        .map_err(|error| io_error(&temp, error))?;
    files
        .write_at(&mut handle, 0, bytes)
        .and_then(|()| files.sync_all(&mut handle))
        .map_err(|error| io_error(&temp, error))?;
    drop(handle);
    files
        .rename(&temp, &path)
        .map_err(|error| io_error(&path, error))?;
    sync_dir(files, dir, syncs)
}

/// What the store knows about one segment file on disk.
#[derive(Debug)]
struct Segment {
    path: PathBuf,
    /// Offset of the first entry in the file.
    first: Offset,
    /// Byte position of each entry's frame: entry `first + i` starts at `positions[i]`.
    positions: Vec<u64>,
    len_bytes: u64,
}

impl Segment {
    fn next(&self) -> Offset {
        self.first + self.positions.len() as u64
    }
}

/// What has been written to disk (synced or not): the state `sync` and `crash` act on.
#[derive(Debug)]
struct Disk<H> {
    bounds: Bounds,
    segments: BTreeMap<Offset, Segment>,
    /// The open handle of the segment appends go to, and whether it holds unsynced bytes.
    active: Option<(Offset, H)>,
    active_dirty: bool,
    /// A file was created or deleted since the directory was last fsynced.
    dir_dirty: bool,
    /// The synced mark in the meta file (see `StoreMeta`).
    synced_mark: Offset,
}

impl<H> Disk<H> {
    fn new() -> Disk<H> {
        Disk {
            bounds: Bounds::empty(),
            segments: BTreeMap::new(),
            active: None,
            active_dirty: false,
            dir_dirty: false,
            synced_mark: 0,
        }
    }
}

/// The file-backed `LogStore`, over the real file system unless told another (`open_in`). See
/// the module docs.
#[derive(Debug)]
pub struct FileStore<F: FileSystem = DirFiles> {
    files: F,
    dir: PathBuf,
    layout: SegmentLayout,
    /// The applied view: every op accepted so far.
    bounds: Bounds,
    /// Ops accepted since the last sync, carried out by the next `sync`.
    pending: Vec<StorageOp>,
    disk: Disk<F::Handle>,
    /// False until `recover` succeeds (on open, after a crash, after a failed sync).
    recovered: bool,
    scratch: Vec<u8>,
    /// Directory fsyncs so far (see `directory_syncs`).
    dir_syncs: DirectorySyncs,
}

impl FileStore {
    /// A store over `dir` (created if missing). Call `recover` before anything else. Dropping the
    /// store without a `sync` loses the ops applied since the last one, as a crash would.
    pub fn open(dir: impl Into<PathBuf>, layout: SegmentLayout) -> Result<FileStore, StoreError> {
        FileStore::open_in(DirFiles, dir, layout)
    }

    /// Looks at `dir` without changing anything: what `recover` would read back and which repairs
    /// it would make. `layout` None takes the layout from the store's meta file.
    pub fn inspect(dir: &Path, layout: Option<SegmentLayout>) -> Result<Inspection, StoreError> {
        inspect(&DirFiles, dir, layout)
    }
}

impl<F: FileSystem> FileStore<F> {
    /// A store over `dir` in the file system `files` (see `open`).
    pub fn open_in(
        mut files: F,
        dir: impl Into<PathBuf>,
        layout: SegmentLayout,
    ) -> Result<FileStore<F>, StoreError> {
        if layout.records_per_segment == 0 {
            return Err(StoreError::Invalid {
                reason: "a segment must hold at least one record".to_string(),
            });
        }
        let dir = dir.into();
        files
            .create_dir_all(&dir)
            .map_err(|error| io_error(&dir, error))?;
        Ok(FileStore {
            files,
            dir,
            layout,
            bounds: Bounds::empty(),
            pending: Vec::new(),
            disk: Disk::new(),
            recovered: false,
            scratch: Vec::new(),
            dir_syncs: DirectorySyncs::default(),
        })
    }

    /// The directory this store lives in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file system this store writes through.
    pub fn files(&self) -> &F {
        &self.files
    }

    /// The file system this store writes through, to fault it (a simulated power loss). The
    /// store must `recover` after anything that changes what it wrote.
    pub fn files_mut(&mut self) -> &mut F {
        &mut self.files
    }

    /// How many times this store has fsynced its directory. A file created, renamed or deleted
    /// in the directory survives a power loss only once a directory fsync follows it.
    pub fn directory_syncs(&self) -> u64 {
        self.dir_syncs.count
    }

    /// Fault injection: calls `observer` with the directory right after each directory fsync,
    /// the moments at which the directory's entries as they stand become durable. A power-loss
    /// test snapshots the directory there to know which creations, deletions and renames a power
    /// loss may undo (`store/tests/it/power_loss.rs`).
    pub fn observe_directory_syncs(&mut self, observer: impl FnMut(&Path) + Send + 'static) {
        self.dir_syncs.observer = Some(Box::new(observer));
    }

    /// The path of the segment file whose base is `base`.
    pub fn segment_path(&self, base: Offset) -> PathBuf {
        self.dir.join(segment::file_name(base))
    }

    fn not_recovered() -> StoreError {
        StoreError::Invalid {
            reason: "the file store must be recovered first (after open, a crash or a failed sync)"
                .to_string(),
        }
    }

    /// Fsyncs the active segment and the directory if they hold unsynced changes.
    fn flush(&mut self) -> Result<(), StoreError> {
        if self.disk.active_dirty {
            if let Some((base, handle)) = &mut self.disk.active {
                let path = self.dir.join(segment::file_name(*base));
                self.files
                    .sync_data(handle)
                    .map_err(|error| io_error(&path, error))?;
            }
            self.disk.active_dirty = false;
        }
        if self.disk.dir_dirty {
            sync_dir(&mut self.files, &self.dir, &mut self.dir_syncs)?;
            self.disk.dir_dirty = false;
        }
        // Everything written is durable now: raise the synced mark to the first record of the
        // newest segment, once per segment (one small atomic write per segment, not per sync).
        let newest_first = self
            .disk
            .segments
            .values()
            .rev()
            .find(|segment| !segment.positions.is_empty())
            .map(|segment| segment.first);
        if let Some(first) = newest_first.filter(|first| *first > self.disk.synced_mark) {
            self.write_meta(first)?;
        }
        Ok(())
    }

    /// Makes `base` the active segment (creating its file, starting at `first`, if needed).
    fn activate(&mut self, base: Offset, first: Offset) -> Result<(), StoreError> {
        if matches!(&self.disk.active, Some((active, _)) if *active == base) {
            return Ok(());
        }
        // Only one file may hold unsynced bytes: the one being left is made durable first.
        self.flush()?;
        self.disk.active = None;
        let path = self.segment_path(base);
        let handle = if self.disk.segments.contains_key(&base) {
            self.files.open(&path)
        } else {
            self.disk.dir_dirty = true;
            self.disk.segments.insert(
                base,
                Segment {
                    path: path.clone(),
                    first,
                    positions: Vec::new(),
                    len_bytes: 0,
                },
            );
            self.files.create(&path)
        }
        .map_err(|error| io_error(&path, error))?;
        self.disk.active = Some((base, handle));
        Ok(())
    }

    /// Writes `bytes` at the end of the active segment.
    fn write_active(&mut self, bytes: &[u8]) -> Result<(), StoreError> {
        let Some((base, handle)) = &mut self.disk.active else {
            unreachable!("write_active without an active segment");
        };
        let segment = self
            .disk
            .segments
            .get_mut(base)
            .expect("active segment is known");
        self.files
            .write_at(handle, segment.len_bytes, bytes)
            .map_err(|error| io_error(&segment.path, error))?;
        self.disk.active_dirty = true;
        Ok(())
    }

    /// Appends `entries` to disk; with `torn = Some(k)`, only the first `k` entries and half of
    /// the next frame (a crash in the middle of the write).
    fn write_append(&mut self, entries: &[Entry], torn: Option<usize>) -> Result<(), StoreError> {
        let whole = torn.map_or(entries.len(), |keep| keep.min(entries.len()));
        let mut index = 0;
        while index < whole {
            let base = self.layout.base_of(entries[index].offset);
            let group_end = (index..whole)
                .find(|at| self.layout.base_of(entries[*at].offset) != base)
                .unwrap_or(whole);
            self.activate(base, entries[index].offset)?;
            let mut scratch = std::mem::take(&mut self.scratch);
            scratch.clear();
            let mut relative = Vec::with_capacity(group_end - index);
            for entry in &entries[index..group_end] {
                relative.push(scratch.len() as u64);
                encode_entry(entry, &mut scratch);
            }
            let written = self.write_active(&scratch);
            let len = scratch.len() as u64;
            self.scratch = scratch;
            written?;
            let segment = self
                .disk
                .segments
                .get_mut(&base)
                .expect("active segment is known");
            assert_eq!(segment.next(), entries[index].offset);
            let at = segment.len_bytes;
            segment
                .positions
                .extend(relative.iter().map(|position| at + position));
            segment.len_bytes += len;
            index = group_end;
        }
        if torn.is_some() && whole < entries.len() {
            let entry = &entries[whole];
            self.activate(self.layout.base_of(entry.offset), entry.offset)?;
            let mut frame = Vec::new();
            encode_entry(entry, &mut frame);
            self.write_active(&frame[..frame.len() / 2])?;
        }
        Ok(())
    }

    /// Deletes every segment file entirely below `start` (never one holding `start` or above).
    fn delete_below(&mut self, start: Offset) -> Result<(), StoreError> {
        let doomed: Vec<Offset> = self
            .disk
            .segments
            .keys()
            .copied()
            .filter(|base| self.layout.last_of(*base) < start)
            .collect();
        for base in doomed {
            self.remove_segment(base)?;
        }
        Ok(())
    }

    fn remove_segment(&mut self, base: Offset) -> Result<(), StoreError> {
        if matches!(&self.disk.active, Some((active, _)) if *active == base) {
            self.disk.active = None;
            self.disk.active_dirty = false;
        }
        if let Some(segment) = self.disk.segments.remove(&base) {
            self.files
                .remove(&segment.path)
                .map_err(|error| io_error(&segment.path, error))?;
            self.disk.dir_dirty = true;
        }
        Ok(())
    }

    /// Rewrites the first segment file without its entries below `start` (after a jump into the
    /// middle of a segment): copy the kept frames to a temp file, fsync, rename, fsync directory.
    fn drop_front_within(&mut self, start: Offset) -> Result<(), StoreError> {
        let Some((&base, segment)) = self.disk.segments.iter().next() else {
            return Ok(());
        };
        if segment.first >= start {
            return Ok(());
        }
        if segment.next() <= start {
            return self.remove_segment(base);
        }
        let path = segment.path.clone();
        let cut = segment.positions[(start - segment.first) as usize];
        let bytes = self
            .files
            .read(&path)
            .map_err(|error| io_error(&path, error))?;
        let kept = bytes
            .get(cut as usize..segment.len_bytes as usize)
            .ok_or_else(|| StoreError::Corrupt {
                path: path.clone(),
                position: bytes.len() as u64,
                reason: "the file is shorter than the store wrote it".to_string(),
            })?;
        if matches!(&self.disk.active, Some((active, _)) if *active == base) {
            self.flush()?;
            self.disk.active = None;
        }
        write_atomic(
            &mut self.files,
            &self.dir,
            &segment::file_name(base),
            kept,
            &mut self.dir_syncs,
        )?;
        let segment = self
            .disk
            .segments
            .get_mut(&base)
            .expect("first segment is known");
        let dropped = (start - segment.first) as usize;
        segment.positions.drain(..dropped);
        for position in segment.positions.iter_mut() {
            *position -= cut;
        }
        segment.first = start;
        segment.len_bytes -= cut;
        Ok(())
    }

    /// Carries out one op on disk (no final fsync: `sync` does that).
    fn write_op(&mut self, op: &StorageOp, torn: Option<usize>) -> Result<(), StoreError> {
        let after = self.disk.bounds.step(self.layout, op)?;
        match op {
            StorageOp::Append(entries) => self.write_append(entries, torn)?,
            StorageOp::TruncateSuffix { from } => {
                if *from < self.disk.bounds.next {
                    self.write_truncate(*from)?;
                }
            }
            StorageOp::HardState(hard_state) => {
                self.flush()?;
                write_atomic(
                    &mut self.files,
                    &self.dir,
                    PROMISE_FILE,
                    &encode_hard_state(hard_state),
                    &mut self.dir_syncs,
                )?;
            }
            StorageOp::Compact { sealed, .. } | StorageOp::TrimmedTo { state: sealed, .. } => {
                self.flush()?;
                write_atomic(
                    &mut self.files,
                    &self.dir,
                    SEALED_FILE,
                    &encode_sealed(after.start, sealed),
                    &mut self.dir_syncs,
                )?;
                self.delete_below(after.start)?;
                self.drop_front_within(after.start)?;
                self.flush()?;
            }
        }
        // The one place the disk's bounds move: once the whole op is on disk.
        self.disk.bounds = after;
        Ok(())
    }

    /// Drops every entry at or above `from` and makes the cut durable at once, so that no later
    /// append can land on disk while a stale suffix survives.
    fn write_truncate(&mut self, from: Offset) -> Result<(), StoreError> {
        // The mark goes down before any record does, so a crash in between never makes a
        // legitimate truncation look like lost records.
        if from <= self.disk.synced_mark {
            self.write_meta(from - 1)?;
        }
        let later: Vec<Offset> = self
            .disk
            .segments
            .iter()
            .filter(|(_, segment)| segment.first >= from)
            .map(|(base, _)| *base)
            .collect();
        for base in later.into_iter().rev() {
            self.remove_segment(base)?;
        }
        // Every file starting at or above `from` is gone: only the last one left can hold it.
        let holder = self
            .disk
            .segments
            .iter_mut()
            .next_back()
            .filter(|(_, segment)| from < segment.next());
        if let Some((base, segment)) = holder {
            let base = *base;
            let cut = segment.positions[(from - segment.first) as usize];
            segment.positions.truncate((from - segment.first) as usize);
            segment.len_bytes = cut;
            let path = segment.path.clone();
            if matches!(&self.disk.active, Some((active, _)) if *active == base) {
                self.disk.active = None;
                self.disk.active_dirty = false;
            }
            let mut handle = self
                .files
                .open(&path)
                .map_err(|error| io_error(&path, error))?;
            self.files
                .set_len(&mut handle, cut)
                .and_then(|()| self.files.sync_all(&mut handle))
                .map_err(|error| io_error(&path, error))?;
        }
        self.flush()?;
        Ok(())
    }

    /// Reads the directory back (see `LogStore::recover`): inspects it without writing, then
    /// carries out the repairs the inspection lists.
    fn read_back(&mut self) -> Result<Recovered, StoreError> {
        self.disk = Disk::new();
        self.pending.clear();
        let inspection = inspect(&self.files, &self.dir, Some(self.layout))?;
        for repair in &inspection.repairs {
            match repair {
                Repair::RemoveTemp { path }
                | Repair::FinishDeletion { path }
                | Repair::RemoveEmpty { path } => {
                    self.files
                        .remove(path)
                        .map_err(|error| io_error(path, error))?;
                    self.disk.dir_dirty = true;
                }
                Repair::CutTornTail(cut) => {
                    let mut handle = self
                        .files
                        .open(&cut.path)
                        .map_err(|error| io_error(&cut.path, error))?;
                    self.files
                        .set_len(&mut handle, cut.position)
                        .and_then(|()| self.files.sync_all(&mut handle))
                        .map_err(|error| io_error(&cut.path, error))?;
                }
                Repair::Initialize { promise, meta } => {
                    // Promise first: a meta file vouches that a promise was written.
                    if *promise {
                        write_atomic(
                            &mut self.files,
                            &self.dir,
                            PROMISE_FILE,
                            // A new store has promised nothing: term 0, no vote.
                            &encode_hard_state(&HardState::default()),
                            &mut self.dir_syncs,
                        )?;
                    }
                    if *meta {
                        self.write_meta(0)?;
                    }
                }
                // Done below, once the segments are known.
                Repair::DropFront { .. } => {}
            }
        }
        self.disk.synced_mark = inspection.meta.map_or(0, |meta| meta.synced_mark);
        for file in inspection.segments {
            self.disk.segments.insert(
                file.base,
                Segment {
                    path: file.path,
                    first: file.first,
                    positions: file.positions,
                    len_bytes: file.len_bytes,
                },
            );
        }
        let recovered = inspection.recovered;
        let (start, next) = (recovered.start, recovered.next());
        self.disk.bounds = Bounds { start, next };
        // Finishes a jump into the middle of a segment that sealed but did not rewrite yet.
        self.drop_front_within(start)?;
        self.flush()?;
        Ok(recovered)
    }

    /// Replaces the meta file with this store's layout and `synced_mark`.
    fn write_meta(&mut self, synced_mark: Offset) -> Result<(), StoreError> {
        let meta = StoreMeta {
            records_per_segment: self.layout.records_per_segment,
            synced_mark,
        };
        write_atomic(
            &mut self.files,
            &self.dir,
            META_FILE,
            &encode_meta(&meta),
            &mut self.dir_syncs,
        )?;
        self.disk.synced_mark = synced_mark;
        Ok(())
    }
}

impl<F: FileSystem> LogStore for FileStore<F> {
    fn apply(&mut self, op: &StorageOp) -> Result<(), StoreError> {
        if !self.recovered {
            return Err(Self::not_recovered());
        }
        if self.pending.len() >= UNSYNCED_OPS_MAX {
            return Err(StoreError::Invalid {
                reason: format!("more than {UNSYNCED_OPS_MAX} ops applied without a sync"),
            });
        }
        self.bounds = self.bounds.step(self.layout, op)?;
        self.pending.push(op.clone());
        Ok(())
    }

    fn sync(&mut self) -> Result<(), StoreError> {
        if !self.recovered {
            return Err(Self::not_recovered());
        }
        let pending = std::mem::take(&mut self.pending);
        let mut result = Ok(());
        for op in &pending {
            result = self.write_op(op, None);
            if result.is_err() {
                break;
            }
        }
        if result.is_ok() {
            result = self.flush();
        }
        if result.is_err() {
            // What reached the disk is unknown: only a recovery can say.
            self.recovered = false;
            self.disk.active = None;
        } else {
            assert_eq!(self.disk.bounds, self.bounds);
        }
        result
    }

    fn recover(&mut self) -> Result<Recovered, StoreError> {
        self.recovered = false;
        let recovered = self.read_back()?;
        self.bounds = self.disk.bounds;
        self.recovered = true;
        Ok(recovered)
    }

    fn crash(
        &mut self,
        keep_unsynced_ops: usize,
        keep_entries_of_next: usize,
    ) -> Result<(), StoreError> {
        let pending = std::mem::take(&mut self.pending);
        self.recovered = false;
        let mut result = Ok(());
        for (index, op) in pending.iter().enumerate() {
            if index < keep_unsynced_ops {
                result = self.write_op(op, None);
            } else if index == keep_unsynced_ops {
                if let StorageOp::Append(_) = op {
                    result = self.write_op(op, Some(keep_entries_of_next));
                }
                break;
            }
            if result.is_err() {
                break;
            }
        }
        // Unsynced bytes stay in the page cache, as after a process crash; handles close.
        self.disk = Disk::new();
        result
    }

    fn unsynced_ops(&self) -> usize {
        self.pending.len()
    }

    fn start(&self) -> Offset {
        self.bounds.start
    }

    fn next(&self) -> Offset {
        self.bounds.next
    }
}
