//! Every store function, and the first-start set-up, with the same bodies on SQLite,
//! PostgreSQL and MySQL.

#[macro_use]
#[path = "../kit/mod.rs"]
mod kit;

mod bootstrap;
mod claims;
mod store;
