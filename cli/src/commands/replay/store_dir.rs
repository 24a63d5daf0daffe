//! `felix replay ... --store-dir DIR`: each simulated node's disk written as a real file store.
//!
//! At the end of the run, each node's disk holds durably a promise, maybe a sealed state, and the
//! entries from its first held offset on (what a crash at that instant would keep). This module
//! writes that into `DIR/n<id>` through `FileStore`, the node's own store (the same files
//! `felix serve` keeps), so `felix store check` and `felix store dump` read a simulated cluster's
//! disks as they read a real node's. Each written store is opened again and compared with what the
//! simulated disk held; a difference is reported, never passed over.
//!
//! DIR must be new or empty: an existing store is never overwritten.

use felix_core::storage::{LogStore, Recovered, StorageOp, StoreError};
use felix_sim::env::disk::NodeDisk;
use felix_store::FileStore;
use std::path::{Path, PathBuf};

/// Refuses a DIR that is a file or a non-empty directory (checked before the run).
pub fn check_usable(dir: &Path) -> Result<(), String> {
    match std::fs::read_dir(dir) {
        Ok(mut entries) => match entries.next() {
            None => Ok(()),
            Some(_) => Err(format!(
                "--store-dir {}: not empty (the node stores go into a new or empty directory; nothing is overwritten)",
                dir.display()
            )),
        },
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(error) => Err(format!("--store-dir {}: {error}", dir.display())),
    }
}

/// The directory of node `node`'s store under `dir`.
pub fn node_dir(dir: &Path, node: u64) -> PathBuf {
    dir.join(format!("n{node}"))
}

/// Writes every node's disk under `dir` and says what it wrote (one line per node).
pub fn write(dir: &Path, disks: &[NodeDisk]) -> Result<Vec<String>, String> {
    std::fs::create_dir_all(dir)
        .map_err(|error| format!("--store-dir {}: cannot create: {error}", dir.display()))?;
    let mut lines = vec![format!(
        "stores: {} node disks written to {} (what each held durably at the end of the run):",
        disks.len(),
        dir.display()
    )];
    for disk in disks {
        let path = node_dir(dir, disk.node as u64);
        let durable = disk.durable.as_ref().map_err(|error| {
            format!(
                "node {}: the simulated disk did not read back: {error}",
                disk.node
            )
        })?;
        write_one(&path, disk, durable).map_err(|error| format!("{}: {error}", path.display()))?;
        let held = if durable.entries.is_empty() {
            format!("no records (next {})", durable.next())
        } else {
            format!("records {}..={}", durable.start, durable.next() - 1)
        };
        lines.push(format!(
            "  {}  node {} ({}): {held}, term {}, sealed floor {}",
            path.display(),
            disk.node,
            if disk.up { "up" } else { "down" },
            durable.hard_state.term,
            durable.sealed.as_ref().map_or(0, |sealed| sealed.floor),
        ));
    }
    lines.push(format!(
        "  look at one: felix store dump {}",
        node_dir(dir, disks.first().map_or(0, |disk| disk.node as u64)).display()
    ));
    Ok(lines)
}

/// Writes one node's durable state as a file store at `path`, then opens it again and checks
/// that it reads back exactly that state.
fn write_one(path: &Path, disk: &NodeDisk, durable: &Recovered) -> Result<(), String> {
    let describe = |error: StoreError| error.to_string();
    let mut store = FileStore::open(path, disk.layout).map_err(describe)?;
    store.recover().map_err(describe)?;
    match &durable.sealed {
        // An empty store starts at 1; the jump moves its first held offset to the disk's and
        // seals the state the dropped records folded to, as the node's own jump or compaction did.
        Some(sealed) => store
            .apply(&StorageOp::TrimmedTo {
                point: durable.start,
                state: sealed.clone(),
            })
            .map_err(describe)?,
        None if durable.start != 1 => {
            return Err(format!(
                "the disk starts at {} with no sealed state (only a jump or a compaction moves the start, and both seal)",
                durable.start
            ))
        }
        None => {}
    }
    if !durable.entries.is_empty() {
        store
            .apply(&StorageOp::Append(durable.entries.clone()))
            .map_err(describe)?;
    }
    store
        .apply(&StorageOp::HardState(durable.hard_state))
        .map_err(describe)?;
    store.sync().map_err(describe)?;
    drop(store);
    let mut reopened = FileStore::open(path, disk.layout).map_err(describe)?;
    let read = reopened.recover().map_err(describe)?;
    let same = read.hard_state == durable.hard_state
        && read.sealed == durable.sealed
        && read.start == durable.start
        && read.entries == durable.entries
        && read.tail_cut.is_none();
    if same {
        Ok(())
    } else {
        Err(format!(
            "the written store reads back differently (start {} vs {}, {} vs {} records, term {} vs {})",
            read.start,
            durable.start,
            read.entries.len(),
            durable.entries.len(),
            read.hard_state.term,
            durable.hard_state.term
        ))
    }
}
