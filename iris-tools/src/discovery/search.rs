//! One `tool_search` call: the intents checked, answered by the backend,
//! the chosen tools loaded within the budget, and the answer the model
//! reads. The only place a run's disclosure grows.

use std::fmt::Write as _;

use super::service::{Disclosure, Discovery};
use super::{
    IntentAnswer, MAX_INTENT_CHARS, MAX_INTENTS, SearchScope, candidate_of, schema_tokens,
};

use iris_core::{RunId, ToolContext, ToolErrorKind, ToolName, ToolResult};
use serde_json::{Value, json};

use iris_runtime::ToolRegistry;

impl Discovery {
    /// The body of `tool_search`: the only place disclosure grows.
    pub(crate) async fn search(&self, cx: &ToolContext, intents: Vec<String>) -> ToolResult {
        if let Err(message) = check_intents(&intents) {
            return ToolResult::error(ToolErrorKind::InvalidArguments, message);
        }
        // Long intents are ranked on a bounded prefix rather than refused.
        let shortened: Vec<bool> = intents.iter().map(|i| bounded(i).is_some()).collect();
        let intents: Vec<String> = intents
            .into_iter()
            .map(|intent| bounded(&intent).unwrap_or(intent))
            .collect();
        let allowed = self
            .ledger
            .read_slot(cx.run_id(), |s: &Disclosure| s.allowed.clone())
            .flatten();
        let indexed = self.indexed();
        let scope = SearchScope {
            registry: &indexed.registry,
            index: std::borrow::Cow::Borrowed(&indexed.index),
            allowed: allowed.as_deref().map(std::borrow::Cow::Borrowed),
            eager_too: false,
        };

        // Exact names answer themselves; the rest go to the backend.
        let mut answers: Vec<Option<IntentAnswer>> = intents
            .iter()
            .map(|intent| exact_answer(intent, &scope))
            .collect();
        let open: Vec<String> = intents
            .iter()
            .zip(&answers)
            .filter(|(_, a)| a.is_none())
            .map(|(i, _)| i.clone())
            .collect();
        let mut metadata = None;
        if !open.is_empty() {
            match self.backend.search(&open, &scope).await {
                Ok(answer) => {
                    metadata = answer.metadata;
                    let mut backend_answers = answer.intents.into_iter();
                    for slot in answers.iter_mut().filter(|a| a.is_none()) {
                        *slot = backend_answers.next();
                    }
                }
                Err(failure) => {
                    let mut result = ToolResult::error(
                        ToolErrorKind::Execution,
                        format!("tool_search failed: {}", failure.message),
                    );
                    if let Some((key, value)) = failure.metadata {
                        result = result.with_stat(key, value);
                    }
                    return result;
                }
            }
        }
        let answers: Vec<IntentAnswer> = answers
            .into_iter()
            .zip(&intents)
            .map(|(answer, intent)| {
                let mut answer = answer.unwrap_or_else(|| IntentAnswer {
                    intent: intent.clone(),
                    selected: None,
                    candidates: Vec::new(),
                });
                // Whatever a backend says, only the scope's tools count.
                answer.selected = answer.selected.filter(|n| scope.contains(n.as_str()));
                answer
                    .candidates
                    .retain(|c| scope.contains(c.name.as_str()));
                answer
            })
            .collect();

        let loading = self.disclose(cx.run_id(), &answers, &indexed.registry);
        let text = describe(&answers, &shortened, &loading, self.budget_tokens);
        let shortened: Vec<usize> = shortened
            .iter()
            .enumerate()
            .filter(|(_, cut)| **cut)
            .map(|(i, _)| i + 1)
            .collect();
        let mut result = ToolResult::text(text).with_data(json!({
            "intents": answers,
            "shortened_intents": shortened,
            "loaded": loading.loaded,
            "already_loaded": loading.already,
            "not_loaded": loading.not_loaded,
            "backend": self.backend.name(),
        }));
        if let Some((key, value)) = metadata {
            result = result.with_stat(key, value);
        }
        result
    }

    /// Adds what each intent loads to the run's disclosure, intent by
    /// intent, while it fits this search's share of the budget and the
    /// budget.
    fn disclose(&self, run: &RunId, answers: &[IntentAnswer], registry: &ToolRegistry) -> Loading {
        let mut loading = Loading::default();
        let mut wanted: Vec<&ToolName> = Vec::new();
        for name in answers.iter().flat_map(|a| self.policy_for(a).to_load(a)) {
            if !wanted.contains(&name) {
                wanted.push(name);
            }
        }
        let search_tokens = self.policy.search_tokens(self.budget_tokens);
        self.ledger.with_slot(run, |state: &mut Disclosure| {
            let mut used: usize = state.disclosed.iter().map(|(_, t)| t).sum();
            let mut this_search = 0_usize;
            for name in wanted {
                if state.disclosed.iter().any(|(n, _)| n == name) {
                    if !loading.already.contains(name) {
                        loading.already.push(name.clone());
                    }
                    continue;
                }
                let Some(tool) = registry.resolve(name.as_str()) else {
                    continue;
                };
                let tokens = schema_tokens(tool.definition_dyn());
                let selected = answers.iter().any(|a| a.selected.as_ref() == Some(name));
                // A candidate loaded without a selection stays within the
                // search's share; a selection only within the budget.
                if !selected && this_search + tokens > search_tokens {
                    continue;
                }
                if used + tokens <= self.budget_tokens {
                    used += tokens;
                    this_search += tokens;
                    state.disclosed.push((name.clone(), tokens));
                    loading.loaded.push(name.clone());
                } else {
                    loading.not_loaded.push(json!({
                        "name": name,
                        "tokens": tokens,
                        "budget_left": self.budget_tokens.saturating_sub(used),
                        "reason": format!(
                            "its schema needs about {tokens} tokens and {} of the {}-token budget are left",
                            self.budget_tokens.saturating_sub(used),
                            self.budget_tokens
                        ),
                    }));
                }
            }
        });
        loading
    }
}

#[derive(Debug, Default)]
struct Loading {
    loaded: Vec<ToolName>,
    already: Vec<ToolName>,
    not_loaded: Vec<Value>,
}

fn check_intents(intents: &[String]) -> Result<(), String> {
    if intents.is_empty() || intents.len() > MAX_INTENTS {
        return Err(format!(
            "give 1 to {MAX_INTENTS} intents, one per separate need; got {}",
            intents.len()
        ));
    }
    for (i, intent) in intents.iter().enumerate() {
        if intent.trim().is_empty() {
            return Err(format!(
                "intent {} is empty; say what the tool should do",
                i + 1
            ));
        }
    }
    Ok(())
}

/// `intent` cut to its first [`MAX_INTENT_CHARS`] characters, at the last
/// word boundary before them when there is one; `None` when it fits.
fn bounded(intent: &str) -> Option<String> {
    let (cut, _) = intent.char_indices().nth(MAX_INTENT_CHARS)?;
    let head = &intent[..cut];
    let at_word = head
        .rfind(char::is_whitespace)
        .filter(|&space| space > cut / 2)
        .map_or(head, |space| &head[..space]);
    Some(at_word.trim_end().to_owned())
}

fn exact_answer(intent: &str, scope: &SearchScope<'_>) -> Option<IntentAnswer> {
    let tool = scope.registry().resolve(intent.trim())?;
    let definition = tool.definition_dyn();
    if !scope.contains(definition.name().as_str()) {
        return None;
    }
    Some(IntentAnswer {
        intent: intent.to_owned(),
        selected: Some(definition.name().clone()),
        candidates: vec![candidate_of(definition)],
    })
}

/// The short text the model reads.
fn describe(
    answers: &[IntentAnswer],
    shortened: &[bool],
    loading: &Loading,
    budget: usize,
) -> String {
    let mut out = String::new();
    for (i, answer) in answers.iter().enumerate() {
        let _ = write!(
            out,
            "{}. \"{}\": ",
            i + 1,
            iris_core::text::clip(&answer.intent, 80)
        );
        if shortened.get(i).copied().unwrap_or(false) {
            let _ = write!(out, "(ranked on its first {MAX_INTENT_CHARS} characters) ");
        }
        let closest: Vec<String> = answer
            .candidates
            .iter()
            .filter(|c| loading.loaded.contains(&c.name))
            .map(|c| format!("`{}`", c.name))
            .collect();
        match &answer.selected {
            Some(name) => {
                let _ = write!(out, "selected `{name}`");
            }
            None if !closest.is_empty() => {
                let _ = write!(
                    out,
                    "no single tool stands out, so the closest were loaded: {}",
                    closest.join(", ")
                );
            }
            None => out.push_str("no tool selected"),
        }
        let others: Vec<String> = answer
            .candidates
            .iter()
            .filter(|c| {
                Some(&c.name) != answer.selected.as_ref() && !loading.loaded.contains(&c.name)
            })
            .map(|c| match c.score {
                Some(score) => format!(
                    "`{}` ({score:.2}): {}",
                    c.name,
                    iris_core::text::clip(&c.summary, 80)
                ),
                None => format!("`{}`: {}", c.name, iris_core::text::clip(&c.summary, 80)),
            })
            .collect();
        if !others.is_empty() {
            let _ = write!(out, "; other candidates: {}", others.join("; "));
        }
        out.push('\n');
    }
    if !loading.loaded.is_empty() {
        let names: Vec<String> = loading.loaded.iter().map(|n| format!("`{n}`")).collect();
        let _ = writeln!(
            out,
            "Loaded for your next request: {}. Call them then with the schema they come with.",
            names.join(", ")
        );
    }
    if !loading.already.is_empty() {
        let names: Vec<String> = loading.already.iter().map(|n| format!("`{n}`")).collect();
        let _ = writeln!(out, "Already available: {}.", names.join(", "));
    }
    for skipped in &loading.not_loaded {
        let _ = writeln!(
            out,
            "Not loaded: `{}`: {} (budget {budget} tokens). Narrow the search, or work with what is loaded.",
            skipped["name"].as_str().unwrap_or_default(),
            skipped["reason"].as_str().unwrap_or_default()
        );
    }
    if answers.iter().all(|a| a.selected.is_none()) && loading.loaded.is_empty() {
        out.push_str("Nothing was selected: rephrase an intent with the words a tool description would use, or name a candidate exactly.\n");
    }
    out.truncate(out.trim_end().len());
    out
}
