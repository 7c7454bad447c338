//! Each attack on the default set-up, tried as an attacker on the same network would: it must
//! fail and change nothing.

#[macro_use]
#[path = "../kit/mod.rs"]
mod kit;

#[macro_use]
#[path = "../executor/support.rs"]
mod executor_support;

mod attacks;
mod inputs;
mod limits;
mod outcomes;
mod rights;
mod sessions;
