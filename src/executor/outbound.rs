//! Where the built-in `httpJobHandler` may connect: not, unless allowed, to this machine or the
//! networks behind it (loopback, private, link-local and the like), so a job's parameter cannot
//! make the executor reach what only it can (server-side request forgery: cloud metadata at
//! 169.254.169.254, admin ports on 127.0.0.1, databases on the private network).
//!
//! The address is resolved here, checked, and handed to the HTTP client, which connects to it
//! without resolving the name again: a name that resolves to a public address when checked and
//! to a private one when used cannot slip through. Redirects are followed here, each hop checked
//! the same way.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// Why an address is not one `httpJobHandler` may call by default, or `None` when it may.
pub(crate) fn private_kind(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => v4_kind(v4),
        IpAddr::V6(v6) => v6_kind(v6),
    }
}

fn v4_kind(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, ..] = ip.octets();
    if ip.is_loopback() {
        Some("loopback")
    } else if ip.is_private() {
        Some("private")
    } else if ip.is_link_local() {
        Some("link-local")
    } else if a == 0 {
        Some("unspecified")
    } else if a == 100 && (64..128).contains(&b) {
        Some("shared (carrier-grade NAT)")
    } else if ip.is_multicast() {
        Some("multicast")
    } else if a >= 240 {
        Some("reserved")
    } else {
        None
    }
}

fn v6_kind(ip: Ipv6Addr) -> Option<&'static str> {
    // an IPv4 address written as IPv6 reaches that IPv4 host
    if let Some(v4) = ip.to_ipv4_mapped() {
        return v4_kind(v4);
    }
    let seg = ip.segments();
    // NAT64 (64:ff9b::/96) embeds the IPv4 address in the last 32 bits
    if seg[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        let [x, y] = [seg[6], seg[7]];
        return v4_kind(Ipv4Addr::new(
            (x >> 8) as u8,
            x as u8,
            (y >> 8) as u8,
            y as u8,
        ));
    }
    if ip.is_loopback() {
        Some("loopback")
    } else if ip.is_unspecified() {
        Some("unspecified")
    } else if seg[0] & 0xfe00 == 0xfc00 {
        Some("private (unique local)")
    } else if seg[0] & 0xffc0 == 0xfe80 {
        Some("link-local")
    } else if ip.is_multicast() {
        Some("multicast")
    } else {
        None
    }
}

/// The address to connect to for `url`: an http(s) URL whose host (as written, or every
/// address its name resolves to) is public, unless `allow_private`; a refusal names
/// `allow_flag`, the setting that would allow it.
pub(crate) async fn target_address(
    url: &url::Url,
    allow_private: bool,
    allow_flag: &str,
) -> Result<SocketAddr, String> {
    let addrs = resolve(url).await?;
    if !allow_private {
        refuse_private(url, &addrs, allow_flag)?;
    }
    addrs
        .first()
        .copied()
        .ok_or_else(|| format!("{} resolves to no address", url.host_str().unwrap_or("?")))
}

/// Every address `url`'s host stands for: the one written, or those its name resolves to.
pub(crate) async fn resolve(url: &url::Url) -> Result<Vec<SocketAddr>, String> {
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!(
            "only http and https URLs can be called, not {}:",
            url.scheme()
        ));
    }
    let port = url
        .port_or_known_default()
        .ok_or_else(|| format!("{url} has no port"))?;
    match url.host() {
        Some(url::Host::Ipv4(ip)) => Ok(vec![SocketAddr::new(IpAddr::V4(ip), port)]),
        Some(url::Host::Ipv6(ip)) => Ok(vec![SocketAddr::new(IpAddr::V6(ip), port)]),
        Some(url::Host::Domain(name)) => Ok(tokio::net::lookup_host((name, port))
            .await
            .map_err(|e| format!("cannot resolve {name}: {e}"))?
            .collect()),
        None => Err(format!("{url} has no host")),
    }
}

/// `Err` naming the first of `addrs` (what `url`'s host stands for) that is not public.
pub(crate) fn refuse_private(
    url: &url::Url,
    addrs: &[SocketAddr],
    allow_flag: &str,
) -> Result<(), String> {
    // one private answer refuses the name: its owner could otherwise pick which one is used
    match addrs
        .iter()
        .find_map(|a| private_kind(a.ip()).map(|k| (a, k)))
    {
        Some((addr, kind)) => Err(format!(
            "refused to call {}: {} is a {kind} address (allow it with {allow_flag})",
            url.host_str().unwrap_or("?"),
            addr.ip()
        )),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(s: &str) -> Option<&'static str> {
        private_kind(s.parse().unwrap())
    }

    #[test]
    fn private_and_local_addresses_are_named() {
        for (ip, want) in [
            ("127.0.0.1", "loopback"),
            ("127.8.9.1", "loopback"),
            ("10.1.2.3", "private"),
            ("172.16.0.1", "private"),
            ("192.168.1.1", "private"),
            ("169.254.169.254", "link-local"),
            ("0.0.0.0", "unspecified"),
            ("100.64.0.1", "shared (carrier-grade NAT)"),
            ("224.0.0.1", "multicast"),
            ("255.255.255.255", "reserved"),
            ("::1", "loopback"),
            ("::", "unspecified"),
            ("fd00::1", "private (unique local)"),
            ("fe80::1", "link-local"),
            ("::ffff:127.0.0.1", "loopback"),
            ("::ffff:10.0.0.1", "private"),
            ("64:ff9b::a9fe:a9fe", "link-local"),
        ] {
            assert_eq!(kind(ip), Some(want), "{ip}");
        }
        for public in [
            "8.8.8.8",
            "172.32.0.1",
            "100.128.0.1",
            "2001:4860:4860::8888",
        ] {
            assert_eq!(kind(public), None, "{public}");
        }
    }

    const FLAG: &str = "--http-job-allow-private";

    #[actix_rt::test]
    async fn urls_are_checked_before_any_connection() {
        let url = |s: &str| url::Url::parse(s).unwrap();
        let err = target_address(&url("http://127.0.0.1:9/x"), false, FLAG)
            .await
            .unwrap_err();
        assert!(
            err.contains("loopback") && err.contains("--http-job-allow-private"),
            "{err}"
        );
        let err = target_address(&url("http://[::1]/"), false, FLAG)
            .await
            .unwrap_err();
        assert!(err.contains("loopback"), "{err}");
        let err = target_address(&url("http://localhost:9/"), false, FLAG)
            .await
            .unwrap_err();
        assert!(err.contains("loopback"), "{err}");
        let err = target_address(&url("file:///etc/passwd"), false, FLAG)
            .await
            .unwrap_err();
        assert!(err.contains("only http and https"), "{err}");
        let allowed = target_address(&url("http://127.0.0.1:9/x"), true, FLAG).await;
        assert_eq!(allowed.unwrap(), "127.0.0.1:9".parse().unwrap());
        let public = target_address(&url("https://93.184.216.34/"), false, FLAG).await;
        assert_eq!(public.unwrap(), "93.184.216.34:443".parse().unwrap());
    }
}
