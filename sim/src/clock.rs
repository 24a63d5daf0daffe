//! Per-node clocks: skew and drift over simulated true time.
//!
//! Leases are judged on local clocks, and local clocks lie: a node's clock reads
//! `true * (1_000_000 + drift_ppm) / 1_000_000 + skew`. A holder whose clock runs slow believes its
//! lease for longer than the lease service does, which is exactly why Felix fences by the tail and
//! never by time. Integer arithmetic keeps every reading exact and reproducible.

use crate::queue::Time;
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
        let scaled = i128::from(now) * i128::from(1_000_000 + self.drift_ppm) / 1_000_000;
        let reading = scaled + i128::from(self.skew_micros);
        reading.clamp(0, i128::from(u64::MAX)) as Time
    }

    /// How much true time passes while this clock advances by `local_micros`.
    pub fn true_duration(self, local_micros: Time) -> Time {
        assert!(self.drift_ppm > -1_000_000);
        let rate = i128::from(1_000_000 + self.drift_ppm);
        (i128::from(local_micros) * 1_000_000 / rate) as Time
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
