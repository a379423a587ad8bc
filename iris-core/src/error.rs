//! Host-side errors of the core types.

use std::fmt;
use std::sync::Arc;

/// Why a tool's definition (its name, aliases, description, capability
/// tags or input schema) is not one providers accept.
///
/// These are host errors (a misconfigured tool, a bad name): failures the
/// model should read travel as [`ToolResult`](crate::ToolResult) errors instead.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum DefinitionError {
    /// A tool name or alias was empty.
    #[error("tool name is empty; expected 1 to 64 characters from `A-Z a-z 0-9 _ -`")]
    EmptyName,
    /// A tool name or alias was longer than providers accept.
    #[error("tool name `{name}` is {len} bytes long; providers accept at most 64")]
    NameTooLong {
        /// The offending name.
        name: String,
        /// Its length in bytes.
        len: usize,
    },
    /// A tool name or alias held a character providers refuse.
    #[error("tool name `{name}` contains {found:?}; expected only `A-Z a-z 0-9 _ -`")]
    NameInvalidChar {
        /// The offending name.
        name: String,
        /// The first character outside the allowed set.
        found: char,
    },
    /// An alias repeats the tool's own name.
    #[error("alias `{name}` is the tool's own name; remove it or pick another alias")]
    AliasEqualsName {
        /// The tool name.
        name: String,
    },
    /// The same alias was given twice.
    #[error("alias `{alias}` is listed twice for tool `{name}`")]
    DuplicateAlias {
        /// The tool name.
        name: String,
        /// The repeated alias.
        alias: String,
    },
    /// Capability tags that contradict each other.
    #[error(
        "tool `{name}` is marked `read_only` and `{conflict}`; a read-only tool cannot {conflict}"
    )]
    ConflictingCapabilities {
        /// The tool name.
        name: String,
        /// The capability that contradicts `read_only`.
        conflict: &'static str,
    },
    /// A tool description was empty.
    #[error("tool `{name}` has no description; models pick tools by their description")]
    MissingDescription {
        /// The tool name.
        name: String,
    },
    /// An input schema whose root is not an object schema.
    #[error(
        "input schema of tool `{name}` must be a JSON object with `type: object`, found {found}"
    )]
    SchemaNotObject {
        /// The tool name.
        name: String,
        /// A short description of what was found instead.
        found: String,
    },
}

/// Why bytes cannot become an image block of a result.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum ImageError {
    /// Bytes given as an image that are not PNG, JPEG, GIF or WebP.
    #[error("{found} is not an image providers accept; give PNG, JPEG, GIF or WebP bytes")]
    Unsupported {
        /// What the bytes look like.
        found: String,
    },
    /// An image past the size every provider accepts.
    #[error(
        "the image is {size} bytes; providers accept at most {limit}: scale it down or compress it"
    )]
    TooLarge {
        /// Its size.
        size: usize,
        /// The limit.
        limit: usize,
    },
    /// An image file that could not be read.
    #[error("cannot read image file `{}`: {source}", path.display())]
    File {
        /// The file.
        path: std::path::PathBuf,
        /// Why.
        #[source]
        source: Arc<std::io::Error>,
    },
}

/// A middleware failed; the call's result is an error naming it.
///
/// A middleware may fail with any error type; the stack wraps it in this,
/// naming the middleware that failed.
#[derive(Debug, Clone, thiserror::Error)]
#[error("middleware `{middleware}` failed: {source}")]
pub struct MiddlewareError {
    middleware: String,
    #[source]
    source: Arc<dyn std::error::Error + Send + Sync>,
}

impl MiddlewareError {
    /// A failure of the middleware named `middleware` caused by `source`.
    pub fn new(
        middleware: impl Into<String>,
        source: impl Into<Box<dyn std::error::Error + Send + Sync>>,
    ) -> Self {
        Self {
            middleware: middleware.into(),
            source: Arc::from(source.into()),
        }
    }

    /// The name of the middleware that failed.
    #[must_use]
    pub fn middleware(&self) -> &str {
        &self.middleware
    }

    /// The same failure, named after `middleware` unless a name is known.
    pub(crate) fn named(self, middleware: &str) -> Self {
        if self.middleware.is_empty() {
            Self {
                middleware: middleware.to_owned(),
                ..self
            }
        } else {
            self
        }
    }
}

/// Why raw JSON input could not become a tool's typed arguments.
///
/// Lists every fault found in the input, each with the JSON path of its
/// culprit, so the model can fix them all in one retry. Never empty.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgumentError {
    faults: Vec<ArgumentFault>,
    /// Faults found past those listed (the list is bounded).
    omitted: usize,
}

/// One thing wrong with a tool's input: where, and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgumentFault {
    path: String,
    message: String,
}

impl ArgumentFault {
    /// A fault at `path` (a JSON path such as `$.items[2].name`; `$` for the root).
    #[must_use]
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            path: path.into(),
            message: message.into(),
        }
    }

    /// The JSON path of the value at fault.
    #[must_use]
    pub fn path(&self) -> &str {
        &self.path
    }

    /// What is wrong there, with the expected and the found value where known.
    #[must_use]
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for ArgumentFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "at `{}`: {}", self.path, self.message)
    }
}

impl ArgumentError {
    /// An error with one fault, at `path` (a JSON path such as
    /// `$.items[2].name`; `$` for the root).
    #[must_use]
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            faults: vec![ArgumentFault::new(path, message)],
            omitted: 0,
        }
    }

    /// An error listing `faults`, in the order given; `None` when there are none.
    #[must_use]
    pub fn from_faults(faults: Vec<ArgumentFault>) -> Option<Self> {
        (!faults.is_empty()).then_some(Self { faults, omitted: 0 })
    }

    /// The same error, saying that `omitted` more faults were found but not listed.
    #[must_use]
    pub fn with_omitted(self, omitted: usize) -> Self {
        Self { omitted, ..self }
    }

    /// How many faults were found past those listed.
    #[must_use]
    pub fn omitted(&self) -> usize {
        self.omitted
    }

    /// Every fault found, the first one first.
    #[must_use]
    pub fn faults(&self) -> &[ArgumentFault] {
        &self.faults
    }

    /// The JSON path of the first fault.
    #[must_use]
    pub fn path(&self) -> &str {
        self.faults.first().map_or("$", ArgumentFault::path)
    }

    /// What is wrong at the first fault, including the expected and the
    /// found type where known.
    #[must_use]
    pub fn message(&self) -> &str {
        self.faults.first().map_or("", ArgumentFault::message)
    }
}

impl fmt::Display for ArgumentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.faults.as_slice(), self.omitted) {
            ([one], 0) => one.fmt(f),
            (faults, omitted) => {
                write!(f, "{} problems:", faults.len() + omitted)?;
                for fault in faults {
                    write!(f, "\n- {fault}")?;
                }
                if omitted > 0 {
                    write!(f, "\n- and {omitted} more, not listed")?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for ArgumentError {}
