//! The simulated environment the real core runs in: the event queue and its clock, the seeded
//! random streams and their tape, the lease service, the network, the disks and the storage
//! faults, each node's host, and the stopwatch that measures a run from outside.

pub mod clock;
pub mod queue;
pub mod rng;
pub mod tape;
pub mod lease;
pub mod network;
pub mod disk;
pub mod damage;
pub mod host;
pub mod node;
pub mod stopwatch;
pub mod file_system;
