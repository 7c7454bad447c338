//! Every long-lived component is an actor; this module holds the admin's and the executor's.
//!
//! Admin: [`schedule`] (pre-read), [`ring`] (60 one-second slots), [`dispatch`] (fast/slow pools
//! running [`trigger`]s), [`registry`] (executor registrations), [`callback`] (results).

pub mod callback;
pub mod dispatch;
pub mod registry;
pub mod ring;
pub mod schedule;
pub mod trigger;
