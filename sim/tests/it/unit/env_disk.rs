//! The unit tests of `felix_sim::env::disk` (sim/src/env/disk.rs).

use felix_core::storage::{LogStore, SegmentLayout, StorageOp};
use felix_sim::env::rng::Stream;
use std::path::PathBuf;

use felix_core::record::{Command, Entry};
use felix_sim::env::disk::*;
use felix_sim::env::rng::Component;

fn append(offset: u64) -> StorageOp {
    StorageOp::Append(vec![Entry {
        offset,
        term: 1,
        command: Command::Noop,
    }])
}

/// What a sync covered survives a crash; what came after it is lost when the draw keeps
/// nothing; a sync starts only when something is pending and never twice at once.
#[test]
fn crash_keeps_synced_and_loses_unsynced() {
    let mut disk = Disk::new(SegmentLayout {
        records_per_segment: 2,
    });
    let mut stream = Stream::new(1, Component::Disk);
    assert!(!disk.start_sync(), "nothing to sync yet");
    assert_eq!(disk.apply(&append(1)), Ok(1));
    assert!(disk.start_sync());
    assert!(!disk.start_sync(), "one sync at a time");
    assert_eq!(disk.finish_sync(), Ok(()));
    assert_eq!(disk.synced(), 1);
    assert_eq!(disk.apply(&append(2)), Ok(2));
    assert_eq!(disk.apply(&append(3)), Ok(3));
    let loss = disk.crash(&mut stream, 0, 0).unwrap_or(CrashLoss {
        unsynced: 0,
        kept: 9,
        torn: true,
        power_loss: None,
    });
    assert_eq!(
        loss,
        CrashLoss {
            unsynced: 2,
            kept: 0,
            torn: false,
            power_loss: None,
        }
    );
    let recovered = disk.recover().map(|recovered| recovered.entries.len());
    assert_eq!(recovered, Ok(1));
    assert_eq!((disk.applied(), disk.synced()), (0, 0));
}

/// `durable` reads what a crash now would keep, and changes nothing: the ops a sync in flight
/// covers are not durable until it completes, the ops waiting behind it even later.
#[test]
fn durable_is_what_a_crash_now_would_keep() {
    let mut disk = Disk::new(SegmentLayout {
        records_per_segment: 2,
    });
    let held = |disk: &Disk| disk.durable().map(|durable| durable.next());
    assert_eq!(held(&disk), Ok(1));
    assert_eq!(disk.apply(&append(1)), Ok(1));
    assert_eq!(held(&disk), Ok(1), "applied, not synced");
    assert!(disk.start_sync());
    assert_eq!(disk.apply(&append(2)), Ok(2));
    assert_eq!(held(&disk), Ok(1), "the sync is in flight");
    assert_eq!(disk.finish_sync(), Ok(()));
    assert_eq!(held(&disk), Ok(2), "the sync covered offset 1 only");
    assert!(disk.start_sync());
    assert_eq!(disk.finish_sync(), Ok(()));
    assert_eq!(held(&disk), Ok(3));
    assert_eq!(
        (disk.applied(), disk.synced()),
        (2, 2),
        "reading changed nothing"
    );
    assert_eq!(disk.apply(&append(3)), Ok(3));
    assert_eq!(
        disk.store().map(LogStore::next),
        Some(4),
        "the store itself keeps its unsynced op"
    );
}

/// An op applied while a sync is in flight is not covered by it, and a crash before the next
/// sync loses it.
#[test]
fn a_sync_covers_only_what_came_before_it() {
    let mut disk = Disk::new(SegmentLayout {
        records_per_segment: 2,
    });
    let mut stream = Stream::new(2, Component::Disk);
    assert_eq!(disk.apply(&append(1)), Ok(1));
    assert!(disk.start_sync());
    assert_eq!(disk.apply(&append(2)), Ok(2));
    assert_eq!(disk.finish_sync(), Ok(()));
    assert_eq!(disk.synced(), 1);
    assert!(disk.start_sync(), "the op that waited needs its own sync");
    assert_eq!(disk.apply(&append(3)), Ok(3));
    let loss = disk.crash(&mut stream, 1_000_000, 0);
    assert!(
        matches!(
            loss,
            Ok(CrashLoss {
                unsynced: 2,
                kept: 0..=1,
                ..
            })
        ),
        "{loss:?}"
    );
    let held = disk
        .recover()
        .map(|recovered| recovered.entries.len())
        .unwrap_or(99);
    assert!((1..=2).contains(&held), "{held}");
}

/// With keeping certain, a crash keeps a drawn prefix of the unsynced ops, never more.
#[test]
fn crash_may_keep_a_prefix() {
    for seed in 0..20 {
        let mut disk = Disk::new(SegmentLayout {
            records_per_segment: 2,
        });
        let mut stream = Stream::new(seed, Component::Disk);
        for offset in 1..=4 {
            assert!(disk.apply(&append(offset)).is_ok());
        }
        let loss = disk.crash(&mut stream, 1_000_000, 0).unwrap_or(CrashLoss {
            unsynced: 0,
            kept: 9,
            torn: true,
            power_loss: None,
        });
        assert_eq!(loss.unsynced, 4);
        assert!(loss.kept <= 4);
        let held = disk
            .recover()
            .map(|recovered| recovered.entries.len())
            .unwrap_or(99);
        assert_eq!(held, loss.kept, "seed {seed}");
    }
}

/// A file-store disk keeps the same duties: what a sync covered survives the power loss of a
/// crash, `durable` reads what a power loss now would keep without touching the disk, and a
/// crash that keeps unsynced ops only wrote them: the power loss may drop them again.
#[test]
fn a_file_store_disk_keeps_what_it_synced() {
    let mut dropped = 0;
    for seed in 0..30 {
        let mut disk = Disk::file(
            SegmentLayout {
                records_per_segment: 2,
            },
            PathBuf::from("/n0"),
        );
        assert!(disk.is_file_store() && disk.store().is_none());
        let mut stream = Stream::new(seed, Component::Disk);
        assert_eq!(disk.apply(&append(1)), Ok(1));
        assert!(disk.start_sync());
        assert_eq!(disk.apply(&append(2)), Ok(2));
        assert_eq!(disk.finish_sync(), Ok(()));
        assert!(disk.start_sync());
        assert_eq!(disk.apply(&append(3)), Ok(3));
        let held = |disk: &Disk| disk.durable().map(|durable| durable.next());
        assert_eq!(held(&disk), Ok(2), "seed {seed}: offset 1 only is synced");
        let loss = disk.crash(&mut stream, 1_000_000, 500_000);
        let Ok(CrashLoss {
            unsynced: 2,
            power_loss: Some(power_loss),
            ..
        }) = loss
        else {
            panic!("seed {seed}: {loss:?}");
        };
        dropped += usize::from(power_loss.dropped());
        let next = disk.recover().map(|recovered| recovered.next());
        assert!(matches!(next, Ok(2..=3)), "seed {seed}: {next:?}");
        assert_eq!(held(&disk), next, "seed {seed}: what recovered is durable");
    }
    assert!(dropped > 0, "some power loss dropped a written op");
}
