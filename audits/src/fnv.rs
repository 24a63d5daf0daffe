//! FNV-1a, 64 bits, the one byte digest of the judges and the simulator: the history checker's
//! content keys and its specification's digest (`linearizable`), and the sweep hash over every
//! seed's trace hash (`felix_sim::render::trace::SweepHash`). It lives here, the lowest crate both
//! depend on, as `splitmix` does. Fixed and documented, never std's randomly keyed hasher, so one
//! input gives one digest on every machine and Rust version. (The core's folder digests the
//! journal's application writes with the same function, written in the core: the core depends on
//! no judge.)

/// The digest of no bytes (FNV-1a's offset basis).
pub const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
/// FNV-1a's 64-bit prime.
const PRIME: u64 = 0x0000_0100_0000_01b3;

/// `hash` extended by `bytes`: FNV-1a from `OFFSET` is `fnv1a(OFFSET, bytes)`, and
/// `fnv1a(fnv1a(h, a), b)` is `fnv1a(h, a ++ b)`.
pub fn fnv1a(hash: u64, bytes: &[u8]) -> u64 {
    bytes.iter().fold(hash, |hash, byte| {
        (hash ^ u64::from(*byte)).wrapping_mul(PRIME)
    })
}
