//! Call identity as the runtime holds it. A model's call ids are untrusted
//! input: local servers number every call `0` or reuse one id, some ids
//! hold `/`, and a hostile model may send an empty one or ten kilobytes.
//! [`CallId`] is the checked form, and [`CallPath`] names a call anywhere
//! in a tree of agents (the delegating calls outermost, the call itself
//! last): built from escaped segments, so that no two distinct paths are
//! written alike, whatever the ids hold.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

/// A model's call id, checked: not empty, at most [`CallId::MAX_LEN`]
/// bytes. Any other text is an id; where ids become keys, paths or child
/// run ids they go through [`CallId::segment`], never as they are.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CallId(Arc<str>);

/// Why a call id was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CallIdError {
    /// The id is empty: no result could be told apart from another's.
    #[error("a call id is empty; give every call an id of its own")]
    Empty,
    /// The id is longer than [`CallId::MAX_LEN`] bytes.
    #[error("a call id is {len} bytes long, over the {max} a call id may have")]
    TooLong {
        /// Its length in bytes.
        len: usize,
        /// [`CallId::MAX_LEN`].
        max: usize,
    },
}

impl CallId {
    /// Longest id the runtime takes, in bytes: providers' ids are a few
    /// dozen; a longer one only makes every key and path it is part of
    /// longer.
    pub const MAX_LEN: usize = 512;

    /// `id`, when it is one.
    ///
    /// # Errors
    /// [`CallIdError`] for an empty id or one over [`CallId::MAX_LEN`]
    /// bytes.
    pub fn new(id: impl Into<Arc<str>>) -> Result<Self, CallIdError> {
        let id = id.into();
        Self::check(&id)?;
        Ok(Self(id))
    }

    /// Whether `id` is one, without keeping it.
    ///
    /// # Errors
    /// [`CallIdError`] for an empty id or one over [`CallId::MAX_LEN`]
    /// bytes.
    pub fn check(id: &str) -> Result<(), CallIdError> {
        if id.is_empty() {
            return Err(CallIdError::Empty);
        }
        if id.len() > Self::MAX_LEN {
            return Err(CallIdError::TooLong {
                len: id.len(),
                max: Self::MAX_LEN,
            });
        }
        Ok(())
    }

    /// The id as the model sent it.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The id as one segment of a [`CallPath`]: `%` written `%25` and `/`
    /// written `%2F`, every other character as it is (an id of letters,
    /// digits, `_` and `-`, as providers make them, is unchanged).
    #[must_use]
    pub fn segment(&self) -> Cow<'_, str> {
        escape(&self.0)
    }
}

impl fmt::Display for CallId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl AsRef<str> for CallId {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

/// Where a call is in a tree of agents: the ids of the calls that
/// delegated to the child agents it runs in, outermost first, then its
/// own. Written as escaped segments joined by `/` (`d1/w1`; a call `a/b`
/// of the root is `a%2Fb`), which reads back as the same path: distinct
/// paths are never written alike.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CallPath(Vec<Arc<str>>);

impl CallPath {
    /// The path of call `id` of the root run.
    #[must_use]
    pub fn root(id: &str) -> Self {
        Self(vec![Arc::from(id)])
    }

    /// The path of call `id` made inside the child agent this path's call
    /// delegated to.
    #[must_use]
    pub fn child(&self, id: &str) -> Self {
        let mut segments = self.0.clone();
        segments.push(Arc::from(id));
        Self(segments)
    }

    /// The ids, outermost first.
    pub fn ids(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(|s| &**s)
    }

    /// The call's own id (the last of the path).
    #[must_use]
    pub fn leaf(&self) -> &str {
        self.0.last().map_or("", |s| s)
    }

    /// The path written as [`fmt::Display`] writes it, read back; `None`
    /// for text no path is written as (a `%` not followed by `25` or `2F`).
    #[must_use]
    pub fn parse(text: &str) -> Option<Self> {
        text.split('/')
            .map(|segment| unescape(segment).map(Arc::from))
            .collect::<Option<Vec<_>>>()
            .map(Self)
    }

    /// `prefix` (a written path; `None` at the root) extended by call
    /// `id`, written: what [`CallPath::child`] then [`fmt::Display`] give,
    /// without parsing `prefix` again.
    #[must_use]
    pub fn join(prefix: Option<&str>, id: &str) -> String {
        let segment = escape(id);
        let Some(prefix) = prefix else {
            return segment.into_owned();
        };
        let mut joined = String::with_capacity(prefix.len() + 1 + segment.len());
        joined.push_str(prefix);
        joined.push('/');
        joined.push_str(&segment);
        joined
    }

    /// The first segment of a written path read back, and the written rest
    /// (`None` when the path has one segment); `None` for text no path is
    /// written as.
    #[must_use]
    pub fn split_first(text: &str) -> Option<(String, Option<&str>)> {
        let (head, rest) = match text.split_once('/') {
            Some((head, rest)) => (head, Some(rest)),
            None => (text, None),
        };
        Some((unescape(head)?.into_owned(), rest))
    }
}

impl fmt::Display for CallPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (at, id) in self.0.iter().enumerate() {
            if at > 0 {
                f.write_str("/")?;
            }
            f.write_str(&escape(id))?;
        }
        Ok(())
    }
}

/// `id` as a segment: `%` and `/` escaped, so a segment never holds `/`
/// and reads back as exactly `id`.
fn escape(id: &str) -> Cow<'_, str> {
    if !id.contains(['%', '/']) {
        return Cow::Borrowed(id);
    }
    let mut escaped = String::with_capacity(id.len() + 8);
    for c in id.chars() {
        match c {
            '%' => escaped.push_str("%25"),
            '/' => escaped.push_str("%2F"),
            other => escaped.push(other),
        }
    }
    Cow::Owned(escaped)
}

/// A segment read back; `None` for one no id is escaped to.
fn unescape(segment: &str) -> Option<Cow<'_, str>> {
    if !segment.contains('%') {
        return Some(Cow::Borrowed(segment));
    }
    let mut id = String::with_capacity(segment.len());
    let mut rest = segment;
    while let Some(at) = rest.find('%') {
        id.push_str(&rest[..at]);
        let after = &rest[at..];
        if after.starts_with("%25") {
            id.push('%');
        } else if after.starts_with("%2F") {
            id.push('/');
        } else {
            return None;
        }
        rest = &after[3..];
    }
    id.push_str(rest);
    Some(Cow::Owned(id))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinary_ids_are_their_own_segments() {
        for id in ["call_0", "toolu_01A09q90qw90lq917835lq9", "d1", "c-3"] {
            assert_eq!(CallId::new(id).unwrap().segment(), id);
            assert_eq!(CallPath::root(id).to_string(), id);
        }
        assert_eq!(CallPath::root("d1").child("w1").to_string(), "d1/w1");
    }

    #[test]
    fn a_slash_in_an_id_never_reads_as_a_level() {
        let root_call = CallPath::root("d1/w1");
        let child_call = CallPath::root("d1").child("w1");
        assert_ne!(root_call.to_string(), child_call.to_string());
        assert_eq!(root_call.to_string(), "d1%2Fw1");
        assert_eq!(CallPath::parse("d1%2Fw1"), Some(root_call));
        assert_eq!(CallPath::parse("d1/w1"), Some(child_call));
        assert_eq!(CallPath::parse("50%off"), None);
        assert_eq!(
            CallPath::split_first("d%2F1/w1"),
            Some(("d/1".to_owned(), Some("w1")))
        );
        assert_eq!(CallPath::join(Some("d%2F1"), "w/1"), "d%2F1/w%2F1");
    }

    #[test]
    fn empty_and_huge_ids_are_refused() {
        assert_eq!(CallId::new(""), Err(CallIdError::Empty));
        let huge = "x".repeat(10 * 1024);
        assert!(matches!(
            CallId::new(huge),
            Err(CallIdError::TooLong { len: 10240, .. })
        ));
        assert!(CallId::new("x".repeat(CallId::MAX_LEN)).is_ok());
    }

    /// Ids as a hostile model sends them: empty, `/` and `%` heavy,
    /// Unicode, and now and then ten kilobytes.
    fn hostile_id() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        prop_oneof![
            Just(String::new()),
            "[/%a-c2F5]{0,6}",
            "\\PC{0,12}",
            Just("x/".repeat(5 * 1024)),
        ]
    }

    proptest::proptest! {
        /// No two distinct paths, at any depth, are written alike, and
        /// every path reads back as itself.
        #[test]
        fn paths_are_injective(
            a in proptest::collection::vec(hostile_id(), 1..4),
            b in proptest::collection::vec(hostile_id(), 1..4),
        ) {
            let path = |ids: &[String]| {
                let mut path = CallPath::root(&ids[0]);
                for id in &ids[1..] {
                    path = path.child(id);
                }
                path
            };
            let (pa, pb) = (path(&a), path(&b));
            proptest::prop_assert_eq!(pa.to_string() == pb.to_string(), a == b);
            proptest::prop_assert_eq!(CallPath::parse(&pa.to_string()), Some(pa.clone()));
            let joined = a
                .iter()
                .fold(None::<String>, |prefix, id| Some(CallPath::join(prefix.as_deref(), id)));
            proptest::prop_assert_eq!(joined, Some(pa.to_string()));
        }
    }
}
