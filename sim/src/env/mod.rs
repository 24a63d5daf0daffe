//! The simulated environment the real core runs in: the event queue and its clock, the seeded
//! random streams and their tape, the lease service, the network, the disks and the storage
//! faults, each node's host, and the stopwatch that measures a run from outside.

pub mod clock;
pub mod damage;
pub mod disk;
pub mod file_system;
pub mod host;
pub mod lease;
pub mod network;
pub mod node;
pub mod queue;
pub mod rng;
pub mod stopwatch;
pub mod tape;
