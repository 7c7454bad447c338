//! How long idle keep-alive connections live: reused by the admin's and the executor's HTTP
//! clients, kept open by their servers.

use std::time::Duration;

/// An idle connection is not reused after this long. Servers close idle keep-alive connections
/// on their own clock (actix-web and Node after 5 s); a client reusing one later may write its
/// request just as that close arrives, unseen while its thread was busy, and the call fails
/// ("connector has been disconnected") though the server is up. Below 5 s those closes only
/// ever meet connections nobody will use again.
pub(crate) const REUSE_IDLE_FOR: Duration = Duration::from_secs(4);

/// The admin's and the executor's servers close an idle connection after this long: later than
/// the clients calling them reuse one (Java's `HttpURLConnection` 5 s, what XXL-JOB's executors
/// and admins call with; awc 15 s), so a request of theirs never meets the close on its way.
/// actix-web's own 5 s is the JDK's: a Java executor's callback written at the fifth second
/// raced the close.
pub(crate) const SERVE_IDLE_FOR: Duration = Duration::from_secs(20);

#[cfg(test)]
pub(crate) mod test_server {
    //! A server whose keep-alive runs out just as a reused connection's request arrives.

    use std::io::{Read, Write};
    use std::net::{SocketAddr, TcpListener, TcpStream};

    /// Answers `body` (JSON) to the first request on each connection and closes the connection
    /// when a second request comes on it.
    pub(crate) fn closing_reused_connections(body: &'static str) -> SocketAddr {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let address = listener.local_addr().expect("address");
        std::thread::spawn(move || {
            for conn in listener.incoming().flatten() {
                std::thread::spawn(move || answer_once(conn, body));
            }
        });
        address
    }

    fn answer_once(mut conn: TcpStream, body: &str) {
        let mut request = Vec::new();
        let mut buf = [0u8; 4096];
        let mut whole = None;
        while whole.is_none_or(|w| request.len() < w) {
            match conn.read(&mut buf) {
                Ok(0) | Err(_) => return,
                Ok(n) => request.extend_from_slice(&buf[..n]),
            }
            whole = whole.or_else(|| request_length(&request));
        }
        let answer = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        if conn.write_all(answer.as_bytes()).is_ok() {
            // whatever comes next on this connection meets the close
            let _ = conn.read(&mut buf);
        }
    }

    /// The length of the request `read` begins, once its head is whole: the head and as much
    /// body as its `Content-Length` says.
    fn request_length(read: &[u8]) -> Option<usize> {
        let end = read.windows(4).position(|w| w == b"\r\n\r\n")?;
        let head = String::from_utf8_lossy(&read[..end]).to_ascii_lowercase();
        let body = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .and_then(|v| v.trim().parse::<usize>().ok())
            .unwrap_or(0);
        Some(end + 4 + body)
    }
}
