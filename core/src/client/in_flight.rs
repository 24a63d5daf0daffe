//! The one request a client has in flight, and what the client needs to handle its answer.
//!
//! Every client has at most one request in flight (the driver contract in `mod.rs`). This is
//! that bookkeeping, once: `start` hands out a fresh id (strictly increasing per client, from 1)
//! and remembers what the request was for; `get` tells whether an answer is for the request in
//! flight (a late duplicate or a stale id is not); `take` ends it.

use super::RequestIds;
use crate::api::RequestId;

/// A client's request in flight, with `P`, what the client needs to handle the answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct InFlight<P> {
    ids: RequestIds,
    current: Option<(RequestId, P)>,
}

impl<P: Copy> InFlight<P> {
    pub(crate) fn new() -> InFlight<P> {
        InFlight {
            ids: RequestIds::new(),
            current: None,
        }
    }

    /// Starts a request for `pending` and returns its fresh id.
    pub(crate) fn start(&mut self, pending: P) -> RequestId {
        assert!(self.current.is_none(), "one request in flight at a time");
        let id = self.ids.take();
        self.current = Some((id, pending));
        id
    }

    pub(crate) fn is_some(&self) -> bool {
        self.current.is_some()
    }

    /// The id of the request in flight.
    pub(crate) fn id(&self) -> Option<RequestId> {
        self.current.map(|(id, _)| id)
    }

    /// What request `id` was for, if it is the one in flight.
    pub(crate) fn get(&self, id: RequestId) -> Option<P> {
        self.current
            .filter(|(current, _)| *current == id)
            .map(|(_, pending)| pending)
    }

    /// Ends the request in flight; returns what it was for.
    pub(crate) fn take(&mut self) -> Option<P> {
        self.current.take().map(|(_, pending)| pending)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ids increase from 1; only the id in flight is recognised, and only until it ends.
    #[test]
    fn only_the_request_in_flight_is_recognised() {
        let mut in_flight = InFlight::new();
        let first = in_flight.start('a');
        assert_eq!(first, 1);
        assert_eq!(in_flight.get(first), Some('a'));
        assert_eq!(in_flight.get(first + 1), None);
        assert_eq!(in_flight.take(), Some('a'));
        assert_eq!(in_flight.get(first), None);
        let second = in_flight.start('b');
        assert!(second > first);
        assert_eq!(in_flight.id(), Some(second));
    }
}
