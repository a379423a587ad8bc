//! Names in a run's workflow: its state keys and its promises.

/// The run's state as of its last step boundary.
pub(crate) const STATE: &str = "state";
/// Where the run stands.
pub(crate) const STATUS: &str = "status";

/// The durable promise that carries the decision on call `call_id`.
pub(crate) fn decision(call_id: &str) -> String {
    format!("decision:{call_id}")
}
