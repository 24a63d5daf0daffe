//! The event queue on simulated time.
//!
//! A min-heap of (time, sequence number): the sequence number is assigned at push time, so two
//! events due at the same microsecond come out in the order they were scheduled, never in an order
//! that depends on the heap's internals. The queue is bounded (`pending_max`) so a runaway
//! feedback loop in a model is a loud failure, not a slow one.
//!
//! For speed the heap is a 4-ary min-heap (half the depth of a binary heap, a node's children
//! side by side) of 16-byte keys: the time in the high 64 bits, the sequence number and the index
//! of the event's slot (its low `SLOT_BITS` bits) in the low 64. The events themselves wait in a
//! slab of reused slots and never move while pending. Since sequence numbers are unique, ordering
//! keys orders by (time, sequence) exactly: the slot bits never decide.

/// Simulated time in microseconds since the start of the run.
pub type Time = u64;

/// Bits of a key that name the event's slot (so at most 2^24 events pending).
const SLOT_BITS: u32 = 24;
const SLOT_MASK: u64 = (1 << SLOT_BITS) - 1;
/// Pushes one queue may take in its life (2^40: far beyond any run's event budget).
const SEQUENCE_MAX: u64 = 1 << (64 - SLOT_BITS);

/// Pending events ordered by (time, push order).
pub struct EventQueue<E> {
    /// `time << 64 | sequence << SLOT_BITS | slot`, a 4-ary min-heap: the children of `i` are
    /// `4i + 1 ..= 4i + 4`.
    heap: Vec<u128>,
    /// The events, by slot; `None` for a free slot.
    slots: Vec<Option<E>>,
    /// Free slots, reused last-freed first.
    free: Vec<u32>,
    sequence_next: u64,
    now: Time,
    pending_max: usize,
}

impl<E> EventQueue<E> {
    pub fn new(pending_max: usize) -> EventQueue<E> {
        assert!(pending_max > 0);
        assert!(
            pending_max as u64 <= SLOT_MASK + 1,
            "pending_max {pending_max} above 2^{SLOT_BITS}"
        );
        EventQueue {
            heap: Vec::new(),
            slots: Vec::new(),
            free: Vec::new(),
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
        assert!(self.sequence_next < SEQUENCE_MAX, "event sequence overflow");
        let sequence = self.sequence_next;
        self.sequence_next += 1;
        let slot = match self.free.pop() {
            Some(slot) => {
                debug_assert!(self.slots[slot as usize].is_none());
                self.slots[slot as usize] = Some(event);
                slot
            }
            None => {
                self.slots.push(Some(event));
                (self.slots.len() - 1) as u32
            }
        };
        debug_assert!(u64::from(slot) <= SLOT_MASK);
        let key = u128::from(time) << 64 | u128::from(sequence << SLOT_BITS | u64::from(slot));
        self.sift_up(key);
    }

    /// Schedules `event` `delay` microseconds from now.
    pub fn push_after(&mut self, delay: Time, event: E) {
        self.push(self.now.saturating_add(delay), event);
    }

    /// The next event, advancing the clock to its time.
    pub fn pop(&mut self) -> Option<(Time, E)> {
        let key = *self.heap.first()?;
        let last = self.heap.pop().expect("a first key means a last one");
        if !self.heap.is_empty() {
            self.sift_down(last);
        }
        let time = (key >> 64) as Time;
        assert!(time >= self.now);
        self.now = time;
        let slot = (key as u64 & SLOT_MASK) as u32;
        let event = self.slots[slot as usize]
            .take()
            .expect("a pending key names a full slot");
        self.free.push(slot);
        Some((time, event))
    }

    /// The time of the next event without removing it.
    pub fn peek_time(&self) -> Option<Time> {
        self.heap.first().map(|key| (key >> 64) as Time)
    }

    /// Adds `key` at the end and moves it up past every parent it precedes.
    fn sift_up(&mut self, key: u128) {
        let mut hole = self.heap.len();
        self.heap.push(key);
        while hole > 0 {
            let parent = (hole - 1) / 4;
            if self.heap[parent] <= key {
                break;
            }
            self.heap[hole] = self.heap[parent];
            hole = parent;
        }
        self.heap[hole] = key;
    }

    /// Puts `key` at the root (which was just taken) and moves it down past every smaller child.
    fn sift_down(&mut self, key: u128) {
        let len = self.heap.len();
        let mut hole = 0;
        loop {
            let first = 4 * hole + 1;
            if first >= len {
                break;
            }
            let mut least = first;
            for child in first + 1..(first + 4).min(len) {
                if self.heap[child] < self.heap[least] {
                    least = child;
                }
            }
            if self.heap[least] >= key {
                break;
            }
            self.heap[hole] = self.heap[least];
            hole = least;
        }
        self.heap[hole] = key;
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

    /// Reused slots never reorder: interleaved pushes and pops come out exactly as a sort by
    /// (time, push order) says, whatever slot each event landed in.
    #[test]
    fn reused_slots_keep_push_order() {
        let mut queue = EventQueue::new(4096);
        let mut expected: Vec<(Time, u64)> = Vec::new();
        let mut popped: Vec<(Time, u64)> = Vec::new();
        let mut state: u64 = 7;
        let mut next = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            state >> 33
        };
        for pushed in 0..2000u64 {
            let time = queue.now() + next() % 5;
            queue.push(time, pushed);
            expected.push((time, pushed));
            if next() % 3 != 0 {
                let (time, event) = queue.pop().expect("one pending");
                popped.push((time, event));
            }
        }
        while let Some(item) = queue.pop() {
            popped.push(item);
        }
        expected.sort();
        assert_eq!(popped, expected);
        assert!(queue.is_empty());
    }

    /// A full queue is a loud failure, not a slow one.
    #[test]
    fn overflow_is_loud() {
        let outcome = std::panic::catch_unwind(|| {
            let mut queue = EventQueue::new(2);
            queue.push(0, ());
            queue.push(0, ());
            queue.push(0, ());
        });
        assert!(outcome.is_err());
    }
}
