//! What activating a skill returns: its body between clear markers, its
//! folder, and a capped list of its files (names only, never contents).
//! The body is the skill author's text, untrusted: it reaches the model as
//! a tool result, never as system instructions.

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use iris_core::{ToolErrorKind, ToolResult};
use iris_runtime::__wings::BeneathError;
use serde_json::json;

use crate::read::SKILL_FILE;
use crate::skill::Skill;

/// Most files of a skill listed in its activation.
pub const MAX_LISTED_FILES: usize = 50;

/// How deep into a skill's folder its files are listed.
const MAX_LIST_DEPTH: usize = 4;

/// The result of activating `skill`: its body, folder and files; the
/// host's `data` names the skill and its files.
#[must_use]
pub fn activation(skill: &Skill) -> ToolResult {
    activation_showing(skill, &skill.root.display().to_string())
}

/// [`activation`], showing the skill's folder as `folder` (a server shows
/// its callers the skill's resource address, never a path of its own).
#[must_use]
pub fn activation_showing(skill: &Skill, folder: &str) -> ToolResult {
    let (files, more) = files_of(&skill.root);
    let mut text = format!(
        "<skill name=\"{}\" folder=\"{}\">\n{}\n</skill>",
        crate::escape::attribute(&skill.name),
        crate::escape::attribute(folder),
        crate::escape::body(&skill.body)
    );
    if !files.is_empty() {
        text.push_str(
            "\n\nFiles of the skill, relative to its folder (read one with `activate_skill` and its `file` argument when the instructions point to it):",
        );
        for file in &files {
            text.push_str("\n- ");
            text.push_str(&crate::escape::line(file));
        }
        if more > 0 {
            let _ = write!(text, "\n- … and {more} more, not listed");
        }
    }
    ToolResult::text(text).with_data(json!({
        "skill": skill.name,
        "folder": folder,
        "files": files,
        "files_not_listed": more,
    }))
}

/// Largest file of a skill [`read_file`] returns.
pub const MAX_SKILL_FILE_BYTES: u64 = 256 * 1024;

/// The text of the file at `relative` (a path inside the skill's folder):
/// read-only, confined to the folder (an absolute path, `..`, or a link
/// that leads out is refused), at most [`MAX_SKILL_FILE_BYTES`], UTF-8.
#[must_use]
pub fn read_file(skill: &Skill, relative: &str) -> ToolResult {
    let opened = checked(relative).and_then(|path| {
        iris_runtime::__wings::open_beneath(&skill.root, path).map_err(|why| match why {
            BeneathError::Outside => "leads out of the skill's folder (through a link)".to_owned(),
            BeneathError::Missing => "is not a file of the skill".to_owned(),
            BeneathError::Folder(_) => "names a skill whose folder is gone".to_owned(),
            other => format!("is refused: {other}"),
        })
    });
    match opened {
        Ok(file) => match read_text(file) {
            Ok(text) => ToolResult::text(text).with_data(json!({
                "skill": skill.name,
                "file": relative,
            })),
            Err(why) => ToolResult::error(
                ToolErrorKind::InvalidArguments,
                format!("`{relative}` of skill `{}` {why}", skill.name),
            ),
        },
        Err(why) => ToolResult::error(
            ToolErrorKind::PermissionDenied,
            format!(
                "`{relative}` {why}; name a file inside the skill's folder, as its file list gives them"
            ),
        ),
    }
}

/// `relative` as a path inside a skill's folder, or why it cannot be one
/// (the folder itself then confines what it names, when it is opened).
fn checked(relative: &str) -> Result<&Path, String> {
    let path = Path::new(relative);
    if relative.is_empty() || path.is_absolute() || relative.starts_with(['/', '\\']) {
        return Err("is not a path relative to the skill's folder".to_owned());
    }
    if path.components().any(|c| {
        !matches!(
            c,
            std::path::Component::Normal(_) | std::path::Component::CurDir
        )
    }) {
        return Err("leaves the skill's folder".to_owned());
    }
    Ok(path)
}

fn read_text(file: std::fs::File) -> Result<String, String> {
    use std::io::Read as _;
    let metadata = file.metadata().map_err(|_| "cannot be opened".to_owned())?;
    if metadata.len() > MAX_SKILL_FILE_BYTES {
        return Err(format!(
            "is {} bytes; files of a skill are read up to {MAX_SKILL_FILE_BYTES}",
            metadata.len()
        ));
    }
    let mut bytes = Vec::new();
    file.take(MAX_SKILL_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|_| "cannot be read".to_owned())?;
    String::from_utf8(bytes)
        .map_err(|_| "is not text (UTF-8); only text files of a skill are read".to_owned())
}

/// The result of activating a skill that is active already.
#[must_use]
pub fn already_active(name: &str) -> ToolResult {
    ToolResult::text(format!(
        "The skill `{name}` is active already: its instructions are earlier in this conversation."
    ))
    .with_data(json!({"skill": name, "already_active": true}))
}

/// The result of asking for a skill that is not offered.
#[must_use]
pub fn not_offered<'a>(name: &str, offered: impl Iterator<Item = &'a str>) -> ToolResult {
    let offered: Vec<&str> = offered.collect();
    ToolResult::error(
        ToolErrorKind::InvalidArguments,
        format!(
            "no skill `{name}` is offered; the skills are: {}",
            offered.join(", ")
        ),
    )
}

/// The skill's files (not `SKILL.md`, not hidden ones), breadth first and
/// sorted within a folder, at most [`MAX_LISTED_FILES`]; and how many more
/// there are. Links are not followed.
fn files_of(root: &Path) -> (Vec<String>, usize) {
    let mut listed = Vec::new();
    let mut more = 0_usize;
    let mut queue = VecDeque::from([(root.to_path_buf(), 0_usize)]);
    while let Some((folder, depth)) = queue.pop_front() {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        let mut children: Vec<(PathBuf, bool)> = entries
            .filter_map(Result::ok)
            .filter(|entry| !entry.file_name().to_string_lossy().starts_with('.'))
            .filter_map(|entry| {
                let kind = entry.file_type().ok()?;
                (!kind.is_symlink()).then(|| (entry.path(), kind.is_dir()))
            })
            .collect();
        children.sort();
        for (path, is_dir) in children {
            if is_dir {
                if depth + 1 < MAX_LIST_DEPTH {
                    queue.push_back((path, depth + 1));
                }
                continue;
            }
            let Ok(relative) = path.strip_prefix(root) else {
                continue;
            };
            if depth == 0 && relative == Path::new(SKILL_FILE) {
                continue;
            }
            if listed.len() < MAX_LISTED_FILES {
                listed.push(relative.to_string_lossy().replace('\\', "/"));
            } else {
                more += 1;
            }
        }
    }
    (listed, more)
}
