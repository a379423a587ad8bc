//! Reading one page of a text file in a single streaming pass: the bytes
//! before the page are skipped, the page is kept, the rest is only counted
//! (lines) and hashed, so a page from the middle of a 100 MB file holds one
//! buffer and the page in memory.
//!
//! Pages are cut by lines and by characters; a line longer than the
//! character budget is cut inside and continued at a column, so even one
//! huge line reads back in pages. The raw bytes of consecutive pages
//! concatenate to the file, byte for byte.

use std::io::{self, Read};

use sha2::{Digest, Sha256};

use super::observation::ContentHash;

const CHUNK: usize = 64 * 1024;

/// Where a page starts and how much it may hold.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PageRequest {
    /// First line, 1-based.
    pub(crate) offset: usize,
    /// First character of that line, 1-based.
    pub(crate) column: usize,
    /// Most lines.
    pub(crate) limit: usize,
    /// Most characters of raw text.
    pub(crate) max_chars: usize,
}

/// One page and what the pass learnt about the whole file.
#[derive(Debug)]
pub(crate) struct Page {
    /// The page's bytes exactly as in the file (valid UTF-8).
    pub(crate) text: String,
    /// The line and column the page starts at.
    pub(crate) first_line: usize,
    pub(crate) first_column: usize,
    /// The last line the page shows any of (`first_line - 1` when empty).
    pub(crate) last_line: usize,
    /// Where the next page starts; `None` when this one reached the end.
    pub(crate) next: Option<(usize, usize)>,
    /// Lines in the whole file.
    pub(crate) total_lines: usize,
    /// Bytes in the whole file.
    pub(crate) total_bytes: u64,
    /// Hash of the whole file, when asked for.
    pub(crate) hash: Option<ContentHash>,
}

/// Why no page could be cut.
#[derive(Debug)]
pub(crate) enum PageError {
    Io(io::Error),
    /// NUL bytes (anywhere in the file) or text that is not UTF-8.
    Binary,
    /// The call was asked to stop (its deadline passed) before the pass
    /// ended.
    Stopped,
    /// The offset lies past the last line.
    OffsetPastEnd {
        total_lines: usize,
    },
    /// The column lies past the end of its line.
    ColumnPastEnd {
        line: usize,
        length: usize,
    },
}

impl From<io::Error> for PageError {
    fn from(error: io::Error) -> Self {
        PageError::Io(error)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Seek,
    Emit,
    Done,
}

struct Scan {
    request: PageRequest,
    phase: Phase,
    line: usize,
    /// Characters of the current line already passed.
    column: usize,
    out: Vec<u8>,
    out_chars: usize,
    lines_done: usize,
    last_line: usize,
    next: Option<(usize, usize)>,
    column_past_end: Option<(usize, usize)>,
    newlines: usize,
    last_byte: Option<u8>,
    bytes: u64,
    nul: bool,
    hasher: Option<Sha256>,
}

/// Reads the page `request` asks for from `reader`, hashing the whole
/// content when `hash` is set. The pass ends early at the first NUL byte
/// (binary content) and when `stop` says the call should stop.
pub(crate) fn read_page(
    mut reader: impl Read,
    request: PageRequest,
    hash: bool,
    stop: &dyn Fn() -> bool,
) -> Result<Page, PageError> {
    let mut scan = Scan {
        request: PageRequest {
            offset: request.offset.max(1),
            column: request.column.max(1),
            limit: request.limit.max(1),
            max_chars: request.max_chars.max(1),
        },
        phase: Phase::Seek,
        line: 1,
        column: 0,
        out: Vec::new(),
        out_chars: 0,
        lines_done: 0,
        last_line: request.offset.max(1) - 1,
        next: None,
        column_past_end: None,
        newlines: 0,
        last_byte: None,
        bytes: 0,
        nul: false,
        hasher: hash.then(Sha256::new),
    };
    let mut buf = vec![0_u8; CHUNK];
    loop {
        let n = match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e.into()),
        };
        scan.feed(&buf[..n]);
        if scan.nul {
            return Err(PageError::Binary);
        }
        if stop() {
            return Err(PageError::Stopped);
        }
    }
    scan.finish()
}

const fn starts_char(byte: u8) -> bool {
    byte & 0xC0 != 0x80
}

impl Scan {
    fn feed(&mut self, chunk: &[u8]) {
        if let Some(hasher) = &mut self.hasher {
            hasher.update(chunk);
        }
        // Anywhere, not only near the start: text followed by binary data
        // is binary.
        self.nul |= chunk.contains(&0);
        self.bytes += chunk.len() as u64;
        #[allow(
            clippy::naive_bytecount,
            reason = "this loop vectorizes; a crate for it would add a dependency for no gain here"
        )]
        let newlines = chunk.iter().filter(|&&b| b == b'\n').count();
        self.newlines += newlines;
        self.last_byte = chunk.last().copied().or(self.last_byte);

        let mut i = 0;
        while i < chunk.len() {
            match self.phase {
                Phase::Seek => i = self.seek(chunk, i),
                Phase::Emit => i = self.emit(chunk, i),
                Phase::Done => break,
            }
        }
    }

    /// Skips toward the page start; returns the next index to look at.
    fn seek(&mut self, chunk: &[u8], i: usize) -> usize {
        let start = (self.request.offset, self.request.column);
        if self.line < start.0 {
            return match chunk[i..].iter().position(|&b| b == b'\n') {
                Some(p) => {
                    self.line += 1;
                    self.column = 0;
                    i + p + 1
                }
                None => chunk.len(),
            };
        }
        let byte = chunk[i];
        if starts_char(byte) {
            if self.column + 1 == start.1 {
                self.phase = Phase::Emit;
                return i;
            }
            if byte == b'\n' {
                self.column_past_end = Some((self.line, self.column));
                self.phase = Phase::Done;
                return i;
            }
            self.column += 1;
        }
        i + 1
    }

    /// Keeps page bytes until a budget runs out.
    fn emit(&mut self, chunk: &[u8], mut i: usize) -> usize {
        while i < chunk.len() {
            let byte = chunk[i];
            if starts_char(byte) {
                if self.out_chars == self.request.max_chars {
                    self.next = Some((self.line, self.column + 1));
                    self.phase = Phase::Done;
                    return i;
                }
                self.out_chars += 1;
                self.column += 1;
            }
            self.out.push(byte);
            self.last_line = self.line;
            i += 1;
            if byte == b'\n' {
                self.lines_done += 1;
                self.line += 1;
                self.column = 0;
                if self.lines_done == self.request.limit {
                    self.next = Some((self.line, 1));
                    self.phase = Phase::Done;
                    return i;
                }
            }
        }
        i
    }

    fn finish(self) -> Result<Page, PageError> {
        let unterminated = self.last_byte.is_some_and(|b| b != b'\n');
        let total_lines = self.newlines + usize::from(unterminated);
        if self.nul {
            return Err(PageError::Binary);
        }
        if let Some((line, length)) = self.column_past_end {
            return Err(PageError::ColumnPastEnd { line, length });
        }
        let request = self.request;
        let next = match self.phase {
            Phase::Seek => {
                let empty_file_from_the_top =
                    total_lines == 0 && request.offset == 1 && request.column == 1;
                if !empty_file_from_the_top {
                    return Err(if request.offset > total_lines {
                        PageError::OffsetPastEnd { total_lines }
                    } else {
                        PageError::ColumnPastEnd {
                            line: request.offset,
                            length: self.column,
                        }
                    });
                }
                None
            }
            Phase::Emit => None,
            // Stopping right at the end of the file leaves nothing to read.
            Phase::Done => self.next.filter(|&(line, _)| line <= total_lines),
        };
        let text = String::from_utf8(self.out).map_err(|_| PageError::Binary)?;
        Ok(Page {
            text,
            first_line: request.offset,
            first_column: request.column,
            last_line: self.last_line,
            next,
            total_lines,
            total_bytes: self.bytes,
            hash: self.hasher.map(|h| h.finalize().into()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(body: &str, offset: usize, column: usize, limit: usize, max_chars: usize) -> Page {
        read_page(
            body.as_bytes(),
            PageRequest {
                offset,
                column,
                limit,
                max_chars,
            },
            false,
            &|| false,
        )
        .unwrap()
    }

    /// Reads every page in turn and checks they rebuild the body.
    fn all_pages(body: &str, limit: usize, max_chars: usize) -> usize {
        let (mut at, mut rebuilt, mut pages) = ((1, 1), String::new(), 0);
        loop {
            let p = page(body, at.0, at.1, limit, max_chars);
            rebuilt.push_str(&p.text);
            pages += 1;
            match p.next {
                Some(next) => at = next,
                None => break,
            }
        }
        assert_eq!(rebuilt, body);
        pages
    }

    #[test]
    fn pages_rebuild_the_file() {
        assert_eq!(all_pages("a\nb\nc\n", 2, 100), 2);
        assert_eq!(all_pages("a\nb\nc", 1, 100), 3);
        assert_eq!(all_pages("", 5, 100), 1);
        assert_eq!(all_pages(&"é".repeat(1000), 5, 64), 16);
        all_pages("line one\r\nline two\r\n\r\nlast", 1, 3);
    }

    #[test]
    fn counts_and_bounds() {
        let p = page("a\nb\nc\n", 2, 1, 1, 100);
        assert_eq!((p.text.as_str(), p.first_line, p.last_line), ("b\n", 2, 2));
        assert_eq!((p.next, p.total_lines), (Some((3, 1)), 3));
        assert!(matches!(
            read_page(
                &b"a\nb"[..],
                PageRequest {
                    offset: 5,
                    column: 1,
                    limit: 1,
                    max_chars: 9
                },
                false,
                &|| false
            ),
            Err(PageError::OffsetPastEnd { total_lines: 2 })
        ));
        assert!(matches!(
            read_page(
                &b"ab\n"[..],
                PageRequest {
                    offset: 1,
                    column: 9,
                    limit: 1,
                    max_chars: 9
                },
                false,
                &|| false
            ),
            Err(PageError::ColumnPastEnd { line: 1, length: 2 })
        ));
        assert!(matches!(
            read_page(
                &b"a\0b"[..],
                PageRequest {
                    offset: 1,
                    column: 1,
                    limit: 1,
                    max_chars: 9
                },
                false,
                &|| false
            ),
            Err(PageError::Binary)
        ));
    }
}
