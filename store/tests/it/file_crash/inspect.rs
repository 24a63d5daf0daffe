//! `inspect` lists what recovery would repair and changes nothing.

use super::*;

#[test]
fn inspect_lists_what_recovery_would_repair_and_changes_nothing() {
    // Proves `FileStore::inspect` (what `felix store check` prints) tells a new directory from a
    // created one, describes each segment file recovery keeps (its first and next offset), and
    // lists every repair recovery would make, each saying which file and why, while it leaves the
    // directory exactly as it was.
    let dir = store_dir();
    a_new_directory_is_fresh(dir.path());
    a_created_store_that_lost_its_meta_is_not_fresh(dir.path());
    a_clean_store_lists_its_segments_and_no_repair(dir.path());
    an_interrupted_jump_lists_each_repair_recovery_makes(dir.path());
    an_empty_segment_is_listed_for_removal(dir.path());
}

fn a_new_directory_is_fresh(dir: &Path) {
    let new = FileStore::inspect(dir, Some(LAYOUT)).expect("inspect a new directory");
    assert!(new.fresh, "an empty directory is a new store");
    assert_eq!(
        new.repairs,
        vec![Repair::Initialize {
            promise: true,
            meta: true
        }]
    );
    assert_eq!(
        new.repairs[0].to_string(),
        "create the store: write promise and meta (term 0, no vote)"
    );
}

/// Created, then the meta file lost before anything was written: not new (it promised).
fn a_created_store_that_lost_its_meta_is_not_fresh(dir: &Path) {
    let mut store = open(dir);
    assert_eq!(store.dir(), dir);
    store.recover().expect("create");
    drop(store);
    fs::remove_file(dir.join("meta")).expect("remove meta");
    let created = FileStore::inspect(dir, Some(LAYOUT)).expect("inspect");
    assert!(
        !created.fresh,
        "a directory with a promise is not a new store"
    );
    assert_eq!(
        created.repairs,
        vec![Repair::Initialize {
            promise: false,
            meta: true
        }]
    );
    assert_eq!(
        created.repairs[0].to_string(),
        "create the store: write meta (term 0, no vote)"
    );
    open(dir).recover().expect("recreate the meta file");
}

fn a_clean_store_lists_its_segments_and_no_repair(dir: &Path) {
    let mut store = open(dir);
    store.recover().expect("recover");
    store.apply(&append(1, 11, 1)).expect("append");
    store.sync().expect("sync");
    drop(store);
    let clean = FileStore::inspect(dir, Some(LAYOUT)).expect("inspect");
    assert!(!clean.fresh);
    assert_eq!(clean.repairs, vec![]);
    let spans: Vec<(Offset, Offset, Offset)> = clean
        .segments
        .iter()
        .map(|file| (file.base, file.first, file.next()))
        .collect();
    assert_eq!(spans, vec![(1, 1, 5), (5, 5, 9), (9, 9, 12)]);
}

/// A jump to 10 whose deletions and rewrite were all lost, and a replacement that never reached
/// its rename; recovery makes the repairs listed, and afterwards there is nothing left to repair.
fn an_interrupted_jump_lists_each_repair_recovery_makes(dir: &Path) {
    let before = snapshot(dir);
    let mut store = open(dir);
    store.recover().expect("recover");
    store
        .apply(&StorageOp::TrimmedTo {
            point: 10,
            state: sealed(10),
        })
        .expect("jump");
    store.sync().expect("sync");
    drop(store);
    for (path, bytes) in &before {
        if segment::looks_like_segment(&path.file_name().expect("a name").to_string_lossy()) {
            fs::write(path, bytes).expect("the deletion and the rewrite never landed");
        }
    }
    let temp = dir.join("promise.tmp");
    fs::write(&temp, b"half a promise").expect("a leftover temp file");
    let interrupted = snapshot(dir);
    let inspection = FileStore::inspect(dir, Some(LAYOUT)).expect("inspect");
    assert_eq!(snapshot(dir), interrupted, "inspect changes nothing");
    assert_eq!(inspection.recovered.start, 10);
    assert_eq!(offsets(&inspection.recovered.entries), vec![10, 11]);
    let holder = segment_path(dir, 9);
    assert_eq!(
        inspection.repairs,
        vec![
            Repair::RemoveTemp { path: temp.clone() },
            Repair::FinishDeletion {
                path: segment_path(dir, 1)
            },
            Repair::FinishDeletion {
                path: segment_path(dir, 5)
            },
            Repair::DropFront {
                path: holder.clone(),
                below: 10
            },
        ]
    );
    let texts: Vec<String> = inspection.repairs.iter().map(Repair::to_string).collect();
    assert_eq!(
        texts,
        vec![
            format!(
                "remove {}: a replacement that never reached its rename",
                temp.display()
            ),
            format!(
                "remove {}: below the first held offset (finishes an interrupted compaction)",
                segment_path(dir, 1).display()
            ),
            format!(
                "remove {}: below the first held offset (finishes an interrupted compaction)",
                segment_path(dir, 5).display()
            ),
            format!(
                "rewrite {} without its records below 10 (finishes an interrupted jump)",
                holder.display()
            ),
        ]
    );
    // Recovery makes those repairs: afterwards there is nothing left to repair.
    open(dir).recover().expect("recover");
    let repaired = FileStore::inspect(dir, Some(LAYOUT)).expect("inspect");
    assert_eq!(repaired.repairs, vec![]);
    let spans: Vec<(Offset, Offset, Offset)> = repaired
        .segments
        .iter()
        .map(|file| (file.base, file.first, file.next()))
        .collect();
    assert_eq!(spans, vec![(9, 10, 12)]);
}

/// A segment file created just before a crash, with no record in it.
fn an_empty_segment_is_listed_for_removal(dir: &Path) {
    let empty = segment_path(dir, 13);
    fs::write(&empty, b"").expect("an empty segment");
    let inspection = FileStore::inspect(dir, Some(LAYOUT)).expect("inspect");
    assert_eq!(
        inspection.repairs,
        vec![Repair::RemoveEmpty {
            path: empty.clone()
        }]
    );
    assert_eq!(
        inspection.repairs[0].to_string(),
        format!(
            "remove {}: a segment without a record (created just before a crash)",
            empty.display()
        )
    );
}
