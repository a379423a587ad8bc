//! The store's own checks of what its file holds.

use std::time::Duration;

use iris_agent::store::{RunStore, StoreError};
use iris_agent::{RUN_STATE_VERSION, RunState};
use iris_core::RunId;
use iris_model::{Message, Usage};

use crate::SqliteStore;

fn state(run: &str) -> RunState {
    RunState {
        version: RUN_STATE_VERSION,
        agent: "a".to_owned(),
        run_id: RunId::new(run),
        step: 0,
        messages: vec![Message::User {
            text: "hi".to_owned(),
        }],
        finished: Vec::new(),
        waiting: Vec::new(),
        disclosed: Vec::new(),
        skills: Vec::new(),
        usage: Usage::default(),
        children: Vec::new(),
        output: None,
        output_faults: 0,
        spent: iris_agent::Spent::default(),
        seal: None,
    }
}

fn raw(store: &SqliteStore, sql: &str) {
    store.connection.lock().unwrap().execute_batch(sql).unwrap();
}

#[tokio::test]
async fn what_the_file_holds_is_checked_when_read() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path().join("runs.db")).unwrap();
    let run = RunId::new("r");
    store
        .create(&state("r"), "me", Duration::from_secs(60))
        .await
        .unwrap();

    raw(&store, "UPDATE iris_runs SET state = '{\"version\": \"x\"'");
    let err = store.load(&run).await.unwrap_err();
    assert!(matches!(err, StoreError::Corrupt { .. }), "{err}");
    assert!(err.to_string().contains("run `r`"), "{err}");
    let err = store.acquire(&run, "me", Duration::ZERO).await.unwrap_err();
    assert!(matches!(err, StoreError::Corrupt { .. }), "{err}");

    raw(
        &store,
        &format!(
            "UPDATE iris_runs SET state = '{}', status = 'paused'",
            serde_json::to_string(&state("r")).unwrap()
        ),
    );
    let err = store.load(&run).await.unwrap_err();
    assert!(err.to_string().contains("unknown status `paused`"), "{err}");

    raw(&store, "UPDATE iris_runs SET status = 'waiting'");
    raw(
        &store,
        "INSERT INTO iris_decisions (run_id, call_id, decision) VALUES ('r', 'c', 'approve')",
    );
    let err = store.load(&run).await.unwrap_err();
    assert!(err.to_string().contains("the reply to `c`"), "{err}");
}

#[tokio::test]
async fn a_file_that_is_not_a_database_is_refused_with_its_path() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("notes.txt");
    std::fs::write(
        &path,
        "these are notes, not a database, and long enough to have a header",
    )
    .unwrap();
    let err = SqliteStore::open(&path).unwrap_err();
    assert!(matches!(err, StoreError::Backend(_)), "{err}");
    assert!(err.to_string().contains("notes.txt"), "{err}");
}

#[tokio::test]
async fn two_handles_on_one_file_see_each_other() {
    let dir = tempfile::tempdir().unwrap();
    let a = SqliteStore::open(dir.path().join("runs.db")).unwrap();
    let b = SqliteStore::open(dir.path().join("runs.db")).unwrap();
    a.create(&state("shared"), "a", Duration::from_secs(60))
        .await
        .unwrap();
    let err = b
        .acquire(&RunId::new("shared"), "b", Duration::from_secs(60))
        .await
        .unwrap_err();
    assert!(
        matches!(err, StoreError::Held { ref holder, .. } if holder == "a"),
        "{err}"
    );
    let err = b
        .create(&state("shared"), "b", Duration::from_secs(60))
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::Exists { .. }), "{err}");
}

#[test]
fn openers_of_a_new_file_at_once_all_succeed() {
    // Four openers race on each of 60 new files: creating the file, turning
    // on WAL and writing the schema contend for the same locks (each thread
    // has a connection of its own, contending as processes do).
    let dir = tempfile::tempdir().unwrap();
    for round in 0..60 {
        let path = dir.path().join(format!("runs-{round}.db"));
        let barrier = std::sync::Arc::new(std::sync::Barrier::new(4));
        let openers: Vec<_> = (0..4)
            .map(|_| {
                let (path, barrier) = (path.clone(), std::sync::Arc::clone(&barrier));
                std::thread::spawn(move || {
                    barrier.wait();
                    SqliteStore::open(&path).map(|_| ())
                })
            })
            .collect();
        for opener in openers {
            let opened = opener.join().unwrap();
            assert!(opened.is_ok(), "round {round}: {opened:?}");
        }
    }
}
