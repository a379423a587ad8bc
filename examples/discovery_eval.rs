//! Measures the local `tool_search` ranker on a labelled set, next to plain
//! BM25 over names and descriptions.
//!
//! ```sh
//! cargo run --release --example discovery_eval                       # the sample in tests/data/metatool
//! cargo run --release --example discovery_eval -- --data ../shared/eval/metatool
//! ```
//!
//! The set is JSON Lines: `catalog.jsonl` (`name`, `description`),
//! `queries.jsonl` (`query` with `gold` or `gold_any`) and optionally
//! `multi.jsonl` (`query` with `gold_all`). Printed per ranker: top-1
//! accuracy, recall@5, macro top-1 (mean over tools), and for two-tool
//! requests the share with both tools in the first five. For "none": every
//! `--holdout`-th tool (10th by default) is removed from the catalog and its
//! requests are asked again; the share answered with no selection is the
//! none-rate. Options: `--limit N` evaluates the first N requests only;
//! `--min-coverage X` and `--min-lead Y` try another selection rule.
#![allow(
    clippy::print_stdout,
    clippy::cast_precision_loss,
    reason = "an evaluation command prints ratios"
)]

use std::collections::{BTreeMap, HashMap, HashSet};
use std::error::Error;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use iris::runtime::discovery::{LocalRanker, SearchScope, SelectionRule};
use iris::serde::Deserialize;
use iris::{DynamicTool, Exposure, ToolDefinition, ToolName, ToolRegistry, ToolResult};

#[derive(Deserialize)]
#[serde(crate = "iris::serde")]
struct CatalogEntry {
    name: String,
    description: String,
}

#[derive(Deserialize)]
#[serde(crate = "iris::serde")]
struct Query {
    #[allow(
        clippy::struct_field_names,
        reason = "the field is named as in the data files"
    )]
    query: String,
    gold: Option<String>,
    #[serde(default)]
    gold_any: Vec<String>,
    #[serde(default)]
    gold_all: Vec<String>,
}

impl Query {
    fn golds(&self) -> Vec<&str> {
        let mut golds: Vec<&str> = self.gold.iter().map(String::as_str).collect();
        golds.extend(self.gold_any.iter().map(String::as_str));
        golds
    }
}

struct Options {
    data: PathBuf,
    limit: usize,
    holdout: usize,
    rule: SelectionRule,
}

fn options() -> Result<Options, Box<dyn Error>> {
    let mut options = Options {
        data: Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/metatool"),
        limit: usize::MAX,
        holdout: 10,
        rule: SelectionRule::default(),
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args.next().ok_or(format!("`{flag}` needs a value"))?;
        match flag.as_str() {
            "--data" => options.data = value.into(),
            "--limit" => options.limit = value.parse()?,
            "--holdout" => options.holdout = value.parse::<usize>()?.max(2),
            "--min-coverage" => options.rule.min_coverage = value.parse()?,
            "--min-lead" => options.rule.min_lead = value.parse()?,
            other => {
                return Err(format!(
                    "unknown option `{other}`; expected --data, --limit, --holdout, --min-coverage or --min-lead"
                )
                .into());
            }
        }
    }
    Ok(options)
}

fn read_jsonl<T: for<'de> Deserialize<'de>>(path: &Path) -> Result<Vec<T>, Box<dyn Error>> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .enumerate()
        .map(|(i, line)| {
            iris::serde_json::from_str(line)
                .map_err(|e| format!("{}:{}: {e}", path.display(), i + 1).into())
        })
        .collect()
}

/// A registry of deferred catalog tools (and nothing else to rank).
fn registry_of(
    catalog: &[CatalogEntry],
    skip: &HashSet<&str>,
) -> Result<ToolRegistry, Box<dyn Error>> {
    let mut registry = ToolRegistry::new();
    for entry in catalog.iter().filter(|e| !skip.contains(e.name.as_str())) {
        let definition = ToolDefinition::builder(
            ToolName::new(entry.name.clone())?,
            entry.description.clone(),
        )
        .exposure(Exposure::Deferred)
        .build()?;
        registry.register(DynamicTool::new(definition, |_, _| async {
            ToolResult::text("ok")
        }))?;
    }
    Ok(registry)
}

/// Plain BM25 (k1 1.2, b 0.75) over the name split at `_` and the
/// description, lowercase alphanumeric words, no stemming or stop words.
struct PlainBm25 {
    names: Vec<String>,
    docs: Vec<HashMap<String, f64>>,
    lengths: Vec<f64>,
    idf: HashMap<String, f64>,
    average: f64,
}

fn words(text: &str) -> Vec<String> {
    text.to_lowercase()
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect()
}

impl PlainBm25 {
    fn new(catalog: &[CatalogEntry]) -> Self {
        let mut docs = Vec::new();
        let mut lengths = Vec::new();
        let mut df: HashMap<String, f64> = HashMap::new();
        for entry in catalog {
            let tokens = words(&format!(
                "{} {}",
                entry.name.replace('_', " "),
                entry.description
            ));
            let mut tf: HashMap<String, f64> = HashMap::new();
            for t in &tokens {
                *tf.entry(t.clone()).or_default() += 1.0;
            }
            for t in tf.keys() {
                *df.entry(t.clone()).or_default() += 1.0;
            }
            lengths.push(tokens.len() as f64);
            docs.push(tf);
        }
        let n = catalog.len() as f64;
        let idf = df
            .into_iter()
            .map(|(t, d)| (t, (1.0 + (n - d + 0.5) / (d + 0.5)).ln()))
            .collect();
        let average = lengths.iter().sum::<f64>() / n;
        Self {
            names: catalog.iter().map(|e| e.name.clone()).collect(),
            docs,
            lengths,
            idf,
            average,
        }
    }

    fn top(&self, query: &str, k: usize) -> Vec<&str> {
        let (k1, b) = (1.2, 0.75);
        let terms = words(query);
        let mut scored: Vec<(f64, usize)> = self
            .docs
            .iter()
            .enumerate()
            .map(|(i, tf)| {
                let score = terms
                    .iter()
                    .filter_map(|t| Some((tf.get(t)?, self.idf.get(t)?)))
                    .map(|(f, idf)| {
                        idf * f * (k1 + 1.0)
                            / (f + k1 * (1.0 - b + b * self.lengths[i] / self.average))
                    })
                    .sum();
                (score, i)
            })
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        scored
            .iter()
            .take(k)
            .map(|&(_, i)| self.names[i].as_str())
            .collect()
    }
}

#[derive(Default)]
struct Tally {
    requests: usize,
    top1: usize,
    recall5: usize,
    per_tool: BTreeMap<String, (usize, usize)>,
    multi: usize,
    multi_both: usize,
    multi_needed: usize,
    multi_found: usize,
}

impl Tally {
    fn single(&mut self, golds: &[&str], ranked: &[&str]) {
        self.requests += 1;
        let hit = ranked.first().is_some_and(|top| golds.contains(top));
        self.top1 += usize::from(hit);
        self.recall5 += usize::from(ranked.iter().take(5).any(|r| golds.contains(r)));
        let entry = self.per_tool.entry(golds[0].to_owned()).or_default();
        entry.0 += 1;
        entry.1 += usize::from(hit);
    }

    fn multi(&mut self, golds: &[String], ranked: &[&str]) {
        let found = golds
            .iter()
            .filter(|g| ranked.iter().take(5).any(|r| r == g))
            .count();
        self.multi += 1;
        self.multi_both += usize::from(found == golds.len());
        self.multi_needed += golds.len();
        self.multi_found += found;
    }

    fn print(&self, label: &str) {
        let ratio = |a: usize, b: usize| a as f64 / b.max(1) as f64;
        let macro_top1 = self
            .per_tool
            .values()
            .map(|&(n, hit)| ratio(hit, n))
            .sum::<f64>()
            / self.per_tool.len().max(1) as f64;
        println!(
            "{label:<13} top-1 {:.3}  recall@5 {:.3}  macro top-1 {macro_top1:.3}  ({} requests)",
            ratio(self.top1, self.requests),
            ratio(self.recall5, self.requests),
            self.requests
        );
        if self.multi > 0 {
            println!(
                "{:<13} two-tool requests: both in top 5 {:.3}, needed tools found {:.3}  ({} requests)",
                "",
                ratio(self.multi_both, self.multi),
                ratio(self.multi_found, self.multi_needed),
                self.multi
            );
        }
    }
}

fn main() -> Result<(), Box<dyn Error>> {
    let options = options()?;
    let catalog: Vec<CatalogEntry> = read_jsonl(&options.data.join("catalog.jsonl"))?;
    let mut queries: Vec<Query> = read_jsonl(&options.data.join("queries.jsonl"))?;
    queries.truncate(options.limit);
    let multi_path = options.data.join("multi.jsonl");
    let mut multi: Vec<Query> = if multi_path.exists() {
        read_jsonl(&multi_path)?
    } else {
        Vec::new()
    };
    multi.truncate(options.limit);

    let registry = Arc::new(registry_of(&catalog, &HashSet::new())?);
    let scope = SearchScope::all(&registry);
    let bm25 = PlainBm25::new(&catalog);
    let local = LocalRanker::with_rule(options.rule);
    let (mut ours, mut plain) = (Tally::default(), Tally::default());
    let (mut selected, mut selected_right) = (0, 0);
    for query in &queries {
        let golds = query.golds();
        let answer = local.answer(&query.query, &scope);
        let names: Vec<&str> = answer.candidates.iter().map(|c| c.name.as_str()).collect();
        ours.single(&golds, &names);
        plain.single(&golds, &bm25.top(&query.query, 5));
        if let Some(name) = &answer.selected {
            selected += 1;
            selected_right += usize::from(golds.contains(&name.as_str()));
        }
    }
    for query in &multi {
        let answer = local.answer(&query.query, &scope);
        let names: Vec<&str> = answer.candidates.iter().map(|c| c.name.as_str()).collect();
        ours.multi(&query.gold_all, &names);
        plain.multi(&query.gold_all, &bm25.top(&query.query, 5));
    }

    // None: requests whose tool is not in the catalog.
    let held_out: HashSet<&str> = catalog
        .iter()
        .enumerate()
        .filter(|(i, _)| i % options.holdout == options.holdout - 1)
        .map(|(_, e)| e.name.as_str())
        .collect();
    let reduced = Arc::new(registry_of(&catalog, &held_out)?);
    let reduced_scope = SearchScope::all(&reduced);
    let orphans: Vec<&Query> = queries
        .iter()
        .filter(|q| q.golds().iter().all(|g| held_out.contains(g)))
        .collect();
    let none = orphans
        .iter()
        .filter(|q| local.answer(&q.query, &reduced_scope).selected.is_none())
        .count();

    println!("data: {} ({} tools)", options.data.display(), catalog.len());
    plain.print("plain BM25");
    ours.print("iris local");
    let ratio = |a: usize, b: usize| a as f64 / b.max(1) as f64;
    println!(
        "iris local    selection: made for {:.3} of requests, right {:.3} of the time",
        ratio(selected, queries.len()),
        ratio(selected_right, selected)
    );
    println!(
        "iris local    none-rate on requests whose tool was held out: {:.3}  ({} requests, {} of {} tools held out)",
        ratio(none, orphans.len()),
        orphans.len(),
        held_out.len(),
        catalog.len()
    );
    Ok(())
}
