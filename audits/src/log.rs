//! The cluster's committed log, reconstructed from `Committed` events, shared by the audits.
//!
//! The record at offset `o` is the one named by the first `Committed` event for `o`, whichever
//! node emitted it. Audits other than CommittedPrefixAgreement read this one log; a later,
//! different commit at the same offset is that audit's business.

use felix_core::history::Event;
use felix_core::record::{Command, Entry, Headers, Offset, Token};
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

/// Offsets of committed trims refused in place by the fence check: a trim whose fence is not the
/// writer token in force where the walk reaches it (the token of the last committed fence before
/// it, 0 before any). Worked out from the committed log itself, along its contiguous prefix from
/// offset 1, so a core that stops refusing stale trims cannot hide one from the audits that trust
/// this set; the refusals the nodes report (`TruncateRefused`) are added, for a log whose first
/// offsets no event shows.
pub fn refused_trims(history: &[Event]) -> BTreeSet<Offset> {
    let mut refused: BTreeSet<Offset> = history
        .iter()
        .filter_map(|event| match event {
            Event::TruncateRefused { offset, .. } => Some(*offset),
            _ => None,
        })
        .collect();
    let log = CommittedLog::from_history(history);
    let mut writer = Token(0);
    for (expected, (_, entry)) in (1..).zip(log.iter(history)) {
        if entry.offset != expected {
            break; // a gap: the writer in force past it is not known from the events
        }
        match &entry.command {
            Command::Fence { new, .. } => writer = *new,
            Command::Trim {
                fence: Some(token), ..
            } if *token != writer => {
                refused.insert(entry.offset);
            }
            _ => {}
        }
    }
    refused
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{committed, trim, write};

    fn fenced(mut entry: Entry, token: u64) -> Entry {
        if let Command::Trim { fence, .. } = &mut entry.command {
            *fence = Some(Token(token));
        }
        entry
    }

    fn fence(offset: Offset, new: u64, old: u64) -> Entry {
        Entry {
            offset,
            term: 1,
            command: Command::Fence {
                new: Token(new),
                old: Token(old),
            },
        }
    }

    /// A trim fenced with a token other than the last committed fence's is refused, even when no
    /// node reports it (a core whose walk stopped checking); one fenced with the token in force is
    /// not; past a gap in the committed log only the nodes' reports count.
    #[test]
    fn stale_trims_are_worked_out_from_the_committed_log() {
        let history = vec![
            committed(0, fence(1, 1, 0)),
            committed(0, write(2, 1, 1)),
            committed(0, fenced(trim(3, 1, 2, 1), 1)),
            committed(0, fence(4, 2, 1)),
            committed(0, fenced(trim(5, 1, 3, 1), 1)),
            committed(0, fenced(trim(6, 1, 3, 2), 2)),
            // Offset 7 never committed in this history: offset 8's writer is not known.
            committed(0, fenced(trim(8, 1, 3, 1), 1)),
            Event::TruncateRefused {
                node: 1,
                offset: 9,
                current: Token(2),
            },
        ];
        assert_eq!(refused_trims(&history), BTreeSet::from([5, 9]));
    }
}
