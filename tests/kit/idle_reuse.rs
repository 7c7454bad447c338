//! A client that reuses a keep-alive connection after it sat idle, as pooling clients do.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Answers longer than this are not expected from the paths these tests ask.
const ANSWER_MAX: usize = 64 * 1024;

/// Sends `GET path` twice on one connection to `port` on 127.0.0.1, the second after the
/// connection sat idle for `idle`; the status line of each answer (`None` for one that did not
/// come: the server closed the connection meanwhile).
pub async fn statuses_around_idle(port: u16, path: &str, idle: Duration) -> [Option<String>; 2] {
    let mut conn = TcpStream::connect(("127.0.0.1", port))
        .await
        .expect("the server accepts connections");
    let first = ask(&mut conn, path).await;
    tokio::time::sleep(idle).await;
    let second = ask(&mut conn, path).await;
    [first, second]
}

/// One request on `conn` and the status line of its answer, read whole (by `Content-Length`).
async fn ask(conn: &mut TcpStream, path: &str) -> Option<String> {
    let request = format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    conn.write_all(request.as_bytes()).await.ok()?;
    let mut answer = Vec::new();
    let mut buf = [0u8; 4096];
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(end) = answer.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&answer[..end]).to_ascii_lowercase();
            let body = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse::<usize>().ok())
                .expect("answers of known length");
            if answer.len() >= end + 4 + body {
                return head.lines().next().map(str::to_string);
            }
        }
        assert!(answer.len() < ANSWER_MAX, "an answer larger than expected");
        match tokio::time::timeout_at(deadline, conn.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) => return None,
            Ok(Ok(n)) => answer.extend_from_slice(&buf[..n]),
            Err(_) => panic!("no answer to GET {path} within 10 s"),
        }
    }
}
