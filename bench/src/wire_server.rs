//! The simulated executors' HTTP/1.1 server: keep-alive connections, `Content-Length` bodies,
//! one write per answer, on a few threads of their own.
//!
//! Why not actix-web: the simulated executors share the 2 cores with the admin they measure, so
//! their cost per `/run` is lateness added to every fire after it. actix-web spent ~14 µs of CPU
//! per `/run` (perf, precision at 1,000 jobs), half of it outside the kernel; a remote executor
//! fleet costs the admin's machine nothing. This server speaks the same protocol for less.

use std::borrow::Cow;
use std::sync::Arc;
use std::thread::JoinHandle;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

/// A request head larger than this closes the connection.
const HEAD_MAX: usize = 64 * 1024;
/// A request body larger than this is refused.
const BODY_MAX: usize = 16 * 1024 * 1024;

/// An answer: HTTP status and JSON body.
pub type Answer = (u16, Cow<'static, [u8]>);

/// Answers a request from its path and body.
pub type Handle = Arc<dyn Fn(&str, &[u8]) -> Answer + Send + Sync>;

/// A running server; [`WireServer::stop`] ends it.
pub struct WireServer {
    /// The port it listens on (127.0.0.1).
    pub port: u16,
    stop: watch::Sender<bool>,
    threads: Vec<JoinHandle<()>>,
}

impl WireServer {
    /// Listens on 127.0.0.1:`port` (0: an ephemeral port) with `threads` threads, each accepting.
    pub fn start_on(port: u16, threads: usize, handle: Handle) -> Result<WireServer, String> {
        let listener = std::net::TcpListener::bind(("127.0.0.1", port))
            .and_then(|l| l.set_nonblocking(true).map(|_| l))
            .map_err(|e| format!("cannot listen: {e}"))?;
        // std listens with a backlog of 128: a second's 1,000 new connections overflowed it,
        // and each dropped SYN came back a second late. Listening again raises it (Linux).
        #[cfg(unix)]
        {
            use std::os::fd::AsRawFd;
            // SAFETY: the descriptor is the open listening socket owned by `listener`.
            unsafe { libc::listen(listener.as_raw_fd(), 4096) };
        }
        let port = listener
            .local_addr()
            .map_err(|e| format!("cannot listen: {e}"))?
            .port();
        let (stop, stopped) = watch::channel(false);
        let mut joins = Vec::new();
        for index in 0..threads.max(1) {
            let listener = listener
                .try_clone()
                .map_err(|e| format!("cannot share the listener: {e}"))?;
            let (handle, stopped) = (handle.clone(), stopped.clone());
            let join = std::thread::Builder::new()
                .name(format!("sim-http-{index}"))
                .spawn(move || serve_thread(listener, handle, stopped))
                .map_err(|e| format!("cannot start a server thread: {e}"))?;
            joins.push(join);
        }
        Ok(WireServer {
            port,
            stop,
            threads: joins,
        })
    }

    /// Stops accepting, drops every connection and waits for the threads.
    pub fn stop(self) {
        let _ = self.stop.send(true);
        for t in self.threads {
            let _ = t.join();
        }
    }
}

fn serve_thread(
    listener: std::net::TcpListener,
    handle: Handle,
    mut stopped: watch::Receiver<bool>,
) {
    let Ok(rt) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        return;
    };
    let local = tokio::task::LocalSet::new();
    local.block_on(&rt, async move {
        let Ok(listener) = TcpListener::from_std(listener) else {
            return;
        };
        loop {
            tokio::select! {
                _ = stopped.changed() => return,
                accepted = listener.accept() => {
                    if let Ok((sock, _)) = accepted {
                        let _ = sock.set_nodelay(true);
                        tokio::task::spawn_local(serve_connection(sock, handle.clone()));
                    }
                }
            }
        }
    });
    // dropping the task set here closes the connections still open
}

/// One parsed request head: where it ends, where its path lies, its body length, and whether
/// the connection ends after the answer.
struct Head {
    len: usize,
    path: (usize, usize),
    body_len: usize,
    close: bool,
}

fn parse_head(buf: &[u8]) -> Result<Option<Head>, &'static str> {
    let mut headers = [httparse::EMPTY_HEADER; 32];
    let mut req = httparse::Request::new(&mut headers);
    let len = match req.parse(buf) {
        Ok(httparse::Status::Complete(len)) => len,
        Ok(httparse::Status::Partial) if buf.len() > HEAD_MAX => return Err("head too large"),
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(_) => return Err("malformed request"),
    };
    let path = req.path.unwrap_or("/");
    let start = path.as_ptr() as usize - buf.as_ptr() as usize;
    let mut body_len = 0;
    let mut close = req.version != Some(1);
    for h in req.headers.iter() {
        let value = std::str::from_utf8(h.value).unwrap_or("").trim();
        if h.name.eq_ignore_ascii_case("content-length") {
            body_len = value.parse().map_err(|_| "bad Content-Length")?;
        } else if h.name.eq_ignore_ascii_case("transfer-encoding") {
            return Err("chunked requests are not taken");
        } else if h.name.eq_ignore_ascii_case("connection") {
            close = value.eq_ignore_ascii_case("close");
        }
    }
    if body_len > BODY_MAX {
        return Err("body too large");
    }
    Ok(Some(Head {
        len,
        path: (start, path.len()),
        body_len,
        close,
    }))
}

async fn serve_connection(mut sock: TcpStream, handle: Handle) {
    let mut buf: Vec<u8> = Vec::with_capacity(4096);
    let mut out: Vec<u8> = Vec::with_capacity(256);
    loop {
        let head = loop {
            match parse_head(&buf) {
                Ok(Some(head)) => break head,
                Ok(None) => {
                    buf.reserve(4096);
                    match sock.read_buf(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(_) => {}
                    }
                }
                Err(why) => {
                    let body = format!("{{\"code\":400,\"msg\":\"{why}\"}}");
                    write_answer(&mut out, 400, body.as_bytes(), true);
                    let _ = sock.write_all(&out).await;
                    return;
                }
            }
        };
        let end = head.len + head.body_len;
        while buf.len() < end {
            buf.reserve(end - buf.len());
            match sock.read_buf(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
        let path = std::str::from_utf8(&buf[head.path.0..head.path.0 + head.path.1]).unwrap_or("");
        let (status, body) = handle(path, &buf[head.len..end]);
        write_answer(&mut out, status, &body, head.close);
        if sock.write_all(&out).await.is_err() || head.close {
            return;
        }
        buf.drain(..end);
    }
}

fn write_answer(out: &mut Vec<u8>, status: u16, body: &[u8], close: bool) {
    let reason = match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        _ => "Error",
    };
    out.clear();
    out.extend_from_slice(format!("HTTP/1.1 {status} {reason}\r\n").as_bytes());
    out.extend_from_slice(b"Content-Type: application/json\r\nContent-Length: ");
    out.extend_from_slice(body.len().to_string().as_bytes());
    if close {
        out.extend_from_slice(b"\r\nConnection: close");
    }
    out.extend_from_slice(b"\r\n\r\n");
    out.extend_from_slice(body);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn echo() -> Handle {
        Arc::new(|path: &str, body: &[u8]| {
            if path == "/missing" {
                return (404, Cow::Borrowed(&b"{}"[..]));
            }
            let mut answer = path.as_bytes().to_vec();
            answer.push(b' ');
            answer.extend_from_slice(body);
            (200, Cow::Owned(answer))
        })
    }

    #[actix_rt::test]
    async fn keep_alive_requests_are_answered_in_order_on_one_connection() {
        let server = WireServer::start_on(0, 2, echo()).unwrap();
        let mut sock = TcpStream::connect(("127.0.0.1", server.port))
            .await
            .unwrap();
        // two requests in one write, the second split across the head
        sock.write_all(
            b"POST /run HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}POST /beat HTTP/1.1\r\nContent-Le",
        )
        .await
        .unwrap();
        sock.write_all(b"ngth: 0\r\n\r\n").await.unwrap();
        let want = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 7\r\n\r\n/run {}\
                    HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 6\r\n\r\n/beat ";
        let mut got = vec![0u8; want.len()];
        sock.read_exact(&mut got).await.unwrap();
        assert_eq!(String::from_utf8(got).unwrap(), want);
        server.stop();
    }

    #[actix_rt::test]
    async fn bad_requests_get_400_and_the_connection_closes() {
        let server = WireServer::start_on(0, 1, echo()).unwrap();
        for bad in [
            &b"POST /run HTTP/1.1\r\nContent-Length: nope\r\n\r\n"[..],
            b"POST /run HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
            b"\x16\x03\x01 not http\r\n\r\n",
        ] {
            let mut sock = TcpStream::connect(("127.0.0.1", server.port))
                .await
                .unwrap();
            sock.write_all(bad).await.unwrap();
            let mut got = Vec::new();
            sock.read_to_end(&mut got).await.unwrap();
            let got = String::from_utf8_lossy(&got);
            assert!(got.starts_with("HTTP/1.1 400 Bad Request\r\n"), "{got}");
            assert!(got.contains("Connection: close"), "{got}");
        }
        server.stop();
    }

    #[actix_rt::test]
    async fn the_admin_client_talks_to_it() {
        let server = WireServer::start_on(0, 1, echo()).unwrap();
        let client = jobwheel::http1::Http1Client::new(std::time::Duration::from_secs(5));
        let target =
            jobwheel::http1::HttpTarget::parse(&format!("http://127.0.0.1:{}/", server.port))
                .unwrap();
        for i in 0..3 {
            let body = format!("{{\"n\":{i}}}");
            let a = client
                .post(&target, "run", &[], body.as_bytes())
                .await
                .unwrap();
            assert_eq!(a.status, 200);
            assert_eq!(a.body, format!("/run {body}").into_bytes());
        }
        assert_eq!(
            client.idle_connections(),
            1,
            "one connection carried the three"
        );
        let a = client.post(&target, "missing", &[], b"").await.unwrap();
        assert_eq!(a.status, 404);
        server.stop();
    }
}
