//! The executor, as a library inside a service and as the `jobwheel executor` binary, under a
//! recording fake admin: the protocol, jobs and their block strategies, callbacks, isolation,
//! load, and the embedding example.

#[macro_use]
#[path = "../kit/mod.rs"]
mod kit;

#[macro_use]
#[path = "support.rs"]
mod executor_support;

mod admission;
mod callbacks;
mod embedded;
mod isolation;
mod jobs;
mod library;
mod load;
mod protocol;
