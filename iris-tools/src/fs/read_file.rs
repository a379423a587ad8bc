//! `read_file`: one numbered page of a text file or an artifact.

use std::fmt::Write as _;

use iris_core::{State, ToolContext, ToolErrorKind, ToolResult};
use serde_json::json;

use super::FileService;
use super::page::{Page, PageError, PageRequest, read_page};
use super::workspace::{io_refusal, refused};
use iris_runtime::RuntimeError;
use iris_runtime::artifacts;

/// Largest file `read_file` reads: every page passes over the whole file
/// (to hash it for the read-before-edit rule and count its lines), so a
/// bigger one would cost seconds per page.
const MAX_READ_BYTES: u64 = 1 << 30;

/// Lines in a page when the call does not say.
const DEFAULT_LIMIT: usize = 2000;
/// Characters of file text in one page: with line numbers it stays under
/// the tool's own result limit, so a page is never saved as an artifact.
const PAGE_CHARS: usize = 30_000;

/// Read a text file of the workspace, or a saved artifact, one page at a time.
///
/// Lines come numbered (`    12\tline text`); the numbers are not part of
/// the file. A page holds at most `limit` lines and 30,000 characters; when
/// more follows, the page ends with the exact call that reads the next one.
/// Directories, devices, FIFOs and binary files are refused. Reading a file
/// is what lets `edit_file` and `write_file` change it afterwards.
#[iris_macros::tool(
    crate = "::iris_core",
    built_in,
    read_only,
    concurrency_safe,
    max_result_chars = 100_000
)]
#[must_use]
pub fn read_file(
    /// Path relative to the workspace root, or an artifact handle
    /// (`artifact://...`) from a previewed result.
    path: String,
    /// First line to read, 1-based; 1 when left out.
    offset: Option<usize>,
    /// Most lines to read; 2000 when left out.
    limit: Option<usize>,
    /// Character of the first line to start at, 1-based; continues a line a
    /// previous page cut. 1 when left out.
    column: Option<usize>,
    #[ctx] cx: &ToolContext,
    #[state] files: State<FileService>,
) -> ToolResult {
    let request = PageRequest {
        offset: offset.unwrap_or(1),
        column: column.unwrap_or(1),
        limit: limit.unwrap_or(DEFAULT_LIMIT),
        max_chars: PAGE_CHARS,
    };
    match files.read(cx, &path, request) {
        Ok(page) => render(&path, &page),
        Err(error) => error,
    }
}

impl FileService {
    fn read(&self, cx: &ToolContext, path: &str, request: PageRequest) -> Result<Page, ToolResult> {
        if artifacts::is_handle(path) {
            if !artifacts::scope::may_open(self.ledger(), cx.run_id(), path) {
                return Err(refused(
                    path,
                    "no result of this run named it; this run reads only the artifacts its own calls produced",
                ));
            }
            let file = self
                .artifacts()
                .open(path)
                .map_err(|e| artifact_refusal(path, &e))?;
            return read_page(file, request, false, &|| cx.should_stop())
                .map_err(|e| page_error(path, &e, request));
        }
        let resolved = self.workspace.locate(path)?;
        if resolved.key.file_name().is_some_and(|n| {
            n.to_string_lossy()
                .ends_with(iris_runtime::__wings::TEMP_SUFFIX)
        }) {
            return Err(refused(
                path,
                "it is a temporary file of a write in progress; read the file being written instead",
            ));
        }
        let file = self.open_readable(&resolved)?;
        let size = file.metadata().map_or(0, |m| m.len());
        if size > MAX_READ_BYTES {
            return Err(ToolResult::error(
                ToolErrorKind::UnsupportedContent,
                format!(
                    "`{}` is {size} bytes; read_file reads files of at most {MAX_READ_BYTES} bytes (it checks the whole file for every page); use a tool made for large files",
                    resolved.shown
                ),
            ));
        }
        let page = read_page(file, request, true, &|| cx.should_stop()).map_err(|e| match e {
            PageError::Io(io) => io_refusal(&resolved, &io),
            other => page_error(path, &other, request),
        })?;
        if let Some(hash) = page.hash {
            let lines =
                (page.last_line >= page.first_line).then_some((page.first_line, page.last_line));
            self.observations.record_read(
                cx.run_id(),
                &resolved.key,
                hash,
                page.total_lines,
                lines,
            );
        }
        Ok(page)
    }
}

/// What the model reads when an artifact handle cannot be opened.
fn artifact_refusal(path: &str, error: &RuntimeError) -> ToolResult {
    let shown = iris_runtime::__wings::shorten(path);
    match error {
        RuntimeError::InvalidArtifactHandle { .. } => ToolResult::error(
            ToolErrorKind::InvalidArguments,
            format!(
                "malformed artifact handle `{shown}`; copy the handle exactly as the preview gave it: `artifact://` and 32 hex digits"
            ),
        ),
        RuntimeError::Artifact { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
            ToolResult::error(
                ToolErrorKind::NotFound,
                format!(
                    "no artifact `{shown}` in this workspace; copy the handle exactly as the preview gave it"
                ),
            )
        }
        RuntimeError::ArtifactRefused { reason, .. } => ToolResult::error(
            ToolErrorKind::PathRefused,
            format!("artifact `{shown}` refused: {reason}"),
        ),
        other => ToolResult::error(
            ToolErrorKind::Execution,
            format!("cannot open artifact `{shown}`: {other}"),
        ),
    }
}

fn page_error(path: &str, error: &PageError, request: PageRequest) -> ToolResult {
    match error {
        PageError::Io(io) => ToolResult::error(
            ToolErrorKind::Execution,
            format!("cannot read `{path}`: {io}"),
        ),
        PageError::Binary => ToolResult::error(
            ToolErrorKind::UnsupportedContent,
            format!(
                "`{path}` is a binary file (it holds NUL bytes or text that is not UTF-8); read_file shows text only"
            ),
        ),
        PageError::Stopped => ToolResult::error(
            ToolErrorKind::Cancelled,
            format!("reading `{path}` stopped: the call's deadline passed or it was cancelled"),
        ),
        PageError::OffsetPastEnd { total_lines } => ToolResult::error(
            ToolErrorKind::InvalidArguments,
            format!(
                "offset {} is past the end of `{path}`, which has {total_lines} lines; use an offset from 1 to {total_lines}",
                request.offset
            ),
        ),
        PageError::ColumnPastEnd { line, length } => ToolResult::error(
            ToolErrorKind::InvalidArguments,
            format!(
                "column {} is past the end of line {line} of `{path}`, which has {length} characters",
                request.column
            ),
        ),
    }
}

/// The page as the model reads it, and as the host gets it in `data`.
fn render(path: &str, page: &Page) -> ToolResult {
    let mut out = String::with_capacity(page.text.len() + page.text.len() / 8 + 200);
    if page.first_column > 1 {
        let _ = writeln!(
            out,
            "[line {} continues from character {}]",
            page.first_line, page.first_column
        );
    }
    for (number, line) in (page.first_line..).zip(page.text.split_inclusive('\n')) {
        let shown = line.strip_suffix('\n').unwrap_or(line);
        let shown = shown.strip_suffix('\r').unwrap_or(shown);
        let _ = writeln!(out, "{number:>6}\t{shown}");
    }
    let next = page.next.map(|(offset, column)| {
        if column > 1 {
            json!({"path": path, "offset": offset, "column": column})
        } else {
            json!({"path": path, "offset": offset})
        }
    });
    match (&next, page.total_lines) {
        (_, 0) => out.push_str("[empty file: 0 lines]"),
        (Some(call), total) => {
            let _ = write!(
                out,
                "[lines {}-{} of {total} shown; more follows: read_file {call}]",
                page.first_line, page.last_line
            );
        }
        (None, total) => {
            let _ = write!(
                out,
                "[end of file: lines {}-{} of {total}]",
                page.first_line, page.last_line
            );
        }
    }
    ToolResult::text(out).with_data(json!({
        "path": path,
        "text": page.text,
        "first_line": page.first_line,
        "first_column": page.first_column,
        "last_line": page.last_line,
        "total_lines": page.total_lines,
        "total_bytes": page.total_bytes,
        "next": next,
    }))
}
