//! The unit tests of `felix_sim::env::clock` (sim/src/env/clock.rs).

use felix_sim::env::queue::Time;

use felix_sim::env::clock::*;

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
