//! Errors in the user's kernel, with spans into the source file, rendered
//! the way rustc renders its own: `error: message`, then `--> file:line:col`,
//! the source line and a caret under the culprit (codespan-reporting does the
//! layout, so multi-line spans and notes look right without our own code).

use codespan_reporting::diagnostic::{Diagnostic as CsDiagnostic, Label};
use codespan_reporting::files::SimpleFile;
use codespan_reporting::term::{self, Chars, Config};

/// A byte range in the source file.
pub type Span = std::ops::Range<usize>;

/// Whether a diagnostic stops compilation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Severity {
    #[default]
    Error,
    /// Compilation goes on; the code is legal but almost surely wrong.
    Warning,
}

/// One error or warning: a message, the primary span it points at, and
/// optional secondary labels and notes (`= note: ...`).
#[derive(Clone, Debug, PartialEq)]
pub struct Diagnostic {
    pub severity: Severity,
    pub message: String,
    pub span: Span,
    /// Text shown next to the caret; empty for none.
    pub label: String,
    pub secondary: Vec<(Span, String)>,
    pub notes: Vec<String>,
}

impl Diagnostic {
    pub fn error(span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            message: message.into(),
            span,
            label: String::new(),
            secondary: Vec::new(),
            notes: Vec::new(),
        }
    }

    pub fn warning(span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Warning,
            ..Diagnostic::error(span, message)
        }
    }

    pub fn with_label(mut self, label: impl Into<String>) -> Diagnostic {
        self.label = label.into();
        self
    }

    pub fn with_secondary(mut self, span: Span, label: impl Into<String>) -> Diagnostic {
        self.secondary.push((span, label.into()));
        self
    }

    pub fn with_note(mut self, note: impl Into<String>) -> Diagnostic {
        self.notes.push(note.into());
        self
    }
}

/// The errors of one compilation, with the file they point into.
#[derive(Clone, Debug)]
pub struct Diagnostics {
    pub file: String,
    pub source: String,
    pub list: Vec<Diagnostic>,
}

impl Diagnostics {
    pub fn new(file: &str, source: &str, list: Vec<Diagnostic>) -> Diagnostics {
        Diagnostics {
            file: file.to_string(),
            source: source.to_string(),
            list,
        }
    }

    /// 1-based line and column (in characters) of a byte offset.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        line_col(&self.source, offset)
    }

    /// The rendered text: every diagnostic with `file:line:col`, the source
    /// line and a caret. ASCII only, so that expectations and logs stay
    /// plain; ANSI colours when `color` is set.
    pub fn render(&self, color: bool) -> String {
        let file = SimpleFile::new(self.file.as_str(), self.source.as_str());
        let config = Config {
            chars: Chars::ascii(),
            ..Config::default()
        };
        let mut out = String::new();
        for d in &self.list {
            if self.touches_long_line(d) {
                out.push_str(&self.render_long_line(d));
                continue;
            }
            let span = clamp(&self.source, &d.span);
            let mut labels = vec![Label::primary((), span).with_message(d.label.clone())];
            for (s, m) in &d.secondary {
                labels.push(Label::secondary((), clamp(&self.source, s)).with_message(m.clone()));
            }
            let cs = match d.severity {
                Severity::Error => CsDiagnostic::error(),
                Severity::Warning => CsDiagnostic::warning(),
            };
            let cs = cs
                .with_message(d.message.clone())
                .with_labels(labels)
                .with_notes(d.notes.clone());
            let rendered = if color {
                render_ansi(&config, &file, &cs)
            } else {
                term::emit_into_string(&config, &file, &cs).ok()
            };
            // Rendering can only fail on spans outside the file, which
            // `clamp` rules out; fall back to a plain line regardless.
            match rendered {
                Some(text) => out.push_str(&text),
                None => {
                    let (l, c) = self.line_col(d.span.start);
                    let severity = match d.severity {
                        Severity::Error => "error",
                        Severity::Warning => "warning",
                    };
                    out.push_str(&format!(
                        "{severity}: {}\n --> {}:{l}:{c}\n",
                        d.message, self.file
                    ));
                }
            }
        }
        out
    }
}

/// Source lines longer than this are shown as a window around the caret,
/// not whole: one generated 1 MB line would otherwise be echoed by every
/// diagnostic pointing into it.
const MAX_SHOWN_LINE_BYTES: usize = 240;
/// Characters shown before the caret in such a window.
const WINDOW_BEFORE: usize = 60;
/// Characters shown in all in such a window.
const WINDOW_CHARS: usize = 160;

impl Diagnostics {
    /// The text of the line holding byte `offset` (without its newline).
    fn line_text(&self, offset: usize) -> &str {
        let offset = clamp(&self.source, &(offset..offset)).start;
        let start = self.source[..offset].rfind('\n').map_or(0, |i| i + 1);
        let end = self.source[offset..]
            .find('\n')
            .map_or(self.source.len(), |i| offset + i);
        &self.source[start..end]
    }

    fn touches_long_line(&self, d: &Diagnostic) -> bool {
        std::iter::once(&d.span)
            .chain(d.secondary.iter().map(|(s, _)| s))
            .any(|s| self.line_text(s.start).len() > MAX_SHOWN_LINE_BYTES)
    }

    /// The layout codespan-reporting gives (header, `-->`, gutter, caret,
    /// notes), with only a window of the primary line; secondary labels
    /// become `-->` lines of their own.
    fn render_long_line(&self, d: &Diagnostic) -> String {
        let (line, col) = self.line_col(d.span.start);
        let text = self.line_text(d.span.start);
        let chars: Vec<char> = text.chars().collect();
        let caret = col - 1;
        let start = caret.saturating_sub(WINDOW_BEFORE);
        let end = (start + WINDOW_CHARS).min(chars.len());
        let (pre, post) = (
            if start > 0 { "..." } else { "" },
            if end < chars.len() { "..." } else { "" },
        );
        let window: String = chars[start..end].iter().collect();
        let span_chars = self.source[clamp(&self.source, &d.span)].chars().count();
        let carets = span_chars.clamp(1, end.saturating_sub(caret).max(1));
        let gutter = " ".repeat(line.to_string().len() + 1);
        let severity = match d.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        let mut out = format!("{severity}: {}\n", d.message);
        out.push_str(&format!("{gutter}--> {}:{line}:{col}\n", self.file));
        out.push_str(&format!("{gutter}|\n{line} | {pre}{window}{post}\n"));
        let marker = format!(
            "{gutter}| {}{} {}",
            " ".repeat(pre.len() + caret - start),
            "^".repeat(carets),
            d.label
        );
        out.push_str(marker.trim_end());
        out.push('\n');
        for (s, label) in &d.secondary {
            let (l, c) = self.line_col(s.start);
            out.push_str(&format!("{gutter}--> {}:{l}:{c}: {label}\n", self.file));
        }
        if !d.notes.is_empty() {
            out.push_str(&format!("{gutter}|\n"));
        }
        for n in &d.notes {
            out.push_str(&format!("{gutter}= {n}\n"));
        }
        out.push('\n');
        out
    }
}

fn render_ansi(
    config: &Config,
    file: &SimpleFile<&str, &str>,
    diagnostic: &CsDiagnostic<()>,
) -> Option<String> {
    use codespan_reporting::term::termcolor::Buffer;
    use codespan_reporting::term::{Styles, StylesWriter};
    let styles = Styles::default();
    let mut buffer = Buffer::ansi();
    let mut writer = StylesWriter::new(&mut buffer, &styles);
    term::emit_to_write_style(&mut writer, config, file, diagnostic).ok()?;
    String::from_utf8(buffer.into_inner()).ok()
}

/// Keeps a span inside the source and on character boundaries.
fn clamp(source: &str, span: &Span) -> Span {
    let mut start = span.start.min(source.len());
    let mut end = span.end.clamp(start, source.len());
    while !source.is_char_boundary(start) {
        start -= 1;
    }
    while !source.is_char_boundary(end) {
        end += 1;
    }
    start..end
}

/// 1-based line and column (in characters) of a byte offset in `source`.
pub fn line_col(source: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(source.len());
    let before = &source[..clamp(source, &(offset..offset)).start];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let col = before[line_start..].chars().count() + 1;
    (line, col)
}
