//! The file-backed log store, the one crate that keeps the journal on disk.
//!
//! `FileStore` keeps a node's log, promise and sealed state in one directory (`file.rs` says the
//! layout and the ordering of writes, fsyncs and renames that makes a crash lose only a suffix of
//! the unsynced ops), through a `FileSystem` (`file_system.rs`: the real one, `DirFiles`, or the
//! simulator's). `inspect` reads a directory back without writing (what recovery reads, and the
//! repairs it would make; `felix store check|dump`), and `image` renders a state as the bytes a
//! store holding it would have written (the simulator's storage faults damage those). The store's
//! contract (`felix_core::storage::LogStore`) and the in-memory store are the core's; this crate
//! implements the contract on disk.

pub mod file;
pub mod file_system;
pub mod image;
pub mod inspect;
pub mod segment;

pub use file::FileStore;
pub use file_system::FileSystem;
pub use inspect::{Inspection, Repair, SegmentFile};
