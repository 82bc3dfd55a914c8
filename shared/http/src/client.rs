//! The one TLS client configuration (`myao_tls`, re-exported), and
//! the reqwest client of the LLM and Slack adapters over it.

use myao_tls::client_config;

/// The HTTP client of the LLM and Slack adapters, over [`client_config`].
/// Should reqwest refuse the configuration (it does not: a test builds it),
/// the client falls back to reqwest's own TLS setup, which verifies against
/// the system's store, over ring all the same.
pub fn http_client() -> reqwest::Client {
    http_client_builder().build().unwrap_or_else(|error| {
        tracing::error!(%error, "the TLS configuration was refused; using reqwest's default");
        // reqwest's default needs a process-wide provider: ring, ours.
        let _ = rustls::crypto::ring::default_provider().install_default();
        reqwest::Client::new()
    })
}

/// A builder of [`http_client`]'s kind, for a client with settings of its
/// own (a timeout, say).
pub fn http_client_builder() -> reqwest::ClientBuilder {
    reqwest::Client::builder().tls_backend_preconfigured((*client_config()).clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_http_client_takes_the_configuration() {
        http_client_builder()
            .build()
            .expect("reqwest takes a rustls configuration");
    }
}
