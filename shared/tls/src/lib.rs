//! The one TLS client configuration of the bot: rustls on ring, trusting
//! Mozilla's roots as `webpki-roots` ships them, compiled into the binary as
//! trust anchors (subject, key and name constraints, parsed when the crate
//! was built).
//!
//! The clients' defaults would read the system's store from disk when the
//! first client is built (on a cold start, a bundle and then a directory of
//! single certificates: on this project's Debian machine, 145 files) and
//! parse every certificate before the first event; the AWS SDK's own client
//! takes roots only as PEM, which it decodes and parses again. Compiled-in
//! anchors cost neither, and they are the same on every host, Lambda's
//! Amazon Linux 2023 included. Every endpoint the functions call (AWS, Slack,
//! the hosted LLM APIs) chains to one of them; verification itself is
//! rustls's own, unchanged.
//!
//! The configuration is built once per process and shared: by the AWS SDK's
//! HTTP client ([`crate::http_client`]), by the LLM and Slack clients
//! (`myao_http::http_client`) and by Socket Mode's WebSocket.

use std::sync::{Arc, OnceLock};

/// The trusted roots.
pub fn roots() -> rustls::RootCertStore {
    rustls::RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    }
}

/// The client configuration every TLS connection of the bot uses: the
/// compiled-in roots, ring's cryptography, rustls's safe defaults (TLS 1.2
/// and 1.3), no client certificate. Built on the first call.
pub fn client_config() -> Arc<rustls::ClientConfig> {
    static CONFIG: OnceLock<Arc<rustls::ClientConfig>> = OnceLock::new();
    CONFIG
        .get_or_init(|| Arc::new(client_config_with(roots())))
        .clone()
}

/// A client configuration like [`client_config`]'s, trusting `roots`
/// instead (tests give their own certificate authority).
pub fn client_config_with(roots: rustls::RootCertStore) -> rustls::ClientConfig {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    rustls::ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(rustls::DEFAULT_VERSIONS)
        .expect("ring supports TLS 1.2 and 1.3")
        .with_root_certificates(roots)
        .with_no_client_auth()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mozillas_roots_are_trusted() {
        let roots = roots();
        assert!(roots.len() > 100, "{} roots", roots.len());
        // Among them the roots AWS's endpoints chain to (Amazon Root CA 1)
        // and Slack's (e.g. DigiCert Global Root G2).
        let subjects: Vec<String> = roots
            .roots
            .iter()
            .map(|anchor| String::from_utf8_lossy(anchor.subject.as_ref()).into_owned())
            .collect();
        for name in ["Amazon Root CA 1", "DigiCert Global Root G2"] {
            assert!(subjects.iter().any(|s| s.contains(name)), "{name}");
        }
    }

    #[test]
    fn one_configuration_is_built_and_shared() {
        let first = client_config();
        assert!(Arc::ptr_eq(&first, &client_config()));
        assert_eq!(
            first.crypto_provider().cipher_suites,
            rustls::crypto::ring::default_provider().cipher_suites,
            "ring, with its default suites"
        );
    }
}
