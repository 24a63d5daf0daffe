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
