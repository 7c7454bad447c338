//! The executor's own HTTP server (xxl-job-core style): a port of its own, the bound port exposed.

use std::net::TcpListener;

use actix_web::dev::ServerHandle;
use actix_web::{web, App, HttpServer};

use super::builder::{Executor, ExecutorError};
use crate::keep_alive::SERVE_IDLE_FOR;
use crate::stop_signals::StopSignals;

/// Seconds the server waits for in-flight requests when stopping; executor answers are immediate.
const HTTP_SHUTDOWN_SECS: u64 = 5;

/// A serving executor; stop it with [`ExecutorServer::stop`] or let signals end [`run_until_stopped`](Self::run_until_stopped).
pub struct ExecutorServer {
    port: u16,
    handle: ServerHandle,
    join: tokio::task::JoinHandle<std::io::Result<()>>,
    executor: Executor,
    /// Listened for since before the port opened, when the caller asked (the binary).
    signals: Option<StopSignals>,
}

impl Executor {
    /// Starts the executor's own HTTP server on its port (0: any free one) and registers it.
    pub async fn serve(&self) -> Result<ExecutorServer, ExecutorError> {
        ExecutorServer::start(self.clone(), None).await
    }

    /// [`serve`](Self::serve), listening for SIGINT/SIGTERM from before the port opens, for
    /// [`ExecutorServer::run_until_stopped`]: whoever sees the port open may stop the process,
    /// and it must stop gracefully. Not for embedders: the signals no longer end the process.
    #[cfg_attr(not(feature = "admin"), allow(dead_code))]
    pub(crate) async fn serve_until_signalled(&self) -> Result<ExecutorServer, ExecutorError> {
        ExecutorServer::start(self.clone(), Some(StopSignals::listen())).await
    }
}

impl ExecutorServer {
    async fn start(
        executor: Executor,
        signals: Option<StopSignals>,
    ) -> Result<Self, ExecutorError> {
        let bind = (executor.bind(), executor.port());
        let listener = TcpListener::bind(bind).map_err(|source| ExecutorError::Io {
            what: format!("cannot listen on {}:{}", bind.0, bind.1),
            source,
        })?;
        let port = listener
            .local_addr()
            .map_err(|source| ExecutorError::Io {
                what: "cannot read the bound port".to_string(),
                source,
            })?
            .port();
        let routes = executor.configure();
        let fallback = executor.not_found_service();
        let metrics = executor.clone();
        let server = HttpServer::new(move || {
            App::new()
                .configure(routes.clone())
                .route("/metrics", metrics.metrics_route())
                .default_service(web::to(fallback.clone()))
        })
        // a compressed page leaves in several writes; with Nagle's algorithm the last waits for
        // the browser's delayed ACK, 40 ms on Linux, on many answers
        .tcp_nodelay(true)
        .keep_alive(SERVE_IDLE_FOR)
        .shutdown_timeout(HTTP_SHUTDOWN_SECS)
        // actix-server stops the whole actix system shortly after a signal, which would kill the
        // executor's actors mid-shutdown; run_until_stopped handles signals instead
        .disable_signals()
        .listen(listener)
        .map_err(|source| ExecutorError::Io {
            what: format!("cannot serve on port {port}"),
            source,
        })?
        .run();
        let handle = server.handle();
        let join = actix_rt::spawn(server);
        log::info!(
            "executor {} listening on {}:{port}",
            executor.app_name(),
            executor.bind()
        );
        executor.warn_if_insecure_on(port);
        executor.start_registration(port);
        Ok(ExecutorServer {
            port,
            handle,
            join,
            executor,
            signals,
        })
    }

    /// The bound port (useful with port 0).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The address registered with the admins.
    pub fn address(&self) -> String {
        self.executor.registered_address(self.port)
    }

    /// The executor behind this server.
    pub fn executor(&self) -> &Executor {
        &self.executor
    }

    /// Serves until SIGINT/SIGTERM (or [`ServerHandle::stop`]), then shuts the executor down gracefully.
    pub async fn run_until_stopped(self) -> std::io::Result<()> {
        let mut join = self.join;
        let mut signals = self.signals.unwrap_or_else(StopSignals::listen);
        let served = tokio::select! {
            r = &mut join => r,
            () = signals.received() => {
                log::info!("signal received; stopping executor {}", self.executor.app_name());
                // refuse triggers before the port closes, so none is acknowledged and then lost
                self.executor.stop_accepting().await;
                self.handle.stop(true).await;
                join.await
            }
        };
        self.executor.shutdown().await;
        match served {
            Ok(r) => r,
            Err(e) => Err(std::io::Error::other(e)),
        }
    }

    /// A handle that stops the HTTP server from elsewhere.
    pub fn handle(&self) -> ServerHandle {
        self.handle.clone()
    }

    /// Stops serving, then shuts the executor down gracefully.
    pub async fn stop(self) {
        self.handle.stop(true).await;
        let _ = self.join.await;
        self.executor.shutdown().await;
    }
}

/// Resolves on SIGTERM or SIGINT (Ctrl-C); for apps that mount the executor and shut down themselves.
pub async fn shutdown_signal() {
    StopSignals::listen().received().await
}
