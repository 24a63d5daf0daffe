//! Records: the one offset space of the journal.
//!
//! Every command is a record at an offset: a `Write` (opaque body + headers), a `Trim` (asks for a
//! floor, carries the caller's headers), a `Fence` (sets the writer token, paros' SetLeader) and
//! the leader's `Noop`. Readers skip everything that is not a `Write` (bookkeeping records), but the
//! records are there, and compaction never deletes the trim that set the floor (under the
//! CompactActive twin it does; a jump can leave a node without it: `journal::trim_index`).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A position in the journal's one offset space. The first record is at offset 1; offset 0 means
/// "before the first record" (an empty log has tail 1).
pub type Offset = u64;

/// A Raft term (a promise). Persisted before any answer that depends on it.
pub type Term = u64;

/// A broker or replica identity, dense from 0.
pub type NodeId = u32;

/// A writer fence token (paros' leader uuid). `Token(0)` is "no writer yet".
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub struct Token(pub u64);

/// Caller headers carried by writes and trims. felixd puts its lease epoch under `epoch`.
/// A BTreeMap so that iteration (and therefore encoding and traces) is deterministic.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Headers(pub BTreeMap<String, String>);

impl Headers {
    /// The header key felixd uses for its lease epoch.
    pub const EPOCH: &'static str = "epoch";

    /// Headers carrying only a lease epoch.
    pub fn with_epoch(epoch: u64) -> Headers {
        let mut map = BTreeMap::new();
        map.insert(Headers::EPOCH.to_string(), epoch.to_string());
        Headers(map)
    }

    /// The lease epoch these headers carry, if any and well formed.
    pub fn epoch(&self) -> Option<u64> {
        self.0
            .get(Headers::EPOCH)
            .and_then(|value| value.parse().ok())
    }
}

/// What a record says.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Command {
    /// An application write: opaque to the journal.
    Write {
        #[serde(with = "crate::body_json")]
        body: Vec<u8>,
        headers: Headers,
    },
    /// Asks for the floor to rise to `floor` (at most the record's own offset). `fence`, when
    /// present, must be the writer token in force when the walk reaches it (paros' Truncate).
    Trim {
        floor: Offset,
        headers: Headers,
        fence: Option<Token>,
    },
    /// Sets the writer token (paros' SetLeader { new, old }).
    Fence { new: Token, old: Token },
    /// The leader's first record of its term.
    Noop,
}

/// A record at an offset, with the term of the leader that sequenced it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    pub offset: Offset,
    pub term: Term,
    pub command: Command,
}
