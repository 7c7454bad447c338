//! The client against answers as executors and broken peers send them.

use super::codec::*;
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
                        let framed = text.contains("Content-Length") || text.contains("chunked");
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
async fn a_connection_idle_near_the_servers_keep_alive_is_not_reused() {
    let address = crate::keep_alive::test_server::closing_reused_connections("{}");
    let target = HttpTarget::parse(&format!("http://{address}/")).unwrap();
    let client = Http1Client::new(Duration::from_secs(5));
    client.post(&target, "beat", &[], b"").await.unwrap();
    // within 0.5 s of a 5 s keep-alive, where the server's close may meet the request
    tokio::time::sleep(Duration::from_millis(4_500)).await;
    let a = client.post(&target, "beat", &[], b"").await.unwrap();
    assert_eq!((a.status, a.body.as_slice()), (200, b"{}".as_slice()));
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
