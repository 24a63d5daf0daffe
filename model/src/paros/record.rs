//! ParosTrimJump's records and the set of acknowledged writes, packed so that two states are
//! equal exactly when the spec's states are (`super::spec` holds the state machine).

use std::fmt;

use crate::log::Packed;

/// Acknowledged writes a state can hold (the spec's `MaxWrites` is at most this).
pub const ACKED_MAX: usize = 4;
/// A record's kind: the spec's `k` field.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum Kind {
    /// Not a record: an unused slot past the end of a log.
    Empty,
    /// `"w"`: an owner's write.
    Write,
    /// `"t"`: `Truncate { leader: o, up_to: u }`.
    Truncate,
    /// `"s"`: `SetLeader { new: o, old: o - 1 }`.
    SetLeader,
    /// `"n"`: the leader's noop.
    Noop,
}

/// A record: `[k, o, t, u]` in the spec.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Record {
    /// `k`: the command.
    pub k: Kind,
    /// `o`: the owner's fence (the new owner of a SetLeader; 0 on a noop).
    pub o: u8,
    /// `t`: the term of the leader that sequenced it.
    pub t: u8,
    /// `u`: a truncate's `up_to` (0 on the others).
    pub u: u8,
}

impl crate::log::Packed for Record {
    /// Packs a record into 16 bits: `k` 3 bits, `o` 3 bits, `t` 4 bits, `u` 6 bits.
    fn pack(self) -> u16 {
        crate::log::pack_fields(self.k as u16, 3, [(self.o, 3), (self.t, 4), (self.u, 6)])
    }

    /// Unpacks a record packed by `pack`.
    fn unpack(bits: u16) -> Record {
        let (k, [o, t, u]) = crate::log::unpack_fields(bits, 3, [3, 4, 6]);
        let k = match k {
            0 => Kind::Empty,
            1 => Kind::Write,
            2 => Kind::Truncate,
            3 => Kind::SetLeader,
            _ => Kind::Noop,
        };
        Record { k, o, t, u }
    }
}

impl fmt::Display for Record {
    /// TLC's rendering: fields in alphabetical order.
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        let k = match self.k {
            Kind::Empty => "?",
            Kind::Write => "w",
            Kind::Truncate => "t",
            Kind::SetLeader => "s",
            Kind::Noop => "n",
        };
        crate::log::write_tlc_record(
            formatter,
            ("k", k),
            [("o", self.o), ("t", self.t), ("u", self.u)],
        )
    }
}

/// The records one node holds, from its `start` slot (`log[n]`), packed (`crate::log`).
pub type Log = crate::log::Log<Record>;

/// The set `acked` of `<<slot, record>>` pairs, as a sorted array of packed pairs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Acked {
    len: u8,
    pairs: [u32; ACKED_MAX],
}

impl Acked {
    pub(super) const EMPTY: Acked = Acked {
        len: 0,
        pairs: [0; ACKED_MAX],
    };

    fn pack(slot: u8, record: Record) -> u32 {
        (u32::from(slot) << 16) | u32::from(record.pack())
    }

    /// The pairs, in increasing order of slot.
    pub fn pairs(&self) -> impl Iterator<Item = (u8, Record)> + '_ {
        self.pairs[..usize::from(self.len)]
            .iter()
            .map(|&bits| ((bits >> 16) as u8, Record::unpack(bits as u16)))
    }

    /// `acked \cup {<<slot, record>>}`.
    pub(super) fn insert(&mut self, slot: u8, record: Record) {
        let bits = Acked::pack(slot, record);
        let held = &self.pairs[..usize::from(self.len)];
        if held.contains(&bits) {
            return;
        }
        assert!(usize::from(self.len) < ACKED_MAX, "acked capacity exceeded");
        self.pairs[usize::from(self.len)] = bits;
        self.len += 1;
        self.pairs[..usize::from(self.len)].sort_unstable();
    }

    /// `Judged(acked, d)`: keeps the pairs whose slot is at least `d`.
    pub(super) fn judged(self, d: u8) -> Acked {
        let mut kept = Acked::EMPTY;
        for (slot, record) in self.pairs().filter(|(slot, _)| *slot >= d) {
            kept.insert(slot, record);
        }
        kept
    }
}

impl fmt::Display for Acked {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pairs: Vec<String> = self
            .pairs()
            .map(|(slot, record)| format!("<<{slot}, {record}>>"))
            .collect();
        write!(formatter, "{{{}}}", pairs.join(", "))
    }
}
