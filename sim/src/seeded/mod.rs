//! The seeded world: the knobs a seed draws (the swarm), BUGGIFY, continuations of a run
//! (`fork`), and the world that runs one seed event by event.

pub mod buggify;
pub mod fork;
pub mod knobs;
pub mod swarm;
pub mod world;
