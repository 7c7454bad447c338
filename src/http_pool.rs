//! Keep-alive HTTP/1.1 connections to executors, on hyper: a pool of idle connections per
//! executor address, plain or TLS (rustls), opened ahead of a burst on request.
//!
//! hyper frames requests and answers; this module only pools its connections. One pool per
//! thread (connections run as tasks of the thread that opened them, so nothing here is `Send`).

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::StreamExt;
use http_body_util::{BodyExt, Full, Limited};
use hyper::client::conn::http1::{self, SendRequest};
use hyper::header::{HeaderName, HeaderValue, CONTENT_LENGTH, CONTENT_TYPE, HOST};
use hyper::{Method, Request};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

/// An idle connection is not reused after this long: below actix-web's default keep-alive
/// (5 s), so a server rarely closes one just as a request is written on it.
const IDLE_MAX: Duration = Duration::from_secs(4);
/// Idle connections kept per executor address; more are closed when their call ends.
const IDLE_PER_HOST: usize = 1_024;
/// Connections [`HttpPool::warm`] opens at once.
const WARM_AT_ONCE: usize = 64;
/// An answer body larger than this is refused (executors answer with small envelopes; a log
/// page is the largest).
pub const BODY_MAX: usize = 5 * 1024 * 1024;

/// Why a call failed.
#[derive(Debug, thiserror::Error)]
pub enum PoolError {
    /// No connection could be opened.
    #[error("cannot connect: {0}")]
    Connect(String),
    /// The exchange failed after the connection was open.
    #[error("{0}")]
    Http(#[from] hyper::Error),
    /// The whole call took longer than the pool's timeout.
    #[error("no answer within {0:?}")]
    Timeout(Duration),
    /// The answer's body is larger than [`BODY_MAX`], or could not be read.
    #[error("answer unreadable: {0}")]
    Body(String),
    /// A header or the address cannot be put in a request.
    #[error("{0}")]
    Request(String),
}

/// An executor address, split for connecting and for the request line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// Host name or IP, as connected to (and named to TLS).
    host: String,
    port: u16,
    tls: bool,
    /// `host:port` for the `Host` header and the pool key.
    authority: String,
    /// The address's path without its trailing slash (`""` or `/context`).
    base_path: String,
}

impl Target {
    /// Parses `http(s)://host[:port][/path]`; `None` for anything else (user info, a query or a
    /// fragment have no place in an executor address).
    pub fn parse(address: &str) -> Option<Target> {
        let url = url::Url::parse(address).ok()?;
        let tls = match url.scheme() {
            "http" => false,
            "https" => true,
            _ => return None,
        };
        if !url.username().is_empty()
            || url.password().is_some()
            || url.query().is_some()
            || url.fragment().is_some()
        {
            return None;
        }
        let port = url.port_or_known_default()?;
        let host = match url.host()? {
            url::Host::Ipv6(ip) => ip.to_string(),
            other => other.to_string(),
        };
        Some(Target {
            authority: format!("{}:{port}", url.host_str()?),
            host,
            port,
            tls,
            base_path: url.path().trim_end_matches('/').to_string(),
        })
    }
}

/// An answer: its status and its whole body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// HTTP status code.
    pub status: u16,
    /// The body.
    pub body: Bytes,
}

struct Idle {
    sender: SendRequest<Full<Bytes>>,
    since: Instant,
}

impl Idle {
    fn usable(&self) -> bool {
        self.since.elapsed() < IDLE_MAX && !self.sender.is_closed() && self.sender.is_ready()
    }
}

/// The pool: idle keep-alive connections per `host:port`.
pub struct HttpPool {
    idle: RefCell<HashMap<String, Vec<Idle>>>,
    last_sweep: Cell<Instant>,
    timeout: Duration,
}

/// TLS for https executors and webhooks: rustls with the ring provider and the Mozilla roots,
/// so nothing depends on the system's OpenSSL or certificate store.
pub fn tls_config() -> Result<rustls::ClientConfig, rustls::Error> {
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

/// The TLS connector, built once for the process.
fn tls_connector() -> Result<tokio_rustls::TlsConnector, String> {
    static CONNECTOR: OnceLock<Result<tokio_rustls::TlsConnector, String>> = OnceLock::new();
    CONNECTOR
        .get_or_init(|| {
            tls_config()
                .map(|c| tokio_rustls::TlsConnector::from(Arc::new(c)))
                .map_err(|e| format!("TLS is unavailable: {e}"))
        })
        .clone()
}

/// Opens a connection and hands it to a task of this thread; the request side.
async fn open(target: &Target) -> Result<SendRequest<Full<Bytes>>, PoolError> {
    let tcp = TcpStream::connect((target.host.as_str(), target.port))
        .await
        .map_err(|e| PoolError::Connect(e.to_string()))?;
    // a request is one write; no reason to let Nagle hold a short one back
    tcp.set_nodelay(true)
        .map_err(|e| PoolError::Connect(e.to_string()))?;
    if !target.tls {
        let (sender, conn) = http1::handshake(TokioIo::new(tcp)).await?;
        actix_rt::spawn(async move {
            let _ = conn.await;
        });
        return Ok(sender);
    }
    let name = rustls::pki_types::ServerName::try_from(target.host.clone())
        .map_err(|e| PoolError::Connect(format!("{}: {e}", target.host)))?;
    let tls = tls_connector()
        .map_err(PoolError::Connect)?
        .connect(name, tcp)
        .await
        .map_err(|e| PoolError::Connect(format!("TLS: {e}")))?;
    let (sender, conn) = http1::handshake(TokioIo::new(tls)).await?;
    actix_rt::spawn(async move {
        let _ = conn.await;
    });
    Ok(sender)
}

impl HttpPool {
    /// A pool whose calls (connect, send and whole answer) end after `timeout`.
    pub fn new(timeout: Duration) -> Self {
        HttpPool {
            idle: RefCell::new(HashMap::new()),
            last_sweep: Cell::new(Instant::now()),
            timeout,
        }
    }

    /// POSTs `body` to `{target}/{path}` with the extra `headers`; the answer, whatever its
    /// status.
    pub async fn post(
        &self,
        target: &Target,
        path: &str,
        headers: &[(&str, &str)],
        body: Bytes,
    ) -> Result<Answer, PoolError> {
        let request = build_request(target, path, headers, body)?;
        match tokio::time::timeout(self.timeout, self.exchange(target, request)).await {
            Ok(answer) => answer,
            Err(_) => Err(PoolError::Timeout(self.timeout)),
        }
    }

    /// Opens connections to `target` until `want` are idle (at most [`IDLE_PER_HOST`]),
    /// [`WARM_AT_ONCE`] at a time; the number opened. Stops at the first that fails.
    pub async fn warm(&self, target: &Target, want: usize) -> usize {
        let have = {
            let mut idle = self.idle.borrow_mut();
            idle.get_mut(&target.authority).map_or(0, |list| {
                list.retain(Idle::usable);
                list.len()
            })
        };
        let missing = want.min(IDLE_PER_HOST).saturating_sub(have);
        let mut opening = futures_util::stream::iter(0..missing)
            .map(|_| tokio::time::timeout(self.timeout, open(target)))
            .buffer_unordered(WARM_AT_ONCE);
        let mut opened = 0;
        while let Some(conn) = opening.next().await {
            match conn {
                Ok(Ok(sender)) => {
                    self.put_idle(&target.authority, sender);
                    opened += 1;
                }
                Ok(Err(e)) => {
                    log::debug!("cannot open a connection to {}: {e}", target.authority);
                    break;
                }
                Err(_) => break,
            }
        }
        opened
    }

    /// Idle connections held now (all addresses).
    pub fn idle_connections(&self) -> usize {
        self.idle.borrow().values().map(Vec::len).sum()
    }

    async fn exchange(
        &self,
        target: &Target,
        request: Request<Full<Bytes>>,
    ) -> Result<Answer, PoolError> {
        let (mut sender, answer) = match self.take_idle(&target.authority) {
            Some(mut sender) => match sender.try_send_request(request).await {
                Ok(answer) => (sender, answer),
                // a kept connection the server had closed: the request was not sent, so it is
                // safe to send it once more on a new one. Nothing is retried once sent, since
                // the executor may have started the job.
                Err(mut e) => match e.take_message() {
                    Some(request) => {
                        let mut sender = open(target).await?;
                        let answer = sender.send_request(request).await?;
                        (sender, answer)
                    }
                    None => return Err(PoolError::Http(e.into_error())),
                },
            },
            None => {
                let mut sender = open(target).await?;
                let answer = sender.send_request(request).await?;
                (sender, answer)
            }
        };
        let status = answer.status().as_u16();
        // a declared length past the bound is refused before anything is read
        let declared = answer
            .headers()
            .get(CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<usize>().ok());
        if declared.is_some_and(|n| n > BODY_MAX) {
            return Err(PoolError::Body(format!("answer over {BODY_MAX} bytes")));
        }
        let body = Limited::new(answer.into_body(), BODY_MAX)
            .collect()
            .await
            .map_err(|e| PoolError::Body(e.to_string()))?
            .to_bytes();
        // the connection is ready again once the answer was read whole
        if sender.ready().await.is_ok() {
            self.put_idle(&target.authority, sender);
        }
        Ok(Answer { status, body })
    }

    fn take_idle(&self, authority: &str) -> Option<SendRequest<Full<Bytes>>> {
        let mut idle = self.idle.borrow_mut();
        let list = idle.get_mut(authority)?;
        // most recently used first: the likeliest to be alive, and the stale ones sink
        while let Some(conn) = list.pop() {
            if conn.usable() {
                return Some(conn.sender);
            }
        }
        None
    }

    fn put_idle(&self, authority: &str, sender: SendRequest<Full<Bytes>>) {
        let conn = Idle {
            sender,
            since: Instant::now(),
        };
        let mut idle = self.idle.borrow_mut();
        if self.last_sweep.get().elapsed() >= Duration::from_secs(1) {
            self.last_sweep.set(Instant::now());
            // addresses no longer called would otherwise hold their sockets forever
            idle.retain(|_, list| {
                list.retain(Idle::usable);
                !list.is_empty()
            });
        }
        match idle.get_mut(authority) {
            Some(list) if list.len() >= IDLE_PER_HOST => {}
            Some(list) => list.push(conn),
            None => {
                idle.insert(authority.to_string(), vec![conn]);
            }
        }
    }
}

fn build_request(
    target: &Target,
    path: &str,
    headers: &[(&str, &str)],
    body: Bytes,
) -> Result<Request<Full<Bytes>>, PoolError> {
    let uri = format!("{}/{path}", target.base_path);
    let mut request = Request::builder()
        .method(Method::POST)
        .uri(uri)
        .header(HOST, target.authority.as_str())
        .header(CONTENT_TYPE, "application/json;charset=UTF-8")
        .body(Full::new(body))
        .map_err(|e| PoolError::Request(e.to_string()))?;
    for (name, value) in headers {
        let name = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| PoolError::Request(format!("bad header name {name}")))?;
        let value = HeaderValue::from_str(value)
            .map_err(|_| PoolError::Request(format!("header {name} has a control character")))?;
        request.headers_mut().insert(name, value);
    }
    Ok(request)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpListener;

    #[test]
    fn targets_parse_plain_and_tls_addresses() {
        let t = Target::parse("http://10.0.0.1:9999/").unwrap();
        assert_eq!(
            (t.authority.as_str(), t.base_path.as_str(), t.tls),
            ("10.0.0.1:9999", "", false)
        );
        let t = Target::parse("https://exec.example.com/xxl-job/").unwrap();
        assert_eq!(
            (t.port, t.tls, t.base_path.as_str()),
            (443, true, "/xxl-job")
        );
        let t = Target::parse("http://[::1]:8/").unwrap();
        assert_eq!((t.host.as_str(), t.authority.as_str()), ("::1", "[::1]:8"));
        assert!(Target::parse("ftp://h/").is_none());
        assert!(Target::parse("http://u:p@h/").is_none());
        assert!(Target::parse("http://h/?q").is_none());
    }

    /// A server that answers every request on a connection with `answer`, and counts accepts.
    async fn server(answer: &'static [u8]) -> (u16, std::rc::Rc<Cell<usize>>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let accepted = std::rc::Rc::new(Cell::new(0));
        let count = accepted.clone();
        actix_rt::spawn(async move {
            while let Ok((mut s, _)) = listener.accept().await {
                count.set(count.get() + 1);
                actix_rt::spawn(async move {
                    let mut buf = vec![0u8; 8192];
                    while let Ok(n) = s.read(&mut buf).await {
                        if n == 0 || s.write_all(answer).await.is_err() {
                            break;
                        }
                    }
                });
            }
        });
        (port, accepted)
    }

    #[actix_rt::test]
    async fn connections_are_kept_and_warmed() {
        let (port, accepted) =
            server(b"HTTP/1.1 200 OK\r\ncontent-length: 12\r\n\r\n{\"code\":200}").await;
        let pool = HttpPool::new(Duration::from_secs(5));
        let target = Target::parse(&format!("http://127.0.0.1:{port}/")).unwrap();
        for _ in 0..3 {
            let a = pool.post(&target, "beat", &[], Bytes::new()).await.unwrap();
            assert_eq!(a.status, 200);
            assert_eq!(&a.body[..], b"{\"code\":200}");
        }
        assert_eq!(accepted.get(), 1, "one connection served all three");
        assert_eq!(pool.warm(&target, 4).await, 3);
        assert_eq!(pool.idle_connections(), 4);
    }

    #[actix_rt::test]
    async fn a_silent_server_times_out_and_a_closed_port_is_a_connect_error() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let pool = HttpPool::new(Duration::from_millis(300));
        let target = Target::parse(&format!("http://127.0.0.1:{port}/")).unwrap();
        let err = pool
            .post(&target, "run", &[], Bytes::new())
            .await
            .unwrap_err();
        assert!(matches!(err, PoolError::Timeout(_)), "{err}");
        drop(listener);
        let err = pool
            .post(&target, "run", &[], Bytes::new())
            .await
            .unwrap_err();
        assert!(matches!(err, PoolError::Connect(_)), "{err}");
    }

    #[actix_rt::test]
    async fn oversized_answers_are_refused() {
        let pool = HttpPool::new(Duration::from_secs(5));
        let (port, _) = server(b"HTTP/1.1 200 OK\r\ncontent-length: 99999999\r\n\r\n").await;
        let target = Target::parse(&format!("http://127.0.0.1:{port}/")).unwrap();
        let err = pool
            .post(&target, "log", &[], Bytes::new())
            .await
            .unwrap_err();
        assert!(matches!(err, PoolError::Body(_)), "{err}");
    }
}
