//! For random contents and edits, `edit_file` either applies exactly the
//! requested change or reports an error and leaves the file untouched.

use crate::files;

use files::Workspace;
use proptest::prelude::*;
use serde_json::json;

/// What the edit should do, worked out independently of the tool.
fn expected(content: &str, old: &str, new: &str, replace_all: bool, read: bool) -> Option<String> {
    if !read || old.is_empty() || old == new {
        return None;
    }
    match content.matches(old).count() {
        0 => None,
        1 => Some(content.replacen(old, new, 1)),
        _ if replace_all => Some(content.replace(old, new)),
        _ => None,
    }
}

fn text() -> impl Strategy<Value = String> {
    proptest::string::string_regex("[ab \n]{0,40}").unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn edits_apply_exactly_or_change_nothing(
        content in text(),
        old in proptest::string::string_regex("[ab \n]{0,4}").unwrap(),
        new in text(),
        replace_all in any::<bool>(),
        read in prop::bool::weighted(0.85),
    ) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let ws = Workspace::new();
        ws.write("f.txt", &content);
        let (result, after) = runtime.block_on(async {
            if read {
                ws.call("read_file", json!({"path": "f.txt"})).await;
            }
            let result = ws
                .call(
                    "edit_file",
                    json!({"path": "f.txt", "old_string": old, "new_string": new, "replace_all": replace_all}),
                )
                .await;
            (result, ws.read("f.txt"))
        });
        if let Some(want) = expected(&content, &old, &new, replace_all, read) {
            prop_assert!(!result.is_error(), "{}", result.text_content());
            prop_assert_eq!(after, want);
        } else {
            prop_assert!(result.is_error(), "expected a refusal, got {}", result.text_content());
            prop_assert_eq!(after, content);
        }
    }
}
