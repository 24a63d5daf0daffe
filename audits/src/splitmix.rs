//! SplitMix64's finalizer, the one well-spread 64-bit mix of the workspace: the history checker's
//! memo hashes its nodes with it (`linearizable::search`), and the simulator keys a forked run's
//! streams with it (`felix_sim::seeded::fork`). It lives here, the lowest crate both depend on.

/// SplitMix64's increment (the golden ratio's 64-bit fraction): a stream's state steps by it.
pub const SPLITMIX64_INCREMENT: u64 = 0x9e37_79b9_7f4a_7c15;

/// SplitMix64's finalizer: every input bit moves every output bit.
pub fn splitmix64(value: u64) -> u64 {
    let mut z = value.wrapping_add(SPLITMIX64_INCREMENT);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}
