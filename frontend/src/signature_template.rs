//! A complete `--signature` for a kernel the user gave none (or too short a
//! one) for, guessed from the kernel's source, so that the error for a
//! missing type can show a line ready to paste instead of naming one
//! parameter at a time.
//!
//! The guesses are heuristics and the message says so:
//!
//! - a parameter is a **pointer** when the address of a `tl.load`,
//!   `tl.store`, `tl.atomic_*` or `tl.make_block_ptr` starts from it
//!   (through local variables, `+`, subscripts and `tl.multiple_of`), or
//!   when it starts a sum that adds a `stride*` product (`Q + off *
//!   stride_qz`); it points to `fp16` in files that call `dot` (GEMM-like
//!   kernels) unless atomics update through it, to `fp32` otherwise,
//!   aligned to 16 bytes;
//! - a **tensor descriptor** is a parameter whose `.load([...])` or
//!   `.store([...], ...)` method is called; the offsets give its rank, each
//!   block dimension is 64 (the guess for every `BLOCK*` constexpr, so the
//!   two agree);
//! - a **float** is annotated `float` or named like a scale or epsilon;
//! - every other runtime parameter is an `i32`;
//! - a **constexpr** takes its `-D` value, else its default, else a value
//!   guessed from its name (`BLOCK*` 64, `GROUP*` 8, `NUM_SMS` 132, ...).
//!
//! Entries the user did give are kept as they are.

use std::collections::{HashMap, HashSet};

use crate::ast::{BinOpKind, Expr, ExprKind, FunctionDef, Stmt, StmtKind};
use crate::signature::SigItem;

/// One entry per parameter, in order.
#[derive(Clone, Debug, PartialEq)]
pub struct SignatureTemplate {
    pub entries: Vec<TemplateEntry>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct TemplateEntry {
    pub param: String,
    /// The signature entry: `*fp16:16`, `i32`, `64`, ...
    pub text: String,
    /// Whether `text` is a guess (not given by the user, not a default).
    pub guessed: bool,
    pub constexpr: bool,
}

impl SignatureTemplate {
    /// The `--signature "..."` argument, shell-quoted for pasting.
    pub fn command_line(&self) -> String {
        let texts: Vec<&str> = self.entries.iter().map(|e| e.text.as_str()).collect();
        format!("--signature \"{}\"", texts.join(", ").replace('"', "\\\""))
    }
}

/// Whether a parameter annotation says `tl.constexpr`.
pub fn is_constexpr_annotation(a: &Expr) -> bool {
    match &a.kind {
        ExprKind::Str(s) => s.ends_with("constexpr"),
        ExprKind::Name(n) => n == "constexpr",
        ExprKind::Attribute { attr, .. } => attr == "constexpr",
        _ => false,
    }
}

/// The template for kernel `def` of file `source`: `given` are the
/// signature entries the user wrote (kept), `defines` the `-D` bindings.
pub fn template(
    def: &FunctionDef,
    source: &str,
    given: &[SigItem],
    defines: &[(String, String)],
) -> SignatureTemplate {
    let usage = Usage::of(def);
    let gemm_like = source.contains("dot(");
    let entries = def
        .params
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let constexpr = p.annotation.as_ref().is_some_and(is_constexpr_annotation);
            let entry = |text: String, guessed: bool| TemplateEntry {
                param: p.name.clone(),
                text,
                guessed,
                constexpr,
            };
            if let Some((_, v)) = defines.iter().rev().find(|(n, _)| n == &p.name) {
                return entry(v.clone(), false);
            }
            if let Some(item) = given.get(i) {
                return entry(item.text.clone(), false);
            }
            if constexpr {
                return match &p.default {
                    Some(d) => entry(source_text(source, d), false),
                    None => entry(guess_constexpr(&p.name), true),
                };
            }
            entry(guess_runtime(p, &usage, gemm_like), true)
        })
        .collect();
    SignatureTemplate { entries }
}

fn source_text(source: &str, e: &Expr) -> String {
    source
        .get(e.span.clone())
        .map_or_else(|| "1".to_string(), |s| s.trim().to_string())
}

fn guess_constexpr(name: &str) -> String {
    let upper = name.to_ascii_uppercase();
    let has = |s: &str| upper.contains(s);
    if has("BLOCK") || has("TILE") || has("HEAD_DIM") {
        "64".into()
    } else if has("GROUP") {
        "8".into()
    } else if has("NUM_SMS") {
        // An H100 SXM has 132 SMs.
        "132".into()
    } else if has("STAGES") {
        "3".into()
    } else if has("WARPS") {
        "4".into()
    } else if has("ACTIVATION") {
        "''".into()
    } else if has("DTYPE") {
        "tl.float16".into()
    } else if upper.starts_with("HAS_")
        || upper.starts_with("USE_")
        || upper.starts_with("IS_")
        || upper.starts_with("EVEN_")
    {
        "False".into()
    } else {
        "1".into()
    }
}

fn guess_runtime(p: &crate::ast::Param, usage: &Usage, gemm_like: bool) -> String {
    if let Some(rank) = usage.descriptors.get(&p.name) {
        let dims = vec!["64"; (*rank).clamp(1, 5)].join(", ");
        return format!("tensordesc<fp16[{dims}]>");
    }
    let lower = p.name.to_ascii_lowercase();
    let annotated = |n: &str| {
        p.annotation
            .as_ref()
            .is_some_and(|a| matches!(&a.kind, ExprKind::Name(x) if x == n))
    };
    if usage.pointers.contains(&p.name) || lower.ends_with("_ptr") || lower.ends_with("_ptrs") {
        let half = gemm_like && !usage.atomics.contains(&p.name);
        return if half { "*fp16:16" } else { "*fp32:16" }.into();
    }
    let floaty = [
        "scale",
        "eps",
        "alpha",
        "beta",
        "slope",
        "temperature",
        "momentum",
    ];
    if annotated("float") || floaty.iter().any(|f| lower.contains(f)) {
        return "fp32".into();
    }
    if annotated("bool") {
        return "i1".into();
    }
    "i32".into()
}

/// What the kernel's body says about its parameters.
struct Usage {
    /// Names that addresses start from (parameters and locals alike).
    pointers: HashSet<String>,
    /// Names that `tl.atomic_*` addresses start from.
    atomics: HashSet<String>,
    /// Names whose `.load([...])`/`.store([...])` is called, with the rank.
    descriptors: HashMap<String, usize>,
}

impl Usage {
    fn of(def: &FunctionDef) -> Usage {
        let mut walk = Walk::default();
        walk.stmts(&def.body);
        // Follow local variables back to what they were assigned from.
        let follow = |roots: Vec<String>| {
            let mut found = HashSet::new();
            let mut work = roots;
            while let Some(name) = work.pop() {
                if !found.insert(name.clone()) {
                    continue;
                }
                for value in walk.assigned.get(&name).into_iter().flatten() {
                    work.extend(address_roots(value));
                }
            }
            found
        };
        let mut pointers = follow(walk.address_roots.clone());
        pointers.extend(walk.strided_bases.iter().cloned());
        Usage {
            pointers,
            atomics: follow(walk.atomic_roots.clone()),
            descriptors: walk.descriptors,
        }
    }
}

#[derive(Default)]
struct Walk<'a> {
    assigned: HashMap<String, Vec<&'a Expr>>,
    address_roots: Vec<String>,
    /// Roots of `tl.atomic_*` addresses (fp32: the backend has no fp16
    /// atomics).
    atomic_roots: Vec<String>,
    strided_bases: Vec<String>,
    descriptors: HashMap<String, usize>,
}

impl<'a> Walk<'a> {
    fn stmts(&mut self, stmts: &'a [Stmt]) {
        for s in stmts {
            match &s.kind {
                StmtKind::Expr(e) | StmtKind::Return(Some(e)) => self.expr(e),
                StmtKind::Assign { targets, value } => {
                    for t in targets {
                        if let ExprKind::Name(n) = &t.kind {
                            self.assigned.entry(n.clone()).or_default().push(value);
                        }
                    }
                    self.expr(value);
                }
                StmtKind::AugAssign { value, .. } => self.expr(value),
                StmtKind::AnnAssign { target, value, .. } => {
                    if let (ExprKind::Name(n), Some(v)) = (&target.kind, value) {
                        self.assigned.entry(n.clone()).or_default().push(v);
                    }
                    if let Some(v) = value {
                        self.expr(v);
                    }
                }
                StmtKind::If { cond, body, orelse } | StmtKind::While { cond, body, orelse } => {
                    self.expr(cond);
                    self.stmts(body);
                    self.stmts(orelse);
                }
                StmtKind::For {
                    iter, body, orelse, ..
                } => {
                    self.expr(iter);
                    self.stmts(body);
                    self.stmts(orelse);
                }
                _ => {}
            }
        }
    }

    fn expr(&mut self, e: &'a Expr) {
        match &e.kind {
            ExprKind::Call {
                func,
                args,
                keywords,
            } => {
                if let ExprKind::Attribute { value, attr, .. } = &func.kind {
                    let address_arg = matches!(
                        attr.as_str(),
                        "load" | "store" | "make_block_ptr" | "make_tensor_descriptor"
                    ) || attr.starts_with("atomic_");
                    let on_tl = matches!(&value.kind, ExprKind::Name(m) if m == "tl");
                    if address_arg && on_tl {
                        let address = keywords
                            .iter()
                            .find(|k| matches!(k.name.as_str(), "pointer" | "base"))
                            .map(|k| &k.value)
                            .or(args.first());
                        if let Some(a) = address {
                            let roots = address_roots(a);
                            if attr.starts_with("atomic_") {
                                self.atomic_roots.extend(roots.iter().cloned());
                            }
                            self.address_roots.extend(roots);
                        }
                    } else if let (ExprKind::Name(n), "load" | "store") =
                        (&value.kind, attr.as_str())
                    {
                        if let Some(Expr {
                            kind: ExprKind::List(offsets) | ExprKind::Tuple(offsets),
                            ..
                        }) = args.first()
                        {
                            self.descriptors.insert(n.clone(), offsets.len());
                        }
                    }
                }
                self.expr(func);
                args.iter().for_each(|a| self.expr(a));
                keywords.iter().for_each(|k| self.expr(&k.value));
            }
            ExprKind::BinOp { op, left, right } => {
                if *op == BinOpKind::Add && mentions_stride(right) {
                    if let Some(base) = leftmost_of_sum(left) {
                        self.strided_bases.push(base);
                    }
                }
                self.expr(left);
                self.expr(right);
            }
            ExprKind::Attribute { value, .. } => self.expr(value),
            ExprKind::UnaryOp { operand, .. } | ExprKind::Starred(operand) => self.expr(operand),
            ExprKind::BoolOp { left, right, .. } => {
                self.expr(left);
                self.expr(right);
            }
            ExprKind::Compare { left, rest } => {
                self.expr(left);
                rest.iter().for_each(|(_, r)| self.expr(r));
            }
            ExprKind::IfExp { cond, body, orelse } => {
                self.expr(cond);
                self.expr(body);
                self.expr(orelse);
            }
            ExprKind::Subscript { value, index } => {
                self.expr(value);
                index.iter().for_each(|i| self.expr(i));
            }
            ExprKind::Tuple(items) | ExprKind::List(items) => {
                items.iter().for_each(|i| self.expr(i))
            }
            _ => {}
        }
    }
}

/// The names an address expression starts from: `a_ptr + offs` starts
/// from `a_ptr`, `ptrs[:, None]` from `ptrs`.
fn address_roots(e: &Expr) -> Vec<String> {
    match &e.kind {
        ExprKind::Name(n) => vec![n.clone()],
        ExprKind::BinOp {
            op: BinOpKind::Add | BinOpKind::Sub,
            left,
            ..
        } => address_roots(left),
        ExprKind::Subscript { value, .. } => address_roots(value),
        ExprKind::IfExp { body, orelse, .. } => {
            let mut r = address_roots(body);
            r.extend(address_roots(orelse));
            r
        }
        ExprKind::Call { func, args, .. } => match &func.kind {
            ExprKind::Attribute { attr, .. }
                if matches!(attr.as_str(), "multiple_of" | "max_contiguous" | "advance") =>
            {
                args.first().map(address_roots).unwrap_or_default()
            }
            _ => Vec::new(),
        },
        _ => Vec::new(),
    }
}

fn leftmost_of_sum(e: &Expr) -> Option<String> {
    match &e.kind {
        ExprKind::Name(n) => Some(n.clone()),
        ExprKind::BinOp {
            op: BinOpKind::Add,
            left,
            ..
        } => leftmost_of_sum(left),
        _ => None,
    }
}

fn mentions_stride(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Name(n) => n.to_ascii_lowercase().contains("stride"),
        ExprKind::BinOp { left, right, .. } => mentions_stride(left) || mentions_stride(right),
        ExprKind::Subscript { value, .. } => mentions_stride(value),
        ExprKind::UnaryOp { operand, .. } => mentions_stride(operand),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn template_of(src: &str) -> String {
        let module = crate::parse::parse_module(src).unwrap();
        let def = module
            .body
            .iter()
            .find_map(|s| match &s.kind {
                StmtKind::FunctionDef(f) => Some(f.clone()),
                _ => None,
            })
            .unwrap();
        template(&def, src, &[], &[]).command_line()
    }

    #[test]
    fn pointers_come_from_addresses_and_strides() {
        let src = "@triton.jit\ndef k(Q, Out, M, N, stride_qm, sm_scale, BLOCK: tl.constexpr, G: tl.constexpr = 4):\n    q_base = Q + M * stride_qm\n    p = q_base + tl.arange(0, BLOCK)\n    x = tl.load(p, mask=tl.arange(0, BLOCK) < N)\n    tl.store(Out + tl.arange(0, BLOCK), x * sm_scale)\n";
        assert_eq!(
            template_of(src),
            "--signature \"*fp32:16, *fp32:16, i32, i32, i32, fp32, 64, 4\""
        );
    }

    #[test]
    fn descriptors_take_the_rank_of_their_offsets() {
        let src = "@triton.jit\ndef k(a_desc, M, BLOCK_M: tl.constexpr):\n    a = a_desc.load([0, 0])\n    acc = tl.dot(a, a)\n";
        assert_eq!(
            template_of(src),
            "--signature \"tensordesc<fp16[64, 64]>, i32, 64\""
        );
    }
}
