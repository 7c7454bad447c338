//! Request bodies read whole up to a stated limit. A body over it answers 413 with the limit
//! in the message (`{"error": "request body larger than N bytes"}`), whether its length was
//! announced or only found while reading; actix-web's own answer says only "A payload reached
//! size limit." and is not JSON.

use std::future::Future;
use std::pin::Pin;

use actix_web::dev::Payload;
use actix_web::http::header::CONTENT_LENGTH;
use actix_web::web::{Bytes, BytesMut};
use actix_web::{FromRequest, HttpRequest};
use futures_util::StreamExt;

use super::api::error::ApiError;

/// Largest body the executor API and XXL-JOB's job API read, the executors' own limit.
pub const WIRE_BODY_LIMIT: usize = 5 * 1024 * 1024;

/// A whole request body of at most `LIMIT` bytes.
#[derive(Debug, Clone)]
pub struct LimitedBody<const LIMIT: usize>(pub Bytes);

/// The 413 answer for a body over `limit`.
pub fn too_large(limit: usize) -> ApiError {
    ApiError::PayloadTooLarge(format!("request body larger than {limit} bytes"))
}

impl<const LIMIT: usize> FromRequest for LimitedBody<LIMIT> {
    type Error = actix_web::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self, Self::Error>>>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let announced = req
            .headers()
            .get(CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok());
        let mut payload = payload.take();
        Box::pin(async move {
            // refused before a byte is read when the client says how much is coming
            if announced.is_some_and(|n| n > LIMIT as u64) {
                return Err(too_large(LIMIT).into());
            }
            let mut body = BytesMut::new();
            while let Some(chunk) = payload.next().await {
                let chunk = chunk?;
                if body.len() + chunk.len() > LIMIT {
                    return Err(too_large(LIMIT).into());
                }
                body.extend_from_slice(&chunk);
            }
            Ok(LimitedBody(body.freeze()))
        })
    }
}
