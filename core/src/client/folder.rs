//! The folder: a reader that folds every write into a deterministic state.
//!
//! The state ([`Fold`]) is a running FNV-1a digest over `(offset, body)` of every application
//! write and a count of them. After each write the folder emits `Folded { offset, digest }`; the
//! FoldAgreement audit checks that every client folds the same offset to the same digest.
//!
//! Checkpoint runs (`checkpoint::RunRecord`, bodies with the magic prefix) are not application
//! writes. A complete run (`Begin`, every `Chunk` in order, `End` whose count and checksum match)
//! is where folds meet:
//! - a folder that lost its base (it was moved up to the floor with a `Gap`) **restores** from the
//!   run at the floor, at its `End` (`CheckpointRestored`);
//! - a folder that holds the whole prefix **compares** the run with its own state
//!   (`CheckpointCompared`; unequal digests are a FoldAgreement fact) and resets on it: a mid-log
//!   checkpoint resets every fold on it.
//!
//! Either way it then emits `Folded { offset: end, digest }`. A run with no `End` (its owner
//! crashed inside it), with a missing chunk or a bad checksum, or interrupted by any other write,
//! is ignored: never restored. A folder without a base whose floor holds no complete run has lost
//! the prefix for good; it folds the rest from an empty state, and its digests then disagree with
//! those of folders that hold the prefix: exactly what FoldAgreement must catch (a truncate that
//! was not at the owner's checkpoint, the `UnfencedTruncate` twin).

use super::checkpoint::{decode_state, RunRecord};
use super::reader::Reader;
use super::{Client, Step};
use crate::api::{ClientId, ReadRecord, Reply, Request, RequestId};
use crate::history::Event;
use crate::record::Offset;

const FNV_OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

/// The folded state of the journal's application writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fold {
    pub digest: u64,
    pub writes: u64,
}

impl Default for Fold {
    fn default() -> Fold {
        Fold::empty()
    }
}

impl Fold {
    /// The state of a journal with no writes.
    pub fn empty() -> Fold {
        Fold {
            digest: FNV_OFFSET_BASIS,
            writes: 0,
        }
    }

    /// Folds the application write at `offset`.
    pub fn apply(&mut self, offset: Offset, body: &[u8]) {
        let writes_before = self.writes;
        let mut digest = self.digest;
        let length = body.len() as u64;
        for byte in offset
            .to_le_bytes()
            .iter()
            .chain(length.to_le_bytes().iter())
            .chain(body)
        {
            digest ^= u64::from(*byte);
            digest = digest.wrapping_mul(FNV_PRIME);
        }
        self.digest = digest;
        self.writes += 1;
        assert_eq!(self.writes, writes_before + 1);
    }

    /// The state's bytes, as a checkpoint carries them.
    pub fn encode(&self) -> Vec<u8> {
        let mut bytes = Vec::with_capacity(16);
        bytes.extend_from_slice(&self.digest.to_be_bytes());
        bytes.extend_from_slice(&self.writes.to_be_bytes());
        bytes
    }

    /// Decodes `encode`'s bytes; `None` for anything else.
    pub fn decode(bytes: &[u8]) -> Option<Fold> {
        if bytes.len() != 16 {
            return None;
        }
        let digest = u64::from_be_bytes(bytes[0..8].try_into().ok()?);
        let writes = u64::from_be_bytes(bytes[8..16].try_into().ok()?);
        Some(Fold { digest, writes })
    }
}

/// A checkpoint run being read: `Begin` at `begin`, the chunks so far.
#[derive(Clone, Debug, PartialEq, Eq)]
struct OpenRun {
    begin: Offset,
    chunks: Vec<Vec<u8>>,
}

/// The fold of one client and the run it is reading: shared by the folder and the owner.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct FoldCore {
    client: ClientId,
    /// `None`: the base was lost (moved up to the floor); waiting for the run at the floor.
    fold: Option<Fold>,
    run: Option<OpenRun>,
    chunks_max: usize,
}

impl FoldCore {
    /// A fold from the start of the journal (the empty state is the base of offset 1).
    pub(crate) fn new(client: ClientId, chunks_max: usize) -> FoldCore {
        assert!(chunks_max > 0);
        FoldCore {
            client,
            fold: Some(Fold::empty()),
            run: None,
            chunks_max,
        }
    }

    pub(crate) fn fold(&self) -> Option<Fold> {
        self.fold
    }

    /// The cursor was moved up to the floor: everything below it is lost to this client.
    pub(crate) fn lose_base(&mut self) {
        self.fold = None;
        self.run = None;
    }

    /// Folds one write, returning the events it caused.
    pub(crate) fn ingest(&mut self, record: &ReadRecord) -> Vec<Event> {
        match RunRecord::decode(&record.body) {
            None => {
                // An application write: it interrupts any run being read.
                self.run = None;
                let fold = self.fold.get_or_insert_with(Fold::empty);
                fold.apply(record.offset, &record.body);
                vec![Event::Folded {
                    client: self.client,
                    offset: record.offset,
                    digest: fold.digest,
                }]
            }
            Some(RunRecord::Begin) => {
                self.run = Some(OpenRun {
                    begin: record.offset,
                    chunks: Vec::new(),
                });
                Vec::new()
            }
            Some(RunRecord::Chunk { index, payload }) => {
                let fits = match &self.run {
                    Some(run) => {
                        run.chunks.len() == index as usize && run.chunks.len() < self.chunks_max
                    }
                    None => false,
                };
                match (&mut self.run, fits) {
                    (Some(run), true) => run.chunks.push(payload),
                    _ => self.run = None,
                }
                Vec::new()
            }
            Some(RunRecord::End { chunks, checksum }) => {
                let Some(run) = self.run.take() else {
                    return Vec::new();
                };
                let Some(state) = decode_state(&run.chunks, chunks, checksum) else {
                    return Vec::new();
                };
                self.complete(run.begin, record.offset, state)
            }
            Some(RunRecord::Malformed) => {
                self.run = None;
                Vec::new()
            }
        }
    }

    fn complete(&mut self, begin: Offset, end: Offset, state: Fold) -> Vec<Event> {
        assert!(begin < end);
        let mut events = Vec::with_capacity(2);
        match self.fold {
            Some(own) => events.push(Event::CheckpointCompared {
                client: self.client,
                begin,
                end,
                digest: own.digest,
                checkpoint_digest: state.digest,
            }),
            None => events.push(Event::CheckpointRestored {
                client: self.client,
                begin,
                end,
            }),
        }
        self.fold = Some(state);
        events.push(Event::Folded {
            client: self.client,
            offset: end,
            digest: state.digest,
        });
        events
    }
}

/// A reader that folds: a `Reader` for the cursor, the reads and the gaps, plus the fold of
/// every write it delivers.
#[derive(Clone, Debug)]
pub struct Folder {
    reader: Reader,
    core: FoldCore,
}

impl Folder {
    /// A folder from the start of the journal. `chunks_max` bounds the chunks of a run it accepts.
    pub fn new(client: ClientId, read_batch_max: u32, chunks_max: usize) -> Folder {
        Folder {
            reader: Reader::new(client, 1, read_batch_max),
            core: FoldCore::new(client, chunks_max),
        }
    }

    /// The next offset this folder will read from (every write below it is folded).
    pub fn cursor(&self) -> Offset {
        self.reader.cursor()
    }

    /// The folded state; `None` while the folder waits to restore from a checkpoint.
    pub fn fold(&self) -> Option<Fold> {
        self.core.fold()
    }
}

impl Client for Folder {
    fn client_id(&self) -> ClientId {
        self.reader.client_id()
    }

    fn next_request(&mut self) -> Option<(RequestId, Request)> {
        self.reader.next_request()
    }

    fn on_reply(&mut self, id: RequestId, reply: Reply) -> Step {
        let mut step = self.reader.on_reply(id, reply);
        // A gap loses the base of the fold: it must restore from a checkpoint at the floor.
        if step
            .events
            .iter()
            .any(|event| matches!(event, Event::Gap { .. }))
        {
            self.core.lose_base();
        }
        for record in &step.delivered {
            step.events.extend(self.core.ingest(record));
        }
        step
    }

    fn on_unknown(&mut self, id: RequestId) -> Step {
        self.reader.on_unknown(id)
    }

    fn in_flight(&self) -> Option<RequestId> {
        self.reader.in_flight()
    }

    fn is_finished(&self) -> bool {
        false
    }
}
