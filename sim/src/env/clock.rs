//! Per-node clocks: skew and drift over simulated true time.
//!
//! Leases are judged on local clocks, and local clocks lie: a node's clock reads
//! `true * (1_000_000 + drift_ppm) / 1_000_000 + skew`. A holder whose clock runs slow believes its
//! lease for longer than the lease service does, which is exactly why Felix fences by the tail and
//! never by time. Integer arithmetic keeps every reading exact and reproducible.

use crate::env::queue::Time;
use serde::{Deserialize, Serialize};

/// One node's clock error.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Clock {
    /// Offset from true time in microseconds (may be negative).
    pub skew_micros: i64,
    /// Rate error in parts per million (may be negative; > -1_000_000).
    pub drift_ppm: i64,
}

impl Clock {
    /// The local reading at true time `now` (never below zero).
    pub fn local(self, now: Time) -> Time {
        assert!(self.drift_ppm > -1_000_000);
        let rate = 1_000_000 + self.drift_ppm;
        // Every reading of a run fits 64 bits, and a 64-bit division is many times cheaper than
        // a 128-bit one (this runs on every client wake-up); both truncate the same non-negative
        // quotient, so the reading is the same either way.
        let scaled = match now.checked_mul(rate as u64) {
            Some(product) => i128::from(product / 1_000_000),
            None => i128::from(now) * i128::from(rate) / 1_000_000,
        };
        let reading = scaled + i128::from(self.skew_micros);
        reading.clamp(0, i128::from(u64::MAX)) as Time
    }

    /// How much true time passes while this clock advances by `local_micros`.
    pub fn true_duration(self, local_micros: Time) -> Time {
        assert!(self.drift_ppm > -1_000_000);
        let rate = 1_000_000 + self.drift_ppm;
        // In 64 bits when the product fits (always, in a run: see `local`).
        match local_micros.checked_mul(1_000_000) {
            Some(product) => product / rate as u64,
            None => (i128::from(local_micros) * 1_000_000 / i128::from(rate)) as Time,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The 64-bit fast path reads exactly what 128-bit arithmetic reads, up to the largest
    /// times (where the fast path gives way to the wide one).
    #[test]
    fn fast_path_matches_wide_arithmetic() {
        let wide_local = |clock: Clock, now: Time| {
            let scaled = i128::from(now) * i128::from(1_000_000 + clock.drift_ppm) / 1_000_000;
            (scaled + i128::from(clock.skew_micros)).clamp(0, i128::from(u64::MAX)) as Time
        };
        let wide_duration = |clock: Clock, local: Time| {
            (i128::from(local) * 1_000_000 / i128::from(1_000_000 + clock.drift_ppm)) as Time
        };
        for drift_ppm in [-999_999, -100_000, -7, 0, 3, 250_000, 2_000_000] {
            for skew_micros in [-1_000_000, -1, 0, 5, 1_000_000] {
                let clock = Clock {
                    skew_micros,
                    drift_ppm,
                };
                for time in [0, 1, 999_999, 1_000_001, 123_456_789, u64::MAX / 3_000_000]
                    .into_iter()
                    .chain([u64::MAX / 1_000_000 + 1, u64::MAX / 2, u64::MAX])
                {
                    assert_eq!(clock.local(time), wide_local(clock, time));
                    assert_eq!(clock.true_duration(time), wide_duration(clock, time));
                }
            }
        }
    }

    /// A slow clock reads less than true time and takes longer to measure a duration.
    #[test]
    fn slow_clocks_stretch_durations() {
        let slow = Clock {
            skew_micros: -50,
            drift_ppm: -100_000,
        };
        assert_eq!(slow.local(1_000_000), 900_000 - 50);
        assert_eq!(slow.true_duration(900_000), 1_000_000);
        assert_eq!(Clock::default().local(42), 42);
        assert_eq!(
            Clock {
                skew_micros: -100,
                drift_ppm: 0
            }
            .local(10),
            0
        );
    }
}
