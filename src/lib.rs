//! jobwheel: a distributed job scheduler on actix, wire-compatible with XXL-JOB.
//!
//! The admin (scheduling center) stores jobs and fires them; executors run them. See
//! `DESIGN.md` in the shared folder for the picture and README.md for the commands.

pub mod actors;
pub mod alarm;
pub mod allocator;
pub mod bootstrap;
pub mod cli;
pub mod clock;
pub mod config;
pub mod executor;
pub mod executor_client;
pub mod http1;
pub mod model;
pub mod password;
pub mod protocol;
pub mod routing;
pub mod startup;
pub mod store;
pub mod timing;
pub mod web;
