//! The reader: a cursor over the committed writes of the journal.
//!
//! It reads from its cursor, hands what it read to the application (`Step::delivered`) and moves
//! the cursor to the reply's `next`. Below the floor (`CursorTooOld`) it moves the cursor up to
//! the floor and reports `Gap { from, to }`: records are never skipped silently. A node that
//! cannot serve the range (`NotHeld`, a node whose committed prefix is behind the cursor) is not a
//! gap: the reader asks another node (`Route::AnotherNode`). A node that could not learn a read
//! index (`NoReadIndex`) is handled like `NotLeader`: ask the hinted leader. It always re-reads
//! from its own cursor, never from `Earliest` (which resolves to the floor and hides the gap).

use super::{Client, InFlight, Route, Step};
use crate::api::{ClientId, InvalidRequest, ReadFrom, ReadRecord, Reply, Request, RequestId};
use crate::history::Event;
use crate::record::Offset;

/// What one reply meant to a cursor: shared by the reader and the folder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ReadOutcome {
    /// Records from the cursor; the cursor moves to `next`.
    Records {
        records: Vec<ReadRecord>,
        next: Offset,
    },
    /// The cursor was below the floor and moved up to it.
    Gap { from: Offset, to: Offset },
    /// The node could not serve: route the next read.
    Elsewhere(Route),
    /// Not an answer to a read from `cursor` (malformed or of the wrong kind).
    Bad,
}

/// Interprets a reply to `Read { from: Offset(cursor) }` without changing anything.
pub(crate) fn interpret(cursor: Offset, reply: Reply) -> ReadOutcome {
    match reply {
        Reply::Records { records, next } => {
            let ordered = records
                .windows(2)
                .all(|pair| pair[0].offset < pair[1].offset);
            let in_range = records
                .iter()
                .all(|record| record.offset >= cursor && record.offset < next);
            if next < cursor || !ordered || !in_range {
                ReadOutcome::Bad
            } else {
                ReadOutcome::Records { records, next }
            }
        }
        Reply::CursorTooOld { floor, .. } if floor > cursor => ReadOutcome::Gap {
            from: cursor,
            to: floor,
        },
        // A refusal that names a floor at or below the cursor comes from a node that is behind or
        // confused: not news about the floor.
        Reply::CursorTooOld { .. }
        | Reply::NotHeld { .. }
        | Reply::Invalid(InvalidRequest::ReadPastTail { .. }) => {
            ReadOutcome::Elsewhere(Route::AnotherNode)
        }
        // A node that could not learn a read index is handled like one that does not lead.
        Reply::NotLeader { hint } | Reply::NoReadIndex { hint } => {
            ReadOutcome::Elsewhere(Route::Leader(hint))
        }
        _ => ReadOutcome::Bad,
    }
}

/// A plain reader.
#[derive(Clone, Debug)]
pub struct Reader {
    client: ClientId,
    cursor: Offset,
    read_batch_max: u32,
    in_flight: InFlight<()>,
}

impl Reader {
    /// A reader starting at `cursor` (1 for the start of the journal).
    pub fn new(client: ClientId, cursor: Offset, read_batch_max: u32) -> Reader {
        assert!(cursor >= 1, "offsets start at 1");
        assert!(read_batch_max > 0);
        Reader {
            client,
            cursor,
            read_batch_max,
            in_flight: InFlight::new(),
        }
    }

    /// The next offset this reader will read from.
    pub fn cursor(&self) -> Offset {
        self.cursor
    }
}

impl Client for Reader {
    fn client_id(&self) -> ClientId {
        self.client
    }

    fn next_request(&mut self) -> Option<(RequestId, Request)> {
        if self.in_flight.is_some() {
            return None;
        }
        let id = self.in_flight.start(());
        let request = Request::Read {
            from: ReadFrom::Offset(self.cursor),
            max_records: self.read_batch_max,
        };
        Some((id, request))
    }

    fn on_reply(&mut self, id: RequestId, reply: Reply) -> Step {
        if self.in_flight.get(id).is_none() {
            return Step::ignored();
        }
        self.in_flight.take();
        match interpret(self.cursor, reply) {
            ReadOutcome::Records { records, next } => {
                assert!(next >= self.cursor);
                self.cursor = next;
                Step {
                    delivered: records,
                    ..Step::default()
                }
            }
            ReadOutcome::Gap { from, to } => {
                assert!(to > self.cursor);
                self.cursor = to;
                Step::events(vec![Event::Gap {
                    client: self.client,
                    from,
                    to,
                }])
            }
            ReadOutcome::Elsewhere(route) => Step::route(route),
            ReadOutcome::Bad => Step::none(),
        }
    }

    fn on_unknown(&mut self, id: RequestId) -> Step {
        if self.in_flight.get(id).is_none() {
            return Step::ignored();
        }
        // A read changes nothing: reading again from the same cursor is always safe.
        self.in_flight.take();
        Step::none()
    }

    fn in_flight(&self) -> Option<RequestId> {
        self.in_flight.id()
    }

    fn is_finished(&self) -> bool {
        false
    }
}
