//! The parts of `jobwheel-bench`: one module per scenario, plus what they share (databases,
//! processes, simulated executors, load, figures).

pub mod common;
pub mod db;
pub mod executor;
pub mod load;
pub mod memory;
pub mod precision;
pub mod procs;
pub mod scale;
pub mod sim;
pub mod startup;
pub mod stats;
pub mod throughput;
pub mod transport;
pub mod wire_server;
