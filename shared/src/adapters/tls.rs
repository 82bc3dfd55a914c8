//! The root certificates every TLS client of the functions trusts: Mozilla's
//! list as `webpki-root-certs` ships it, compiled into the binary.
//!
//! The clients' default is the system's store, which rustls-native-certs
//! reads from disk when the first client is built: on a cold start, a bundle
//! and then a directory of single certificates (on this project's Debian
//! machine, 145 files), parsed before the first event. Compiled in, the roots
//! cost no file system access, and they are the same on every host, Lambda's
//! Amazon Linux 2023 included. Every endpoint the functions call (AWS, Slack,
//! the hosted LLM APIs) chains to one of them; verification itself is the
//! TLS library's own, unchanged.

/// The trusted roots, DER-encoded.
pub fn roots_der() -> impl Iterator<Item = &'static [u8]> {
    webpki_root_certs::TLS_SERVER_ROOT_CERTS
        .iter()
        .map(|cert| cert.as_ref())
}

/// The trusted roots as one PEM bundle: the AWS SDK's HTTP client takes its
/// roots as PEM.
#[cfg(feature = "aws")]
pub(crate) fn pem_bundle() -> Vec<u8> {
    let mut pem = Vec::with_capacity(256 * 1024);
    for der in roots_der() {
        pem.extend_from_slice(b"-----BEGIN CERTIFICATE-----\n");
        for line in base64(der).chunks(64) {
            pem.extend_from_slice(line);
            pem.push(b'\n');
        }
        pem.extend_from_slice(b"-----END CERTIFICATE-----\n");
    }
    pem
}

/// `bytes` in standard base64, padded. Written in place, four characters
/// for three bytes: the roots are some 200 KB, encoded on the way to a cold
/// start's first request (a call per character cost 10 M instructions).
#[cfg(feature = "aws")]
fn base64(bytes: &[u8]) -> Vec<u8> {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let char_at = |n: u32, shift: u32| ALPHABET[((n >> shift) & 63) as usize];
    let mut out = vec![b'='; bytes.len().div_ceil(3) * 4];
    for (src, dst) in bytes.chunks(3).zip(out.chunks_exact_mut(4)) {
        let byte = |i: usize| u32::from(src.get(i).copied().unwrap_or(0));
        let n = (byte(0) << 16) | (byte(1) << 8) | byte(2);
        dst[0] = char_at(n, 18);
        dst[1] = char_at(n, 12);
        if src.len() > 1 {
            dst[2] = char_at(n, 6);
        }
        if src.len() > 2 {
            dst[3] = char_at(n, 0);
        }
    }
    out
}

/// The HTTP client of the LLM and Slack adapters, trusting the compiled-in
/// roots only. Should the roots be refused (they are not), the client falls
/// back to reqwest's default, the system's store: verified all the same.
#[cfg(feature = "jobs")]
pub fn http_client() -> reqwest::Client {
    let roots = roots_der().filter_map(|der| reqwest::Certificate::from_der(der).ok());
    reqwest::Client::builder()
        .tls_certs_only(roots)
        .build()
        .unwrap_or_else(|error| {
            tracing::error!(%error, "compiled-in roots refused; using the system's store");
            reqwest::Client::new()
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn there_are_roots() {
        assert!(roots_der().count() > 100);
    }

    #[cfg(feature = "aws")]
    #[test]
    fn base64_matches_the_standard_vectors() {
        for (plain, encoded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(plain.as_bytes()), encoded.as_bytes(), "{plain}");
        }
        assert_eq!(base64(&[0xfb, 0xff, 0xbf]), b"+/+/");
    }

    #[cfg(feature = "aws")]
    #[test]
    fn the_pem_bundle_holds_every_root() {
        let pem = String::from_utf8(pem_bundle()).expect("ASCII");
        assert_eq!(
            pem.matches("-----BEGIN CERTIFICATE-----").count(),
            roots_der().count()
        );
        assert!(pem.lines().all(|line| line.len() <= 64), "lines of 64");
    }

    #[cfg(feature = "jobs")]
    #[test]
    fn the_http_client_takes_the_roots() {
        for der in roots_der() {
            assert!(reqwest::Certificate::from_der(der).is_ok());
        }
        let _client = http_client();
    }
}
