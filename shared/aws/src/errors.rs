//! One mapping of SDK errors to [`PortError`]s for every adapter, so that
//! they all agree on which failures a retry may mend; a module of its own so
//! that the adapters find it beside them rather than in the crate's root.

// The four SDKs re-export one and the same smithy error type and error
// metadata trait; any one of them names it.
use aws_sdk_dynamodb::error::{DisplayErrorContext, ProvideErrorMetadata, SdkError};

use myao_core::ports::PortError;

/// Error codes that mean "slow down" or "try later", across the services.
const RETRYABLE_CODES: &[&str] = &[
    "ThrottlingException",
    "Throttling",
    "ThrottledException",
    "TooManyRequestsException",
    "RequestLimitExceeded",
    "ProvisionedThroughputExceededException",
    "TransactionConflictException",
    "RequestThrottled",
    "RequestThrottledException",
    "InternalServerError",
    "InternalServerException",
    "InternalFailure",
    "InternalError",
    "ServiceUnavailable",
    "ServiceUnavailableException",
    "RequestTimeout",
    "RequestTimeoutException",
    // Bedrock Runtime: a model still loading, or slower than its own limit.
    "ModelNotReadyException",
    "ModelTimeoutException",
];

/// Maps an SDK error to a [`PortError`]: throttling, 5xx answers, timeouts
/// and transport failures are [`PortError::Unavailable`] (a retry may
/// succeed); everything else is [`PortError::Refused`]. `operation` names the
/// call for the message, e.g. `"PutItem"`.
pub(crate) fn port_error<E>(service: &'static str, operation: &str, err: SdkError<E>) -> PortError
where
    E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
{
    let detail = format!("{operation}: {}", DisplayErrorContext(&err));
    let error = if is_retryable(&err) {
        PortError::unavailable(service, detail)
    } else {
        PortError::refused(service, detail)
    };
    error.caused_by(err)
}

/// A call's result with one expected answer set apart: the output as
/// `Ok(Ok(_))`; the service's error `code` as `Ok(Err(_))`, an answer the
/// caller expects (the thing is missing, a condition failed); and every
/// other failure as the [`PortError`] of [`port_error`].
pub(crate) fn expecting<T, E>(
    service: &'static str,
    operation: &str,
    code: &str,
    result: Result<T, SdkError<E>>,
) -> Result<Result<T, SdkError<E>>, PortError>
where
    E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
{
    match result {
        Err(e) if e.code() != Some(code) => Err(port_error(service, operation, e)),
        answer => Ok(answer),
    }
}

/// Whether a retry may succeed where `err` failed: a timeout, the network,
/// throttling, a 5xx or 429 answer.
pub fn is_retryable<E>(err: &SdkError<E>) -> bool
where
    E: ProvideErrorMetadata,
{
    match err {
        SdkError::TimeoutError(_) => true,
        // Connection refused or reset, DNS, a timeout: the network, not us.
        // A "user" failure (a request the client cannot send) stays refused.
        SdkError::DispatchFailure(failure) => !failure.is_user(),
        SdkError::ConstructionFailure(_) => false,
        SdkError::ServiceError(_) | SdkError::ResponseError(_) => {
            let status = err.raw_response().map(|r| r.status().as_u16());
            let code = err.code();
            status.is_some_and(|s| s >= 500 || s == 429)
                || code.is_some_and(|c| RETRYABLE_CODES.contains(&c))
        }
        // SdkError is non-exhaustive: a new kind is not known to be transient.
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::http_client;
    use aws_sdk_dynamodb::config::http::HttpResponse;
    use aws_sdk_dynamodb::error::ErrorMetadata;
    use aws_sdk_dynamodb::operation::put_item::PutItemError;

    fn service_error(status: u16, code: &str) -> SdkError<PutItemError> {
        let meta = ErrorMetadata::builder().code(code).message("boom").build();
        let raw = HttpResponse::new(status.try_into().expect("a valid status"), "".into());
        SdkError::service_error(PutItemError::generic(meta), raw)
    }

    #[test]
    fn throttling_and_server_errors_are_retryable() {
        let throttled = port_error("t", "PutItem", service_error(400, "ThrottlingException"));
        assert!(throttled.is_retryable(), "{throttled}");
        let server = port_error("t", "PutItem", service_error(500, "Whatever"));
        assert!(server.is_retryable(), "{server}");
        let capacity = port_error(
            "t",
            "PutItem",
            service_error(400, "ProvisionedThroughputExceededException"),
        );
        assert!(capacity.is_retryable());
    }

    #[tokio::test]
    async fn an_unreachable_endpoint_is_retryable() {
        // Nothing listens on port 1; one attempt, so the test is quick.
        let conf = aws_sdk_dynamodb::Config::builder()
            .behavior_version(aws_sdk_dynamodb::config::BehaviorVersion::latest())
            .region(aws_sdk_dynamodb::config::Region::new("us-east-1"))
            .credentials_provider(aws_sdk_dynamodb::config::Credentials::new(
                "test", "test", None, None, "test",
            ))
            .endpoint_url("http://127.0.0.1:1")
            .http_client(http_client())
            .retry_config(aws_sdk_dynamodb::config::retry::RetryConfig::disabled())
            .build();
        let err = aws_sdk_dynamodb::Client::from_conf(conf)
            .list_tables()
            .send()
            .await
            .expect_err("nothing listens there");
        let err = port_error("dynamodb", "ListTables", err);
        assert!(err.is_retryable(), "{err}");
    }

    #[test]
    fn an_expected_answer_is_set_apart_from_failures() {
        let code = "ConditionalCheckFailedException";
        let ok: Result<(), SdkError<PutItemError>> = Ok(());
        assert!(matches!(expecting("t", "PutItem", code, ok), Ok(Ok(()))));
        let expected: Result<(), _> = Err(service_error(400, code));
        assert!(matches!(
            expecting("t", "PutItem", code, expected),
            Ok(Err(_))
        ));
        let other: Result<(), _> = Err(service_error(400, "ValidationException"));
        let err = expecting("t", "PutItem", code, other).expect_err("a failure");
        assert!(!err.is_retryable());
        assert!(err.to_string().contains("ValidationException"), "{err}");
    }

    #[test]
    fn client_errors_are_refused_and_named() {
        let bad = port_error(
            "store",
            "PutItem",
            service_error(400, "ValidationException"),
        );
        assert!(!bad.is_retryable());
        let text = bad.to_string();
        assert!(text.contains("PutItem"), "{text}");
        assert!(text.contains("ValidationException"), "{text}");
    }
}
