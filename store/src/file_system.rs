//! The file system a `FileStore` writes through: the operations it makes, as one trait.
//!
//! `DirFiles` (the real file system, `std::fs`) is the one a node and `felix store` use. The
//! simulator implements the trait over files in memory with power-loss semantics, so the real
//! store's ordering of writes, fsyncs, renames and directory fsyncs runs in every sweep. Reads
//! go through `StoreFiles`, which `inspect` already reads a directory with, except one: the
//! rewrite of the first segment file after a jump into its middle (or in the recovery that
//! finishes it) reads that file through `FileSystem::read`.

use crate::inspect::{DirFiles, StoreFiles};
use std::fs::{self, File, OpenOptions};
use std::io::{Seek, SeekFrom, Write};
use std::path::Path;

/// What a `FileStore` does to its directory. Every method maps to a system call or two (a write at
/// a position seeks first; `sync_dir` opens the directory to fsync it) and fails as they would.
pub trait FileSystem: StoreFiles + std::fmt::Debug {
    /// An open file, written through this file system.
    type Handle: std::fmt::Debug;
    /// Creates `dir` and its parents if missing.
    fn create_dir_all(&mut self, dir: &Path) -> std::io::Result<()>;
    /// Creates the file at `path` (emptied if it exists) and opens it for writing.
    fn create(&mut self, path: &Path) -> std::io::Result<Self::Handle>;
    /// Opens the existing file at `path` for writing.
    fn open(&mut self, path: &Path) -> std::io::Result<Self::Handle>;
    /// Writes `bytes` at byte `position` of `handle`'s file.
    fn write_at(
        &mut self,
        handle: &mut Self::Handle,
        position: u64,
        bytes: &[u8],
    ) -> std::io::Result<()>;
    /// Cuts (or extends) `handle`'s file to `len` bytes.
    fn set_len(&mut self, handle: &mut Self::Handle, len: u64) -> std::io::Result<()>;
    /// Fsyncs `handle`'s file, its data and its metadata (`fsync`).
    fn sync_all(&mut self, handle: &mut Self::Handle) -> std::io::Result<()>;
    /// Fsyncs `handle`'s file data (`fdatasync`).
    fn sync_data(&mut self, handle: &mut Self::Handle) -> std::io::Result<()>;
    /// Fsyncs the directory `dir`: its entries as they stand become durable.
    fn sync_dir(&mut self, dir: &Path) -> std::io::Result<()>;
    /// The whole file at `path`.
    fn read(&mut self, path: &Path) -> std::io::Result<Vec<u8>>;
    /// Renames `from` to `to`, replacing `to` if it exists.
    fn rename(&mut self, from: &Path, to: &Path) -> std::io::Result<()>;
    /// Removes the file at `path`.
    fn remove(&mut self, path: &Path) -> std::io::Result<()>;
}

impl FileSystem for DirFiles {
    type Handle = File;

    fn create_dir_all(&mut self, dir: &Path) -> std::io::Result<()> {
        fs::create_dir_all(dir)
    }

    fn create(&mut self, path: &Path) -> std::io::Result<File> {
        OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)
    }

    fn open(&mut self, path: &Path) -> std::io::Result<File> {
        OpenOptions::new().write(true).open(path)
    }

    fn write_at(&mut self, handle: &mut File, position: u64, bytes: &[u8]) -> std::io::Result<()> {
        handle
            .seek(SeekFrom::Start(position))
            .and_then(|_| handle.write_all(bytes))
    }

    fn set_len(&mut self, handle: &mut File, len: u64) -> std::io::Result<()> {
        handle.set_len(len)
    }

    fn sync_all(&mut self, handle: &mut File) -> std::io::Result<()> {
        handle.sync_all()
    }

    fn sync_data(&mut self, handle: &mut File) -> std::io::Result<()> {
        handle.sync_data()
    }

    fn sync_dir(&mut self, dir: &Path) -> std::io::Result<()> {
        File::open(dir).and_then(|handle| handle.sync_all())
    }

    fn read(&mut self, path: &Path) -> std::io::Result<Vec<u8>> {
        fs::read(path)
    }

    fn rename(&mut self, from: &Path, to: &Path) -> std::io::Result<()> {
        fs::rename(from, to)
    }

    fn remove(&mut self, path: &Path) -> std::io::Result<()> {
        fs::remove_file(path)
    }
}
