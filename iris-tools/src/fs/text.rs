//! Text rules shared by `edit_file` and `write_file`: line endings kept as
//! the file has them, and where each match of `old_string` lies.

/// How a file breaks its lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LineEnding {
    /// `\n`, or a mix (left exactly as it is).
    Lf,
    /// Every line break is `\r\n`.
    Crlf,
}

impl LineEnding {
    pub(crate) fn of(text: &str) -> Self {
        let breaks = text.bytes().filter(|&b| b == b'\n').count();
        if breaks > 0 && text.matches("\r\n").count() == breaks {
            LineEnding::Crlf
        } else {
            LineEnding::Lf
        }
    }

    /// `text` with its line breaks in this style. Only a pure `\r\n` file
    /// converts; anything else is left byte for byte.
    pub(crate) fn apply(self, text: &str) -> String {
        match self {
            LineEnding::Lf => text.to_owned(),
            LineEnding::Crlf => text.replace("\r\n", "\n").replace('\n', "\r\n"),
        }
    }

    /// `text` as a model usually writes it: `\n` breaks.
    pub(crate) fn normalize(self, text: &str) -> String {
        match self {
            LineEnding::Lf => text.to_owned(),
            LineEnding::Crlf => text.replace("\r\n", "\n"),
        }
    }
}

/// Lines in `text`: a final line break does not start another line.
pub(crate) fn line_count(text: &str) -> usize {
    let breaks = text.bytes().filter(|&b| b == b'\n').count();
    breaks + usize::from(!text.is_empty() && !text.ends_with('\n'))
}

/// The 1-based lines `first..=last` that a span of `len` bytes at `start`
/// covers (a line break at its end belongs to the line it ends).
pub(crate) fn span_lines(text: &str, start: usize, len: usize) -> (usize, usize) {
    let first = 1 + text[..start].bytes().filter(|&b| b == b'\n').count();
    let span = &text[start..start + len];
    let span = span.strip_suffix('\n').unwrap_or(span);
    (first, first + span.bytes().filter(|&b| b == b'\n').count())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endings_round_trip() {
        assert_eq!(LineEnding::of("a\r\nb\r\n"), LineEnding::Crlf);
        assert_eq!(LineEnding::of("a\r\nb\n"), LineEnding::Lf);
        assert_eq!(LineEnding::of("no break"), LineEnding::Lf);
        assert_eq!(LineEnding::Crlf.apply("x\ny\r\n"), "x\r\ny\r\n");
        assert_eq!(LineEnding::Crlf.normalize("x\r\ny"), "x\ny");
    }

    #[test]
    fn spans_map_to_lines() {
        let text = "one\ntwo\nthree\n";
        assert_eq!(span_lines(text, 4, 3), (2, 2));
        assert_eq!(span_lines(text, 4, 4), (2, 2));
        assert_eq!(span_lines(text, 0, 9), (1, 3));
        assert_eq!(line_count(text), 3);
        assert_eq!(line_count("a\nb"), 2);
        assert_eq!(line_count(""), 0);
    }
}
