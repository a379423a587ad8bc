//! `iris eval CASES.yaml`: how well the shipped ranker finds the right tool
//! for labelled requests, deterministic, with a gate against a baseline.
//!
//! ```yaml
//! cases:
//!   - request: count the words in this paragraph
//!     expect: [count_words]          # any of these is right
//!   - request: book me a flight to Oslo
//!     expect: []                     # no tool fits: nothing should load
//! ```
//!
//! Measured: top-1 and top-k of the ranking, top-1 as `tool_search`
//! selects, one-step availability (a right tool among what the first search
//! loads), schemas loaded per search, and for requests no tool fits how
//! often nothing loads; with the misses as a confusion table.

use clap::{Arg, ArgMatches, Command};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use iris_tools::discovery::{
    DEFAULT_BUDGET_TOKENS, DisclosurePolicy, LocalRanker, SearchScope, schema_tokens,
};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::catalog::Catalog;
use crate::exit::Exit;
use crate::output::Out;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Cases {
    cases: Vec<Case>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    request: String,
    expect: Vec<String>,
}

/// The figures one evaluation gives, as ratios of 0 to 1.
const FIGURES: [&str; 4] = ["top1", "topk", "selected", "available"];

pub(crate) struct Options<'a> {
    pub(crate) cases: &'a Path,
    /// A sentence encoder's model folder, to rank with it.
    pub(crate) encoder: Option<&'a Path>,
    pub(crate) k: usize,
    pub(crate) baseline: Option<&'a Path>,
    /// Points (0 to 100) a figure may fall below the baseline's.
    pub(crate) fail_under: f64,
}

/// The evaluation the command line asks for.
pub(crate) fn from_matches(sub: &ArgMatches, catalog: &Catalog, out: Out) -> Exit {
    let cases = sub
        .get_one::<String>("cases")
        .map(PathBuf::from)
        .unwrap_or_default();
    let baseline = sub.get_one::<String>("baseline").map(PathBuf::from);
    let encoder = sub.get_one::<String>("encoder").map(PathBuf::from);
    let options = Options {
        cases: &cases,
        encoder: encoder.as_deref(),
        k: sub.get_one::<usize>("k").copied().unwrap_or(5),
        baseline: baseline.as_deref(),
        fail_under: sub.get_one::<f64>("fail-under").copied().unwrap_or(0.0),
    };
    run(catalog, &options, out)
}

pub(crate) fn run(catalog: &Catalog, options: &Options<'_>, out: Out) -> Exit {
    let text = match iris_runtime::config::yaml::read_bounded(options.cases, "cases file") {
        Ok(text) => text,
        Err(why) => {
            return out.fail(
                Exit::Unreachable,
                &format!("`{}`: {why}", options.cases.display()),
            );
        }
    };
    let cases: Cases = match iris_runtime::config::yaml::from_str(&text, "cases file") {
        Ok(cases) => cases,
        Err(mut problem) => {
            problem.path = options.cases.to_path_buf();
            problem
                .message
                .push_str(" (expected `cases:` with `request:` and `expect: [tool, ...]` each)");
            return out.fail(Exit::Usage, &problem.to_string());
        }
    };
    let registry = catalog.agent.registry();
    let known: Vec<String> = registry
        .tools()
        .map(|t| t.definition_dyn().name().to_string())
        .collect();
    for (i, case) in cases.cases.iter().enumerate() {
        if let Some(unknown) = case.expect.iter().find(|name| !known.contains(name)) {
            let hint = super::schema::closest(unknown, &known)
                .map(|name| format!("; did you mean `{name}`?"))
                .unwrap_or_default();
            return out.fail(
                Exit::Usage,
                &format!("cases[{i}] expects `{unknown}`, which the catalog does not have{hint}"),
            );
        }
    }
    let scope = SearchScope::every_tool(&registry);
    let (scope, encoder_id) = match options.encoder {
        None => (scope, None),
        Some(folder) => match with_encoder(scope, folder) {
            Ok(encoded) => encoded,
            Err((exit, why)) => return out.fail(exit, &why),
        },
    };
    let mut report = measure(&cases.cases, &scope, options.k, |name| {
        registry
            .resolve(name)
            .map_or(0, |t| schema_tokens(t.definition_dyn()))
    });
    report["encoder"] = json!(encoder_id);
    let regressions = match options.baseline {
        None => Vec::new(),
        Some(path) => match baseline_of(path) {
            Ok(baseline) => regressions(&report, &baseline, options.fail_under),
            Err(why) => return out.fail(Exit::Usage, &why),
        },
    };
    if out.json {
        let mut value = report.clone();
        value["regressions"] = json!(regressions);
        out.json(value);
    } else {
        print_text(&report, options.k, out);
        for regression in &regressions {
            out.note(&format!("regression: {regression}"));
        }
    }
    if regressions.is_empty() {
        Exit::Ok
    } else {
        Exit::Regression
    }
}

/// The evaluation of `cases` as JSON: the figures, the per-case outcome
/// and the confusion table.
#[allow(
    clippy::cast_precision_loss,
    reason = "ratios of counts far below 2^52"
)]
fn measure(
    cases: &[Case],
    scope: &SearchScope<'_>,
    k: usize,
    tokens_of: impl Fn(&str) -> usize,
) -> Value {
    let ranker = LocalRanker::default();
    let policy = if scope.has_encoder() {
        DisclosurePolicy::with_encoder()
    } else {
        DisclosurePolicy::default()
    };
    let (mut top1, mut in_top_k, mut selected, mut available) = (0_usize, 0, 0, 0);
    let (mut fits, mut none, mut none_quiet) = (0_usize, 0, 0);
    let mut loads: Vec<usize> = Vec::new();
    let mut confusion: BTreeMap<(String, String), usize> = BTreeMap::new();
    let mut outcomes = Vec::new();
    for case in cases {
        let ranking = ranker.rank(&case.request, scope, k.max(1));
        let answer = ranker.answer(&case.request, scope);
        let loaded: Vec<String> = policy
            .first_search(
                &answer,
                |name| tokens_of(name.as_str()),
                DEFAULT_BUDGET_TOKENS,
            )
            .into_iter()
            .map(|(name, _)| name.to_string())
            .collect();
        loads.push(loaded.len());
        let first = ranking.candidates.first().map(|c| c.name.to_string());
        let right = |name: &String| case.expect.contains(name);
        if case.expect.is_empty() {
            none += 1;
            none_quiet += usize::from(loaded.is_empty());
        } else {
            fits += 1;
            top1 += usize::from(first.as_ref().is_some_and(right));
            in_top_k += usize::from(
                ranking
                    .candidates
                    .iter()
                    .any(|c| right(&c.name.to_string())),
            );
            selected += usize::from(
                answer
                    .selected
                    .as_ref()
                    .is_some_and(|s| right(&s.to_string())),
            );
            available += usize::from(loaded.iter().any(right));
            if !first.as_ref().is_some_and(right) {
                let got = first.clone().unwrap_or_else(|| "(nothing)".to_owned());
                *confusion.entry((case.expect[0].clone(), got)).or_default() += 1;
            }
        }
        outcomes.push(json!({
            "request": case.request,
            "expect": case.expect,
            "first": first,
            "selected": answer.selected.as_ref().map(ToString::to_string),
            "loaded": loaded,
        }));
    }
    let ratio = |n: usize, of: usize| {
        if of == 0 {
            Value::Null
        } else {
            json!(round(n as f64 / of as f64))
        }
    };
    loads.sort_unstable();
    let p95 = loads
        .get((loads.len() * 95).div_ceil(100).saturating_sub(1))
        .copied()
        .unwrap_or(0);
    let mean_loaded = if loads.is_empty() {
        0.0
    } else {
        loads.iter().sum::<usize>() as f64 / loads.len() as f64
    };
    json!({
        "cases": cases.len(),
        "k": k,
        "figures": {
            "top1": ratio(top1, fits),
            "topk": ratio(in_top_k, fits),
            "selected": ratio(selected, fits),
            "available": ratio(available, fits),
            "nothing_loaded_when_none_fits": ratio(none_quiet, none),
            "mean_schemas_loaded": round(mean_loaded),
            "p95_schemas_loaded": p95,
        },
        "confusion": confusion
            .into_iter()
            .map(|((expected, got), count)| json!({"expected": expected, "got": got, "count": count}))
            .collect::<Vec<_>>(),
        "outcomes": outcomes,
    })
}

/// `scope` with its tools encoded by the model in `folder`, and the
/// encoder's id; or the exit and message when it cannot be.
#[cfg(feature = "encoder")]
fn with_encoder<'a>(
    scope: SearchScope<'a>,
    folder: &Path,
) -> Result<(SearchScope<'a>, Option<String>), (Exit, String)> {
    use iris_tools::discovery::TextEncoder as _;
    let encoder = iris_encoder::SentenceEncoder::from_folder(folder)
        .map_err(|e| (Exit::Usage, format!("--encoder: {e}")))?;
    let id = encoder.id().to_owned();
    let scope = scope
        .with_encoder(std::sync::Arc::new(encoder))
        .map_err(|e| (Exit::Unreachable, format!("--encoder: {e}")))?;
    Ok((scope, Some(id)))
}

#[cfg(not(feature = "encoder"))]
fn with_encoder<'a>(
    _scope: SearchScope<'a>,
    _folder: &Path,
) -> Result<(SearchScope<'a>, Option<String>), (Exit, String)> {
    Err((
        Exit::Usage,
        "--encoder: this iris was built without the sentence encoder; install it with `cargo install iris-sdk-cli --features encoder`".to_owned(),
    ))
}

fn round(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

fn baseline_of(path: &Path) -> Result<Value, String> {
    let program = crate::output::program();
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("the baseline `{}`: {e}", path.display()))?;
    let value: Value = serde_json::from_str(&text).map_err(|e| {
        format!(
            "the baseline `{}` is not JSON ({e}); write one with `{program} eval CASES --json > {}`",
            path.display(),
            path.display()
        )
    })?;
    if value.get("figures").is_none() {
        return Err(format!(
            "the baseline `{}` has no `figures`; write one with `{program} eval CASES --json`",
            path.display()
        ));
    }
    Ok(value)
}

/// Each figure that fell more than `points` below the baseline's.
fn regressions(report: &Value, baseline: &Value, points: f64) -> Vec<String> {
    FIGURES
        .iter()
        .filter_map(|figure| {
            let now = report["figures"][figure].as_f64()?;
            let before = baseline["figures"][figure].as_f64()?;
            let drop = (before - now) * 100.0;
            (drop > points + 1e-9).then(|| {
                format!("{figure} fell from {before:.3} to {now:.3} ({drop:.1} points; at most {points} allowed)")
            })
        })
        .collect()
}

fn print_text(report: &Value, k: usize, out: Out) {
    let figures = &report["figures"];
    let shown = |key: &str| {
        figures[key]
            .as_f64()
            .map_or_else(|| "-".to_owned(), |v| format!("{:.1}%", v * 100.0))
    };
    out.line(&format!("cases                      {}", report["cases"]));
    if let Some(encoder) = report["encoder"].as_str() {
        out.line(&format!("encoder                    {encoder}"));
    }
    out.line(&format!("top-1                      {}", shown("top1")));
    out.line(&format!("top-{k:<2}                     {}", shown("topk")));
    out.line(&format!("selected right             {}", shown("selected")));
    out.line(&format!(
        "available after one search {}",
        shown("available")
    ));
    out.line(&format!(
        "schemas loaded per search  {} mean, {} at p95",
        figures["mean_schemas_loaded"], figures["p95_schemas_loaded"]
    ));
    out.line(&format!(
        "nothing loaded, none fits  {}",
        shown("nothing_loaded_when_none_fits")
    ));
    let confusion = report["confusion"].as_array().cloned().unwrap_or_default();
    if !confusion.is_empty() {
        out.line("");
        out.line("EXPECTED                        RANKED FIRST                    COUNT");
        for row in confusion {
            out.line(&format!(
                "{:<32}{:<32}{}",
                row["expected"].as_str().unwrap_or_default(),
                row["got"].as_str().unwrap_or_default(),
                row["count"]
            ));
        }
    }
}

/// The command's arguments.
pub(crate) fn command() -> Command {
    Command::new("eval")
        .about("Measure how well searches find the right tool for labelled requests")
        .arg(
            Arg::new("cases")
                .required(true)
                .value_name("CASES.yaml")
                .help(
                    "Requests with the tools that fit them: `cases: [{request, expect: [tool]}]`",
                ),
        )
        .arg(
            Arg::new("k")
                .long("k")
                .value_name("K")
                .default_value("5")
                .value_parser(clap::value_parser!(usize))
                .help("Candidates counted for top-k"),
        )
        .arg(
            Arg::new("encoder")
                .long("encoder")
                .value_name("MODEL_DIR")
                .help("Rank with a sentence encoder too: a sentence-transformers model folder (config.json, tokenizer.json, model.safetensors)"),
        )
        .arg(
            Arg::new("baseline")
                .long("baseline")
                .value_name("FILE")
                .help("An earlier `iris eval --json`: fail (exit 8) when a figure falls below it"),
        )
        .arg(
            Arg::new("fail-under")
                .long("fail-under")
                .value_name("POINTS")
                .default_value("0")
                .value_parser(clap::value_parser!(f64))
                .help("Points (0 to 100) a figure may fall below the baseline"),
        )
        .args(crate::catalog::args())
}
