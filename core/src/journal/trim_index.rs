//! The trim index: one row (offset, floor, headers, fence) per trim record the node holds.
//!
//! It is derived like any index: the journal keeps it up to date incrementally as records are
//! appended, truncated and compacted, and `TrimIndex::scan` rebuilds it from the records alone.
//! The journal uses it to find the floor-setting trim's headers (the CursorTooOld tag) while that
//! record is held, and takes them from the fold otherwise. Compaction keeps the floor record, but
//! after a TrimmedTo jump the trim that set the floor need not be held: the jump adopts the
//! sender's floor, and with it a trim the node may not hold.

use crate::record::{Command, Entry, Headers, Offset, Token};
use std::collections::VecDeque;

/// One trim record, as the index sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrimIndexEntry {
    /// The offset of the trim record itself.
    pub offset: Offset,
    /// The floor it asks for (at most `offset`).
    pub floor: Offset,
    pub headers: Headers,
    pub fence: Option<Token>,
}

/// The trim rows of the held log, in offset order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TrimIndex {
    rows: VecDeque<TrimIndexEntry>,
}

impl TrimIndex {
    /// Rebuilds the index by a scan of held records (what a node does when the index is lost).
    pub fn scan<'a>(entries: impl IntoIterator<Item = &'a Entry>) -> TrimIndex {
        let mut index = TrimIndex::default();
        for entry in entries {
            index.note_appended(entry);
        }
        index
    }

    /// Records `entry` if it is a trim. Entries arrive in increasing offset order.
    pub fn note_appended(&mut self, entry: &Entry) {
        if let Command::Trim {
            floor,
            headers,
            fence,
        } = &entry.command
        {
            if let Some(last) = self.rows.back() {
                assert!(
                    last.offset < entry.offset,
                    "trim index rows must be appended in offset order"
                );
            }
            assert!(
                *floor <= entry.offset,
                "a held trim never asks for a floor above its own offset"
            );
            self.rows.push_back(TrimIndexEntry {
                offset: entry.offset,
                floor: *floor,
                headers: headers.clone(),
                fence: *fence,
            });
        }
    }

    /// Forgets every row at or above `from` (a truncated suffix).
    pub fn truncate_suffix(&mut self, from: Offset) {
        while self.rows.back().is_some_and(|row| row.offset >= from) {
            self.rows.pop_back();
        }
    }

    /// Forgets every row below `below` (deleted segments, a jump).
    pub fn drop_below(&mut self, below: Offset) {
        while self.rows.front().is_some_and(|row| row.offset < below) {
            self.rows.pop_front();
        }
    }

    /// The row of the trim record at `offset`, if held.
    pub fn get(&self, offset: Offset) -> Option<&TrimIndexEntry> {
        let position = self
            .rows
            .binary_search_by_key(&offset, |row| row.offset)
            .ok()?;
        self.rows.get(position)
    }

    pub fn iter(&self) -> impl Iterator<Item = &TrimIndexEntry> {
        self.rows.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trim(offset: Offset) -> Entry {
        Entry {
            offset,
            term: 1,
            command: Command::Trim {
                floor: offset,
                headers: Headers::with_epoch(offset),
                fence: None,
            },
        }
    }

    fn offsets(index: &TrimIndex) -> Vec<Offset> {
        index.iter().map(|row| row.offset).collect()
    }

    /// The index's edges: `drop_below(b)` keeps a row at `b` and `truncate_suffix(f)` drops the
    /// row at `f` (the first held offset and the first truncated one), and `get` finds exactly
    /// the rows held, with their fields.
    #[test]
    fn drop_below_keeps_the_row_at_the_bound_and_truncate_drops_it() {
        let noop = Entry {
            offset: 3,
            term: 1,
            command: Command::Noop,
        };
        let mut index = TrimIndex::scan([trim(2), noop, trim(4), trim(6), trim(8)].iter());
        assert_eq!(offsets(&index), vec![2, 4, 6, 8]);
        index.drop_below(4);
        assert_eq!(offsets(&index), vec![4, 6, 8]);
        index.truncate_suffix(8);
        assert_eq!(offsets(&index), vec![4, 6]);
        assert_eq!(index.get(3), None);
        assert_eq!(
            index.get(6),
            Some(&TrimIndexEntry {
                offset: 6,
                floor: 6,
                headers: Headers::with_epoch(6),
                fence: None,
            })
        );
        assert_eq!(index.get(8), None);
    }
}
