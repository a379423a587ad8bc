//! `iris search "intent"`: the local ranker's candidates for an intent
//! among all the catalog's tools (eager ones too), with their scores and
//! coverage, whether one would be selected, and with `--explain` each
//! term's part in each score.

use clap::{Arg, ArgAction, Command};
use iris_tools::discovery::{Explanation, LocalRanker, SearchScope, TermSource};
use serde_json::{Value, json};

use crate::catalog::Catalog;
use crate::exit::Exit;
use crate::output::Out;

pub(crate) fn run(catalog: &Catalog, intent: &str, explain: bool, out: Out) -> Exit {
    let registry = catalog.agent.registry();
    let scope = SearchScope::every_tool(&registry);
    let answer = LocalRanker::default().answer(intent, &scope);
    let explanation = |name: &str| explain.then(|| scope.explain(intent, name)).flatten();
    if out.json {
        let candidates: Vec<Value> = answer
            .candidates
            .iter()
            .map(|c| {
                let mut candidate = json!({
                    "name": c.name.as_str(),
                    "score": c.score,
                    "coverage": c.coverage,
                    "summary": c.summary,
                });
                if let Some(explained) = explanation(c.name.as_str()) {
                    candidate["terms"] = json!(explained.terms);
                }
                candidate
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
        if let Some(explained) = explanation(candidate.name.as_str()) {
            out.line(&format!("    {}", terms_line(&explained)));
        }
    }
    if answer.selected.is_none() {
        out.note("none is selected: the first does not lead clearly enough, or matches too little of the intent");
    }
    Exit::Ok
}

/// The terms of an explanation on one line: `read +1.52 · file +0.61 ·
/// text ~+0.10 (related) · zzyzx (no tool has it)`.
pub(crate) fn terms_line(explained: &Explanation) -> String {
    explained
        .terms
        .iter()
        .map(|t| match t.source {
            TermSource::Query if t.gain > 0.0 => format!("{} +{:.2}", t.term, t.gain),
            TermSource::Query => format!("{} (missing)", t.term),
            TermSource::Related { weight } => {
                format!("{} +{:.2} (related, {weight:.1})", t.term, t.gain)
            }
            TermSource::Unseen => format!("{} (no tool has it)", t.term),
        })
        .collect::<Vec<_>>()
        .join(" · ")
}

/// The command's arguments.
pub(crate) fn command() -> Command {
    Command::new("search")
        .about("Rank the tools for an intent, as tool_search does")
        .arg(
            Arg::new("intent")
                .required(true)
                .value_name("INTENT")
                .help("What the model would search for, in words"),
        )
        .arg(
            Arg::new("explain")
                .long("explain")
                .action(ArgAction::SetTrue)
                .help("Show each term's part in each score"),
        )
        .args(crate::catalog::args())
}
