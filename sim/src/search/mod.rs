//! Searching the seed space: the ordered parallel runner, the guided campaign, and the
//! shrinker.

pub mod guided;
pub mod parallel;
pub mod shrink;
