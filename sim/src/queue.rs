//! The event queue on simulated time.
//!
//! A min-heap of (time, sequence number, event): the sequence number is assigned at push time, so
//! two events due at the same microsecond come out in the order they were scheduled, never in an
//! order that depends on the heap's internals. The queue is bounded (`pending_max`) so a runaway
//! feedback loop in a model is a loud failure, not a slow one.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// Simulated time in microseconds since the start of the run.
pub type Time = u64;

struct Scheduled<E> {
    time: Time,
    sequence: u64,
    event: E,
}

impl<E> PartialEq for Scheduled<E> {
    fn eq(&self, other: &Self) -> bool {
        self.time == other.time && self.sequence == other.sequence
    }
}

impl<E> Eq for Scheduled<E> {}

impl<E> PartialOrd for Scheduled<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<E> Ord for Scheduled<E> {
    /// Reversed so that `BinaryHeap` (a max-heap) pops the earliest event first.
    fn cmp(&self, other: &Self) -> Ordering {
        (other.time, other.sequence).cmp(&(self.time, self.sequence))
    }
}

/// Pending events ordered by (time, push order).
pub struct EventQueue<E> {
    heap: BinaryHeap<Scheduled<E>>,
    sequence_next: u64,
    now: Time,
    pending_max: usize,
}

impl<E> EventQueue<E> {
    pub fn new(pending_max: usize) -> EventQueue<E> {
        assert!(pending_max > 0);
        EventQueue {
            heap: BinaryHeap::new(),
            sequence_next: 0,
            now: 0,
            pending_max,
        }
    }

    /// The time of the event popped last.
    pub fn now(&self) -> Time {
        self.now
    }

    /// Schedules `event` at `time` (never in the past).
    pub fn push(&mut self, time: Time, event: E) {
        assert!(
            time >= self.now,
            "event scheduled in the past: {time} < {}",
            self.now
        );
        assert!(
            self.heap.len() < self.pending_max,
            "event queue overflow: {} pending (pending_max)",
            self.heap.len()
        );
        let sequence = self.sequence_next;
        self.sequence_next += 1;
        self.heap.push(Scheduled {
            time,
            sequence,
            event,
        });
    }

    /// Schedules `event` `delay` microseconds from now.
    pub fn push_after(&mut self, delay: Time, event: E) {
        self.push(self.now.saturating_add(delay), event);
    }

    /// The next event, advancing the clock to its time.
    pub fn pop(&mut self) -> Option<(Time, E)> {
        let scheduled = self.heap.pop()?;
        assert!(scheduled.time >= self.now);
        self.now = scheduled.time;
        Some((scheduled.time, scheduled.event))
    }

    /// The time of the next event without removing it.
    pub fn peek_time(&self) -> Option<Time> {
        self.heap.peek().map(|scheduled| scheduled.time)
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Events come out by time, and events at the same time in push order.
    #[test]
    fn ties_break_by_push_order() {
        let mut queue = EventQueue::new(16);
        queue.push(5, "late");
        queue.push(1, "first");
        queue.push(1, "second");
        queue.push(3, "middle");
        queue.push(1, "third");
        let order: Vec<&str> = std::iter::from_fn(|| queue.pop().map(|(_, event)| event)).collect();
        assert_eq!(order, ["first", "second", "third", "middle", "late"]);
        assert_eq!(queue.now(), 5);
    }
}
