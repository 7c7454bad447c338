//! A keep-alive HTTP/1.1 client for the admin's calls to executors at plain `http://` addresses.
//!
//! Why not a general client: at the top of a second a burst of `run` calls goes out at once, and
//! each call's CPU on the calling thread delays the calls still waiting. Here a request is one
//! buffer written once, on the caller's own task, and each pooled connection keeps its read
//! buffer; awc and hyper (a task and two channel hops per call) both cost more per call and made
//! the fires later (measured: BENCHMARKS.md).
//!
//! Only what executors (actix-web, XXL-JOB's netty server) answer is needed, but all of HTTP/1.1's
//! response framing is handled: `Content-Length`, `chunked`, read-to-close, interim `1xx`
//! answers, `Connection: close` and HTTP/1.0. One client per thread (it is not `Send`).

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// An idle connection is not reused after this long: below actix-web's default keep-alive
/// (5 s), so a server rarely closes one just as a request is written on it.
const IDLE_MAX: Duration = Duration::from_secs(4);
/// Idle connections kept per executor address; more are closed when their call ends.
const IDLE_PER_HOST: usize = 1_024;
/// Connections [`Http1Client::warm`] opens at once.
const WARM_AT_ONCE: usize = 64;
/// A response head larger than this is refused.
const HEAD_MAX: usize = 64 * 1024;
/// A response body larger than this is refused (executors answer with small envelopes; a log
/// page is the largest).
pub const BODY_MAX: usize = 5 * 1024 * 1024;

/// Why a call failed.
#[derive(Debug, thiserror::Error)]
pub enum Http1Error {
    /// No connection could be opened.
    #[error("cannot connect: {0}")]
    Connect(io::Error),
    /// Reading or writing failed.
    #[error("{0}")]
    Io(io::Error),
    /// The whole call took longer than the client's timeout.
    #[error("no answer within {0:?}")]
    Timeout(Duration),
    /// The server closed the connection before a complete answer.
    #[error("the connection closed before the answer was complete")]
    Closed,
    /// The answer is not HTTP/1.x.
    #[error("malformed answer: {0}")]
    Malformed(String),
    /// The answer's body is larger than [`BODY_MAX`].
    #[error("answer over {BODY_MAX} bytes")]
    TooLarge,
    /// A header value would break the request (CR, LF or another control character).
    #[error("header {0} has a control character")]
    BadHeader(String),
}

/// A plain-HTTP executor address, split for connecting and for the request line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpTarget {
    connect: Endpoint,
    /// `host:port` for the `Host` header and the pool key.
    authority: String,
    /// The address's path without its trailing slash (`""` or `/context`).
    base_path: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Endpoint {
    Ip(SocketAddr),
    Name(String, u16),
}

impl HttpTarget {
    /// Parses `http://host[:port][/path]`; `None` for anything this client leaves to awc
    /// (`https`, user info, a query or fragment) or that is not a URL.
    pub fn parse(address: &str) -> Option<HttpTarget> {
        let url = url::Url::parse(address).ok()?;
        if url.scheme() != "http"
            || !url.username().is_empty()
            || url.password().is_some()
            || url.query().is_some()
            || url.fragment().is_some()
        {
            return None;
        }
        let port = url.port_or_known_default()?;
        let connect = match url.host()? {
            url::Host::Ipv4(ip) => Endpoint::Ip(SocketAddr::new(IpAddr::V4(ip), port)),
            url::Host::Ipv6(ip) => Endpoint::Ip(SocketAddr::new(IpAddr::V6(ip), port)),
            url::Host::Domain(name) => Endpoint::Name(name.to_string(), port),
        };
        Some(HttpTarget {
            connect,
            authority: format!("{}:{port}", url.host_str()?),
            base_path: url.path().trim_end_matches('/').to_string(),
        })
    }
}

/// An answer: its status and its whole body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Http1Response {
    /// HTTP status code.
    pub status: u16,
    /// The body, de-chunked.
    pub body: Vec<u8>,
}

struct Conn {
    stream: TcpStream,
    buf: Vec<u8>,
    idle_since: Instant,
}

impl Conn {
    async fn open(target: &HttpTarget) -> Result<Conn, Http1Error> {
        let stream = match &target.connect {
            Endpoint::Ip(addr) => TcpStream::connect(addr).await,
            Endpoint::Name(host, port) => TcpStream::connect((host.as_str(), *port)).await,
        }
        .map_err(Http1Error::Connect)?;
        // a request is one write; no reason to let Nagle hold a short one back
        stream.set_nodelay(true).map_err(Http1Error::Connect)?;
        Ok(Conn {
            stream,
            buf: Vec::new(),
            idle_since: Instant::now(),
        })
    }

    /// True if the peer has not closed it and sent nothing unasked. Costs no system call
    /// unless the reactor saw the socket become readable.
    fn is_reusable(&self) -> bool {
        if self.idle_since.elapsed() >= IDLE_MAX {
            return false;
        }
        let mut probe = [0u8; 1];
        matches!(self.stream.try_read(&mut probe), Err(e) if e.kind() == io::ErrorKind::WouldBlock)
    }

    async fn read_more(&mut self) -> Result<usize, Http1Error> {
        self.buf
            .reserve(if self.buf.is_empty() { 512 } else { 4096 });
        self.stream
            .read_buf(&mut self.buf)
            .await
            .map_err(Http1Error::Io)
    }
}

/// The client: a pool of idle keep-alive connections per `host:port`.
pub struct Http1Client {
    idle: RefCell<HashMap<String, Vec<Conn>>>,
    last_sweep: Cell<Instant>,
    timeout: Duration,
}

impl Http1Client {
    /// A client whose calls (connect, write and whole answer) end after `timeout`.
    pub fn new(timeout: Duration) -> Self {
        Http1Client {
            idle: RefCell::new(HashMap::new()),
            last_sweep: Cell::new(Instant::now()),
            timeout,
        }
    }

    /// POSTs `body` to `{target}/{path}` with the extra `headers`; the answer, whatever its status.
    pub async fn post(
        &self,
        target: &HttpTarget,
        path: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> Result<Http1Response, Http1Error> {
        let request = build_request(target, path, headers, body)?;
        match tokio::time::timeout(self.timeout, self.exchange(target, &request)).await {
            Ok(answer) => answer,
            Err(_) => Err(Http1Error::Timeout(self.timeout)),
        }
    }

    /// Opens connections to `target` until `want` are idle (at most `IDLE_PER_HOST`),
    /// `WARM_AT_ONCE` at a time; the number opened. Stops at the first that fails.
    pub async fn warm(&self, target: &HttpTarget, want: usize) -> usize {
        let have = {
            let mut idle = self.idle.borrow_mut();
            idle.get_mut(&target.authority).map_or(0, |list| {
                list.retain(Conn::is_reusable);
                list.len()
            })
        };
        let missing = want.min(IDLE_PER_HOST).saturating_sub(have);
        let mut opening = futures_util::stream::iter(0..missing)
            .map(|_| tokio::time::timeout(self.timeout, Conn::open(target)))
            .buffer_unordered(WARM_AT_ONCE);
        let mut opened = 0;
        while let Some(conn) = opening.next().await {
            match conn {
                Ok(Ok(conn)) => {
                    self.put_idle(&target.authority, conn);
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
        target: &HttpTarget,
        request: &[u8],
    ) -> Result<Http1Response, Http1Error> {
        let mut conn = match self.take_idle(&target.authority) {
            Some(mut conn) => {
                // A write that fails on a kept connection never reached a server that had
                // closed it: safe to send once more on a new one. Nothing is retried after
                // a write succeeded, since the executor may have started the job.
                if conn.stream.write_all(request).await.is_ok() {
                    conn
                } else {
                    self.fresh(target, request).await?
                }
            }
            None => self.fresh(target, request).await?,
        };
        let (answer, keep) = read_response(&mut conn).await?;
        if keep {
            self.put_idle(&target.authority, conn);
        }
        Ok(answer)
    }

    async fn fresh(&self, target: &HttpTarget, request: &[u8]) -> Result<Conn, Http1Error> {
        let mut conn = Conn::open(target).await?;
        conn.stream
            .write_all(request)
            .await
            .map_err(Http1Error::Io)?;
        Ok(conn)
    }

    fn take_idle(&self, authority: &str) -> Option<Conn> {
        let mut idle = self.idle.borrow_mut();
        let list = idle.get_mut(authority)?;
        // most recently used first: the likeliest to be alive, and the stale ones sink
        while let Some(conn) = list.pop() {
            if conn.is_reusable() {
                return Some(conn);
            }
        }
        None
    }

    fn put_idle(&self, authority: &str, mut conn: Conn) {
        conn.idle_since = Instant::now();
        // an idle connection holds no buffer: thousands may wait, and answers are small
        conn.buf = Vec::new();
        let mut idle = self.idle.borrow_mut();
        if self.last_sweep.get().elapsed() >= Duration::from_secs(1) {
            self.last_sweep.set(Instant::now());
            // addresses no longer called would otherwise hold their sockets forever
            idle.retain(|_, list| {
                list.retain(|c| c.idle_since.elapsed() < IDLE_MAX);
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
    target: &HttpTarget,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Result<Vec<u8>, Http1Error> {
    let extra: usize = headers.iter().map(|(k, v)| k.len() + v.len() + 4).sum();
    let mut out =
        Vec::with_capacity(128 + target.base_path.len() + path.len() + extra + body.len());
    out.extend_from_slice(b"POST ");
    out.extend_from_slice(target.base_path.as_bytes());
    out.push(b'/');
    out.extend_from_slice(path.as_bytes());
    out.extend_from_slice(b" HTTP/1.1\r\nHost: ");
    out.extend_from_slice(target.authority.as_bytes());
    out.extend_from_slice(b"\r\nContent-Length: ");
    out.extend_from_slice(body.len().to_string().as_bytes());
    out.extend_from_slice(b"\r\n");
    for (name, value) in headers {
        let bad = |s: &str| s.bytes().any(|b| (b < 0x20 && b != b'\t') || b == 0x7f);
        if bad(name) || bad(value) || name.contains(':') {
            return Err(Http1Error::BadHeader((*name).to_string()));
        }
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(value.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(body);
    Ok(out)
}

/// How the body of an answer ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Framing {
    Empty,
    Length(usize),
    Chunked,
    UntilClose,
}

struct Head {
    len: usize,
    status: u16,
    framing: Framing,
    keep_alive: bool,
}

/// Parses a complete head at the start of `buf`; `None` if more bytes are needed.
fn parse_head(buf: &[u8]) -> Result<Option<Head>, Http1Error> {
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut res = httparse::Response::new(&mut headers);
    let len = match res.parse(buf) {
        Ok(httparse::Status::Complete(len)) => len,
        Ok(httparse::Status::Partial) if buf.len() > HEAD_MAX => {
            return Err(Http1Error::Malformed(format!("head over {HEAD_MAX} bytes")))
        }
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(e) => return Err(Http1Error::Malformed(e.to_string())),
    };
    let status = res.code.unwrap_or(0);
    let http11 = res.version == Some(1);
    let mut length: Option<usize> = None;
    let mut chunked = false;
    let mut close = !http11;
    for h in res.headers.iter() {
        let value = std::str::from_utf8(h.value).unwrap_or("").trim();
        if h.name.eq_ignore_ascii_case("content-length") {
            let n: usize = value
                .parse()
                .map_err(|_| Http1Error::Malformed(format!("Content-Length {value:?}")))?;
            if length.is_some_and(|l| l != n) {
                return Err(Http1Error::Malformed("two Content-Lengths".into()));
            }
            length = Some(n);
        } else if h.name.eq_ignore_ascii_case("transfer-encoding") {
            // the last coding decides; anything but chunked is read to the close
            chunked = value
                .rsplit(',')
                .next()
                .is_some_and(|last| last.trim().eq_ignore_ascii_case("chunked"));
            if !chunked {
                close = true;
            }
        } else if h.name.eq_ignore_ascii_case("connection") {
            for token in value.split(',').map(str::trim) {
                if token.eq_ignore_ascii_case("close") {
                    close = true;
                } else if token.eq_ignore_ascii_case("keep-alive") && !http11 {
                    close = false;
                }
            }
        }
    }
    let framing = if (100..200).contains(&status) || status == 204 || status == 304 {
        Framing::Empty
    } else if chunked {
        Framing::Chunked
    } else if let Some(n) = length {
        Framing::Length(n)
    } else {
        Framing::UntilClose
    };
    Ok(Some(Head {
        len,
        status,
        framing,
        keep_alive: !close && framing != Framing::UntilClose,
    }))
}

/// Reads one answer from `conn`; the answer and whether the connection can carry another.
async fn read_response(conn: &mut Conn) -> Result<(Http1Response, bool), Http1Error> {
    conn.buf.clear();
    let head = loop {
        match parse_head(&conn.buf)? {
            // an interim answer (100 Continue): the real one follows it
            Some(head) if (100..200).contains(&head.status) => {
                conn.buf.drain(..head.len);
            }
            Some(head) => break head,
            None => {
                if conn.read_more().await? == 0 {
                    return Err(Http1Error::Closed);
                }
            }
        }
    };
    let mut keep = head.keep_alive;
    let body = match head.framing {
        Framing::Empty => Vec::new(),
        Framing::Length(n) => {
            if n > BODY_MAX {
                return Err(Http1Error::TooLarge);
            }
            let end = head.len + n;
            while conn.buf.len() < end {
                if conn.read_more().await? == 0 {
                    return Err(Http1Error::Closed);
                }
            }
            // bytes after the answer were never asked for: the connection is not trusted again
            keep &= conn.buf.len() == end;
            conn.buf[head.len..end].to_vec()
        }
        Framing::Chunked => {
            let (body, end) = read_chunked(conn, head.len).await?;
            keep &= conn.buf.len() == end;
            body
        }
        Framing::UntilClose => {
            while conn.read_more().await? > 0 {
                if conn.buf.len() - head.len > BODY_MAX {
                    return Err(Http1Error::TooLarge);
                }
            }
            conn.buf[head.len..].to_vec()
        }
    };
    Ok((
        Http1Response {
            status: head.status,
            body,
        },
        keep,
    ))
}

/// De-chunks the body starting at `pos`; the body and the offset just past its end.
async fn read_chunked(conn: &mut Conn, mut pos: usize) -> Result<(Vec<u8>, usize), Http1Error> {
    let mut body = Vec::new();
    loop {
        let (size_len, size) = loop {
            match httparse::parse_chunk_size(&conn.buf[pos..]) {
                Ok(httparse::Status::Complete(found)) => break found,
                Ok(httparse::Status::Partial) => {
                    if conn.read_more().await? == 0 {
                        return Err(Http1Error::Closed);
                    }
                }
                Err(_) => return Err(Http1Error::Malformed("bad chunk size".into())),
            }
        };
        pos += size_len;
        if size == 0 {
            // trailer lines, if any, then the empty line
            loop {
                if let Some(at) = find_crlf(&conn.buf[pos..]) {
                    pos += at + 2;
                    if at == 0 {
                        return Ok((body, pos));
                    }
                } else if conn.read_more().await? == 0 {
                    return Err(Http1Error::Closed);
                }
            }
        }
        let size = usize::try_from(size).map_err(|_| Http1Error::TooLarge)?;
        if body.len().saturating_add(size) > BODY_MAX {
            return Err(Http1Error::TooLarge);
        }
        while conn.buf.len() < pos + size + 2 {
            if conn.read_more().await? == 0 {
                return Err(Http1Error::Closed);
            }
        }
        body.extend_from_slice(&conn.buf[pos..pos + size]);
        if &conn.buf[pos + size..pos + size + 2] != b"\r\n" {
            return Err(Http1Error::Malformed("chunk without its CRLF".into()));
        }
        pos += size + 2;
    }
}

fn find_crlf(buf: &[u8]) -> Option<usize> {
    buf.windows(2).position(|w| w == b"\r\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::net::TcpListener;

    #[test]
    fn addresses_parse_into_connect_point_host_and_path() {
        let t = HttpTarget::parse("http://127.0.0.1:9999/").unwrap();
        assert_eq!(t.connect, Endpoint::Ip("127.0.0.1:9999".parse().unwrap()));
        assert_eq!(t.authority, "127.0.0.1:9999");
        assert_eq!(t.base_path, "");
        let t = HttpTarget::parse("http://exec.local/xxl-job-executor/").unwrap();
        assert_eq!(t.connect, Endpoint::Name("exec.local".into(), 80));
        assert_eq!(t.base_path, "/xxl-job-executor");
        let t = HttpTarget::parse("http://[::1]:8080").unwrap();
        assert_eq!(t.connect, Endpoint::Ip("[::1]:8080".parse().unwrap()));
        assert_eq!(t.authority, "[::1]:8080");
        for other in [
            "https://h:1/",
            "http://u:p@h:1/",
            "http://h:1/?q=1",
            "ftp://h/",
            "not a url",
            "",
        ] {
            assert_eq!(HttpTarget::parse(other), None, "{other}");
        }
    }

    #[test]
    fn a_request_is_one_buffer_with_its_length() {
        let t = HttpTarget::parse("http://h:1/ctx/").unwrap();
        let r = build_request(&t, "run", &[("XXL-JOB-ACCESS-TOKEN", "t0k")], b"{}").unwrap();
        assert_eq!(
            String::from_utf8(r).unwrap(),
            "POST /ctx/run HTTP/1.1\r\nHost: h:1\r\nContent-Length: 2\r\n\
             XXL-JOB-ACCESS-TOKEN: t0k\r\n\r\n{}"
        );
    }

    #[test]
    fn a_header_cannot_smuggle_lines() {
        let t = HttpTarget::parse("http://h:1/").unwrap();
        for (name, value) in [
            ("X", "a\r\nEvil: 1"),
            ("X", "a\nb"),
            ("X:Y", "v"),
            ("X\r", "v"),
        ] {
            assert!(
                matches!(
                    build_request(&t, "run", &[(name, value)], b""),
                    Err(Http1Error::BadHeader(_))
                ),
                "{name:?}: {value:?}"
            );
        }
    }

    #[test]
    fn heads_say_how_the_body_ends() {
        let head = |s: &str| parse_head(s.as_bytes()).unwrap().unwrap();
        let h = head("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello");
        assert_eq!(
            (h.status, h.framing, h.keep_alive),
            (200, Framing::Length(5), true)
        );
        let h = head("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
        assert_eq!(h.framing, Framing::Chunked);
        let h = head("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
        assert!(!h.keep_alive);
        let h = head("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n");
        assert!(!h.keep_alive);
        let h = head("HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n");
        assert!(h.keep_alive);
        let h = head("HTTP/1.1 200 OK\r\n\r\n");
        assert_eq!((h.framing, h.keep_alive), (Framing::UntilClose, false));
        let h = head("HTTP/1.1 204 No Content\r\n\r\n");
        assert_eq!((h.framing, h.keep_alive), (Framing::Empty, true));
        assert!(parse_head(b"HTTP/1.1 200 OK\r\nContent-Le")
            .unwrap()
            .is_none());
        for bad in [
            "HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n",
            "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
            "SSH-2.0-OpenSSH\r\n\r\n",
        ] {
            assert!(parse_head(bad.as_bytes()).is_err(), "{bad:?}");
        }
    }

    /// A one-connection-at-a-time server answering each request with the next canned reply;
    /// a reply of `None` closes the connection without answering. Counts accepted connections.
    async fn canned_server(
        replies: Vec<Option<&'static [u8]>>,
    ) -> (HttpTarget, tokio::task::JoinHandle<(usize, Vec<String>)>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let task = tokio::spawn(async move {
            let mut replies = replies.into_iter();
            let mut accepted = 0;
            let mut requests = Vec::new();
            'conns: while let Ok((mut sock, _)) = listener.accept().await {
                accepted += 1;
                loop {
                    let mut buf = vec![0u8; 8192];
                    let n = match sock.read(&mut buf).await {
                        Ok(0) | Err(_) => continue 'conns,
                        Ok(n) => n,
                    };
                    requests.push(String::from_utf8_lossy(&buf[..n]).into_owned());
                    match replies.next() {
                        Some(Some(reply)) => {
                            // in pieces, as a slow server or a small window would deliver it
                            for piece in reply.chunks(7) {
                                sock.write_all(piece).await.unwrap();
                                sock.flush().await.unwrap();
                            }
                            if replies.len() == 0 {
                                break 'conns;
                            }
                            let text = String::from_utf8_lossy(reply);
                            let framed =
                                text.contains("Content-Length") || text.contains("chunked");
                            if !framed || text.contains("Connection: close") {
                                continue 'conns;
                            }
                        }
                        Some(None) => continue 'conns,
                        None => break 'conns,
                    }
                }
            }
            (accepted, requests)
        });
        let target = HttpTarget::parse(&format!("http://127.0.0.1:{port}/base/")).unwrap();
        (target, task)
    }

    #[tokio::test]
    async fn answers_of_every_framing_are_read_and_kept_alive_when_allowed() {
        let (target, server) = canned_server(vec![
            Some(b"HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\n{\"code\":200}"),
            Some(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4;ext=1\r\n{\"co\r\n7\r\nde\":500\r\n1\r\n}\r\n0\r\nX-Trailer: 1\r\n\r\n"),
            Some(b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 4\r\nConnection: close\r\n\r\noops"),
            Some(b"HTTP/1.1 200 OK\r\n\r\nuntil the close"),
        ])
        .await;
        let client = Http1Client::new(Duration::from_secs(5));
        let a = client.post(&target, "run", &[], b"{}").await.unwrap();
        assert_eq!((a.status, a.body.as_slice()), (200, &b"{\"code\":200}"[..]));
        let a = client.post(&target, "beat", &[], b"").await.unwrap();
        assert_eq!((a.status, a.body.as_slice()), (200, &b"{\"code\":500}"[..]));
        let a = client.post(&target, "kill", &[], b"{}").await.unwrap();
        assert_eq!((a.status, a.body.as_slice()), (500, &b"oops"[..]));
        assert_eq!(
            client.idle_connections(),
            0,
            "Connection: close is honoured"
        );
        let a = client.post(&target, "log", &[], b"{}").await.unwrap();
        assert_eq!(a.body, b"until the close");
        assert_eq!(client.idle_connections(), 0);
        drop(client);
        let (accepted, requests) = server.await.unwrap();
        assert_eq!(
            accepted, 2,
            "the first three calls share a connection until its close"
        );
        assert!(
            requests[0].starts_with("POST /base/run HTTP/1.1\r\n"),
            "{}",
            requests[0]
        );
        assert!(requests[1].starts_with("POST /base/beat HTTP/1.1\r\n"));
    }

    #[tokio::test]
    async fn a_request_the_server_drops_unanswered_fails_and_is_not_sent_again() {
        let (target, server) = canned_server(vec![
            Some(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"),
            None,
            Some(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"),
        ])
        .await;
        let client = Http1Client::new(Duration::from_secs(5));
        client.post(&target, "run", &[], b"1").await.unwrap();
        // the server now reads the second request and closes without answering
        let err = client.post(&target, "run", &[], b"2").await.unwrap_err();
        assert!(matches!(err, Http1Error::Closed), "{err}");
        let a = client.post(&target, "run", &[], b"3").await.unwrap();
        assert_eq!(a.body, b"ok");
        drop(client);
        let (accepted, requests) = server.await.unwrap();
        assert_eq!(accepted, 2);
        assert_eq!(requests.len(), 3, "nothing is sent twice: {requests:?}");
    }

    #[tokio::test]
    async fn a_server_that_hangs_up_on_an_idle_connection_costs_nothing() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = tokio::spawn(async move {
            let mut served = 0;
            while served < 2 {
                let (mut sock, _) = listener.accept().await.unwrap();
                let mut buf = [0u8; 1024];
                let _ = sock.read(&mut buf).await.unwrap();
                sock.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
                    .await
                    .unwrap();
                served += 1;
                // keep-alive over: the server closes the idle connection
                drop(sock);
            }
        });
        let target = HttpTarget::parse(&format!("http://127.0.0.1:{port}/")).unwrap();
        let client = Http1Client::new(Duration::from_secs(5));
        client.post(&target, "beat", &[], b"").await.unwrap();
        assert_eq!(client.idle_connections(), 1);
        tokio::time::sleep(Duration::from_millis(100)).await;
        let a = client.post(&target, "beat", &[], b"").await.unwrap();
        assert_eq!(a.status, 200, "the closed connection was passed over");
        server.await.unwrap();
    }

    #[tokio::test]
    async fn bad_answers_are_errors_and_the_connection_is_dropped() {
        let (target, server) = canned_server(vec![
            Some(b"garbage\r\n\r\n"),
            Some(b"HTTP/1.1 200 OK\r\nContent-Length: 99999999\r\n\r\n"),
            Some(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"),
            Some(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort"),
        ])
        .await;
        let client = Http1Client::new(Duration::from_secs(5));
        let err = client.post(&target, "run", &[], b"").await.unwrap_err();
        assert!(matches!(err, Http1Error::Malformed(_)), "{err}");
        let err = client.post(&target, "run", &[], b"").await.unwrap_err();
        assert!(matches!(err, Http1Error::TooLarge), "{err}");
        let err = client.post(&target, "run", &[], b"").await.unwrap_err();
        assert!(matches!(err, Http1Error::Malformed(_)), "{err}");
        // the server ends after the last reply, which is shorter than it says
        let err = client.post(&target, "run", &[], b"").await.unwrap_err();
        assert!(matches!(err, Http1Error::Closed), "{err}");
        assert_eq!(client.idle_connections(), 0);
        assert_eq!(
            server.await.unwrap().0,
            4,
            "no connection after an error is reused"
        );
    }

    #[tokio::test]
    async fn warming_opens_what_is_missing_and_the_calls_use_it() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let accepted = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counter = accepted.clone();
        tokio::spawn(async move {
            while let Ok((mut sock, _)) = listener.accept().await {
                counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                tokio::spawn(async move {
                    let mut buf = [0u8; 1024];
                    while let Ok(n) = sock.read(&mut buf).await {
                        if n == 0 {
                            break;
                        }
                        let ok = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
                        if sock.write_all(ok).await.is_err() {
                            break;
                        }
                    }
                });
            }
        });
        let target = HttpTarget::parse(&format!("http://127.0.0.1:{port}/")).unwrap();
        let client = Http1Client::new(Duration::from_secs(5));
        assert_eq!(client.warm(&target, 100).await, 100);
        assert_eq!(client.warm(&target, 60).await, 0, "enough are idle already");
        assert_eq!(client.warm(&target, 120).await, 20);
        let calls = (0..120).map(|_| client.post(&target, "run", &[], b"{}"));
        for answer in futures_util::future::join_all(calls).await {
            assert_eq!(answer.unwrap().status, 200);
        }
        let seen = accepted.load(std::sync::atomic::Ordering::SeqCst);
        assert_eq!(
            seen, 120,
            "120 concurrent calls ran on the warmed connections"
        );
        let closed = HttpTarget::parse("http://127.0.0.1:1/").unwrap();
        assert_eq!(
            client.warm(&closed, 5).await,
            0,
            "a refused connect ends it"
        );
    }

    #[tokio::test]
    async fn a_silent_server_times_out_and_a_closed_port_is_a_connect_error() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let target = HttpTarget::parse(&format!("http://127.0.0.1:{port}/")).unwrap();
        let client = Http1Client::new(Duration::from_millis(200));
        let err = client.post(&target, "run", &[], b"{}").await.unwrap_err();
        assert!(matches!(err, Http1Error::Timeout(_)), "{err}");
        drop(listener);
        let err = client.post(&target, "run", &[], b"{}").await.unwrap_err();
        assert!(matches!(err, Http1Error::Connect(_)), "{err}");
    }
}

#[cfg(test)]
mod proptests {
    use proptest::prelude::*;

    use super::*;

    /// Heads an executor (or anything listening on its port) may send, whole or cut anywhere.
    fn head_bytes() -> impl Strategy<Value = Vec<u8>> {
        let line = prop_oneof![
            Just("Content-Length: 5".to_string()),
            Just("Content-Length: 18446744073709551616".to_string()),
            Just("Content-Length: -1".to_string()),
            Just("Transfer-Encoding: gzip, chunked".to_string()),
            Just("Transfer-Encoding: chunked, gzip".to_string()),
            Just("Connection: keep-alive, close".to_string()),
            "[A-Za-z-]{1,12}: [ -~]{0,20}",
        ];
        let status = prop_oneof![
            Just("HTTP/1.1 200 OK".to_string()),
            Just("HTTP/1.0 204 No Content".to_string()),
            Just("HTTP/1.1 100 Continue".to_string()),
            "HTTP/1\\.[0-9] [0-9]{1,4} [ -~]{0,10}",
        ];
        prop_oneof![
            (
                status,
                prop::collection::vec(line, 0..6),
                any::<usize>(),
                any::<bool>()
            )
                .prop_map(|(status, lines, cut, whole)| {
                    let mut head = format!("{status}\r\n{}\r\n", lines.join("\r\n"));
                    if !lines.is_empty() {
                        head.push_str("\r\n");
                    }
                    let mut bytes = head.into_bytes();
                    if !whole && !bytes.is_empty() {
                        bytes.truncate(cut % bytes.len());
                    }
                    bytes
                }),
            prop::collection::vec(any::<u8>(), 0..80),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(10_000))]

        /// An answer's head parses, needs more bytes, or is refused with a reason; a parsed
        /// head lies within what was read and frames its body one way.
        #[test]
        fn answer_heads_parse_or_are_refused(bytes in head_bytes()) {
            match parse_head(&bytes) {
                Ok(Some(head)) => {
                    prop_assert!(head.len <= bytes.len());
                    prop_assert!(head.framing != Framing::UntilClose || !head.keep_alive);
                }
                Ok(None) => prop_assert!(bytes.len() <= HEAD_MAX),
                Err(Http1Error::Malformed(why)) => prop_assert!(!why.is_empty()),
                Err(other) => prop_assert!(false, "{other:?}"),
            }
        }

        /// Executor addresses as users and registrations give them: a plain-http target with
        /// a host, or `None` (left to awc).
        #[test]
        fn executor_addresses_parse_or_are_left_to_awc(address in prop_oneof![
            "https?://[a-z0-9.:\\[\\]@%-]{0,24}(/[a-z?#]{0,6})?",
            ".{0,30}",
        ]) {
            if let Some(target) = HttpTarget::parse(&address) {
                prop_assert!(url::Url::parse(&address).is_ok_and(|u| u.scheme() == "http"));
                prop_assert!(!target.authority.is_empty());
                prop_assert!(!target.base_path.ends_with('/'));
            }
        }
    }
}
