//! Symbolic forms of a kernel's integer, pointer and mask values: the
//! facts the TMA inference ([`crate::tma_infer`]) reads addresses, bounds
//! and tile origins from.
//!
//! Scalars are polynomials ([`Poly`]) with integer coefficients over
//! *atoms*: SSA scalars the forms do not look into (kernel parameters,
//! program ids, the result of a `%` or `//` on scalars, a loaded value) and
//! loop iteration numbers. A tile of integers is an [`IndexForm`]: a scalar
//! offset plus, along each dimension `d`, either `coef * i_d` (the tile
//! index `i_d` times a scalar) or `coef * ((start + i_d) % modulus)` (the
//! matmul tutorial's wrapped rows). A tile of pointers is a base pointer
//! plus an index form counted in elements. A mask is a conjunction of
//! bounds `i_d < limit` on single tile indices. Block pointers and tensor
//! descriptors keep their base, shape, strides and offsets as polynomials.
//! Everything else is [`Form::Opaque`], with the reason and the op that
//! made it so, which the TMA inference passes on to the user.
//!
//! The walk is forward, in program order. A `for` loop's induction variable
//! is `lb + step * iter` where `iter` is the loop's iteration number
//! ([`Atom::Iter`]). A loop-carried integer, pointer or block pointer is
//! found in two passes over the body: the first gives the carried value a
//! placeholder ([`Atom::Carried`]) for its accumulated change and reads
//! what the body adds per iteration; when that change is the same every
//! iteration (no placeholder, nothing defined in the loop), the carried
//! value is `init + iter * change` and the second pass recomputes the body
//! with it. That is how `a_ptrs += BLOCK_K * stride_ak` keeps its affine
//! form.
//!
//! Scalar ops the forms do not model become atoms, and two ops of the same
//! kind on equal operands are one atom when the first is in scope at the
//! second (the tutorial computes `pid % tiles_per_group` twice). Integer
//! arithmetic is taken as exact: like Triton's own analyses, the forms
//! assume index arithmetic does not overflow its type.

use std::collections::BTreeMap;

use tawa_ir::printer::op_name;
use tawa_ir::{
    BinaryOp, Block, CmpPred, ConstValue, Elem, Function, Loc, Op, OpKind, ScalarType,
    SecondaryMap, Type, UnaryOp, Value, ValueDef,
};

// ------------------------------------------------------------------ atoms

/// What a polynomial is over.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub enum Atom {
    /// A scalar SSA value, in scope wherever a form that mentions it is
    /// used: a kernel parameter, a program id, an induction variable, or
    /// the result of a scalar op the forms do not model.
    Value(Value),
    /// The iteration number (0, 1, ...) of a `for` loop.
    Iter(Op),
    /// The accumulated change of loop-carried value `Value` (dimension
    /// `u32` of a block pointer's offsets) while the loop's first pass
    /// looks for its per-iteration change. Never part of a finished form.
    Carried(Value, u32),
}

/// A polynomial with integer coefficients over [`Atom`]s. Monomials are
/// sorted lists of atoms (with repetition); zero coefficients are never
/// stored, so equal polynomials compare equal.
#[derive(Clone, PartialEq, Eq, Default, Debug)]
pub struct Poly {
    terms: BTreeMap<Vec<Atom>, i64>,
}

impl Poly {
    pub fn zero() -> Poly {
        Poly::default()
    }

    pub fn constant(c: i64) -> Poly {
        let mut p = Poly::zero();
        if c != 0 {
            p.terms.insert(Vec::new(), c);
        }
        p
    }

    pub fn atom(a: Atom) -> Poly {
        let mut p = Poly::zero();
        p.terms.insert(vec![a], 1);
        p
    }

    /// `coef * Π atoms`.
    pub fn monomial(mut atoms: Vec<Atom>, coef: i64) -> Poly {
        atoms.sort();
        let mut p = Poly::zero();
        if coef != 0 {
            p.terms.insert(atoms, coef);
        }
        p
    }

    pub fn is_zero(&self) -> bool {
        self.terms.is_empty()
    }

    /// The value, when the polynomial has no atoms.
    pub fn as_constant(&self) -> Option<i64> {
        match self.terms.len() {
            0 => Some(0),
            1 => self.terms.get(&Vec::new()).copied(),
            _ => None,
        }
    }

    /// `(atoms, coefficient)` of every monomial, the constant first.
    pub fn terms(&self) -> impl Iterator<Item = (&[Atom], i64)> + '_ {
        self.terms.iter().map(|(m, &c)| (m.as_slice(), c))
    }

    /// Every atom the polynomial mentions (repeated as often as it occurs).
    pub fn atoms(&self) -> impl Iterator<Item = Atom> + '_ {
        self.terms.keys().flatten().copied()
    }

    fn add_term(&mut self, atoms: &[Atom], c: i64) -> Option<()> {
        if c == 0 {
            return Some(());
        }
        let entry = self.terms.entry(atoms.to_vec()).or_insert(0);
        *entry = entry.checked_add(c)?;
        if *entry == 0 {
            self.terms.remove(atoms);
        }
        Some(())
    }

    /// `self + other`; `None` on coefficient overflow.
    pub fn checked_add(&self, other: &Poly) -> Option<Poly> {
        let mut p = self.clone();
        for (m, c) in other.terms() {
            p.add_term(m, c)?;
        }
        Some(p)
    }

    pub fn checked_sub(&self, other: &Poly) -> Option<Poly> {
        self.checked_add(&other.checked_scale(-1)?)
    }

    pub fn checked_scale(&self, k: i64) -> Option<Poly> {
        let mut p = Poly::zero();
        for (m, c) in self.terms() {
            p.add_term(m, c.checked_mul(k)?)?;
        }
        Some(p)
    }

    pub fn checked_mul(&self, other: &Poly) -> Option<Poly> {
        let mut p = Poly::zero();
        for (a, ca) in self.terms() {
            for (b, cb) in other.terms() {
                let mut m: Vec<Atom> = a.iter().chain(b).copied().collect();
                m.sort();
                p.add_term(&m, ca.checked_mul(cb)?)?;
            }
        }
        Some(p)
    }

    /// `self / (coef * Π atoms)` when every monomial is divisible by it
    /// (its atoms contain `atoms`, its coefficient is a multiple of
    /// `coef`).
    pub fn div_exact(&self, atoms: &[Atom], coef: i64) -> Option<Poly> {
        if coef == 0 {
            return None;
        }
        let mut divisor = atoms.to_vec();
        divisor.sort();
        let mut p = Poly::zero();
        for (m, c) in self.terms() {
            if c % coef != 0 {
                return None;
            }
            p.add_term(&multiset_minus(m, &divisor)?, c / coef)?;
        }
        Some(p)
    }

    /// The one monomial of a polynomial that has exactly one.
    pub fn single_term(&self) -> Option<(&[Atom], i64)> {
        if self.terms.len() == 1 {
            self.terms().next()
        } else {
            None
        }
    }

    /// The polynomial as the IR's text would write it: `128*%pid_m + 64`,
    /// atoms named by `name`.
    pub fn render(&self, name: &dyn Fn(Atom) -> String) -> String {
        if self.is_zero() {
            return "0".into();
        }
        // Monomials with atoms first (in atom order), the constant last.
        let mut parts: Vec<(bool, String)> = Vec::new();
        let mut constant = None;
        for (m, c) in self.terms() {
            if m.is_empty() {
                constant = Some(c);
                continue;
            }
            let atoms: Vec<String> = m.iter().map(|&a| name(a)).collect();
            let body = atoms.join("*");
            let text = match c.abs() {
                1 => body,
                k => format!("{k}*{body}"),
            };
            parts.push((c < 0, text));
        }
        if let Some(c) = constant {
            parts.push((c < 0, c.unsigned_abs().to_string()));
        }
        let mut out = String::new();
        for (i, (neg, text)) in parts.iter().enumerate() {
            match (i, neg) {
                (0, true) => out.push('-'),
                (0, false) => {}
                (_, true) => out.push_str(" - "),
                (_, false) => out.push_str(" + "),
            }
            out.push_str(text);
        }
        out
    }
}

/// `m - d` for sorted multisets, if `d` is contained in `m`.
fn multiset_minus(m: &[Atom], d: &[Atom]) -> Option<Vec<Atom>> {
    let mut out = Vec::with_capacity(m.len());
    let mut j = 0;
    for &a in m {
        if j < d.len() && d[j] == a {
            j += 1;
        } else {
            out.push(a);
        }
    }
    (j == d.len()).then_some(out)
}

// ------------------------------------------------------------------ forms

/// `coef * ((start + i_d) % modulus)`: an index wrapped into `[0,
/// modulus)` (for non-negative `start + i_d`), from the `%` op at `at`;
/// or, `clamped`, `coef * where(start + i_d < modulus, start + i_d, 0)`
/// (the persistent-matmul tutorial's clamp), from the `where` at `at`.
/// Both agree with `start + i_d` below `modulus` and stay in `[0,
/// modulus)` past it, which is all a TMA copy's proof needs
/// ([`crate::wrap_proof`]).
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Wrap {
    pub coef: Poly,
    pub start: Poly,
    pub modulus: Poly,
    pub at: Loc,
    pub clamped: bool,
}

impl Wrap {
    fn same_pattern(&self, other: &Wrap) -> bool {
        self.start == other.start && self.modulus == other.modulus && self.clamped == other.clamped
    }

    /// How the index is kept in range, for messages: `wrapped modulo M`
    /// or `clamped below M`.
    pub fn how(&self) -> &'static str {
        if self.clamped {
            "clamped below"
        } else {
            "wrapped modulo"
        }
    }
}

/// How an integer tile varies along one dimension.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum DimTerm {
    /// `coef * i_d`.
    Linear(Poly),
    /// See [`Wrap`].
    Wrapped(Wrap),
}

/// An integer scalar (no dimensions) or tile: `offset + Σ_d term_d`.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct IndexForm {
    pub offset: Poly,
    /// One entry per tile dimension; `None` where the tile does not vary.
    pub dims: Vec<Option<DimTerm>>,
}

impl IndexForm {
    pub fn scalar(offset: Poly) -> IndexForm {
        IndexForm {
            offset,
            dims: Vec::new(),
        }
    }

    /// Whether every element is the same (`offset`).
    pub fn is_uniform(&self) -> bool {
        self.dims.iter().all(Option::is_none)
    }

    fn uniform(offset: Poly, rank: usize) -> IndexForm {
        IndexForm {
            offset,
            dims: vec![None; rank],
        }
    }
}

/// A pointer scalar or tile: `base + index` elements.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct PtrForm {
    /// A scalar pointer the forms do not look into: a kernel parameter, or
    /// a pointer made from an integer (loaded pointer arrays).
    pub base: Value,
    pub elem: ScalarType,
    pub index: IndexForm,
}

/// `i_dim < limit`: a bound check on one tile index, from the comparison
/// at `at`.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Bound {
    pub dim: usize,
    pub limit: Poly,
    pub at: Loc,
}

/// A mask tile that is the conjunction of `bounds` (no bounds: all true).
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct MaskForm {
    pub bounds: Vec<Bound>,
}

/// A block pointer (`tl.make_block_ptr`, moved by `tl.advance`).
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct BlockPtrForm {
    /// Scalar pointer form of the `base` argument.
    pub base: PtrForm,
    pub shape: Vec<Poly>,
    pub strides: Vec<Poly>,
    pub offsets: Vec<Poly>,
    pub order: Vec<u32>,
}

/// A tensor descriptor.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct DescForm {
    pub base: PtrForm,
    pub shape: Vec<Poly>,
    pub strides: Vec<Poly>,
    /// Made from a host `TensorDescriptor` parameter (the frontend's
    /// `X_base, X_shape0.., X_stride0..` parameters), whose constructor
    /// guarantees a unit innermost stride and 16-byte alignment.
    pub host: bool,
}

/// Why a value has no form: what the user wrote that the forms do not
/// follow, and where.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Why {
    pub reason: String,
    pub at: Loc,
}

/// The symbolic form of one value.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Form {
    Index(IndexForm),
    Ptr(PtrForm),
    Mask(MaskForm),
    BlockPtr(BlockPtrForm),
    Desc(DescForm),
    Opaque(Why),
}

impl Default for Form {
    fn default() -> Form {
        Form::Opaque(Why {
            reason: "not reached by the analysis".into(),
            at: Loc::UNKNOWN,
        })
    }
}

// ------------------------------------------------------------------ scopes

/// Where ops and values sit in the region tree, and program order: what
/// "defined inside this loop" and "in scope here" need.
pub struct Scopes {
    block_of_op: SecondaryMap<Op, Option<Block>>,
    order: SecondaryMap<Op, u32>,
}

impl Scopes {
    pub fn new(func: &Function) -> Scopes {
        let mut s = Scopes {
            block_of_op: SecondaryMap::with_default(None),
            order: SecondaryMap::with_default(u32::MAX),
        };
        let mut next = 0u32;
        fn visit(func: &Function, s: &mut Scopes, block: Block, next: &mut u32) {
            for &op in &func.blocks[block].ops {
                s.block_of_op[op] = Some(block);
                s.order[op] = *next;
                *next += 1;
                for &r in &func.ops[op].regions {
                    visit(func, s, r, next);
                }
            }
        }
        visit(func, &mut s, func.body, &mut next);
        s
    }

    pub fn block_of_op(&self, op: Op) -> Option<Block> {
        self.block_of_op[op]
    }

    /// Position of `op` in a pre-order walk of the function.
    pub fn order(&self, op: Op) -> u32 {
        self.order[op]
    }

    pub fn block_of_value(&self, func: &Function, v: Value) -> Option<Block> {
        match func.values[v].def {
            ValueDef::Arg(b, _) => Some(b),
            ValueDef::Result(op, _) => self.block_of_op(op),
        }
    }

    /// Whether `inner` is `outer` or nested (through regions) inside it.
    pub fn encloses(&self, func: &Function, outer: Block, inner: Block) -> bool {
        let mut b = inner;
        loop {
            if b == outer {
                return true;
            }
            match func.blocks[b].parent.and_then(|p| self.block_of_op(p)) {
                Some(up) => b = up,
                None => return false,
            }
        }
    }

    /// Whether `block` is inside one of `region_op`'s regions.
    pub fn inside(&self, func: &Function, region_op: Op, block: Block) -> bool {
        func.ops[region_op]
            .regions
            .iter()
            .any(|&r| self.encloses(func, r, block))
    }

    /// Whether `atom` depends on an iteration of `region_op` (defined in
    /// one of its regions, or the iteration number of it or of a loop
    /// inside it).
    pub fn varies_in(&self, func: &Function, region_op: Op, atom: Atom) -> bool {
        match atom {
            Atom::Carried(..) => true,
            Atom::Iter(l) => {
                l == region_op
                    || self
                        .block_of_op(l)
                        .is_some_and(|b| self.inside(func, region_op, b))
            }
            Atom::Value(v) => self
                .block_of_value(func, v)
                .is_some_and(|b| self.inside(func, region_op, b)),
        }
    }
}

// ------------------------------------------------------------------ result

/// The forms of every value of a function.
pub struct AffineForms {
    forms: SecondaryMap<Value, Form>,
    scopes: Scopes,
}

impl AffineForms {
    pub fn form(&self, v: Value) -> &Form {
        &self.forms[v]
    }

    pub fn scopes(&self) -> &Scopes {
        &self.scopes
    }
}

/// Computes the form of every value of `func`.
pub fn analyze(func: &Function) -> AffineForms {
    let mut a = Analyzer {
        func,
        forms: SecondaryMap::with_default(Form::default()),
        scopes: Scopes::new(func),
        canon: Vec::new(),
    };
    for param in &func.params {
        a.forms[param.value] = match func.ty(param.value) {
            Type::Scalar(Elem::Ptr(elem)) => Form::Ptr(PtrForm {
                base: param.value,
                elem: *elem,
                index: IndexForm::scalar(Poly::zero()),
            }),
            Type::Scalar(Elem::Scalar(s)) if s.is_int() => {
                Form::Index(IndexForm::scalar(Poly::atom(Atom::Value(param.value))))
            }
            _ => Form::Opaque(Why {
                reason: format!("parameter `{}` is not an integer or a pointer", param.name),
                at: Loc::UNKNOWN,
            }),
        };
    }
    a.block(func.body);
    AffineForms {
        forms: a.forms,
        scopes: a.scopes,
    }
}

// ------------------------------------------------------------------ walk

/// A scalar op already turned into an atom: later ops of the same kind on
/// equal operands reuse it where it is in scope.
struct CanonEntry {
    kind: OpKind,
    operands: Vec<Poly>,
    op: Op,
    value: Value,
}

struct Analyzer<'f> {
    func: &'f Function,
    forms: SecondaryMap<Value, Form>,
    scopes: Scopes,
    canon: Vec<CanonEntry>,
}

type Fr = Result<Form, Why>;

fn is_int_scalar(ty: &Type) -> bool {
    matches!(ty, Type::Scalar(Elem::Scalar(s)) if s.is_int())
}

fn overflow(at: Loc) -> Why {
    Why {
        reason: "index arithmetic with constants too large to follow".into(),
        at,
    }
}

impl<'f> Analyzer<'f> {
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
            OpKind::If => {
                for &r in &data.regions {
                    self.block(r);
                }
                self.opaque_results(op, "a value chosen by a dynamic `if`");
            }
            k if k.is_terminator() => {}
            _ => {
                if let Some(&r) = data.results.first() {
                    let form = match self.transfer(op) {
                        Ok(f) => f,
                        Err(why) => {
                            if is_int_scalar(func.ty(r)) {
                                let atom = self.canonical_atom(op);
                                Form::Index(IndexForm::scalar(Poly::atom(atom)))
                            } else {
                                Form::Opaque(why)
                            }
                        }
                    };
                    self.forms[r] = form;
                    for &extra in &data.results[1..] {
                        self.forms[extra] = Form::Opaque(Why {
                            reason: format!("a second result of `{}`", op_name(&data.kind)),
                            at: data.loc,
                        });
                    }
                }
                for &region in &data.regions {
                    self.block(region);
                }
            }
        }
    }

    /// Integer scalars become atoms of themselves; anything else opaque.
    fn opaque_values(&mut self, values: &[Value], reason: &str, at: Loc) {
        for &v in values {
            self.forms[v] = if is_int_scalar(self.func.ty(v)) {
                Form::Index(IndexForm::scalar(Poly::atom(Atom::Value(v))))
            } else {
                Form::Opaque(Why {
                    reason: reason.into(),
                    at,
                })
            };
        }
    }

    fn opaque_results(&mut self, op: Op, reason: &str) {
        let data = &self.func.ops[op];
        self.opaque_values(&data.results.clone(), reason, data.loc);
    }

    /// The atom for the scalar result of `op`: an earlier op of the same
    /// kind on equal operands when it is in scope here, else the result.
    fn canonical_atom(&mut self, op: Op) -> Atom {
        let func = self.func;
        let data = &func.ops[op];
        let result = data.results[0];
        let canonicalizable = data.kind.is_pure() && data.regions.is_empty();
        if !canonicalizable {
            return Atom::Value(result);
        }
        let operands: Vec<Poly> = data
            .operands
            .iter()
            .map(|&v| match &self.forms[v] {
                Form::Index(i) if i.dims.is_empty() => i.offset.clone(),
                _ => Poly::atom(Atom::Value(v)),
            })
            .collect();
        let here = self.scopes.block_of_op(op);
        let order = self.scopes.order(op);
        for e in &self.canon {
            let in_scope = match (self.scopes.block_of_op(e.op), here) {
                (Some(b), Some(h)) => {
                    self.scopes.order(e.op) < order && self.scopes.encloses(func, b, h)
                }
                _ => false,
            };
            if in_scope
                && e.kind == data.kind
                && e.operands == operands
                && func.ty(e.value) == func.ty(result)
            {
                return Atom::Value(e.value);
            }
        }
        self.canon.push(CanonEntry {
            kind: data.kind.clone(),
            operands,
            op,
            value: result,
        });
        Atom::Value(result)
    }

    // -------------------------------------------------------------- loops

    fn for_loop(&mut self, op: Op) {
        let func = self.func;
        let data = &func.ops[op];
        let Some(&body) = data.regions.first() else {
            self.opaque_results(op, "a malformed loop");
            return;
        };
        let args = func.blocks[body].args.clone();
        if data.operands.len() < 3 || args.len() != data.operands.len() - 2 {
            self.opaque_values(&args, "a malformed loop", data.loc);
            self.block(body);
            self.opaque_results(op, "a malformed loop");
            return;
        }
        // iv = lb + step * iter.
        let iv = match (
            self.scalar_poly(data.operands[0]),
            self.scalar_poly(data.operands[2]),
        ) {
            (Some(lb), Some(step)) => step
                .checked_mul(&Poly::atom(Atom::Iter(op)))
                .and_then(|s| lb.checked_add(&s)),
            _ => None,
        };
        self.forms[args[0]] = Form::Index(IndexForm::scalar(
            iv.unwrap_or_else(|| Poly::atom(Atom::Value(args[0]))),
        ));

        let carried = &args[1..];
        let inits: Vec<Form> = data.operands[3..]
            .iter()
            .map(|&v| self.forms[v].clone())
            .collect();
        // Pass 1: placeholders for the accumulated changes.
        let assumed: Vec<Option<Form>> = carried
            .iter()
            .zip(&inits)
            .map(|(&arg, init)| with_placeholder(init, arg))
            .collect();
        for (k, &arg) in carried.iter().enumerate() {
            self.forms[arg] = match &assumed[k] {
                Some(f) => f.clone(),
                None => self.carried_opaque(arg, &inits[k], data.loc),
            };
        }
        self.block(body);
        let yields = self.terminator_operands(body);
        // The per-iteration changes, then pass 2 with the closed forms.
        let finals: Vec<Form> = (0..carried.len())
            .map(|k| {
                let arg = carried[k];
                let (Some(assumed), Some(&y)) = (&assumed[k], yields.get(k)) else {
                    return self.carried_opaque(arg, &inits[k], data.loc);
                };
                let step = per_iteration_change(assumed, &self.forms[y]).filter(|step| {
                    step.iter()
                        .flat_map(Poly::atoms)
                        .all(|a| !self.scopes.varies_in(func, op, a))
                });
                match step.and_then(|s| advanced(&inits[k], &s, op)) {
                    Some(f) => f,
                    None => Form::Opaque(Why {
                        reason: format!(
                            "loop-carried `{}` does not change by the same amount every iteration",
                            self.name(arg)
                        ),
                        at: data.loc,
                    }),
                }
            })
            .collect();
        for (&arg, f) in carried.iter().zip(finals) {
            self.forms[arg] = f;
        }
        self.block(body);
        self.opaque_results(op, "a value a loop leaves behind");
    }

    fn carried_opaque(&self, arg: Value, init: &Form, at: Loc) -> Form {
        match init {
            Form::Opaque(why) => Form::Opaque(why.clone()),
            _ => Form::Opaque(Why {
                reason: format!("loop-carried `{}` is not followed", self.name(arg)),
                at,
            }),
        }
    }

    fn while_loop(&mut self, op: Op) {
        let func = self.func;
        let data = &func.ops[op];
        for &r in &data.regions {
            let args = func.blocks[r].args.clone();
            self.opaque_values(&args, "a value carried by a `while` loop", data.loc);
            self.block(r);
        }
        self.opaque_results(op, "a value a `while` loop leaves behind");
    }

    fn terminator_operands(&self, block: Block) -> Vec<Value> {
        let func = self.func;
        match func.blocks[block].ops.last() {
            Some(&last) if matches!(func.ops[last].kind, OpKind::Yield) => {
                func.ops[last].operands.clone()
            }
            _ => Vec::new(),
        }
    }

    fn name(&self, v: Value) -> String {
        self.func.values[v]
            .name
            .clone()
            .unwrap_or_else(|| format!("{v}"))
    }

    // -------------------------------------------------------------- ops

    fn scalar_poly(&self, v: Value) -> Option<Poly> {
        match &self.forms[v] {
            Form::Index(i) if i.dims.is_empty() => Some(i.offset.clone()),
            _ => None,
        }
    }

    fn index(&self, v: Value, at: Loc) -> Result<IndexForm, Why> {
        match &self.forms[v] {
            Form::Index(i) => Ok(i.clone()),
            Form::Opaque(why) => Err(why.clone()),
            _ => Err(Why {
                reason: format!("`{}` is not an integer", self.name(v)),
                at,
            }),
        }
    }

    fn mask(&self, v: Value, at: Loc) -> Result<MaskForm, Why> {
        match &self.forms[v] {
            Form::Mask(m) => Ok(m.clone()),
            Form::Opaque(why) => Err(why.clone()),
            _ => Err(Why {
                reason: format!("`{}` is not a bound check", self.name(v)),
                at,
            }),
        }
    }

    fn ptr(&self, v: Value, at: Loc) -> Result<PtrForm, Why> {
        match &self.forms[v] {
            Form::Ptr(p) => Ok(p.clone()),
            Form::Opaque(why) => Err(why.clone()),
            _ => Err(Why {
                reason: format!("`{}` is not a pointer", self.name(v)),
                at,
            }),
        }
    }

    /// The form of the (first) result of a non-region op.
    fn transfer(&mut self, op: Op) -> Fr {
        let func = self.func;
        let data = &func.ops[op];
        let at = data.loc;
        let result = data.results[0];
        let rty = func.ty(result);
        let rank = rty.shape().len();
        let not_followed = |what: &str| Why {
            reason: format!("`{}` {what}", op_name(&data.kind)),
            at,
        };
        let operand = |i: usize| -> Result<Value, Why> {
            data.operands
                .get(i)
                .copied()
                .ok_or_else(|| not_followed("is missing an operand"))
        };
        match &data.kind {
            OpKind::Constant(c) => match (c, rty.scalar_type()) {
                (ConstValue::Int(v), Some(s)) if s.is_int() && s != ScalarType::I1 => {
                    Ok(Form::Index(IndexForm::uniform(Poly::constant(*v), rank)))
                }
                (ConstValue::Bool(true), _) | (ConstValue::Int(1), Some(ScalarType::I1))
                    if rank > 0 =>
                {
                    Ok(Form::Mask(MaskForm { bounds: vec![] }))
                }
                _ => Err(not_followed("is not an index constant")),
            },
            OpKind::MakeRange { start, .. } => Ok(Form::Index(IndexForm {
                offset: Poly::constant(i64::from(*start)),
                dims: vec![Some(DimTerm::Linear(Poly::constant(1)))],
            })),
            OpKind::Splat => match self.forms[operand(0)?].clone() {
                Form::Index(i) if i.dims.is_empty() => {
                    Ok(Form::Index(IndexForm::uniform(i.offset, rank)))
                }
                Form::Ptr(p) if p.index.dims.is_empty() => Ok(Form::Ptr(PtrForm {
                    index: IndexForm::uniform(p.index.offset, rank),
                    ..p
                })),
                Form::Opaque(why) => Err(why),
                _ if rty.scalar_type() == Some(ScalarType::I1) => Err(Why {
                    reason: "the condition is one scalar for the whole tile, not a bound on a tile index".into(),
                    at,
                }),
                _ => Err(not_followed("of this value is not followed")),
            },
            OpKind::Broadcast => {
                let x = operand(0)?;
                let from = func.ty(x).shape().to_vec();
                let to = rty.shape().to_vec();
                if from.len() != to.len() {
                    return Err(not_followed("changes the rank"));
                }
                let stretched: Vec<bool> = (0..to.len()).map(|d| from[d] == 1 && to[d] != 1).collect();
                self.map_dims(x, at, |dims| {
                    // A size-1 dimension holds index 0: a linear term adds
                    // nothing; a wrapped one would be a scalar `%`.
                    let mut out = Vec::with_capacity(dims.len());
                    for (d, t) in dims.into_iter().enumerate() {
                        match t {
                            Some(DimTerm::Wrapped(_)) if stretched[d] => return None,
                            Some(DimTerm::Linear(_)) if from[d] == 1 => out.push(None),
                            t => out.push(t),
                        }
                    }
                    Some(out)
                }, |bounds| {
                    if bounds.iter().any(|b| stretched[b.dim]) {
                        None
                    } else {
                        Some(bounds)
                    }
                })
            }
            OpKind::ExpandDims { axis } => {
                let axis = *axis as usize;
                self.map_dims(operand(0)?, at, |mut dims| {
                    (axis <= dims.len()).then(|| {
                        dims.insert(axis, None);
                        dims
                    })
                }, |bounds| {
                    Some(bounds.into_iter().map(|b| Bound {
                        dim: if b.dim >= axis { b.dim + 1 } else { b.dim },
                        ..b
                    }).collect())
                })
            }
            OpKind::Trans { perm } => {
                let perm: Vec<usize> = perm.iter().map(|&p| p as usize).collect();
                self.map_dims(operand(0)?, at, |dims| {
                    perm.iter().map(|&p| dims.get(p).cloned()).collect()
                }, |bounds| {
                    bounds.into_iter().map(|b| {
                        let dim = perm.iter().position(|&p| p == b.dim)?;
                        Some(Bound { dim, ..b })
                    }).collect()
                })
            }
            OpKind::Hint { .. } => Ok(self.forms[operand(0)?].clone()),
            OpKind::Cast { .. } | OpKind::Bitcast => {
                let x = operand(0)?;
                match (func.ty(x).elem(), rty.elem(), self.forms[x].clone()) {
                    // Integer conversions keep the value (no overflow, as
                    // everywhere in the forms).
                    (Some(Elem::Scalar(a)), Some(Elem::Scalar(b)), Form::Index(i))
                        if a.is_int() && b.is_int() && matches!(data.kind, OpKind::Cast { .. }) =>
                    {
                        Ok(Form::Index(i))
                    }
                    (Some(Elem::Ptr(a)), Some(Elem::Ptr(b)), Form::Ptr(p)) if a == b => {
                        Ok(Form::Ptr(p))
                    }
                    // A pointer made from an integer: a new base.
                    (_, Some(Elem::Ptr(elem)), _) if rank == 0 => Ok(Form::Ptr(PtrForm {
                        base: result,
                        elem,
                        index: IndexForm::scalar(Poly::zero()),
                    })),
                    (_, _, Form::Opaque(why)) => Err(why),
                    _ => Err(not_followed("changes what the value means")),
                }
            }
            OpKind::AddPtr => {
                let p = self.ptr(operand(0)?, at)?;
                let off = self.index(operand(1)?, at)?;
                let index = add_index(&p.index, &off, false, at)?;
                Ok(Form::Ptr(PtrForm { index, ..p }))
            }
            OpKind::Binary(b) => {
                let (l, r) = (operand(0)?, operand(1)?);
                let elem = func.ty(l).elem();
                if rty.scalar_type() == Some(ScalarType::I1) && rank > 0 {
                    return match b {
                        BinaryOp::And => {
                            let mut m = self.mask(l, at)?;
                            m.bounds.extend(self.mask(r, at)?.bounds);
                            Ok(Form::Mask(m))
                        }
                        _ => Err(not_followed("of conditions is not a bound check")),
                    };
                }
                if !matches!(elem, Some(Elem::Scalar(s)) if s.is_int()) {
                    return Err(not_followed("is not integer index arithmetic"));
                }
                let (li, ri) = (self.index(l, at)?, self.index(r, at)?);
                binary(*b, &li, &ri, at).map(Form::Index)
            }
            OpKind::Unary(UnaryOp::Neg) if matches!(rty.scalar_type(), Some(s) if s.is_int()) => {
                let x = self.index(operand(0)?, at)?;
                scale_index(&x, &Poly::constant(-1), at).map(Form::Index)
            }
            // `where(start + i_d < M, start + i_d, 0)`: a clamped index.
            OpKind::Select if rank > 0 && matches!(rty.scalar_type(), Some(s) if s.is_int()) => {
                let cond = self.mask(operand(0)?, at)?;
                let x = self.index(operand(1)?, at)?;
                let other = self.index(operand(2)?, at)?;
                clamp(&cond, &x, &other, at).map(Form::Index)
            }
            OpKind::Cmp(pred) => {
                if rank == 0 {
                    return Err(not_followed("of scalars is not a bound on a tile index"));
                }
                let (l, r) = (operand(0)?, operand(1)?);
                match func.ty(l).scalar_type() {
                    Some(s) if s.is_signed_int() => {}
                    _ => return Err(not_followed("is not a signed integer comparison")),
                }
                let (li, ri) = (self.index(l, at)?, self.index(r, at)?);
                compare(*pred, &li, &ri, at).map(Form::Mask)
            }
            OpKind::MakeBlockPtr { order } => {
                let r = rank;
                if data.operands.len() != 1 + 3 * r {
                    return Err(not_followed("has the wrong number of operands"));
                }
                let base = self.scalar_ptr(operand(0)?, at)?;
                let polys = |from: usize| -> Result<Vec<Poly>, Why> {
                    (from..from + r).map(|i| self.scalar_index(data.operands[i], at)).collect()
                };
                Ok(Form::BlockPtr(BlockPtrForm {
                    base,
                    shape: polys(1)?,
                    strides: polys(1 + r)?,
                    offsets: polys(1 + 2 * r)?,
                    order: order.clone(),
                }))
            }
            OpKind::Advance => {
                let Form::BlockPtr(mut bp) = self.forms[operand(0)?].clone() else {
                    return Err(not_followed("of an unknown block pointer"));
                };
                if data.operands.len() != 1 + bp.offsets.len() {
                    return Err(not_followed("has the wrong number of offsets"));
                }
                for (d, &v) in data.operands[1..].iter().enumerate() {
                    let step = self.scalar_index(v, at)?;
                    bp.offsets[d] = bp.offsets[d].checked_add(&step).ok_or_else(|| overflow(at))?;
                }
                Ok(Form::BlockPtr(bp))
            }
            OpKind::MakeTensorDesc => {
                let r = rank;
                if data.operands.len() != 1 + 2 * r {
                    return Err(not_followed("has the wrong number of operands"));
                }
                let base = self.scalar_ptr(operand(0)?, at)?;
                let polys = |from: usize| -> Result<Vec<Poly>, Why> {
                    (from..from + r).map(|i| self.scalar_index(data.operands[i], at)).collect()
                };
                Ok(Form::Desc(DescForm {
                    base,
                    shape: polys(1)?,
                    strides: polys(1 + r)?,
                    host: tawa_ir::host_expr::from_host_descriptor(func, op),
                }))
            }
            OpKind::Load { .. } if rank == 0 => match rty {
                // A pointer loaded from memory: a base of its own.
                Type::Scalar(Elem::Ptr(elem)) => Ok(Form::Ptr(PtrForm {
                    base: result,
                    elem: *elem,
                    index: IndexForm::scalar(Poly::zero()),
                })),
                _ => Err(not_followed("reads a value from memory")),
            },
            _ => Err(not_followed("is not index arithmetic")),
        }
    }

    fn scalar_index(&self, v: Value, at: Loc) -> Result<Poly, Why> {
        let i = self.index(v, at)?;
        if i.dims.is_empty() {
            Ok(i.offset)
        } else {
            Err(Why {
                reason: format!("`{}` is a tile, not a scalar", self.name(v)),
                at,
            })
        }
    }

    fn scalar_ptr(&self, v: Value, at: Loc) -> Result<PtrForm, Why> {
        let p = self.ptr(v, at)?;
        if p.index.dims.is_empty() {
            Ok(p)
        } else {
            Err(Why {
                reason: format!("`{}` is a tile of pointers, not a pointer", self.name(v)),
                at,
            })
        }
    }

    /// Applies a change of dimensions to an index, pointer or mask form.
    fn map_dims(
        &self,
        x: Value,
        at: Loc,
        dims: impl Fn(Vec<Option<DimTerm>>) -> Option<Vec<Option<DimTerm>>>,
        bounds: impl Fn(Vec<Bound>) -> Option<Vec<Bound>>,
    ) -> Fr {
        let lost = || Why {
            reason: "a wrapped index or a bound check is broadcast along a new dimension".into(),
            at,
        };
        match self.forms[x].clone() {
            Form::Index(i) => Ok(Form::Index(IndexForm {
                dims: dims(i.dims).ok_or_else(lost)?,
                offset: i.offset,
            })),
            Form::Ptr(p) => Ok(Form::Ptr(PtrForm {
                index: IndexForm {
                    dims: dims(p.index.dims).ok_or_else(lost)?,
                    offset: p.index.offset,
                },
                ..p
            })),
            Form::Mask(m) => Ok(Form::Mask(MaskForm {
                bounds: bounds(m.bounds).ok_or_else(lost)?,
            })),
            Form::Opaque(why) => Err(why),
            _ => Err(Why {
                reason: "a block pointer or descriptor where a tile was expected".into(),
                at,
            }),
        }
    }
}

// ------------------------------------------------------------------ rules

fn add_term(a: &Option<DimTerm>, b: &Option<DimTerm>, at: Loc) -> Result<Option<DimTerm>, Why> {
    let o = || overflow(at);
    Ok(match (a, b) {
        (None, t) | (t, None) => t.clone(),
        (Some(DimTerm::Linear(x)), Some(DimTerm::Linear(y))) => {
            let s = x.checked_add(y).ok_or_else(o)?;
            (!s.is_zero()).then_some(DimTerm::Linear(s))
        }
        (Some(DimTerm::Wrapped(x)), Some(DimTerm::Wrapped(y))) if x.same_pattern(y) => {
            let coef = x.coef.checked_add(&y.coef).ok_or_else(o)?;
            (!coef.is_zero()).then(|| DimTerm::Wrapped(Wrap { coef, ..x.clone() }))
        }
        _ => {
            return Err(Why {
                reason: "adds a wrapped index (`%`) to a different index along the same dimension"
                    .into(),
                at,
            })
        }
    })
}

fn scale_term(t: &Option<DimTerm>, k: &Poly, at: Loc) -> Result<Option<DimTerm>, Why> {
    let o = || overflow(at);
    Ok(match t {
        None => None,
        Some(DimTerm::Linear(c)) => {
            let c = c.checked_mul(k).ok_or_else(o)?;
            (!c.is_zero()).then_some(DimTerm::Linear(c))
        }
        Some(DimTerm::Wrapped(w)) => {
            let coef = w.coef.checked_mul(k).ok_or_else(o)?;
            (!coef.is_zero()).then(|| DimTerm::Wrapped(Wrap { coef, ..w.clone() }))
        }
    })
}

fn add_index(a: &IndexForm, b: &IndexForm, negate_b: bool, at: Loc) -> Result<IndexForm, Why> {
    if a.dims.len() != b.dims.len() {
        return Err(Why {
            reason: "adds values of different ranks".into(),
            at,
        });
    }
    let b = if negate_b {
        scale_index(b, &Poly::constant(-1), at)?
    } else {
        b.clone()
    };
    let offset = a
        .offset
        .checked_add(&b.offset)
        .ok_or_else(|| overflow(at))?;
    let dims = a
        .dims
        .iter()
        .zip(&b.dims)
        .map(|(x, y)| add_term(x, y, at))
        .collect::<Result<_, _>>()?;
    Ok(IndexForm { offset, dims })
}

fn scale_index(a: &IndexForm, k: &Poly, at: Loc) -> Result<IndexForm, Why> {
    Ok(IndexForm {
        offset: a.offset.checked_mul(k).ok_or_else(|| overflow(at))?,
        dims: a
            .dims
            .iter()
            .map(|t| scale_term(t, k, at))
            .collect::<Result<_, _>>()?,
    })
}

fn binary(op: BinaryOp, l: &IndexForm, r: &IndexForm, at: Loc) -> Result<IndexForm, Why> {
    let not_affine = |what: &str| Why {
        reason: format!("`{}` {what}", op.name()),
        at,
    };
    match op {
        BinaryOp::Add => add_index(l, r, false, at),
        BinaryOp::Sub => add_index(l, r, true, at),
        BinaryOp::Mul => {
            if r.is_uniform() && r.dims.len() == l.dims.len() {
                scale_index(l, &r.offset, at)
            } else if l.is_uniform() && r.dims.len() == l.dims.len() {
                scale_index(r, &l.offset, at)
            } else {
                Err(not_affine("multiplies two tiles that both vary"))
            }
        }
        // `(start + arange) % M`: one dimension counting up by one.
        BinaryOp::Rem if !l.dims.is_empty() && r.is_uniform() => {
            let varying: Vec<usize> = (0..l.dims.len()).filter(|&d| l.dims[d].is_some()).collect();
            match varying.as_slice() {
                [d] if matches!(&l.dims[*d], Some(DimTerm::Linear(c)) if c.as_constant() == Some(1)) =>
                {
                    let mut dims = vec![None; l.dims.len()];
                    dims[*d] = Some(DimTerm::Wrapped(Wrap {
                        coef: Poly::constant(1),
                        start: l.offset.clone(),
                        modulus: r.offset.clone(),
                        at,
                        clamped: false,
                    }));
                    Ok(IndexForm {
                        offset: Poly::zero(),
                        dims,
                    })
                }
                _ => Err(not_affine(
                    "is taken of something other than a range plus an offset",
                )),
            }
        }
        _ if l.dims.is_empty() => {
            // Scalars: the caller turns the result into an atom.
            Err(not_affine("of scalars is an atom"))
        }
        _ => Err(not_affine("on tiles is not affine")),
    }
}

/// `where(cond, x, other)` as a clamped [`Wrap`]: `x` counts up by one
/// along one dimension from `start`, `cond` is exactly the bound `x < M`
/// on it, and `other` is 0, a row every non-empty tensor has.
fn clamp(cond: &MaskForm, x: &IndexForm, other: &IndexForm, at: Loc) -> Result<IndexForm, Why> {
    let why = |reason: &str| Why {
        reason: format!("`where` {reason}"),
        at,
    };
    if !other.is_uniform() || other.offset.as_constant() != Some(0) {
        return Err(why("clamps to something other than index 0"));
    }
    let varying: Vec<usize> = (0..x.dims.len()).filter(|&d| x.dims[d].is_some()).collect();
    let [d] = varying.as_slice() else {
        return Err(why(
            "picks between indices that are not a range plus an offset",
        ));
    };
    if !matches!(&x.dims[*d], Some(DimTerm::Linear(c)) if c.as_constant() == Some(1)) {
        return Err(why(
            "picks between indices that are not a range plus an offset",
        ));
    }
    let [bound] = cond.bounds.as_slice() else {
        return Err(why("is not on one bound check of the index it picks"));
    };
    if bound.dim != *d {
        return Err(why("checks another dimension than the index it picks"));
    }
    let modulus = bound
        .limit
        .checked_add(&x.offset)
        .ok_or_else(|| overflow(at))?;
    let mut dims = vec![None; x.dims.len()];
    dims[*d] = Some(DimTerm::Wrapped(Wrap {
        coef: Poly::constant(1),
        start: x.offset.clone(),
        modulus,
        at,
        clamped: true,
    }));
    Ok(IndexForm {
        offset: Poly::zero(),
        dims,
    })
}

/// `l <pred> r` as a bound on one tile index, `i_d < limit`.
fn compare(pred: CmpPred, l: &IndexForm, r: &IndexForm, at: Loc) -> Result<MaskForm, Why> {
    let why = |reason: &str| Why {
        reason: reason.into(),
        at,
    };
    // Every predicate as `e < 0` (integers: `e <= 0` is `e - 1 < 0`).
    let (e, strict) = match pred {
        CmpPred::Lt => (add_index(l, r, true, at)?, true),
        CmpPred::Le => (add_index(l, r, true, at)?, false),
        CmpPred::Gt => (add_index(r, l, true, at)?, true),
        CmpPred::Ge => (add_index(r, l, true, at)?, false),
        CmpPred::Eq | CmpPred::Ne => return Err(why("`==`/`!=` is not a bound check")),
    };
    let offset = if strict {
        e.offset.clone()
    } else {
        e.offset
            .checked_sub(&Poly::constant(1))
            .ok_or_else(|| overflow(at))?
    };
    let varying: Vec<usize> = (0..e.dims.len()).filter(|&d| e.dims[d].is_some()).collect();
    match varying.as_slice() {
        [] => Err(why(
            "the comparison is the same for the whole tile, not a bound on a tile index",
        )),
        [d] => match &e.dims[*d] {
            Some(DimTerm::Linear(c)) if c.as_constant() == Some(1) => Ok(MaskForm {
                bounds: vec![Bound {
                    dim: *d,
                    limit: offset.checked_scale(-1).ok_or_else(|| overflow(at))?,
                    at,
                }],
            }),
            Some(DimTerm::Linear(c)) if c.as_constant() == Some(-1) => Err(why(
                "the comparison is a lower bound; only `offs < bound` becomes a tensor extent",
            )),
            Some(DimTerm::Wrapped(_)) => Err(why("the comparison checks a wrapped (`%`) index")),
            _ => Err(why(
                "the comparison checks a scaled index, not the index itself",
            )),
        },
        _ => Err(why("the comparison combines indices of several dimensions")),
    }
}

// ------------------------------------------------------------------ loops

/// The form a loop-carried value has in the loop's first pass: its initial
/// form plus a placeholder for the accumulated change. `None` for values
/// the forms do not carry (floats, masks, descriptors).
fn with_placeholder(init: &Form, arg: Value) -> Option<Form> {
    let delta = |d: u32| Poly::atom(Atom::Carried(arg, d));
    match init {
        Form::Index(i) => Some(Form::Index(IndexForm {
            offset: i.offset.checked_add(&delta(0))?,
            dims: i.dims.clone(),
        })),
        Form::Ptr(p) => Some(Form::Ptr(PtrForm {
            index: IndexForm {
                offset: p.index.offset.checked_add(&delta(0))?,
                dims: p.index.dims.clone(),
            },
            ..p.clone()
        })),
        Form::BlockPtr(b) => Some(Form::BlockPtr(BlockPtrForm {
            offsets: b
                .offsets
                .iter()
                .enumerate()
                .map(|(d, o)| o.checked_add(&delta(d as u32)))
                .collect::<Option<_>>()?,
            ..b.clone()
        })),
        _ => None,
    }
}

/// What one iteration adds to a carried value (one polynomial for integers
/// and pointers, one per dimension for block pointers), when the yielded
/// form is the assumed one plus scalars.
fn per_iteration_change(assumed: &Form, yielded: &Form) -> Option<Vec<Poly>> {
    match (assumed, yielded) {
        (Form::Index(a), Form::Index(y)) if a.dims == y.dims => {
            Some(vec![y.offset.checked_sub(&a.offset)?])
        }
        (Form::Ptr(a), Form::Ptr(y))
            if a.base == y.base && a.elem == y.elem && a.index.dims == y.index.dims =>
        {
            Some(vec![y.index.offset.checked_sub(&a.index.offset)?])
        }
        (Form::BlockPtr(a), Form::BlockPtr(y))
            if a.base == y.base && a.shape == y.shape && a.strides == y.strides =>
        {
            a.offsets
                .iter()
                .zip(&y.offsets)
                .map(|(a, y)| y.checked_sub(a))
                .collect()
        }
        _ => None,
    }
}

/// `init + iter(loop) * step`.
fn advanced(init: &Form, step: &[Poly], loop_op: Op) -> Option<Form> {
    let iter = Poly::atom(Atom::Iter(loop_op));
    let moved = |p: &Poly, s: &Poly| p.checked_add(&s.checked_mul(&iter)?);
    match init {
        Form::Index(i) => Some(Form::Index(IndexForm {
            offset: moved(&i.offset, step.first()?)?,
            dims: i.dims.clone(),
        })),
        Form::Ptr(p) => Some(Form::Ptr(PtrForm {
            index: IndexForm {
                offset: moved(&p.index.offset, step.first()?)?,
                dims: p.index.dims.clone(),
            },
            ..p.clone()
        })),
        Form::BlockPtr(b) if step.len() == b.offsets.len() => Some(Form::BlockPtr(BlockPtrForm {
            offsets: b
                .offsets
                .iter()
                .zip(step)
                .map(|(o, s)| moved(o, s))
                .collect::<Option<_>>()?,
            ..b.clone()
        })),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tawa_ir::EntityRef;

    fn a(i: usize) -> Atom {
        Atom::Value(Value::new(i))
    }

    #[test]
    fn polynomials_cancel_and_divide() {
        let x = Poly::atom(a(1));
        let y = Poly::atom(a(2));
        let p = x
            .checked_scale(128)
            .unwrap()
            .checked_mul(&y)
            .unwrap()
            .checked_add(&Poly::constant(64))
            .unwrap();
        assert_eq!(p.checked_sub(&p).unwrap(), Poly::zero());
        // (128*x*y + 64) / (64*y) is not exact; (128*x*y) / (64*y) = 2x.
        assert_eq!(p.div_exact(&[a(2)], 64), None);
        let q = x.checked_scale(128).unwrap().checked_mul(&y).unwrap();
        assert_eq!(q.div_exact(&[a(2)], 64), Some(x.checked_scale(2).unwrap()));
        assert_eq!(Poly::constant(7).as_constant(), Some(7));
        assert_eq!(x.as_constant(), None);
        let names = |atom: Atom| match atom {
            Atom::Value(v) => format!("%{}", v.index()),
            _ => "?".into(),
        };
        assert_eq!(p.render(&names), "128*%1*%2 + 64");
        let n = Poly::constant(3).checked_sub(&x).unwrap();
        assert_eq!(n.render(&names), "-%1 + 3");
        assert_eq!(Poly::zero().render(&names), "0");
    }

    #[test]
    fn overflowing_coefficients_are_refused() {
        let big = Poly::constant(i64::MAX);
        assert_eq!(big.checked_add(&Poly::constant(1)), None);
        assert_eq!(big.checked_scale(2), None);
    }

    #[test]
    fn a_bound_check_becomes_a_limit_on_the_index() {
        let at = Loc::new(1, 1);
        // (s + i) < M  ->  i < M - s.
        let s = Poly::atom(a(1));
        let m = Poly::atom(a(2));
        let offs = IndexForm {
            offset: s.clone(),
            dims: vec![Some(DimTerm::Linear(Poly::constant(1)))],
        };
        let bound = IndexForm::uniform(m.clone(), 1);
        let mask = compare(CmpPred::Lt, &offs, &bound, at).unwrap();
        assert_eq!(mask.bounds.len(), 1);
        assert_eq!(mask.bounds[0].limit, m.checked_sub(&s).unwrap());
        // M > s + i is the same bound; s + i <= M is i < M - s + 1.
        assert_eq!(compare(CmpPred::Gt, &bound, &offs, at).unwrap(), mask);
        let le = compare(CmpPred::Le, &offs, &bound, at).unwrap();
        assert_eq!(
            le.bounds[0].limit,
            m.checked_sub(&s)
                .unwrap()
                .checked_add(&Poly::constant(1))
                .unwrap()
        );
        // A lower bound and a scaled index are refused.
        assert!(compare(CmpPred::Ge, &offs, &bound, at).is_err());
        let scaled = scale_index(&offs, &Poly::constant(2), at).unwrap();
        assert!(compare(CmpPred::Lt, &scaled, &bound, at).is_err());
    }
}
