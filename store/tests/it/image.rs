//! A store directory as bytes (`felix_store::image`) read back through the core's recovery
//! (`inspect` over `MemoryFiles`): exactly what it was made of, frames where the image says, a
//! failed read or an oversized file refused, and a `MemoryStore` restored from it holding it.

use felix_core::record::{Command, Entry, Headers, Offset};
use felix_core::storage::{
    HardState, LogStore, MemoryStore, Recovered, SealedState, SegmentLayout, StoreError,
};
use felix_store::image::{image, MemoryFiles};
use felix_store::inspect::inspect;
use std::path::Path;

const LAYOUT: SegmentLayout = SegmentLayout {
    records_per_segment: 4,
};

/// A promise, a sealed state up to `start - 1`, and records `start..start + records`.
fn held(start: Offset, records: u64) -> Recovered {
    Recovered {
        hard_state: HardState {
            term: 7,
            vote: Some(2),
        },
        sealed: (start > 1).then(|| SealedState {
            floor: start - 1,
            base_offset: start - 1,
            base_term: 2,
            floor_tag: Some(Headers::with_epoch(3)),
            ..SealedState::default()
        }),
        start,
        entries: (start..start + records)
            .map(|offset| Entry {
                offset,
                term: 2 + offset / 6,
                command: Command::Write {
                    body: format!("record {offset}").into_bytes(),
                    headers: Headers::default(),
                },
            })
            .collect(),
        tail_cut: None,
    }
}

fn read_back(files: &MemoryFiles) -> Result<Recovered, StoreError> {
    inspect(files, Path::new("n0"), Some(LAYOUT)).map(|inspection| inspection.recovered)
}

fn files_of(recovered: &Recovered) -> MemoryFiles {
    MemoryFiles {
        files: image(LAYOUT, recovered).files,
        unreadable: None,
    }
}

#[test]
fn an_image_reads_back_as_exactly_what_it_was_made_of() {
    for (start, records) in [(1, 0), (1, 1), (1, 9), (6, 7), (9, 4)] {
        let held = held(start, records);
        assert_eq!(
            read_back(&files_of(&held)),
            Ok(held.clone()),
            "{start}+{records}"
        );
        // A store restored from it holds it, durably: its recovery gives it back.
        let mut store = MemoryStore::restored(LAYOUT, &held);
        assert_eq!(store.recover(), Ok(held));
    }
}

/// Each record's frame is where the image says: contiguous in its segment file from the start,
/// in offset order, and its bytes are that record's (cutting the file at a frame's end keeps the
/// records before it whole).
#[test]
fn frames_lie_end_to_end_in_their_segment_files() {
    let held = held(6, 7);
    let built = image(LAYOUT, &held);
    let offsets: Vec<Offset> = built.frames.iter().map(|frame| frame.offset).collect();
    assert_eq!(offsets, (6..13).collect::<Vec<_>>());
    for (index, frame) in built.frames.iter().enumerate() {
        let previous = index
            .checked_sub(1)
            .map(|before| &built.frames[before])
            .filter(|before| before.file == frame.file);
        let expected = previous.map_or(0, |before| before.position + before.len);
        assert_eq!(frame.position, expected, "{frame:?}");
        assert!(frame.len > 0);
        let file = &built.files[&frame.file];
        assert!(frame.position + frame.len <= file.len() as u64);
    }
    // The last frame of each file ends the file.
    for (name, bytes) in &built.files {
        if let Some(last) = built.frames.iter().rfind(|frame| &frame.file == name) {
            assert_eq!(last.position + last.len, bytes.len() as u64, "{name}");
        }
    }
}

/// A file whose read fails is an i/o error, whichever file it is; nothing else fails.
#[test]
fn a_failed_read_is_an_io_error() {
    let held = held(6, 7);
    let files = files_of(&held);
    for name in files.files.keys() {
        let failing = MemoryFiles {
            unreadable: Some(name.clone()),
            ..files.clone()
        };
        assert!(
            matches!(read_back(&failing), Err(StoreError::Io { .. })),
            "{name}: {:?}",
            read_back(&failing)
        );
    }
    let other = MemoryFiles {
        unreadable: Some("not-a-store-file".to_string()),
        ..files
    };
    assert_eq!(read_back(&other), Ok(held));
}

/// A metadata file longer than the store ever writes is refused for its size; one exactly at the
/// limit is read (and then refused for what it holds, not for its size).
#[test]
fn a_file_over_its_limit_is_refused_for_its_size() {
    let limit = 1usize << 20;
    let oversized = |bytes: usize| {
        let mut files = files_of(&held(1, 2));
        files.files.insert("promise".to_string(), vec![0; bytes]);
        read_back(&files)
    };
    let size_refusal = |result: &Result<Recovered, StoreError>| {
        matches!(result, Err(StoreError::Corrupt { reason, .. })
            if reason.contains("more than the store ever writes"))
    };
    assert!(
        size_refusal(&oversized(limit + 1)),
        "{:?}",
        oversized(limit + 1)
    );
    let at_limit = oversized(limit);
    assert!(
        at_limit.is_err() && !size_refusal(&at_limit),
        "{at_limit:?}"
    );
}
