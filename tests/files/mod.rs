//! A workspace in a temporary folder, with the file tools registered and
//! writes allowed, for the file tool tests.
#![allow(dead_code, reason = "each test file uses part of these helpers")]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test setup fails loudly on a broken machine"
)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use iris::fs::{FileService, register_file_tools};
use iris::{
    Rule, RulePolicy, RunId, ToolContext, ToolExecutor, ToolRegistry, ToolResult, ToolUseBlock,
};
use serde_json::Value;

/// A workspace `root/` next to an `outside/` folder holding a secret.
pub(crate) struct Workspace {
    _temp: tempfile::TempDir,
    pub(crate) root: PathBuf,
    pub(crate) outside: PathBuf,
    pub(crate) files: Arc<FileService>,
    executor: ToolExecutor,
    calls: std::sync::atomic::AtomicUsize,
}

pub(crate) const SECRET: &str = "TOP-SECRET-OUTSIDE";

impl Workspace {
    pub(crate) fn new() -> Self {
        let temp = tempfile::tempdir().unwrap();
        let root = temp.path().join("root");
        let outside = temp.path().join("outside");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("secret.txt"), SECRET).unwrap();
        let mut registry = ToolRegistry::new();
        register_file_tools(&mut registry).unwrap();
        let executor = ToolExecutor::builder(registry)
            .policy(RulePolicy::new().write(Rule::Allow))
            .build()
            .unwrap();
        // What runs read lives in the executor's ledger, ended with the run.
        let files = Arc::new(
            FileService::open(&root)
                .unwrap()
                .with_ledger(Arc::clone(executor.ledger())),
        );
        Self {
            _temp: temp,
            root,
            outside,
            files,
            executor,
            calls: std::sync::atomic::AtomicUsize::new(0),
        }
    }

    pub(crate) fn path(&self, relative: &str) -> PathBuf {
        self.root.join(relative)
    }

    pub(crate) fn write(&self, relative: &str, content: &str) -> &Self {
        let path = self.path(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
        self
    }

    pub(crate) fn read(&self, relative: &str) -> String {
        std::fs::read_to_string(self.path(relative)).unwrap()
    }

    pub(crate) fn context(&self, run: &str) -> ToolContext {
        ToolContext::builder(&self.root, RunId::new(run))
            .shared_state(Arc::clone(&self.files))
            .build()
    }

    /// Runs one call of `tool` in run `run`.
    pub(crate) async fn call_in(&self, run: &str, tool: &str, input: Value) -> ToolResult {
        let n = self
            .calls
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let block = ToolUseBlock::new(format!("call-{n}"), tool, input);
        let outcome = self.executor.execute_one(block, &self.context(run)).await;
        outcome
            .result()
            .cloned()
            .expect("file tools never wait under this policy")
    }

    pub(crate) async fn call(&self, tool: &str, input: Value) -> ToolResult {
        self.call_in("run-1", tool, input).await
    }

    pub(crate) fn executor(&self) -> &ToolExecutor {
        &self.executor
    }
}

/// Every file under `dir` with its content, for "nothing changed" checks.
pub(crate) fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(folder) = stack.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            if meta.is_dir() {
                stack.push(path);
            } else if meta.is_file() {
                out.push((path.clone(), std::fs::read(&path).unwrap()));
            }
        }
    }
    out.sort();
    out
}
