//! The cluster's committed log, reconstructed from `Committed` events, shared by the audits.
//!
//! The record at offset `o` is the one named by the first `Committed` event for `o`, whichever
//! node emitted it. Audits other than CommittedPrefixAgreement read this one log; a later,
//! different commit at the same offset is that audit's business.

use felix_core::history::Event;
use felix_core::record::{Command, Entry, Headers, Offset};
use std::collections::{BTreeMap, BTreeSet};

/// The first commit of every offset: offset -> index of its first `Committed` event.
#[derive(Clone, Debug, Default)]
pub struct CommittedLog {
    first: BTreeMap<Offset, usize>,
}

impl CommittedLog {
    /// One pass over the history.
    pub fn from_history(history: &[Event]) -> CommittedLog {
        let mut log = CommittedLog::default();
        for (step, event) in history.iter().enumerate() {
            if let Event::Committed { entry, .. } = event {
                log.first.entry(entry.offset).or_insert(step);
            }
        }
        log
    }

    /// The first committed record at `offset` and the step that committed it.
    pub fn get<'h>(&self, history: &'h [Event], offset: Offset) -> Option<(usize, &'h Entry)> {
        let step = *self.first.get(&offset)?;
        committed_entry(&history[step]).map(|entry| (step, entry))
    }

    /// Every first commit, in offset order, with its step.
    pub fn iter<'a, 'h: 'a>(
        &'a self,
        history: &'h [Event],
    ) -> impl Iterator<Item = (usize, &'h Entry)> + 'a {
        self.first
            .values()
            .filter_map(move |step| committed_entry(&history[*step]).map(|entry| (*step, entry)))
    }

    /// The highest committed offset (0 when nothing was committed).
    pub fn last_offset(&self) -> Offset {
        self.first.keys().next_back().copied().unwrap_or(0)
    }
}

/// The entry of a `Committed` event.
pub fn committed_entry(event: &Event) -> Option<&Entry> {
    match event {
        Event::Committed { entry, .. } => Some(entry),
        _ => None,
    }
}

/// The lease epoch a write or trim carries (felixd's records), if any.
pub fn holder_epoch(command: &Command) -> Option<u64> {
    match command {
        Command::Write { headers, .. } | Command::Trim { headers, .. } => headers.epoch(),
        Command::Fence { .. } | Command::Noop => None,
    }
}

/// The floor a trim record asks for and its headers.
pub fn trim_floor(command: &Command) -> Option<(Offset, &Headers)> {
    match command {
        Command::Trim { floor, headers, .. } => Some((*floor, headers)),
        _ => None,
    }
}

/// Offsets of committed trims refused in place by the fence check (on any node: the walk is
/// deterministic, so a trim refused on one node is refused on all of them).
pub fn refused_trims(history: &[Event]) -> BTreeSet<Offset> {
    history
        .iter()
        .filter_map(|event| match event {
            Event::TruncateRefused { offset, .. } => Some(*offset),
            _ => None,
        })
        .collect()
}
