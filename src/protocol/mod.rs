//! Wire types of the XXL-JOB admin⇄executor protocol, shared by jobwheel's admin and executor.
//!
//! The Java peers (xxl-job 2.4.x, 3.0–3.4.x and 3.5) read these bodies with Gson, which tolerates missing
//! fields, `null`s and numbers written as strings; we read the same way so that any body a Java peer
//! accepts is accepted here too. Where the versions disagree on the wire (the envelope's payload key,
//! `logDateTim` vs `logDateTime`, the callback body shape) we read every spelling and write the one the
//! configured [`AdminProtocol`] expects, or both where the peers ignore unknown keys.
//!
//! One module per message family: [`trigger`] (`/run`, `/trigger`), [`callback`]
//! (`/api/callback`), [`registry`] (`/api/registry`), [`log`] (`/log`), [`kill`] (`/kill`,
//! `/idleBeat`), over the shared [`envelope`], [`names`], [`messages`], [`tokens`] and [`decode`](mod@decode).

pub mod callback;
pub mod decode;
pub mod envelope;
pub mod kill;
pub mod labels;
mod lenient;
pub mod log;
pub mod messages;
pub mod names;
pub mod registry;
pub mod tokens;
pub mod trigger;

pub use callback::*;
pub use decode::*;
pub use envelope::*;
pub use kill::*;
pub use labels::*;
pub use log::*;
pub use messages::*;
pub use names::*;
pub use registry::*;
pub use tokens::*;
pub use trigger::*;

#[cfg(test)]
mod proptests;
#[cfg(test)]
mod test_support;
