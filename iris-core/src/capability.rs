//! Capability tags: what a tool may do to the world.

use std::fmt;

use serde::{Deserialize, Serialize};

/// One capability tag of a tool.
///
/// Permissions and scheduling are decided from these: read-only tools are
/// allowed by default, write and exec follow configuration, and only
/// read-only *and* concurrency-safe calls run side by side.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Capability {
    /// Reads but never changes anything outside the call.
    ReadOnly,
    /// Changes files or other state.
    Write,
    /// Runs programs or code.
    Exec,
    /// Talks to the network.
    Network,
    /// Needs a person to answer.
    Interactive,
    /// Safe to run at the same time as other calls.
    ConcurrencySafe,
    /// Running it twice with the same arguments does what running it once
    /// does: a durable run whose process died during the call runs it
    /// again, where any other call is reported as uncertain.
    Idempotent,
}

impl Capability {
    /// Every capability, in declaration order.
    pub const ALL: [Capability; 7] = [
        Capability::ReadOnly,
        Capability::Write,
        Capability::Exec,
        Capability::Network,
        Capability::Interactive,
        Capability::ConcurrencySafe,
        Capability::Idempotent,
    ];

    /// The tag as written in `#[tool(...)]` and configuration.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Capability::ReadOnly => "read_only",
            Capability::Write => "write",
            Capability::Exec => "exec",
            Capability::Network => "network",
            Capability::Interactive => "interactive",
            Capability::ConcurrencySafe => "concurrency_safe",
            Capability::Idempotent => "idempotent",
        }
    }

    const fn bit(self) -> u8 {
        1 << self as u8
    }
}

impl fmt::Display for Capability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A set of [`Capability`] tags, copied by value.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Capabilities(u8);

impl Capabilities {
    /// No capability at all.
    pub const NONE: Capabilities = Capabilities(0);

    /// The set holding exactly `caps`.
    #[must_use]
    pub const fn from_slice(caps: &[Capability]) -> Self {
        let mut bits = 0;
        let mut i = 0;
        while i < caps.len() {
            bits |= caps[i].bit();
            i += 1;
        }
        Capabilities(bits)
    }

    /// This set plus `cap`.
    #[must_use]
    pub const fn with(self, cap: Capability) -> Self {
        Capabilities(self.0 | cap.bit())
    }

    /// Whether `cap` is in the set.
    #[must_use]
    pub const fn contains(self, cap: Capability) -> bool {
        self.0 & cap.bit() != 0
    }

    /// Whether the tool only reads.
    #[must_use]
    pub const fn is_read_only(self) -> bool {
        self.contains(Capability::ReadOnly)
    }

    /// Whether the tool may run next to other calls.
    #[must_use]
    pub const fn is_concurrency_safe(self) -> bool {
        self.contains(Capability::ConcurrencySafe)
    }

    /// Whether running the tool twice does what running it once does (a
    /// read-only tool is, whether or not it says so).
    #[must_use]
    pub const fn is_idempotent(self) -> bool {
        self.contains(Capability::Idempotent) || self.is_read_only()
    }

    /// Whether the set is empty.
    #[must_use]
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The tags in declaration order.
    pub fn iter(self) -> impl Iterator<Item = Capability> {
        Capability::ALL
            .into_iter()
            .filter(move |c| self.contains(*c))
    }

    /// The first tag that contradicts `read_only`, if the set holds both.
    #[must_use]
    pub fn read_only_conflict(self) -> Option<Capability> {
        if !self.is_read_only() {
            return None;
        }
        [Capability::Write, Capability::Exec]
            .into_iter()
            .find(|c| self.contains(*c))
    }
}

impl FromIterator<Capability> for Capabilities {
    fn from_iter<I: IntoIterator<Item = Capability>>(iter: I) -> Self {
        iter.into_iter()
            .fold(Capabilities::NONE, Capabilities::with)
    }
}

impl fmt::Debug for Capabilities {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

impl Serialize for Capabilities {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter())
    }
}

impl<'de> Deserialize<'de> for Capabilities {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(Vec::<Capability>::deserialize(deserializer)?
            .into_iter()
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_operations_and_conflicts() {
        let caps = Capabilities::from_slice(&[Capability::ReadOnly, Capability::ConcurrencySafe]);
        assert!(caps.is_read_only() && caps.is_concurrency_safe());
        assert!(!caps.contains(Capability::Write));
        assert_eq!(caps.read_only_conflict(), None);
        assert_eq!(
            caps.with(Capability::Exec).read_only_conflict(),
            Some(Capability::Exec)
        );
        assert_eq!(
            serde_json::to_string(&caps).unwrap(),
            r#"["read_only","concurrency_safe"]"#
        );
        let back: Capabilities =
            serde_json::from_str(r#"["concurrency_safe","read_only"]"#).unwrap();
        assert_eq!(back, caps);
    }
}
