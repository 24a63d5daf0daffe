//! The unit tests of `felix_sim::env::damage` (sim/src/env/damage.rs).

use felix_sim::env::rng::Stream;

use felix_core::record::{Command, Entry};
use felix_core::storage::{HardState, Recovered, SegmentLayout, StoreError};
use felix_sim::env::damage::*;
use felix_sim::env::rng::Component;
use felix_store::image::{image, MemoryFiles};
use felix_store::inspect::inspect;
use std::path::Path;

const LAYOUT: SegmentLayout = SegmentLayout {
    records_per_segment: 4,
};

/// A log of `records` writes (bodies of 300 bytes: several sectors per segment file).
fn held(records: u64) -> Recovered {
    Recovered {
        hard_state: HardState {
            term: 3,
            vote: Some(1),
        },
        sealed: None,
        start: 1,
        entries: (1..=records)
            .map(|offset| Entry {
                offset,
                term: 1 + offset / 5,
                command: Command::Write {
                    body: vec![offset as u8 | 1; 300],
                    headers: Default::default(),
                },
            })
            .collect(),
        tail_cut: None,
    }
}

fn read_back(files: MemoryFiles) -> Result<Recovered, StoreError> {
    inspect(&files, Path::new("n1"), Some(LAYOUT)).map(|inspection| inspection.recovered)
}

/// The bytes of an undamaged image read back as exactly the state they were made of.
#[test]
fn an_image_reads_back_as_what_it_holds() {
    for records in [0, 1, 4, 9] {
        let held = held(records);
        let image = image(LAYOUT, &held);
        let files = MemoryFiles {
            files: image.files,
            unreadable: None,
        };
        assert_eq!(read_back(files), Ok(held));
    }
}

/// Every kind of damage, wherever it is drawn, is reported by the core's recovery as
/// corruption (never read back as a log, never cut as a torn tail).
#[test]
fn every_damage_is_found_by_the_core() {
    let held = held(9);
    for kind in Damage::ALL {
        for seed in 0..200 {
            let mut image = image(LAYOUT, &held);
            let mut stream = Stream::new(seed, Component::Disk);
            let Some(what) = damage(&mut image, kind, &mut stream) else {
                panic!("{kind:?} seed {seed}: nothing damaged");
            };
            let files = MemoryFiles {
                files: image.files,
                unreadable: None,
            };
            let read = read_back(files);
            assert!(
                matches!(read, Err(StoreError::Corrupt { .. })),
                "{kind:?} seed {seed} ({what}): {read:?}"
            );
        }
    }
}

/// What damage cannot be told from is left alone: a cut last record is a torn tail, which
/// recovery cuts and reports (not corruption), and no damage is drawn in that last record.
#[test]
fn a_torn_tail_is_cut_not_called_corrupt() {
    let held = held(6);
    let image = image(LAYOUT, &held);
    let last = image.frames.last().cloned();
    let Some(last) = last else {
        panic!("six records, no frame");
    };
    let mut files = image.files.clone();
    if let Some(bytes) = files.get_mut(&last.file) {
        bytes.truncate((last.position + last.len / 2) as usize);
    }
    let read = read_back(MemoryFiles {
        files,
        unreadable: None,
    });
    let Ok(read) = read else {
        panic!("a torn tail refused: {read:?}");
    };
    assert_eq!(read.entries.len(), 5);
    assert!(read.tail_cut.is_some());
    let regions = regions(&image);
    assert!(regions
        .iter()
        .any(|(name, end)| *name == last.file && *end == last.position));
}

/// A failed read is an i/o error, not corruption: the node may try again.
#[test]
fn a_failed_read_is_an_io_error() {
    let image = image(LAYOUT, &held(5));
    let read = read_back(MemoryFiles {
        files: image.files,
        unreadable: Some("seg-00000000000000000001.log".to_string()),
    });
    assert!(matches!(read, Err(StoreError::Io { .. })), "{read:?}");
}
