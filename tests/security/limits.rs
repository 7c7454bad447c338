//! Bad bodies sent as an attacker's raw HTTP client would: too large, nested thousands deep,
//! not UTF-8, of another type, or empty. Each is answered with a status and a message, never a
//! dropped connection or a panic, and nothing stored changes.

use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::executor_support::{bean, Exec, FakeAdmin, Opts, Target, TEST_TOKEN};
use crate::kit::TestApp;
use jobwheel::store::Backend;

/// The REST API's documented body limit (2 MiB).
const REST_LIMIT: usize = 2 * 1024 * 1024;
/// The executor API's and the executors' documented body limit (5 MiB).
const WIRE_LIMIT: usize = 5 * 1024 * 1024;

/// An answer read off the socket.
#[derive(Debug)]
struct Raw {
    status: u16,
    body: String,
}

impl Raw {
    /// The body as JSON (`Null` when it is not JSON).
    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or(Value::Null)
    }
}

/// How a raw request carries its body.
#[derive(Clone, Copy)]
enum Framing {
    /// `Content-Length`, so a server can refuse an oversized body before reading it.
    Length,
    /// `Transfer-Encoding: chunked`: the size is known only once too much has arrived.
    Chunked,
}

/// Sends one request with a body framed as asked.
async fn send(
    port: u16,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
    framing: Framing,
) -> Raw {
    let mut head =
        format!("{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n");
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    let mut request = head.into_bytes();
    match framing {
        Framing::Length => {
            request.extend_from_slice(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes());
            request.extend_from_slice(body);
        }
        Framing::Chunked => {
            request.extend_from_slice(b"Transfer-Encoding: chunked\r\n\r\n");
            for chunk in body.chunks(64 * 1024) {
                request.extend_from_slice(format!("{:x}\r\n", chunk.len()).as_bytes());
                request.extend_from_slice(chunk);
                request.extend_from_slice(b"\r\n");
            }
            request.extend_from_slice(b"0\r\n\r\n");
        }
    }
    exchange(port, request, &format!("{method} {path}")).await
}

/// A request with one raw header line (bytes that need not be text) and no body.
async fn send_head(port: u16, request_line: &str, header: &[u8]) -> Raw {
    let mut request =
        format!("{request_line}\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n").into_bytes();
    request.extend_from_slice(header);
    request.extend_from_slice(b"\r\n\r\n");
    exchange(port, request, request_line).await
}

/// Writes `request` on a new connection and reads the answer until the server closes it.
async fn exchange(port: u16, request: Vec<u8>, what: &str) -> Raw {
    let stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .expect("the server accepts connections");
    let (mut read, mut write) = stream.into_split();
    // a server that refuses early stops reading: the rest of the body may not be taken
    let writer = actix_web::rt::spawn(async move {
        let _ = write.write_all(&request).await;
        let _ = write.flush().await;
        write
    });
    let mut answer = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        match tokio::time::timeout_at(deadline, read.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) | Err(_) => break,
            Ok(Ok(n)) => answer.extend_from_slice(&buf[..n]),
        }
    }
    drop(writer);
    let text = String::from_utf8_lossy(&answer).to_string();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("{what}: no HTTP answer: {text:?}"));
    let chunked = head.lines().any(|l| {
        l.to_ascii_lowercase()
            .starts_with("transfer-encoding: chunked")
    });
    Raw {
        status,
        body: if chunked {
            dechunk(body)
        } else {
            body.to_string()
        },
    }
}

fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let Ok(n) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if n == 0 || rest.len() < n {
            break;
        }
        out.push_str(&rest[..n]);
        body = rest[n..].trim_start_matches("\r\n");
    }
    out
}

fn port_of(base: &str) -> u16 {
    base.trim_end_matches('/')
        .rsplit(':')
        .next()
        .and_then(|p| p.split('/').next())
        .and_then(|p| p.parse().ok())
        .expect("a base URL with a port")
}

/// `{"<key>": [[[…]]]}` nested `depth` deep.
fn nested(key: &str, depth: usize) -> Vec<u8> {
    format!("{{\"{key}\":{}{}}}", "[".repeat(depth), "]".repeat(depth)).into_bytes()
}

/// A valid JSON object with one string field, `size` bytes long in all.
fn sized(key: &str, size: usize) -> Vec<u8> {
    let pad = size - format!("{{\"{key}\":\"\"}}").len();
    format!("{{\"{key}\":\"{}\"}}", "x".repeat(pad)).into_bytes()
}

/// `{"<key>":"<bytes that are not UTF-8>"}`.
fn not_utf8(key: &str) -> Vec<u8> {
    let mut body = format!("{{\"{key}\":\"ok").into_bytes();
    body.extend_from_slice(&[0xff, 0xfe, 0xc3, 0x28]);
    body.extend_from_slice(b"\"}");
    body
}

/// Everything an attacker could have changed, as the REST API lists it.
async fn stored(app: &TestApp) -> Value {
    json!({
        "jobs": app.api.list_jobs("limit=1000").await.body,
        "groups": app.api.list_groups().await.body,
        "logs": app.api.list_logs("limit=1000").await.body,
        "registry": app.api.registry().await.body,
    })
}

backends!(run: bad_bodies_answer_4xx_with_a_message_and_change_nothing);

async fn bad_bodies_answer_4xx_with_a_message_and_change_nothing(backend: Backend) {
    let Some(started) = TestApp::start(backend).await else {
        return;
    };
    let app = &started;
    let port = port_of(&app.base);
    let group = app.group("limits-app").await;
    let job = app.job(group, "kept as it was").await;
    let before = stored(app).await;
    let cookie = format!(
        "jobwheel_session={}",
        app.api
            .session_cookie()
            .expect("the test client is logged in")
    );
    let json_ct = ("Content-Type", "application/json");
    let rest = [("Cookie", cookie.as_str()), json_ct];
    let update = format!("/api/v1/jobs/{job}");
    let trigger = format!("/api/v1/jobs/{job}/trigger");

    // too large: 413 with the limit, whether the size is announced or found while reading,
    // on the JSON endpoints and on the one that reads its optional body itself
    for (method, path) in [("PUT", update.as_str()), ("POST", trigger.as_str())] {
        for framing in [Framing::Length, Framing::Chunked] {
            let res = send(
                port,
                method,
                path,
                &rest,
                &sized("jobDesc", REST_LIMIT + 1),
                framing,
            )
            .await;
            assert_eq!(res.status, 413, "{method} {path}: {res:?}");
            let error = res.json()["error"].as_str().unwrap_or_default().to_string();
            assert!(
                error.contains(&REST_LIMIT.to_string()),
                "{method} {path}: {error}"
            );
        }
    }
    let res = send(
        port,
        "POST",
        "/api/v1/auth/login",
        &[json_ct],
        &sized("username", REST_LIMIT + 1),
        Framing::Length,
    )
    .await;
    assert_eq!(res.status, 413, "login: {res:?}");

    // a body at the limit is read (and refused for its content, not its size)
    let res = send(
        port,
        "PUT",
        &update,
        &rest,
        &sized("jobDesc", REST_LIMIT),
        Framing::Length,
    )
    .await;
    assert_eq!(
        (res.status, res.json()["field"].clone()),
        (400, json!("jobDesc")),
        "{res:?}"
    );

    // nested thousands deep, not UTF-8, not JSON, of another type, empty: 400 with a message
    let bad: [(&str, Vec<u8>, &str); 5] = [
        ("nested", nested("jobDesc", 100_000), "recursion limit"),
        ("not UTF-8", not_utf8("jobDesc"), "invalid JSON body"),
        (
            "not JSON",
            b"{\"jobDesc\": nope".to_vec(),
            "invalid JSON body",
        ),
        (
            "cut short",
            b"{\"jobDesc\": \"abc".to_vec(),
            "invalid JSON body",
        ),
        ("empty", Vec::new(), "invalid JSON body"),
    ];
    for (what, body, says) in &bad {
        for (method, path) in [
            ("PUT", update.as_str()),
            ("POST", "/api/v1/schedule/preview"),
        ] {
            let res = send(port, method, path, &rest, body, Framing::Length).await;
            assert_eq!(res.status, 400, "{what} to {path}: {res:?}");
            let error = res.json()["error"].as_str().unwrap_or_default().to_string();
            assert!(error.contains(says), "{what} to {path}: {error}");
        }
    }
    for (what, body, _) in bad.iter().take(2) {
        let res = send(port, "POST", &trigger, &rest, body, Framing::Length).await;
        assert_eq!(res.status, 400, "{what} to the trigger: {res:?}");
        assert!(
            res.json()["error"].as_str().is_some_and(|e| !e.is_empty()),
            "{res:?}"
        );
    }
    let res = send(
        port,
        "PUT",
        &update,
        &[("Cookie", cookie.as_str()), ("Content-Type", "text/plain")],
        br#"{"jobDesc":"typed as text"}"#,
        Framing::Length,
    )
    .await;
    assert_eq!(res.status, 400, "{res:?}");
    assert!(
        res.json()["error"]
            .as_str()
            .unwrap_or_default()
            .contains("Content type"),
        "{res:?}"
    );

    // the executor API: an HTTP error status for a body over its limit (the web framework's
    // check, before any envelope), an envelope naming the problem for anything else
    let token = app.token.clone();
    let exec_headers = [("XXL-JOB-ACCESS-TOKEN", token.as_str()), json_ct];
    for path in ["/api/callback", "/xxl-job-admin/api/registry"] {
        for framing in [Framing::Length, Framing::Chunked] {
            let res = send(
                port,
                "POST",
                path,
                &exec_headers,
                &sized("registryKey", WIRE_LIMIT + 1),
                framing,
            )
            .await;
            assert_eq!(res.status, 413, "{path}: {res:?}");
            assert!(
                res.body.contains(&WIRE_LIMIT.to_string()),
                "{path}: {res:?}"
            );
        }
        for (what, body) in [
            ("nested", nested("callbackList", 100_000)),
            ("not UTF-8", not_utf8("registryKey")),
            ("empty", Vec::new()),
        ] {
            let res = send(port, "POST", path, &exec_headers, &body, Framing::Length).await;
            assert_eq!(res.status, 200, "{what} to {path}: {res:?}");
            let envelope = res.json();
            assert_eq!(envelope["code"], 500, "{what} to {path}: {res:?}");
            assert!(
                envelope["msg"].as_str().is_some_and(|m| !m.is_empty()),
                "{what} to {path}: {res:?}"
            );
        }
    }

    // XXL-JOB's job API (an API token's calls)
    let created = app
        .api
        .call_with(
            actix_web::http::Method::POST,
            "/api/v1/tokens",
            Some(json!({"name": "limits"})),
            &[],
        )
        .await;
    assert_eq!(created.status, 201, "{}", created.body);
    let api_token = created.body["token"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let xxl = [("XXL-JOB-ACCESS-TOKEN", api_token.as_str()), json_ct];
    let res = send(
        port,
        "POST",
        "/api/updateJob",
        &xxl,
        &sized("jobDesc", WIRE_LIMIT + 1),
        Framing::Length,
    )
    .await;
    assert_eq!(res.status, 413, "{res:?}");
    for body in [nested("jobDesc", 100_000), not_utf8("jobDesc"), Vec::new()] {
        let res = send(port, "POST", "/api/updateJob", &xxl, &body, Framing::Length).await;
        assert_eq!(
            (res.status, res.json()["code"].clone()),
            (200, json!(500)),
            "{res:?}"
        );
        assert!(
            res.json()["msg"]
                .as_str()
                .is_some_and(|m| m.starts_with("invalid request")),
            "{res:?}"
        );
    }
    // text the database cannot hold is refused here as on the REST API (this path skipped the
    // check, so PostgreSQL answered with an internal error and SQLite stored the NUL)
    let res = send(
        port,
        "POST",
        "/api/updateJob",
        &xxl,
        json!({"id": job, "jobDesc": "a\u{0}b"})
            .to_string()
            .as_bytes(),
        Framing::Length,
    )
    .await;
    assert_eq!(res.json()["code"], 500, "{res:?}");
    assert!(
        res.json()["msg"]
            .as_str()
            .unwrap_or_default()
            .contains("jobDesc"),
        "{res:?}"
    );
    let res = send(
        port,
        "POST",
        "/api/addJob",
        &xxl,
        json!({
            "jobGroup": group, "jobDesc": "x", "author": "a\u{0}b", "scheduleType": "CRON",
            "scheduleConf": "0 0 3 * * ?", "executorHandler": "demoJobHandler",
        })
        .to_string()
        .as_bytes(),
        Framing::Length,
    )
    .await;
    assert_eq!(res.json()["code"], 500, "{res:?}");
    assert!(
        res.json()["msg"]
            .as_str()
            .unwrap_or_default()
            .contains("author"),
        "{res:?}"
    );

    // and the admin still works, with everything as it was
    // credentials that cannot be read are refused like none
    let garbage: [&[u8]; 4] = [
        b"Authorization: Bearer",
        b"Authorization: Bearer \xff\xfe",
        b"Authorization: \xc3\x28 jw_x",
        b"Cookie: jobwheel_session=\xff; jobwheel_session=; =;;",
    ];
    for header in garbage {
        let res = send_head(port, &format!("GET /api/v1/jobs/{job} HTTP/1.1"), header).await;
        assert_eq!(
            res.status,
            401,
            "{:?}: {res:?}",
            String::from_utf8_lossy(header)
        );
        assert!(
            res.json()["error"].as_str().is_some_and(|e| !e.is_empty()),
            "{res:?}"
        );
    }

    // and the admin still works, with everything as it was
    assert_eq!(stored(app).await, before, "a refused body changed nothing");
    assert_eq!(app.api.get_job(job).await.body["jobDesc"], "kept as it was");
    started.finish().await;
}

/// The executor's own endpoints answer bad bodies in the protocol's envelope (HTTP 200, code
/// 500, the reason), run nothing, and go on serving.
#[actix_web::test]
async fn an_executor_answers_bad_bodies_with_the_reason_and_runs_nothing() {
    let admin = FakeAdmin::start();
    let exec = Exec::start(Target::Library, &admin, Opts::default()).await;
    let port = port_of(&exec.base);
    let headers = [
        ("XXL-JOB-ACCESS-TOKEN", TEST_TOKEN),
        ("Content-Type", "application/json"),
    ];
    // each body puts its bad value in a field the endpoint reads, then in one it does not
    // read (serde skips those without checking them, so they once answered code 200)
    for (path, key) in [
        ("/run", "executorParams"),
        ("/idleBeat", "jobId"),
        ("/kill", "jobId"),
        ("/log", "logId"),
        ("/idleBeat", "unread"),
        ("/kill", "unread"),
        ("/log", "unread"),
    ] {
        let bad: [(&str, Vec<u8>, &str); 4] = [
            ("nested", nested(key, 100_000), "recursion limit"),
            ("not UTF-8", not_utf8(key), "request error:malformed body"),
            (
                "not JSON",
                format!("{{\"{key}\": 1,").into_bytes(),
                "request error:malformed body",
            ),
            ("empty", Vec::new(), "request error:malformed body"),
        ];
        for (what, body, says) in &bad {
            let res = send(port, "POST", path, &headers, body, Framing::Length).await;
            assert_eq!(res.status, 200, "{what} to {path}: {res:?}");
            let envelope = res.json();
            assert_eq!(envelope["code"], 500, "{what} to {path}: {res:?}");
            let msg = envelope["msg"].as_str().unwrap_or_default();
            assert!(msg.contains(says), "{what} to {path}: {msg}");
        }
        let res = send(
            port,
            "POST",
            path,
            &headers,
            &sized(key, WIRE_LIMIT + 1),
            Framing::Chunked,
        )
        .await;
        assert_eq!(
            (res.status, res.json()),
            (
                200,
                json!({"code": 500, "msg": format!("request error:request body larger than {WIRE_LIMIT} bytes")})
            ),
            "{path}"
        );
    }
    // a good trigger still runs, and is the only one that ran
    let good = bean(71, "demoJobHandler", "after the bad ones");
    exec.run_ok(&good).await;
    let result = admin
        .wait_callback(good.log_id, Duration::from_secs(20))
        .await;
    assert_eq!(result.handle_code, 200);
    assert_eq!(
        admin.accepted_callbacks().len(),
        1,
        "only the good trigger ran"
    );
}
