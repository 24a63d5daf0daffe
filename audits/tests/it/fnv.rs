//! `felix_audits::fnv` is FNV-1a, 64 bits: its published test vectors, and chaining.

use felix_audits::fnv::{fnv1a, OFFSET};

#[test]
fn fnv1a_matches_reference_vectors() {
    assert_eq!(fnv1a(OFFSET, b""), 0xcbf2_9ce4_8422_2325);
    assert_eq!(fnv1a(OFFSET, b"a"), 0xaf63_dc4c_8601_ec8c);
    assert_eq!(fnv1a(OFFSET, b"foobar"), 0x8594_4171_f739_67e8);
}

#[test]
fn extending_a_digest_is_digesting_the_bytes_joined() {
    assert_eq!(
        fnv1a(fnv1a(OFFSET, b"foo"), b"bar"),
        fnv1a(OFFSET, b"foobar")
    );
}
