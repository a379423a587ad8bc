//! Iris turns ordinary Rust functions into LLM tools and runs them safely.
//!
//! ```
//! /// Return the square of an integer.
//! #[iris::tool(read_only)]
//! fn square(
//!     /// The integer to square.
//!     value: i64,
//! ) -> i64 {
//!     value * value
//! }
//!
//! use iris::Tool;
//! let definition = Square.definition();
//! assert_eq!(definition.name(), "square");
//! assert_eq!(definition.input_schema()["required"][0], "value");
//! assert_eq!(square(4), 16); // still callable as written
//! ```

pub use iris_core::*;

#[cfg(feature = "macros")]
pub use iris_macros::tool;
