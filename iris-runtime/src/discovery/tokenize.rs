//! Words for ranking: names split at `_`, `-`, `.`, `/` and camelCase humps,
//! everything lowercased, stop words dropped (including the request
//! boilerplate models write: "can you help me find ..."), and a light
//! suffix stemmer so "renting", "rents" and "rent" meet.

/// Words that say nothing about which tool is wanted.
const STOP_WORDS: &[&str] = &[
    "a", "about", "after", "again", "against", "all", "also", "am", "among", "an", "and", "any",
    "are", "around", "as", "at", "be", "been", "before", "being", "between", "both", "but", "by",
    "can", "could", "did", "do", "does", "doing", "don", "down", "during", "each", "every", "few",
    "find", "for", "from", "further", "get", "give", "had", "has", "have", "having", "he", "help",
    "her", "here", "him", "his", "how", "i", "if", "in", "into", "is", "it", "its", "just", "know",
    "let", "like", "make", "may", "me", "might", "more", "most", "must", "my", "need", "no", "nor",
    "not", "now", "of", "on", "once", "only", "or", "other", "our", "out", "over", "own", "please",
    "same", "shall", "she", "should", "show", "so", "some", "such", "tell", "than", "that", "the",
    "their", "them", "then", "there", "these", "they", "this", "those", "through", "to", "too",
    "under", "up", "use", "using", "very", "want", "was", "we", "were", "what", "when", "where",
    "which", "who", "whom", "whose", "why", "will", "with", "without", "would", "you", "your",
];

/// Suffixes removed by the stemmer, longest first, with what replaces them.
const SUFFIXES: &[(&str, &str)] = &[
    ("ational", "ate"),
    ("ization", "ize"),
    ("ations", "ate"),
    ("ation", "ate"),
    ("sses", "ss"),
    ("ments", "ment"),
    ("edly", ""),
    ("ness", ""),
    ("ings", ""),
    ("ies", "y"),
    ("ing", ""),
    ("ers", "er"),
    ("ed", ""),
    ("es", "e"),
    ("s", ""),
];

/// Calls `emit` with each indexable word of `text`, stemmed.
pub(crate) fn for_each_term(text: &str, mut emit: impl FnMut(&str)) {
    let mut stemmed = String::with_capacity(24);
    for_each_word(text, |word| {
        if term_of(word, &mut stemmed) {
            emit(&stemmed);
        }
    });
}

/// Calls `emit` with each word of `text` of two or more characters,
/// lowercased, before stop words and stemming.
pub(crate) fn for_each_word(text: &str, mut emit: impl FnMut(&str)) {
    let mut word = String::with_capacity(24);
    let mut previous_lower = false;
    for ch in text.chars() {
        if ch.is_alphanumeric() {
            // A lower-to-upper step is a camelCase boundary.
            if ch.is_uppercase() && previous_lower && !word.is_empty() {
                flush(&mut word, &mut emit);
            }
            previous_lower = ch.is_lowercase() || ch.is_ascii_digit();
            if ch.is_ascii() {
                word.push(ch.to_ascii_lowercase());
            } else {
                word.extend(ch.to_lowercase());
            }
        } else {
            previous_lower = false;
            flush(&mut word, &mut emit);
        }
    }
    flush(&mut word, &mut emit);
}

fn flush(word: &mut String, emit: &mut impl FnMut(&str)) {
    if word.len() > 1 {
        emit(word);
    }
    word.clear();
}

/// The term a lowercased `word` indexes as, written to `out`; `false` for
/// a stop word.
pub(crate) fn term_of(word: &str, out: &mut String) -> bool {
    if is_stop_word(word) {
        return false;
    }
    stem_into(word, out);
    true
}

/// The terms of `text`, in order.
#[cfg(test)]
fn terms(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for_each_term(text, |t| out.push(t.to_owned()));
    out
}

/// Stop words as a set: checked for every word indexed, so a hash beats a
/// binary search of string comparisons.
fn is_stop_word(word: &str) -> bool {
    /// The longest stop word: longer words skip the lookup.
    const LONGEST: usize = 7;
    static SET: std::sync::OnceLock<rustc_hash::FxHashSet<&'static str>> =
        std::sync::OnceLock::new();
    if word.len() > LONGEST {
        return false;
    }
    SET.get_or_init(|| STOP_WORDS.iter().copied().collect())
        .contains(word)
}

/// A light stemmer: one suffix off (keeping a stem of three letters or
/// more), then a final `e` off longer stems so "rate" and "rating" meet.
fn stem_into(word: &str, out: &mut String) {
    out.clear();
    out.push_str(word);
    if word.bytes().any(|b| b.is_ascii_digit()) {
        return;
    }
    for (suffix, replacement) in SUFFIXES {
        if let Some(stem) = word.strip_suffix(suffix)
            && stem.chars().count() >= 3
        {
            out.clear();
            out.push_str(stem);
            out.push_str(replacement);
            break;
        }
    }
    if out.len() > 4 && out.ends_with('e') {
        out.pop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_words_are_listed_once() {
        assert!(STOP_WORDS.windows(2).all(|w| w[0] < w[1]));
        assert!(is_stop_word("the") && !is_stop_word("weather"));
        assert!(STOP_WORDS.iter().all(|w| is_stop_word(w)));
    }

    #[test]
    fn names_split_and_words_meet() {
        assert_eq!(terms("getWeatherForecast"), ["weather", "forecast"]);
        assert_eq!(terms("house_renting_tool"), ["hous", "rent", "tool"]);
        assert_eq!(terms("houses"), terms("house"));
        assert_eq!(terms("fs.read-file/v2"), ["fs", "read", "file", "v2"]);
        assert_eq!(terms("Can you help me find rentals?"), ["rental"]);
        assert_eq!(terms("rents"), terms("renting"));
        assert_eq!(terms("HTTPServer"), ["httpserver"]);
    }
}
