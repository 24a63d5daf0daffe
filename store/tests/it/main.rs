//! The integration tests of `felix-store`, one module per file, linked as one test binary: the
//! `LogStore` contract on both stores, crashes of the file store (process kills and power losses),
//! and the byte image read back through `inspect`.

mod contract;
mod file_crash;
mod image;
mod power_loss;
