//! A REST client with one method per endpoint, keeping the session cookie it is given (awc has
//! no cookie jar); executor-API calls carry the executor token it holds.

use std::cell::RefCell;
use std::time::Duration;

use actix_web::http::Method;
use serde_json::{json, Value};

/// One answer: status and JSON body (`null` when empty).
#[derive(Debug)]
pub struct Resp {
    /// HTTP status.
    pub status: u16,
    /// Parsed JSON body.
    pub body: Value,
    /// Raw `Set-Cookie` headers.
    pub set_cookie: Vec<String>,
}

impl Resp {
    /// The `id` field of the body.
    pub fn id(&self) -> i64 {
        self.body["id"]
            .as_i64()
            .unwrap_or_else(|| panic!("no id in {}", self.body))
    }

    /// The `error` field of the body.
    pub fn error(&self) -> String {
        self.body["error"].as_str().unwrap_or_default().to_string()
    }

    /// The `field` field of the body.
    pub fn field(&self) -> String {
        self.body["field"].as_str().unwrap_or_default().to_string()
    }
}

/// A console page as fetched, redirects not followed.
#[derive(Debug)]
pub struct Page {
    /// HTTP status.
    pub status: u16,
    /// `Location`, for a redirect.
    pub location: String,
    /// `Content-Security-Policy`.
    pub csp: String,
    /// The HTML.
    pub html: String,
}

/// An awc client whose pool drops connections idle for 4 s: the admin closes them at 5 s, and a
/// test that spends longer in a browser would otherwise reuse one as that close arrives
/// ("connector has been disconnected").
pub fn client(timeout: Duration, follow_redirects: bool) -> awc::Client {
    let builder = awc::Client::builder()
        .timeout(timeout)
        .connector(awc::Connector::new().conn_keep_alive(Duration::from_secs(4)));
    if follow_redirects {
        builder.finish()
    } else {
        builder.disable_redirects().finish()
    }
}

/// A REST client with one method per endpoint; keeps the session cookie it is given.
pub struct Api {
    http: awc::Client,
    pages: awc::Client,
    base: String,
    cookie: RefCell<Option<String>>,
    bearer: RefCell<Option<String>>,
    executor_token: RefCell<Option<String>>,
}

impl Api {
    /// A client of the admin at `base`, not logged in.
    pub fn new(base: &str) -> Api {
        Api {
            http: client(Duration::from_secs(30), true),
            pages: client(Duration::from_secs(30), false),
            base: base.to_string(),
            cookie: RefCell::new(None),
            bearer: RefCell::new(None),
            executor_token: RefCell::new(None),
        }
    }

    /// Sends `XXL-JOB-ACCESS-TOKEN: <token>` on executor-API calls from now on.
    pub fn set_executor_token(&self, token: Option<&str>) {
        *self.executor_token.borrow_mut() = token.map(str::to_string);
    }

    /// Sends `Authorization: Bearer <token>` from now on.
    pub fn set_bearer(&self, token: Option<&str>) {
        *self.bearer.borrow_mut() = token.map(str::to_string);
    }

    /// The session cookie value held, if any.
    pub fn session_cookie(&self) -> Option<String> {
        self.cookie.borrow().clone()
    }

    /// Replaces the held session cookie.
    pub fn set_session_cookie(&self, value: Option<&str>) {
        *self.cookie.borrow_mut() = value.map(str::to_string);
    }

    /// Sends a request with a raw body and content type.
    pub async fn raw(
        &self,
        method: Method,
        path: &str,
        content_type: Option<&str>,
        body: Vec<u8>,
    ) -> Resp {
        self.raw_with(method, path, content_type, body, &[]).await
    }

    /// Sends a JSON request with extra headers.
    pub async fn call_with(
        &self,
        method: Method,
        path: &str,
        body: Option<Value>,
        headers: &[(&str, &str)],
    ) -> Resp {
        let (ct, bytes) = match body {
            Some(v) => (
                Some("application/json"),
                serde_json::to_vec(&v).unwrap_or_default(),
            ),
            None => (None, Vec::new()),
        };
        self.raw_with(method, path, ct, bytes, headers).await
    }

    /// [`raw`](Self::raw) with extra headers.
    pub async fn raw_with(
        &self,
        method: Method,
        path: &str,
        content_type: Option<&str>,
        body: Vec<u8>,
        headers: &[(&str, &str)],
    ) -> Resp {
        let url = format!("{}{}", self.base, path);
        let mut req = self.http.request(method, &url);
        let mut cookies: Vec<String> = Vec::new();
        for (name, value) in headers {
            if name.eq_ignore_ascii_case("cookie") {
                cookies.push(value.to_string());
            } else {
                req = req.insert_header((*name, *value));
            }
        }
        if let Some(ct) = content_type {
            req = req.insert_header(("Content-Type", ct));
        }
        if let Some(c) = self.cookie.borrow().as_ref() {
            cookies.push(format!("jobwheel_session={c}"));
        }
        if !cookies.is_empty() {
            req = req.insert_header(("Cookie", cookies.join("; ")));
        }
        if let Some(t) = self.bearer.borrow().as_ref() {
            req = req.insert_header(("Authorization", format!("Bearer {t}")));
        }
        if path.contains("/api/") && !path.starts_with("/api/v1/") {
            if let Some(t) = self.executor_token.borrow().as_ref() {
                req = req.insert_header(("XXL-JOB-ACCESS-TOKEN", t.as_str()));
            }
        }
        let mut res = req
            .send_body(body)
            .await
            .unwrap_or_else(|e| panic!("{url}: {e}"));
        let status = res.status().as_u16();
        let set_cookie: Vec<String> = res
            .headers()
            .get_all("set-cookie")
            .filter_map(|v| v.to_str().ok().map(str::to_string))
            .collect();
        for c in &set_cookie {
            if let Some(rest) = c.strip_prefix("jobwheel_session=") {
                let value = rest.split(';').next().unwrap_or_default();
                *self.cookie.borrow_mut() = (!value.is_empty()).then(|| value.to_string());
            }
        }
        let bytes = res
            .body()
            .limit(10 * 1024 * 1024)
            .await
            .unwrap_or_else(|e| panic!("{url}: body: {e}"));
        let body = if bytes.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&bytes).unwrap_or_else(|e| {
                panic!("{url}: not JSON ({e}): {}", String::from_utf8_lossy(&bytes))
            })
        };
        Resp {
            status,
            body,
            set_cookie,
        }
    }

    /// `GET` of a console page with the held session cookie.
    pub async fn page(&self, path: &str) -> Page {
        self.page_in(path, None).await
    }

    /// A console page as a browser that asks for `lang` (`zh-CN`) would get it.
    pub async fn page_in(&self, path: &str, lang: Option<&str>) -> Page {
        let url = format!("{}{}", self.base, path);
        let mut req = self.pages.get(&url);
        if let Some(c) = self.cookie.borrow().as_ref() {
            req = req.insert_header(("Cookie", format!("jobwheel_session={c}")));
        }
        if let Some(lang) = lang {
            req = req.insert_header(("Accept-Language", lang));
        }
        let mut res = req.send().await.unwrap_or_else(|e| panic!("{url}: {e}"));
        let header = |name: &str| {
            res.headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default()
                .to_string()
        };
        let (location, csp) = (header("location"), header("content-security-policy"));
        let bytes = res.body().limit(10 * 1024 * 1024).await.expect("page body");
        Page {
            status: res.status().as_u16(),
            location,
            csp,
            html: String::from_utf8_lossy(&bytes).into_owned(),
        }
    }

    /// A JSON request by method name (`"POST"`), for endpoints without a helper of their own.
    pub async fn request(&self, method: &str, path: &str, body: Option<Value>) -> Resp {
        let method = Method::from_bytes(method.as_bytes()).expect("an HTTP method");
        self.call(method, path, body).await
    }

    async fn call(&self, method: Method, path: &str, body: Option<Value>) -> Resp {
        match body {
            Some(v) => {
                self.raw(
                    method,
                    path,
                    Some("application/json"),
                    serde_json::to_vec(&v).unwrap_or_default(),
                )
                .await
            }
            None => self.raw(method, path, None, Vec::new()).await,
        }
    }

    // ---- auth
    pub async fn login(&self, username: &str, password: &str) -> Resp {
        self.call(
            Method::POST,
            "/api/v1/auth/login",
            Some(json!({"username": username, "password": password})),
        )
        .await
    }
    pub async fn change_password(&self, current: &str, new: &str) -> Resp {
        self.call(
            Method::POST,
            "/api/v1/auth/password",
            Some(json!({"currentPassword": current, "newPassword": new})),
        )
        .await
    }
    pub async fn daily_report(&self, query: &str) -> Resp {
        self.call(Method::GET, &format!("/api/v1/reports/daily{query}"), None)
            .await
    }
    pub async fn logout(&self) -> Resp {
        self.call(Method::POST, "/api/v1/auth/logout", None).await
    }
    pub async fn me(&self) -> Resp {
        self.call(Method::GET, "/api/v1/auth/me", None).await
    }

    // ---- groups
    pub async fn list_groups(&self) -> Resp {
        self.call(Method::GET, "/api/v1/groups", None).await
    }
    pub async fn create_group(&self, body: Value) -> Resp {
        self.call(Method::POST, "/api/v1/groups", Some(body)).await
    }
    pub async fn get_group(&self, id: i64) -> Resp {
        self.call(Method::GET, &format!("/api/v1/groups/{id}"), None)
            .await
    }
    pub async fn update_group(&self, id: i64, body: Value) -> Resp {
        self.call(Method::PUT, &format!("/api/v1/groups/{id}"), Some(body))
            .await
    }
    pub async fn delete_group(&self, id: i64) -> Resp {
        self.call(Method::DELETE, &format!("/api/v1/groups/{id}"), None)
            .await
    }

    // ---- jobs
    pub async fn list_jobs(&self, query: &str) -> Resp {
        self.call(Method::GET, &format!("/api/v1/jobs?{query}"), None)
            .await
    }
    pub async fn create_job(&self, body: Value) -> Resp {
        self.call(Method::POST, "/api/v1/jobs", Some(body)).await
    }
    pub async fn get_job(&self, id: i64) -> Resp {
        self.call(Method::GET, &format!("/api/v1/jobs/{id}"), None)
            .await
    }
    pub async fn update_job(&self, id: i64, body: Value) -> Resp {
        self.call(Method::PUT, &format!("/api/v1/jobs/{id}"), Some(body))
            .await
    }
    pub async fn delete_job(&self, id: i64) -> Resp {
        self.call(Method::DELETE, &format!("/api/v1/jobs/{id}"), None)
            .await
    }
    pub async fn start_job(&self, id: i64) -> Resp {
        self.call(Method::POST, &format!("/api/v1/jobs/{id}/start"), None)
            .await
    }
    pub async fn stop_job(&self, id: i64) -> Resp {
        self.call(Method::POST, &format!("/api/v1/jobs/{id}/stop"), None)
            .await
    }
    pub async fn trigger_job(&self, id: i64, body: Option<Value>) -> Resp {
        self.call(Method::POST, &format!("/api/v1/jobs/{id}/trigger"), body)
            .await
    }
    pub async fn next_fire_times(&self, id: i64, query: &str) -> Resp {
        self.call(
            Method::GET,
            &format!("/api/v1/jobs/{id}/next-fire-times?{query}"),
            None,
        )
        .await
    }
    pub async fn get_glue(&self, job: i64) -> Resp {
        self.call(Method::GET, &format!("/api/v1/jobs/{job}/glue"), None)
            .await
    }
    pub async fn get_glue_version(&self, job: i64, version: i64) -> Resp {
        self.call(
            Method::GET,
            &format!("/api/v1/jobs/{job}/glue/{version}"),
            None,
        )
        .await
    }
    pub async fn save_glue(&self, job: i64, body: Value) -> Resp {
        self.call(Method::PUT, &format!("/api/v1/jobs/{job}/glue"), Some(body))
            .await
    }
    pub async fn restore_glue(&self, job: i64, version: i64) -> Resp {
        self.call(
            Method::POST,
            &format!("/api/v1/jobs/{job}/glue/{version}/restore"),
            None,
        )
        .await
    }
    pub async fn preview(&self, body: Value) -> Resp {
        self.call(Method::POST, "/api/v1/schedule/preview", Some(body))
            .await
    }

    // ---- logs
    pub async fn list_logs(&self, query: &str) -> Resp {
        self.call(Method::GET, &format!("/api/v1/logs?{query}"), None)
            .await
    }
    pub async fn get_log(&self, id: i64) -> Resp {
        self.call(Method::GET, &format!("/api/v1/logs/{id}"), None)
            .await
    }
    pub async fn log_content(&self, id: i64, from_line: i64) -> Resp {
        self.call(
            Method::GET,
            &format!("/api/v1/logs/{id}/content?fromLine={from_line}"),
            None,
        )
        .await
    }
    pub async fn kill_log(&self, id: i64) -> Resp {
        self.call(Method::POST, &format!("/api/v1/logs/{id}/kill"), None)
            .await
    }
    pub async fn clear_logs(&self, query: &str) -> Resp {
        self.call(Method::DELETE, &format!("/api/v1/logs?{query}"), None)
            .await
    }

    // ---- registry
    pub async fn registry(&self) -> Resp {
        self.call(Method::GET, "/api/v1/registry", None).await
    }
    pub async fn cordons(&self) -> Resp {
        self.call(Method::GET, "/api/v1/registry/cordons", None)
            .await
    }
    pub async fn cordon(&self, body: Value) -> Resp {
        self.call(Method::POST, "/api/v1/registry/cordons", Some(body))
            .await
    }
    pub async fn uncordon(&self, address: &str) -> Resp {
        let query = url::form_urlencoded::byte_serialize(address.as_bytes()).collect::<String>();
        let path = format!("/api/v1/registry/cordons?address={query}");
        self.call(Method::DELETE, &path, None).await
    }
    pub async fn registry_suspects(&self) -> Resp {
        self.call(Method::GET, "/api/v1/registry/suspects", None)
            .await
    }

    /// POSTs to the executor-facing API (`/api/registry`, `/api/callback`, ...) with the
    /// executor token this client holds.
    pub async fn post_as_executor(&self, path: &str, body: Value) -> Resp {
        self.call(Method::POST, path, Some(body)).await
    }

    /// Registers an executor through the executor-facing API, as an executor's beat does.
    pub async fn register_executor(&self, app_name: &str, address: &str) -> Resp {
        self.call(
            Method::POST,
            "/api/registry",
            Some(json!({
                "registryGroup": "EXECUTOR",
                "registryKey": app_name,
                "registryValue": address,
            })),
        )
        .await
    }

    // ---- system
    pub async fn system_actors(&self) -> Resp {
        self.call(Method::GET, "/api/v1/system/actors", None).await
    }

    /// Makes the next unit of work of admin actor `name` panic (the test-only fault hook).
    pub async fn inject_fault(&self, name: &str) -> Resp {
        self.call(
            Method::POST,
            &format!("/test-hooks/actors/{name}/fault"),
            None,
        )
        .await
    }
}
