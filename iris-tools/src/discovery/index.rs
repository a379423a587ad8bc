//! The local relevance index: BM25 over weighted fields (a BM25F
//! simplification), built once per catalog and extended in place as tools
//! register — no index service, no rebuild.
//!
//! Fields and weights: the name split into words and the aliases (3), tags
//! (2), the description (1), parameter names, descriptions and enum values
//! (0.5), and the examples inside parameter descriptions ("such as 'San
//! Francisco, CA'", quoted values: 0.1), which name things a tool handles,
//! not what it is for. A term's frequency in a tool is the weighted sum over
//! fields, and so is the tool's length; scoring is BM25 with `k1 = 1.5`,
//! `b = 0.9` (long descriptions are common and should not win by length).
//! A query also matches, for a small share of the gain, the catalog's
//! terms related to its own words (see [`associations`]).

use rustc_hash::FxHashMap;

use iris_core::{ToolDefinition, ToolName};

use super::associations;
use super::meaning::ToolVectors;

mod explain;
use super::parameters::{MAX_SCHEMA_NODES, ParameterText, split_examples, visit_parameters};
use super::postings::{MAX_TOOLS, PostingList};
use super::tokenize::{for_each_word, term_of};
pub use explain::{Explanation, TermGain, TermSource};

/// The word id of stop words.
const STOP: u32 = u32::MAX;
const K1: f32 = 1.5;
const B: f32 = 0.9;
const NAME_WEIGHT: f32 = 3.0;
const TAG_WEIGHT: f32 = 2.0;
const TEXT_WEIGHT: f32 = 1.0;
const PARAMETER_WEIGHT: f32 = 0.5;
const EXAMPLE_WEIGHT: f32 = 0.1;

/// A weighted frequency in tenths: field weights are tenths (0.1 to 3),
/// so a weighted frequency is a whole number of tenths and fits a `u16`
/// exactly (saturating far past where BM25 stops counting).
fn tenths_of(frequency: f32) -> u16 {
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "clamped to the u16 range first"
    )]
    let tenths = (frequency * 10.0).round().clamp(1.0, f32::from(u16::MAX)) as u16;
    tenths
}

/// An inverted index over tool metadata.
#[derive(Debug, Clone, Default)]
pub struct SearchIndex {
    /// Each indexed tool's name, by tool id, end to end (`name_ends` says
    /// where each ends): one buffer instead of a string per tool. Summaries
    /// are made from the registry's definitions for the few candidates an
    /// answer shows.
    names: String,
    name_ends: Vec<u32>,
    /// Term text to term id; ids index `postings`.
    term_ids: FxHashMap<Box<str>, u32>,
    /// Lowercased word to its term id ([`STOP`] for stop words): most
    /// words repeat across a catalog, and this skips stemming them again.
    word_ids: FxHashMap<Box<str>, u32>,
    /// Each term's postings, compressed (most of the index).
    postings: Vec<PostingList>,
    /// Each term's text, by id, end to end (`term_ends` says where each
    /// ends): a query looks up the words related to a term it already
    /// knows by id without stemming the word again.
    term_text: String,
    term_ends: Vec<u32>,
    /// Each tool's weighted length, by tool id: read for every posting a
    /// query touches, so kept dense rather than beside the tool's name.
    lengths: Vec<f32>,
    total_length: f64,
    /// Each tool's vector from a sentence encoder, when discovery has one.
    meaning: Option<std::sync::Arc<ToolVectors>>,
}

/// A tool with its score for a query.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Scored {
    pub(crate) tool: u32,
    pub(crate) score: f32,
    /// Share of the query's weight (by IDF) that this tool matched, 0 to 1.
    pub(crate) coverage: f32,
    /// The cosine of the tool's and the query's vectors, when ranked with
    /// an encoder.
    pub(crate) similarity: Option<f32>,
}

/// One distinct term of a query.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum QueryTerm {
    /// A term of the catalog, by id.
    Known(u32),
    /// A term no tool has (numbers left out).
    Unseen,
}

/// A query's terms and the catalog terms related to them.
struct Query {
    terms: Vec<QueryTerm>,
    /// (term id, weight 0 to 1): each adds a share of its BM25 gain, and
    /// none counts toward coverage.
    related: Vec<(u32, f32)>,
}

/// Per-thread buffers of a query: a dense array is far faster to
/// accumulate into than a map, and is kept zeroed between queries.
#[derive(Default)]
struct Scratch {
    /// Per tool: (score, matched IDF), side by side so a posting touches
    /// one cache line.
    slots: Vec<(f32, f32)>,
    touched: Vec<u32>,
}

thread_local! {
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::new(Scratch::default());
}

impl SearchIndex {
    /// An index of `definitions`.
    pub fn build<'a>(definitions: impl IntoIterator<Item = &'a ToolDefinition>) -> Self {
        let mut index = Self::default();
        for definition in definitions {
            index.insert(definition);
        }
        index.shrink();
        index
    }

    /// Gives back the room kept for appends: a built index is mostly read.
    fn shrink(&mut self) {
        for list in &mut self.postings {
            list.shrink();
        }
        self.postings.shrink_to_fit();
        self.names.shrink_to_fit();
        self.name_ends.shrink_to_fit();
        self.lengths.shrink_to_fit();
        self.term_text.shrink_to_fit();
        self.term_ends.shrink_to_fit();
    }

    /// An index over the deferred tools of `registry`.
    #[must_use]
    pub fn of_deferred(registry: &iris_runtime::ToolRegistry) -> Self {
        Self::build(
            registry
                .tools()
                .map(|t| t.definition_dyn())
                .filter(|d| d.exposure() == iris_core::Exposure::Deferred),
        )
    }

    /// Adds one tool; its postings are appended, nothing is rebuilt. An
    /// index holds at most 4,194,304 tools; past that a tool is left out
    /// (and logged), and searches never find it.
    pub fn insert(&mut self, definition: &ToolDefinition) {
        let id = u32::try_from(self.name_ends.len()).unwrap_or(u32::MAX);
        if id >= MAX_TOOLS {
            tracing::warn!(tool = %definition.name(), "the search index is full; the tool is not indexed");
            return;
        }
        // (term id, weighted frequency) of this tool; tools have tens of
        // distinct terms, so a linear scan beats hashing.
        let mut frequencies: Vec<(u32, f32)> = Vec::with_capacity(64);
        let mut length = 0.0;
        let word_ids = &mut self.word_ids;
        let mut terms = Terms {
            ids: &mut self.term_ids,
            postings: &mut self.postings,
            text: &mut self.term_text,
            ends: &mut self.term_ends,
        };
        let mut stemmed = String::with_capacity(24);
        let mut add = |text: &str, weight: f32| {
            for_each_word(text, |word| {
                let term_id = word_term(word_ids, &mut terms, &mut stemmed, word);
                if term_id == STOP {
                    return;
                }
                length += weight;
                match frequencies.iter_mut().find(|(t, _)| *t == term_id) {
                    Some((_, f)) => *f += weight,
                    None => frequencies.push((term_id, weight)),
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
            &mut |text| match text {
                ParameterText::Name(name) | ParameterText::Value(name) => {
                    add(name, PARAMETER_WEIGHT);
                }
                ParameterText::Description(description) => {
                    let (prose, examples) = split_examples(description);
                    add(&prose, PARAMETER_WEIGHT);
                    add(&examples, EXAMPLE_WEIGHT);
                }
            },
        );
        for (term_id, frequency) in frequencies {
            self.postings[term_id as usize].push(id, tenths_of(frequency));
        }
        self.total_length += f64::from(length);
        self.lengths.push(length);
        self.names.push_str(definition.name().as_str());
        self.name_ends
            .push(u32::try_from(self.names.len()).unwrap_or(u32::MAX));
    }

    /// The index with `vectors`, each tool's by tool id, which searches
    /// then fuse with the word scores.
    #[must_use]
    pub fn with_vectors(mut self, vectors: std::sync::Arc<ToolVectors>) -> Self {
        self.meaning = Some(vectors);
        self
    }

    /// The tools' vectors, when the index has them.
    #[must_use]
    pub fn vectors(&self) -> Option<&std::sync::Arc<ToolVectors>> {
        self.meaning.as_ref()
    }

    /// How many tools are indexed.
    #[must_use]
    pub fn len(&self) -> usize {
        self.name_ends.len()
    }

    /// Whether nothing is indexed.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.name_ends.is_empty()
    }

    /// Heap bytes held by the index, roughly: postings, term keys, tools.
    #[must_use]
    pub fn heap_bytes(&self) -> usize {
        let postings: usize = self
            .postings
            .iter()
            .map(PostingList::heap_bytes)
            .sum::<usize>()
            + self.postings.capacity() * std::mem::size_of::<PostingList>();
        let terms: usize = self
            .term_ids
            .keys()
            .chain(self.word_ids.keys())
            .map(|k| k.len() + 24)
            .sum();
        let tools = self.names.capacity() + self.name_ends.capacity() * std::mem::size_of::<u32>();
        postings
            + terms
            + tools
            + self.lengths.capacity() * std::mem::size_of::<f32>()
            + self.term_text.capacity()
            + self.term_ends.capacity() * std::mem::size_of::<u32>()
    }

    /// The `limit` best tools for `query` with their scores, best first
    /// (every indexed tool is a candidate).
    #[must_use]
    pub fn top(&self, query: &str, limit: usize) -> Vec<(ToolName, f32)> {
        self.search(query, limit, None)
            .into_iter()
            .filter_map(|s| Some((ToolName::new(self.tool(s.tool).to_owned()).ok()?, s.score)))
            .collect()
    }

    /// The text of term `id`.
    fn term_text(&self, id: u32) -> &str {
        let id = id as usize;
        let start = match id {
            0 => 0,
            _ => self.term_ends.get(id - 1).map_or(0, |&end| end as usize),
        };
        let end = self.term_ends.get(id).map_or(start, |&end| end as usize);
        self.term_text.get(start..end).unwrap_or("")
    }

    /// The name of tool `id`.
    pub(crate) fn tool(&self, id: u32) -> &str {
        let id = id as usize;
        let start = match id {
            0 => 0,
            _ => self.name_ends.get(id - 1).map_or(0, |&end| end as usize),
        };
        let end = self.name_ends.get(id).map_or(start, |&end| end as usize);
        self.names.get(start..end).unwrap_or("")
    }

    /// The `limit` best tools for `query` among those `allowed` accepts
    /// (all when `None`), best first; tools matching no query term are left
    /// out.
    pub(crate) fn search(
        &self,
        query: &str,
        limit: usize,
        allowed: Option<&dyn Fn(&str) -> bool>,
    ) -> Vec<Scored> {
        let query_terms = self.query_terms(query);
        if query_terms.terms.is_empty() || self.is_empty() || limit == 0 {
            return Vec::new();
        }
        SCRATCH.with(|scratch| {
            let mut scratch = scratch.borrow_mut();
            let scratch = &mut *scratch;
            if scratch.slots.len() < self.len() {
                scratch.slots.resize(self.len(), (0.0, 0.0));
            }
            let total_weight = self.accumulate(&query_terms, scratch);
            let ranked = self.rank(scratch, total_weight, limit, allowed);
            for &tool in &scratch.touched {
                scratch.slots[tool as usize] = (0.0, 0.0);
            }
            scratch.touched.clear();
            ranked
        })
    }

    /// The distinct terms of `query`, and the catalog terms related to
    /// them (see [`associations`]) with their weights. A word the catalog
    /// has is looked up as it was indexed, without stemming it again; only
    /// new words are.
    fn query_terms(&self, query: &str) -> Query {
        let mut terms: Vec<QueryTerm> = Vec::new();
        let mut stems: Vec<String> = Vec::new();
        let mut stemmed = String::with_capacity(24);
        for_each_word(query, |word| {
            let term = match self.word_ids.get(word) {
                Some(&STOP) => return,
                Some(&id) => {
                    stemmed.clear();
                    stemmed.push_str(self.term_text(id));
                    QueryTerm::Known(id)
                }
                None => {
                    if !term_of(word, &mut stemmed) {
                        return;
                    }
                    match self.term_ids.get(stemmed.as_str()) {
                        Some(&id) => QueryTerm::Known(id),
                        // Numbers are amounts and dates, not what a tool is for.
                        None if stemmed.bytes().all(|b| b.is_ascii_digit()) => return,
                        None => QueryTerm::Unseen,
                    }
                }
            };
            if !stems.contains(&stemmed) {
                terms.push(term);
                stems.push(stemmed.clone());
            }
        });
        let mut related: Vec<(u32, f32)> = Vec::new();
        for stem in &stems {
            associations::for_each_related(stem, |other, weight| {
                let Some(&id) = self.term_ids.get(other) else {
                    return;
                };
                if terms.contains(&QueryTerm::Known(id)) {
                    return;
                }
                match related.iter_mut().find(|(t, _)| *t == id) {
                    Some((_, w)) => *w = w.max(weight),
                    None => related.push((id, weight)),
                }
            });
        }
        Query { terms, related }
    }

    /// The number of indexed tools, and their average weighted length.
    fn size_and_average_length(&self) -> (f32, f32) {
        #[allow(
            clippy::cast_precision_loss,
            reason = "catalog sizes are far below where f32 loses whole numbers"
        )]
        let n = self.len() as f32;
        #[allow(
            clippy::cast_possible_truncation,
            reason = "an average length fits an f32 comfortably"
        )]
        let average = ((self.total_length / f64::from(n)) as f32).max(f32::EPSILON);
        (n, average)
    }

    /// Adds every query term's BM25 gain into the scratch arrays; returns
    /// the query's whole weight (the sum of its terms' IDF).
    fn accumulate(&self, query: &Query, scratch: &mut Scratch) -> f32 {
        let (n, average) = self.size_and_average_length();
        // A term no tool has counts with the highest IDF: a request about
        // something the catalog lacks should look unmatched.
        let unseen_idf = idf(n, 0.0);
        // BM25's length norm `K1 (1 - B + B length / average)`, as
        // `fixed + per_length × length`.
        let norm = (K1 * (1.0 - B), K1 * B / average);
        let mut total_weight = 0.0;
        for term in &query.terms {
            let QueryTerm::Known(term_id) = *term else {
                total_weight += unseen_idf;
                continue;
            };
            #[allow(clippy::cast_precision_loss, reason = "as above")]
            let term_idf = idf(n, self.postings[term_id as usize].len() as f32);
            total_weight += term_idf;
            self.add_gains(term_id, term_idf * (K1 + 1.0), term_idf, norm, scratch);
        }
        for &(term_id, similarity) in &query.related {
            #[allow(clippy::cast_precision_loss, reason = "as above")]
            let term_idf = idf(n, self.postings[term_id as usize].len() as f32);
            let gain_scale = term_idf * (K1 + 1.0) * associations::RELATED_SHARE * similarity;
            self.add_gains(term_id, gain_scale, 0.0, norm, scratch);
        }
        total_weight
    }

    /// Adds each posting's BM25 gain (`gain_scale` times the saturated
    /// frequency) to its tool's score and `matched` to its matched weight;
    /// `norm` is the length norm as `(fixed, per unit of length)`.
    fn add_gains(
        &self,
        term_id: u32,
        gain_scale: f32,
        matched: f32,
        (fixed, per_length): (f32, f32),
        scratch: &mut Scratch,
    ) {
        let lengths = &self.lengths;
        let Scratch { slots, touched } = scratch;
        for (tool, tenths) in self.postings[term_id as usize].iter() {
            let frequency = f32::from(tenths) * 0.1;
            let norm = fixed + per_length * lengths[tool as usize];
            let slot = &mut slots[tool as usize];
            if slot.0 == 0.0 {
                touched.push(tool);
            }
            slot.0 += gain_scale * frequency / (frequency + norm);
            slot.1 += matched;
        }
    }

    /// The best `limit` touched tools that `allowed` accepts.
    fn rank(
        &self,
        scratch: &mut Scratch,
        total_weight: f32,
        limit: usize,
        allowed: Option<&dyn Fn(&str) -> bool>,
    ) -> Vec<Scored> {
        let slots = &scratch.slots;
        let by_score = |a: &u32, b: &u32| {
            slots[*b as usize]
                .0
                .total_cmp(&slots[*a as usize].0)
                .then_with(|| a.cmp(b))
        };
        let touched = &mut scratch.touched;
        // Most candidates are allowed: sort a few more than asked for, and
        // everything only when filtering leaves too few.
        let mut window = match allowed {
            None => limit,
            Some(_) => limit.saturating_mul(8),
        };
        loop {
            let considered = window.min(touched.len());
            let best = if considered < touched.len() && considered <= SMALL_WINDOW {
                best_of(touched, considered, by_score)
            } else {
                if considered < touched.len() {
                    touched.select_nth_unstable_by(considered, by_score);
                }
                touched[..considered].sort_unstable_by(by_score);
                touched[..considered].to_vec()
            };
            let picked: Vec<u32> = best
                .iter()
                .copied()
                .filter(|&t| allowed.is_none_or(|ok| ok(self.tool(t))))
                .take(limit)
                .collect();
            if picked.len() == limit || considered == touched.len() {
                return picked
                    .into_iter()
                    .map(|tool| {
                        let (score, matched) = slots[tool as usize];
                        Scored {
                            tool,
                            score,
                            coverage: matched / total_weight.max(f32::EPSILON),
                            similarity: None,
                        }
                    })
                    .collect();
            }
            window = touched.len();
        }
    }
}

/// Up to this many best tools are picked in one pass over the candidates;
/// more are selected and sorted.
const SMALL_WINDOW: usize = 64;

/// The `count` first of `candidates` in the order `by_score` gives, in one
/// pass: most candidates lose to the last kept one in one comparison,
/// where selecting and sorting would move every one of them around.
fn best_of(
    candidates: &[u32],
    count: usize,
    by_score: impl Fn(&u32, &u32) -> std::cmp::Ordering,
) -> Vec<u32> {
    let mut best: Vec<u32> = Vec::with_capacity(count + 1);
    for &candidate in candidates {
        if best.len() == count
            && best
                .last()
                .is_some_and(|last| by_score(&candidate, last).is_ge())
        {
            continue;
        }
        let at = best.partition_point(|kept| by_score(kept, &candidate).is_lt());
        best.insert(at, candidate);
        best.truncate(count);
    }
    best
}

/// The index's terms, borrowed while a tool is inserted.
struct Terms<'a> {
    ids: &'a mut FxHashMap<Box<str>, u32>,
    postings: &'a mut Vec<PostingList>,
    text: &'a mut String,
    ends: &'a mut Vec<u32>,
}

/// The term id of a lowercased word, stemming and interning it the first
/// time it is seen; [`STOP`] for stop words.
fn word_term(
    word_ids: &mut FxHashMap<Box<str>, u32>,
    terms: &mut Terms<'_>,
    stemmed: &mut String,
    word: &str,
) -> u32 {
    if let Some(&known) = word_ids.get(word) {
        return known;
    }
    let id = if term_of(word, stemmed) {
        intern(terms, stemmed)
    } else {
        STOP
    };
    word_ids.insert(word.into(), id);
    id
}

fn intern(terms: &mut Terms<'_>, term: &str) -> u32 {
    if let Some(&known) = terms.ids.get(term) {
        return known;
    }
    let fresh = u32::try_from(terms.postings.len()).unwrap_or(STOP - 1);
    terms.ids.insert(term.into(), fresh);
    terms.postings.push(PostingList::default());
    terms.text.push_str(term);
    terms
        .ends
        .push(u32::try_from(terms.text.len()).unwrap_or(u32::MAX));
    fresh
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
    iris_core::text::clip(sentence, 159).into_owned()
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::{
        EXAMPLE_WEIGHT, NAME_WEIGHT, PARAMETER_WEIGHT, TAG_WEIGHT, TEXT_WEIGHT, best_of, tenths_of,
    };

    /// Postings store frequencies in tenths: every field weight must be a
    /// whole number of them, or frequencies would be rounded.
    #[test]
    fn field_weights_are_whole_tenths() {
        for weight in [
            NAME_WEIGHT,
            TAG_WEIGHT,
            TEXT_WEIGHT,
            PARAMETER_WEIGHT,
            EXAMPLE_WEIGHT,
        ] {
            let tenths = weight * 10.0;
            assert!((tenths - tenths.round()).abs() < 1e-4, "{weight}");
            assert!((f32::from(tenths_of(weight)) * 0.1 - weight).abs() < 1e-6);
        }
        assert_eq!(tenths_of(1e9), u16::MAX, "saturates");
    }

    proptest! {
        /// The one-pass pick keeps exactly what a full sort puts first,
        /// ties included (equal scores order by tool id).
        #[test]
        fn best_of_matches_a_full_sort(
            scores in proptest::collection::vec(0u8..8, 0..200),
            count in 1usize..20,
        ) {
            let by_score = |a: &u32, b: &u32| {
                scores[*b as usize]
                    .cmp(&scores[*a as usize])
                    .then_with(|| a.cmp(b))
            };
            let ids: Vec<u32> = (0..u32::try_from(scores.len()).unwrap_or(0)).rev().collect();
            let mut sorted = ids.clone();
            sorted.sort_unstable_by(by_score);
            sorted.truncate(count);
            prop_assert_eq!(best_of(&ids, count, by_score), sorted);
        }
    }
}
