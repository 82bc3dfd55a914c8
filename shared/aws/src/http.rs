//! The HTTP client of every SDK client: hyper-util's pooled HTTP/1.1 client
//! over rustls, with the one TLS configuration of [`myao_tls`].
//!
//! The SDK's ready-made client (`aws-smithy-http-client`) takes its roots
//! only as PEM: the compiled-in roots would be encoded to PEM, decoded back
//! and parsed at every cold start, some 37 M instructions before the first
//! request (docs/performance.md, "Cold starts and size"). This one is given a rustls configuration
//! whose roots were parsed when the binary was built.
//!
//! What the SDK asks of a client, and how this one does it:
//! - **Timeouts** from [`HttpConnectorSettings`]: the connect timeout bounds
//!   the TCP connection and the TLS handshake together; the read timeout
//!   bounds the wait for the response's head, from the request's start.
//!   Either one is a [`ConnectorError::timeout`], which the SDK retries.
//! - **Errors** are classified as the SDK's own client does, since its
//!   retries depend on them: a refused or reset connection, a failed
//!   handshake, a closed or cancelled one is an I/O error (retried); a
//!   response cut short is a transient error (retried); a request hyper
//!   cannot send is the caller's (not retried); anything else is "other"
//!   (not retried).
//! - **Connection poisoning**: after a transient failure the SDK marks the
//!   connection it used so that the pool does not hand it out again.
//! - **Pools**: one connector, and its pool, per timeout settings, kept for
//!   the client's life (the SDK asks for a connector on every attempt).

use std::error::Error as StdError;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use aws_smithy_runtime_api::client::connection::{CaptureSmithyConnection, ConnectionMetadata};
use aws_smithy_runtime_api::client::http::{
    HttpClient, HttpConnector, HttpConnectorFuture, HttpConnectorSettings, SharedHttpClient,
    SharedHttpConnector,
};
use aws_smithy_runtime_api::client::orchestrator::{HttpRequest, HttpResponse};
use aws_smithy_runtime_api::client::result::ConnectorError;
use aws_smithy_runtime_api::client::runtime_components::RuntimeComponents;
use aws_smithy_types::body::SdkBody;
use aws_smithy_types::retry::ErrorKind;
use hyper::Uri;
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::connect::{
    capture_connection, CaptureConnection, HttpConnector as TcpConnector,
};
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioTimer};

type BoxError = Box<dyn StdError + Send + Sync>;

/// The HTTP client of every SDK client, trusting the compiled-in roots.
/// Each call makes a new client, with pools of its own (a tokio runtime's
/// connections stay in it). Nothing is connected, resolved or read until
/// the first request.
pub fn http_client() -> SharedHttpClient {
    http_client_with(myao_tls::client_config())
}

/// The same, over the TLS configuration `tls` (tests give one that trusts
/// their own certificate authority).
pub fn http_client_with(tls: Arc<rustls::ClientConfig>) -> SharedHttpClient {
    SharedHttpClient::new(SdkHttpClient {
        tls,
        connectors: Mutex::new(Vec::new()),
    })
}

/// A connector's timeouts: connect, then read.
type Timeouts = (Option<Duration>, Option<Duration>);

struct SdkHttpClient {
    tls: Arc<rustls::ClientConfig>,
    connectors: Mutex<Vec<(Timeouts, SharedHttpConnector)>>,
}

impl fmt::Debug for SdkHttpClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SdkHttpClient").finish_non_exhaustive()
    }
}

impl HttpClient for SdkHttpClient {
    fn http_connector(
        &self,
        settings: &HttpConnectorSettings,
        _components: &RuntimeComponents,
    ) -> SharedHttpConnector {
        let timeouts = (settings.connect_timeout(), settings.read_timeout());
        // A poisoned lock only means another thread panicked while pushing:
        // the list itself is whole.
        let mut connectors = self
            .connectors
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some((_, connector)) = connectors.iter().find(|(t, _)| *t == timeouts) {
            return connector.clone();
        }
        let connector = SharedHttpConnector::new(Connector::new(&self.tls, timeouts));
        connectors.push((timeouts, connector.clone()));
        connector
    }
}

/// One pool of connections, with its timeouts.
struct Connector {
    client: Client<ConnectTimeout<HttpsConnector<TcpConnector>>, SdkBody>,
    read_timeout: Option<Duration>,
}

impl fmt::Debug for Connector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Connector")
            .field("read_timeout", &self.read_timeout)
            .finish_non_exhaustive()
    }
}

impl Connector {
    fn new(tls: &rustls::ClientConfig, (connect_timeout, read_timeout): Timeouts) -> Connector {
        let mut tcp = TcpConnector::new();
        // The scheme is for the TLS layer above to check, not this one.
        tcp.enforce_http(false);
        tcp.set_nodelay(true);
        let https = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(tls.clone())
            // http:// only reaches an emulator or a local stub (tests, the
            // local tools); AWS's endpoints are https://.
            .https_or_http()
            .enable_http1()
            .wrap_connector(tcp);
        let client = Client::builder(TokioExecutor::new())
            // Without a timer the pool never closes an idle connection.
            .pool_timer(TokioTimer::new())
            .build(ConnectTimeout {
                inner: https,
                limit: connect_timeout,
            });
        Connector {
            client,
            read_timeout,
        }
    }
}

impl HttpConnector for Connector {
    fn call(&self, request: HttpRequest) -> HttpConnectorFuture {
        let mut request = match request.try_into_http1x() {
            Ok(request) => request,
            Err(error) => {
                return HttpConnectorFuture::ready(Err(ConnectorError::user(error.into())))
            }
        };
        let connection = capture_connection(&mut request);
        if let Some(capture) = request.extensions().get::<CaptureSmithyConnection>() {
            capture.set_connection_retriever(move || metadata(&connection));
        }
        let response = self.client.request(request);
        let read_timeout = self.read_timeout;
        HttpConnectorFuture::new(async move {
            let response = match read_timeout {
                None => response.await,
                Some(limit) => match tokio::time::timeout(limit, response).await {
                    Ok(response) => response,
                    Err(_) => return Err(ConnectorError::timeout(TimedOut::read(limit).into())),
                },
            };
            match response {
                Ok(response) => HttpResponse::try_from(response.map(SdkBody::from_body_1_x))
                    .map_err(|error| ConnectorError::other(error.into(), None)),
                Err(error) => Err(classify(error.into())),
            }
        })
    }
}

/// What the SDK needs to know of the connection a request used: a way to
/// take it out of the pool.
fn metadata(connection: &CaptureConnection) -> Option<ConnectionMetadata> {
    let connected = connection.connection_metadata();
    connected.as_ref()?;
    let connection = connection.clone();
    Some(
        ConnectionMetadata::builder()
            .proxied(false)
            .poison_fn(move || {
                if let Some(connected) = connection.connection_metadata().as_ref() {
                    connected.poison();
                }
            })
            .build(),
    )
}

/// The SDK's kind of a failed request, from its cause (see the module).
fn classify(error: BoxError) -> ConnectorError {
    if find::<TimedOut>(error.as_ref()).is_some() {
        return ConnectorError::timeout(error);
    }
    if let Some(hyper) = find::<hyper::Error>(error.as_ref()) {
        if hyper.is_timeout() {
            return ConnectorError::timeout(error);
        }
        if hyper.is_user() {
            return ConnectorError::user(error);
        }
        if hyper.is_closed() || hyper.is_canceled() || find::<std::io::Error>(hyper).is_some() {
            return ConnectorError::io(error);
        }
        if hyper.is_incomplete_message() {
            return ConnectorError::other(error, Some(ErrorKind::TransientError));
        }
        return ConnectorError::other(error, None);
    }
    let connecting = find::<hyper_util::client::legacy::Error>(error.as_ref())
        .is_some_and(|client| client.is_connect() || find::<std::io::Error>(client).is_some());
    if connecting || find::<std::io::Error>(error.as_ref()).is_some() {
        return ConnectorError::io(error);
    }
    ConnectorError::other(error, None)
}

/// The first error of type `E` in `error`'s chain, `error` included.
fn find<'a, E: StdError + 'static>(error: &'a (dyn StdError + 'static)) -> Option<&'a E> {
    std::iter::successors(Some(error), |&error| error.source()).find_map(|e| e.downcast_ref::<E>())
}

/// A connection or a response that did not come in time.
#[derive(Debug)]
struct TimedOut {
    what: &'static str,
    limit: Duration,
}

impl TimedOut {
    fn read(limit: Duration) -> TimedOut {
        TimedOut {
            what: "no response",
            limit,
        }
    }

    fn connect(limit: Duration) -> TimedOut {
        TimedOut {
            what: "no connection",
            limit,
        }
    }
}

impl fmt::Display for TimedOut {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} within {:?}", self.what, self.limit)
    }
}

impl StdError for TimedOut {}

/// A connector whose connections (TCP and TLS handshake) must be made
/// within `limit`.
#[derive(Clone)]
struct ConnectTimeout<C> {
    inner: C,
    limit: Option<Duration>,
}

type Connecting<T> = Pin<Box<dyn Future<Output = Result<T, BoxError>> + Send>>;

impl<C> tower_service::Service<Uri> for ConnectTimeout<C>
where
    C: tower_service::Service<Uri>,
    C::Error: Into<BoxError>,
    C::Future: Send + 'static,
{
    type Response = C::Response;
    type Error = BoxError;
    type Future = Connecting<C::Response>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, uri: Uri) -> Self::Future {
        let connecting = self.inner.call(uri);
        let limit = self.limit;
        Box::pin(async move {
            match limit {
                None => connecting.await.map_err(Into::into),
                Some(limit) => match tokio::time::timeout(limit, connecting).await {
                    Ok(connected) => connected.map_err(Into::into),
                    Err(_) => Err(TimedOut::connect(limit).into()),
                },
            }
        })
    }
}

#[cfg(test)]
mod tests {
    //! The client over real TLS: a local server with a certificate from a
    //! certificate authority made for the test, and the real SDK.
    use super::*;
    use std::net::SocketAddr;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use aws_sdk_dynamodb::config::timeout::TimeoutConfig;
    use aws_sdk_dynamodb::config::{BehaviorVersion, Credentials, Region};
    use aws_sdk_dynamodb::error::SdkError;
    use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
    use tokio::net::TcpListener;

    /// What the server does with its n-th request (from 0).
    #[derive(Clone, Copy)]
    enum Reply {
        /// 200 with a ListTables answer naming one table.
        Tables,
        /// 500 InternalServerError, keeping the connection open.
        Fails,
        /// Part of a response's head, then the connection closes.
        Cut,
        /// Nothing, ever.
        Silent,
    }

    struct Server {
        addr: SocketAddr,
        /// The certificate authority that signed the server's certificate.
        ca: rustls::RootCertStore,
        connections: Arc<AtomicUsize>,
        requests: Arc<AtomicUsize>,
    }

    /// An HTTPS server on 127.0.0.1 for `localhost`, answering `replies` in
    /// turn (the last one again when they run out).
    async fn tls_server(replies: &'static [Reply]) -> Server {
        let ca_key = rcgen::KeyPair::generate().expect("a key");
        let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("params");
        ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        let ca = rcgen::CertifiedIssuer::self_signed(ca_params, ca_key).expect("a CA");
        let key = rcgen::KeyPair::generate().expect("a key");
        let cert = rcgen::CertificateParams::new(vec!["localhost".to_owned()])
            .expect("params")
            .signed_by(&key, &ca)
            .expect("a certificate");
        let mut roots = rustls::RootCertStore::empty();
        roots.add(ca.der().clone()).expect("the CA is a root");

        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("versions")
            .with_no_client_auth()
            .with_single_cert(
                vec![cert.der().clone()],
                rustls::pki_types::PrivatePkcs8KeyDer::from(key.serialize_der()).into(),
            )
            .expect("a server configuration");
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));

        let listener = TcpListener::bind("127.0.0.1:0").await.expect("a port");
        let addr = listener.local_addr().expect("an address");
        let connections = Arc::new(AtomicUsize::new(0));
        let requests = Arc::new(AtomicUsize::new(0));
        let (accepted, answered) = (connections.clone(), requests.clone());
        tokio::spawn(async move {
            while let Ok((tcp, _)) = listener.accept().await {
                accepted.fetch_add(1, Ordering::SeqCst);
                let (acceptor, answered) = (acceptor.clone(), answered.clone());
                tokio::spawn(async move {
                    if let Ok(tls) = acceptor.accept(tcp).await {
                        serve(tls, replies, &answered).await;
                    }
                });
            }
        });
        Server {
            addr,
            ca: roots,
            connections,
            requests,
        }
    }

    /// HTTP/1.1 over one connection, keeping it alive between requests.
    async fn serve(
        mut stream: impl AsyncRead + AsyncWrite + Unpin,
        replies: &[Reply],
        answered: &AtomicUsize,
    ) {
        let mut buffer = Vec::new();
        loop {
            // The request's head, then as much body as it declares.
            let head_end = loop {
                if let Some(end) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
                    break end + 4;
                }
                let mut chunk = [0; 4096];
                match stream.read(&mut chunk).await {
                    Ok(0) | Err(_) => return,
                    Ok(n) => buffer.extend_from_slice(&chunk[..n]),
                }
            };
            let head = String::from_utf8_lossy(&buffer[..head_end]).to_ascii_lowercase();
            let length: usize = head
                .lines()
                .find_map(|line| line.strip_prefix("content-length:"))
                .and_then(|n| n.trim().parse().ok())
                .unwrap_or(0);
            while buffer.len() < head_end + length {
                let mut chunk = [0; 4096];
                match stream.read(&mut chunk).await {
                    Ok(0) | Err(_) => return,
                    Ok(n) => buffer.extend_from_slice(&chunk[..n]),
                }
            }
            buffer.drain(..head_end + length);

            let n = answered.fetch_add(1, Ordering::SeqCst);
            let reply = replies[n.min(replies.len() - 1)];
            let answer = |status: &str, body: &str| {
                format!(
                    "HTTP/1.1 {status}\r\ncontent-type: application/x-amz-json-1.0\r\n\
                     content-length: {}\r\n\r\n{body}",
                    body.len()
                )
            };
            let bytes = match reply {
                Reply::Tables => answer("200 OK", r#"{"TableNames":["over-tls"]}"#),
                Reply::Fails => answer(
                    "500 Internal Server Error",
                    r#"{"__type":"com.amazonaws.dynamodb.v20120810#InternalServerError","message":"try again"}"#,
                ),
                Reply::Cut => "HTTP/1.1 200 OK\r\ncontent-le".to_owned(),
                Reply::Silent => {
                    std::future::pending::<()>().await;
                    return;
                }
            };
            if stream.write_all(bytes.as_bytes()).await.is_err() {
                return;
            }
            let _ = stream.flush().await;
            if matches!(reply, Reply::Cut) {
                let _ = stream.shutdown().await;
                return;
            }
        }
    }

    /// A DynamoDB client of `http` for `https://localhost:<port>`, with
    /// `attempts` attempts and `timeouts`.
    fn dynamodb(
        http: SharedHttpClient,
        addr: SocketAddr,
        attempts: u32,
        timeouts: TimeoutConfig,
    ) -> aws_sdk_dynamodb::Client {
        let retries = aws_sdk_dynamodb::config::retry::RetryConfig::standard()
            .with_max_attempts(attempts)
            .with_initial_backoff(Duration::from_millis(1));
        let conf = aws_sdk_dynamodb::Config::builder()
            .behavior_version(BehaviorVersion::latest())
            .region(Region::new("us-east-1"))
            .credentials_provider(Credentials::new("test", "test", None, None, "test"))
            .endpoint_url(format!("https://localhost:{}", addr.port()))
            .http_client(http)
            .retry_config(retries)
            .timeout_config(timeouts)
            .build();
        aws_sdk_dynamodb::Client::from_conf(conf)
    }

    fn trusting(server: &Server) -> SharedHttpClient {
        http_client_with(Arc::new(myao_tls::client_config_with(server.ca.clone())))
    }

    fn no_timeouts() -> TimeoutConfig {
        TimeoutConfig::disabled()
    }

    /// The connector's error in `error`, which must be a dispatch failure.
    fn dispatch_failure<E: std::fmt::Debug>(error: &SdkError<E>) -> &ConnectorError {
        match error {
            SdkError::DispatchFailure(failure) => {
                failure.as_connector_error().expect("a connector error")
            }
            other => panic!("not a dispatch failure: {other:?}"),
        }
    }

    #[tokio::test]
    async fn calls_go_over_tls_and_share_one_connection() {
        let server = tls_server(&[Reply::Tables]).await;
        let client = dynamodb(trusting(&server), server.addr, 1, no_timeouts());
        for _ in 0..3 {
            let tables = client
                .list_tables()
                .send()
                .await
                .expect("an answer over TLS");
            assert_eq!(tables.table_names(), ["over-tls"]);
        }
        assert_eq!(server.requests.load(Ordering::SeqCst), 3);
        assert_eq!(server.connections.load(Ordering::SeqCst), 1, "pooled");
    }

    #[tokio::test]
    async fn a_server_outside_the_roots_is_refused_before_any_request() {
        let server = tls_server(&[Reply::Tables]).await;
        // The compiled-in roots: the test's authority is not among them.
        let client = dynamodb(http_client(), server.addr, 1, no_timeouts());
        let error = client.list_tables().send().await.expect_err("not trusted");
        assert!(dispatch_failure(&error).is_io(), "{error:?}");
        assert!(
            format!("{:?}", error).contains("UnknownIssuer"),
            "the certificate's issuer is unknown: {error:?}"
        );
        assert_eq!(server.requests.load(Ordering::SeqCst), 0);
    }

    #[tokio::test]
    async fn a_handshake_that_never_ends_is_a_connect_timeout() {
        // Accepts TCP connections and never says a word.
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("a port");
        let addr = listener.local_addr().expect("an address");
        tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((tcp, _)) = listener.accept().await {
                held.push(tcp);
            }
        });
        let timeouts = TimeoutConfig::builder()
            .connect_timeout(Duration::from_millis(200))
            .build();
        let client = dynamodb(http_client(), addr, 1, timeouts);
        let error = client.list_tables().send().await.expect_err("no handshake");
        assert!(dispatch_failure(&error).is_timeout(), "{error:?}");
        assert!(crate::is_retryable(&error));
    }

    #[tokio::test]
    async fn a_response_that_never_comes_is_a_read_timeout() {
        let server = tls_server(&[Reply::Silent]).await;
        let timeouts = TimeoutConfig::builder()
            .read_timeout(Duration::from_millis(200))
            .build();
        let client = dynamodb(trusting(&server), server.addr, 1, timeouts);
        let error = client.list_tables().send().await.expect_err("no answer");
        assert!(dispatch_failure(&error).is_timeout(), "{error:?}");
        assert_eq!(server.requests.load(Ordering::SeqCst), 1);
    }

    /// `replies` to two attempts end in the second one's answer, on a
    /// second connection.
    async fn answered_by_a_retry_on_a_new_connection(replies: &'static [Reply]) {
        let server = tls_server(replies).await;
        let client = dynamodb(trusting(&server), server.addr, 2, no_timeouts());
        let tables = client
            .list_tables()
            .send()
            .await
            .expect("the retry's answer");
        assert_eq!(tables.table_names(), ["over-tls"]);
        assert_eq!(server.requests.load(Ordering::SeqCst), 2);
        assert_eq!(server.connections.load(Ordering::SeqCst), 2);
    }

    #[tokio::test]
    async fn a_response_cut_short_is_retried_on_a_new_connection() {
        answered_by_a_retry_on_a_new_connection(&[Reply::Cut, Reply::Tables]).await;
    }

    #[tokio::test]
    async fn a_connection_that_answered_an_error_is_not_used_again() {
        // The server keeps the connection open after its 500; the SDK
        // poisons it, and the retry connects anew.
        answered_by_a_retry_on_a_new_connection(&[Reply::Fails, Reply::Tables]).await;
    }

    #[test]
    fn errors_are_classified_as_the_sdk_expects() {
        let timed_out: BoxError = Box::new(TimedOut::connect(Duration::from_secs(1)));
        assert!(classify(timed_out).is_timeout());
        let reset: BoxError = Box::new(std::io::Error::from(std::io::ErrorKind::ConnectionReset));
        assert!(classify(reset).is_io());
        let unknown: BoxError = "something else".into();
        let unknown = classify(unknown);
        assert!(unknown.is_other() && !unknown.is_io() && !unknown.is_timeout());
    }
}
