//! HTTP for the model adapters: one client setup, and requests retried
//! with exponential back-off and jitter on rate limits, server errors and
//! dropped connections, honouring `Retry-After`. Keys travel in headers and
//! never appear in errors.
//!
//! | file | what it holds |
//! |---|---|
//! | `endpoint.rs` | [`HttpEndpoint`], [`Api`], [`RetryPolicy`], the client, where requests may go |
//! | `model.rs` | [`Wire`] and [`HttpModel`] |
//! | `exchange.rs` | one request: retries, bounds, streams, errors |

mod endpoint;
mod exchange;
mod model;

pub use endpoint::{Api, HttpEndpoint, RetryPolicy, block_remote_requests};
pub use exchange::MAX_ANSWER_BYTES;
#[doc(hidden)]
pub use exchange::send;
pub use model::{HttpModel, Wire};
