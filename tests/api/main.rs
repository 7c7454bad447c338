//! The REST API end to end: an admin on a real database per test (SQLite, PostgreSQL, MySQL),
//! a REST client, and a fake executor where a call reaches one.

#[macro_use]
#[path = "../kit/mod.rs"]
mod kit;

mod audit;
mod auth;
mod glue;
mod groups;
mod health;
mod jobs;
mod logs;
mod openapi;
mod reports;
mod scoped_store;
mod users;
mod xxl_jobs;
