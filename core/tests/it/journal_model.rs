//! Property test: the journal against a trivial model, under the default rules.
//!
//! The model keeps every record ever appended (it never deletes), the committed index, and a floor
//! that only rises when the walk reaches a trim. Random sequences of appends, trims (no-ops and
//! stale ones included), fences, commits, compactions, reads and recoveries run on both; every
//! answer and every read must be equal, and after every compaction the storage rules must hold
//! (whole segments, below the floor, committed only, floor record and active segment kept).

use felix_core::api::{InvalidRequest, ReadFrom, ReadRecord, Reply, Request};
use felix_core::journal::{Journal, JournalConfig, Sequenced, WalkEvent};
use felix_core::record::{Command, Entry, Headers, Offset, Token};
use felix_core::rules::Rules;
use felix_core::storage::SegmentLayout;
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Op {
    /// `tail_delta`: None = unconditional, Some(d) = expect tail + d (0 mostly).
    Append {
        tail_delta: Option<i8>,
        fence: Option<u8>,
    },
    /// Floor = tail - floor_back (floor_back 0 = its own offset; -1 = above it).
    Trim {
        tail_delta: Option<i8>,
        fence: Option<u8>,
        floor_back: i8,
        epoch: u8,
    },
    Fence {
        new: u8,
        old: u8,
    },
    Commit {
        count: u8,
    },
    Compact,
    Read {
        from_back: i8,
        max: u8,
    },
    ReadEarliest {
        max: u8,
    },
    Recover,
}

fn op() -> impl Strategy<Value = Op> {
    let delta = prop_oneof![3 => Just(None), 4 => Just(Some(0i8)), 1 => (-2i8..3).prop_map(Some)];
    let fence = prop_oneof![4 => Just(None), 1 => (0u8..3).prop_map(Some)];
    prop_oneof![
        6 => (delta.clone(), fence.clone()).prop_map(|(tail_delta, fence)| Op::Append { tail_delta, fence }),
        4 => (delta, fence, -1i8..6, 0u8..4)
            .prop_map(|(tail_delta, fence, floor_back, epoch)| Op::Trim { tail_delta, fence, floor_back, epoch }),
        1 => (0u8..3, 0u8..3).prop_map(|(new, old)| Op::Fence { new, old }),
        4 => (0u8..6).prop_map(|count| Op::Commit { count }),
        2 => Just(Op::Compact),
        3 => (-2i8..16, 0u8..5).prop_map(|(from_back, max)| Op::Read { from_back, max }),
        1 => (0u8..5).prop_map(|max| Op::ReadEarliest { max }),
        1 => Just(Op::Recover),
    ]
}

/// The trivial model: everything ever appended, nothing deleted.
struct Model {
    records: Vec<Entry>,
    committed: Offset,
    floor: Offset,
    floor_tag: Option<Headers>,
    floor_trim: Option<Offset>,
    walk_writer: Token,
}

impl Model {
    fn tail(&self) -> Offset {
        self.records.len() as u64 + 1
    }

    fn writer_through(&self, offset: Offset) -> Token {
        let mut writer = Token(0);
        for entry in &self.records[..offset as usize] {
            if let Command::Fence { new, .. } = entry.command {
                writer = new;
            }
        }
        writer
    }

    fn sequence(&mut self, request: &Request) -> Reply {
        let tail = self.tail();
        let current = self.writer_through(self.records.len() as u64);
        let (expected_tail, fence) = match request {
            Request::Append {
                expected_tail,
                fence,
                ..
            }
            | Request::Trim {
                expected_tail,
                fence,
                ..
            } => (*expected_tail, *fence),
            Request::Fence { old, .. } => (None, Some(*old)),
            Request::Read { .. } => unreachable!("reads are not sequenced here"),
        };
        if expected_tail.is_some_and(|expected| expected != tail) {
            return Reply::OffsetMismatch { tail };
        }
        if fence.is_some_and(|token| token != current) {
            return Reply::FenceMismatch { current };
        }
        let command = match request.clone() {
            Request::Append { body, headers, .. } => Command::Write { body, headers },
            Request::Trim {
                floor,
                headers,
                fence,
                ..
            } => {
                if floor > tail {
                    return Reply::Invalid(InvalidRequest::FloorAboveOffset {
                        floor,
                        offset: tail,
                    });
                }
                if floor <= self.floor {
                    return Reply::TrimNoop { tail };
                }
                Command::Trim {
                    floor,
                    headers,
                    fence,
                }
            }
            Request::Fence { new, old } => Command::Fence { new, old },
            Request::Read { .. } => unreachable!(),
        };
        self.records.push(Entry {
            offset: tail,
            term: 1,
            command,
        });
        // The journal answers appends only when committed; here "appended at tail".
        Reply::Appended {
            offset: tail,
            tail: tail + 1,
        }
    }

    fn commit_to(&mut self, committed: Offset) {
        while self.committed < committed {
            let entry = &self.records[self.committed as usize];
            match &entry.command {
                Command::Fence { new, .. } => self.walk_writer = *new,
                Command::Trim {
                    floor,
                    headers,
                    fence,
                } => {
                    let stale = fence.is_some_and(|token| token != self.walk_writer);
                    if !stale && *floor > self.floor {
                        self.floor = *floor;
                        self.floor_tag = Some(headers.clone());
                        self.floor_trim = Some(entry.offset);
                    }
                }
                _ => {}
            }
            self.committed += 1;
        }
    }

    fn read(&self, from: ReadFrom, max: u32, records_max: u32) -> Reply {
        let tail = self.committed + 1;
        let from = match from {
            ReadFrom::Earliest => self.floor,
            ReadFrom::Offset(offset) => offset,
        };
        if from > tail {
            return Reply::Invalid(InvalidRequest::ReadPastTail { from, tail });
        }
        if from < self.floor {
            return Reply::CursorTooOld {
                floor: self.floor,
                tag: self.floor_tag.clone(),
            };
        }
        let max = max.min(records_max) as usize;
        let mut records = Vec::new();
        let mut next = from;
        for entry in &self.records[(from - 1) as usize..self.committed as usize] {
            if records.len() >= max {
                break;
            }
            if let Command::Write { body, headers } = &entry.command {
                records.push(ReadRecord {
                    offset: entry.offset,
                    body: body.clone(),
                    headers: headers.clone(),
                });
            }
            next = entry.offset + 1;
        }
        Reply::Records { records, next }
    }
}

fn apply_delta(tail: Offset, delta: Option<i8>) -> Option<Offset> {
    delta.map(|delta| (tail as i64 + delta as i64).max(0) as u64)
}

fn run(ops: Vec<Op>) -> Result<(), TestCaseError> {
    let config = JournalConfig {
        layout: SegmentLayout {
            records_per_segment: 3,
        },
        rules: Rules::default(),
        read_records_max: 3,
        ..JournalConfig::default()
    };
    let layout = config.layout;
    let mut journal = Journal::new(config);
    let mut model = Model {
        records: Vec::new(),
        committed: 0,
        floor: 1,
        floor_tag: None,
        floor_trim: None,
        walk_writer: Token(0),
    };
    let mut events: Vec<WalkEvent> = Vec::new();
    // The model's floor as of the last compaction: what a recovery starts from.
    let mut sealed_fold: (Offset, Option<Headers>, Option<Offset>) = (1, None, None);
    for (step, op) in ops.into_iter().enumerate() {
        let tail = model.tail();
        match op {
            Op::Append { tail_delta, fence } => {
                let request = Request::Append {
                    expected_tail: apply_delta(tail, tail_delta),
                    fence: fence.map(|token| Token(token as u64)),
                    body: vec![step as u8],
                    headers: Headers::default(),
                };
                sequenced(&mut journal, &mut model, request, step)?;
            }
            Op::Trim {
                tail_delta,
                fence,
                floor_back,
                epoch,
            } => {
                let floor = (tail as i64 - floor_back as i64).max(0) as u64;
                let request = Request::Trim {
                    expected_tail: apply_delta(tail, tail_delta),
                    fence: fence.map(|token| Token(token as u64)),
                    floor,
                    headers: Headers::with_epoch(epoch as u64),
                };
                sequenced(&mut journal, &mut model, request, step)?;
            }
            Op::Fence { new, old } => {
                let request = Request::Fence {
                    new: Token(new as u64),
                    old: Token(old as u64),
                };
                sequenced(&mut journal, &mut model, request, step)?;
            }
            Op::Commit { count } => {
                let target = (model.committed + count as u64).min(model.records.len() as u64);
                model.commit_to(target);
                events.clear();
                journal.commit_to(target, &mut events);
            }
            Op::Compact => {
                if compacted(&mut journal, &model, layout)? {
                    sealed_fold = (model.floor, model.floor_tag.clone(), model.floor_trim);
                }
            }
            Op::Read { from_back, max } => {
                let from = (model.committed as i64 + 1 - from_back as i64).max(0) as u64;
                let expected = model.read(ReadFrom::Offset(from), max as u32, 3);
                prop_assert_eq!(
                    journal.read(ReadFrom::Offset(from), max as u32),
                    expected,
                    "step {}",
                    step
                );
            }
            Op::ReadEarliest { max } => {
                let expected = model.read(ReadFrom::Earliest, max as u32, 3);
                prop_assert_eq!(
                    journal.read(ReadFrom::Earliest, max as u32),
                    expected,
                    "step {}",
                    step
                );
            }
            Op::Recover => journal = recovered(&journal, config, &mut model, &sealed_fold)?,
        }
        agree(&journal, &model)?;
    }
    Ok(())
}

/// The journal recovered from what it holds (its sealed state, first held offset and records).
/// The model's committed index restarts at the sealed base and its floor at the floor as of the
/// last compaction, `sealed_fold` (the walk raises it again as the commit is relearned).
fn recovered(
    journal: &Journal,
    config: JournalConfig,
    model: &mut Model,
    sealed_fold: &(Offset, Option<Headers>, Option<Offset>),
) -> Result<Journal, TestCaseError> {
    let sealed = journal.sealed().clone();
    let held = journal.sealed().base_offset > 0;
    let entries: Vec<Entry> = journal.entries().cloned().collect();
    let journal = Journal::recover(
        config,
        held.then_some(sealed),
        journal.first_held(),
        entries,
    )
    .map_err(|error| TestCaseError::fail(error.to_string()))?;
    model.committed = journal.committed();
    (model.floor, model.floor_tag, model.floor_trim) = sealed_fold.clone();
    model.walk_writer = model.writer_through(model.committed);
    Ok(journal)
}

/// One sequencing step: the journal's answer is the model's.
fn sequenced(
    journal: &mut Journal,
    model: &mut Model,
    request: Request,
    step: usize,
) -> Result<(), TestCaseError> {
    let expected = model.sequence(&request);
    let actual = match journal.sequence(1, request) {
        Sequenced::Appended { offset, .. } => Reply::Appended {
            offset,
            tail: offset + 1,
        },
        Sequenced::Answered(reply) => reply,
    };
    prop_assert_eq!(actual, expected, "step {}", step);
    Ok(())
}

/// A compaction, if the journal makes one: whole segments only, below the floor, the committed
/// prefix and the active segment, keeping the floor record, never retention. Whether it made one.
fn compacted(
    journal: &mut Journal,
    model: &Model,
    layout: SegmentLayout,
) -> Result<bool, TestCaseError> {
    let first_before = journal.first_held();
    let Some(compaction) = journal.compact() else {
        return Ok(false);
    };
    let below = compaction.below;
    prop_assert!(below > first_before);
    prop_assert_eq!(layout.base_of(below), below, "whole segments only");
    prop_assert!(below <= model.floor, "only below the floor");
    prop_assert!(below <= model.committed + 1, "only committed records");
    prop_assert!(
        below <= layout.base_of(model.records.len() as u64),
        "never the active segment"
    );
    if let Some(trim) = model.floor_trim {
        prop_assert!(below <= trim, "the floor record is kept");
    }
    prop_assert!(!compaction.retention);
    Ok(true)
}

/// After every step, the journal's tail, commit, floor, tag, readable start, trim index and
/// records are the model's.
fn agree(journal: &Journal, model: &Model) -> Result<(), TestCaseError> {
    prop_assert_eq!(journal.tail(), model.tail());
    prop_assert_eq!(journal.committed(), model.committed);
    prop_assert_eq!(journal.floor(), model.floor);
    prop_assert_eq!(journal.floor_tag(), model.floor_tag.as_ref());
    prop_assert_eq!(journal.readable_start(), model.floor);
    prop_assert_eq!(journal.trim_index(), &journal.rebuild_trim_index());
    for entry in journal.entries() {
        prop_assert_eq!(Some(entry), model.records.get(entry.offset as usize - 1));
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// Proves the journal answers every sequencing step and read exactly as the trivial model does,
    /// and that compaction and recovery never change an answer.
    #[test]
    fn journal_matches_the_trivial_model(ops in proptest::collection::vec(op(), 1..80)) {
        run(ops)?;
    }
}
