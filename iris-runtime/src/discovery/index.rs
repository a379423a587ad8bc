//! The local relevance index: BM25 over weighted fields (a BM25F
//! simplification), built once per catalog and extended in place as tools
//! register — no index service, no rebuild.
//!
//! Fields and weights: the name split into words and the aliases (3), tags
//! (2), the description, parameter names and parameter descriptions (1). A
//! term's frequency in a tool is the weighted sum over fields, and so is the
//! tool's length; scoring is BM25 with `k1 = 1.5`, `b = 0.9` (long
//! descriptions are common and should not win by length).

use rustc_hash::FxHashMap;
use serde_json::Value;

use iris_core::{ToolDefinition, ToolName};

use super::tokenize::for_each_term;

const K1: f32 = 1.5;
const B: f32 = 0.9;
const NAME_WEIGHT: f32 = 3.0;
const TAG_WEIGHT: f32 = 2.0;
const TEXT_WEIGHT: f32 = 1.0;
/// Most schema nodes visited for parameter names, so a hostile schema
/// cannot make indexing slow.
const MAX_SCHEMA_NODES: usize = 256;

/// One indexed tool.
#[derive(Debug, Clone)]
pub(crate) struct IndexedTool {
    pub(crate) name: ToolName,
    pub(crate) summary: String,
    length: f32,
}

/// A term's postings: (tool, weighted frequency).
type Postings = Vec<(u32, f32)>;

/// An inverted index over tool metadata.
#[derive(Debug, Clone, Default)]
pub struct SearchIndex {
    tools: Vec<IndexedTool>,
    terms: FxHashMap<Box<str>, Postings>,
    total_length: f64,
}

/// A tool with its score for a query.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Scored {
    pub(crate) tool: u32,
    pub(crate) score: f32,
    /// Share of the query's weight (by IDF) that this tool matched, 0 to 1.
    pub(crate) coverage: f32,
}

impl SearchIndex {
    /// An index of `definitions`.
    pub fn build<'a>(definitions: impl IntoIterator<Item = &'a ToolDefinition>) -> Self {
        let mut index = Self::default();
        for definition in definitions {
            index.insert(definition);
        }
        index
    }

    /// Adds one tool; its postings are appended, nothing is rebuilt.
    pub fn insert(&mut self, definition: &ToolDefinition) {
        let mut frequencies: FxHashMap<String, f32> = FxHashMap::default();
        let mut length = 0.0;
        let mut add = |text: &str, weight: f32| {
            for_each_term(text, |term| {
                length += weight;
                match frequencies.get_mut(term) {
                    Some(f) => *f += weight,
                    None => {
                        frequencies.insert(term.to_owned(), weight);
                    }
                }
            });
        };
        add(definition.name().as_str(), NAME_WEIGHT);
        for alias in definition.aliases() {
            add(alias.as_str(), NAME_WEIGHT);
        }
        for tag in definition.tags() {
            add(tag, TAG_WEIGHT);
        }
        add(definition.description(), TEXT_WEIGHT);
        let mut budget = MAX_SCHEMA_NODES;
        visit_parameters(
            definition.input_schema(),
            &mut budget,
            &mut |name, description| {
                add(name, TEXT_WEIGHT);
                if let Some(description) = description {
                    add(description, TEXT_WEIGHT);
                }
            },
        );

        let id = u32::try_from(self.tools.len()).unwrap_or(u32::MAX);
        for (term, frequency) in frequencies {
            self.terms
                .entry(term.into_boxed_str())
                .or_default()
                .push((id, frequency));
        }
        self.total_length += f64::from(length);
        self.tools.push(IndexedTool {
            name: definition.name().clone(),
            summary: summary_of(definition.description()),
            length,
        });
    }

    /// How many tools are indexed.
    #[must_use]
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Whether nothing is indexed.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// Heap bytes held by the index, roughly: postings, term keys, tools.
    #[must_use]
    pub fn heap_bytes(&self) -> usize {
        let postings: usize = self
            .terms
            .iter()
            .map(|(k, p)| k.len() + p.capacity() * std::mem::size_of::<(u32, f32)>() + 48)
            .sum();
        let tools: usize = self
            .tools
            .iter()
            .map(|t| {
                t.name.as_str().len() + t.summary.capacity() + std::mem::size_of::<IndexedTool>()
            })
            .sum();
        postings + tools
    }

    pub(crate) fn tool(&self, id: u32) -> &IndexedTool {
        &self.tools[id as usize]
    }

    /// The `limit` best tools for `query` among those `allowed` accepts,
    /// best first; tools matching no query term are left out.
    pub(crate) fn search(
        &self,
        query: &str,
        limit: usize,
        allowed: impl Fn(&str) -> bool,
    ) -> Vec<Scored> {
        let mut query_terms: Vec<String> = Vec::new();
        for_each_term(query, |t| {
            if !query_terms.iter().any(|q| q == t) {
                query_terms.push(t.to_owned());
            }
        });
        if query_terms.is_empty() || self.tools.is_empty() {
            return Vec::new();
        }
        #[allow(
            clippy::cast_precision_loss,
            reason = "catalog sizes are far below where f32 loses whole numbers"
        )]
        let n = self.tools.len() as f32;
        #[allow(
            clippy::cast_possible_truncation,
            reason = "an average length fits an f32 comfortably"
        )]
        let average = (self.total_length / f64::from(n)) as f32;
        // A term no tool has counts with the highest IDF: a request about
        // something the catalog lacks should look unmatched.
        let unseen_idf = idf(n, 0.0);
        let mut total_weight = 0.0;
        let mut scores: FxHashMap<u32, (f32, f32)> = FxHashMap::default();
        for term in &query_terms {
            let Some(postings) = self.terms.get(term.as_str()) else {
                // Numbers are amounts and dates, not what a tool is for.
                if !term.bytes().all(|b| b.is_ascii_digit()) {
                    total_weight += unseen_idf;
                }
                continue;
            };
            #[allow(clippy::cast_precision_loss, reason = "as above")]
            let term_idf = idf(n, postings.len() as f32);
            total_weight += term_idf;
            for &(tool, frequency) in postings {
                let length = self.tools[tool as usize].length;
                let norm = K1 * (1.0 - B + B * length / average.max(f32::EPSILON));
                let gain = term_idf * frequency * (K1 + 1.0) / (frequency + norm);
                let entry = scores.entry(tool).or_insert((0.0, 0.0));
                entry.0 += gain;
                entry.1 += term_idf;
            }
        }
        let mut ranked: Vec<Scored> = scores
            .into_iter()
            .filter(|(tool, _)| allowed(self.tools[*tool as usize].name.as_str()))
            .map(|(tool, (score, matched))| Scored {
                tool,
                score,
                coverage: matched / total_weight.max(f32::EPSILON),
            })
            .collect();
        let by_score = |a: &Scored, b: &Scored| {
            b.score
                .total_cmp(&a.score)
                .then_with(|| a.tool.cmp(&b.tool))
        };
        if ranked.len() > limit {
            ranked.select_nth_unstable_by(limit, by_score);
            ranked.truncate(limit);
        }
        ranked.sort_unstable_by(by_score);
        ranked
    }
}

fn idf(n: f32, document_frequency: f32) -> f32 {
    (1.0 + (n - document_frequency + 0.5) / (document_frequency + 0.5)).ln()
}

/// The first sentence of a description, at most 160 characters: what a
/// candidate list shows.
pub(crate) fn summary_of(description: &str) -> String {
    let first = description
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim();
    let sentence = first
        .char_indices()
        .find(|&(i, c)| c == '.' && first[i + 1..].starts_with(char::is_whitespace))
        .map_or(first, |(i, _)| &first[..=i]);
    if sentence.chars().count() <= 160 {
        sentence.to_owned()
    } else {
        let cut: String = sentence.chars().take(157).collect();
        format!("{cut}...")
    }
}

/// Calls `visit` with each property name and description in `schema`,
/// nested objects included, within `budget` nodes.
fn visit_parameters(
    schema: &Value,
    budget: &mut usize,
    visit: &mut impl FnMut(&str, Option<&str>),
) {
    if *budget == 0 {
        return;
    }
    *budget -= 1;
    match schema {
        Value::Object(map) => {
            if let Some(Value::Object(properties)) = map.get("properties") {
                for (name, property) in properties {
                    let description = property.get("description").and_then(Value::as_str);
                    visit(name, description);
                    visit_parameters(property, budget, visit);
                }
            }
            for key in ["items", "anyOf", "oneOf", "allOf"] {
                if let Some(child) = map.get(key) {
                    visit_parameters(child, budget, visit);
                }
            }
            if let Some(Value::Object(definitions)) = map.get("$defs") {
                for definition in definitions.values() {
                    visit_parameters(definition, budget, visit);
                }
            }
        }
        Value::Array(items) => {
            for item in items {
                visit_parameters(item, budget, visit);
            }
        }
        _ => {}
    }
}
