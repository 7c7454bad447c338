//! TLS for the admin's outgoing https calls (executors, webhooks): rustls with the ring provider
//! and the Mozilla roots, so nothing depends on the system's OpenSSL or certificate store.

use std::sync::Arc;

/// A client configuration speaking HTTP/1.1 over TLS 1.2 or 1.3.
pub fn client_config() -> Result<rustls::ClientConfig, rustls::Error> {
    let roots = rustls::RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    let mut config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()?
    .with_root_certificates(roots)
    .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(config)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_configuration_builds() {
        assert!(super::client_config().is_ok());
    }
}
