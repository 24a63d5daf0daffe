//! FelixHeadTrim's records, packed so that two states are equal exactly when the spec's states
//! are (`super::spec` holds the state machine).

use std::fmt;

/// A record's kind: the spec's `k` field.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum Kind {
    /// Not a record: an unused slot past the end of a log.
    Empty,
    /// `"w"`: a holder's write.
    Write,
    /// `"t"`: a trim asking for a floor.
    Trim,
    /// `"n"`: the leader's noop (bookkeeping).
    Noop,
}

/// A record: `[k, h, t, f]` in the spec.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Record {
    /// `k`: write, trim or noop.
    pub k: Kind,
    /// `h`: the holder's epoch (0 on a noop).
    pub h: u8,
    /// `t`: the term of the leader that sequenced it.
    pub t: u8,
    /// `f`: the floor a trim asks for (0 on writes and noops).
    pub f: u8,
}

impl Record {
    /// The content of an unused slot.
    pub const EMPTY: Record = Record {
        k: Kind::Empty,
        h: 0,
        t: 0,
        f: 0,
    };
}

impl fmt::Display for Record {
    /// TLC's rendering: fields in alphabetical order.
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        let k = match self.k {
            Kind::Empty => "?",
            Kind::Write => "w",
            Kind::Trim => "t",
            Kind::Noop => "n",
        };
        crate::log::write_tlc_record(
            formatter,
            ("k", k),
            [("f", self.f), ("h", self.h), ("t", self.t)],
        )
    }
}

impl crate::log::Packed for Record {
    /// Packs a record into 16 bits: `k` 2 bits, `h` 3 bits, `t` 5 bits, `f` 6 bits.
    fn pack(self) -> u16 {
        crate::log::pack_fields(self.k as u16, 2, [(self.h, 3), (self.t, 5), (self.f, 6)])
    }

    /// Unpacks a record packed by `pack`.
    fn unpack(bits: u16) -> Record {
        let (k, [h, t, f]) = crate::log::unpack_fields(bits, 2, [3, 5, 6]);
        let k = match k {
            0 => Kind::Empty,
            1 => Kind::Write,
            2 => Kind::Trim,
            _ => Kind::Noop,
        };
        Record { k, h, t, f }
    }
}

/// One broker's log: `log[b]`, deleted records included, packed (`crate::log`).
pub type Log = crate::log::Log<Record>;

impl Log {
    /// The term of the record at `offset` (from 1).
    pub fn term_at(&self, offset: u8) -> u8 {
        self.at(offset).t
    }
}
