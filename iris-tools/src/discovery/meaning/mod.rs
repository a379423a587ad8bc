//! The meaning layer of tool search: a sentence encoder's vectors of each
//! tool and request, fused with the word ranker's scores.

mod encoder;

pub use encoder::{EncodeError, TextEncoder};
