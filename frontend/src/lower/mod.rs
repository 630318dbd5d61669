//! Python AST → tile IR, in one walk over the kernel with constexpr
//! evaluation on the way (the job of Triton's `CodeGenerator`).
//!
//! Compile-time values ([`Val::Const`], dtypes, tuples, functions) never
//! reach the IR: `if` on a constexpr lowers only the taken branch,
//! `tl.static_range` unrolls, helpers are inlined with their constexpr
//! parameters bound. Runtime values become SSA values in structured control
//! flow: loop-carried names (assigned in a loop body and live before it)
//! become `for`/`while` iteration arguments, names assigned in a runtime `if`
//! become its results. An early `return` inside a runtime `if` moves the
//! statements after the `if` into the branches that fall through.

mod builtins;
mod expr;
mod semantic;
pub mod value;

use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use tawa_ir::{
    Block, ConstValue, Elem, FuncAttrs, Function, Loc, LoopAttrs, OpKind, ParamHints, ScalarType,
    Type, Value,
};

use crate::ast::{self, Expr, ExprKind, FunctionDef, ParamKind, Stmt, StmtKind};
use crate::diagnostics::{Diagnostic, Span};
use crate::signature::{self, SigEntry};
use crate::CompileOptions;
pub(crate) use builtins::suggest;
pub use value::{Arg, Const, ModuleRef, Val};

pub(crate) type R<T> = Result<T, Diagnostic>;

/// Inlining deeper than this is taken for unbounded recursion.
const MAX_CALL_DEPTH: usize = 48;
/// `tl.static_range` unrolling limit (iterations of one loop).
const MAX_UNROLL: i128 = 4096;

/// A module-level binding, evaluated lazily when a kernel names it.
#[derive(Clone, Debug)]
pub(crate) enum GlobalDef {
    Func(Rc<FunctionDef>),
    Value(Expr),
    Module(ModuleRef),
    /// `from module import name`
    FromImport(ModuleRef, String, Span),
}

pub(crate) struct Globals {
    pub defs: HashMap<String, GlobalDef>,
}

impl Globals {
    pub fn collect(module: &ast::Module) -> Globals {
        let mut defs = HashMap::new();
        for s in &module.body {
            match &s.kind {
                StmtKind::FunctionDef(f) => {
                    defs.insert(f.name.clone(), GlobalDef::Func(f.clone()));
                }
                StmtKind::Assign { targets, value } => {
                    for t in targets {
                        if let ExprKind::Name(n) = &t.kind {
                            defs.insert(n.clone(), GlobalDef::Value(value.clone()));
                        }
                    }
                }
                StmtKind::AnnAssign {
                    target,
                    value: Some(value),
                    ..
                } => {
                    if let ExprKind::Name(n) = &target.kind {
                        defs.insert(n.clone(), GlobalDef::Value(value.clone()));
                    }
                }
                StmtKind::Import(names) => {
                    for (path, alias) in names {
                        match alias {
                            Some(a) => {
                                defs.insert(
                                    a.clone(),
                                    GlobalDef::Module(ModuleRef::from_path(path)),
                                );
                            }
                            None => {
                                // `import triton.language` binds `triton`.
                                let head = path.split('.').next().unwrap_or(path);
                                defs.insert(
                                    head.to_string(),
                                    GlobalDef::Module(ModuleRef::from_path(head)),
                                );
                            }
                        }
                    }
                }
                StmtKind::ImportFrom { module, names } => {
                    for (name, alias) in names {
                        let full = format!("{module}.{name}");
                        let def = match ModuleRef::from_path(&full) {
                            ModuleRef::Other(_) => GlobalDef::FromImport(
                                ModuleRef::from_path(module),
                                name.clone(),
                                s.span.clone(),
                            ),
                            m => GlobalDef::Module(m),
                        };
                        defs.insert(alias.clone().unwrap_or_else(|| name.clone()), def);
                    }
                }
                _ => {}
            }
        }
        Globals { defs }
    }
}

/// Whether a decorator marks a `@triton.jit` function.
pub(crate) fn is_jit_decorator(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Name(n) => n == "jit",
        ExprKind::Attribute { attr, .. } => attr == "jit",
        ExprKind::Call { func, .. } => is_jit_decorator(func),
        _ => false,
    }
}

pub(crate) fn is_jit(f: &FunctionDef) -> bool {
    f.decorators.iter().any(is_jit_decorator)
}

/// How a statement list ended.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Flow {
    Normal,
    Returned,
}

/// The pseudo-variable holding a function's return value.
const RET: &str = "$ret";

pub(crate) struct Lowerer<'a> {
    pub src: &'a str,
    line_starts: Vec<usize>,
    globals: &'a Globals,
    global_cache: HashMap<String, Val>,
    globals_in_progress: HashSet<String>,
    pub f: Function,
    /// Where new ops go.
    pub block: Block,
    pub vars: HashMap<String, Val>,
    /// Span of the latest assignment of each variable, for messages.
    pub var_spans: HashMap<String, Span>,
    call_depth: usize,
    loop_depth: usize,
    /// Name of the function being lowered (for messages).
    pub func_name: String,
}

impl<'a> Lowerer<'a> {
    pub fn new(src: &'a str, globals: &'a Globals, name: &str) -> Lowerer<'a> {
        let mut line_starts = vec![0];
        line_starts.extend(src.match_indices('\n').map(|(i, _)| i + 1));
        let f = Function::new(name);
        let block = f.body;
        Lowerer {
            src,
            line_starts,
            globals,
            global_cache: HashMap::new(),
            globals_in_progress: HashSet::new(),
            f,
            block,
            vars: HashMap::new(),
            var_spans: HashMap::new(),
            call_depth: 0,
            loop_depth: 0,
            func_name: name.to_string(),
        }
    }

    pub fn loc(&self, span: &Span) -> Loc {
        let off = span.start.min(self.src.len());
        let line = match self.line_starts.binary_search(&off) {
            Ok(i) => i,
            Err(i) => i - 1,
        };
        let start = self.line_starts[line];
        let col = self
            .src
            .get(start..off)
            .map_or(off - start, |s| s.chars().count());
        Loc::new(line as u32 + 1, col as u32 + 1)
    }

    pub fn text(&self, span: &Span) -> &'a str {
        self.src.get(span.clone()).unwrap_or("")
    }

    // ---- IR building -------------------------------------------------

    pub fn emit(
        &mut self,
        kind: OpKind,
        operands: Vec<Value>,
        results: Vec<Type>,
        span: &Span,
    ) -> tawa_ir::Op {
        let loc = self.loc(span);
        self.f
            .append_op(self.block, kind, operands, results, vec![], loc)
    }

    pub fn emit1(&mut self, kind: OpKind, operands: Vec<Value>, ty: Type, span: &Span) -> Value {
        let loc = self.loc(span);
        self.f.append_value(self.block, kind, operands, ty, loc)
    }

    pub fn ty(&self, v: Value) -> Type {
        self.f.ty(v).clone()
    }

    pub fn constant(&mut self, c: ConstValue, ty: Type, span: &Span) -> Value {
        self.emit1(OpKind::Constant(c), vec![], ty, span)
    }

    // ---- names -------------------------------------------------------

    pub fn bind(&mut self, name: &str, val: Val, span: &Span) {
        if let Val::Ir(v) = &val {
            if self.f.values[*v].name.is_none() && !name.starts_with('$') {
                self.f.set_name(*v, name);
            }
        }
        self.vars.insert(name.to_string(), val);
        self.var_spans.insert(name.to_string(), span.clone());
    }

    pub fn lookup(&mut self, name: &str, span: &Span) -> R<Val> {
        if let Some(v) = self.vars.get(name) {
            if let Val::Undefined(why) = v {
                return Err(
                    Diagnostic::error(span.clone(), format!("`{name}` has no value here"))
                        .with_label(why.clone()),
                );
            }
            return Ok(v.clone());
        }
        if let Some(v) = self.global(name, span)? {
            return Ok(v);
        }
        if let Some(v) = builtins::python_builtin(name) {
            return Ok(v);
        }
        let mut d = Diagnostic::error(span.clone(), format!("undefined name `{name}`"))
            .with_label("not defined in this function or at module level");
        let candidates: Vec<String> = self
            .vars
            .keys()
            .chain(self.globals.defs.keys())
            .filter(|k| !k.starts_with('$'))
            .cloned()
            .collect();
        if let Some(s) = builtins::suggest(name, candidates.iter().map(|s| s.as_str())) {
            d = d.with_note(format!(
                "help: a name with a similar spelling exists: `{s}`"
            ));
        }
        Err(d)
    }

    fn global(&mut self, name: &str, span: &Span) -> R<Option<Val>> {
        if let Some(v) = self.global_cache.get(name) {
            return Ok(Some(v.clone()));
        }
        let Some(def) = self.globals.defs.get(name).cloned() else {
            return Ok(None);
        };
        let val = match def {
            GlobalDef::Func(f) => {
                if is_jit(&f) {
                    Val::JitFn(f)
                } else {
                    Val::PyFn(f)
                }
            }
            GlobalDef::Module(m) => Val::Module(m),
            GlobalDef::FromImport(m, attr, imp_span) => self.module_attr(&m, &attr, &imp_span)?,
            GlobalDef::Value(e) => {
                if !self.globals_in_progress.insert(name.to_string()) {
                    return Err(Diagnostic::error(
                        span.clone(),
                        format!("global `{name}` is defined in terms of itself"),
                    ));
                }
                // Globals are evaluated with no local names in scope.
                let saved = std::mem::take(&mut self.vars);
                let r = self.expr(&e);
                self.vars = saved;
                self.globals_in_progress.remove(name);
                let v = r.map_err(|d| {
                    d.with_secondary(span.clone(), format!("while evaluating global `{name}` used here"))
                        .with_note("globals used by a kernel must be compile-time constants (`NAME: tl.constexpr = ...`)")
                })?;
                if matches!(v, Val::Ir(_)) {
                    return Err(Diagnostic::error(
                        e.span.clone(),
                        format!("global `{name}` is not a compile-time constant"),
                    )
                    .with_secondary(span.clone(), "used here"));
                }
                v
            }
        };
        self.global_cache.insert(name.to_string(), val.clone());
        Ok(Some(val))
    }

    // ---- statements --------------------------------------------------

    pub fn stmts(&mut self, stmts: &[&Stmt]) -> R<Flow> {
        for (i, s) in stmts.iter().enumerate() {
            match &s.kind {
                StmtKind::If { cond, body, orelse } => {
                    let c = self.expr(cond)?;
                    if let Some(b) = self.static_truth(&c) {
                        let branch: Vec<&Stmt> = if b {
                            body.iter().collect()
                        } else {
                            orelse.iter().collect()
                        };
                        if self.stmts(&branch)? == Flow::Returned {
                            return Ok(Flow::Returned);
                        }
                        continue;
                    }
                    let cond_v = self.scalar_condition(&c, &cond.span, "if")?;
                    let rest = &stmts[i + 1..];
                    if may_return(body) || may_return(orelse) {
                        // The statements after the `if` run only on paths
                        // that did not return: move them into both branches.
                        let then_s: Vec<&Stmt> = body.iter().chain(rest.iter().copied()).collect();
                        let else_s: Vec<&Stmt> =
                            orelse.iter().chain(rest.iter().copied()).collect();
                        return self.dynamic_if(cond_v, &then_s, &else_s, &s.span, true);
                    }
                    let then_s: Vec<&Stmt> = body.iter().collect();
                    let else_s: Vec<&Stmt> = orelse.iter().collect();
                    self.dynamic_if(cond_v, &then_s, &else_s, &s.span, false)?;
                }
                _ => {
                    if self.stmt(s)? == Flow::Returned {
                        return Ok(Flow::Returned);
                    }
                }
            }
        }
        Ok(Flow::Normal)
    }

    fn stmt(&mut self, s: &Stmt) -> R<Flow> {
        match &s.kind {
            StmtKind::Expr(e) => {
                self.expr(e)?;
            }
            StmtKind::Assign { targets, value } => {
                let v = self.expr(value)?;
                for t in targets {
                    self.assign(t, v.clone())?;
                }
            }
            StmtKind::AnnAssign { target, value, .. } => {
                if let Some(value) = value {
                    let v = self.expr(value)?;
                    self.assign(target, v)?;
                }
            }
            StmtKind::AugAssign { target, op, value } => {
                let ExprKind::Name(name) = &target.kind else {
                    return Err(Diagnostic::error(
                        target.span.clone(),
                        "augmented assignment needs a plain name on the left",
                    )
                    .with_label(
                        "Triton tensors are immutable; assign a new value to a name instead",
                    ));
                };
                let cur = self.lookup(name, &target.span)?;
                let rhs = self.expr(value)?;
                let v = self.binary(
                    *op,
                    Arg {
                        val: cur,
                        span: target.span.clone(),
                    },
                    Arg {
                        val: rhs,
                        span: value.span.clone(),
                    },
                    &s.span,
                )?;
                self.bind(name, v, &s.span);
            }
            StmtKind::If { .. } => {
                let flow = self.stmts(&[s])?;
                return Ok(flow);
            }
            StmtKind::For {
                target,
                iter,
                body,
                orelse,
            } => {
                if !orelse.is_empty() {
                    return Err(Diagnostic::error(
                        orelse[0].span.clone(),
                        "`for ... else` is not supported in Triton kernels",
                    ));
                }
                self.for_loop(target, iter, body, &s.span)?;
            }
            StmtKind::While { cond, body, orelse } => {
                if !orelse.is_empty() {
                    return Err(Diagnostic::error(
                        orelse[0].span.clone(),
                        "`while ... else` is not supported in Triton kernels",
                    ));
                }
                self.while_loop(cond, body, &s.span)?;
            }
            StmtKind::Return(value) => {
                if self.loop_depth > 0 {
                    return Err(Diagnostic::error(s.span.clone(), "`return` inside a loop is not supported")
                        .with_label("a kernel can only return from outside loops")
                        .with_note("compute a flag and skip the rest of the loop body with `if`, or restructure with a `while` loop"));
                }
                let v = match value {
                    Some(e) => self.expr(e)?,
                    None => Val::Const(Const::None),
                };
                self.vars.insert(RET.to_string(), v);
                self.var_spans.insert(RET.to_string(), s.span.clone());
                return Ok(Flow::Returned);
            }
            StmtKind::Pass => {}
            StmtKind::Break | StmtKind::Continue => {
                let what = if matches!(s.kind, StmtKind::Break) {
                    "break"
                } else {
                    "continue"
                };
                return Err(Diagnostic::error(s.span.clone(), format!("`{what}` is not supported in Triton kernels"))
                    .with_label(format!("`{what}` here"))
                    .with_note("loops in Triton kernels run all their iterations; use a `while` loop whose condition says when to stop"));
            }
            StmtKind::Assert { test, msg } => {
                let c = self.expr(test)?;
                let message = match msg {
                    Some(m) => match self.expr(m)? {
                        Val::Const(Const::Str(s)) => s,
                        Val::Const(c) => c.repr(),
                        _ => String::new(),
                    },
                    None => String::new(),
                };
                match self.static_truth(&c) {
                    Some(true) => {}
                    Some(false) => {
                        return Err(Diagnostic::error(
                            test.span.clone(),
                            if message.is_empty() {
                                "assertion failed at compile time".to_string()
                            } else {
                                format!("assertion failed at compile time: {message}")
                            },
                        ))
                    }
                    None => {
                        let v = self.to_ir(&Arg {
                            val: c,
                            span: test.span.clone(),
                        })?;
                        let v = self.to_bool(v, &test.span)?;
                        self.emit(OpKind::Assert { message }, vec![v], vec![], &s.span);
                    }
                }
            }
            StmtKind::FunctionDef(f) => {
                return Err(Diagnostic::error(
                    f.name_span.clone(),
                    "functions cannot be defined inside a Triton kernel",
                )
                .with_note("define it at module level with `@triton.jit`"));
            }
            StmtKind::Import(_) | StmtKind::ImportFrom { .. } => {
                return Err(Diagnostic::error(
                    s.span.clone(),
                    "`import` is not supported inside a Triton kernel",
                )
                .with_note("import at module level"));
            }
            StmtKind::Unsupported(what) => {
                let first_line = self.text(&s.span).lines().next().unwrap_or("").len();
                return Err(Diagnostic::error(
                    s.span.start..s.span.start + first_line,
                    format!("{what} is not supported in Triton kernels"),
                )
                .with_label(format!("unsupported {what}")));
            }
        }
        Ok(Flow::Normal)
    }

    pub fn assign(&mut self, target: &Expr, v: Val) -> R<()> {
        match &target.kind {
            ExprKind::Name(n) => {
                self.bind(n, v, &target.span);
                Ok(())
            }
            ExprKind::Tuple(items) | ExprKind::List(items) => {
                let Val::Tuple(vals) = v else {
                    return Err(Diagnostic::error(
                        target.span.clone(),
                        "cannot unpack a value that is not a tuple",
                    ));
                };
                if vals.len() != items.len() {
                    return Err(Diagnostic::error(
                        target.span.clone(),
                        format!(
                            "cannot unpack {} values into {} names",
                            vals.len(),
                            items.len()
                        ),
                    ));
                }
                for (t, v) in items.iter().zip(vals) {
                    self.assign(t, v)?;
                }
                Ok(())
            }
            ExprKind::Subscript { .. } | ExprKind::Attribute { .. } => Err(Diagnostic::error(
                target.span.clone(),
                "cannot assign to an element or attribute",
            )
            .with_label("Triton tensors are immutable")
            .with_note("build a new tensor (e.g. with `tl.where`) and assign it to a name")),
            _ => Err(Diagnostic::error(
                target.span.clone(),
                "invalid assignment target",
            )),
        }
    }

    /// `Some(b)` when `v` is known at compile time.
    pub fn static_truth(&self, v: &Val) -> Option<bool> {
        match v {
            Val::Const(c) => Some(c.truthy()),
            Val::Tuple(t) => Some(!t.is_empty()),
            Val::Ir(_) | Val::Undefined(_) => None,
            _ => Some(true),
        }
    }

    fn scalar_condition(&mut self, c: &Val, span: &Span, what: &str) -> R<Value> {
        let v = self.to_ir(&Arg {
            val: c.clone(),
            span: span.clone(),
        })?;
        let ty = self.ty(v);
        if !ty.is_scalar() {
            return Err(Diagnostic::error(
                span.clone(),
                format!("the condition of `{what}` must be a scalar, found {ty}"),
            )
            .with_note("use `tl.where(cond, a, b)` to choose element-wise between tensors"));
        }
        self.to_bool(v, span)
    }

    // ---- runtime `if` -------------------------------------------------

    /// Lowers a runtime `if` into an `If` op. With `tail_included`, the
    /// branches end the enclosing statement list (early-return handling):
    /// only the return value is merged.
    fn dynamic_if(
        &mut self,
        cond: Value,
        then_s: &[&Stmt],
        else_s: &[&Stmt],
        span: &Span,
        tail_included: bool,
    ) -> R<Flow> {
        let before = self.vars.clone();
        let before_spans = self.var_spans.clone();
        let outer = self.block;

        let then_b = self.f.new_block(vec![]);
        self.block = then_b;
        let then_flow = self.stmts(then_s)?;
        let then_vars = std::mem::replace(&mut self.vars, before.clone());
        let then_spans = std::mem::replace(&mut self.var_spans, before_spans.clone());

        let else_b = self.f.new_block(vec![]);
        self.block = else_b;
        let else_flow = self.stmts(else_s)?;
        let else_vars = std::mem::replace(&mut self.vars, before.clone());
        let else_spans = std::mem::replace(&mut self.var_spans, before_spans);
        self.block = outer;

        let mut names: Vec<String> = if tail_included {
            vec![RET.to_string()]
        } else {
            then_vars.keys().chain(else_vars.keys()).cloned().collect()
        };
        names.sort();
        names.dedup();

        let mut merged: Vec<(String, Val, Val)> = Vec::new();
        for name in names {
            let t = then_vars.get(&name);
            let e = else_vars.get(&name);
            match (t, e) {
                (Some(a), Some(b)) if a.same(b) => {
                    if before.get(&name).is_none_or(|p| !p.same(a)) {
                        self.vars.insert(name.clone(), a.clone());
                    }
                }
                (Some(a), Some(b)) => merged.push((name, a.clone(), b.clone())),
                (Some(v), None) | (None, Some(v)) => {
                    let none = Val::Const(Const::None);
                    if name == RET {
                        if v.same(&none) {
                            continue;
                        }
                        let ret_span = if t.is_some() {
                            then_spans.get(RET)
                        } else {
                            else_spans.get(RET)
                        };
                        return Err(Diagnostic::error(
                            ret_span.cloned().unwrap_or(span.clone()),
                            format!(
                                "`{}` returns a value on some paths but not on others",
                                self.func_name
                            ),
                        )
                        .with_secondary(
                            span.clone(),
                            "this `if` has a path that falls through without `return`",
                        ));
                    }
                    let (which, sp) = if t.is_some() {
                        ("then", then_spans.get(&name))
                    } else {
                        ("else", else_spans.get(&name))
                    };
                    let line = sp.map(|s| self.loc(s).line).unwrap_or(0);
                    self.vars.insert(
                        name.clone(),
                        Val::Undefined(format!(
                            "`{name}` is assigned only in the {which} branch of the `if` at line {} (line {line}), so it has no value after the `if`",
                            self.loc(span).line
                        )),
                    );
                }
                (None, None) => {}
            }
        }

        // Flatten merged values to IR leaves and yield them.
        let mut then_leaves = Vec::new();
        let mut else_leaves = Vec::new();
        let mut shapes = Vec::new();
        for (name, a, b) in &merged {
            let sa = then_spans.get(name).cloned().unwrap_or(span.clone());
            let sb = else_spans.get(name).cloned().unwrap_or(span.clone());
            let (la, lb, shape) = self.unify_branch_values(name, a, b, then_b, else_b, &sa, &sb)?;
            then_leaves.extend(la);
            else_leaves.extend(lb);
            shapes.push(shape);
        }
        let results = self.finish_if(
            outer,
            cond,
            (then_b, then_leaves),
            (else_b, else_leaves),
            span,
        );
        let mut it = results.into_iter();
        for ((name, _, _), shape) in merged.iter().zip(shapes) {
            let v = rebuild(&shape, &mut it);
            let sp = then_spans.get(name).cloned().unwrap_or(span.clone());
            self.bind(name, v, &sp);
        }
        Ok(
            if then_flow == Flow::Returned && else_flow == Flow::Returned {
                Flow::Returned
            } else {
                Flow::Normal
            },
        )
    }

    /// Ends both branch blocks with `yield`s of the given leaves and appends
    /// the `if` op to `outer`; returns its results.
    pub(crate) fn finish_if(
        &mut self,
        outer: Block,
        cond: Value,
        (then_b, then_leaves): (Block, Vec<Value>),
        (else_b, else_leaves): (Block, Vec<Value>),
        span: &Span,
    ) -> Vec<Value> {
        let types: Vec<Type> = then_leaves.iter().map(|v| self.ty(*v)).collect();
        let loc = self.loc(span);
        self.f
            .append_op(then_b, OpKind::Yield, then_leaves, vec![], vec![], loc);
        self.f
            .append_op(else_b, OpKind::Yield, else_leaves, vec![], vec![], loc);
        let op = self.f.append_op(
            outer,
            OpKind::If,
            vec![cond],
            types,
            vec![then_b, else_b],
            loc,
        );
        self.f.ops[op].results.clone()
    }

    /// Binds each carried name to its block argument inside a loop body.
    fn bind_carried(&mut self, carried: &[(String, Val)], args: &[Value], span: &Span) {
        for ((name, _), &arg) in carried.iter().zip(args) {
            let sp = self.var_spans.get(name).cloned().unwrap_or(span.clone());
            self.bind(name, Val::Ir(arg), &sp);
        }
    }

    /// Turns the two branch values of a name into matching IR leaves,
    /// materializing constants inside the branch blocks.
    #[allow(clippy::too_many_arguments)]
    fn unify_branch_values(
        &mut self,
        name: &str,
        a: &Val,
        b: &Val,
        then_b: Block,
        else_b: Block,
        sa: &Span,
        sb: &Span,
    ) -> R<(Vec<Value>, Vec<Value>, Shape)> {
        let sa_ = flatten(a);
        let sb_ = flatten(b);
        let mismatch = |this: &Self, ta: String, tb: String| {
            Diagnostic::error(
                sb.clone(),
                format!("`{name}` has different types in the two branches of an `if`"),
            )
            .with_label(format!("{tb} here"))
            .with_secondary(sa.clone(), format!("{ta} here"))
            .with_note(format!(
                "both branches must give `{name}` the same type (in `{}`)",
                this.func_name
            ))
        };
        let (Some((la, shape_a)), Some((lb, shape_b))) = (sa_, sb_) else {
            return Err(mismatch(self, self.describe(a), self.describe(b)));
        };
        if shape_a != shape_b {
            return Err(mismatch(self, self.describe(a), self.describe(b)));
        }
        let saved = self.block;
        let mut out_a = Vec::new();
        let mut out_b = Vec::new();
        for (x, y) in la.iter().zip(&lb) {
            let (tx, ty) = (self.leaf_type(x), self.leaf_type(y));
            let target = match (&tx, &ty) {
                (Some(t), _) if matches!(x, Val::Ir(_)) => t.clone(),
                (_, Some(t)) if matches!(y, Val::Ir(_)) => t.clone(),
                (Some(t), _) => t.clone(),
                _ => return Err(mismatch(self, self.describe(a), self.describe(b))),
            };
            self.block = then_b;
            let vx = self.leaf_to(x, &target, sa);
            self.block = else_b;
            let vy = self.leaf_to(y, &target, sb);
            self.block = saved;
            match (vx, vy) {
                (Some(vx), Some(vy)) => {
                    out_a.push(vx);
                    out_b.push(vy);
                }
                _ => return Err(mismatch(self, self.describe(a), self.describe(b))),
            }
        }
        Ok((out_a, out_b, shape_a))
    }

    /// The IR type a leaf value would have.
    fn leaf_type(&self, v: &Val) -> Option<Type> {
        match v {
            Val::Ir(x) => Some(self.ty(*x)),
            Val::Const(Const::Int(i)) => Some(Type::scalar(semantic::int_const_type(*i)?)),
            Val::Const(Const::Float(_)) => Some(Type::F32),
            Val::Const(Const::Bool(_)) => Some(Type::I1),
            _ => None,
        }
    }

    /// `v` as an IR value of exactly type `target`, or `None` when it is
    /// not the same type (constants adopt a type of their kind).
    fn leaf_to(&mut self, v: &Val, target: &Type, span: &Span) -> Option<Value> {
        match v {
            Val::Ir(x) => (self.ty(*x) == *target).then_some(*x),
            Val::Const(c) => {
                let Type::Scalar(Elem::Scalar(st)) = target else {
                    return None;
                };
                let ok = match c {
                    Const::Int(_) => st.is_int() && *st != ScalarType::I1,
                    Const::Float(_) => st.is_float(),
                    Const::Bool(_) => *st == ScalarType::I1,
                    _ => false,
                };
                if !ok {
                    return None;
                }
                Some(self.const_scalar(c, *st, span))
            }
            _ => None,
        }
    }

    pub fn describe(&self, v: &Val) -> String {
        match v {
            Val::Ir(x) => format!("{}", self.ty(*x)),
            Val::Const(c) => format!("constexpr {} `{}`", c.type_name(), c.repr()),
            Val::Tuple(t) => format!("tuple of {}", t.len()),
            Val::Dtype(d) => format!("dtype {}", value::dtype_name(*d)),
            Val::Module(m) => format!("module `{}`", m.path()),
            Val::JitFn(f) | Val::PyFn(f) => format!("function `{}`", f.name),
            Val::Builtin(b) => format!("function `{b}`"),
            Val::Method(_, m) => format!("method `{m}`"),
            Val::Class(c) => format!("class {c:?}"),
            Val::Undefined(_) => "undefined".into(),
        }
    }

    // ---- loops ----------------------------------------------------------

    fn for_loop(&mut self, target: &Expr, iter: &Expr, body: &[Stmt], span: &Span) -> R<()> {
        let ExprKind::Call {
            func,
            args,
            keywords,
        } = &iter.kind
        else {
            let it = self.expr(iter)?;
            if let Val::Tuple(items) = it {
                return self.unrolled(target, items, body);
            }
            return Err(Diagnostic::error(iter.span.clone(), "a Triton loop must iterate over `range(...)`, `tl.range(...)` or `tl.static_range(...)`"));
        };
        let callee = self.expr(func)?;
        let kind = match &callee {
            Val::Builtin(n) if n == "range" || n == "tl.range" || n == "tl.static_range" => {
                n.clone()
            }
            _ => {
                let it = self.expr(iter)?;
                if let Val::Tuple(items) = it {
                    return self.unrolled(target, items, body);
                }
                return Err(Diagnostic::error(iter.span.clone(), "a Triton loop must iterate over `range(...)`, `tl.range(...)` or `tl.static_range(...)`"));
            }
        };
        let call = self.call_args(args, keywords, &iter.span, &kind)?;
        let params: &[&str] = match kind.as_str() {
            "tl.range" => &[
                "arg1",
                "arg2",
                "step",
                "num_stages",
                "loop_unroll_factor",
                "disallow_acc_multi_buffer",
                "flatten",
                "warp_specialize",
                "disable_licm",
            ],
            "tl.static_range" => &["arg1", "arg2", "step", "loop_unroll_factor"],
            _ => &["start", "stop", "step"],
        };
        let b = call.bind(params, 1)?;
        let (lb, ub) = match (&b[0], &b[1]) {
            (Some(a), None) => (
                Arg {
                    val: Val::int(0),
                    span: a.span.clone(),
                },
                a.clone(),
            ),
            (Some(a), Some(c)) => (a.clone(), c.clone()),
            _ => unreachable!("bind checked the first argument"),
        };
        let step = b[2].clone().unwrap_or(Arg {
            val: Val::int(1),
            span: iter.span.clone(),
        });
        let ExprKind::Name(iv_name) = &target.kind else {
            return Err(Diagnostic::error(
                target.span.clone(),
                "the loop variable must be a single name",
            ));
        };

        if kind == "tl.static_range" {
            let (Val::Const(l), Val::Const(u), Val::Const(s)) = (&lb.val, &ub.val, &step.val)
            else {
                let bad = [&lb, &ub, &step]
                    .into_iter()
                    .find(|a| !matches!(a.val, Val::Const(_)))
                    .cloned()
                    .unwrap_or(ub.clone());
                return Err(Diagnostic::error(
                    bad.span,
                    "`tl.static_range` bounds must be compile-time constants",
                )
                .with_note("use `range` or `tl.range` for a loop with runtime bounds"));
            };
            let (Some(l), Some(u), Some(s)) = (l.as_int(), u.as_int(), s.as_int()) else {
                return Err(Diagnostic::error(
                    iter.span.clone(),
                    "`tl.static_range` bounds must be integers",
                ));
            };
            if s == 0 {
                return Err(Diagnostic::error(
                    step.span,
                    "the step of a range cannot be zero",
                ));
            }
            // Python's len(range(l, u, s)), computed without overflow on
            // absurd bounds (constants are 128-bit here).
            let n = {
                let (lo, hi, st) = if s > 0 {
                    (l, u, s)
                } else {
                    (u, l, s.saturating_neg())
                };
                if hi <= lo {
                    0
                } else {
                    hi.saturating_sub(lo).saturating_sub(1) / st + 1
                }
            };
            if n > MAX_UNROLL {
                return Err(Diagnostic::error(
                    iter.span.clone(),
                    format!("`tl.static_range` would unroll {n} iterations (limit {MAX_UNROLL})"),
                ));
            }
            let items = (0..n).map(|k| Val::int(l + k * s)).collect();
            return self.unrolled(target, items, body);
        }

        let mut attrs = LoopAttrs::default();
        if kind == "tl.range" {
            attrs.num_stages = self.opt_u32(&b[3], "num_stages")?;
            attrs.loop_unroll_factor = self.opt_u32(&b[4], "loop_unroll_factor")?;
            attrs.disallow_acc_multi_buffer = self.opt_bool(&b[5], "disallow_acc_multi_buffer")?;
            attrs.flatten = self.opt_bool(&b[6], "flatten")?;
            attrs.warp_specialize = self.opt_bool(&b[7], "warp_specialize")?;
        }
        if let Val::Const(c) = &step.val {
            match c.as_int() {
                Some(s) if s > 0 => {}
                Some(_) => {
                    return Err(Diagnostic::error(
                        step.span.clone(),
                        "the step of a runtime loop must be positive",
                    ))
                }
                None => {
                    return Err(Diagnostic::error(
                        step.span.clone(),
                        "the step of a range must be an integer",
                    ))
                }
            }
        }
        // Bounds and step share one integer type: i64 if any needs it.
        let mut iv_ty = ScalarType::I32;
        for a in [&lb, &ub, &step] {
            match &a.val {
                Val::Const(c) => match c.as_int() {
                    Some(i) if i32::try_from(i).is_ok() => {}
                    Some(i) if i64::try_from(i).is_ok() => iv_ty = ScalarType::I64,
                    _ => {
                        return Err(Diagnostic::error(
                            a.span.clone(),
                            format!(
                                "range bound must be an integer, found {}",
                                self.describe(&a.val)
                            ),
                        ))
                    }
                },
                Val::Ir(v) => match self.ty(*v) {
                    Type::Scalar(Elem::Scalar(s)) if s.is_int() && s != ScalarType::I1 => {
                        if s.bits() == 64 {
                            iv_ty = ScalarType::I64;
                        }
                    }
                    t => {
                        return Err(Diagnostic::error(
                            a.span.clone(),
                            format!("range bound must be an integer scalar, found {t}"),
                        ))
                    }
                },
                other => {
                    return Err(Diagnostic::error(
                        a.span.clone(),
                        format!(
                            "range bound must be an integer, found {}",
                            self.describe(other)
                        ),
                    ))
                }
            }
        }
        let mut bounds = Vec::new();
        for a in [&lb, &ub, &step] {
            let v = self.to_ir(a)?;
            bounds.push(self.cast(v, Elem::Scalar(iv_ty), &a.span)?);
        }

        let carried = self.carried_names(body, Some(iv_name), span)?;
        let inits = self.carried_inits(&carried, span)?;
        let init_types: Vec<Type> = inits.iter().map(|v| self.ty(*v)).collect();
        let mut arg_types = vec![Type::scalar(iv_ty)];
        arg_types.extend(init_types.iter().cloned());
        let body_b = self.f.new_block(arg_types);
        let args = self.f.blocks[body_b].args.clone();

        let before = self.vars.clone();
        let outer = self.block;
        self.block = body_b;
        self.bind(iv_name, Val::Ir(args[0]), &target.span);
        self.bind_carried(&carried, &args[1..], span);
        self.loop_depth += 1;
        let body_refs: Vec<&Stmt> = body.iter().collect();
        self.stmts(&body_refs)?;
        self.loop_depth -= 1;
        let yields = self.carried_yields(&carried, &init_types, span)?;
        let loc = self.loc(span);
        self.f
            .append_op(body_b, OpKind::Yield, yields, vec![], vec![], loc);
        self.block = outer;
        let mut operands = bounds;
        operands.extend(inits);
        let op = self.f.append_op(
            outer,
            OpKind::For(attrs),
            operands,
            init_types,
            vec![body_b],
            loc,
        );
        let results = self.f.ops[op].results.clone();
        self.after_loop(before, body, &carried, &results, iv_name, span);
        Ok(())
    }

    fn unrolled(&mut self, target: &Expr, items: Vec<Val>, body: &[Stmt]) -> R<()> {
        let body_refs: Vec<&Stmt> = body.iter().collect();
        for item in items {
            self.assign(target, item)?;
            self.loop_depth += 1;
            let r = self.stmts(&body_refs);
            self.loop_depth -= 1;
            r?;
        }
        Ok(())
    }

    fn while_loop(&mut self, cond: &Expr, body: &[Stmt], span: &Span) -> R<()> {
        let carried = self.carried_names(body, None, span)?;
        let inits = self.carried_inits(&carried, span)?;
        let types: Vec<Type> = inits.iter().map(|v| self.ty(*v)).collect();
        let before = self.vars.clone();
        let outer = self.block;

        let before_b = self.f.new_block(types.clone());
        let bargs = self.f.blocks[before_b].args.clone();
        self.block = before_b;
        self.bind_carried(&carried, &bargs, span);
        let c = self.expr(cond)?;
        let cv = self.scalar_condition(&c, &cond.span, "while")?;
        let mut cond_ops = vec![cv];
        cond_ops.extend(bargs.iter().copied());
        let loc = self.loc(span);
        self.f
            .append_op(before_b, OpKind::Condition, cond_ops, vec![], vec![], loc);

        let after_b = self.f.new_block(types.clone());
        let aargs = self.f.blocks[after_b].args.clone();
        self.block = after_b;
        self.bind_carried(&carried, &aargs, span);
        self.loop_depth += 1;
        let body_refs: Vec<&Stmt> = body.iter().collect();
        self.stmts(&body_refs)?;
        self.loop_depth -= 1;
        let yields = self.carried_yields(&carried, &types, span)?;
        self.f
            .append_op(after_b, OpKind::Yield, yields, vec![], vec![], loc);
        self.block = outer;
        let op = self.f.append_op(
            outer,
            OpKind::While,
            inits,
            types,
            vec![before_b, after_b],
            loc,
        );
        let results = self.f.ops[op].results.clone();
        self.after_loop(before, body, &carried, &results, "", span);
        Ok(())
    }

    /// Names assigned in `body` that hold a value before the loop: they
    /// carry from one iteration to the next. Returns each with the value it
    /// has before the loop.
    fn carried_names(
        &mut self,
        body: &[Stmt],
        iv: Option<&str>,
        _span: &Span,
    ) -> R<Vec<(String, Val)>> {
        let mut assigned = Vec::new();
        assigned_names(body, &mut assigned);
        let mut out = Vec::new();
        for name in assigned {
            if Some(name.as_str()) == iv {
                continue;
            }
            let Some(v) = self.vars.get(&name) else {
                continue;
            };
            match v {
                Val::Ir(_) | Val::Const(Const::Int(_) | Const::Float(_) | Const::Bool(_)) => {
                    out.push((name, v.clone()))
                }
                _ => {}
            }
        }
        Ok(out)
    }

    fn carried_inits(&mut self, carried: &[(String, Val)], span: &Span) -> R<Vec<Value>> {
        let mut inits = Vec::new();
        for (name, v) in carried {
            let sp = self.var_spans.get(name).cloned().unwrap_or(span.clone());
            inits.push(self.to_ir(&Arg {
                val: v.clone(),
                span: sp,
            })?);
        }
        Ok(inits)
    }

    fn carried_yields(
        &mut self,
        carried: &[(String, Val)],
        types: &[Type],
        span: &Span,
    ) -> R<Vec<Value>> {
        let mut out = Vec::new();
        for ((name, init), ty) in carried.iter().zip(types) {
            let cur = self
                .vars
                .get(name)
                .cloned()
                .unwrap_or(Val::Undefined(String::new()));
            let sp = self.var_spans.get(name).cloned().unwrap_or(span.clone());
            match self.leaf_to(&cur, ty, &sp) {
                Some(v) => out.push(v),
                None => {
                    let now = match &cur {
                        Val::Ir(v) => format!("{}", self.ty(*v)),
                        other => self.describe(other),
                    };
                    let was = match init {
                        Val::Const(c) => format!("{ty} (from the constant `{}`)", c.repr()),
                        _ => format!("{ty}"),
                    };
                    return Err(Diagnostic::error(sp, format!("loop-carried variable `{name}` changes type inside the loop"))
                        .with_label(format!("assigned {now} here"))
                        .with_secondary(span.start..span.start + self.text(span).lines().next().unwrap_or("").len(), format!("`{name}` enters this loop as {was}"))
                        .with_note(format!("a variable carried across iterations must keep one type; initialise `{name}` before the loop with the type it has inside (e.g. `tl.zeros([...], dtype=...)`)")));
                }
            }
        }
        Ok(out)
    }

    fn after_loop(
        &mut self,
        before: HashMap<String, Val>,
        body: &[Stmt],
        carried: &[(String, Val)],
        results: &[Value],
        iv: &str,
        span: &Span,
    ) {
        let mut assigned = Vec::new();
        assigned_names(body, &mut assigned);
        let line = self.loc(span).line;
        // Names first assigned inside the loop have no value after it; the
        // rest keep their pre-loop value unless carried.
        let inner = std::mem::replace(&mut self.vars, before);
        for name in assigned {
            if !self.vars.contains_key(&name) && inner.contains_key(&name) {
                self.vars.insert(
                    name.clone(),
                    Val::Undefined(format!("`{name}` is first assigned inside the loop at line {line}, so it has no value after the loop; assign it before the loop")),
                );
            }
        }
        if !iv.is_empty() && !self.vars.contains_key(iv) {
            self.vars.insert(
                iv.to_string(),
                Val::Undefined(format!(
                    "the loop variable `{iv}` has no value after the loop"
                )),
            );
        }
        for ((name, _), r) in carried.iter().zip(results) {
            let sp = self.var_spans.get(name).cloned().unwrap_or(span.clone());
            self.bind(name, Val::Ir(*r), &sp);
        }
    }

    fn opt_u32(&self, a: &Option<Arg>, what: &str) -> R<Option<u32>> {
        match a {
            None => Ok(None),
            Some(Arg {
                val: Val::Const(Const::None),
                ..
            }) => Ok(None),
            Some(Arg {
                val: Val::Const(c),
                span,
            }) => match c.as_int().and_then(|i| u32::try_from(i).ok()) {
                Some(v) => Ok(Some(v)),
                None => Err(Diagnostic::error(
                    span.clone(),
                    format!("`{what}` must be a non-negative integer"),
                )),
            },
            Some(a) => Err(Diagnostic::error(
                a.span.clone(),
                format!("`{what}` must be a compile-time constant"),
            )),
        }
    }

    fn opt_bool(&self, a: &Option<Arg>, what: &str) -> R<bool> {
        match a {
            None => Ok(false),
            Some(Arg {
                val: Val::Const(c), ..
            }) => Ok(c.truthy()),
            Some(a) => Err(Diagnostic::error(
                a.span.clone(),
                format!("`{what}` must be a compile-time constant"),
            )),
        }
    }

    // ---- calls of @triton.jit helpers -----------------------------------

    pub fn call_jit(&mut self, def: Rc<FunctionDef>, call: &builtins::CallArgs) -> R<Val> {
        if self.call_depth >= MAX_CALL_DEPTH {
            return Err(Diagnostic::error(
                call.span.clone(),
                format!(
                    "calls nest more than {MAX_CALL_DEPTH} deep (recursion?) while inlining `{}`",
                    def.name
                ),
            ));
        }
        if let Some(p) = def.params.iter().find(|p| p.kind != ParamKind::Normal) {
            return Err(Diagnostic::error(
                p.span.clone(),
                "`*args` / `**kwargs` parameters are not supported in Triton functions",
            ));
        }
        let names: Vec<&str> = def.params.iter().map(|p| p.name.as_str()).collect();
        let required = def
            .params
            .iter()
            .take_while(|p| p.default.is_none())
            .count();
        let bound = call.bind_named(&names, required, &def.name)?;
        let mut frame = HashMap::new();
        let mut spans = HashMap::new();
        for (p, a) in def.params.iter().zip(bound) {
            let v = match a {
                Some(a) => {
                    spans.insert(p.name.clone(), a.span.clone());
                    a.val
                }
                None => {
                    let d = p
                        .default
                        .as_ref()
                        .expect("bind_named checked required parameters");
                    spans.insert(p.name.clone(), d.span.clone());
                    let saved = std::mem::take(&mut self.vars);
                    let r = self.expr(d);
                    self.vars = saved;
                    r?
                }
            };
            frame.insert(p.name.clone(), v);
        }
        let saved_vars = std::mem::take(&mut self.vars);
        let saved_spans = std::mem::take(&mut self.var_spans);
        let saved_loop = std::mem::replace(&mut self.loop_depth, 0);
        let saved_name = std::mem::replace(&mut self.func_name, def.name.clone());
        for (name, v) in frame {
            let sp = spans.remove(&name).unwrap_or(call.span.clone());
            self.bind(&name, v, &sp);
        }
        self.call_depth += 1;
        let body: Vec<&Stmt> = def.body.iter().collect();
        let r = self.stmts(&body);
        self.call_depth -= 1;
        let ret = self.vars.remove(RET).unwrap_or(Val::Const(Const::None));
        self.vars = saved_vars;
        self.var_spans = saved_spans;
        self.loop_depth = saved_loop;
        self.func_name = saved_name;
        r.map_err(|d| {
            // A recursive helper fails at the depth limit through the same
            // call sites again and again: label each call site once.
            if d.secondary.iter().any(|(s, _)| *s == call.span) {
                d
            } else {
                d.with_secondary(call.span.clone(), format!("in this call of `{}`", def.name))
            }
        })?;
        Ok(ret)
    }

    // ---- the kernel itself ------------------------------------------------

    pub fn lower_kernel(mut self, def: &FunctionDef, opts: &CompileOptions) -> R<Function> {
        self.f.attrs = FuncAttrs {
            num_warps: opts.num_warps.unwrap_or(4),
            num_stages: opts.num_stages.unwrap_or(3),
            constexprs: Vec::new(),
            grid_param: None,
            grid_param_y: None,
            grid_param_z: None,
            cluster: 1,
            cluster_split_k: false,
            stream_k: false,
            occupancy: 1,
            walk_step: None,
            programmatic_launch_asked: false,
            mixed_copies: false,
        };
        if let Some(p) = def.params.iter().find(|p| p.kind != ParamKind::Normal) {
            return Err(Diagnostic::error(
                p.span.clone(),
                "`*args` / `**kwargs` parameters are not supported in kernels",
            ));
        }
        let sig_items = opts
            .signature
            .as_deref()
            .map(signature::parse)
            .unwrap_or_default();
        if sig_items.len() > def.params.len() {
            return Err(Diagnostic::error(
                def.name_span.clone(),
                format!(
                    "the signature has {} entries but `{}` has {} parameters",
                    sig_items.len(),
                    def.name,
                    def.params.len()
                ),
            )
            .with_note(format!(
                "--signature \"{}\"",
                opts.signature.clone().unwrap_or_default()
            )));
        }
        for (name, _) in &opts.defines {
            if !def.params.iter().any(|p| &p.name == name) {
                return Err(Diagnostic::error(
                    def.name_span.clone(),
                    format!("`-D {name}=...` names no parameter of `{}`", def.name),
                )
                .with_note(format!(
                    "parameters: {}",
                    def.params
                        .iter()
                        .map(|p| p.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )));
            }
        }
        for (i, p) in def.params.iter().enumerate() {
            let is_constexpr = match &p.annotation {
                Some(a) => crate::signature_template::is_constexpr_annotation(a),
                None => false,
            };
            let define = opts
                .defines
                .iter()
                .rev()
                .find(|(n, _)| n == &p.name)
                .map(|(_, v)| v.clone());
            let entry = sig_items.get(i);
            let val_text: Option<(String, &str)> = match (&define, entry) {
                (Some(text), _) => Some((text.clone(), "-D")),
                (None, Some(item)) => match &item.entry {
                    Ok(SigEntry::Value(t)) => Some((t.clone(), "--signature")),
                    _ => None,
                },
                _ => None,
            };
            if let Some((text, origin)) = val_text {
                let v = self.eval_const_text(&text, origin, p)?;
                self.f
                    .attrs
                    .constexprs
                    .push((p.name.clone(), self.const_repr(&v)));
                self.bind(&p.name, v, &p.span);
                continue;
            }
            if let Some(item) = entry {
                let e = item.entry.clone().map_err(|msg| {
                    Diagnostic::error(
                        p.span.clone(),
                        format!(
                            "bad signature entry `{}` for parameter `{}`: {msg}",
                            item.text, p.name
                        ),
                    )
                    .with_label(format!("signature entry {} is for this parameter", i + 1))
                })?;
                if is_constexpr {
                    return Err(Diagnostic::error(p.span.clone(), format!("parameter `{}` is a `tl.constexpr`; the signature must give its value, not the type `{}`", p.name, item.text))
                        .with_note(format!("e.g. `--signature \"..., 64, ...\"` or `-D {}=64`", p.name)));
                }
                self.add_param(p, e)?;
                continue;
            }
            if let Some(d) = &p.default {
                let v = self.expr(d)?;
                if matches!(v, Val::Ir(_)) {
                    return Err(Diagnostic::error(
                        d.span.clone(),
                        "a parameter default must be a compile-time constant",
                    ));
                }
                self.f
                    .attrs
                    .constexprs
                    .push((p.name.clone(), self.const_repr(&v)));
                self.bind(&p.name, v, &p.span);
                continue;
            }
            return Err(self.missing_signature_entry(def, i, &sig_items, opts));
        }
        let body: Vec<&Stmt> = def.body.iter().collect();
        self.stmts(&body)?;
        if let Some(v) = self.vars.get(RET) {
            if !matches!(v, Val::Const(Const::None)) {
                let sp = self
                    .var_spans
                    .get(RET)
                    .cloned()
                    .unwrap_or(def.name_span.clone());
                return Err(Diagnostic::error(sp, "a kernel cannot return a value"));
            }
        }
        let end = def.span.end.saturating_sub(1)..def.span.end;
        self.emit(OpKind::Return, vec![], vec![], &end);
        Ok(self.f)
    }

    /// The error for parameter `i` of `def`, the first with neither a
    /// signature entry, a `-D` value nor a default: it names every
    /// parameter still missing a type and shows a complete `--signature`
    /// to paste (guessed where the user gave nothing).
    fn missing_signature_entry(
        &self,
        def: &FunctionDef,
        i: usize,
        sig_items: &[signature::SigItem],
        opts: &CompileOptions,
    ) -> Diagnostic {
        let p = &def.params[i];
        let pos = i + 1;
        let template = crate::signature_template::template(def, self.src, sig_items, &opts.defines);
        let untyped: Vec<&str> = template
            .entries
            .iter()
            .zip(&def.params)
            .filter(|(e, p)| e.guessed && !e.constexpr && p.default.is_none())
            .map(|(e, _)| e.param.as_str())
            .collect();
        let is_constexpr = template.entries[i].constexpr;
        let d = if is_constexpr {
            Diagnostic::error(
                p.span.clone(),
                format!("no value for constexpr parameter `{}`", p.name),
            )
            .with_label("this `tl.constexpr` parameter needs a compile-time value")
            .with_note(format!(
                "give it as entry {pos} of --signature or with `-D {}=VALUE`",
                p.name
            ))
        } else if untyped.len() > 1 {
            let names: Vec<String> = untyped.iter().map(|n| format!("`{n}`")).collect();
            Diagnostic::error(
                def.name_span.clone(),
                format!(
                    "no types for {} parameters of `{}`: {}",
                    untyped.len(),
                    def.name,
                    names.join(", ")
                ),
            )
            .with_label("the kernel's arguments need types")
        } else {
            Diagnostic::error(p.span.clone(), format!("no type for parameter `{}`", p.name))
                .with_label("the kernel's arguments need types")
                .with_note(format!("give its type as entry {pos} of --signature, e.g. `*fp16:16` for a pointer or `i32` for an integer"))
        };
        d.with_note(format!(
            "help: a complete signature, one entry per parameter, the missing ones guessed from the kernel (check pointee types and `:16` hints):\n{}",
            template.command_line()
        ))
        .with_note("or put launch cases in a `.toml` file beside the kernel and pick one with `--case NAME` (see the README)")
    }

    fn const_repr(&self, v: &Val) -> String {
        match v {
            Val::Const(c) => c.repr(),
            Val::Dtype(Elem::Scalar(s)) => format!("tl.{}", value::tl_name(*s)),
            Val::Dtype(Elem::Ptr(s)) => format!("tl.pointer_type(tl.{})", value::tl_name(*s)),
            Val::Tuple(items) => {
                let parts: Vec<String> = items.iter().map(|i| self.const_repr(i)).collect();
                if parts.len() == 1 {
                    format!("({},)", parts[0])
                } else {
                    format!("({})", parts.join(", "))
                }
            }
            other => self.describe(other),
        }
    }

    /// Evaluates a constexpr given as text on the command line or in the
    /// signature, as a Python expression in the kernel module's scope.
    fn eval_const_text(&mut self, text: &str, origin: &str, p: &ast::Param) -> R<Val> {
        let fail = |msg: String| {
            Diagnostic::error(
                p.span.clone(),
                format!(
                    "cannot use `{text}` (from {origin}) as the value of `{}`: {msg}",
                    p.name
                ),
            )
        };
        let module =
            crate::parse::parse_module(&format!("{text}\n")).map_err(|d| fail(d.message))?;
        let [Stmt {
            kind: StmtKind::Expr(e),
            ..
        }] = module.body.as_slice()
        else {
            return Err(fail("expected a Python expression".into()));
        };
        // Spans of `e` point into `text`, not the kernel file: report any
        // failure at the parameter instead.
        let saved = std::mem::take(&mut self.vars);
        let r = self.expr(e);
        self.vars = saved;
        match r {
            Ok(Val::Ir(_)) | Ok(Val::Undefined(_)) => {
                Err(fail("not a compile-time constant".into()))
            }
            Ok(v) => Ok(v),
            Err(d) => Err(fail(d.message)),
        }
    }

    fn add_param(&mut self, p: &ast::Param, e: SigEntry) -> R<()> {
        match e {
            SigEntry::Ptr { pointee, align } => {
                let v = self.f.add_param(
                    &p.name,
                    Type::ptr(pointee),
                    ParamHints {
                        divisibility: align,
                    },
                );
                self.bind(&p.name, Val::Ir(v), &p.span);
            }
            SigEntry::Scalar { ty, divisibility } => {
                if divisibility.is_some() && !ty.is_int() {
                    return Err(Diagnostic::error(
                        p.span.clone(),
                        format!(
                            "a divisibility hint only applies to integers, not {}",
                            ty.name()
                        ),
                    ));
                }
                let v = self
                    .f
                    .add_param(&p.name, Type::scalar(ty), ParamHints { divisibility });
                self.bind(&p.name, Val::Ir(v), &p.span);
            }
            SigEntry::Desc { elem, block } => {
                // A host-side TensorDescriptor arrives as its parts; the
                // kernel rebuilds the descriptor first thing.
                let rank = block.len();
                let base = self.f.add_param(
                    format!("{}_base", p.name),
                    Type::ptr(elem),
                    ParamHints {
                        divisibility: Some(16),
                    },
                );
                let mut operands = vec![base];
                for d in 0..rank {
                    operands.push(self.f.add_param(
                        format!("{}_shape{d}", p.name),
                        Type::I32,
                        ParamHints::default(),
                    ));
                }
                for d in 0..rank {
                    let hints = if d + 1 < rank {
                        ParamHints {
                            divisibility: Some(16),
                        }
                    } else {
                        ParamHints::default()
                    };
                    operands.push(self.f.add_param(
                        format!("{}_stride{d}", p.name),
                        Type::I64,
                        hints,
                    ));
                }
                let v = self.emit1(
                    OpKind::MakeTensorDesc,
                    operands,
                    Type::TensorDesc { elem, block },
                    &p.span,
                );
                self.bind(&p.name, Val::Ir(v), &p.span);
            }
            SigEntry::Value(_) => unreachable!("values are bound as constexprs"),
        }
        Ok(())
    }
}

/// The tree shape of a (possibly nested) tuple of leaves.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Shape {
    Leaf,
    Tuple(Vec<Shape>),
}

fn flatten(v: &Val) -> Option<(Vec<Val>, Shape)> {
    match v {
        Val::Tuple(items) => {
            let mut leaves = Vec::new();
            let mut shapes = Vec::new();
            for i in items {
                let (l, s) = flatten(i)?;
                leaves.extend(l);
                shapes.push(s);
            }
            Some((leaves, Shape::Tuple(shapes)))
        }
        Val::Ir(_) | Val::Const(Const::Int(_) | Const::Float(_) | Const::Bool(_)) => {
            Some((vec![v.clone()], Shape::Leaf))
        }
        _ => None,
    }
}

fn rebuild(shape: &Shape, it: &mut impl Iterator<Item = Value>) -> Val {
    match shape {
        Shape::Leaf => it
            .next()
            .map(Val::Ir)
            .unwrap_or(Val::Undefined(String::new())),
        Shape::Tuple(items) => Val::Tuple(items.iter().map(|s| rebuild(s, it)).collect()),
    }
}

/// Whether a `return` can be reached in `stmts` (not looking into nested
/// function definitions).
pub(crate) fn may_return(stmts: &[Stmt]) -> bool {
    stmts.iter().any(|s| match &s.kind {
        StmtKind::Return(_) => true,
        StmtKind::If { body, orelse, .. } => may_return(body) || may_return(orelse),
        StmtKind::For { body, .. } | StmtKind::While { body, .. } => may_return(body),
        _ => false,
    })
}

/// Names assigned anywhere in `stmts`, in order of first assignment.
pub(crate) fn assigned_names(stmts: &[Stmt], out: &mut Vec<String>) {
    fn target(e: &Expr, out: &mut Vec<String>) {
        match &e.kind {
            ExprKind::Name(n) if !out.contains(n) => {
                out.push(n.clone());
            }
            ExprKind::Tuple(items) | ExprKind::List(items) => {
                items.iter().for_each(|i| target(i, out))
            }
            _ => {}
        }
    }
    for s in stmts {
        match &s.kind {
            StmtKind::Assign { targets, .. } => targets.iter().for_each(|t| target(t, out)),
            StmtKind::AugAssign { target: t, .. } | StmtKind::AnnAssign { target: t, .. } => {
                target(t, out)
            }
            StmtKind::If { body, orelse, .. } => {
                assigned_names(body, out);
                assigned_names(orelse, out);
            }
            StmtKind::For {
                target: t, body, ..
            } => {
                target(t, out);
                assigned_names(body, out);
            }
            StmtKind::While { body, .. } => assigned_names(body, out),
            _ => {}
        }
    }
}
