//! The pool: keep-alive connections per host, opened ahead of a second's calls, each request
//! written once and its answer read on the caller's task.

use super::*;

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
                list.retain(|c| c.idle_since.elapsed() < REUSE_IDLE_FOR);
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
