//! Iris's traces exported over OTLP (HTTP, protobuf) to an OpenTelemetry
//! collector (Jaeger, Grafana Tempo, Logfire, LangSmith, an APM's agent).
//! Iris emits its spans through `tracing` in the GenAI conventions
//! (`iris::telemetry`); [`Otlp`] installs the `tracing-opentelemetry`
//! layer that exports them, and links every root run's spans into one
//! trace named by the run id, so a run that pauses in one process and
//! resumes in another is one trace.
//!
//! ```no_run
//! # fn main() -> Result<(), iris_telemetry::TelemetryError> {
//! let _flushed_on_drop = iris_telemetry::Otlp::new("http://127.0.0.1:4318")
//!     .service_name("support-desk")
//!     .install()?;
//! // ... run agents; the spans are flushed when the guard drops.
//! # Ok(()) }
//! ```

mod ids;
mod otlp;

pub use otlp::{Otlp, TelemetryError, TelemetryGuard};
