//! Hostile input never panics and never leads outside: random paths for
//! the file tools, random text for previews and for tool search.
#![cfg(unix)]

use crate::files;

use std::os::unix::fs::symlink;
use std::sync::Arc;

use files::{SECRET, Workspace, snapshot};
use iris::artifacts::ArtifactStore;
use iris::artifacts::{PreviewPolicy, apply_result_policy};
use iris::definition::{Exposure, ToolDefinition, ToolName};
use iris::discovery::{LocalRanker, SearchScope};
use iris::tool::DynamicTool;
use iris::{ToolRegistry, ToolResult};
use proptest::prelude::*;
use serde_json::json;

fn path_strategy() -> impl Strategy<Value = String> {
    let part = prop_oneof![
        Just("..".to_owned()),
        Just(".".to_owned()),
        Just("link_out".to_owned()),
        Just("dirlink".to_owned()),
        Just("a.txt".to_owned()),
        Just("dir".to_owned()),
        Just(String::new()),
        Just("secret.txt".to_owned()),
        Just("\u{0}".to_owned()),
        "[a-zé/\\\\~$ .]{1,12}",
    ];
    (any::<bool>(), proptest::collection::vec(part, 1..7)).prop_map(|(absolute, parts)| {
        let joined = parts.join("/");
        if absolute {
            format!("/{joined}")
        } else {
            joined
        }
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn random_paths_never_escape(paths in proptest::collection::vec(path_strategy(), 1..6)) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let ws = Workspace::new();
        ws.write("a.txt", "hello\n").write("dir/inner.txt", "inner\n");
        symlink(ws.outside.join("secret.txt"), ws.root.join("link_out")).unwrap();
        symlink(&ws.outside, ws.root.join("dirlink")).unwrap();
        let before = snapshot(&ws.outside);
        runtime.block_on(async {
            for path in &paths {
                for (tool, input) in [
                    ("read_file", json!({"path": path})),
                    ("write_file", json!({"path": path, "content": "x"})),
                    ("edit_file", json!({"path": path, "old_string": "TOP", "new_string": "x"})),
                ] {
                    let result = ws.call(tool, input).await;
                    prop_assert!(!result.text_content().contains(SECRET), "{} {:?} leaked", tool, path);
                }
            }
            Ok(())
        })?;
        prop_assert_eq!(snapshot(&ws.outside), before);
    }

    #[test]
    fn previews_of_random_text_stay_whole_and_bounded(
        text in "(?s).{0,3000}",
        max_chars in 1_usize..400,
    ) {
        let dir = tempfile::tempdir().unwrap();
        let store = ArtifactStore::new(dir.path());
        let result = apply_result_policy(ToolResult::text(text.clone()), PreviewPolicy { max_chars }, &store);
        if text.chars().count() <= max_chars {
            prop_assert_eq!(result.text_content(), text);
        } else {
            let artifact = &result.artifacts()[0];
            let mut saved = String::new();
            std::io::Read::read_to_string(&mut store.open(&artifact.handle).unwrap(), &mut saved).unwrap();
            prop_assert_eq!(saved, text);
            // Head, tail and a marker of a few hundred characters at most.
            prop_assert!(result.text_content().chars().count() <= max_chars * 3 / 4 + 600);
        }
    }

    #[test]
    fn tool_search_takes_any_text(
        descriptions in proptest::collection::vec("(?s).{1,200}", 1..8),
        intent in "(?s).{0,300}",
    ) {
        let mut registry = ToolRegistry::new();
        for (i, description) in descriptions.iter().enumerate() {
            let definition = ToolDefinition::builder(ToolName::new(format!("tool_{i}")).unwrap(), description.clone())
                .exposure(Exposure::Deferred)
                .build();
            // Blank descriptions are refused at build time; that is the point.
            if let Ok(definition) = definition {
                registry
                    .register(DynamicTool::new(definition, |_, _| async { ToolResult::text("ok") }))
                    .unwrap();
            }
        }
        let registry = Arc::new(registry);
        let answer = LocalRanker::default().answer(&intent, &SearchScope::all(&registry));
        prop_assert!(answer.candidates.len() <= 5);
        if let Some(selected) = &answer.selected {
            prop_assert_eq!(&answer.candidates[0].name, selected);
        }
    }
}
