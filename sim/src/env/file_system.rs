//! A simulated file system with POSIX power-loss semantics, for the real `FileStore` to run on in
//! the simulator (knob `file_store`).
//!
//! Files are inodes; a directory maps names to inodes. Each is kept twice:
//! - a file's durable content (as of its last fsync) and its current content, with the writes
//!   (`write_at`, `set_len`, a truncating `create`) made since, in order;
//! - a directory's durable entries (as of its last directory fsync) and its current entries, with
//!   the entry changes (a file created, renamed or removed) made since, in order.
//!
//! A power loss (`lose_power`) keeps, by a draw from the caller's stream:
//! - in each directory, the durable entries plus a prefix of the later entry changes, in order;
//! - in each file still named by a directory, the durable content plus a prefix of the later
//!   writes, the last of which may be torn (only a prefix of its bytes lands).
//!
//! A file whose entry was never made durable vanishes, whatever was fsynced to its data; a file
//! removed or replaced by a rename whose change was lost comes back with its durable content.
//! After the power loss everything that survived is durable.
//!
//! What it does not model: directories themselves are created durable (`create_dir_all`), a
//! rename moves a name within one directory only (the store never renames across directories),
//! writes never fail, and a torn write keeps a prefix of its bytes (never a reordering of
//! sectors within one write, nor garbage past what was written). Pure: no real file is touched,
//! every collection is ordered, every draw comes from the stream passed in.

use crate::env::rng::Stream;
use felix_core::storage::StoreError;
use felix_store::inspect::{too_long, StoreFiles};
use felix_store::FileSystem;
use std::collections::BTreeMap;
use std::io::{Error, ErrorKind};
use std::path::{Path, PathBuf};

/// One write to a file since its last fsync.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Write {
    At { position: u64, bytes: Vec<u8> },
    SetLen(u64),
}

impl Write {
    fn apply(&self, content: &mut Vec<u8>) {
        match self {
            Write::At { position, bytes } => {
                let start = *position as usize;
                let end = start + bytes.len();
                if content.len() < end {
                    content.resize(end, 0);
                }
                content[start..end].copy_from_slice(bytes);
            }
            Write::SetLen(len) => content.resize(*len as usize, 0),
        }
    }
}

/// One file's bytes: durable, current, and the writes between them.
#[derive(Clone, Debug, Default)]
struct Inode {
    durable: Vec<u8>,
    current: Vec<u8>,
    writes: Vec<Write>,
}

impl Inode {
    fn write(&mut self, write: Write) {
        write.apply(&mut self.current);
        self.writes.push(write);
    }
}

/// One change to a directory's entries since its last fsync.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Change {
    Link { name: String, inode: u64 },
    Rename { from: String, to: String },
    Unlink { name: String },
}

impl Change {
    fn apply(&self, entries: &mut BTreeMap<String, u64>) {
        match self {
            Change::Link { name, inode } => {
                entries.insert(name.clone(), *inode);
            }
            Change::Rename { from, to } => {
                if let Some(inode) = entries.remove(from) {
                    entries.insert(to.clone(), inode);
                }
            }
            Change::Unlink { name } => {
                entries.remove(name);
            }
        }
    }
}

/// One directory's entries: durable, current, and the changes between them.
#[derive(Clone, Debug, Default)]
struct Dir {
    durable: BTreeMap<String, u64>,
    current: BTreeMap<String, u64>,
    changes: Vec<Change>,
}

/// An open file: the inode it names (it stays that file through a rename, as a descriptor does).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Handle {
    inode: u64,
}

/// What a power loss dropped.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PowerLoss {
    /// Directory entry changes made since the directory's last fsync that were lost.
    pub entry_changes_lost: usize,
    /// Writes made since their file's last fsync that were lost (a torn one counts).
    pub writes_lost: usize,
    /// The last write kept in some file landed only in part.
    pub torn: bool,
}

impl PowerLoss {
    /// Whether the power loss dropped anything that was written.
    pub fn dropped(&self) -> bool {
        self.entry_changes_lost > 0 || self.writes_lost > 0
    }
}

/// Which kind of fsync a slip is asked about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fsync {
    /// A file's (`sync_all`, `sync_data`).
    File,
    /// A directory's (`sync_dir`).
    Dir,
}

/// A slip planted in the store's use of the file system, to prove that the judges catch one:
/// asked before each fsync with its kind and how many fsyncs of that kind this file system took
/// before, it answers whether to skip it (report success, make nothing durable). Only tests
/// plant one (`World::plant_slip`); no run the CLI makes has one.
pub type Slip = fn(Fsync, u64) -> bool;

/// The simulated file system. See the module docs.
#[derive(Clone, Debug, Default)]
pub struct SimFs {
    dirs: BTreeMap<PathBuf, Dir>,
    inodes: BTreeMap<u64, Inode>,
    next_inode: u64,
    /// Fsyncs taken so far, of files and of directories.
    fsyncs: (u64, u64),
    /// The slip planted, if any (tests only).
    pub slip: Option<Slip>,
}

fn not_found(path: &Path) -> Error {
    Error::new(ErrorKind::NotFound, format!("{} not found", path.display()))
}

/// The directory and the name of `path`.
fn split(path: &Path) -> std::io::Result<(PathBuf, String)> {
    let name = path.file_name().and_then(|name| name.to_str());
    match (path.parent(), name) {
        (Some(dir), Some(name)) => Ok((dir.to_path_buf(), name.to_string())),
        _ => Err(Error::new(
            ErrorKind::InvalidInput,
            format!("{} names no file", path.display()),
        )),
    }
}

impl SimFs {
    pub fn new() -> SimFs {
        SimFs::default()
    }

    /// Counts one fsync of `kind`, and whether a planted slip skips it.
    fn skipped(&mut self, kind: Fsync) -> bool {
        let count = match kind {
            Fsync::File => &mut self.fsyncs.0,
            Fsync::Dir => &mut self.fsyncs.1,
        };
        let before = *count;
        *count += 1;
        self.slip.is_some_and(|slip| slip(kind, before))
    }

    fn dir_mut(&mut self, dir: &Path) -> std::io::Result<&mut Dir> {
        self.dirs.get_mut(dir).ok_or_else(|| not_found(dir))
    }

    /// The inode `path` names now.
    fn lookup(&self, path: &Path) -> Option<u64> {
        let (dir, name) = split(path).ok()?;
        self.dirs.get(&dir)?.current.get(&name).copied()
    }

    fn inode_mut(&mut self, handle: &Handle) -> std::io::Result<&mut Inode> {
        self.inodes.get_mut(&handle.inode).ok_or_else(|| {
            Error::new(
                ErrorKind::NotFound,
                format!("inode {} is gone", handle.inode),
            )
        })
    }

    /// The bytes `path` holds now (None when nothing is there).
    pub fn contents(&self, path: &Path) -> Option<&[u8]> {
        let inode = self.lookup(path)?;
        self.inodes
            .get(&inode)
            .map(|inode| inode.current.as_slice())
    }

    /// Writes and entry changes not yet durable (what a power loss now may drop).
    pub fn unsynced(&self) -> usize {
        let changes: usize = self.dirs.values().map(|dir| dir.changes.len()).sum();
        let writes: usize = self.inodes.values().map(|inode| inode.writes.len()).sum();
        changes + writes
    }

    /// A power loss now: keeps what is durable and, drawn from `stream` (None: nothing), a
    /// prefix of what came since (see the module docs). Everything kept is durable afterwards.
    pub fn lose_power(&mut self, mut stream: Option<&mut Stream>) -> PowerLoss {
        let mut loss = PowerLoss::default();
        // A directory or a file with nothing since its last fsync is as it was: no draw, no copy.
        for dir in self.dirs.values_mut().filter(|dir| !dir.changes.is_empty()) {
            let kept = match stream.as_deref_mut() {
                Some(stream) if !dir.changes.is_empty() => stream.index(dir.changes.len() + 1),
                _ => 0,
            };
            loss.entry_changes_lost += dir.changes.len() - kept;
            for change in &dir.changes[..kept] {
                change.apply(&mut dir.durable);
            }
            dir.changes.clear();
            dir.current = dir.durable.clone();
        }
        let named: std::collections::BTreeSet<u64> = self
            .dirs
            .values()
            .flat_map(|dir| dir.current.values().copied())
            .collect();
        self.inodes.retain(|inode, _| named.contains(inode));
        for inode in self
            .inodes
            .values_mut()
            .filter(|inode| !inode.writes.is_empty())
        {
            let writes = std::mem::take(&mut inode.writes);
            let kept = match stream.as_deref_mut() {
                Some(stream) if !writes.is_empty() => stream.index(writes.len() + 1),
                _ => 0,
            };
            loss.writes_lost += writes.len() - kept;
            for write in &writes[..kept] {
                write.apply(&mut inode.durable);
            }
            // The first write lost may have landed in part: a prefix of its bytes.
            if let (Some(stream), Some(Write::At { position, bytes })) =
                (stream.as_deref_mut(), writes.get(kept))
            {
                if bytes.len() > 1 && stream.chance(500_000) {
                    let landed = 1 + stream.index(bytes.len() - 1);
                    Write::At {
                        position: *position,
                        bytes: bytes[..landed].to_vec(),
                    }
                    .apply(&mut inode.durable);
                    loss.torn = true;
                }
            }
            inode.current = inode.durable.clone();
        }
        loss
    }
}

impl StoreFiles for SimFs {
    fn names(&self, dir: &Path) -> Result<Vec<String>, StoreError> {
        match self.dirs.get(dir) {
            Some(found) => Ok(found.current.keys().cloned().collect()),
            None => Err(StoreError::Io {
                path: dir.to_path_buf(),
                reason: "not a directory".to_string(),
            }),
        }
    }

    fn check_regular(&self, path: &Path) -> Result<bool, StoreError> {
        Ok(self.lookup(path).is_some())
    }

    fn read_regular(&self, path: &Path, bytes_max: u64) -> Result<Option<Vec<u8>>, StoreError> {
        let Some(bytes) = self.contents(path) else {
            return Ok(None);
        };
        if bytes.len() as u64 > bytes_max {
            return Err(too_long(path, bytes.len() as u64, bytes_max));
        }
        Ok(Some(bytes.to_vec()))
    }
}

impl FileSystem for SimFs {
    type Handle = Handle;

    fn create_dir_all(&mut self, dir: &Path) -> std::io::Result<()> {
        self.dirs.entry(dir.to_path_buf()).or_default();
        Ok(())
    }

    fn create(&mut self, path: &Path) -> std::io::Result<Handle> {
        if let Some(inode) = self.lookup(path) {
            let handle = Handle { inode };
            self.inode_mut(&handle)?.write(Write::SetLen(0));
            return Ok(handle);
        }
        let (dir, name) = split(path)?;
        let inode = self.next_inode;
        let dir = self.dir_mut(&dir)?;
        dir.current.insert(name.clone(), inode);
        dir.changes.push(Change::Link { name, inode });
        self.next_inode += 1;
        self.inodes.insert(inode, Inode::default());
        Ok(Handle { inode })
    }

    fn open(&mut self, path: &Path) -> std::io::Result<Handle> {
        let inode = self.lookup(path).ok_or_else(|| not_found(path))?;
        Ok(Handle { inode })
    }

    fn write_at(
        &mut self,
        handle: &mut Handle,
        position: u64,
        bytes: &[u8],
    ) -> std::io::Result<()> {
        self.inode_mut(handle)?.write(Write::At {
            position,
            bytes: bytes.to_vec(),
        });
        Ok(())
    }

    fn set_len(&mut self, handle: &mut Handle, len: u64) -> std::io::Result<()> {
        self.inode_mut(handle)?.write(Write::SetLen(len));
        Ok(())
    }

    fn sync_all(&mut self, handle: &mut Handle) -> std::io::Result<()> {
        if self.skipped(Fsync::File) {
            return Ok(());
        }
        // The writes since, applied to the durable content: the current content, at the cost of
        // the bytes written rather than of the file.
        let inode = self.inode_mut(handle)?;
        for write in std::mem::take(&mut inode.writes) {
            write.apply(&mut inode.durable);
        }
        Ok(())
    }

    fn sync_data(&mut self, handle: &mut Handle) -> std::io::Result<()> {
        self.sync_all(handle)
    }

    fn sync_dir(&mut self, dir: &Path) -> std::io::Result<()> {
        if self.skipped(Fsync::Dir) {
            return Ok(());
        }
        // The changes since, applied to the durable entries: the current entries, at the cost of
        // the changes rather than of the directory. A file removed stays in memory until the next
        // power loss drops it (an open handle may still write to it).
        let found = self.dir_mut(dir)?;
        for change in std::mem::take(&mut found.changes) {
            change.apply(&mut found.durable);
        }
        Ok(())
    }

    fn read(&mut self, path: &Path) -> std::io::Result<Vec<u8>> {
        self.contents(path)
            .map(<[u8]>::to_vec)
            .ok_or_else(|| not_found(path))
    }

    fn rename(&mut self, from: &Path, to: &Path) -> std::io::Result<()> {
        let (dir, from_name) = split(from)?;
        let (to_dir, to_name) = split(to)?;
        if dir != to_dir {
            return Err(Error::new(
                ErrorKind::Unsupported,
                "a rename across directories",
            ));
        }
        let found = self.dir_mut(&dir)?;
        let inode = found
            .current
            .remove(&from_name)
            .ok_or_else(|| not_found(from))?;
        found.current.insert(to_name.clone(), inode);
        found.changes.push(Change::Rename {
            from: from_name,
            to: to_name,
        });
        Ok(())
    }

    fn remove(&mut self, path: &Path) -> std::io::Result<()> {
        let (dir, name) = split(path)?;
        let found = self.dir_mut(&dir)?;
        found.current.remove(&name).ok_or_else(|| not_found(path))?;
        found.changes.push(Change::Unlink { name });
        Ok(())
    }
}
