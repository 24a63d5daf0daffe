//! Felixd runs held to the FelixHeadTrim model (`felix_model::head_trim`,
//! `docs/formal/FelixHeadTrim.tla`), laid out as `crate::paros`: `projection` (each voter as the
//! model's variables, read off the core), `window` (a few brokers as one small model state, values
//! renamed into its bounds) and `checker` (a step as a chain of the model's actions,
//! `crate::steps`).

pub mod checker;
pub mod projection;
pub mod window;
