//! FAILOVER and BUSYOVER: the addresses probed in order, the first that answers wins.

use super::*;

/// FAILOVER/BUSYOVER: probes each address in order; the first answering code 200 wins.
///
/// `probe(address)` performs `/beat` or `/idleBeat` and yields `(code, msg)`; an `Err` counts as
/// code 500 with the error as message, as XXL-JOB does with an exception. On success returns the
/// address and every result so far, in XXL-JOB's HTML form; otherwise all results as the error
/// (or [`ADDRESS_EMPTY_MSG`] for an empty list).
pub async fn probe_in_order<F, Fut>(
    kind: ProbeKind,
    addresses: &[String],
    mut probe: F,
) -> Result<(String, String), String>
where
    F: FnMut(String) -> Fut,
    Fut: Future<Output = Result<(i32, String), String>>,
{
    if addresses.is_empty() {
        return Err(ADDRESS_EMPTY_MSG.to_string());
    }
    let mut report = String::new();
    for address in addresses {
        let (code, msg) = probe(address.clone())
            .await
            .unwrap_or_else(|err| (500, err));
        if !report.is_empty() {
            report.push_str("<br><br>");
        }
        // Writing to a String cannot fail.
        let _ = write!(
            report,
            "{}：<br>address：{address}<br>code：{code}<br>msg：{msg}",
            kind.title()
        );
        if code == 200 {
            return Ok((address.clone(), report));
        }
    }
    Err(report)
}
