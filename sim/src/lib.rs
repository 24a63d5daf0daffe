//! felix-sim: the deterministic simulator that runs the real Felix core.
//!
//! One run is one seed: a single-threaded event loop on simulated time (`queue`), with every
//! random choice drawn from one ChaCha key split into a stream per component (`rng`). The seed
//! draws the knobs of its world (`knobs`, swarm testing); the world (`world`) runs the core's
//! brokers and replicas over a faulty network (`network`) and disks that lose what was not synced
//! (`disk`), the lease service (`lease`) and clocks that lie (`clock`), and records everything
//! (`trace`). The audits (`felix-audits`) then judge the history.
//!
//! Entry point: `run(&RunSpec) -> RunReport`.

pub mod clock;
pub mod knobs;
pub mod lease;
pub mod network;
pub mod queue;
pub mod rng;
pub mod trace;
