//! The console: its pages over HTTP on every backend, and its flows in a real browser.

#[macro_use]
#[path = "../kit/mod.rs"]
mod kit;

mod browser;
mod pages;
