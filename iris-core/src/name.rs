//! Validated tool names.

use std::borrow::{Borrow, Cow};
use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::DefinitionError;

/// The longest name every supported provider accepts.
pub const MAX_TOOL_NAME_LEN: usize = 64;

/// A tool name valid for every provider: `^[A-Za-z0-9_-]{1,64}$`.
///
/// Names are checked once, when they are made, so the rest of the system can
/// pass them around without re-validating.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ToolName(Cow<'static, str>);

impl ToolName {
    /// Checks `name` and wraps it.
    ///
    /// # Errors
    /// [`DefinitionError`] when the name is empty, longer than 64 bytes or holds a
    /// character outside `A-Z a-z 0-9 _ -`.
    pub fn new(name: impl Into<Cow<'static, str>>) -> Result<Self, DefinitionError> {
        let name = name.into();
        check_tool_name(&name)?;
        Ok(Self(name))
    }

    /// `name` made a valid name: each character outside `A-Z a-z 0-9 _ -`
    /// becomes `_`, the name is cut at 64 bytes, and an empty one becomes
    /// `unnamed`.
    #[must_use]
    pub fn from_lossy(name: &str) -> Self {
        let cleaned: String = name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .take(MAX_TOOL_NAME_LEN)
            .collect();
        if cleaned.is_empty() {
            Self(Cow::Borrowed("unnamed"))
        } else {
            Self(Cow::Owned(cleaned))
        }
    }

    /// Wraps a name the `#[tool]` macro already checked at compile time.
    pub(crate) const fn from_checked(name: Cow<'static, str>) -> Self {
        Self(name)
    }

    /// The name as a string slice.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Checks a tool name against `^[A-Za-z0-9_-]{1,64}$`.
///
/// # Errors
/// [`DefinitionError`] saying which rule the name breaks.
pub fn check_tool_name(name: &str) -> Result<(), DefinitionError> {
    if name.is_empty() {
        return Err(DefinitionError::EmptyName);
    }
    if name.len() > MAX_TOOL_NAME_LEN {
        return Err(DefinitionError::NameTooLong {
            name: name.to_owned(),
            len: name.len(),
        });
    }
    if let Some(bad) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '-'))
    {
        return Err(DefinitionError::NameInvalidChar {
            name: name.to_owned(),
            found: bad,
        });
    }
    Ok(())
}

impl fmt::Debug for ToolName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl fmt::Display for ToolName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl AsRef<str> for ToolName {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl Borrow<str> for ToolName {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl PartialEq<str> for ToolName {
    fn eq(&self, other: &str) -> bool {
        *self.0 == *other
    }
}

impl PartialEq<&str> for ToolName {
    fn eq(&self, other: &&str) -> bool {
        *self.0 == **other
    }
}

impl TryFrom<&str> for ToolName {
    type Error = DefinitionError;
    fn try_from(value: &str) -> Result<Self, Self::Error> {
        Self::new(value.to_owned())
    }
}

impl TryFrom<String> for ToolName {
    type Error = DefinitionError;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        Self::new(value)
    }
}

impl Serialize for ToolName {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for ToolName {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = String::deserialize(deserializer)?;
        Self::new(raw).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_provider_safe_names() {
        for ok in ["a", "read_file", "web-search", "A9", &"x".repeat(64)] {
            assert!(ToolName::new(ok.to_owned()).is_ok(), "{ok}");
        }
    }

    #[test]
    fn rejects_names_providers_refuse() {
        assert!(matches!(ToolName::new(""), Err(DefinitionError::EmptyName)));
        assert!(matches!(
            ToolName::new("x".repeat(65)),
            Err(DefinitionError::NameTooLong { len: 65, .. })
        ));
        assert!(matches!(
            ToolName::new("read.file"),
            Err(DefinitionError::NameInvalidChar { found: '.', .. })
        ));
        assert!(matches!(
            ToolName::new("café"),
            Err(DefinitionError::NameInvalidChar { found: 'é', .. })
        ));
    }
}
