//! A keep-alive HTTP/1.1 client for the admin's calls to executors at plain `http://` addresses.
//!
//! Why not a general client: at the top of a second a burst of `run` calls goes out at once, and
//! each call's CPU on the calling thread delays the calls still waiting. Here a request is one
//! buffer written once, on the caller's own task, and each pooled connection keeps its read
//! buffer; awc and hyper (a task and two channel hops per call) both cost more per call and made
//! the fires later.
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

use crate::keep_alive::REUSE_IDLE_FOR;

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

mod codec;
mod pool;

use codec::{build_request, read_response, Conn};

pub use pool::Http1Client;

#[cfg(test)]
mod proptests;
#[cfg(test)]
mod tests;
