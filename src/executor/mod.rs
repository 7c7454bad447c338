//! The executor library: an XXL-JOB-compatible executor that runs inside any actix-web service or alone.
//!
//! ```no_run
//! use jobwheel::executor::{Executor, JobContext, JobResult};
//!
//! #[actix_web::main]
//! async fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let executor = Executor::builder()
//!         .admin_addresses(["http://127.0.0.1:8080"])
//!         .app_name("my-service")
//!         .access_token("the-admins-access-token") // printed by the admin at its first start
//!         .handler("hello", |ctx: JobContext| async move {
//!             ctx.log(format!("hello {}", ctx.param()));
//!             JobResult::success()
//!         })
//!         .build()?;
//!     executor.serve().await?.run_until_stopped().await?;
//!     Ok(())
//! }
//! ```
//!
//! Mounted into an existing app instead (one port for both), register `http://ip:port/xxl-job/`:
//! `App::new().service(executor.scope("/xxl-job"))` plus `executor.start_registration(port)`,
//! with `.port(port).mount_path("/xxl-job")` on the builder.

#![warn(missing_docs)]

pub(crate) mod admin_link;
mod builder;
pub mod builtin;
pub(crate) mod context;
pub(crate) mod glue;
pub(crate) mod handler;
mod http;
pub(crate) mod outbound;
mod process_group;
pub(crate) mod run;
#[cfg(feature = "admin")]
pub mod run_log;
#[cfg(not(feature = "admin"))]
pub(crate) mod run_log;
pub(crate) mod run_slots;
mod scrape;
mod script_output;
mod script_records;
mod server;

pub use crate::metrics::ExecutorMetrics;
pub use builder::{
    Executor, ExecutorBuilder, ExecutorError, DEFAULT_EXECUTOR_BIND, DEFAULT_EXECUTOR_PORT,
    DEFAULT_LOG_PATH, MAX_CONCURRENT_RUNS,
};
pub use context::JobContext;
pub use handler::{IntoJobResult, JobHandler, JobResult};
pub use server::{shutdown_signal, ExecutorServer};
