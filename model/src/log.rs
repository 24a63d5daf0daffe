//! The packed log both specs keep per node: a fixed array of `LOG_MAX` slots of 16-bit packed
//! records and a length. Slots past the length are always zero, so two logs are equal exactly
//! when the spec's sequences are, and a state stays small: the checker holds millions of them.

use std::fmt;

/// Records a log can hold (each spec's `MaxLen` is at most this).
pub const LOG_MAX: usize = 8;

/// A record that packs into 16 bits, zero never being a record (the unused slot).
pub trait Packed: Copy + fmt::Debug + fmt::Display {
    /// The record's 16 bits; never zero.
    fn pack(self) -> u16;
    /// The record `pack` packed into `bits`.
    fn unpack(bits: u16) -> Self;
}

/// One node's log: `log[n]` in the spec, positions from 1.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Log<R> {
    len: u8,
    slots: [u16; LOG_MAX],
    record: std::marker::PhantomData<R>,
}

impl<R: Packed> Log<R> {
    /// The empty log.
    pub const EMPTY: Log<R> = Log {
        len: 0,
        slots: [0; LOG_MAX],
        record: std::marker::PhantomData,
    };

    /// `Len(log[n])`.
    #[inline]
    pub fn len(&self) -> u8 {
        self.len
    }

    /// A log holding these records, from position 1: how trace validation (`felix-validate`)
    /// builds a model state from a simulated node's projected log. At most `LOG_MAX` records.
    pub fn from_records(records: &[R]) -> Log<R> {
        let mut log = Log::EMPTY;
        for &record in records {
            log.append(record);
        }
        log
    }

    /// `Len(log[n]) = 0`.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// `log[n][i]`, positions from 1.
    #[inline]
    pub fn at(&self, position: u8) -> R {
        assert!(
            position >= 1 && position <= self.len,
            "position {position} outside the log"
        );
        R::unpack(self.slots[usize::from(position) - 1])
    }

    /// The records in order.
    pub fn records(&self) -> impl Iterator<Item = R> + '_ {
        self.slots[..usize::from(self.len)]
            .iter()
            .map(|&bits| R::unpack(bits))
    }

    /// The length and the packed slots, for a state's hash and a symmetry's sort key.
    #[inline]
    pub(crate) fn packed(&self) -> (u8, [u16; LOG_MAX]) {
        (self.len, self.slots)
    }

    /// `Append(log[n], r)`.
    #[inline]
    pub(crate) fn append(&mut self, record: R) {
        assert!(usize::from(self.len) < LOG_MAX, "log capacity exceeded");
        let bits = record.pack();
        assert!(bits != 0, "only records are appended");
        self.slots[usize::from(self.len)] = bits;
        self.len += 1;
    }

    /// `SubSeq(log[n], 1, m)`: keeps the first `m` records.
    pub(crate) fn keep_first(&mut self, m: u8) {
        assert!(m <= self.len, "keep past the end");
        for slot in &mut self.slots[usize::from(m)..usize::from(self.len)] {
            *slot = 0;
        }
        self.len = m;
    }

    /// `SubSeq(log[n], d + 1, Len(log[n]))`: drops the first `d` records.
    pub(crate) fn drop_first(&mut self, d: u8) {
        assert!(d <= self.len, "drop past the end");
        let mut kept = Log::EMPTY;
        for record in self.records().skip(usize::from(d)) {
            kept.append(record);
        }
        *self = kept;
    }
}

/// The records, unpacked (the Explorer shows states through `Debug`).
impl<R: Packed> fmt::Debug for Log<R> {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.debug_list().entries(self.records()).finish()
    }
}

impl<R: Packed> fmt::Display for Log<R> {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        let records: Vec<String> = self.records().map(|record| record.to_string()).collect();
        write!(formatter, "<<{}>>", records.join(", "))
    }
}

/// Packs a record's kind (in the low `kind_bits`) and three small fields (each in its width, in
/// order, above the kind) into 16 bits: how both specs' `Packed::pack` lay a record out.
#[inline]
pub fn pack_fields(kind: u16, kind_bits: u32, fields: [(u8, u32); 3]) -> u16 {
    let mut bits = kind;
    let mut shift = kind_bits;
    for (value, width) in fields {
        assert!(u32::from(value) < 1 << width, "record field out of range");
        bits |= u16::from(value) << shift;
        shift += width;
    }
    debug_assert!(shift <= 16, "a record is 16 bits");
    bits
}

/// The kind and the three fields `pack_fields` packed into `bits`, with the same widths.
#[inline]
pub fn unpack_fields(bits: u16, kind_bits: u32, widths: [u32; 3]) -> (u16, [u8; 3]) {
    let mut fields = [0; 3];
    let mut shift = kind_bits;
    for (field, width) in fields.iter_mut().zip(widths) {
        *field = ((bits >> shift) & ((1 << width) - 1)) as u8;
        shift += width;
    }
    (bits & ((1 << kind_bits) - 1), fields)
}

/// Writes a record as TLC prints one: `[name |-> value, ...]`, fields in alphabetical order, the
/// kind's letter quoted as TLC quotes a string.
pub fn write_tlc_record(
    formatter: &mut fmt::Formatter<'_>,
    kind: (&str, &str),
    fields: [(&str, u8); 3],
) -> fmt::Result {
    let mut parts: Vec<(&str, String)> = fields
        .iter()
        .map(|&(name, value)| (name, value.to_string()))
        .collect();
    parts.push((kind.0, format!("\"{}\"", kind.1)));
    parts.sort();
    let parts: Vec<String> = parts
        .into_iter()
        .map(|(name, value)| format!("{name} |-> {value}"))
        .collect();
    write!(formatter, "[{}]", parts.join(", "))
}
