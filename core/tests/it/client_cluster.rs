//! The checkpoint owner and the folders over three real brokers (paros' pattern on the Felix core):
//! fence, fold, checkpoint run, truncate to the run; a folder that followed compares, a fresh
//! folder restores; a stale owner's truncate is refused by the fence (and, under the
//! `UnfencedTruncate` twin, lands on a floor with no checkpoint and breaks FoldAgreement).

use crate::client_driver::Cluster;
use felix_core::api::{ClientId, Reply, Request};
use felix_core::client::checkpoint::OwnerOp;
use felix_core::client::{Folder, Owner, OwnerConfig, OwnerStatus};
use felix_core::history::Event;
use felix_core::{Offset, Rules, Token, TwinName};
use std::collections::BTreeMap;

const OWNER_A: ClientId = 10;
const OWNER_B: ClientId = 11;
const FOLLOWER: ClientId = 20;
const LATECOMER: ClientId = 21;

fn owner_config() -> OwnerConfig {
    OwnerConfig {
        read_batch_max: 16,
        chunk_bytes: 8,
        chunks_max: 8,
        ops_max: 8,
        writes_in_flight_max: 1,
    }
}

/// Reads until the folder has read everything committed (a read that returns nothing new).
fn catch_up(cluster: &mut Cluster, folder: &mut Folder) -> Vec<Event> {
    let mut events = Vec::new();
    for _ in 0..32 {
        let before = folder.cursor();
        let (_, step_events) = cluster.run_client(folder, 1);
        events.extend(step_events);
        if folder.cursor() == before && folder.fold().is_some() {
            return events;
        }
    }
    panic!("the folder did not catch up");
}

/// Offset -> digest of every `Folded` of `client`.
fn folds_of(history: &[Event], client: ClientId) -> BTreeMap<Offset, u64> {
    history
        .iter()
        .filter_map(|event| match event {
            Event::Folded {
                client: by,
                offset,
                digest,
            } if *by == client => Some((*offset, *digest)),
            _ => None,
        })
        .collect()
}

/// Offsets both clients folded to different digests.
fn disagreements(history: &[Event], left: ClientId, right: ClientId) -> Vec<Offset> {
    let right_folds = folds_of(history, right);
    folds_of(history, left)
        .into_iter()
        .filter(|(offset, digest)| right_folds.get(offset).is_some_and(|other| other != digest))
        .map(|(offset, _)| offset)
        .collect()
}

/// Owner A fences, writes three records, checkpoints (the run at 6..=9) and truncates to the run.
fn checkpointed(rules: Rules) -> (Cluster, Owner) {
    let mut cluster = Cluster::new(rules);
    let mut owner = Owner::new(OWNER_A, Token(1), Token(0), owner_config());
    for body in [b"a", b"b", b"c"] {
        owner
            .submit(OwnerOp::Write {
                body: body.to_vec(),
            })
            .expect("room");
    }
    owner.submit(OwnerOp::Checkpoint).expect("room");
    let (exchanges, events) = cluster.run_client(&mut owner, 32);
    // Fence at 2 (after the leader's noop), writes at 3..=5, a read, the run at 6..=9, the trim.
    assert_eq!(exchanges[0].1, Reply::Appended { offset: 2, tail: 3 });
    let written = events.iter().find_map(|event| match event {
        Event::CheckpointWritten { begin, end, .. } => Some((*begin, *end)),
        _ => None,
    });
    assert_eq!(written, Some((6, 9)));
    let last = exchanges.last().expect("the owner asked");
    assert!(
        matches!(last.0, Request::Trim { floor: 6, .. }),
        "truncate to the run's start"
    );
    assert_eq!(
        last.1,
        Reply::Appended {
            offset: 10,
            tail: 11
        }
    );
    assert_eq!(owner.status(), OwnerStatus::Fenced);
    assert_eq!(cluster.brokers[0].floor(), 6);
    (cluster, owner)
}

/// Fold, checkpoint, truncate; a folder that holds the whole prefix compares the run and agrees;
/// a folder that starts after the truncate reports the gap and restores from the run at the
/// floor; afterwards both fold the same writes to the same digests as the owner.
#[test]
fn folders_compare_and_restore_and_agree() {
    let mut cluster = Cluster::new(Rules::default());
    let mut owner = Owner::new(OWNER_A, Token(1), Token(0), owner_config());
    let mut follower = Folder::new(FOLLOWER, 16, 8);
    for body in [b"a", b"b", b"c"] {
        owner
            .submit(OwnerOp::Write {
                body: body.to_vec(),
            })
            .expect("room");
    }
    cluster.run_client(&mut owner, 8);
    catch_up(&mut cluster, &mut follower);
    owner.set_trim_limit(Some(follower.cursor()));
    owner.submit(OwnerOp::Checkpoint).expect("room");
    let (_, events) = cluster.run_client(&mut owner, 16);
    assert!(events.contains(&Event::CheckpointWritten {
        client: OWNER_A,
        begin: 6,
        end: 9
    }));
    assert_eq!(
        cluster.brokers[0].floor(),
        6,
        "the follower's cursor (6) allowed the truncate"
    );
    let digest = owner.fold().expect("the owner holds its fold").digest;
    let events = catch_up(&mut cluster, &mut follower);
    assert_eq!(
        events,
        vec![
            Event::CheckpointCompared {
                client: FOLLOWER,
                begin: 6,
                end: 9,
                digest,
                checkpoint_digest: digest
            },
            Event::Folded {
                client: FOLLOWER,
                offset: 9,
                digest
            },
        ]
    );
    let mut latecomer = Folder::new(LATECOMER, 16, 8);
    let events = catch_up(&mut cluster, &mut latecomer);
    assert_eq!(
        events,
        vec![
            Event::Gap {
                client: LATECOMER,
                from: 1,
                to: 6
            },
            Event::CheckpointRestored {
                client: LATECOMER,
                begin: 6,
                end: 9
            },
            Event::Folded {
                client: LATECOMER,
                offset: 9,
                digest
            },
        ]
    );
    owner
        .submit(OwnerOp::Write {
            body: b"d".to_vec(),
        })
        .expect("room");
    owner
        .submit(OwnerOp::Write {
            body: b"e".to_vec(),
        })
        .expect("room");
    cluster.run_client(&mut owner, 8);
    catch_up(&mut cluster, &mut follower);
    catch_up(&mut cluster, &mut latecomer);
    assert_eq!(
        folds_of(&cluster.history, LATECOMER).len(),
        3,
        "the End and two writes"
    );
    assert_eq!(
        disagreements(&cluster.history, FOLLOWER, LATECOMER),
        Vec::<Offset>::new()
    );
    assert_eq!(
        disagreements(&cluster.history, FOLLOWER, OWNER_A),
        Vec::<Offset>::new()
    );
}

/// A trim limit below the run's start (a folder still behind) skips the truncate.
#[test]
fn a_folder_behind_holds_the_truncate_back() {
    let mut cluster = Cluster::new(Rules::default());
    let mut owner = Owner::new(OWNER_A, Token(1), Token(0), owner_config());
    owner
        .submit(OwnerOp::Write {
            body: b"a".to_vec(),
        })
        .expect("room");
    owner.submit(OwnerOp::Checkpoint).expect("room");
    owner.set_trim_limit(Some(1));
    let (exchanges, _) = cluster.run_client(&mut owner, 16);
    assert!(!exchanges
        .iter()
        .any(|(request, _)| matches!(request, Request::Trim { .. })));
    assert_eq!(cluster.brokers[0].floor(), 1);
}

/// Owner B takes the fence from A; A's later truncate is refused by the fence and A stops,
/// naming B's token; the floor stays at A's run.
#[test]
fn a_stale_owners_truncate_is_refused() {
    let (mut cluster, mut owner_a) = checkpointed(Rules::default());
    let mut owner_b = Owner::new(OWNER_B, Token(2), Token(1), owner_config());
    owner_b
        .submit(OwnerOp::Write {
            body: b"b1".to_vec(),
        })
        .expect("room");
    let (exchanges, _) = cluster.run_client(&mut owner_b, 8);
    assert_eq!(
        exchanges[0].1,
        Reply::Appended {
            offset: 11,
            tail: 12
        }
    );
    assert_eq!(
        exchanges[1].1,
        Reply::Appended {
            offset: 12,
            tail: 13
        }
    );
    owner_a
        .submit(OwnerOp::Truncate { floor: 12 })
        .expect("room");
    let (exchanges, events) = cluster.run_client(&mut owner_a, 8);
    assert_eq!(exchanges.len(), 1);
    assert_eq!(exchanges[0].1, Reply::FenceMismatch { current: Token(2) });
    assert_eq!(
        events,
        vec![Event::OwnerStopped {
            client: OWNER_A,
            token: Token(1),
            current: Token(2)
        }]
    );
    assert_eq!(cluster.brokers[0].floor(), 6);
}

/// UnfencedTruncate: the stale owner's truncate lands on a floor (12) that is no checkpoint; a
/// latecomer that starts there has lost the prefix, folds from the empty state, and disagrees
/// with the follower that folded everything — the FoldAgreement violation the twin must show.
#[test]
fn unfenced_truncate_breaks_fold_agreement() {
    let rules = Rules::twin(TwinName::UnfencedTruncate);
    let (mut cluster, mut owner_a) = checkpointed(rules);
    let mut follower = Folder::new(FOLLOWER, 16, 8);
    // The follower starts after A's truncate: it restores from A's run, then follows B.
    catch_up(&mut cluster, &mut follower);
    let mut owner_b = Owner::new(OWNER_B, Token(2), Token(1), owner_config());
    owner_b
        .submit(OwnerOp::Write {
            body: b"b1".to_vec(),
        })
        .expect("room");
    owner_b
        .submit(OwnerOp::Write {
            body: b"b2".to_vec(),
        })
        .expect("room");
    cluster.run_client(&mut owner_b, 8);
    catch_up(&mut cluster, &mut follower);
    owner_a
        .submit(OwnerOp::Truncate { floor: 12 })
        .expect("room");
    let (exchanges, events) = cluster.run_client(&mut owner_a, 8);
    assert_eq!(
        exchanges[0].1,
        Reply::Appended {
            offset: 14,
            tail: 15
        }
    );
    assert!(events.is_empty());
    assert_eq!(cluster.brokers[0].floor(), 12);
    let mut latecomer = Folder::new(LATECOMER, 16, 8);
    let events = catch_up(&mut cluster, &mut latecomer);
    assert_eq!(
        events[0],
        Event::Gap {
            client: LATECOMER,
            from: 1,
            to: 12
        }
    );
    assert!(!events
        .iter()
        .any(|event| matches!(event, Event::CheckpointRestored { .. })));
    assert_eq!(
        disagreements(&cluster.history, FOLLOWER, LATECOMER),
        vec![12, 13]
    );
}

/// An owner that crashes inside its run leaves Begin and a chunk with no End: the follower never
/// compares or restores from it and keeps folding the next owner's writes on its own state.
#[test]
fn a_run_without_end_is_ignored_by_folders() {
    let mut cluster = Cluster::new(Rules::default());
    let mut owner_a = Owner::new(OWNER_A, Token(1), Token(0), owner_config());
    owner_a
        .submit(OwnerOp::Write {
            body: b"a".to_vec(),
        })
        .expect("room");
    owner_a.submit(OwnerOp::Checkpoint).expect("room");
    owner_a.crash_inside_run(2);
    cluster.run_client(&mut owner_a, 16);
    assert_eq!(owner_a.status(), OwnerStatus::Crashed);
    let mut owner_b = Owner::new(OWNER_B, Token(2), Token(1), owner_config());
    owner_b
        .submit(OwnerOp::Write {
            body: b"b".to_vec(),
        })
        .expect("room");
    cluster.run_client(&mut owner_b, 8);
    let mut follower = Folder::new(FOLLOWER, 16, 8);
    let events = catch_up(&mut cluster, &mut follower);
    let offsets: Vec<Offset> = events
        .iter()
        .map(|event| match event {
            Event::Folded { offset, .. } => *offset,
            other => panic!("only folds expected, got {other:?}"),
        })
        .collect();
    // Noop 1, fence 2, write 3, Begin 4, Chunk 5, B's fence 6, B's write 7.
    assert_eq!(offsets, vec![3, 7]);
}
