//! How long the admin's and the executor's HTTP clients reuse an idle pooled connection.

use std::time::Duration;

/// An idle connection is not reused after this long. Servers close idle keep-alive connections
/// on their own clock (actix-web and Node after 5 s); a client reusing one later may write its
/// request just as that close arrives, unseen while its thread was busy, and the call fails
/// ("connector has been disconnected") though the server is up. Below 5 s those closes only
/// ever meet connections nobody will use again.
pub(crate) const REUSE_IDLE_FOR: Duration = Duration::from_secs(4);
