//! The checks a state-dependent reply must pass: a trim's answer, a `CursorTooOld`, where a
//! record lands, a no-op trim's tail and the records a read served.

use super::super::refusal::{records_words, refuse, tag_words, Words};
use super::{read_records_max, Effect, Slot, Spec};
use felix_core::api::{ReadFrom, ReadRecord, Reply, Request};
use felix_core::record::{Headers, Offset, Token};

impl Spec {
    /// A trim's answer that depends on the state: its landing, its refusal in place, or a no-op.
    pub(super) fn judge_trim(
        &self,
        request: &Request,
        (expected_tail, fence, floor, headers): (Option<Offset>, Option<Token>, Offset, &Headers),
        reply: &Reply,
        words: Words,
    ) -> Result<Option<Effect>, String> {
        match reply {
            Reply::Appended {
                offset,
                tail: after,
            } => {
                self.check_landing(*offset, *after, expected_tail, fence, words)?;
                if floor > *offset {
                    return refuse!(
                        words,
                        "a trim asking for floor {floor} landed at {offset}, below its floor"
                    );
                }
                // A lagging leader may append a trim at or below the floor: it lands, and changes
                // nothing when the walk reaches it.
                let mut effect = Effect::push(Slot::Trim {
                    floor,
                    refused: false,
                });
                effect.floor = Some((floor, headers.clone()));
                Ok(Some(effect))
            }
            Reply::TruncateRefused { current } => {
                if fence.is_none() || fence == Some(*current) {
                    return refuse!(
                        words,
                        "TruncateRefused naming token {} for a trim fenced with {:?}",
                        current.0,
                        fence.map(|token| token.0)
                    );
                }
                if *current != self.token {
                    return refuse!(
                        words,
                        "TruncateRefused naming token {} while token {} is in force",
                        current.0,
                        self.token.0
                    );
                }
                Ok(Some(Effect::push(Slot::Trim {
                    floor,
                    refused: true,
                })))
            }
            _ => {
                Spec::noop_trim_tail_worded(request, reply, words)?;
                if floor > self.floor() {
                    return refuse!(
                        words,
                        "a trim asking for floor {floor} answered as a no-op above floor {}",
                        self.floor()
                    );
                }
                Ok(None)
            }
        }
    }

    /// A `CursorTooOld` answer to a read from `from`: the floor it names must be above the read
    /// and must have been in force with that tag at some instant.
    pub(super) fn judge_cursor_too_old(
        &self,
        from: Offset,
        floor: Offset,
        tag: Option<&Headers>,
        words: Words,
    ) -> Result<Option<Effect>, String> {
        if from >= floor {
            return refuse!(
                words,
                "CursorTooOld with floor {floor} for a read from {from}, not below it"
            );
        }
        if !self
            .floors
            .iter()
            .any(|(known, known_tag)| *known == floor && known_tag.as_ref() == tag)
        {
            return refuse!(
                words,
                "CursorTooOld names floor {floor} with {}, never in force (now floor {}, {})",
                tag_words(tag),
                self.floor(),
                tag_words(self.tag()),
            );
        }
        Ok(None)
    }

    pub(super) fn check_landing(
        &self,
        offset: Offset,
        after: Offset,
        expected_tail: Option<Offset>,
        fence: Option<Token>,
        words: Words,
    ) -> Result<(), String> {
        let tail = self.tail();
        if offset != tail {
            return refuse!(words, "landed at {offset} while the tail is {tail}");
        }
        if after != offset.saturating_add(1) {
            return refuse!(words, "landed at {offset} naming tail {after}");
        }
        if let Some(expected) = expected_tail {
            if expected != offset {
                return refuse!(
                    words,
                    "conditional on tail {expected}, acknowledged at {offset}"
                );
            }
        }
        if let Some(token) = fence {
            if token != self.token {
                return refuse!(
                    words,
                    "fenced with token {}, acknowledged while token {} is in force",
                    token.0,
                    self.token.0
                );
            }
        }
        Ok(())
    }

    /// The tail a no-op trim names is the sequencing leader's (uncommitted records included): it
    /// must be the one the trim was conditional on (rule 4), whatever the state.
    pub fn noop_trim_tail(request: &Request, reply: &Reply) -> Result<(), String> {
        Spec::noop_trim_tail_worded(request, reply, Words::Wanted)
    }

    pub(super) fn noop_trim_tail_worded(
        request: &Request,
        reply: &Reply,
        words: Words,
    ) -> Result<(), String> {
        if let (
            Request::Trim {
                expected_tail: Some(expected),
                ..
            },
            Reply::TrimNoop { tail },
        ) = (request, reply)
        {
            if expected != tail {
                return refuse!(
                    words,
                    "a no-op trim conditional on tail {expected} answered with tail {tail}"
                );
            }
        }
        Ok(())
    }

    pub(super) fn check_records(
        &self,
        from: ReadFrom,
        max_records: u32,
        records: &[ReadRecord],
        next: Offset,
        words: Words,
    ) -> Result<(), String> {
        let (floor, tail) = (self.floor(), self.tail());
        self.check_records_at_worded(from, max_records, records, next, (floor, tail), words)
    }

    /// `check_records` as of an earlier instant of this log: its floor then and its tail then (the
    /// records below that tail are the same).
    pub fn check_records_at(
        &self,
        from: ReadFrom,
        max_records: u32,
        records: &[ReadRecord],
        next: Offset,
        floor: Offset,
        tail: Offset,
    ) -> Result<(), String> {
        self.check_records_at_worded(
            from,
            max_records,
            records,
            next,
            (floor, tail),
            Words::Wanted,
        )
    }

    /// `check_records_at`, its refusal worded only when `words` asks.
    pub(super) fn check_records_at_worded(
        &self,
        from: ReadFrom,
        max_records: u32,
        records: &[ReadRecord],
        next: Offset,
        (floor, tail): (Offset, Offset),
        words: Words,
    ) -> Result<(), String> {
        assert!(tail <= self.tail());
        let start = match from {
            ReadFrom::Offset(from) => from,
            // From the earliest the serving node holds: the floor, or a jumped node's trim point
            // above it. What it served must be the writes from its first record on.
            ReadFrom::Earliest => records.first().map_or(next, |record| record.offset),
        };
        if start < floor {
            return refuse!(words, "served records from {start}, below floor {floor}");
        }
        if next > tail {
            return refuse!(words, "served up to {next}, past the tail {tail}");
        }
        if next < start {
            return refuse!(words, "served next {next} below its start {start}");
        }
        let cap = max_records.min(read_records_max()) as usize;
        if records.len() < cap && next != tail {
            return refuse!(words,
                "served {} of at most {cap} records and stopped at {next}, short of the tail {tail}",
                records.len()
            );
        }
        let expected = self.writes(start, next);
        if expected.as_slice() != records {
            return refuse!(
                words,
                "served {} in [{start}, {next}), where the log holds {}",
                records_words(records),
                records_words(&expected)
            );
        }
        Ok(())
    }
}
