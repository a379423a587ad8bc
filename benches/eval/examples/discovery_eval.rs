//! Measures the local `tool_search` ranker on a labelled set, next to plain
//! BM25 over the same names and descriptions, on two fixed halves of the
//! catalog: tune on one, report the other.
//!
//! ```sh
//! cargo run -p iris-eval --release --example discovery_eval                       # the sample in tests/data/metatool
//! cargo run -p iris-eval --release --example discovery_eval -- --data ../shared/eval/metatool
//! cargo run -p iris-eval --release --example discovery_eval -- --data ../shared/eval/metatool --calibrate
//! ```
//!
//! The set is JSON Lines: `catalog.jsonl` (`name`, `description`),
//! `queries.jsonl` (`query` with `gold` or `gold_any`) and optionally
//! `multi.jsonl` (`query` with `gold_all`).
//!
//! The halves: the catalog's tools sorted by name, every other one to the
//! tuning half, the rest to validation; a request belongs to the half of its
//! (first) right tool. Every request is ranked against the whole catalog.
//! Printed per half and ranker: top-1 of the ranking; top-1 as `tool_search`
//! selects (a request with no selection counts as a miss); how often a
//! selection is made (coverage) and how often it is right (precision);
//! recall@5; macro top-1 (mean over tools); the none-rate (every
//! `--holdout`-th tool of the half, 10th by default, is removed from the
//! catalog and its requests asked again: the share answered with no
//! selection); and for two-tool requests within the half, the share with
//! both tools in the first five.
//!
//! Options: `--limit N` evaluates the first N requests only;
//! `--min-coverage X` and `--min-confidence Y` try another selection rule;
//! `--failures N` prints N requests of the tuning half whose right tool was
//! not ranked first (a sample every so many, to look for classes);
//! `--calibrate` searches the rule with the most coverage at a precision of
//! 0.90 or more on the tuning half, and reports it on both; `--dump FILE`
//! writes every request's whole ranking (name, score, coverage per tool)
//! as JSON Lines, for measuring another signal beside the ranker's
//! (`benches/eval/meaning/measure.py` reads it).
#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    clippy::cast_precision_loss,
    reason = "an evaluation command prints ratios, and its progress on stderr"
)]

use std::collections::{BTreeMap, HashMap, HashSet};
use std::error::Error;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use iris::definition::{Exposure, ToolDefinition, ToolName};
use iris::discovery::{
    DEFAULT_BUDGET_TOKENS, DisclosurePolicy, LocalRanker, SearchScope, SelectionRule, schema_tokens,
};

#[path = "discovery_eval/kept_vectors.rs"]
mod kept_vectors;
use iris::serde::Deserialize;
use iris::tool::DynamicTool;
use iris::{ToolRegistry, ToolResult};
use kept_vectors::KeptVectors;

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
    #[serde(default)]
    id: String,
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
        golds.extend(self.gold_all.iter().map(String::as_str));
        golds
    }
}

struct Options {
    data: PathBuf,
    limit: usize,
    holdout: usize,
    rule: SelectionRule,
    calibrate: bool,
    failures: usize,
    dump: Option<PathBuf>,
    /// A sentence encoder's model folder: the evaluation is then made a
    /// second time with the encoder.
    encoder: Option<PathBuf>,
    /// Where request and tool vectors are kept between runs.
    vectors: Option<PathBuf>,
}

fn options() -> Result<Options, Box<dyn Error>> {
    let mut options = Options {
        data: Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/metatool"),
        limit: usize::MAX,
        holdout: 10,
        rule: SelectionRule::default(),
        calibrate: false,
        failures: 0,
        dump: None,
        encoder: None,
        vectors: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        if flag == "--calibrate" {
            options.calibrate = true;
            continue;
        }
        let value = args.next().ok_or(format!("`{flag}` needs a value"))?;
        match flag.as_str() {
            "--data" => options.data = value.into(),
            "--limit" => options.limit = value.parse()?,
            "--holdout" => options.holdout = value.parse::<usize>()?.max(2),
            "--min-coverage" => options.rule.min_coverage = value.parse()?,
            "--min-confidence" => options.rule.min_confidence = value.parse()?,
            "--failures" => options.failures = value.parse()?,
            "--dump" => options.dump = Some(value.into()),
            "--encoder" => options.encoder = Some(value.into()),
            "--vectors" => options.vectors = Some(value.into()),
            other => {
                return Err(format!(
                    "unknown option `{other}`; expected --data, --limit, --holdout, --min-coverage, --min-confidence, --failures, --dump, --encoder, --vectors or --calibrate"
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
            .filter(|&(score, _)| score > 0.0)
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        scored
            .iter()
            .take(k)
            .map(|&(_, i)| self.names[i].as_str())
            .collect()
    }
}

/// What the selection rule sees of one request, kept to try other rules.
#[derive(Clone, Copy)]
struct Seen {
    top: f32,
    second: Option<f32>,
    coverage: f32,
    similarity: Option<f32>,
    top_right: bool,
}

/// What one search could load for a request: its first candidates (score
/// and coverage as the answer rounds them, schema tokens, whether right)
/// and whether the rule selected the first.
#[derive(Clone)]
struct Head {
    candidates: Vec<(f32, f32, usize, bool)>,
    /// The first candidate's similarity, when ranked with an encoder.
    similarity: Option<f32>,
    selected: bool,
}

/// What `policy` loads for `head`: how many schemas and tokens, and
/// whether a right tool is among them.
fn loads(policy: &DisclosurePolicy, head: &Head) -> (usize, usize, bool) {
    let count = if head.selected {
        1
    } else {
        let ranked: Vec<(f32, f32)> = head.candidates.iter().map(|c| (c.0, c.1)).collect();
        policy.head(&ranked, head.similarity)
    };
    let share = policy.search_tokens(DEFAULT_BUDGET_TOKENS);
    let (mut n, mut tokens, mut right) = (0, 0, false);
    for (i, &(_, _, t, is_right)) in head.candidates.iter().take(count).enumerate() {
        // A selection loads within the budget; the rest within the share.
        if (i > 0 || !head.selected) && tokens + t > share {
            continue;
        }
        n += 1;
        tokens += t;
        right |= is_right;
    }
    (n, tokens, right)
}

/// Availability after one search, schemas and tokens per search (mean and
/// 95th percentile), and the share of requests no tool fits that load
/// nothing, for `policy` over one half.
struct LoadFigures {
    available: f64,
    mean_schemas: f64,
    p95_schemas: usize,
    mean_tokens: f64,
    p95_tokens: usize,
    nothing_for_none: f64,
}

fn load_figures(policy: &DisclosurePolicy, heads: &[Head], orphans: &[Head]) -> LoadFigures {
    let mut schemas: Vec<usize> = Vec::with_capacity(heads.len());
    let mut tokens: Vec<usize> = Vec::with_capacity(heads.len());
    let mut available = 0;
    for head in heads {
        let (n, t, right) = loads(policy, head);
        schemas.push(n);
        tokens.push(t);
        available += usize::from(right);
    }
    let nothing = orphans.iter().filter(|h| loads(policy, h).0 == 0).count();
    let mean = |v: &[usize]| v.iter().sum::<usize>() as f64 / v.len().max(1) as f64;
    let p95 = |v: &mut Vec<usize>| {
        v.sort_unstable();
        v.get((v.len() * 95 / 100).min(v.len().saturating_sub(1)))
            .copied()
            .unwrap_or(0)
    };
    LoadFigures {
        available: available as f64 / heads.len().max(1) as f64,
        mean_schemas: mean(&schemas),
        p95_schemas: p95(&mut schemas),
        mean_tokens: mean(&tokens),
        p95_tokens: p95(&mut tokens),
        nothing_for_none: nothing as f64 / orphans.len().max(1) as f64,
    }
}

fn print_loads(policy: &DisclosurePolicy, eval: &Evaluation) {
    println!(
        "disclosure: up to {} candidates scoring at least {:.2} of the first's, when it covers {:.2} or more{}, at most {:.0}% of the budget per search",
        policy.max_tools,
        policy.head_ratio,
        policy.min_coverage,
        if eval.encoded {
            format!(
                " and its similarity is {:.3} or more",
                policy.min_similarity
            )
        } else {
            String::new()
        },
        policy.search_share * 100.0
    );
    println!(
        "| half | top-1 ranked | top-1 selected | recall@5 | available after one search | schemas per search (mean, p95) | tokens per search (mean, p95) | no-fit requests loading nothing |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for (h, half) in [(1, "tuning"), (0, "validation")] {
        let f = load_figures(policy, &eval.heads[h], &eval.head_orphans[h]);
        let t = &eval.tallies[h][1];
        let ratio = |a: usize, b: usize| a as f64 / b.max(1) as f64;
        println!(
            "| {half} | {:.3} | {:.3} | {:.3} | {:.3} | {:.2}, {} | {:.0}, {} | {:.3} |",
            ratio(t.top1, t.requests),
            ratio(t.selected_right, t.requests),
            ratio(t.recall5, t.requests),
            f.available,
            f.mean_schemas,
            f.p95_schemas,
            f.mean_tokens,
            f.p95_tokens,
            f.nothing_for_none
        );
    }
}

/// The policy with the most availability on the tuning half at 3 schemas
/// per search or fewer on average and 85% or more of no-fit requests
/// loading nothing, printed with its figures on both halves; and, for the
/// record, the best availability the same search finds when fewer no-fit
/// requests must load nothing.
/// The share of no-fit requests that must load nothing when policies are
/// calibrated, most demanding first.
const LEVELS: [f64; 4] = [0.85, 0.70, 0.50, 0.0];

fn calibrate_loads(eval: &Evaluation, encoded: bool) {
    for (level, slot) in LEVELS.iter().zip(best_policies(eval, encoded)) {
        let Some((_, policy)) = slot else {
            println!("no disclosure policy meets the limits on the tuning half at {level:.2}");
            continue;
        };
        println!(
            "calibrated disclosure on the tuning half (no-fit requests loading nothing >= {level:.2}):"
        );
        print_loads(&policy, eval);
    }
}

/// Per level of [`LEVELS`], the policy with the most availability on the
/// tuning half at three schemas per search or fewer, and that availability.
fn best_policies(eval: &Evaluation, encoded: bool) -> [Option<(f64, DisclosurePolicy)>; 4] {
    let mut best: [Option<(f64, DisclosurePolicy)>; 4] = [None; 4];
    for max_tools in 1..=5 {
        for ratio_step in 4..=20 {
            // Without an encoder the gate is the first candidate's word
            // coverage (0 to 0.90); with one, its similarity (0.20 to 0.75).
            // Each value divided out rather than stepped by multiplying, so
            // it is the same `f32` as the literal it prints as.
            for gate_step in 0..=22 {
                let policy = if encoded {
                    DisclosurePolicy {
                        max_tools,
                        head_ratio: ratio_step as f32 / 20.0,
                        min_similarity: (8 + gate_step) as f32 / 40.0,
                        ..DisclosurePolicy::with_encoder()
                    }
                } else {
                    if gate_step > 18 {
                        continue;
                    }
                    DisclosurePolicy {
                        max_tools,
                        head_ratio: ratio_step as f32 / 20.0,
                        min_coverage: gate_step as f32 / 20.0,
                        ..DisclosurePolicy::default()
                    }
                };
                let f = load_figures(&policy, &eval.heads[1], &eval.head_orphans[1]);
                if f.mean_schemas > 3.0 {
                    continue;
                }
                for (level, slot) in LEVELS.iter().zip(&mut best) {
                    if f.nothing_for_none >= *level && slot.is_none_or(|(a, _)| f.available > a) {
                        *slot = Some((f.available, policy));
                    }
                }
            }
        }
    }
    best
}

#[derive(Default)]
struct Tally {
    requests: usize,
    top1: usize,
    recall5: usize,
    selected: usize,
    selected_right: usize,
    per_tool: BTreeMap<String, (usize, usize)>,
    orphans: usize,
    declined: usize,
    multi: usize,
    multi_both: usize,
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

    fn selection(&mut self, golds: &[&str], selected: Option<&str>) {
        if let Some(name) = selected {
            self.selected += 1;
            self.selected_right += usize::from(golds.contains(&name));
        }
    }

    fn multi(&mut self, golds: &[String], ranked: &[&str]) {
        let found = golds
            .iter()
            .filter(|g| ranked.iter().take(5).any(|r| r == g))
            .count();
        self.multi += 1;
        self.multi_both += usize::from(found == golds.len());
    }

    fn row(&self, half: &str, ranker: &str, selects: bool) {
        let ratio = |a: usize, b: usize| a as f64 / b.max(1) as f64;
        let macro_top1 = self
            .per_tool
            .values()
            .map(|&(n, hit)| ratio(hit, n))
            .sum::<f64>()
            / self.per_tool.len().max(1) as f64;
        let or_dash = |value: f64| {
            if selects {
                format!("{value:.3}")
            } else {
                "—".to_owned()
            }
        };
        println!(
            "| {half} | {ranker} | {:.3} | {} | {} | {} | {:.3} | {macro_top1:.3} | {} | {:.3} | {} |",
            ratio(self.top1, self.requests),
            or_dash(ratio(self.selected_right, self.requests)),
            or_dash(ratio(self.selected, self.requests)),
            or_dash(ratio(self.selected_right, self.selected)),
            ratio(self.recall5, self.requests),
            or_dash(ratio(self.declined, self.orphans)),
            ratio(self.multi_both, self.multi),
            self.requests,
        );
    }
}

/// The two fixed halves of the catalog: tool name to `true` for tuning.
fn halves(catalog: &[CatalogEntry]) -> HashMap<String, bool> {
    let mut names: Vec<&str> = catalog.iter().map(|e| e.name.as_str()).collect();
    names.sort_unstable();
    names
        .into_iter()
        .enumerate()
        .map(|(i, name)| (name.to_owned(), i % 2 == 0))
        .collect()
}

struct Evaluation {
    /// Whether ranked with an encoder.
    encoded: bool,
    /// Per half (`true` = tuning): plain BM25, then Iris.
    tallies: [[Tally; 2]; 2],
    /// Per half: what the rule saw of each request with a right tool.
    seen: [Vec<Seen>; 2],
    /// Per half: what it saw of each request whose tool was held out.
    seen_orphans: [Vec<Seen>; 2],
    /// Per half: what one search could load for each request.
    heads: [Vec<Head>; 2],
    /// Per half: the same for requests whose tool was held out.
    head_orphans: [Vec<Head>; 2],
}

fn evaluate(
    catalog: &[CatalogEntry],
    queries: &[Query],
    multi: &[Query],
    options: &Options,
    config: &Config,
) -> Result<Evaluation, Box<dyn Error>> {
    let half_of = halves(catalog);
    let half = |q: &Query| usize::from(half_of.get(q.golds()[0]).copied().unwrap_or(false));
    let registry = Arc::new(registry_of(catalog, &HashSet::new())?);
    let scope = config.scope(&registry)?;
    let bm25 = PlainBm25::new(catalog);
    let local = config.ranker;
    let mut eval = Evaluation {
        encoded: config.encoder.is_some(),
        tallies: Default::default(),
        seen: Default::default(),
        seen_orphans: Default::default(),
        heads: Default::default(),
        head_orphans: Default::default(),
    };
    let tokens: HashMap<String, usize> = registry
        .tools()
        .map(|t| {
            let d = t.definition_dyn();
            (d.name().to_string(), schema_tokens(d))
        })
        .collect();
    let tuning_misses = queries.iter().filter(|q| half(q) == 1).count() / options.failures.max(1);
    let mut misses = 0;
    for query in queries {
        let golds = query.golds();
        let h = half(query);
        let ranking = local.rank(&query.query, &scope, 5);
        if options.failures > 0
            && h == 1
            && ranking
                .candidates
                .first()
                .is_none_or(|c| !golds.contains(&c.name.as_str()))
        {
            misses += 1;
            if misses % tuning_misses.max(1) == 0 {
                let ranked: Vec<String> = ranking
                    .candidates
                    .iter()
                    .take(3)
                    .map(|c| format!("{} {:.1}", c.name, c.score))
                    .collect();
                println!(
                    "miss: {:?} wants {:?}, got [{}]",
                    query.query,
                    golds,
                    ranked.join(", ")
                );
            }
        }
        let names: Vec<&str> = ranking.candidates.iter().map(|c| c.name.as_str()).collect();
        eval.tallies[h][0].single(&golds, &bm25.top(&query.query, 5));
        eval.tallies[h][1].single(&golds, &names);
        eval.tallies[h][1].selection(&golds, ranking.selected.as_ref().map(ToolName::as_str));
        eval.seen[h].push(seen_of(&ranking, &golds));
        eval.heads[h].push(head_of(&ranking, &golds, &tokens));
    }
    for query in multi {
        let golds: Vec<bool> = query
            .gold_all
            .iter()
            .filter_map(|g| half_of.get(g).copied())
            .collect();
        if golds.len() != query.gold_all.len() || golds.iter().any(|&g| g != golds[0]) {
            continue;
        }
        let h = usize::from(golds[0]);
        let ranking = local.rank(&query.query, &scope, 5);
        let names: Vec<&str> = ranking.candidates.iter().map(|c| c.name.as_str()).collect();
        eval.tallies[h][0].multi(&query.gold_all, &bm25.top(&query.query, 5));
        eval.tallies[h][1].multi(&query.gold_all, &names);
    }
    // None: requests whose tool is not in the catalog, per half.
    let mut sorted: Vec<&str> = catalog.iter().map(|e| e.name.as_str()).collect();
    sorted.sort_unstable();
    for h in [0, 1] {
        let held_out: HashSet<&str> = sorted
            .iter()
            .copied()
            .filter(|name| usize::from(half_of[*name]) == h)
            .enumerate()
            .filter(|(i, _)| i % options.holdout == options.holdout - 1)
            .map(|(_, name)| name)
            .collect();
        let reduced = Arc::new(registry_of(catalog, &held_out)?);
        let reduced_scope = config.scope(&reduced)?;
        for query in queries
            .iter()
            .filter(|q| q.golds().iter().all(|g| held_out.contains(g)))
        {
            let ranking = local.rank(&query.query, &reduced_scope, 5);
            let tally = &mut eval.tallies[h][1];
            tally.orphans += 1;
            tally.declined += usize::from(ranking.selected.is_none());
            eval.seen_orphans[h].push(seen_of(&ranking, &[]));
            eval.head_orphans[h].push(head_of(&ranking, &[], &tokens));
        }
    }
    Ok(eval)
}

/// Scores and coverage rounded as `tool_search` answers them.
fn rounded(x: f32) -> f32 {
    (x * 100.0).round() / 100.0
}

fn head_of(
    ranking: &iris::discovery::Ranking,
    golds: &[&str],
    tokens: &HashMap<String, usize>,
) -> Head {
    Head {
        candidates: ranking
            .candidates
            .iter()
            .map(|c| {
                (
                    rounded(c.score),
                    rounded(c.coverage),
                    tokens.get(c.name.as_str()).copied().unwrap_or(0),
                    golds.contains(&c.name.as_str()),
                )
            })
            .collect(),
        similarity: ranking
            .candidates
            .first()
            .and_then(|c| c.similarity)
            .map(rounded),
        selected: ranking.selected.is_some(),
    }
}

fn seen_of(ranking: &iris::discovery::Ranking, golds: &[&str]) -> Seen {
    let first = ranking.candidates.first();
    Seen {
        top: first.map_or(0.0, |c| c.score),
        second: ranking.candidates.get(1).map(|c| c.score),
        coverage: first.map_or(0.0, |c| c.coverage),
        similarity: first.and_then(|c| c.similarity),
        top_right: first.is_some_and(|c| golds.contains(&c.name.as_str())),
    }
}

/// Coverage, precision and none-rate of `rule` over what was seen.
fn rule_figures(rule: SelectionRule, seen: &[Seen], orphans: &[Seen]) -> (f64, f64, f64) {
    let selects = |s: &Seen| s.top > 0.0 && rule.selects(s.top, s.second, s.coverage, s.similarity);
    let selected = seen.iter().filter(|s| selects(s)).count();
    let right = seen.iter().filter(|s| selects(s) && s.top_right).count();
    let declined = orphans.iter().filter(|s| !selects(s)).count();
    (
        selected as f64 / seen.len().max(1) as f64,
        right as f64 / selected.max(1) as f64,
        declined as f64 / orphans.len().max(1) as f64,
    )
}

/// The rule with the most coverage at a precision of at least 0.90 on the
/// tuning half, printed with its figures on both halves.
fn calibrate(eval: &Evaluation) {
    const PRECISION: f64 = 0.90;
    let mut best: Option<(f64, SelectionRule)> = None;
    // Without an encoder: coverage 0 to 0.90 and confidence 0 to 0.80; with
    // one, similarity 0.20 to 0.80 and lead 0 to 0.50.
    for first_step in 0..=24 {
        for second_step in 0..=80 {
            let rule = if eval.encoded {
                if second_step > 50 {
                    continue;
                }
                SelectionRule {
                    min_similarity: (8 + first_step) as f32 / 40.0,
                    min_lead: second_step as f32 / 100.0,
                    ..SelectionRule::with_encoder()
                }
            } else {
                if first_step > 18 {
                    continue;
                }
                SelectionRule {
                    min_coverage: first_step as f32 / 20.0,
                    min_confidence: second_step as f32 / 100.0,
                    ..SelectionRule::default()
                }
            };
            let (coverage, precision, _) = rule_figures(rule, &eval.seen[1], &eval.seen_orphans[1]);
            if precision >= PRECISION && best.is_none_or(|(c, _)| coverage > c) {
                best = Some((coverage, rule));
            }
        }
    }
    let Some((_, rule)) = best else {
        println!("no rule reaches a precision of {PRECISION:.2} on the tuning half");
        return;
    };
    println!(
        "calibrated on the tuning half: min_coverage {:.2}, min_confidence {:.2}, min_similarity {:.3}, min_lead {:.2}",
        rule.min_coverage, rule.min_confidence, rule.min_similarity, rule.min_lead
    );
    for (h, half) in [(1, "tuning"), (0, "validation")] {
        let (coverage, precision, none) = rule_figures(rule, &eval.seen[h], &eval.seen_orphans[h]);
        println!(
            "  {half:<10} coverage {coverage:.3}  precision {precision:.3}  selected top-1 {:.3}  none-rate {none:.3}",
            coverage * precision
        );
    }
}

/// Prints one configuration's figures, and with `--calibrate` the rules
/// and policies the tuning half calls for.
fn report(eval: &Evaluation, options: &Options) {
    let ranker = if eval.encoded {
        "iris + encoder"
    } else {
        "iris local"
    };
    println!(
        "| half | ranker | top-1 ranked | top-1 selected | coverage | precision | recall@5 | macro top-1 | none-rate | two-tool both in top 5 | requests |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    for (h, half) in [(1, "tuning"), (0, "validation")] {
        eval.tallies[h][0].row(half, "plain BM25", false);
        eval.tallies[h][1].row(half, ranker, true);
    }
    let policy = if eval.encoded {
        DisclosurePolicy::with_encoder()
    } else {
        DisclosurePolicy::default()
    };
    print_loads(&policy, eval);
    if options.calibrate {
        calibrate(eval);
        calibrate_loads(eval, eval.encoded);
    }
}

/// How requests are ranked: the ranker, and the encoder when there is one.
struct Config {
    ranker: LocalRanker,
    encoder: Option<Arc<KeptVectors>>,
}

impl Config {
    /// The scope of `registry`'s tools, encoded when there is an encoder.
    fn scope<'a>(&self, registry: &'a ToolRegistry) -> Result<SearchScope<'a>, Box<dyn Error>> {
        let scope = SearchScope::all(registry);
        Ok(match &self.encoder {
            Some(encoder) => scope.with_encoder(encoder.clone())?,
            None => scope,
        })
    }
}

/// For word weights of 0 to 0.40 beside the cosine, on the tuning half:
/// ranked top-1, and the availability after one search of the best policy
/// with 70% of no-fit requests loading nothing. The weight is a ranking
/// setting, so the one with the best top-1 (to three decimals: closer is
/// noise) is what `ENCODER_WORD_WEIGHT` should be, availability breaking
/// ties; availability itself is what the disclosure policy is fitted for.
fn calibrate_word_weight(
    catalog: &[CatalogEntry],
    queries: &[Query],
    multi: &[Query],
    options: &Options,
    encoder: &Arc<KeptVectors>,
) -> Result<(), Box<dyn Error>> {
    let mut best = (0.0_f32, -1.0, -1.0);
    for step in 0..=8 {
        let weight = step as f32 / 20.0;
        let config = Config {
            ranker: LocalRanker::default().with_word_weight(weight),
            encoder: Some(encoder.clone()),
        };
        let eval = evaluate(catalog, queries, multi, options, &config)?;
        let tally = &eval.tallies[1][1];
        let top1 = tally.top1 as f64 / tally.requests.max(1) as f64;
        let available = best_policies(&eval, true)[1].map_or(0.0, |(a, _)| a);
        println!(
            "word weight {weight:.2}: tuning top-1 {top1:.3}, available after one search {available:.3} (no-fit loading nothing >= 0.70)"
        );
        let top1 = (top1 * 1000.0).round() / 1000.0;
        if (top1, available) > (best.1, best.2) {
            best = (weight, top1, available);
        }
    }
    println!("calibrated word weight on the tuning half: {:.2}", best.0);
    Ok(())
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

    println!("data: {} ({} tools)", options.data.display(), catalog.len());
    let words = Config {
        ranker: LocalRanker::with_rule(options.rule),
        encoder: None,
    };
    report(
        &evaluate(&catalog, &queries, &multi, &options, &words)?,
        &options,
    );
    if let Some(folder) = &options.encoder {
        let encoder = Arc::new(KeptVectors::load(folder, options.vectors.clone())?);
        let texts: Vec<&str> = queries
            .iter()
            .chain(&multi)
            .map(|q| q.query.as_str())
            .collect();
        encoder.encode_all(&texts)?;
        if options.calibrate {
            calibrate_word_weight(&catalog, &queries, &multi, &options, &encoder)?;
        }
        let with_meaning = Config {
            ranker: LocalRanker::default(),
            encoder: Some(encoder.clone()),
        };
        println!();
        println!("with the encoder ({})", folder.display());
        report(
            &evaluate(&catalog, &queries, &multi, &options, &with_meaning)?,
            &options,
        );
        encoder.save()?;
    }
    if let Some(path) = &options.dump {
        dump(&catalog, &queries, options.rule, path)?;
        println!("rankings written to {}", path.display());
    }
    Ok(())
}

/// Writes each request's ranking of the whole catalog, one JSON line per
/// request: `id`, `query`, `golds`, `selected` and `ranked` (`[name,
/// score, coverage]`, best first, tools that scored only).
fn dump(
    catalog: &[CatalogEntry],
    queries: &[Query],
    rule: SelectionRule,
    path: &Path,
) -> Result<(), Box<dyn Error>> {
    use std::io::Write as _;
    let registry = Arc::new(registry_of(catalog, &HashSet::new())?);
    let scope = SearchScope::all(&registry);
    let local = LocalRanker::with_rule(rule);
    let file = std::fs::File::create(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut out = std::io::BufWriter::new(file);
    for query in queries {
        let ranking = local.rank(&query.query, &scope, catalog.len());
        let ranked: Vec<_> = ranking
            .candidates
            .iter()
            .map(|c| iris::serde_json::json!([c.name.as_str(), c.score, c.coverage]))
            .collect();
        let line = iris::serde_json::json!({
            "id": query.id,
            "query": query.query,
            "golds": query.golds(),
            "selected": ranking.selected.as_ref().map(ToolName::as_str),
            "ranked": ranked,
        });
        writeln!(out, "{line}")?;
    }
    out.flush()?;
    Ok(())
}
