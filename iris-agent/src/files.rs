//! The agent's file services, one per workspace, and what they never
//! touch: what the agent is made of (its file, its children's at any
//! depth, every skill's folder) and what a host hides besides. A writer
//! who may edit the workspace must not rewrite the agent file that grants
//! her rights, nor read the secrets written in it.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use iris_runtime::ledger::RunLedger;
use iris_tools::fs::{FileService, FileServiceError};

/// A place hidden from the file tools, and what it is, for the model.
pub(crate) type Hidden = (PathBuf, String);

/// An agent's file services, the places they hide and the folders they
/// only read.
#[derive(Debug, Default)]
pub(crate) struct AgentFiles {
    services: Mutex<Vec<(PathBuf, Arc<FileService>)>>,
    hidden: Mutex<Vec<Hidden>>,
    read_only: Mutex<Vec<Hidden>>,
}

impl AgentFiles {
    /// The service for `workspace`, opened on first use with every hidden
    /// place; what a run read there is kept in `ledger`.
    pub(crate) fn service(
        &self,
        workspace: &Path,
        ledger: &Arc<RunLedger>,
    ) -> Result<Arc<FileService>, FileServiceError> {
        let mut services = self.services.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((_, service)) = services.iter().find(|(root, _)| root == workspace) {
            return Ok(Arc::clone(service));
        }
        let service = FileService::open(workspace)?.with_ledger(Arc::clone(ledger));
        for (path, why) in self
            .hidden
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
        {
            service.hide(path, why.clone());
        }
        let read_only = self
            .read_only
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        for (path, why) in read_only.iter() {
            service.protect(path, why.clone());
        }
        drop(read_only);
        let service = Arc::new(service);
        services.push((workspace.to_path_buf(), Arc::clone(&service)));
        Ok(service)
    }

    /// Hides `places` from every service, those opened already included.
    pub(crate) fn hide(&self, places: &[Hidden]) {
        let services = self.services.lock().unwrap_or_else(PoisonError::into_inner);
        let mut hidden = self.hidden.lock().unwrap_or_else(PoisonError::into_inner);
        for (path, why) in places {
            if hidden.iter().any(|(kept, _)| kept == path) {
                continue;
            }
            for (_, service) in services.iter() {
                service.hide(path, why.clone());
            }
            hidden.push((path.clone(), why.clone()));
        }
    }

    /// Lets every service (those opened already included) only read
    /// beneath `folders`.
    pub(crate) fn protect(&self, folders: &[Hidden]) {
        let services = self.services.lock().unwrap_or_else(PoisonError::into_inner);
        let mut read_only = self
            .read_only
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        for (path, why) in folders {
            if read_only.iter().any(|(kept, _)| kept == path) {
                continue;
            }
            for (_, service) in services.iter() {
                service.protect(path, why.clone());
            }
            read_only.push((path.clone(), why.clone()));
        }
    }
}

/// The folders `skills` were found in (their roots): read only, so that
/// no writer plants a skill beside them.
pub(crate) fn skill_roots(skills: &crate::Skills) -> Vec<Hidden> {
    let mut roots: Vec<Hidden> = Vec::new();
    for skill in skills.iter() {
        if let Some(root) = skill.root.parent()
            && !roots.iter().any(|(kept, _)| kept == root)
        {
            roots.push((
                root.to_path_buf(),
                "a folder skills are found in (a skill planted there would join the agent)"
                    .to_owned(),
            ));
        }
    }
    roots
}

/// What `skills` are made of: each skill's folder.
pub(crate) fn skill_folders(skills: &crate::Skills) -> Vec<Hidden> {
    skills
        .iter()
        .map(|skill| {
            (
                skill.root.clone(),
                format!("the folder of skill `{}`", skill.name),
            )
        })
        .collect()
}
