//! `iris search "intent"`: the local ranker's candidates for an intent
//! among all the catalog's tools (eager ones too), with their scores and
//! coverage, and whether one would be selected.

use iris_tools::discovery::{LocalRanker, SearchScope};
use serde_json::{Value, json};

use crate::catalog::Catalog;
use crate::exit::Exit;
use crate::output::Out;

pub(crate) fn run(catalog: &Catalog, intent: &str, out: Out) -> Exit {
    let registry = catalog.agent.registry();
    let answer = LocalRanker::default().answer(intent, &SearchScope::every_tool(&registry));
    if out.json {
        let candidates: Vec<Value> = answer
            .candidates
            .iter()
            .map(|c| {
                json!({
                    "name": c.name.as_str(),
                    "score": c.score,
                    "coverage": c.coverage,
                    "summary": c.summary,
                })
            })
            .collect();
        out.json(json!({
            "intent": intent,
            "selected": answer.selected.as_ref().map(iris_core::ToolName::as_str),
            "candidates": candidates,
        }));
        return Exit::Ok;
    }
    if answer.candidates.is_empty() {
        out.note(&format!("no tool matches {intent:?}"));
        return Exit::Ok;
    }
    for candidate in &answer.candidates {
        let mark = if answer.selected.as_ref() == Some(&candidate.name) {
            "selected"
        } else {
            ""
        };
        out.line(&format!(
            "{:<30} score {:>6}  coverage {:>5}  {mark}",
            candidate.name.as_str(),
            candidate
                .score
                .map_or_else(|| "-".to_owned(), |s| format!("{s:.2}")),
            candidate
                .coverage
                .map_or_else(|| "-".to_owned(), |c| format!("{:.0}%", c * 100.0)),
        ));
    }
    if answer.selected.is_none() {
        out.note("none is selected: the first does not lead clearly enough, or matches too little of the intent");
    }
    Exit::Ok
}
