//! A request body must arrive within [`BODY_TIMEOUT`]: actix-web times out a slow request head
//! but not a body, so a client that sends its body a byte at a time would hold a connection and
//! a worker's attention for as long as it likes.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use actix_web::body::MessageBody;
use actix_web::dev::{Payload, ServiceRequest, ServiceResponse};
use actix_web::error::PayloadError;
use actix_web::middleware::Next;
use actix_web::web::Bytes;
use actix_web::HttpMessage;
use futures_util::Stream;
use tokio::time::{sleep, Sleep};

pub use crate::protocol::BODY_TIMEOUT;

/// Middleware: the body stream fails with a timeout once [`BODY_TIMEOUT`] has passed since
/// the request head was read.
pub async fn body_deadline(
    mut req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let inner = req.take_payload();
    let timed: Pin<Box<dyn Stream<Item = Result<Bytes, PayloadError>>>> = Box::pin(Deadline {
        inner,
        timer: Box::pin(sleep(BODY_TIMEOUT)),
    });
    req.set_payload(Payload::from(timed));
    next.call(req).await
}

struct Deadline {
    inner: Payload,
    timer: Pin<Box<Sleep>>,
}

impl Stream for Deadline {
    type Item = Result<Bytes, PayloadError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if let Poll::Ready(item) = Pin::new(&mut self.inner).poll_next(cx) {
            return Poll::Ready(item);
        }
        match self.timer.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Some(Err(PayloadError::Io(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                format!(
                    "request body not received within {} s",
                    BODY_TIMEOUT.as_secs()
                ),
            ))))),
            Poll::Pending => Poll::Pending,
        }
    }
}
