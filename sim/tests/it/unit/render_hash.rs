//! The unit tests of `felix_sim::render::hash` (sim/src/render/hash.rs).

use felix_sim::render::hash::*;
use serde::Serialize;

#[derive(Serialize)]
enum Shape {
    Unit,
    Pair(u64, u64),
    Named { a: u64, b: Option<String> },
    Wrapped(Vec<u8>),
}

/// Equal values hash equal; any changed field, variant, length or string changes the hash.
#[test]
fn hash_follows_every_part_of_a_value() {
    let values = [
        Shape::Unit,
        Shape::Pair(1, 2),
        Shape::Pair(2, 1),
        Shape::Named { a: 1, b: None },
        Shape::Named {
            a: 1,
            b: Some(String::new()),
        },
        Shape::Named {
            a: 1,
            b: Some("x".into()),
        },
        Shape::Named {
            a: 1,
            b: Some("x\0".into()),
        },
        Shape::Wrapped(vec![]),
        Shape::Wrapped(vec![0]),
        Shape::Wrapped(vec![0, 0]),
    ];
    let hashes: Vec<u64> = values.iter().map(|value| hash_value(SEED, value)).collect();
    for (i, a) in hashes.iter().enumerate() {
        assert_eq!(
            *a,
            hash_value(SEED, &values[i]),
            "value {i} hashes the same twice"
        );
        for (j, b) in hashes.iter().enumerate().skip(i + 1) {
            assert_ne!(a, b, "values {i} and {j} differ");
        }
    }
}

/// The function is fixed: these words are what it gives on every machine.
#[test]
fn hash_is_the_documented_function() {
    assert_eq!(mix(0, 0), 0);
    assert_eq!(mix(0, 1), K);
    assert_eq!(mix_bytes(SEED, b""), mix(SEED, 0));
    let word = u64::from_le_bytes(*b"abc\0\0\0\0\0");
    assert_eq!(mix_bytes(SEED, b"abc"), mix(mix(SEED, 3), word));
}

/// The words a value feeds are the module doc's: a tuple variant is its tag (4) and index, then a
/// sequence's tag (5), its elements and the end tag (7); a struct variant's fields are a map's
/// (6); a 128-bit integer is its tag (12), its low word and its high word (two's complement, so
/// -1 and `u128::MAX` feed the same words).
#[test]
fn hash_feeds_the_documented_words() {
    let words = |words: &[u64]| words.iter().fold(SEED, |hash, &word| mix(hash, word));
    assert_eq!(
        hash_value(SEED, &Shape::Pair(1, 2)),
        words(&[4, 1, 5, 1, 2, 7])
    );
    assert_eq!(
        hash_value(SEED, &Shape::Named { a: 9, b: None }),
        words(&[4, 2, 6, 9, 2, 7])
    );
    assert_eq!(hash_value(SEED, &-1i128), words(&[12, u64::MAX, u64::MAX]));
    assert_eq!(
        hash_value(SEED, &u128::MAX),
        words(&[12, u64::MAX, u64::MAX])
    );
    assert_eq!(hash_value(SEED, &(1u128 << 64)), words(&[12, 0, 1]));
    assert_eq!(hash_value(SEED, &-2i64), words(&[11, (-2i64) as u64]));
}
