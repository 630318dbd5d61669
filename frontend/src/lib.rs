//! Python (`@triton.jit`) to tile IR.
//!
//! - [`parse`]: tree-sitter-python → a small owned AST ([`ast`]) with byte
//!   spans; any syntax error stops here with a diagnostic.
//! - [`signature`]: Triton's ahead-of-time signature strings
//!   (`"*fp16:16, i32, 64"`).
//! - `lower`: the AST of one kernel → one specialized [`tawa_ir::Function`],
//!   evaluating constexprs, inlining helpers and typing everything with
//!   Triton's rules.
//! - [`diagnostics`]: errors with spans, rendered with file:line:col and a
//!   caret.
//!
//! Entry point: [`compile`].

pub mod ast;
pub mod diagnostics;
mod lower;
pub mod parse;
pub mod signature;
pub mod signature_template;

pub use diagnostics::{Diagnostic, Diagnostics, Severity, Span};

use lower::{Globals, Lowerer};

/// What to compile and how to specialize it (the CLI's options).
#[derive(Clone, Debug, Default)]
pub struct CompileOptions {
    /// The `@triton.jit` function to compile; `None` picks the file's only
    /// kernel (a jit function that no other jit function calls).
    pub kernel: Option<String>,
    /// Triton's AOT signature: one entry per parameter, in order.
    pub signature: Option<String>,
    /// `-D NAME=VALUE` constexpr bindings (Python expressions).
    pub defines: Vec<(String, String)>,
    pub num_warps: Option<u32>,
    pub num_stages: Option<u32>,
}

/// Compiles the chosen kernel of `source` (the text of file `path`) to a
/// module with one function.
pub fn compile(
    path: &str,
    source: &str,
    opts: &CompileOptions,
) -> Result<tawa_ir::Module, Diagnostics> {
    let fail = |d: Diagnostic| Diagnostics::new(path, source, vec![d]);
    if let Some(w) = opts.num_warps {
        if !(1..=32).contains(&w) || !w.is_power_of_two() {
            return Err(fail(Diagnostic::error(
                0..0,
                format!("--num-warps must be a power of two from 1 to 32, not {w}"),
            )));
        }
    }
    let module = parse::parse_module(source).map_err(fail)?;
    let kernel = select_kernel(&module, opts).map_err(fail)?;
    let globals = Globals::collect(&module);
    let lowerer = Lowerer::new(source, &globals, &kernel.name);
    let func = lowerer.lower_kernel(&kernel, opts).map_err(fail)?;
    Ok(tawa_ir::Module {
        source_file: Some(path.to_string()),
        functions: vec![func],
    })
}

/// The `@triton.jit` functions of a file that look like kernels (not called
/// by another jit function), in source order.
pub fn list_kernels(source: &str) -> Result<Vec<String>, Diagnostic> {
    let module = parse::parse_module(source)?;
    Ok(kernel_candidates(&module)
        .iter()
        .map(|f| f.name.clone())
        .collect())
}

fn jit_functions(module: &ast::Module) -> Vec<std::rc::Rc<ast::FunctionDef>> {
    module
        .body
        .iter()
        .filter_map(|s| match &s.kind {
            ast::StmtKind::FunctionDef(f) if lower::is_jit(f) => Some(f.clone()),
            _ => None,
        })
        .collect()
}

fn kernel_candidates(module: &ast::Module) -> Vec<std::rc::Rc<ast::FunctionDef>> {
    let jit = jit_functions(module);
    let mut called = std::collections::HashSet::new();
    for f in &jit {
        collect_called_names(&f.body, &mut called);
    }
    jit.into_iter()
        .filter(|f| !called.contains(&f.name))
        .collect()
}

fn collect_called_names(stmts: &[ast::Stmt], out: &mut std::collections::HashSet<String>) {
    use ast::{ExprKind, StmtKind};
    fn expr(e: &ast::Expr, out: &mut std::collections::HashSet<String>) {
        match &e.kind {
            ExprKind::Name(n) => {
                out.insert(n.clone());
            }
            ExprKind::Attribute { value, .. } => expr(value, out),
            ExprKind::Call {
                func,
                args,
                keywords,
            } => {
                expr(func, out);
                args.iter().for_each(|a| expr(a, out));
                keywords.iter().for_each(|k| expr(&k.value, out));
            }
            ExprKind::BinOp { left, right, .. } | ExprKind::BoolOp { left, right, .. } => {
                expr(left, out);
                expr(right, out);
            }
            ExprKind::UnaryOp { operand, .. } | ExprKind::Starred(operand) => expr(operand, out),
            ExprKind::Compare { left, rest } => {
                expr(left, out);
                rest.iter().for_each(|(_, e)| expr(e, out));
            }
            ExprKind::IfExp { cond, body, orelse } => {
                expr(cond, out);
                expr(body, out);
                expr(orelse, out);
            }
            ExprKind::Subscript { value, index } => {
                expr(value, out);
                index.iter().for_each(|i| expr(i, out));
            }
            ExprKind::Tuple(items) | ExprKind::List(items) => {
                items.iter().for_each(|i| expr(i, out))
            }
            _ => {}
        }
    }
    for s in stmts {
        match &s.kind {
            StmtKind::Expr(e) | StmtKind::Return(Some(e)) => expr(e, out),
            StmtKind::Assign { targets, value } => {
                targets.iter().for_each(|t| expr(t, out));
                expr(value, out);
            }
            StmtKind::AugAssign { value, .. } => expr(value, out),
            StmtKind::AnnAssign { value: Some(v), .. } => expr(v, out),
            StmtKind::If { cond, body, orelse } | StmtKind::While { cond, body, orelse } => {
                expr(cond, out);
                collect_called_names(body, out);
                collect_called_names(orelse, out);
            }
            StmtKind::For {
                iter, body, orelse, ..
            } => {
                expr(iter, out);
                collect_called_names(body, out);
                collect_called_names(orelse, out);
            }
            StmtKind::Assert { test, msg } => {
                expr(test, out);
                if let Some(m) = msg {
                    expr(m, out);
                }
            }
            _ => {}
        }
    }
}

fn select_kernel(
    module: &ast::Module,
    opts: &CompileOptions,
) -> Result<std::rc::Rc<ast::FunctionDef>, Diagnostic> {
    let jit = jit_functions(module);
    if let Some(name) = &opts.kernel {
        if let Some(f) = jit.iter().find(|f| &f.name == name) {
            return Ok(f.clone());
        }
        let names: Vec<&str> = jit.iter().map(|f| f.name.as_str()).collect();
        let mut d = Diagnostic::error(
            0..0,
            format!("no `@triton.jit` function named `{name}` in this file"),
        );
        if let Some(s) = lower::suggest(name, names.iter().copied()) {
            d = d.with_note(format!("help: did you mean `--kernel {s}`?"));
        }
        if !names.is_empty() {
            d = d.with_note(format!("jit functions here: {}", names.join(", ")));
        }
        return Err(d);
    }
    if jit.is_empty() {
        return Err(
            Diagnostic::error(0..0, "no `@triton.jit` function in this file")
                .with_note("a kernel is a function decorated with `@triton.jit`"),
        );
    }
    let candidates = kernel_candidates(module);
    match candidates.as_slice() {
        [one] => Ok(one.clone()),
        [] => Ok(jit[jit.len() - 1].clone()),
        [first, rest @ ..] => {
            let mut d = Diagnostic::error(
                first.name_span.clone(),
                "this file has several kernels; choose one with `--kernel NAME`",
            )
            .with_label("a kernel");
            for f in rest {
                d = d.with_secondary(f.name_span.clone(), "another kernel");
            }
            Err(d.with_note(format!(
                "kernels: {}",
                candidates
                    .iter()
                    .map(|f| f.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )))
        }
    }
}
