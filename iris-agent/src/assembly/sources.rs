//! What an agent file takes from outside itself, shared by the parts that
//! build it: the files it names (read beneath its folder), the host's
//! variables it names (`${NAME}`), and the tools it chose.

use std::path::Path;
use std::sync::Arc;

use iris_core::DynTool;

use serde_saphyr::Location;

/// A tool the file names, with where and under which key.
pub(crate) type Chosen = (String, Location, Arc<dyn DynTool>);

/// The text of `relative`, a file an agent file in `base` names, opened
/// once beneath that folder as every wing opens its files (never through
/// `..` or a link out, never a FIFO or a hard link to a file elsewhere) and
/// bounded like the agent file itself.
///
/// # Errors
/// What was wrong, in words for a person, naming the file as `what`.
pub(super) fn read_beneath(base: &Path, relative: &Path, what: &str) -> Result<String, String> {
    // An agent file named by its bare name sits in the current folder.
    let folder = if base.as_os_str().is_empty() {
        Path::new(".")
    } else {
        base
    };
    let file = iris_runtime::__wings::open_beneath(folder, relative).map_err(|why| match why {
        iris_runtime::__wings::BeneathError::Outside => format!(
            "`{}` is outside the agent file's folder `{}`; an {what} is read only from that folder (move or copy the file there)",
            relative.display(),
            folder.display()
        ),
        other => format!("the {what} `{}` could not be read: {other}", relative.display()),
    })?;
    iris_runtime::config::yaml::read_bounded_file(file, what)
}

/// `${NAME}` replaced by the host's variable `NAME`; the name of the first
/// one not set otherwise.
pub(super) fn expand_variables(value: &str) -> Result<String, String> {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            out.push_str(&rest[start..]);
            return Ok(out);
        };
        let name = &after[..end];
        match std::env::var(name) {
            Ok(found) => out.push_str(&found),
            Err(_) => return Err(name.to_owned()),
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}
