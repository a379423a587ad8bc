//! The folders a write needs, made one at a time beneath the root: each
//! in a folder held open whose place was checked against the fence first,
//! so no link leads a new folder into a place the tools never write (a
//! refused write makes nothing).

use std::ffi::OsStr;
use std::io;
use std::path::{Component, Path, PathBuf};

use cap_std::fs::Dir;
use iris_core::ToolResult;

use super::fence::Fence;
use super::workspace::{WorkspacePath, io_refusal, refused};

/// Makes the missing folders of `path`'s parent beneath `root` (at
/// `root_path`, as the OS resolves it).
pub(crate) fn make_parents(
    root: &Dir,
    root_path: &Path,
    fence: &Fence,
    path: &WorkspacePath,
) -> Result<(), ToolResult> {
    let Some(parent) = path.relative.parent() else {
        return Ok(());
    };
    let mut reached = PathBuf::new();
    let mut here = root.try_clone().map_err(|e| io_refusal(path, &e))?;
    for component in parent.components() {
        reached.push(component);
        match root.open_dir(&reached) {
            Ok(folder) => here = folder,
            Err(error) if error.kind() == io::ErrorKind::NotFound => {
                let Component::Normal(name) = component else {
                    return Err(io_refusal(path, &error));
                };
                here = make_in(&here, name, fence, path, &root_path.join(&reached))?;
            }
            Err(error) => return Err(io_refusal(path, &error)),
        }
    }
    Ok(())
}

/// Makes folder `name` in `here` (unless the fence refuses where it would
/// be) and opens it.
fn make_in(
    here: &Dir,
    name: &OsStr,
    fence: &Fence,
    path: &WorkspacePath,
    resolved: &Path,
) -> Result<Dir, ToolResult> {
    fence.check_new_folder(here, name, path, resolved)?;
    match here.create_dir(name) {
        Ok(()) => {}
        Err(error) if error.kind() == io::ErrorKind::AlreadyExists => {}
        Err(error) => return Err(io_refusal(path, &error)),
    }
    let made = here.open_dir(name).map_err(|e| io_refusal(path, &e))?;
    if made.dir_metadata().is_err() {
        return Err(refused(&path.shown, "a folder it needs could not be made"));
    }
    Ok(made)
}
