//! HTTP/1.1 on the wire: the request written as one buffer, the answer's head parsed with
//! httparse, its body framed by length, chunks or the connection's end.

use super::*;

pub(super) struct Conn {
    pub(super) stream: TcpStream,
    pub(super) buf: Vec<u8>,
    pub(super) idle_since: Instant,
}

impl Conn {
    pub(super) async fn open(target: &HttpTarget) -> Result<Conn, Http1Error> {
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
    pub(super) fn is_reusable(&self) -> bool {
        if self.idle_since.elapsed() >= REUSE_IDLE_FOR {
            return false;
        }
        let mut probe = [0u8; 1];
        matches!(self.stream.try_read(&mut probe), Err(e) if e.kind() == io::ErrorKind::WouldBlock)
    }

    pub(super) async fn read_more(&mut self) -> Result<usize, Http1Error> {
        self.buf
            .reserve(if self.buf.is_empty() { 512 } else { 4096 });
        self.stream
            .read_buf(&mut self.buf)
            .await
            .map_err(Http1Error::Io)
    }
}

pub(super) fn build_request(
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
pub(super) enum Framing {
    Empty,
    Length(usize),
    Chunked,
    UntilClose,
}

pub(super) struct Head {
    pub(super) len: usize,
    pub(super) status: u16,
    pub(super) framing: Framing,
    pub(super) keep_alive: bool,
}

/// Parses a complete head at the start of `buf`; `None` if more bytes are needed.
pub(super) fn parse_head(buf: &[u8]) -> Result<Option<Head>, Http1Error> {
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
pub(super) async fn read_response(conn: &mut Conn) -> Result<(Http1Response, bool), Http1Error> {
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
pub(super) async fn read_chunked(
    conn: &mut Conn,
    mut pos: usize,
) -> Result<(Vec<u8>, usize), Http1Error> {
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

pub(super) fn find_crlf(buf: &[u8]) -> Option<usize> {
    buf.windows(2).position(|w| w == b"\r\n")
}
