//! Axis information: Triton's AxisInfo analysis (`lib/Analysis/AxisInfo.cpp`)
//! over the tile IR. For every value and every dimension `d` it records
//!
//! - `contiguity[d]`: the value splits along `d` into aligned runs of this
//!   length whose elements increase by exactly 1 (pointers: by one
//!   element);
//! - `divisibility[d]`: the largest power of two known to divide the first
//!   element of every such run (every element when `contiguity[d]` is 1);
//!   for pointers in bytes, so a `*fp16:16` parameter has 16;
//! - `constancy[d]`: the value splits along `d` into aligned runs of this
//!   length whose elements are equal.
//!
//! Scalars have one entry per list. "Aligned" means runs start at indices
//! that are multiples of the run length, which is what vectorized accesses
//! need: the emitter asks [`vector_width`] how many elements along a
//! dimension it may move with one access.
//!
//! The analysis is one forward walk in program order (the IR is structured,
//! every value is defined before its uses). `for` and `while` loops iterate
//! their body until the loop-carried facts stop changing: the carried facts
//! start at the initial values' and are joined (per-dimension gcd) with
//! what the body yields, so each round can only weaken them and the
//! iteration ends. `if` results join the two branches.
//!
//! The transfer rules follow Triton's, with two deliberate differences
//! where Triton's rules are unsound and a wrong divisibility would become
//! a misaligned vector access: when an op shortens the runs of an operand
//! (`x + y` where `x` is contiguous but `y` is not constant along the
//! whole run), the operand's divisibility is only trusted at the new run
//! starts (`div_at`); and `rem` uses that rule instead of Triton's
//! "right-hand side constant" condition. Ops Triton knows nothing about
//! (float arithmetic, math functions) still keep constancy, which every
//! elementwise op preserves.

use std::collections::HashMap;
use std::fmt::Write;

use crate::{
    BinaryOp, Block, CmpPred, ConstValue, Elem, Function, Op, OpKind, ScalarType, SecondaryMap,
    Type, UnaryOp, Value,
};

/// The divisibility of zero (and of anything known to be a multiple of every
/// power of two that fits): Triton's `kMaxDivisor`, scaled to `u32`.
pub const MAX_DIVISIBILITY: u32 = 1 << 31;

/// Facts about one value, one entry per dimension (scalars: one entry).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct AxisInfo {
    pub contiguity: Vec<u32>,
    pub divisibility: Vec<u32>,
    pub constancy: Vec<u32>,
}

impl AxisInfo {
    /// Nothing known: runs of length 1, divisible by 1.
    pub fn unknown(rank: usize) -> AxisInfo {
        AxisInfo {
            contiguity: vec![1; rank],
            divisibility: vec![1; rank],
            constancy: vec![1; rank],
        }
    }

    pub fn rank(&self) -> usize {
        self.contiguity.len()
    }

    // Per-dimension reads that answer "nothing known" past the rank, so that
    // malformed operands degrade to conservative facts instead of panics.
    fn cont(&self, d: usize) -> u32 {
        self.contiguity.get(d).copied().unwrap_or(1)
    }
    fn div(&self, d: usize) -> u32 {
        self.divisibility.get(d).copied().unwrap_or(1)
    }
    fn cst(&self, d: usize) -> u32 {
        self.constancy.get(d).copied().unwrap_or(1)
    }
}

/// An [`AxisInfo`] plus the value's compile-time integer value when every
/// element is known to equal it (Triton's `constantValue`): what the rules
/// for `x * 1`, `x % 1`, shifts and folded comparisons need.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
struct Fact {
    info: AxisInfo,
    constant: Option<i64>,
}

impl Fact {
    fn unknown(rank: usize) -> Fact {
        Fact {
            info: AxisInfo::unknown(rank),
            constant: None,
        }
    }

    /// Every element equals `value`.
    fn constant(value: i64, shape: &[u32]) -> Fact {
        let rank = shape.len().max(1);
        Fact {
            info: AxisInfo {
                contiguity: vec![1; rank],
                divisibility: vec![pow2_divisor_of_value(value); rank],
                constancy: full_shape(shape),
            },
            constant: Some(value),
        }
    }

    /// Nothing known but constancy (elementwise ops on floats).
    fn constancy_only(constancy: Vec<u32>) -> Fact {
        let rank = constancy.len();
        Fact {
            info: AxisInfo {
                contiguity: vec![1; rank],
                divisibility: vec![1; rank],
                constancy,
            },
            constant: None,
        }
    }
}

/// The analysis result: facts for every value of the function.
pub struct AxisInfoMap {
    facts: SecondaryMap<Value, Fact>,
}

impl AxisInfoMap {
    /// Facts about `v`. Every value of the analyzed function has an entry of
    /// its rank (scalars: 1); a value of another function gets an empty one.
    pub fn get(&self, v: Value) -> &AxisInfo {
        &self.facts[v].info
    }

    /// The integer every element of `v` is known to equal, if any.
    pub fn constant(&self, v: Value) -> Option<i64> {
        self.facts[v].constant
    }
}

/// Runs the analysis over `func`, trusting the kernel's `tl.multiple_of`
/// / `tl.max_contiguous` / `tl.max_constancy` hints as Triton does.
pub fn analyze(func: &Function) -> AxisInfoMap {
    analyze_with(func, true)
}

/// Runs the analysis over `func` without the kernel's hints: the facts
/// the code itself (and the signature's specialization) proves.
///
/// A hint is a promise Triton only leans on beside a compile-time
/// alignment proof, and tutorials break it: `max_contiguous(cols, BN)` of
/// columns that wrap at `N` (`% N`, `where(cols < N, cols, 0)`) claims
/// runs of `BN` that are broken at the wrap whenever `N` is not a
/// multiple of `BN`. A vector that is taken because its pointers turn out
/// aligned at run time (16-byte loads or `cp.async` chunks of pointers
/// with no alignment proof) straddles such a wrap and reads past the
/// row, so it has to rest on these facts instead.
pub fn analyze_proven(func: &Function) -> AxisInfoMap {
    analyze_with(func, false)
}

fn analyze_with(func: &Function, trust_hints: bool) -> AxisInfoMap {
    let mut a = Analyzer {
        func,
        facts: SecondaryMap::with_default(Fact::default()),
        trust_hints,
    };
    // Every value starts conservative, so values the walk does not reach
    // (detached blocks) still answer with their rank.
    for (v, data) in func.values.iter() {
        a.facts[v] = Fact::unknown(rank_of(&data.ty));
    }
    for param in &func.params {
        let rank = rank_of(func.ty(param.value));
        let mut fact = Fact::unknown(rank);
        if let Some(d) = param.hints.divisibility {
            // Signature hints are powers of two (`*fp16:16`, `i32:16`).
            fact.info.divisibility = vec![pow2_divisor(d); rank];
        }
        a.facts[param.value] = fact;
    }
    a.block(func.body);
    AxisInfoMap { facts: a.facts }
}

/// Elements per vector access along `dim` for a pointer tile with facts
/// `ptr` (and its mask, if any): the largest power of two that is at most
/// `max_elems` and divides it, divides the pointer's contiguity (and the
/// mask's constancy) along `dim`, and whose byte size divides the
/// pointer's divisibility. At least 1.
pub fn vector_width(
    ptr: &AxisInfo,
    mask: Option<&AxisInfo>,
    dim: usize,
    elem_bytes: u32,
    max_elems: u32,
) -> u32 {
    if dim >= ptr.rank() {
        return 1;
    }
    let mut width = pow2_divisor(max_elems).min(pow2_divisor(ptr.cont(dim)));
    if let Some(m) = mask {
        width = width.min(pow2_divisor(m.cst(dim)));
    }
    let elem_bytes = u64::from(elem_bytes.max(1));
    let align = u64::from(ptr.div(dim));
    while width > 1 && align % (u64::from(width) * elem_bytes) != 0 {
        width /= 2;
    }
    width
}

/// One line per value, in program order (parameters first, block arguments
/// before the ops of their block), indented by region depth:
/// `%name: type  contiguity [..]  divisibility [..]  constancy [..]`.
/// Divisibility [`MAX_DIVISIBILITY`] prints as `max`.
pub fn print_axis_info(func: &Function) -> String {
    let map = analyze(func);
    let names = crate::printer::value_names(func);
    let mut out = String::new();
    print_block(func, &map, &names, func.body, 0, &mut out);
    out
}

fn print_block(
    func: &Function,
    map: &AxisInfoMap,
    names: &HashMap<Value, String>,
    block: Block,
    depth: usize,
    out: &mut String,
) {
    let line = |out: &mut String, v: Value| {
        let info = map.get(v);
        let name = names.get(&v).cloned().unwrap_or_else(|| format!("{v}"));
        let divs: Vec<String> = info
            .divisibility
            .iter()
            .map(|&d| {
                if d >= MAX_DIVISIBILITY {
                    "max".to_string()
                } else {
                    d.to_string()
                }
            })
            .collect();
        let _ = writeln!(
            out,
            "{:indent$}%{name}: {}  contiguity {:?}  divisibility [{}]  constancy {:?}",
            "",
            func.ty(v),
            info.contiguity,
            divs.join(", "),
            info.constancy,
            indent = 2 * depth
        );
    };
    for &arg in &func.blocks[block].args {
        line(out, arg);
    }
    for &op in &func.blocks[block].ops {
        for &r in &func.ops[op].results {
            line(out, r);
        }
        for &region in &func.ops[op].regions {
            print_block(func, map, names, region, depth + 1, out);
        }
    }
}

// ------------------------------------------------------------- arithmetic

fn gcd(a: u32, b: u32) -> u32 {
    let (mut a, mut b) = (a, b);
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a.max(1)
}

fn gcd3(a: u32, b: u32, c: u32) -> u32 {
    gcd(gcd(a, b), c)
}

/// Largest power of two dividing `x` (`x` = 0 counts as 1).
fn pow2_divisor(x: u32) -> u32 {
    if x == 0 {
        1
    } else {
        1 << x.trailing_zeros()
    }
}

/// Largest power of two dividing the integer `v`, [`MAX_DIVISIBILITY`] for 0
/// (Triton's `highestPowOf2Divisor`).
fn pow2_divisor_of_value(v: i64) -> u32 {
    if v == 0 || v.trailing_zeros() >= 31 {
        MAX_DIVISIBILITY
    } else {
        1 << v.trailing_zeros()
    }
}

/// Product of two divisibilities, saturating (Triton's `multiplyDivisor`).
fn mul_div(a: u32, b: u32) -> u32 {
    (u64::from(a) * u64::from(b)).min(u64::from(MAX_DIVISIBILITY)) as u32
}

/// Divisibility of `x` along `d` at the starts of aligned runs of length
/// `run` (a divisor of `x`'s contiguity, or 1): the run starts of `x` when
/// the runs are the same, every element when `x` has no runs, otherwise
/// only what the shorter stride between run starts guarantees.
fn div_at(x: &AxisInfo, d: usize, run: u32) -> u32 {
    let c = x.cont(d);
    if c == 1 || c == run {
        x.div(d)
    } else {
        gcd3(x.div(d), c, run)
    }
}

fn full_shape(shape: &[u32]) -> Vec<u32> {
    if shape.is_empty() {
        vec![1]
    } else {
        shape.to_vec()
    }
}

/// One entry per dimension; scalars one.
fn rank_of(ty: &Type) -> usize {
    ty.shape().len().max(1)
}

/// Whether `v` fits the integer type `ty` (folded constants that overflow
/// are dropped rather than wrapped).
fn fits(v: i64, ty: Option<ScalarType>) -> bool {
    let Some(ty) = ty else { return false };
    if !ty.is_int() {
        return false;
    }
    let bits = ty.bits();
    if ty == ScalarType::I1 {
        return v == 0 || v == 1;
    }
    if ty.is_unsigned_int() {
        return v >= 0 && (bits >= 64 || v < (1i64 << bits));
    }
    bits >= 64 || (v >= -(1i64 << (bits - 1)) && v < (1i64 << (bits - 1)))
}

// ------------------------------------------------------------- the walk

struct Analyzer<'f> {
    func: &'f Function,
    facts: SecondaryMap<Value, Fact>,
    /// Whether `hint` ops replace the facts (`analyze`) or pass their
    /// operand's through (`analyze_proven`).
    trust_hints: bool,
}

impl<'f> Analyzer<'f> {
    fn fact(&self, v: Value) -> &Fact {
        &self.facts[v]
    }

    fn info(&self, v: Value) -> &AxisInfo {
        &self.facts[v].info
    }

    fn block(&mut self, block: Block) {
        for &op in &self.func.blocks[block].ops {
            self.op(op);
        }
    }

    fn op(&mut self, op: Op) {
        let func = self.func;
        let data = &func.ops[op];
        match &data.kind {
            OpKind::For(_) => self.for_loop(op),
            OpKind::While => self.while_loop(op),
            OpKind::If => self.if_op(op),
            _ => {
                let results = self.transfer(op);
                for (&r, fact) in data.results.iter().zip(results) {
                    self.facts[r] = fact;
                }
                // No other op has regions today; should one appear, its
                // block arguments stay conservative and its ops are still
                // analyzed.
                for &region in &data.regions {
                    self.block(region);
                }
            }
        }
    }

    /// Operands of the terminator ending `block`, if `want` accepts its kind
    /// (`yield` of loop bodies and `if` branches, `condition` of a
    /// `while`'s before region).
    fn terminator_operands(&self, block: Block, want: fn(&OpKind) -> bool) -> Option<&'f [Value]> {
        let func = self.func;
        let last = *func.blocks[block].ops.last()?;
        let data = &func.ops[last];
        want(&data.kind).then_some(data.operands.as_slice())
    }

    fn set_all(&mut self, values: &[Value], facts: &[Fact]) {
        for (&v, f) in values.iter().zip(facts) {
            self.facts[v] = f.clone();
        }
    }

    fn unknown_all(&mut self, values: &[Value]) {
        for &v in values {
            self.facts[v] = Fact::unknown(rank_of(self.func.ty(v)));
        }
    }

    /// Rounds after which a loop's carried facts are given up (set to
    /// unknown, which is always a fixpoint). Joins only weaken facts, so
    /// the iteration always ends, on the example kernels after one or two
    /// rounds; the bound keeps long chains of weakenings (many carried
    /// values, each halving one divisibility per round) cheap.
    const MAX_ROUNDS: usize = 64;

    fn for_loop(&mut self, op: Op) {
        let func = self.func;
        let data = &func.ops[op];
        let Some(&body) = data.regions.first() else {
            self.unknown_all(&data.results);
            return;
        };
        let args = &func.blocks[body].args;
        if data.operands.len() < 3 || args.is_empty() {
            self.unknown_all(args);
            self.block(body);
            self.unknown_all(&data.results);
            return;
        }
        // The induction variable takes lb, lb + step, ...: divisible by
        // whatever divides both; nothing else is known.
        let (lb, step) = (data.operands[0], data.operands[2]);
        let mut iv = Fact::unknown(1);
        iv.info.divisibility[0] = gcd(self.info(lb).div(0), self.info(step).div(0));
        self.facts[args[0]] = iv;

        let inits: Vec<Fact> = data.operands[3..]
            .iter()
            .map(|&v| self.fact(v).clone())
            .collect();
        let carried_args = &args[1..];
        let carried = self.iterate(carried_args, inits, |a| {
            a.block(body);
            a.terminator_operands(body, |k| matches!(k, OpKind::Yield))
                .map(|ys| ys.iter().map(|&y| a.fact(y).clone()).collect())
        });
        self.set_all(&data.results, &carried);
    }

    fn while_loop(&mut self, op: Op) {
        let func = self.func;
        let data = &func.ops[op];
        let (Some(&before), Some(&after)) = (data.regions.first(), data.regions.get(1)) else {
            self.unknown_all(&data.results);
            return;
        };
        let inits: Vec<Fact> = data
            .operands
            .iter()
            .map(|&v| self.fact(v).clone())
            .collect();
        let before_args = &func.blocks[before].args;
        let after_args = &func.blocks[after].args;
        self.iterate(before_args, inits, |a| {
            a.block(before);
            // `condition(cond, forwarded...)`: the forwarded values are the
            // after region's arguments and the loop's results.
            let forwarded: Vec<Fact> = a
                .terminator_operands(before, |k| matches!(k, OpKind::Condition))?
                .iter()
                .skip(1)
                .map(|&v| a.fact(v).clone())
                .collect();
            a.set_all(after_args, &forwarded);
            a.set_all(&data.results, &forwarded);
            a.block(after);
            a.terminator_operands(after, |k| matches!(k, OpKind::Yield))
                .map(|ys| ys.iter().map(|&y| a.fact(y).clone()).collect())
        });
    }

    /// The loop fixpoint: `args` start with `inits`; each round runs `body`
    /// (which returns the facts of the values carried into the next
    /// iteration, `None` when the region is malformed) and joins them into
    /// `args`, until nothing changes. The last round leaves the facts of
    /// every value inside the loop consistent with the final `args`, which
    /// are returned.
    fn iterate(
        &mut self,
        args: &[Value],
        inits: Vec<Fact>,
        mut body: impl FnMut(&mut Self) -> Option<Vec<Fact>>,
    ) -> Vec<Fact> {
        let unknown: Vec<Fact> = args
            .iter()
            .map(|&v| Fact::unknown(rank_of(self.func.ty(v))))
            .collect();
        let mut current = if inits.len() == args.len() {
            inits
        } else {
            unknown.clone()
        };
        for _ in 0..Self::MAX_ROUNDS {
            self.set_all(args, &current);
            let next = match body(self) {
                Some(next) if next.len() == current.len() => next,
                _ => unknown.clone(),
            };
            let joined: Vec<Fact> = current.iter().zip(&next).map(|(a, b)| join(a, b)).collect();
            if joined == current {
                return current;
            }
            current = joined;
        }
        self.set_all(args, &unknown);
        body(self);
        unknown
    }

    fn if_op(&mut self, op: Op) {
        let func = self.func;
        let data = &func.ops[op];
        let mut joined: Option<Vec<Fact>> = None;
        for &region in &data.regions {
            self.block(region);
            let ys: Option<Vec<Fact>> = self
                .terminator_operands(region, |k| matches!(k, OpKind::Yield))
                .map(|ys| ys.iter().map(|&y| self.fact(y).clone()).collect());
            joined = match (joined, ys) {
                (None, Some(ys)) => Some(ys),
                (Some(acc), Some(ys)) if acc.len() == ys.len() => {
                    Some(acc.iter().zip(&ys).map(|(a, b)| join(a, b)).collect())
                }
                _ => {
                    self.unknown_all(&data.results);
                    return;
                }
            };
        }
        match joined {
            Some(facts) if facts.len() == data.results.len() => self.set_all(&data.results, &facts),
            _ => self.unknown_all(&data.results),
        }
    }

    // --------------------------------------------------------- transfer

    /// Facts of the results of a non-control-flow op.
    fn transfer(&self, op: Op) -> Vec<Fact> {
        let func = self.func;
        let data = &func.ops[op];
        let unknown_results = || -> Vec<Fact> {
            data.results
                .iter()
                .map(|&r| Fact::unknown(rank_of(func.ty(r))))
                .collect()
        };
        let Some(&result) = data.results.first() else {
            return vec![];
        };
        let rty = func.ty(result);
        let shape = rty.shape();
        let rank = rank_of(rty);
        let operand = |i: usize| data.operands.get(i).copied();
        // Operands of the result's rank, or nothing (conservative).
        let same_rank = |n: usize| -> Option<Vec<&Fact>> {
            let facts: Vec<&Fact> = (0..n)
                .map(|i| operand(i).map(|v| self.fact(v)))
                .collect::<Option<_>>()?;
            facts.iter().all(|f| f.info.rank() == rank).then_some(facts)
        };
        let fact = match &data.kind {
            OpKind::Constant(c) => match c {
                ConstValue::Int(v) => Fact::constant(*v, shape),
                ConstValue::Bool(b) => Fact::constant(i64::from(*b), shape),
                ConstValue::Float(_) => Fact::constancy_only(full_shape(shape)),
            },
            OpKind::MakeRange { start, end } => {
                let len = u32::try_from(i64::from(*end) - i64::from(*start)).unwrap_or(1);
                Fact {
                    info: AxisInfo {
                        contiguity: vec![len.max(1)],
                        divisibility: vec![pow2_divisor_of_value(i64::from(*start))],
                        constancy: vec![1],
                    },
                    constant: None,
                }
            }
            OpKind::Splat => match operand(0) {
                Some(x) => {
                    let x = self.fact(x);
                    Fact {
                        info: AxisInfo {
                            contiguity: vec![1; rank],
                            divisibility: vec![x.info.div(0); rank],
                            constancy: full_shape(shape),
                        },
                        constant: x.constant,
                    }
                }
                None => Fact::unknown(rank),
            },
            OpKind::Broadcast => match operand(0) {
                Some(x) if func.ty(x).shape().len() == shape.len() => {
                    let from = func.ty(x).shape();
                    let x = self.fact(x);
                    let mut f = Fact::unknown(rank);
                    for d in 0..shape.len() {
                        let stretched = from[d] == 1;
                        f.info.contiguity[d] = if stretched { 1 } else { x.info.cont(d) };
                        f.info.divisibility[d] = x.info.div(d);
                        f.info.constancy[d] = if stretched { shape[d] } else { x.info.cst(d) };
                    }
                    f.constant = x.constant;
                    f
                }
                _ => Fact::unknown(rank),
            },
            OpKind::ExpandDims { axis } => match operand(0) {
                Some(x) if (*axis as usize) <= self.fact(x).info.rank() => {
                    let x = self.fact(x);
                    // The new dimension has one element: its divisibility is
                    // what every element of the operand is divisible by.
                    let new_div = match x.constant {
                        Some(v) => pow2_divisor_of_value(v),
                        None => (0..x.info.rank())
                            .map(|d| div_at(&x.info, d, 1))
                            .fold(MAX_DIVISIBILITY, gcd),
                    };
                    let mut info = x.info.clone();
                    let at = *axis as usize;
                    info.contiguity.insert(at, 1);
                    info.divisibility.insert(at, new_div);
                    info.constancy.insert(at, 1);
                    if info.rank() == rank {
                        Fact {
                            info,
                            constant: x.constant,
                        }
                    } else {
                        Fact::unknown(rank)
                    }
                }
                _ => Fact::unknown(rank),
            },
            OpKind::Trans { perm } => match operand(0) {
                Some(x)
                    if perm.len() == rank
                        && perm
                            .iter()
                            .all(|&p| (p as usize) < self.fact(x).info.rank()) =>
                {
                    let x = self.fact(x);
                    let pick = |v: &Vec<u32>| perm.iter().map(|&p| v[p as usize]).collect();
                    Fact {
                        info: AxisInfo {
                            contiguity: pick(&x.info.contiguity),
                            divisibility: pick(&x.info.divisibility),
                            constancy: pick(&x.info.constancy),
                        },
                        constant: x.constant,
                    }
                }
                _ => Fact::unknown(rank),
            },
            // Reshapes, joins and splits move elements between dimensions;
            // only a known constant survives them.
            OpKind::Reshape | OpKind::Join | OpKind::Split => {
                match operand(0).and_then(|x| self.fact(x).constant) {
                    Some(v) if data.results.len() == 1 && data.operands.len() == 1 => {
                        Fact::constant(v, shape)
                    }
                    _ => return unknown_results(),
                }
            }
            OpKind::Binary(b) => match same_rank(2) {
                Some(ops) => {
                    let elem = func.ty(data.operands[0]).elem();
                    binary(*b, ops[0], ops[1], elem, rty.scalar_type(), shape)
                }
                None => Fact::unknown(rank),
            },
            OpKind::AddPtr => match same_rank(2) {
                Some(ops) => {
                    let elem_bytes = rty
                        .elem()
                        .and_then(Elem::pointee)
                        .map_or(1, |p| p.byte_size());
                    add_sub(false, ops[0], ops[1], elem_bytes.max(1), rank)
                }
                None => Fact::unknown(rank),
            },
            OpKind::Unary(u) => match same_rank(1) {
                Some(ops) => unary(*u, ops[0], rty.scalar_type(), rank),
                None => Fact::unknown(rank),
            },
            OpKind::Fma => match same_rank(3) {
                Some(ops) => Fact::constancy_only(
                    (0..rank)
                        .map(|d| gcd3(ops[0].info.cst(d), ops[1].info.cst(d), ops[2].info.cst(d)))
                        .collect(),
                ),
                None => Fact::unknown(rank),
            },
            OpKind::Cmp(pred) => match same_rank(2) {
                Some(ops) => {
                    let elem = func.ty(data.operands[0]).scalar_type();
                    compare(*pred, ops[0], ops[1], elem, shape)
                }
                None => Fact::unknown(rank),
            },
            OpKind::Select => match (
                operand(0),
                same_rank(3).or_else(|| {
                    // A scalar condition with tile operands.
                    let (a, b) = (operand(1)?, operand(2)?);
                    let (a, b) = (self.fact(a), self.fact(b));
                    (a.info.rank() == rank && b.info.rank() == rank).then(|| vec![a, a, b])
                }),
            ) {
                (Some(c), Some(ops)) => {
                    let scalar_cond = func.ty(c).is_scalar() && rty.is_tensor();
                    select(self.fact(c), ops[1], ops[2], scalar_cond, rank)
                }
                _ => Fact::unknown(rank),
            },
            OpKind::Cast { .. } | OpKind::Bitcast => match (operand(0), same_rank(1)) {
                (Some(x), Some(ops)) => cast(ops[0], func.ty(x).elem(), rty.elem(), rank),
                _ => Fact::unknown(rank),
            },
            OpKind::Load { has_mask, .. } => {
                // A loaded value is only known to repeat where both the
                // address and the mask do (Triton's LoadOp rule).
                match operand(0) {
                    Some(p) if func.ty(p).is_tensor() || func.ty(p).is_scalar() => {
                        let p = &self.fact(p).info;
                        let m = if *has_mask {
                            operand(1).map(|m| &self.fact(m).info)
                        } else {
                            None
                        };
                        let constancy = (0..rank)
                            .map(|d| match m {
                                Some(m) => gcd(p.cst(d), m.cst(d)),
                                None => p.cst(d),
                            })
                            .collect();
                        Fact::constancy_only(constancy)
                    }
                    _ => Fact::unknown(rank),
                }
            }
            OpKind::Hint {
                multiple_of,
                max_contiguous,
                max_constancy,
            } => match operand(0) {
                // `tl.multiple_of` / `tl.max_contiguous` / `tl.max_constancy`
                // replace what the analysis found (Triton's `tt.divisibility`
                // etc. attributes): the user vouches for them. The proven
                // facts (`analyze_proven`) keep the operand's.
                Some(x) => {
                    let mut f = self.fact(x).clone();
                    if f.info.rank() != rank {
                        f = Fact::unknown(rank);
                    }
                    let trust = self.trust_hints;
                    if trust && multiple_of.len() == rank {
                        f.info.divisibility =
                            multiple_of.iter().map(|&m| pow2_divisor(m)).collect();
                    }
                    if trust && max_contiguous.len() == rank {
                        f.info.contiguity = max_contiguous.clone();
                    }
                    if trust && max_constancy.len() == rank {
                        f.info.constancy = max_constancy.clone();
                    }
                    f
                }
                None => Fact::unknown(rank),
            },
            // Program ids, loads through block pointers and descriptors, dots,
            // reductions, scans, atomics: nothing known (as in Triton).
            _ => return unknown_results(),
        };
        let mut out = vec![fact];
        out.extend(
            data.results[1..]
                .iter()
                .map(|&r| Fact::unknown(rank_of(func.ty(r)))),
        );
        out
    }
}

// ------------------------------------------------------------- rules

/// The join of two facts about one value (both may hold): per-dimension gcd;
/// divisibility only at the starts of the joined runs.
fn join(a: &Fact, b: &Fact) -> Fact {
    let rank = a.info.rank();
    if rank != b.info.rank() {
        return Fact::unknown(rank.max(b.info.rank()));
    }
    let mut f = Fact::unknown(rank);
    for d in 0..rank {
        let run = gcd(a.info.cont(d), b.info.cont(d));
        f.info.contiguity[d] = run;
        f.info.divisibility[d] = gcd(div_at(&a.info, d, run), div_at(&b.info, d, run));
        f.info.constancy[d] = gcd(a.info.cst(d), b.info.cst(d));
    }
    f.constant = a.constant.filter(|_| a.constant == b.constant);
    f
}

/// `lhs + rhs` / `lhs - rhs` (`rhs_scale` > 1: `addptr`, whose offsets
/// count elements of that many bytes while pointer divisibility counts
/// bytes).
fn add_sub(is_sub: bool, l: &Fact, r: &Fact, rhs_scale: u32, rank: usize) -> Fact {
    let (li, ri) = (&l.info, &r.info);
    let mut f = Fact::unknown(rank);
    for d in 0..rank {
        // Runs survive where the other side is constant over them; a
        // contiguous right-hand side of a subtraction decreases.
        let run = if is_sub {
            gcd(li.cont(d), ri.cst(d))
        } else {
            gcd(li.cst(d), ri.cont(d)).max(gcd(li.cont(d), ri.cst(d)))
        };
        f.info.contiguity[d] = run;
        f.info.divisibility[d] = gcd(div_at(li, d, run), mul_div(div_at(ri, d, run), rhs_scale));
        f.info.constancy[d] = gcd(li.cst(d), ri.cst(d));
    }
    f
}

fn binary(
    op: BinaryOp,
    l: &Fact,
    r: &Fact,
    elem: Option<Elem>,
    result: Option<ScalarType>,
    shape: &[u32],
) -> Fact {
    let rank = shape.len().max(1);
    let constancy: Vec<u32> = (0..rank)
        .map(|d| gcd(l.info.cst(d), r.info.cst(d)))
        .collect();
    // Contiguity and divisibility mean nothing for floats; every
    // elementwise op keeps constancy.
    let on_ints =
        result.is_some_and(ScalarType::is_int) && elem.is_some_and(|e| e.scalar().is_some());
    if !on_ints {
        return Fact::constancy_only(constancy);
    }
    if let Some(v) = fold_binary(op, l.constant, r.constant, result) {
        return Fact::constant(v, shape);
    }
    let (li, ri) = (&l.info, &r.info);
    let is = |f: &Fact, v: i64| f.constant == Some(v);
    let full = |d: usize| shape.get(d).copied().unwrap_or(1);
    let mut f = Fact::constancy_only(constancy);
    match op {
        BinaryOp::Add | BinaryOp::Sub => {
            return add_sub(op == BinaryOp::Sub, l, r, 1, rank);
        }
        BinaryOp::Mul => {
            for d in 0..rank {
                // x * 1 = x; otherwise runs of a contiguous operand become
                // strided, and only its per-element divisibility counts.
                let run = if is(r, 1) {
                    li.cont(d)
                } else if is(l, 1) {
                    ri.cont(d)
                } else {
                    1
                };
                f.info.contiguity[d] = run;
                let ld = if is(r, 1) {
                    li.div(d)
                } else {
                    div_at(li, d, 1)
                };
                let rd = if is(l, 1) {
                    ri.div(d)
                } else {
                    div_at(ri, d, 1)
                };
                f.info.divisibility[d] = if is(r, 1) {
                    ld
                } else if is(l, 1) {
                    rd
                } else {
                    mul_div(ld, rd)
                };
            }
        }
        BinaryOp::IDiv => {
            for d in 0..rank {
                f.info.contiguity[d] = if is(r, 1) { li.cont(d) } else { 1 };
                // A run of consecutive values divided by a constant whose
                // multiples fall on aligned boundaries stays constant.
                if li.cont(d) == full(d) && ri.cst(d) == full(d) {
                    f.info.constancy[d] =
                        f.info.constancy[d].max(gcd3(li.cont(d), li.div(d), ri.div(d)));
                }
                f.info.divisibility[d] = if is(l, 0) || is(r, 1) {
                    li.div(d)
                } else {
                    match r.constant {
                        Some(c)
                            if c != 0 && c.unsigned_abs().is_power_of_two() && li.cont(d) == 1 =>
                        {
                            let q = u64::from(li.div(d)) / c.unsigned_abs();
                            q.max(1) as u32
                        }
                        _ => 1,
                    }
                };
            }
        }
        BinaryOp::Rem => {
            for d in 0..rank {
                // `(start + arange) % M`: runs survive up to what both the
                // run start and M are divisible by (Triton's rem rule).
                let run = if li.cont(d) == full(d) && ri.cst(d) == full(d) {
                    gcd3(li.cont(d), li.div(d), ri.div(d))
                } else {
                    1
                };
                f.info.contiguity[d] = run;
                // x % m = x - q*m: divisible by what divides both, taken at
                // the result's run starts.
                f.info.divisibility[d] = gcd(div_at(li, d, run), div_at(ri, d, run));
                if is(r, 1) {
                    f.info.constancy[d] = full(d);
                }
            }
        }
        BinaryOp::Shl | BinaryOp::Shr => {
            let shift = r.constant.filter(|s| (0..63).contains(s));
            for d in 0..rank {
                let run = if shift == Some(0) { li.cont(d) } else { 1 };
                f.info.contiguity[d] = run;
                let ld = div_at(li, d, run);
                f.info.divisibility[d] = match (op, shift) {
                    (BinaryOp::Shl, Some(s)) => {
                        mul_div(ld, 1u32.checked_shl(s as u32).unwrap_or(MAX_DIVISIBILITY))
                    }
                    (BinaryOp::Shl, None) => ld,
                    (_, Some(s)) => (u64::from(ld) >> s).max(1) as u32,
                    (_, None) => 1,
                };
            }
        }
        BinaryOp::Max | BinaryOp::Min => {
            // max(x + i, y + i) = max(x, y) + i: runs common to both stay,
            // and the result's run starts are one side's.
            for d in 0..rank {
                let run = gcd(li.cont(d), ri.cont(d));
                f.info.contiguity[d] = run;
                f.info.divisibility[d] = gcd(div_at(li, d, run), div_at(ri, d, run));
            }
        }
        // Bitwise ops (and float-only ops, unreachable here) keep constancy.
        _ => {}
    }
    f
}

fn fold_binary(
    op: BinaryOp,
    l: Option<i64>,
    r: Option<i64>,
    ty: Option<ScalarType>,
) -> Option<i64> {
    // `x % 1` is 0 whatever x is.
    if op == BinaryOp::Rem && r == Some(1) {
        return Some(0);
    }
    let (l, r) = (l?, r?);
    let unsigned = ty.is_some_and(ScalarType::is_unsigned_int);
    if unsigned && (l < 0 || r < 0) {
        return None;
    }
    let v = match op {
        BinaryOp::Add => l.checked_add(r)?,
        BinaryOp::Sub => l.checked_sub(r)?,
        BinaryOp::Mul => l.checked_mul(r)?,
        BinaryOp::IDiv => l.checked_div(r)?,
        BinaryOp::Rem => l.checked_rem(r)?,
        BinaryOp::And => l & r,
        BinaryOp::Or => l | r,
        BinaryOp::Xor => l ^ r,
        BinaryOp::Shl => l.checked_shl(u32::try_from(r).ok().filter(|&s| s < 63)?)?,
        BinaryOp::Shr => l.checked_shr(u32::try_from(r).ok().filter(|&s| s < 63)?)?,
        BinaryOp::Max => l.max(r),
        BinaryOp::Min => l.min(r),
        _ => return None,
    };
    fits(v, ty).then_some(v)
}

fn unary(op: UnaryOp, x: &Fact, ty: Option<ScalarType>, rank: usize) -> Fact {
    let mut f = Fact::constancy_only(x.info.constancy.clone());
    if !ty.is_some_and(ScalarType::is_int) {
        return f;
    }
    match op {
        UnaryOp::Neg | UnaryOp::Abs => {
            // Runs turn around; every element keeps its powers of two.
            f.info.divisibility = (0..rank).map(|d| div_at(&x.info, d, 1)).collect();
            f.constant = x.constant.and_then(|v| {
                let r = if op == UnaryOp::Neg {
                    v.checked_neg()
                } else {
                    v.checked_abs()
                };
                r.filter(|&r| fits(r, ty))
            });
        }
        UnaryOp::Not => {
            f.constant = x.constant.map(|v| {
                if ty == Some(ScalarType::I1) {
                    v ^ 1
                } else {
                    !v
                }
            });
            f.constant = f.constant.filter(|&v| fits(v, ty));
        }
        _ => {}
    }
    if let Some(v) = f.constant {
        f.info.divisibility = vec![pow2_divisor_of_value(v); rank];
    }
    f
}

/// Comparisons (Triton's CmpOp rule): constancy where both sides are
/// constant, plus a contiguous side compared with a side constant along the
/// whole dimension, whose result can only flip at a multiple of what
/// divides both.
fn compare(pred: CmpPred, l: &Fact, r: &Fact, elem: Option<ScalarType>, shape: &[u32]) -> Fact {
    let rank = shape.len().max(1);
    if let (Some(a), Some(b)) = (l.constant, r.constant) {
        let unsigned = elem.is_some_and(ScalarType::is_unsigned_int);
        let (a, b) = if unsigned {
            (i128::from(a as u64), i128::from(b as u64))
        } else {
            (i128::from(a), i128::from(b))
        };
        let v = match pred {
            CmpPred::Eq => a == b,
            CmpPred::Ne => a != b,
            CmpPred::Lt => a < b,
            CmpPred::Le => a <= b,
            CmpPred::Gt => a > b,
            CmpPred::Ge => a >= b,
        };
        return Fact::constant(i64::from(v), shape);
    }
    let (li, ri) = (&l.info, &r.info);
    let full = |d: usize| shape.get(d).copied().unwrap_or(1);
    let constancy = (0..rank)
        .map(|d| {
            let both = gcd(li.cst(d), ri.cst(d));
            let crossing = match pred {
                // constant > x, constant <= x: lhs constant, rhs contiguous.
                CmpPred::Gt | CmpPred::Le if li.cst(d) == full(d) => {
                    gcd3(ri.cont(d), li.div(d), ri.div(d))
                }
                // x < constant, x >= constant: rhs constant, lhs contiguous.
                CmpPred::Lt | CmpPred::Ge if ri.cst(d) == full(d) => {
                    gcd3(li.cont(d), li.div(d), ri.div(d))
                }
                _ => 1,
            };
            both.max(crossing)
        })
        .collect();
    Fact::constancy_only(constancy)
}

fn select(c: &Fact, a: &Fact, b: &Fact, scalar_cond: bool, rank: usize) -> Fact {
    match c.constant {
        Some(0) => return b.clone(),
        Some(_) => return a.clone(),
        None => {}
    }
    let mut f = Fact::unknown(rank);
    for d in 0..rank {
        // A scalar condition picks one whole side; a tile condition can
        // switch sides wherever it changes.
        let (run, constancy) = if scalar_cond {
            (
                gcd(a.info.cont(d), b.info.cont(d)),
                gcd(a.info.cst(d), b.info.cst(d)),
            )
        } else {
            (
                gcd3(a.info.cont(d), b.info.cont(d), c.info.cst(d)),
                gcd3(a.info.cst(d), b.info.cst(d), c.info.cst(d)),
            )
        };
        f.info.contiguity[d] = run;
        f.info.divisibility[d] = gcd(div_at(&a.info, d, run), div_at(&b.info, d, run));
        f.info.constancy[d] = constancy;
    }
    f.constant = a.constant.filter(|_| a.constant == b.constant);
    f
}

/// Numeric conversions and bitcasts. Integer-to-integer conversions keep
/// everything (as Triton's ext/trunc rules). Between pointers and integers,
/// and between pointers to elements of different sizes, the byte values
/// keep their divisibility but runs of consecutive elements are no longer
/// runs of consecutive units.
fn cast(x: &Fact, from: Option<Elem>, to: Option<Elem>, rank: usize) -> Fact {
    let unit_bytes = |e: Elem| match e {
        Elem::Scalar(s) if s.is_int() => Some(1),
        Elem::Ptr(p) => Some(p.byte_size().max(1)),
        Elem::Scalar(_) => None,
    };
    let (Some(from), Some(to)) = (from, to) else {
        return Fact::unknown(rank);
    };
    match (unit_bytes(from), unit_bytes(to)) {
        (Some(a), Some(b)) => {
            let mut f = x.clone();
            if a != b {
                f.info.contiguity = vec![1; rank];
                f.info.divisibility = (0..rank).map(|d| div_at(&x.info, d, 1)).collect();
            }
            // Pointers carry no constants; integer constants stay if they
            // fit the new type.
            f.constant = match to {
                Elem::Scalar(s) => x.constant.filter(|&v| fits(v, Some(s))),
                Elem::Ptr(_) => None,
            };
            // A constant narrowed out of range keeps its powers of two
            // (truncation keeps the low bits), so its facts stay valid.
            f
        }
        _ => Fact::constancy_only(x.info.constancy.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(c: &[u32], d: &[u32], k: &[u32]) -> AxisInfo {
        AxisInfo {
            contiguity: c.to_vec(),
            divisibility: d.to_vec(),
            constancy: k.to_vec(),
        }
    }

    #[test]
    fn vector_width_takes_every_limit() {
        let p = info(&[1, 64], &[2, 16], &[1, 1]);
        // fp16: 16 bytes of alignment allow 8 elements.
        assert_eq!(vector_width(&p, None, 1, 2, 8), 8);
        assert_eq!(vector_width(&p, None, 1, 2, 4), 4);
        // fp32: 16 bytes allow 4.
        assert_eq!(vector_width(&p, None, 1, 4, 8), 4);
        // Along dim 0 nothing is contiguous.
        assert_eq!(vector_width(&p, None, 0, 2, 8), 1);
        // The mask's constancy limits it.
        let m = info(&[1, 1], &[1, 1], &[128, 2]);
        assert_eq!(vector_width(&p, Some(&m), 1, 2, 8), 2);
        // Alignment smaller than one element, out-of-range dim, zero max.
        assert_eq!(vector_width(&info(&[8], &[1], &[1]), None, 0, 2, 8), 1);
        assert_eq!(vector_width(&p, None, 5, 2, 8), 1);
        assert_eq!(vector_width(&p, None, 1, 2, 0), 1);
        // A contiguity that is not a power of two allows its power-of-two part.
        assert_eq!(vector_width(&info(&[12], &[64], &[1]), None, 0, 1, 16), 4);
    }

    #[test]
    fn join_keeps_divisibility_at_the_joined_run_starts() {
        // Triton's example: [[0, 1], [4, 5]] joined with [16, 17, 18, 19].
        let a = Fact {
            info: info(&[2], &[4], &[1]),
            constant: None,
        };
        let b = Fact {
            info: info(&[4], &[16], &[1]),
            constant: None,
        };
        assert_eq!(join(&a, &b).info, info(&[2], &[2], &[1]));
        assert_eq!(join(&a, &a), a);
    }

    #[test]
    fn add_of_a_range_and_a_non_constant_tile_trusts_no_run_start() {
        // arange(0, 4) + [16, 32, 48, 64] = [16, 33, 50, 67]: Triton would
        // claim divisibility 16; only 1 holds.
        let range = Fact {
            info: info(&[4], &[MAX_DIVISIBILITY], &[1]),
            constant: None,
        };
        let strided = Fact {
            info: info(&[1], &[16], &[1]),
            constant: None,
        };
        let sum = add_sub(false, &range, &strided, 1, 1);
        assert_eq!(sum.info, info(&[1], &[1], &[1]));
    }

    #[test]
    fn rem_of_an_offset_range_by_a_divisible_bound() {
        // (pid*128 + arange(0, 128)) % M with M divisible by 16.
        let offs = Fact {
            info: info(&[128], &[128], &[1]),
            constant: None,
        };
        let m = Fact {
            info: info(&[1], &[16], &[128]),
            constant: None,
        };
        let r = binary(
            BinaryOp::Rem,
            &offs,
            &m,
            Some(Elem::Scalar(ScalarType::I32)),
            Some(ScalarType::I32),
            &[128],
        );
        assert_eq!(r.info, info(&[16], &[16], &[1]));
        // Without a divisibility hint on M, runs are single elements.
        let m1 = Fact {
            info: info(&[1], &[1], &[128]),
            constant: None,
        };
        let r = binary(
            BinaryOp::Rem,
            &offs,
            &m1,
            Some(Elem::Scalar(ScalarType::I32)),
            Some(ScalarType::I32),
            &[128],
        );
        assert_eq!(r.info, info(&[1], &[1], &[1]));
    }

    #[test]
    fn compare_of_a_range_with_a_bound() {
        // arange(0, 64) < K - k*64 with K divisible by 16: constant in
        // aligned runs of 16.
        let ks = Fact {
            info: info(&[64], &[MAX_DIVISIBILITY], &[1]),
            constant: None,
        };
        let bound = Fact {
            info: info(&[1], &[16], &[64]),
            constant: None,
        };
        let lt = compare(CmpPred::Lt, &ks, &bound, Some(ScalarType::I32), &[64]);
        assert_eq!(lt.info.constancy, vec![16]);
        // `>` with the range on the left gets only the common constancy.
        let gt = compare(CmpPred::Gt, &ks, &bound, Some(ScalarType::I32), &[64]);
        assert_eq!(gt.info.constancy, vec![1]);
        // Folding.
        let one = Fact::constant(1, &[64]);
        let two = Fact::constant(2, &[64]);
        assert_eq!(
            compare(CmpPred::Lt, &one, &two, Some(ScalarType::I32), &[64]).constant,
            Some(1)
        );
    }

    #[test]
    fn mul_by_one_keeps_runs_and_by_a_stride_drops_them() {
        let range = Fact {
            info: info(&[64], &[MAX_DIVISIBILITY], &[1]),
            constant: None,
        };
        let i32t = Some(Elem::Scalar(ScalarType::I32));
        let one = Fact::constant(1, &[64]);
        let p = binary(
            BinaryOp::Mul,
            &range,
            &one,
            i32t,
            Some(ScalarType::I32),
            &[64],
        );
        assert_eq!(p.info, range.info);
        let stride = Fact {
            info: info(&[1], &[16], &[64]),
            constant: None,
        };
        let p = binary(
            BinaryOp::Mul,
            &range,
            &stride,
            i32t,
            Some(ScalarType::I32),
            &[64],
        );
        assert_eq!(p.info, info(&[1], &[16], &[1]));
    }
}
