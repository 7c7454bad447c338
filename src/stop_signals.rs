//! SIGINT and SIGTERM, listened for from before a server binds its port until it stops.

/// The stop signals, registered when made: a signal arriving once the port is bound is kept for
/// [`received`](Self::received) instead of killing the process by the default action (the
/// admin has claimed fires and started its actors by then; they must be handed back).
pub(crate) struct StopSignals {
    #[cfg(unix)]
    streams: Option<(tokio::signal::unix::Signal, tokio::signal::unix::Signal)>,
}

impl StopSignals {
    /// Registers SIGINT and SIGTERM now; needs a running tokio runtime.
    pub(crate) fn listen() -> Self {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{signal, SignalKind};
            match (
                signal(SignalKind::interrupt()),
                signal(SignalKind::terminate()),
            ) {
                (Ok(interrupt), Ok(terminate)) => StopSignals {
                    streams: Some((interrupt, terminate)),
                },
                (Err(e), _) | (_, Err(e)) => {
                    log::warn!("cannot listen for SIGINT/SIGTERM ({e}); falling back to Ctrl-C");
                    StopSignals { streams: None }
                }
            }
        }
        #[cfg(not(unix))]
        StopSignals {}
    }

    /// Resolves once SIGINT or SIGTERM has arrived since [`listen`](Self::listen).
    pub(crate) async fn received(&mut self) {
        #[cfg(unix)]
        if let Some((interrupt, terminate)) = &mut self.streams {
            tokio::select! {
                _ = interrupt.recv() => {}
                _ = terminate.recv() => {}
            }
            return;
        }
        let _ = tokio::signal::ctrl_c().await;
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::StopSignals;

    #[actix_rt::test]
    async fn a_signal_sent_before_waiting_is_kept() {
        let mut signals = StopSignals::listen();
        // SIGTERM to ourselves: with the default action the test process would die here
        let pid = std::process::id() as libc::pid_t;
        assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
        let waited = tokio::time::timeout(std::time::Duration::from_secs(10), signals.received());
        assert!(
            waited.await.is_ok(),
            "the signal sent before waiting was lost"
        );
    }
}
