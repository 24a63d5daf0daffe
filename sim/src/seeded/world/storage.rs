//! Storage faults at restarts (knob `storage_faults`): what a restarting node's disk kept is read
//! back as the bytes a file store would hold, through the file store's own recovery
//! (`Disk::recover_bytes`, `felix_store::inspect`),
//! and the storage stream may damage those bytes or fail the read first.
//!
//! What the store's recovery answers decides what the node does:
//! - the state it read back: the node restarts from it (`Restarted`);
//! - an i/o error (a failed read): the node stays down and tries again after 1 to 100 ms;
//! - corruption: the node may have acknowledged records or granted votes that its store lost, and
//!   like a node that lost its promise it never rejoins: `StoreCorrupt` (the store's words, and
//!   what the damage was) instead of `Restarted`, and it stays down for good. PromiseDurable
//!   judges that no event of the node follows.
//!
//! Both are drawn only in the safety phase (the liveness phase's restarts, at the heal, read their
//! disks back whole), and damage only while fewer than a minority of the voters (`(brokers - 1) /
//! 2`: one of 3, two of 5) are lost for good, and only where the voters left can still elect with
//! a bare quorum (`may_lose_one`), so the cluster stays live and Progress and Convergence still
//! judge the nodes that are left (a node down for good is not live: neither judges it).

use super::*;
use crate::env::damage::Damage;
use crate::env::disk::StorageFault;
use crate::seeded::knobs::StorageFaults;
use felix_core::storage::StoreError;

/// A failed read is tried again after a delay drawn in this range (microseconds).
const READ_RETRY_MICROS: (u64, u64) = (1_000, 100_000);

impl World {
    /// Whether one more node may be lost for good: fewer than a minority of the voters are, and
    /// the voters left would still elect a leader with a bare quorum (their election timeouts
    /// spread over two durable round trips, `Bounds::elections`: two candidates that always time
    /// out within a vote's round trip of each other split every vote when no third voter can
    /// break the tie; seen, seed 150 of 0..1000 electing no leader for 27 s).
    fn may_lose_one(&self) -> bool {
        let lost = self.nodes.iter().filter(|slot| slot.lost).count();
        let voters = self.voters();
        let minority = voters.saturating_sub(1) / 2;
        if lost >= minority {
            return false;
        }
        let bounds = crate::judge::progress_bounds(&self.knobs);
        let bare = voters - (lost + 1) == voters / 2 + 1;
        !bare || bounds.elections() == felix_audits::progress::ELECTIONS_MAX
    }

    pub(super) fn restart_from_bytes(&mut self, index: usize, faults: StorageFaults) {
        let may_lose = self.may_lose_one();
        // Faults are healed in the liveness phase: its restarts read their disks back whole.
        let safety = self.phase == Phase::Safety;
        let stream = &mut self.storage_stream;
        let fault = if !safety {
            None
        } else if may_lose && stream.chance(faults.damage_per_million) {
            Some(StorageFault::Damage(
                Damage::ALL[stream.index(Damage::ALL.len())],
            ))
        } else if stream.chance(faults.read_error_per_million) {
            Some(StorageFault::ReadError)
        } else {
            None
        };
        let id = self.nodes[index].id;
        let dir = std::path::PathBuf::from(format!("n{id}"));
        let read = self.nodes[index]
            .host
            .disk
            .recover_bytes(&dir, fault, stream);
        let read = match read {
            Ok(read) => read,
            Err(error) => panic!("node {id}: the disk refused a read-back: {error}"),
        };
        match read.recovered {
            Ok(recovered) => {
                self.history(Event::Restarted { node: id });
                // Bytes a drawn fault damaged are not the disk's to answer for: RecoveryFaithful
                // judges only a read-back no fault touched.
                let judged = read.damage.is_none();
                self.start_node(index, |host| host.start_from(recovered, judged));
            }
            Err(error @ StoreError::Io { .. }) => {
                self.count(Counter::DiskReadFailed);
                let (low, high) = READ_RETRY_MICROS;
                let delay = self.storage_stream.range(low, high);
                self.sim(SimEvent::DiskReadFailed {
                    node: id,
                    error: error.to_string(),
                    retry_micros: delay,
                });
                self.queue.push_after(delay, Ev::Restart { node: index });
            }
            Err(error @ StoreError::Corrupt { .. }) => {
                if let (Some(StorageFault::Damage(kind)), Some(_)) = (fault, &read.damage) {
                    self.count(kind.counter());
                }
                self.nodes[index].lost = true;
                let damage = read.damage.as_deref().unwrap_or("no damage drawn");
                self.history(Event::StoreCorrupt {
                    node: id,
                    reason: format!("{error} (the disk had: {damage}); down for good"),
                });
            }
            Err(error) => panic!("node {id}: recovery refused its own store: {error}"),
        }
    }
}
