//! Workflows end to end: an in-process admin on a real database (SQLite, PostgreSQL, MySQL), a
//! jobwheel executor whose handlers record every run, the REST API as users call it.

#[macro_use]
#[path = "../kit/mod.rs"]
mod kit;

mod support;

mod api;
mod cluster;
mod crash;
mod runs;
mod schedule;
mod scripts;
