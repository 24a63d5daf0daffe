//! The unit tests of felix_sim's modules, one file a module (`env_rng.rs` for `env::rng`):
//! sim/Cargo.toml builds the crate without a unit-test harness, so that the release build
//! compiles it once.

mod env_clock;
mod env_damage;
mod env_disk;
mod env_file_system;
mod env_lease;
mod env_network;
mod env_queue;
mod env_rng;
mod env_stopwatch;
mod env_tape;
mod judge;
mod render_describe;
mod render_hash;
mod render_story;
mod render_trace;
mod render_why;
mod script;
mod script_parse;
mod search_guided;
mod search_parallel;
mod search_shrink;
mod seeded_buggify;
mod seeded_fork;
mod seeded_knobs;
mod seeded_swarm;
mod seeded_world_breaker;
mod seeded_world_prober;

use felix_sim::render::trace::{TraceEvent, TraceLine};

/// A trace line at `step`, its time the step: what the rendering tests (`render_story`,
/// `render_why`) build their traces of.
fn line(step: u64, event: TraceEvent) -> TraceLine {
    TraceLine {
        step,
        time: step,
        event,
    }
}
