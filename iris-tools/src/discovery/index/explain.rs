//! Why a tool scores what it does for a query: each query term's share of
//! the score, for people tuning a catalog (`iris search --explain`, `iris
//! lint`). A slow path, one tool at a time; searching never uses it.

use serde::Serialize;

use super::super::postings::PostingList;
use super::{K1, QueryTerm, SearchIndex, associations, for_each_word, idf, term_of};

/// How one tool scored for a query, term by term.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Explanation {
    /// The tool.
    pub tool: String,
    /// The score: the sum of the terms' gains.
    pub score: f32,
    /// Share of the query's weight (the IDF of its terms) the tool matched.
    pub coverage: f32,
    /// Each term of the query, and each catalog term related to one, that
    /// the tool has, largest gain first; then the query's terms it lacks.
    pub terms: Vec<TermGain>,
}

/// One term's part in a score.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TermGain {
    /// The term, as indexed (lowercased and stemmed).
    pub term: String,
    /// Its inverse document frequency in the catalog: rarer terms weigh more.
    pub idf: f32,
    /// What it adds to the tool's score (0 when the tool lacks it).
    pub gain: f32,
    /// How the term came into the query: its own word, a catalog term
    /// related to one of its words (with the relation's weight; it adds a
    /// share of its gain and nothing to coverage), or a word no tool has.
    pub source: TermSource,
}

/// Where a [`TermGain`]'s term came from.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TermSource {
    /// A word of the query.
    Query,
    /// A catalog term related to a word of the query.
    Related {
        /// The relation's weight, 0 to 1.
        weight: f32,
    },
    /// A word of the query that no tool has.
    Unseen,
}

impl SearchIndex {
    /// How the indexed tool `tool` scores for `query`, term by term;
    /// `None` when no such tool is indexed.
    #[must_use]
    pub fn explain(&self, query_text: &str, tool: &str) -> Option<Explanation> {
        let id = (0..self.name_ends.len())
            .filter_map(|i| u32::try_from(i).ok())
            .find(|&i| self.tool(i) == tool)?;
        let query = self.query_terms(query_text);
        let (n, average) = self.size_and_average_length();
        let length = self.lengths.get(id as usize).copied().unwrap_or(0.0);
        let norm = K1 * (1.0 - super::B) + K1 * super::B * length / average;
        let frequency_of = |term: u32| {
            self.postings
                .get(term as usize)
                .and_then(|list| list.iter().find(|&(t, _)| t == id))
                .map_or(0.0, |(_, tenths)| f32::from(tenths) * 0.1)
        };
        let document_frequency = |term: u32| {
            #[allow(clippy::cast_precision_loss, reason = "as above")]
            let df = self.postings.get(term as usize).map_or(0, PostingList::len) as f32;
            df
        };
        let mut terms = Vec::new();
        let (mut total_weight, mut matched) = (0.0_f32, 0.0_f32);
        for term in &query.terms {
            match *term {
                QueryTerm::Known(term) => {
                    let term_idf = idf(n, document_frequency(term));
                    let frequency = frequency_of(term);
                    total_weight += term_idf;
                    if frequency > 0.0 {
                        matched += term_idf;
                    }
                    terms.push(TermGain {
                        term: self.term_text(term).to_owned(),
                        idf: term_idf,
                        gain: term_idf * (K1 + 1.0) * frequency / (frequency + norm),
                        source: TermSource::Query,
                    });
                }
                QueryTerm::Unseen => total_weight += idf(n, 0.0),
            }
        }
        for &(term, weight) in &query.related {
            let frequency = frequency_of(term);
            if frequency <= 0.0 {
                continue;
            }
            let term_idf = idf(n, document_frequency(term));
            terms.push(TermGain {
                term: self.term_text(term).to_owned(),
                idf: term_idf,
                gain: term_idf * (K1 + 1.0) * associations::RELATED_SHARE * weight * frequency
                    / (frequency + norm),
                source: TermSource::Related { weight },
            });
        }
        terms.sort_by(|a, b| b.gain.total_cmp(&a.gain));
        let mut stemmed = String::new();
        for_each_word(query_text, |word| {
            if self.word_ids.contains_key(word) || !term_of(word, &mut stemmed) {
                return;
            }
            let counted = !stemmed.bytes().all(|b| b.is_ascii_digit());
            if counted
                && !self.term_ids.contains_key(stemmed.as_str())
                && !terms.iter().any(|t| t.term == stemmed)
            {
                terms.push(TermGain {
                    term: stemmed.clone(),
                    idf: idf(n, 0.0),
                    gain: 0.0,
                    source: TermSource::Unseen,
                });
            }
        });
        Some(Explanation {
            tool: tool.to_owned(),
            score: terms.iter().map(|t| t.gain).sum(),
            coverage: matched / total_weight.max(f32::EPSILON),
            terms,
        })
    }
}

#[cfg(test)]
mod tests {
    use iris_core::{Exposure, ToolDefinition, ToolName};
    use serde_json::json;

    use super::*;

    fn tool(name: &str, description: &'static str) -> ToolDefinition {
        ToolDefinition::builder(
            ToolName::new(name.to_owned()).expect("a valid name"),
            description,
        )
        .input_schema(json!({"type": "object", "properties": {}}))
        .exposure(Exposure::Deferred)
        .build()
        .expect("a valid definition")
    }

    #[test]
    fn the_gains_add_up_to_the_score_search_gives() {
        let tools = [
            tool("read_file", "Read a text file from the workspace."),
            tool("write_file", "Write a text file, replacing its contents."),
            tool("get_weather", "Current weather for a city."),
        ];
        let index = SearchIndex::build(tools.iter());
        let query = "read the file zzyzx";
        for scored in index.search(query, 3, None) {
            let name = index.tool(scored.tool).to_owned();
            let explained = index.explain(query, &name).expect("indexed");
            assert!(
                (explained.score - scored.score).abs() < 1e-4,
                "{explained:?} vs {scored:?}"
            );
            assert!((explained.coverage - scored.coverage).abs() < 1e-4);
        }
        let read = index.explain(query, "read_file").expect("indexed");
        let unseen: Vec<&str> = read
            .terms
            .iter()
            .filter(|t| t.source == TermSource::Unseen)
            .map(|t| t.term.as_str())
            .collect();
        assert_eq!(unseen, ["zzyzx"]);
        assert!(read.terms[0].gain > 0.0 && read.terms[0].source == TermSource::Query);
        assert!(index.explain(query, "no_such_tool").is_none());
    }
}
