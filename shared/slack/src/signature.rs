//! Slack's request signature (v0), checked on the raw body before parsing.

use hmac::{Hmac, Mac};
use sha2::Sha256;

/// Requests signed further than this from now are refused (replay protection).
pub const MAX_SKEW_SECONDS: i64 = 300;

/// Why a request's signature was refused. Never shown to the caller.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SignatureError {
    #[error("the X-Slack-Request-Timestamp or X-Slack-Signature header is missing")]
    Missing,
    #[error("the timestamp header is not a number")]
    BadTimestamp,
    #[error("the timestamp is {0} s away from now")]
    Stale(i64),
    #[error("the signature is not v0=<64 hex digits>")]
    Malformed,
    #[error("the signature does not match")]
    Mismatch,
}

/// The `v0=<hex>` signature of `body` sent at `timestamp`.
pub fn sign(secret: &[u8], timestamp: &str, body: &[u8]) -> String {
    format!(
        "v0={}",
        hex::encode(mac(secret, timestamp, body).finalize().into_bytes())
    )
}

fn mac(secret: &[u8], timestamp: &str, body: &[u8]) -> Hmac<Sha256> {
    // HMAC takes keys of any length.
    let mut mac = match Hmac::<Sha256>::new_from_slice(secret) {
        Ok(m) => m,
        Err(_) => unreachable!("HMAC accepts any key length"),
    };
    mac.update(b"v0:");
    mac.update(timestamp.as_bytes());
    mac.update(b":");
    mac.update(body);
    mac
}

/// Checks a request: both headers present, the timestamp within
/// [`MAX_SKEW_SECONDS`] of `now` (either way), and the signature equal, in
/// constant time, to the HMAC-SHA256 of `v0:{timestamp}:{body}`.
pub fn verify(
    secret: &[u8],
    timestamp: Option<&str>,
    signature: Option<&str>,
    body: &[u8],
    now_unix: i64,
) -> Result<(), SignatureError> {
    let (Some(timestamp), Some(signature)) = (timestamp, signature) else {
        return Err(SignatureError::Missing);
    };
    let sent: i64 = timestamp
        .trim()
        .parse()
        .map_err(|_| SignatureError::BadTimestamp)?;
    let skew = now_unix.saturating_sub(sent);
    if skew.abs() > MAX_SKEW_SECONDS {
        return Err(SignatureError::Stale(skew));
    }
    let given = signature
        .strip_prefix("v0=")
        .filter(|h| h.len() == 64)
        .and_then(|h| hex::decode(h).ok())
        .ok_or(SignatureError::Malformed)?;
    mac(secret, timestamp, body)
        .verify_slice(&given)
        .map_err(|_| SignatureError::Mismatch)
}

#[cfg(test)]
mod tests {
    use super::*;

    // Slack's published example (REFERENCE.md).
    const SECRET: &[u8] = b"8f742231b10e8888abcd99yyyzzz85a5";
    const TIMESTAMP: &str = "1531420618";
    const BODY: &str = "token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c";
    const EXPECTED: &str = "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503";
    const NOW: i64 = 1_531_420_618 + 10;

    #[test]
    fn slack_test_vector_signs_and_verifies() {
        assert_eq!(sign(SECRET, TIMESTAMP, BODY.as_bytes()), EXPECTED);
        assert_eq!(
            verify(
                SECRET,
                Some(TIMESTAMP),
                Some(EXPECTED),
                BODY.as_bytes(),
                NOW
            ),
            Ok(())
        );
    }

    #[test]
    fn a_tampered_body_is_refused() {
        let tampered = BODY.replace("roadrunner", "coyote");
        assert_eq!(
            verify(
                SECRET,
                Some(TIMESTAMP),
                Some(EXPECTED),
                tampered.as_bytes(),
                NOW
            ),
            Err(SignatureError::Mismatch)
        );
    }

    #[test]
    fn a_wrong_secret_is_refused() {
        assert_eq!(
            verify(
                b"not-the-secret",
                Some(TIMESTAMP),
                Some(EXPECTED),
                BODY.as_bytes(),
                NOW
            ),
            Err(SignatureError::Mismatch)
        );
    }

    #[test]
    fn stale_and_future_timestamps_are_refused() {
        let stale = 1_531_420_618 + 301;
        let future = 1_531_420_618 - 301;
        assert_eq!(
            verify(
                SECRET,
                Some(TIMESTAMP),
                Some(EXPECTED),
                BODY.as_bytes(),
                stale
            ),
            Err(SignatureError::Stale(301))
        );
        assert_eq!(
            verify(
                SECRET,
                Some(TIMESTAMP),
                Some(EXPECTED),
                BODY.as_bytes(),
                future
            ),
            Err(SignatureError::Stale(-301))
        );
        // exactly at the limit is still accepted
        assert!(verify(
            SECRET,
            Some(TIMESTAMP),
            Some(EXPECTED),
            BODY.as_bytes(),
            1_531_420_618 + 300
        )
        .is_ok());
    }

    #[test]
    fn missing_headers_are_refused() {
        assert_eq!(
            verify(SECRET, None, Some(EXPECTED), BODY.as_bytes(), NOW),
            Err(SignatureError::Missing)
        );
        assert_eq!(
            verify(SECRET, Some(TIMESTAMP), None, BODY.as_bytes(), NOW),
            Err(SignatureError::Missing)
        );
    }

    #[test]
    fn malformed_headers_are_refused() {
        assert_eq!(
            verify(
                SECRET,
                Some("yesterday"),
                Some(EXPECTED),
                BODY.as_bytes(),
                NOW
            ),
            Err(SignatureError::BadTimestamp)
        );
        for bad in [
            "a2114d57",
            "v1=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503",
            "v0=zz",
            "",
        ] {
            assert_eq!(
                verify(SECRET, Some(TIMESTAMP), Some(bad), BODY.as_bytes(), NOW),
                Err(SignatureError::Malformed),
                "{bad}"
            );
        }
    }
}
