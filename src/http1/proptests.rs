//! The answer parser fed generated and arbitrary bytes: it answers or fails, never panics.

use proptest::prelude::*;

use super::codec::*;
use super::*;

/// Heads an executor (or anything listening on its port) may send, whole or cut anywhere.
fn head_bytes() -> impl Strategy<Value = Vec<u8>> {
    let line = prop_oneof![
        Just("Content-Length: 5".to_string()),
        Just("Content-Length: 18446744073709551616".to_string()),
        Just("Content-Length: -1".to_string()),
        Just("Transfer-Encoding: gzip, chunked".to_string()),
        Just("Transfer-Encoding: chunked, gzip".to_string()),
        Just("Connection: keep-alive, close".to_string()),
        "[A-Za-z-]{1,12}: [ -~]{0,20}",
    ];
    let status = prop_oneof![
        Just("HTTP/1.1 200 OK".to_string()),
        Just("HTTP/1.0 204 No Content".to_string()),
        Just("HTTP/1.1 100 Continue".to_string()),
        "HTTP/1\\.[0-9] [0-9]{1,4} [ -~]{0,10}",
    ];
    prop_oneof![
        (
            status,
            prop::collection::vec(line, 0..6),
            any::<usize>(),
            any::<bool>()
        )
            .prop_map(|(status, lines, cut, whole)| {
                let mut head = format!("{status}\r\n{}\r\n", lines.join("\r\n"));
                if !lines.is_empty() {
                    head.push_str("\r\n");
                }
                let mut bytes = head.into_bytes();
                if !whole && !bytes.is_empty() {
                    bytes.truncate(cut % bytes.len());
                }
                bytes
            }),
        prop::collection::vec(any::<u8>(), 0..80),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(10_000))]

    /// An answer's head parses, needs more bytes, or is refused with a reason; a parsed
    /// head lies within what was read and frames its body one way.
    #[test]
    fn answer_heads_parse_or_are_refused(bytes in head_bytes()) {
        match parse_head(&bytes) {
            Ok(Some(head)) => {
                prop_assert!(head.len <= bytes.len());
                prop_assert!(head.framing != Framing::UntilClose || !head.keep_alive);
            }
            Ok(None) => prop_assert!(bytes.len() <= HEAD_MAX),
            Err(Http1Error::Malformed(why)) => prop_assert!(!why.is_empty()),
            Err(other) => prop_assert!(false, "{other:?}"),
        }
    }

    /// Executor addresses as users and registrations give them: a plain-http target with
    /// a host, or `None` (left to awc).
    #[test]
    fn executor_addresses_parse_or_are_left_to_awc(address in prop_oneof![
        "https?://[a-z0-9.:\\[\\]@%-]{0,24}(/[a-z?#]{0,6})?",
        ".{0,30}",
    ]) {
        if let Some(target) = HttpTarget::parse(&address) {
            prop_assert!(url::Url::parse(&address).is_ok_and(|u| u.scheme() == "http"));
            prop_assert!(!target.authority.is_empty());
            prop_assert!(!target.base_path.ends_with('/'));
        }
    }
}
