//! A run's trace, named by its run id: the same trace id (and the id of a
//! parent span that stands for the run) in every process that drives it,
//! from a hash that is the same on every machine and in every version.

use opentelemetry::trace::{
    SpanContext, SpanId, TraceContextExt as _, TraceFlags, TraceId, TraceState,
};
use tracing_opentelemetry::OpenTelemetrySpanExt as _;

/// 64-bit FNV-1a of `bytes` from `basis`: stable, unlike std's hasher.
fn fnv1a(basis: u64, bytes: &[u8]) -> u64 {
    bytes.iter().fold(basis, |hash, byte| {
        (hash ^ u64::from(*byte)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// The trace of run `run_id`.
pub(crate) fn trace_id(run_id: &str) -> TraceId {
    let high = fnv1a(0xcbf2_9ce4_8422_2325, run_id.as_bytes());
    let low = fnv1a(0x8422_2325_cbf2_9ce4, run_id.as_bytes());
    TraceId::from_bytes(((u128::from(high) << 64) | u128::from(low)).to_be_bytes())
}

/// The span that stands for run `run_id` as a whole: never exported
/// itself, the remote parent of each process's `invoke_agent` span.
fn run_span_id(run_id: &str) -> SpanId {
    let id = fnv1a(0xcbf2_9ce4_8422_2325, format!("run:{run_id}").as_bytes()).max(1);
    SpanId::from_bytes(id.to_be_bytes())
}

/// Makes `span` (a root run's) a child of the run's own remote span, in
/// the run's trace.
pub(crate) fn link(span: &tracing::Span, run_id: &str) {
    let context = SpanContext::new(
        trace_id(run_id),
        run_span_id(run_id),
        TraceFlags::SAMPLED,
        true,
        TraceState::default(),
    );
    let parent = opentelemetry::Context::new().with_remote_span_context(context);
    // A span a subscriber did not take cannot be linked; nothing is lost.
    let _ = span.set_parent(parent);
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_run_id_names_one_trace_everywhere() {
        assert_eq!(super::trace_id("cli-1"), super::trace_id("cli-1"));
        assert_ne!(super::trace_id("cli-1"), super::trace_id("cli-2"));
        // Fixed for every machine and version: other processes rely on it.
        assert_eq!(
            super::trace_id("run-7").to_string(),
            format!(
                "{:016x}{:016x}",
                super::fnv1a(0xcbf2_9ce4_8422_2325, b"run-7"),
                super::fnv1a(0x8422_2325_cbf2_9ce4, b"run-7")
            )
        );
    }
}
