//! The requests a client has in flight, and what the client needs to handle their answers.
//!
//! Every client has at most one request in flight (the driver contract in `mod.rs`), except a
//! pipelining writer, which may keep up to its bound of writes in flight at once. This is that
//! bookkeeping, once: `start` (one at a time) or `start_bounded` (a pipeline) hands out a fresh
//! id (strictly increasing per client, from 1) and remembers what the request was for; `get`
//! tells whether an answer is for a request in flight (a late duplicate or a stale id is not);
//! `take` ends the only one, `end` ends the one with a given id.

use super::RequestIds;
use crate::api::RequestId;

/// A client's requests in flight, each with `P`, what the client needs to handle its answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct InFlight<P> {
    ids: RequestIds,
    /// In the order they were started.
    current: Vec<(RequestId, P)>,
}

impl<P: Copy> InFlight<P> {
    pub(crate) fn new() -> InFlight<P> {
        InFlight {
            ids: RequestIds::new(),
            current: Vec::new(),
        }
    }

    /// Starts a request for `pending` and returns its fresh id: one request in flight at a time.
    pub(crate) fn start(&mut self, pending: P) -> RequestId {
        self.start_bounded(pending, 1)
    }

    /// Starts a request for `pending` while fewer than `max` are in flight (a pipeline) and
    /// returns its fresh id.
    pub(crate) fn start_bounded(&mut self, pending: P, max: usize) -> RequestId {
        assert!(max >= 1);
        assert!(self.current.len() < max, "{max} requests in flight at most");
        let id = self.ids.take();
        self.current.push((id, pending));
        id
    }

    pub(crate) fn is_some(&self) -> bool {
        !self.current.is_empty()
    }

    /// How many requests are in flight.
    pub(crate) fn len(&self) -> usize {
        self.current.len()
    }

    /// The id of the oldest request in flight.
    pub(crate) fn id(&self) -> Option<RequestId> {
        self.current.first().map(|(id, _)| *id)
    }

    /// What request `id` was for, if it is in flight.
    pub(crate) fn get(&self, id: RequestId) -> Option<P> {
        self.current
            .iter()
            .find(|(current, _)| *current == id)
            .map(|(_, pending)| *pending)
    }

    /// Ends the one request in flight of a client that keeps one at a time; returns what it was
    /// for.
    pub(crate) fn take(&mut self) -> Option<P> {
        assert!(self.current.len() <= 1, "take ends the only request");
        self.current.pop().map(|(_, pending)| pending)
    }

    /// Ends request `id`, if it is in flight; returns what it was for.
    pub(crate) fn end(&mut self, id: RequestId) -> Option<P> {
        let index = self
            .current
            .iter()
            .position(|(current, _)| *current == id)?;
        Some(self.current.remove(index).1)
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

    /// A pipeline keeps several requests, each recognised until it ends, in any order; the
    /// oldest is the one `id` names.
    #[test]
    fn a_pipeline_ends_its_requests_in_any_order() {
        let mut in_flight = InFlight::new();
        let first = in_flight.start_bounded('a', 3);
        let second = in_flight.start_bounded('b', 3);
        let third = in_flight.start_bounded('c', 3);
        assert_eq!(in_flight.len(), 3);
        assert_eq!((first, second, third), (1, 2, 3));
        assert_eq!(in_flight.id(), Some(first));
        assert_eq!(in_flight.end(second), Some('b'));
        assert_eq!(in_flight.end(second), None);
        assert_eq!(in_flight.get(third), Some('c'));
        assert_eq!(in_flight.end(first), Some('a'));
        assert_eq!(in_flight.id(), Some(third));
        assert_eq!(in_flight.len(), 1);
        assert!(in_flight.is_some());
        assert_eq!(in_flight.end(third), Some('c'));
        assert!(!in_flight.is_some());
        assert_eq!(in_flight.len(), 0);
    }
}
