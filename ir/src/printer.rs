//! The textual form of the tile IR (writer side; [`crate::parser`] reads it).
//!
//! The format is MLIR-like and every value's type is written where the value
//! is defined, so that the parser never infers a type:
//!
//! ```text
//! tt.func @add_kernel(%x_ptr: ptr<f32> {divisibility = 16}, %n: i32) attributes {num_warps = 4, num_stages = 3} {
//!   %pid = program_id x : i32 loc(14:11)
//!   %0 = make_range {start = 0, end = 1024} : tensor<1024xi32> loc(15:40)
//!   %1 = splat %pid : i32 -> tensor<1024xi32> loc(15:14)
//!   %acc = for %k: i32 = %c0 to %n step %c1 iter_args(%a: f32 = %init) -> (f32) attrs {num_stages = 3} {
//!     yield %a
//!   } loc(20:4)
//!   return
//! }
//! ```
//!
//! Warp-specialized IR adds arefs and the `ws` region op, one region per
//! partition:
//!
//! ```text
//! %ring = aref.create : aref<2 x (tensor<64x32xf16>, tensor<32x64xf16>)>
//! ws {
//!   partition producer (num_warps = 4, regs = 40) {
//!     aref.put %ring, %i, %a, %b loc(20:8)
//!     yield
//!   }
//!   partition consumer (num_warps = 8, regs = 232) {
//!     %a_1, %b_1 = aref.get %ring, %i : tensor<64x32xf16>, tensor<32x64xf16>
//!     aref.consumed %ring, %i
//!     yield
//!   }
//! } loc(12:4)
//! ```
//!
//! - Value names come from [`crate::ValueData::name`], sanitized to
//!   `[A-Za-z0-9_]` (a leading digit gets a `_` prefix) and made unique per
//!   function with a suffix (`%acc`, `%acc_1`); unnamed values are numbered
//!   `%0`, `%1`, ... in print order. Names are assigned in print order, so
//!   printing a parsed print assigns the same names again.
//! - Operands are written without types (their definitions carry them);
//!   results are typed after `:`. Conversions (`splat`, `cast`, ...) write
//!   `: OPERAND_TYPE -> RESULT_TYPE` for readability; the parser checks the
//!   operand type.
//! - Attributes equal to their default are omitted; flags are bare words
//!   (`{mask, other, volatile}`).
//! - Float constants use Rust's shortest round-trip formatting (`1.0`,
//!   `1e-30`, `-0.0`, `inf`, `-inf`); the canonical NaN is `nan`, any other
//!   NaN is `nan(0xBITS)` with its 64 bits, so constants round-trip exactly.
//! - `loc(LINE:COL)` ends an op's text; it is omitted for [`Loc::UNKNOWN`].
//!
//! Limitation: region ops whose structure is malformed (a `for` whose block
//! arguments do not pair with its inits, missing regions, a `ws` with more
//! regions than partitions) are printed as well as their header allows; such text does not parse back to the same IR. The
//! verifier reports those ops.

use std::collections::{HashMap, HashSet};
use std::fmt::Write;

use crate::function::{Block, Function, Module, Op, Value};
use crate::ops::*;
use crate::types::Type;

/// Prints a module: an optional `// source: FILE` line, then the functions
/// separated by blank lines.
pub fn print_module(m: &Module) -> String {
    let mut out = String::new();
    if let Some(src) = &m.source_file {
        // The header is one line: a newline in the file name would end it.
        let _ = writeln!(out, "// source: {}", src.replace('\n', " "));
        if !m.functions.is_empty() {
            out.push('\n');
        }
    }
    for (i, f) in m.functions.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&print_function(f));
    }
    out
}

/// Prints one function, ending with a newline.
pub fn print_function(f: &Function) -> String {
    let mut p = Printer {
        f,
        names: HashMap::new(),
        used: HashSet::new(),
        next_suffix: HashMap::new(),
        next_number: 0,
        out: String::new(),
    };
    p.function();
    p.out
}

/// The names (without `%`) that [`print_function`] gives the values of `f`,
/// for tools that print facts about values next to the IR (analysis dumps).
pub fn value_names(f: &Function) -> HashMap<Value, String> {
    let mut p = Printer {
        f,
        names: HashMap::new(),
        used: HashSet::new(),
        next_suffix: HashMap::new(),
        next_number: 0,
        out: String::new(),
    };
    p.function();
    p.names
}

/// The name an op is printed with (`add`, `cmp.lt`, `reduce.sum`): used by
/// the verifier's messages too.
pub fn op_name(kind: &OpKind) -> String {
    match kind {
        OpKind::Constant(_) => "constant".into(),
        OpKind::ProgramId(_) => "program_id".into(),
        OpKind::NumPrograms(_) => "num_programs".into(),
        OpKind::MakeRange { .. } => "make_range".into(),
        OpKind::Splat => "splat".into(),
        OpKind::Broadcast => "broadcast".into(),
        OpKind::ExpandDims { .. } => "expand_dims".into(),
        OpKind::Reshape => "reshape".into(),
        OpKind::Trans { .. } => "trans".into(),
        OpKind::Join => "join".into(),
        OpKind::Split => "split".into(),
        OpKind::Binary(b) => b.name().into(),
        OpKind::Unary(u) => u.name().into(),
        OpKind::Fma => "fma".into(),
        OpKind::Cmp(p) => format!("cmp.{}", p.name()),
        OpKind::Select => "select".into(),
        OpKind::Cast { .. } => "cast".into(),
        OpKind::Bitcast => "bitcast".into(),
        OpKind::AddPtr => "addptr".into(),
        OpKind::Load { .. } => "load".into(),
        OpKind::Store { .. } => "store".into(),
        OpKind::Dot { .. } => "dot".into(),
        OpKind::DotWait { .. } => "dot_wait".into(),
        OpKind::Reduce { kind, .. } => format!("reduce.{}", kind.name()),
        OpKind::Scan { kind, .. } => format!("scan.{}", scan_kind_name(*kind)),
        OpKind::MakeBlockPtr { .. } => "make_block_ptr".into(),
        OpKind::Advance => "advance".into(),
        OpKind::MakeTensorDesc => "make_tensor_desc".into(),
        OpKind::DescLoad { .. } => "desc_load".into(),
        OpKind::DescStore => "desc_store".into(),
        OpKind::AtomicRmw { op, .. } => format!("atomic_rmw.{}", op.name()),
        OpKind::AtomicCas { .. } => "atomic_cas".into(),
        OpKind::Hint { .. } => "hint".into(),
        OpKind::For(_) => "for".into(),
        OpKind::If => "if".into(),
        OpKind::While => "while".into(),
        OpKind::Yield => "yield".into(),
        OpKind::Condition => "condition".into(),
        OpKind::Return => "return".into(),
        OpKind::ArefCreate => "aref.create".into(),
        OpKind::ArefPut => "aref.put".into(),
        OpKind::ArefGet => "aref.get".into(),
        OpKind::ArefConsumed => "aref.consumed".into(),
        OpKind::WarpSpecialize { .. } => "ws".into(),
        OpKind::DebugBarrier => "debug_barrier".into(),
        OpKind::TurnTake => "turn.take".into(),
        OpKind::TurnPass => "turn.pass".into(),
        OpKind::ClusterSum => "cluster.sum".into(),
        OpKind::StreamKPut => "stream_k.put".into(),
        OpKind::StreamKTake => "stream_k.take".into(),
        OpKind::Print { .. } => "print".into(),
        OpKind::Assert { .. } => "assert".into(),
    }
}

pub(crate) fn scan_kind_name(k: ScanKind) -> &'static str {
    match k {
        ScanKind::Sum => "sum",
        ScanKind::Prod => "prod",
    }
}
pub(crate) fn rounding_name(r: Rounding) -> &'static str {
    match r {
        Rounding::Rtne => "rtne",
        Rounding::Rtz => "rtz",
    }
}
pub(crate) fn cache_name(c: CacheModifier) -> &'static str {
    match c {
        CacheModifier::None => "none",
        CacheModifier::Ca => "ca",
        CacheModifier::Cg => "cg",
        CacheModifier::Cs => "cs",
        CacheModifier::Wb => "wb",
        CacheModifier::Wt => "wt",
        CacheModifier::Cv => "cv",
    }
}
pub(crate) fn evict_name(e: EvictionPolicy) -> &'static str {
    match e {
        EvictionPolicy::Normal => "normal",
        EvictionPolicy::EvictFirst => "evict_first",
        EvictionPolicy::EvictLast => "evict_last",
    }
}
pub(crate) fn padding_name(p: Padding) -> &'static str {
    match p {
        Padding::None => "none",
        Padding::Zero => "zero",
        Padding::Nan => "nan",
    }
}
pub(crate) fn precision_name(p: InputPrecision) -> &'static str {
    match p {
        InputPrecision::Tf32 => "tf32",
        InputPrecision::Tf32x3 => "tf32x3",
        InputPrecision::Ieee => "ieee",
    }
}
pub(crate) fn sem_name(s: MemSem) -> &'static str {
    match s {
        MemSem::Relaxed => "relaxed",
        MemSem::Acquire => "acquire",
        MemSem::Release => "release",
        MemSem::AcqRel => "acq_rel",
    }
}
pub(crate) fn scope_name(s: MemScope) -> &'static str {
    match s {
        MemScope::Gpu => "gpu",
        MemScope::Cta => "cta",
        MemScope::Sys => "sys",
    }
}

/// A string literal with `"`, `\` and control characters escaped.
pub fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A constant as the parser reads it back bit-exactly.
pub fn format_const(c: ConstValue) -> String {
    match c {
        ConstValue::Int(i) => i.to_string(),
        ConstValue::Bool(b) => b.to_string(),
        ConstValue::Float(x) if x.is_nan() => {
            if x.to_bits() == f64::NAN.to_bits() {
                "nan".into()
            } else {
                format!("nan(0x{:016x})", x.to_bits())
            }
        }
        // `{:?}` is the shortest text that parses back to the same bits and
        // always has a `.` or an exponent (or is `inf`), so it never reads as
        // an integer.
        ConstValue::Float(x) => format!("{x:?}"),
    }
}

pub(crate) fn is_ident(s: &str) -> bool {
    let mut cs = s.chars();
    matches!(cs.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && cs.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn ident_or_quoted(s: &str) -> String {
    if is_ident(s) {
        s.to_string()
    } else {
        quote(s)
    }
}

/// Identifier-safe form of a source name; `None` when nothing is left.
fn sanitize(name: &str) -> Option<String> {
    if name.is_empty() {
        return None;
    }
    let mut s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    // Names starting with a digit are reserved for unnamed values.
    if s.starts_with(|c: char| c.is_ascii_digit()) {
        s.insert(0, '_');
    }
    Some(s)
}

fn list(xs: &[u32]) -> String {
    let items: Vec<String> = xs.iter().map(|x| x.to_string()).collect();
    format!("[{}]", items.join(", "))
}

struct Printer<'a> {
    f: &'a Function,
    names: HashMap<Value, String>,
    used: HashSet<String>,
    /// Per source name, the first suffix not yet known to be taken: every
    /// `base_k` below it is in `used` already (names are never released),
    /// so the search resumes there instead of at 1 (a variable assigned
    /// 100k times would otherwise take quadratic time to print).
    next_suffix: HashMap<String, u32>,
    next_number: u32,
    out: String,
}

impl Printer<'_> {
    /// The printed name of `v` (`%x`), assigned on first sight.
    fn name(&mut self, v: Value) -> String {
        if let Some(n) = self.names.get(&v) {
            return format!("%{n}");
        }
        let source = self
            .f
            .values
            .get(v)
            .and_then(|d| d.name.as_deref())
            .and_then(sanitize);
        let n = match source {
            Some(base) => {
                let mut n = base.clone();
                if self.used.contains(&n) {
                    let k = self.next_suffix.entry(base.clone()).or_insert(1);
                    loop {
                        n = format!("{base}_{k}");
                        *k += 1;
                        if !self.used.contains(&n) {
                            break;
                        }
                    }
                }
                n
            }
            None => loop {
                let n = self.next_number.to_string();
                self.next_number += 1;
                if !self.used.contains(&n) {
                    break n;
                }
            },
        };
        self.used.insert(n.clone());
        self.names.insert(v, n.clone());
        format!("%{n}")
    }

    fn ty(&self, v: Value) -> String {
        match self.f.values.get(v) {
            Some(d) => d.ty.to_string(),
            None => "<invalid>".into(),
        }
    }

    fn names_of(&mut self, vs: &[Value]) -> String {
        let names: Vec<String> = vs.iter().map(|&v| self.name(v)).collect();
        names.join(", ")
    }

    fn types_of(&self, vs: &[Value]) -> String {
        let tys: Vec<String> = vs.iter().map(|&v| self.ty(v)).collect();
        tys.join(", ")
    }

    /// `%a: T` for each block argument.
    fn typed_args(&mut self, vs: &[Value]) -> String {
        let items: Vec<String> = vs
            .iter()
            .map(|&v| format!("{}: {}", self.name(v), self.ty(v)))
            .collect();
        items.join(", ")
    }

    fn function(&mut self) {
        let f = self.f;
        let _ = write!(self.out, "tt.func @{}(", ident_or_quoted(&f.name));
        for (i, p) in f.params.iter().enumerate() {
            if i > 0 {
                self.out.push_str(", ");
            }
            let name = self.name(p.value);
            let ty = self.ty(p.value);
            let _ = write!(self.out, "{name}: {ty}");
            let mut attrs = Vec::new();
            if p.name != name[1..] {
                attrs.push(format!("name = {}", quote(&p.name)));
            }
            if let Some(d) = p.hints.divisibility {
                attrs.push(format!("divisibility = {d}"));
            }
            if !attrs.is_empty() {
                let _ = write!(self.out, " {{{}}}", attrs.join(", "));
            }
        }
        let _ = write!(
            self.out,
            ") attributes {{num_warps = {}, num_stages = {}",
            f.attrs.num_warps, f.attrs.num_stages
        );
        if !f.attrs.constexprs.is_empty() {
            let items: Vec<String> = f
                .attrs
                .constexprs
                .iter()
                .map(|(k, v)| format!("{} = {}", ident_or_quoted(k), quote(v)))
                .collect();
            let _ = write!(self.out, ", constexprs = {{{}}}", items.join(", "));
        }
        if let Some(p) = &f.attrs.grid_param {
            let _ = write!(self.out, ", grid_param = {}", quote(p));
        }
        if let Some(p) = &f.attrs.grid_param_y {
            let _ = write!(self.out, ", grid_param_y = {}", quote(p));
        }
        if let Some(p) = &f.attrs.grid_param_z {
            let _ = write!(self.out, ", grid_param_z = {}", quote(p));
        }
        if f.attrs.cluster != 1 {
            let _ = write!(self.out, ", cluster = {}", f.attrs.cluster);
        }
        if f.attrs.cluster_split_k {
            self.out.push_str(", cluster_split_k");
        }
        if f.attrs.stream_k {
            self.out.push_str(", stream_k");
        }
        if f.attrs.occupancy != 1 {
            let _ = write!(self.out, ", occupancy = {}", f.attrs.occupancy);
        }
        if let Some((p, c)) = &f.attrs.walk_step {
            let _ = write!(self.out, ", walk_step = {}, walk_asked = {c}", quote(p));
        }
        if f.attrs.programmatic_launch_asked {
            self.out.push_str(", programmatic_launch_asked");
        }
        if f.attrs.mixed_copies {
            self.out.push_str(", mixed_copies");
        }
        self.out.push_str("} {\n");
        self.block_ops(f.body, 1);
        self.out.push_str("}\n");
    }

    fn block_ops(&mut self, block: Block, depth: usize) {
        let Some(data) = self.f.blocks.get(block) else {
            return;
        };
        for &op in &data.ops {
            self.op(op, depth);
        }
    }

    fn indent(&mut self, depth: usize) {
        for _ in 0..depth {
            self.out.push_str("  ");
        }
    }

    /// `{ ops }` of a region, the closing brace at `depth`.
    fn region(&mut self, block: Option<Block>, depth: usize) {
        self.out.push_str("{\n");
        if let Some(b) = block {
            self.block_ops(b, depth + 1);
        }
        self.indent(depth);
        self.out.push('}');
    }

    fn op(&mut self, op: Op, depth: usize) {
        let f = self.f;
        let Some(d) = f.ops.get(op) else {
            return;
        };
        self.indent(depth);
        if !d.results.is_empty() {
            let r = self.names_of(&d.results);
            let _ = write!(self.out, "{r} = ");
        }
        let result_types = format!("({})", self.types_of(&d.results));
        let region_args = |i: usize| -> &[Value] {
            d.regions
                .get(i)
                .and_then(|&b| f.blocks.get(b))
                .map(|b| b.args.as_slice())
                .unwrap_or(&[])
        };
        match &d.kind {
            OpKind::For(attrs) => {
                let operand = |this: &mut Self, i: usize| match d.operands.get(i) {
                    Some(&v) => this.name(v),
                    None => "%<missing>".into(),
                };
                let lb = operand(self, 0);
                let ub = operand(self, 1);
                let step = operand(self, 2);
                let args = region_args(0);
                self.out.push_str("for ");
                if let Some(&iv) = args.first() {
                    let iv = self.typed_args(&[iv]);
                    self.out.push_str(&iv);
                }
                let _ = write!(self.out, " = {lb} to {ub} step {step}");
                let inits = d.operands.get(3..).unwrap_or(&[]);
                if !inits.is_empty() {
                    let iter_args = args.get(1..).unwrap_or(&[]);
                    let items: Vec<String> = iter_args
                        .iter()
                        .zip(inits)
                        .map(|(&a, &i)| {
                            let a = self.typed_args(&[a]);
                            format!("{a} = {}", self.name(i))
                        })
                        .collect();
                    let _ = write!(self.out, " iter_args({})", items.join(", "));
                }
                if !d.results.is_empty() {
                    let _ = write!(self.out, " -> {result_types}");
                }
                let mut a = Vec::new();
                if let Some(n) = attrs.num_stages {
                    a.push(format!("num_stages = {n}"));
                }
                if let Some(n) = attrs.loop_unroll_factor {
                    a.push(format!("loop_unroll_factor = {n}"));
                }
                if attrs.disallow_acc_multi_buffer {
                    a.push("disallow_acc_multi_buffer".into());
                }
                if attrs.flatten {
                    a.push("flatten".into());
                }
                if attrs.warp_specialize {
                    a.push("warp_specialize".into());
                }
                if !a.is_empty() {
                    let _ = write!(self.out, " attrs {{{}}}", a.join(", "));
                }
                self.out.push(' ');
                self.region(d.regions.first().copied(), depth);
            }
            OpKind::If => {
                let cond = self.names_of(&d.operands);
                let _ = write!(self.out, "if {cond}");
                if !d.results.is_empty() {
                    let _ = write!(self.out, " -> {result_types}");
                }
                self.out.push(' ');
                self.region(d.regions.first().copied(), depth);
                self.out.push_str(" else ");
                self.region(d.regions.get(1).copied(), depth);
            }
            OpKind::While => {
                let args = region_args(0);
                let items: Vec<String> = args
                    .iter()
                    .zip(&d.operands)
                    .map(|(&a, &i)| {
                        let a = self.typed_args(&[a]);
                        format!("{a} = {}", self.name(i))
                    })
                    .collect();
                let _ = write!(self.out, "while ({})", items.join(", "));
                if !d.results.is_empty() {
                    let _ = write!(self.out, " -> {result_types}");
                }
                self.out.push(' ');
                self.region(d.regions.first().copied(), depth);
                self.out.push_str(" do ");
                let after = region_args(1);
                if !after.is_empty() {
                    let a = self.typed_args(after);
                    let _ = write!(self.out, "({a}) ");
                }
                self.region(d.regions.get(1).copied(), depth);
            }
            OpKind::WarpSpecialize { partitions } => {
                self.out.push_str("ws {\n");
                for (i, p) in partitions.iter().enumerate() {
                    self.indent(depth + 1);
                    let _ = write!(self.out, "partition {}", ident_or_quoted(&p.role));
                    let mut a = vec![format!("num_warps = {}", p.num_warps)];
                    if let Some(r) = p.regs {
                        a.push(format!("regs = {r}"));
                    }
                    let _ = write!(self.out, " ({}) ", a.join(", "));
                    self.region(d.regions.get(i).copied(), depth + 1);
                    self.out.push('\n');
                }
                self.indent(depth);
                self.out.push('}');
            }
            kind => self.plain_op(kind, &d.operands, &d.results),
        }
        if d.loc.is_known() {
            let _ = write!(self.out, " loc({}:{})", d.loc.line, d.loc.col);
        }
        self.out.push('\n');
    }

    /// An op without regions: `name [extra] operands {attrs} : types`.
    fn plain_op(&mut self, kind: &OpKind, operands: &[Value], results: &[Value]) {
        self.out.push_str(&op_name(kind));
        match kind {
            OpKind::Constant(c) => {
                let _ = write!(self.out, " {}", format_const(*c));
            }
            OpKind::ProgramId(a) | OpKind::NumPrograms(a) => {
                let _ = write!(self.out, " {}", a.name());
            }
            _ => {}
        }
        if !operands.is_empty() {
            let ops = self.names_of(operands);
            let _ = write!(self.out, " {ops}");
        }
        let attrs = attrs_of(kind);
        if !attrs.is_empty() {
            let _ = write!(self.out, " {{{}}}", attrs.join(", "));
        }
        if !results.is_empty() {
            let conversion = matches!(
                kind,
                OpKind::Splat
                    | OpKind::Broadcast
                    | OpKind::ExpandDims { .. }
                    | OpKind::Reshape
                    | OpKind::Trans { .. }
                    | OpKind::Cast { .. }
                    | OpKind::Bitcast
                    | OpKind::Reduce { .. }
            );
            if conversion && operands.len() == 1 && results.len() == 1 {
                let _ = write!(
                    self.out,
                    " : {} -> {}",
                    self.ty(operands[0]),
                    self.ty(results[0])
                );
            } else {
                let _ = write!(self.out, " : {}", self.types_of(results));
            }
        }
    }
}

/// The attribute dictionary entries of a region-free op, defaults omitted.
fn attrs_of(kind: &OpKind) -> Vec<String> {
    let mut a: Vec<String> = Vec::new();
    match kind {
        OpKind::MakeRange { start, end } => {
            a.push(format!("start = {start}"));
            a.push(format!("end = {end}"));
        }
        OpKind::ExpandDims { axis } => a.push(format!("axis = {axis}")),
        OpKind::Trans { perm } => a.push(format!("perm = {}", list(perm))),
        OpKind::Cast { rounding } if *rounding != Rounding::default() => {
            a.push(format!("rounding = {}", rounding_name(*rounding)));
        }
        OpKind::Load {
            has_mask,
            has_other,
            boundary_check,
            padding,
            cache,
            evict,
            volatile,
        } => {
            if *has_mask {
                a.push("mask".into());
            }
            if *has_other {
                a.push("other".into());
            }
            if !boundary_check.is_empty() {
                a.push(format!("boundary_check = {}", list(boundary_check)));
            }
            if *padding != Padding::default() {
                a.push(format!("padding = {}", padding_name(*padding)));
            }
            mem_attrs(&mut a, *cache, *evict);
            if *volatile {
                a.push("volatile".into());
            }
        }
        OpKind::Store {
            has_mask,
            boundary_check,
            cache,
            evict,
        } => {
            if *has_mask {
                a.push("mask".into());
            }
            if !boundary_check.is_empty() {
                a.push(format!("boundary_check = {}", list(boundary_check)));
            }
            mem_attrs(&mut a, *cache, *evict);
        }
        OpKind::Dot {
            input_precision,
            max_num_imprecise_acc,
            is_async,
        } => {
            if *is_async {
                a.push("async".into());
            }
            if *input_precision != InputPrecision::default() {
                a.push(format!(
                    "input_precision = {}",
                    precision_name(*input_precision)
                ));
            }
            if let Some(n) = max_num_imprecise_acc {
                a.push(format!("max_num_imprecise_acc = {n}"));
            }
        }
        OpKind::DotWait { pending } => a.push(format!("pending = {pending}")),
        OpKind::DescLoad {
            read_once: Some(axes),
        } => {
            let axes: Vec<u32> = axes.iter().map(|x| x.index() as u32).collect();
            a.push(format!("read_once = {}", list(&axes)));
        }
        OpKind::Reduce { axis, .. } => a.push(format!("axis = {axis}")),
        OpKind::Scan { axis, reverse, .. } => {
            a.push(format!("axis = {axis}"));
            if *reverse {
                a.push("reverse".into());
            }
        }
        OpKind::MakeBlockPtr { order } if !order.is_empty() => {
            a.push(format!("order = {}", list(order)));
        }
        OpKind::AtomicRmw {
            sem,
            scope,
            has_mask,
            ..
        } => {
            if *has_mask {
                a.push("mask".into());
            }
            atomic_attrs(&mut a, *sem, *scope);
        }
        OpKind::AtomicCas { sem, scope } => atomic_attrs(&mut a, *sem, *scope),
        OpKind::Hint {
            multiple_of,
            max_contiguous,
            max_constancy,
        } => {
            if !multiple_of.is_empty() {
                a.push(format!("multiple_of = {}", list(multiple_of)));
            }
            if !max_contiguous.is_empty() {
                a.push(format!("max_contiguous = {}", list(max_contiguous)));
            }
            if !max_constancy.is_empty() {
                a.push(format!("max_constancy = {}", list(max_constancy)));
            }
        }
        OpKind::Print { prefix, hex } => {
            a.push(format!("prefix = {}", quote(prefix)));
            if *hex {
                a.push("hex".into());
            }
        }
        OpKind::Assert { message } => a.push(format!("message = {}", quote(message))),
        _ => {}
    }
    a
}

fn mem_attrs(a: &mut Vec<String>, cache: CacheModifier, evict: EvictionPolicy) {
    if cache != CacheModifier::default() {
        a.push(format!("cache = {}", cache_name(cache)));
    }
    if evict != EvictionPolicy::default() {
        a.push(format!("evict = {}", evict_name(evict)));
    }
}

fn atomic_attrs(a: &mut Vec<String>, sem: MemSem, scope: MemScope) {
    if sem != MemSem::default() {
        a.push(format!("sem = {}", sem_name(sem)));
    }
    if scope != MemScope::default() {
        a.push(format!("scope = {}", scope_name(scope)));
    }
}

/// Types print with their `Display`; re-exported here for symmetry with
/// [`crate::parser::parse_type`].
pub fn print_type(t: &Type) -> String {
    t.to_string()
}
