//! Python source → [`crate::ast`], through tree-sitter-python.
//!
//! tree-sitter always produces a tree; a file with syntax errors has
//! `ERROR` or `MISSING` nodes, and the first of them (in source order)
//! becomes the diagnostic, since later ones are often its echoes.

use std::rc::Rc;

use tree_sitter::{Node, Parser};

use crate::ast::*;
use crate::diagnostics::Diagnostic;

/// Nesting beyond this is rejected instead of risking the stack: no kernel
/// nests expressions this deep, a fuzzer easily does.
const MAX_DEPTH: usize = 200;

pub fn parse_module(source: &str) -> Result<Module, Diagnostic> {
    let mut parser = Parser::new();
    parser
        .set_language(&tree_sitter_python::LANGUAGE.into())
        .map_err(|e| Diagnostic::error(0..0, format!("cannot load the Python grammar: {e}")))?;
    let tree = parser
        .parse(source, None)
        .ok_or_else(|| Diagnostic::error(0..0, "the Python parser gave up on this file"))?;
    let root = tree.root_node();
    if root.has_error() {
        return Err(syntax_error(root, source));
    }
    let conv = Converter { src: source };
    let body = conv.block(root, 0)?;
    Ok(Module { body })
}

fn syntax_error(root: Node, source: &str) -> Diagnostic {
    // Depth-first, source order: the first ERROR or MISSING node.
    fn find<'t>(n: Node<'t>) -> Option<Node<'t>> {
        if n.is_error() || n.is_missing() {
            return Some(n);
        }
        if !n.has_error() {
            return None;
        }
        let mut cursor = n.walk();
        let children: Vec<Node<'t>> = n.children(&mut cursor).collect();
        children.into_iter().find_map(find)
    }
    let Some(bad) = find(root) else {
        return Diagnostic::error(0..0, "invalid syntax");
    };
    if bad.is_missing() {
        let what = bad.kind();
        let at = bad.start_byte();
        // A missing token has an empty span; point at the character before
        // it when that is on the same line (where the user stopped typing).
        let span = if at > 0 && !source[..at].ends_with('\n') {
            let prev = source[..at].char_indices().last().map_or(0, |(i, _)| i);
            prev..at
        } else {
            at..at
        };
        return Diagnostic::error(span, format!("invalid syntax: expected `{what}`"))
            .with_label(format!("expected `{what}` here"));
    }
    // An ERROR node: point at its first token.
    let mut first = bad;
    while first.child_count() > 0 {
        match first.child(0) {
            Some(c) => first = c,
            None => break,
        }
    }
    let span = if first.byte_range().is_empty() {
        bad.byte_range()
    } else {
        first.byte_range()
    };
    let text = &source[span.clone()];
    let shown: String = text.chars().take(20).collect();
    Diagnostic::error(span, "invalid syntax")
        .with_label(format!("unexpected `{}`", shown.escape_debug()))
}

struct Converter<'s> {
    src: &'s str,
}

fn err(node: Node, msg: impl Into<String>) -> Diagnostic {
    Diagnostic::error(node.byte_range(), msg)
}

fn named_children<'t>(n: Node<'t>) -> Vec<Node<'t>> {
    let mut cursor = n.walk();
    n.named_children(&mut cursor)
        .filter(|c| c.kind() != "comment")
        .collect()
}

fn all_children<'t>(n: Node<'t>) -> Vec<Node<'t>> {
    let mut cursor = n.walk();
    n.children(&mut cursor)
        .filter(|c| c.kind() != "comment")
        .collect()
}

impl<'s> Converter<'s> {
    fn text(&self, n: Node) -> &'s str {
        &self.src[n.byte_range()]
    }

    fn field<'t>(&self, n: Node<'t>, name: &str) -> Result<Node<'t>, Diagnostic> {
        n.child_by_field_name(name)
            .ok_or_else(|| err(n, format!("malformed `{}`: no {name}", n.kind())))
    }

    fn block(&self, n: Node, depth: usize) -> Result<Vec<Stmt>, Diagnostic> {
        let mut out = Vec::new();
        for c in named_children(n) {
            self.stmt(c, depth + 1, &mut out)?;
        }
        Ok(out)
    }

    fn stmt(&self, n: Node, depth: usize, out: &mut Vec<Stmt>) -> Result<(), Diagnostic> {
        if depth > MAX_DEPTH {
            return Err(err(
                n,
                format!("statements are nested more than {MAX_DEPTH} levels deep; move the inner part into a helper function"),
            ));
        }
        let span = n.byte_range();
        let kind = match n.kind() {
            "expression_statement" => {
                let kids = named_children(n);
                if kids.len() == 1 {
                    let k = kids[0];
                    match k.kind() {
                        "assignment" => self.assignment(k, depth)?,
                        "augmented_assignment" => {
                            let op_node = self.field(k, "operator")?;
                            let op = BinOpKind::from_symbol(self.text(op_node))
                                .ok_or_else(|| err(op_node, "unknown operator"))?;
                            StmtKind::AugAssign {
                                target: self.expr(self.field(k, "left")?, depth)?,
                                op,
                                value: self.expr(self.field(k, "right")?, depth)?,
                            }
                        }
                        _ => StmtKind::Expr(self.expr(k, depth)?),
                    }
                } else {
                    let items = kids
                        .into_iter()
                        .map(|k| self.expr(k, depth))
                        .collect::<Result<_, _>>()?;
                    StmtKind::Expr(Expr {
                        kind: ExprKind::Tuple(items),
                        span: span.clone(),
                    })
                }
            }
            "if_statement" => self.if_stmt(n, depth)?,
            "for_statement" => StmtKind::For {
                target: self.expr(self.field(n, "left")?, depth)?,
                iter: self.expr(self.field(n, "right")?, depth)?,
                body: self.block(self.field(n, "body")?, depth)?,
                orelse: match n.child_by_field_name("alternative") {
                    Some(e) => self.block(self.field(e, "body")?, depth)?,
                    None => Vec::new(),
                },
            },
            "while_statement" => StmtKind::While {
                cond: self.expr(self.field(n, "condition")?, depth)?,
                body: self.block(self.field(n, "body")?, depth)?,
                orelse: match n.child_by_field_name("alternative") {
                    Some(e) => self.block(self.field(e, "body")?, depth)?,
                    None => Vec::new(),
                },
            },
            "return_statement" => {
                let kids = named_children(n);
                StmtKind::Return(match kids.first() {
                    Some(k) => Some(self.expr(*k, depth)?),
                    None => None,
                })
            }
            "pass_statement" => StmtKind::Pass,
            "break_statement" => StmtKind::Break,
            "continue_statement" => StmtKind::Continue,
            "assert_statement" => {
                let kids = named_children(n);
                let test = self.expr(kids[0], depth)?;
                let msg = match kids.get(1) {
                    Some(k) => Some(self.expr(*k, depth)?),
                    None => None,
                };
                StmtKind::Assert { test, msg }
            }
            "function_definition" => {
                StmtKind::FunctionDef(Rc::new(self.function(n, Vec::new(), depth)?))
            }
            "decorated_definition" => {
                let def = self.field(n, "definition")?;
                let mut decorators = Vec::new();
                for c in named_children(n) {
                    if c.kind() == "decorator" {
                        if let Some(e) = named_children(c).first() {
                            decorators.push(self.expr(*e, depth)?);
                        }
                    }
                }
                if def.kind() == "function_definition" {
                    let mut f = self.function(def, decorators, depth)?;
                    f.span = span.clone();
                    StmtKind::FunctionDef(Rc::new(f))
                } else {
                    StmtKind::Unsupported(def.kind().replace('_', " "))
                }
            }
            "import_statement" => {
                let mut names = Vec::new();
                for c in named_children(n) {
                    names.push(self.import_name(c));
                }
                StmtKind::Import(names)
            }
            "import_from_statement" => {
                let module = self.text(self.field(n, "module_name")?).to_string();
                let mut names = Vec::new();
                let mut cursor = n.walk();
                for c in n.children_by_field_name("name", &mut cursor) {
                    names.push(self.import_name(c));
                }
                StmtKind::ImportFrom { module, names }
            }
            "comment" => return Ok(()),
            other => StmtKind::Unsupported(match other {
                "with_statement" => "`with` statement".to_string(),
                "try_statement" => "`try` statement".to_string(),
                "class_definition" => "class definition".to_string(),
                "raise_statement" => "`raise` statement".to_string(),
                "global_statement" => "`global` statement".to_string(),
                "nonlocal_statement" => "`nonlocal` statement".to_string(),
                "delete_statement" => "`del` statement".to_string(),
                "match_statement" => "`match` statement".to_string(),
                _ => format!("`{}`", other.replace('_', " ")),
            }),
        };
        out.push(Stmt { kind, span });
        Ok(())
    }

    fn import_name(&self, n: Node) -> (String, Option<String>) {
        if n.kind() == "aliased_import" {
            let name = n
                .child_by_field_name("name")
                .map(|c| self.text(c).to_string());
            let alias = n
                .child_by_field_name("alias")
                .map(|c| self.text(c).to_string());
            (name.unwrap_or_default(), alias)
        } else {
            (self.text(n).to_string(), None)
        }
    }

    fn assignment(&self, n: Node, depth: usize) -> Result<StmtKind, Diagnostic> {
        let left = self.expr(self.field(n, "left")?, depth)?;
        if let Some(ty) = n.child_by_field_name("type") {
            let annotation = self.expr(ty, depth)?;
            let value = match n.child_by_field_name("right") {
                Some(r) => Some(self.expr(r, depth)?),
                None => None,
            };
            return Ok(StmtKind::AnnAssign {
                target: left,
                annotation,
                value,
            });
        }
        let mut targets = vec![left];
        let mut right = self.field(n, "right")?;
        // `a = b = c` nests assignments on the right.
        while right.kind() == "assignment" {
            targets.push(self.expr(self.field(right, "left")?, depth)?);
            right = self.field(right, "right")?;
        }
        Ok(StmtKind::Assign {
            targets,
            value: self.expr(right, depth)?,
        })
    }

    fn if_stmt(&self, n: Node, depth: usize) -> Result<StmtKind, Diagnostic> {
        let cond = self.expr(self.field(n, "condition")?, depth)?;
        let body = self.block(self.field(n, "consequence")?, depth)?;
        let mut cursor = n.walk();
        let alternatives: Vec<Node> = n
            .children_by_field_name("alternative", &mut cursor)
            .collect();
        // Build the `elif` chain from the back.
        let mut orelse: Vec<Stmt> = Vec::new();
        for alt in alternatives.iter().rev() {
            match alt.kind() {
                "else_clause" => orelse = self.block(self.field(*alt, "body")?, depth)?,
                "elif_clause" => {
                    let c = self.expr(self.field(*alt, "condition")?, depth)?;
                    let b = self.block(self.field(*alt, "consequence")?, depth)?;
                    let span = alt.start_byte()
                        ..alt.end_byte().max(orelse.last().map_or(0, |s| s.span.end));
                    orelse = vec![Stmt {
                        kind: StmtKind::If {
                            cond: c,
                            body: b,
                            orelse,
                        },
                        span,
                    }];
                }
                _ => {}
            }
        }
        Ok(StmtKind::If { cond, body, orelse })
    }

    fn function(
        &self,
        n: Node,
        decorators: Vec<Expr>,
        depth: usize,
    ) -> Result<FunctionDef, Diagnostic> {
        let name_node = self.field(n, "name")?;
        let mut params = Vec::new();
        for p in named_children(self.field(n, "parameters")?) {
            let (name_node, annotation, default, kind) = match p.kind() {
                "identifier" => (p, None, None, ParamKind::Normal),
                "typed_parameter" => {
                    let first = named_children(p)[0];
                    let (nn, kind) = match first.kind() {
                        "list_splat_pattern" => (named_children(first)[0], ParamKind::VarArgs),
                        "dictionary_splat_pattern" => (named_children(first)[0], ParamKind::KwArgs),
                        _ => (first, ParamKind::Normal),
                    };
                    let ann = self.expr(self.field(p, "type")?, depth)?;
                    (nn, Some(ann), None, kind)
                }
                "default_parameter" => (
                    self.field(p, "name")?,
                    None,
                    Some(self.expr(self.field(p, "value")?, depth)?),
                    ParamKind::Normal,
                ),
                "typed_default_parameter" => (
                    self.field(p, "name")?,
                    Some(self.expr(self.field(p, "type")?, depth)?),
                    Some(self.expr(self.field(p, "value")?, depth)?),
                    ParamKind::Normal,
                ),
                "list_splat_pattern" => (named_children(p)[0], None, None, ParamKind::VarArgs),
                "dictionary_splat_pattern" => (named_children(p)[0], None, None, ParamKind::KwArgs),
                // `*` and `/` separators carry no parameter.
                _ => continue,
            };
            params.push(Param {
                name: self.text(name_node).to_string(),
                span: name_node.byte_range(),
                annotation,
                default,
                kind,
            });
        }
        Ok(FunctionDef {
            name: self.text(name_node).to_string(),
            name_span: name_node.byte_range(),
            params,
            body: self.block(self.field(n, "body")?, depth)?,
            decorators,
            span: n.byte_range(),
        })
    }

    fn exprs(&self, nodes: Vec<Node>, depth: usize) -> Result<Vec<Expr>, Diagnostic> {
        nodes.into_iter().map(|c| self.expr(c, depth)).collect()
    }

    fn expr(&self, n: Node, depth: usize) -> Result<Expr, Diagnostic> {
        if depth > MAX_DEPTH {
            return Err(err(
                n,
                format!("expression is nested more than {MAX_DEPTH} levels deep (each operator of a chain like `a + b + c` counts one level); split it with intermediate variables"),
            ));
        }
        let d = depth + 1;
        let span = n.byte_range();
        let kind = match n.kind() {
            "identifier" => ExprKind::Name(self.text(n).to_string()),
            "integer" => ExprKind::Int(parse_int(self.text(n)).ok_or_else(|| {
                err(
                    n,
                    format!(
                        "integer literal `{}` is out of range or malformed",
                        self.text(n)
                    ),
                )
            })?),
            "float" => {
                let t = self.text(n).replace('_', "");
                if t.ends_with(['j', 'J']) {
                    ExprKind::Unsupported("complex number".into())
                } else {
                    ExprKind::Float(
                        t.parse::<f64>()
                            .map_err(|_| err(n, "malformed float literal"))?,
                    )
                }
            }
            "true" => ExprKind::Bool(true),
            "false" => ExprKind::Bool(false),
            "none" => ExprKind::None,
            "string" => self.string(n)?,
            "concatenated_string" => {
                let mut s = String::new();
                for c in named_children(n) {
                    match self.string(c)? {
                        ExprKind::Str(part) => s.push_str(&part),
                        other => return Ok(Expr { kind: other, span }),
                    }
                }
                ExprKind::Str(s)
            }
            "parenthesized_expression" => {
                let kids = named_children(n);
                match kids.first() {
                    Some(k) => return self.expr(*k, d).map(|e| Expr { span, ..e }),
                    None => ExprKind::Tuple(Vec::new()),
                }
            }
            "attribute" => {
                let attr = self.field(n, "attribute")?;
                ExprKind::Attribute {
                    value: Box::new(self.expr(self.field(n, "object")?, d)?),
                    attr: self.text(attr).to_string(),
                    attr_span: attr.byte_range(),
                }
            }
            "call" => {
                let func = Box::new(self.expr(self.field(n, "function")?, d)?);
                let argn = self.field(n, "arguments")?;
                if argn.kind() != "argument_list" {
                    ExprKind::Unsupported("generator expression".into())
                } else {
                    let mut args = Vec::new();
                    let mut keywords = Vec::new();
                    for a in named_children(argn) {
                        match a.kind() {
                            "keyword_argument" => {
                                let name = self.field(a, "name")?;
                                keywords.push(Keyword {
                                    name: self.text(name).to_string(),
                                    name_span: name.byte_range(),
                                    value: self.expr(self.field(a, "value")?, d)?,
                                });
                            }
                            "dictionary_splat" => {
                                args.push(Expr {
                                    kind: ExprKind::Unsupported("`**` argument".into()),
                                    span: a.byte_range(),
                                });
                            }
                            _ => args.push(self.expr(a, d)?),
                        }
                    }
                    ExprKind::Call {
                        func,
                        args,
                        keywords,
                    }
                }
            }
            "binary_operator" => {
                let op_node = self.field(n, "operator")?;
                let op = BinOpKind::from_symbol(self.text(op_node))
                    .ok_or_else(|| err(op_node, "unknown operator"))?;
                ExprKind::BinOp {
                    op,
                    left: Box::new(self.expr(self.field(n, "left")?, d)?),
                    right: Box::new(self.expr(self.field(n, "right")?, d)?),
                }
            }
            "unary_operator" => {
                let op = match self.text(self.field(n, "operator")?) {
                    "-" => UnaryOpKind::Neg,
                    "+" => UnaryOpKind::Pos,
                    "~" => UnaryOpKind::Invert,
                    _ => return Err(err(n, "unknown unary operator")),
                };
                ExprKind::UnaryOp {
                    op,
                    operand: Box::new(self.expr(self.field(n, "argument")?, d)?),
                }
            }
            "not_operator" => ExprKind::UnaryOp {
                op: UnaryOpKind::Not,
                operand: Box::new(self.expr(self.field(n, "argument")?, d)?),
            },
            "boolean_operator" => ExprKind::BoolOp {
                op: if self.text(self.field(n, "operator")?) == "and" {
                    BoolOpKind::And
                } else {
                    BoolOpKind::Or
                },
                left: Box::new(self.expr(self.field(n, "left")?, d)?),
                right: Box::new(self.expr(self.field(n, "right")?, d)?),
            },
            "comparison_operator" => self.comparison(n, d)?,
            "conditional_expression" => {
                let kids = named_children(n);
                if kids.len() != 3 {
                    return Err(err(n, "malformed conditional expression"));
                }
                ExprKind::IfExp {
                    body: Box::new(self.expr(kids[0], d)?),
                    cond: Box::new(self.expr(kids[1], d)?),
                    orelse: Box::new(self.expr(kids[2], d)?),
                }
            }
            "subscript" => {
                let value = Box::new(self.expr(self.field(n, "value")?, d)?);
                let mut cursor = n.walk();
                let items: Vec<Node> = n.children_by_field_name("subscript", &mut cursor).collect();
                ExprKind::Subscript {
                    value,
                    index: self.exprs(items, d)?,
                }
            }
            "slice" => {
                // Up to three optional parts separated by `:` tokens.
                let mut parts: [Option<Box<Expr>>; 3] = [None, None, None];
                let mut slot = 0;
                for c in all_children(n) {
                    if c.kind() == ":" {
                        slot += 1;
                    } else if c.is_named() && slot < 3 {
                        parts[slot] = Some(Box::new(self.expr(c, d)?));
                    }
                }
                let [lower, upper, step] = parts;
                ExprKind::Slice { lower, upper, step }
            }
            "tuple" | "expression_list" | "pattern_list" | "tuple_pattern" => {
                ExprKind::Tuple(self.exprs(named_children(n), d)?)
            }
            "list" | "list_pattern" => ExprKind::List(self.exprs(named_children(n), d)?),
            "list_splat" | "list_splat_pattern" => match named_children(n).first() {
                Some(k) => ExprKind::Starred(Box::new(self.expr(*k, d)?)),
                None => ExprKind::Unsupported("`*`".into()),
            },
            "type" => match named_children(n).first() {
                Some(k) => return self.expr(*k, d),
                None => ExprKind::Unsupported("empty annotation".into()),
            },
            "keyword_argument" => ExprKind::Unsupported("keyword argument here".into()),
            other => ExprKind::Unsupported(match other {
                "lambda" => "lambda".to_string(),
                "list_comprehension" | "dictionary_comprehension" | "set_comprehension" => {
                    "comprehension".to_string()
                }
                "generator_expression" => "generator expression".to_string(),
                "dictionary" => "dict".to_string(),
                "set" => "set".to_string(),
                "named_expression" => "`:=` expression".to_string(),
                "await" => "`await`".to_string(),
                "yield" => "`yield`".to_string(),
                "ellipsis" => "`...`".to_string(),
                _ => format!("`{}`", other.replace('_', " ")),
            }),
        };
        Ok(Expr { kind, span })
    }

    fn comparison(&self, n: Node, d: usize) -> Result<ExprKind, Diagnostic> {
        let kids = all_children(n);
        let mut operands = Vec::new();
        let mut ops = Vec::new();
        let mut pending: Vec<&str> = Vec::new();
        for c in kids {
            if c.is_named() {
                if !pending.is_empty() {
                    let op = match pending.as_slice() {
                        ["=="] => CmpOpKind::Eq,
                        ["!="] | ["<>"] => CmpOpKind::Ne,
                        ["<"] => CmpOpKind::Lt,
                        ["<="] => CmpOpKind::Le,
                        [">"] => CmpOpKind::Gt,
                        [">="] => CmpOpKind::Ge,
                        ["is"] => CmpOpKind::Is,
                        ["is", "not"] | ["is not"] => CmpOpKind::IsNot,
                        ["in"] => CmpOpKind::In,
                        ["not", "in"] | ["not in"] => CmpOpKind::NotIn,
                        _ => return Err(err(n, "unknown comparison operator")),
                    };
                    ops.push(op);
                    pending.clear();
                }
                operands.push(self.expr(c, d)?);
            } else {
                pending.push(self.text(c));
            }
        }
        if operands.len() < 2 || ops.len() != operands.len() - 1 {
            return Err(err(n, "malformed comparison"));
        }
        let mut it = operands.into_iter();
        let left = Box::new(it.next().expect("checked length"));
        Ok(ExprKind::Compare {
            left,
            rest: ops.into_iter().zip(it).collect(),
        })
    }

    fn string(&self, n: Node) -> Result<ExprKind, Diagnostic> {
        let text = self.text(n);
        let prefix_len = text.find(['\'', '"']).unwrap_or(0);
        let prefix = text[..prefix_len].to_ascii_lowercase();
        if prefix.contains('f') {
            return Ok(ExprKind::Unsupported("f-string".into()));
        }
        if prefix.contains('b') {
            return Ok(ExprKind::Unsupported("bytes literal".into()));
        }
        let body = &text[prefix_len..];
        let quote = if body.starts_with("\"\"\"") || body.starts_with("'''") {
            3
        } else {
            1
        };
        if body.len() < 2 * quote {
            return Err(err(n, "malformed string literal"));
        }
        let inner = &body[quote..body.len() - quote];
        Ok(ExprKind::Str(if prefix.contains('r') {
            inner.to_string()
        } else {
            unescape(inner)
        }))
    }
}

fn parse_int(text: &str) -> Option<i128> {
    let t = text.replace('_', "");
    let lower = t.to_ascii_lowercase();
    if let Some(h) = lower.strip_prefix("0x") {
        i128::from_str_radix(h, 16).ok()
    } else if let Some(o) = lower.strip_prefix("0o") {
        i128::from_str_radix(o, 8).ok()
    } else if let Some(b) = lower.strip_prefix("0b") {
        i128::from_str_radix(b, 2).ok()
    } else {
        lower.parse::<i128>().ok()
    }
}

/// Python's common escapes; unknown ones stay as written, as Python does.
fn unescape(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('0') => out.push('\0'),
            Some('\\') => out.push('\\'),
            Some('\'') => out.push('\''),
            Some('"') => out.push('"'),
            Some('\n') => {}
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}
