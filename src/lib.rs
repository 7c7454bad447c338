//! jobwheel: a distributed job scheduler on actix, wire-compatible with XXL-JOB.
//!
//! The admin (scheduling center, feature `admin`, the default) stores jobs and fires them;
//! executors ([`executor`], feature `executor`) run them. `docs/architecture.md` has the picture,
//! `docs/protocol.md` the wire contract, README.md the commands.
//!
//! A service that runs jobs embeds [`executor`] (`default-features = false, features =
//! ["executor"]`): the builder, handlers, the job context and the [`protocol`] types are its whole
//! API. Imports run one way: the admin's modules use the shared ones (`clock`, `protocol`) and
//! may use the executor's (standalone mode runs one in process); the executor's use only the
//! shared ones.

// shared by both sides. A service embedding the executor (feature `executor` alone) sees the
// executor library and the wire types only; the admin build also opens the shared parts, which
// its binary, benchmark and integration tests are written against.
#[cfg(feature = "admin")]
pub mod allocator;
#[cfg(not(feature = "admin"))]
pub(crate) mod allocator;
#[cfg(feature = "admin")]
pub mod clock;
#[cfg(not(feature = "admin"))]
pub(crate) mod clock;
pub(crate) mod keep_alive;
#[cfg(feature = "admin")]
pub mod metrics;
#[cfg(not(feature = "admin"))]
pub(crate) mod metrics;
pub mod protocol;
pub(crate) mod stop_signals;

// the actors of both sides, each side's behind its feature
#[cfg(feature = "admin")]
pub mod actors;
#[cfg(not(feature = "admin"))]
pub(crate) mod actors;
// the executor library
#[cfg(feature = "executor")]
pub mod executor;

// the admin
#[cfg(feature = "admin")]
pub mod alarm;
#[cfg(feature = "admin")]
pub mod bootstrap;
#[cfg(feature = "admin")]
pub mod cli;
#[cfg(feature = "admin")]
pub mod config;
#[cfg(feature = "admin")]
pub mod executor_calls;
#[cfg(feature = "admin")]
pub mod http1;
#[cfg(feature = "admin")]
pub(crate) mod import_xxl;
#[cfg(feature = "admin")]
pub mod model;
#[cfg(feature = "admin")]
pub mod password;
#[cfg(feature = "admin")]
pub mod routing;
#[cfg(feature = "admin")]
pub mod startup;
#[cfg(feature = "admin")]
pub mod store;
#[cfg(feature = "admin")]
pub(crate) mod timing;
#[cfg(feature = "admin")]
pub(crate) mod tls;
#[cfg(feature = "admin")]
pub mod web;
#[cfg(feature = "admin")]
pub mod workflow;
