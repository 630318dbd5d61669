//! Errors in the user's kernel, with spans into the source file, rendered
//! the way rustc renders its own: `error: message`, then `--> file:line:col`,
//! the source line and a caret under the culprit (codespan-reporting does the
//! layout, so multi-line spans and notes look right without our own code).

use codespan_reporting::diagnostic::{Diagnostic as CsDiagnostic, Label};
use codespan_reporting::files::SimpleFile;
use codespan_reporting::term::{self, Chars, Config};

/// A byte range in the source file.
pub type Span = std::ops::Range<usize>;

/// One error: a message, the primary span it points at, and optional
/// secondary labels and notes (`= note: ...`).
#[derive(Clone, Debug, PartialEq)]
pub struct Diagnostic {
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
            message: message.into(),
            span,
            label: String::new(),
            secondary: Vec::new(),
            notes: Vec::new(),
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
            let span = clamp(&self.source, &d.span);
            let mut labels = vec![Label::primary((), span).with_message(d.label.clone())];
            for (s, m) in &d.secondary {
                labels.push(Label::secondary((), clamp(&self.source, s)).with_message(m.clone()));
            }
            let cs = CsDiagnostic::error()
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
                    out.push_str(&format!(
                        "error: {}\n --> {}:{l}:{c}\n",
                        d.message, self.file
                    ));
                }
            }
        }
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
