//! The offset bounds of a store and how each op moves them: the one place both stores check an op
//! against the contract, so the in-memory and file-backed stores accept and refuse exactly the same
//! ops and agree on what each op drops.

use super::{SegmentLayout, StorageOp, StoreError};
use crate::codec::{entry_payload_bytes, PAYLOAD_BYTES_MAX};
use crate::record::Offset;

/// The store holds the contiguous entries `start .. next` (empty when equal).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bounds {
    pub start: Offset,
    pub next: Offset,
}

impl Bounds {
    /// An empty log whose first record will be offset 1.
    pub fn empty() -> Bounds {
        Bounds { start: 1, next: 1 }
    }

    /// The bounds after `op`, or why `op` breaks the contract. Pure: the caller changes state only
    /// on `Ok`.
    pub fn step(self, layout: SegmentLayout, op: &StorageOp) -> Result<Bounds, StoreError> {
        assert!(self.start >= 1);
        assert!(self.start <= self.next);
        let after = match op {
            StorageOp::Append(entries) => {
                for (index, entry) in entries.iter().enumerate() {
                    let payload_bytes = entry_payload_bytes(entry);
                    if payload_bytes > PAYLOAD_BYTES_MAX {
                        return Err(StoreError::Invalid {
                            reason: format!(
                                "record at offset {} is {payload_bytes} bytes encoded, above the \
                                 maximum {PAYLOAD_BYTES_MAX}",
                                entry.offset
                            ),
                        });
                    }
                    let expected = self.next + index as u64;
                    if entry.offset != expected {
                        return Err(StoreError::Invalid {
                            reason: format!(
                                "append of offset {} where the log continues at {}",
                                entry.offset, expected
                            ),
                        });
                    }
                }
                Bounds {
                    start: self.start,
                    next: self.next + entries.len() as u64,
                }
            }
            StorageOp::TruncateSuffix { from } => {
                if *from < self.start {
                    return Err(StoreError::Invalid {
                        reason: format!(
                            "truncation from {from} below the first held offset {}",
                            self.start
                        ),
                    });
                }
                Bounds {
                    start: self.start,
                    next: self.next.min(*from),
                }
            }
            StorageOp::HardState(_) => self,
            StorageOp::Compact { below, .. } => {
                let cut = self.compaction_cut(layout, *below);
                if cut > self.next {
                    return Err(StoreError::Invalid {
                        reason: format!(
                            "compaction below {below} would delete up to {cut}, past the tail {}",
                            self.next
                        ),
                    });
                }
                Bounds {
                    start: cut,
                    next: self.next,
                }
            }
            StorageOp::TrimmedTo { point, .. } => {
                if *point == 0 {
                    return Err(StoreError::Invalid {
                        reason: "trim-point jump to offset 0".to_string(),
                    });
                }
                let start = self.start.max(*point);
                Bounds {
                    start,
                    next: self.next.max(start),
                }
            }
        };
        assert!(
            after.start >= self.start,
            "the first held offset never goes back"
        );
        assert!(after.start <= after.next);
        Ok(after)
    }

    /// The first offset kept by `Compact { below }`: whole segments entirely below `below` go.
    pub fn compaction_cut(self, layout: SegmentLayout, below: Offset) -> Offset {
        if below <= self.start {
            self.start
        } else {
            layout.base_of(below).max(self.start)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{Command, Entry};

    #[test]
    fn a_record_of_exactly_the_largest_payload_is_accepted() {
        // Proves the size limit is inclusive: an append whose record encodes to exactly
        // `PAYLOAD_BYTES_MAX` payload bytes continues the log; one byte more is `Invalid`.
        let write = |body_bytes: usize| Entry {
            offset: 1,
            term: 1,
            command: Command::Write {
                body: vec![0; body_bytes],
                headers: Default::default(),
            },
        };
        // kind, offset, term, command tag, body length, header count: 26 bytes beside the body.
        let largest = write(PAYLOAD_BYTES_MAX - 26);
        assert_eq!(entry_payload_bytes(&largest), PAYLOAD_BYTES_MAX);
        let layout = SegmentLayout::default();
        assert_eq!(
            Bounds::empty().step(layout, &StorageOp::Append(vec![largest])),
            Ok(Bounds { start: 1, next: 2 })
        );
        let over = Bounds::empty().step(
            layout,
            &StorageOp::Append(vec![write(PAYLOAD_BYTES_MAX - 25)]),
        );
        assert!(matches!(over, Err(StoreError::Invalid { .. })));
    }
}
