//! Hooks the tests of model hooks share.

use iris::hooks::{HookInput, HookRegistration, ModelAfterAnswer};

/// A `model.after` hook named `name` that writes `[card]` over the test
/// card number 4111 1111 1111 1111 in an answer's text.
pub(crate) fn redacting_cards(name: &str) -> HookRegistration {
    HookRegistration::model_after(name, |input: &HookInput| {
        let text = input
            .answer
            .as_ref()
            .and_then(|a| a["text"].as_str())
            .unwrap_or("");
        if text.contains("4111") {
            ModelAfterAnswer::redact(text.replace("4111 1111 1111 1111", "[card]"))
        } else {
            ModelAfterAnswer::Accept
        }
    })
}
