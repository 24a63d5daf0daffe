//! The structural trace hash: a fixed 64-bit function of a value's serde data, with no text.
//!
//! The trace hash used to be FNV-1a over each trace line's JSON, which cost a JSON rendering of
//! every event of every run (a fifth of a sweep's time) only to be hashed. `StructuralHasher` is a
//! `serde::Serializer` that feeds the same data straight into the hash: every integer, bool and
//! char as one 64-bit word (a negative integer after a tag word, a 128-bit one as a tag and two
//! words), every string and byte string as a tag, its length and its bytes in 8-byte
//! little-endian words, and a distinct tag word for each shape (unit, none, some, variant, sequence
//! and map begin/end, a skipped field), so values of different shapes do not feed the same words.
//! Struct field names are not fed (a type's fields come in one fixed order); enum variants feed
//! their index. The mixing step is `(hash.rotate_left(5) ^ word) * K` with the odd constant `K`
//! below: fixed, documented, never std's randomly keyed hasher, so one seed gives one hash on every
//! machine, every `--jobs` value and whether or not the trace is kept as text.

use serde::ser::{self, Serialize};
use std::fmt;

/// The hash of nothing.
pub const SEED: u64 = 0xcbf2_9ce4_8422_2325;
/// The multiplier of every mixing step (odd, so the step is a bijection of the state).
pub const K: u64 = 0x517c_c1b7_2722_0a95;

/// Tag words, one per shape.
const TAG_UNIT: u64 = 0x01;
const TAG_NONE: u64 = 0x02;
const TAG_SOME: u64 = 0x03;
const TAG_VARIANT: u64 = 0x04;
const TAG_SEQ: u64 = 0x05;
const TAG_MAP: u64 = 0x06;
const TAG_END: u64 = 0x07;
const TAG_STR: u64 = 0x08;
const TAG_BYTES: u64 = 0x09;
const TAG_SKIPPED: u64 = 0x0a;
const TAG_NEGATIVE: u64 = 0x0b;
const TAG_WIDE: u64 = 0x0c;

/// One mixing step.
#[inline]
pub fn mix(hash: u64, word: u64) -> u64 {
    (hash.rotate_left(5) ^ word).wrapping_mul(K)
}

/// Feeds `bytes` (its length, then 8-byte little-endian words, the last one zero-padded).
pub fn mix_bytes(mut hash: u64, bytes: &[u8]) -> u64 {
    hash = mix(hash, bytes.len() as u64);
    let mut chunks = bytes.chunks_exact(8);
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        hash = mix(hash, u64::from_le_bytes(word));
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let mut word = [0u8; 8];
        word[..rest.len()].copy_from_slice(rest);
        hash = mix(hash, u64::from_le_bytes(word));
    }
    hash
}

/// Feeds `value`'s serde data into `hash`.
pub fn hash_value<T: Serialize + ?Sized>(hash: u64, value: &T) -> u64 {
    let mut hasher = StructuralHasher { hash };
    match value.serialize(&mut hasher) {
        Ok(()) => hasher.hash,
        // The hasher itself never fails; a value's own `Serialize` may (a custom impl's error),
        // and its error text still distinguishes it.
        Err(error) => mix_bytes(hasher.hash, error.0.as_bytes()),
    }
}

/// A serde serializer that hashes instead of writing.
pub struct StructuralHasher {
    hash: u64,
}

impl StructuralHasher {
    fn word(&mut self, word: u64) {
        self.hash = mix(self.hash, word);
    }

    /// Feeds one word, the whole of a value.
    fn fed(&mut self, word: u64) -> Result<(), Error> {
        self.word(word);
        Ok(())
    }

    /// The end of a compound value (a sequence, tuple, map or struct).
    fn end_compound(&mut self) -> Result<(), Error> {
        self.fed(TAG_END)
    }

    /// An enum variant: its tag and index.
    fn variant(&mut self, index: u32) {
        self.word(TAG_VARIANT);
        self.word(u64::from(index));
    }

    /// A 128-bit integer, tagged: its low word, then its high word.
    fn wide(&mut self, value: u128) -> Result<(), Error> {
        self.word(TAG_WIDE);
        self.word(value as u64);
        self.fed((value >> 64) as u64)
    }

    /// The start of a compound value (`tag`: a sequence's or a map's); its elements follow.
    fn begin(&mut self, tag: u64) -> Result<&mut StructuralHasher, Error> {
        self.word(tag);
        Ok(self)
    }
}

/// A value's own `Serialize` failed (the hasher never does).
#[derive(Debug)]
pub struct Error(String);

impl fmt::Display for Error {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

impl ser::Error for Error {
    fn custom<T: fmt::Display>(message: T) -> Error {
        Error(message.to_string())
    }
}

impl ser::Serializer for &mut StructuralHasher {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Self;
    type SerializeTuple = Self;
    type SerializeTupleStruct = Self;
    type SerializeTupleVariant = Self;
    type SerializeMap = Self;
    type SerializeStruct = Self;
    type SerializeStructVariant = Self;

    fn serialize_bool(self, value: bool) -> Result<(), Error> {
        self.fed(u64::from(value))
    }
    fn serialize_i8(self, value: i8) -> Result<(), Error> {
        self.serialize_i64(i64::from(value))
    }
    fn serialize_i16(self, value: i16) -> Result<(), Error> {
        self.serialize_i64(i64::from(value))
    }
    fn serialize_i32(self, value: i32) -> Result<(), Error> {
        self.serialize_i64(i64::from(value))
    }
    fn serialize_i64(self, value: i64) -> Result<(), Error> {
        // A negative number is tagged, so -1 and u64::MAX differ.
        if value < 0 {
            self.word(TAG_NEGATIVE);
        }
        self.fed(value as u64)
    }
    fn serialize_i128(self, value: i128) -> Result<(), Error> {
        // Two's complement: the same words as the `u128` of the same bits.
        self.wide(value as u128)
    }
    fn serialize_u8(self, value: u8) -> Result<(), Error> {
        self.serialize_u64(u64::from(value))
    }
    fn serialize_u16(self, value: u16) -> Result<(), Error> {
        self.serialize_u64(u64::from(value))
    }
    fn serialize_u32(self, value: u32) -> Result<(), Error> {
        self.serialize_u64(u64::from(value))
    }
    fn serialize_u64(self, value: u64) -> Result<(), Error> {
        self.fed(value)
    }
    fn serialize_u128(self, value: u128) -> Result<(), Error> {
        self.wide(value)
    }
    fn serialize_f32(self, value: f32) -> Result<(), Error> {
        self.serialize_f64(f64::from(value))
    }
    fn serialize_f64(self, value: f64) -> Result<(), Error> {
        self.fed(value.to_bits())
    }
    fn serialize_char(self, value: char) -> Result<(), Error> {
        self.fed(u64::from(value))
    }
    fn serialize_str(self, value: &str) -> Result<(), Error> {
        self.word(TAG_STR);
        self.hash = mix_bytes(self.hash, value.as_bytes());
        Ok(())
    }
    fn serialize_bytes(self, value: &[u8]) -> Result<(), Error> {
        self.word(TAG_BYTES);
        self.hash = mix_bytes(self.hash, value);
        Ok(())
    }
    fn serialize_none(self) -> Result<(), Error> {
        self.fed(TAG_NONE)
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), Error> {
        self.word(TAG_SOME);
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<(), Error> {
        self.fed(TAG_UNIT)
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<(), Error> {
        self.serialize_unit()
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        index: u32,
        _variant: &'static str,
    ) -> Result<(), Error> {
        self.variant(index);
        Ok(())
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        index: u32,
        _variant: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        self.variant(index);
        value.serialize(self)
    }
    fn serialize_seq(self, _len: Option<usize>) -> Result<Self, Error> {
        self.begin(TAG_SEQ)
    }
    fn serialize_tuple(self, _len: usize) -> Result<Self, Error> {
        self.begin(TAG_SEQ)
    }
    fn serialize_tuple_struct(self, _name: &'static str, _len: usize) -> Result<Self, Error> {
        self.begin(TAG_SEQ)
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self, Error> {
        self.variant(index);
        self.begin(TAG_SEQ)
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<Self, Error> {
        self.begin(TAG_MAP)
    }
    fn serialize_struct(self, _name: &'static str, _len: usize) -> Result<Self, Error> {
        self.begin(TAG_MAP)
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self, Error> {
        self.variant(index);
        self.begin(TAG_MAP)
    }
}

/// The compound serializers feed each element's (a map's keys' and values', a struct's fields')
/// data, a skipped field as `TAG_SKIPPED`, then `TAG_END`. Six of serde's seven compound traits
/// differ only in a method's name and whether it has a field name; this writes them once.
macro_rules! compound {
    (elements: $($trait:ident :: $method:ident),*) => {$(
        impl ser::$trait for &mut StructuralHasher {
            type Ok = ();
            type Error = Error;
            fn $method<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
                value.serialize(&mut **self)
            }
            fn end(self) -> Result<(), Error> {
                self.end_compound()
            }
        }
    )*};
    (fields: $($trait:ident),*) => {$(
        impl ser::$trait for &mut StructuralHasher {
            type Ok = ();
            type Error = Error;
            fn serialize_field<T: Serialize + ?Sized>(
                &mut self,
                _key: &'static str,
                value: &T,
            ) -> Result<(), Error> {
                value.serialize(&mut **self)
            }
            fn skip_field(&mut self, _key: &'static str) -> Result<(), Error> {
                self.fed(TAG_SKIPPED)
            }
            fn end(self) -> Result<(), Error> {
                self.end_compound()
            }
        }
    )*};
}

compound!(elements:
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field
);
compound!(fields: SerializeStruct, SerializeStructVariant);

impl ser::SerializeMap for &mut StructuralHasher {
    type Ok = ();
    type Error = Error;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Error> {
        key.serialize(&mut **self)
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        value.serialize(&mut **self)
    }
    fn end(self) -> Result<(), Error> {
        self.end_compound()
    }
}
