//! The event queue on simulated time.
//!
//! Pending events ordered by (time, sequence number): the sequence number is assigned at push
//! time, so two events due at the same microsecond come out in the order they were scheduled,
//! never in an order that depends on the queue's internals. The queue is bounded (`pending_max`)
//! so a runaway feedback loop in a model is a loud failure, not a slow one.
//!
//! Every event has a 16-byte key: the time in the high 64 bits, the sequence number and the index
//! of the event's slot (its low `SLOT_BITS` bits) in the low 64. Since sequence numbers are
//! unique, ordering keys orders by (time, sequence) exactly: the slot bits never decide. The
//! events themselves wait in a slab of reused slots and never move while pending.
//!
//! The keys wait in a radix heap, which is exact for a queue whose keys only grow past the last
//! one taken (a simulation never schedules into its past, and a later push has a larger sequence
//! number): bucket `b` holds the keys whose highest bit differing from the last key popped is bit
//! `b`. A push is one XOR, one leading-zero count and one `Vec` push. A pop takes the lowest
//! non-empty bucket; when it holds more than one key, its least key becomes the last one popped
//! and the others move to lower buckets (they now agree with it above bit `b`), so a key moves
//! at most once per bit and mostly a few times in its life. It replaced a 4-ary heap whose sift
//! down (about 280 instructions and five mispredicted branches per event) was the simulator's
//! hottest loop.

/// Simulated time in microseconds since the start of the run.
pub type Time = u64;

/// Bits of a key that name the event's slot (so at most 2^24 events pending).
const SLOT_BITS: u32 = 24;
const SLOT_MASK: u64 = (1 << SLOT_BITS) - 1;
/// Pushes one queue may take in its life (2^40: far beyond any run's event budget).
const SEQUENCE_MAX: u64 = 1 << (64 - SLOT_BITS);
/// One bucket per bit of a key.
const BUCKETS: usize = 128;

/// Pending events ordered by (time, push order).
pub struct EventQueue<E> {
    /// `time << 64 | sequence << SLOT_BITS | slot` of every pending event, in the bucket of the
    /// highest bit where it differs from `last` (see the module doc).
    buckets: Vec<Vec<u128>>,
    /// Bit `b` is set when `buckets[b]` is not empty.
    occupied: u128,
    /// The key popped last (0 before the first pop: sequence numbers start at 1, so every key is
    /// above it).
    last: u128,
    /// Keys pending.
    len: usize,
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
            buckets: (0..BUCKETS).map(|_| Vec::new()).collect(),
            occupied: 0,
            last: 0,
            len: 0,
            slots: Vec::new(),
            free: Vec::new(),
            sequence_next: 1,
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
            self.len < self.pending_max,
            "event queue overflow: {} pending (pending_max)",
            self.len
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
        // Not in the past, and a later sequence number than every key popped: above `last`.
        assert!(key > self.last, "a key at or below the last one popped");
        self.file(key);
        self.len += 1;
    }

    /// Schedules `event` `delay` microseconds from now.
    pub fn push_after(&mut self, delay: Time, event: E) {
        self.push(self.now.saturating_add(delay), event);
    }

    /// Puts `key` (above `last`) in its bucket.
    #[inline]
    fn file(&mut self, key: u128) {
        let bucket = bucket_of(key, self.last);
        self.buckets[bucket].push(key);
        self.occupied |= 1 << bucket;
    }

    /// The next event, advancing the clock to its time (`now`). Only the event comes back: a
    /// `(time, event)` pair put the event at another offset than the caller's copy of it, and
    /// copying it out again stalled on every event.
    pub fn pop(&mut self) -> Option<E> {
        if self.occupied == 0 {
            return None;
        }
        let lowest = self.occupied.trailing_zeros() as usize;
        let key = if self.buckets[lowest].len() == 1 {
            self.occupied &= !(1 << lowest);
            self.buckets[lowest][0]
        } else {
            // The least key of the lowest bucket is the least pending; the others agree with it
            // above bit `lowest`, so each moves to a lower bucket.
            let mut keys = std::mem::take(&mut self.buckets[lowest]);
            let least = keys.iter().copied().min().expect("an occupied bucket");
            self.occupied &= !(1 << lowest);
            self.last = least;
            for &other in &keys {
                if other != least {
                    self.file(other);
                }
            }
            keys.clear();
            self.buckets[lowest] = keys;
            least
        };
        self.buckets[lowest].clear();
        self.last = key;
        self.len -= 1;
        let time = (key >> 64) as Time;
        assert!(time >= self.now);
        self.now = time;
        let slot = (key as u64 & SLOT_MASK) as u32;
        let event = self.slots[slot as usize]
            .take()
            .expect("a pending key names a full slot");
        self.free.push(slot);
        Some(event)
    }

    /// The time of the next event without removing it.
    pub fn peek_time(&self) -> Option<Time> {
        if self.occupied == 0 {
            return None;
        }
        let lowest = self.occupied.trailing_zeros() as usize;
        self.buckets[lowest]
            .iter()
            .min()
            .map(|key| (key >> 64) as Time)
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// The bucket of `key` against the last key popped: the index of the highest bit where they
/// differ (`key > last`, so there is one).
#[inline]
fn bucket_of(key: u128, last: u128) -> usize {
    debug_assert!(key > last);
    (BUCKETS - 1) - (key ^ last).leading_zeros() as usize
}
