//! Unmasked accesses that provably start before their tensor: a load or
//! store with no mask whose first element, in program 0, lies at a negative
//! offset from the pointer parameter it is addressed from
//! (`tl.load(x_ptr + offs - 1)` with `offs` starting at 0). It reads or
//! writes memory the kernel was not given; on the GPU that is garbage or a
//! fault far from the cause, so the driver warns about it at compile time
//! instead of leaving it to `--explain` (whose TMA reason names the same
//! origin for loads).
//!
//! Proven, not guessed: only accesses that always run (in the kernel's top
//! level block, outside loops and branches) and whose address the affine
//! forms describe completely: a pointer parameter plus an offset whose only
//! atoms are program ids (all 0 in program 0, which every launch has) and
//! tile terms that are 0 at the tile's first element. Anything else (a
//! kernel argument in the offset, a wrapped index, an opaque address) is
//! left alone.

use tawa_ir::{Function, Loc, Op, OpKind, ValueDef};

use crate::affine::{self, Atom, DimTerm, Form};

/// One access found by [`unmasked_accesses_before_base`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BeforeBase {
    pub op: Op,
    pub loc: Loc,
    /// `true` for a store, `false` for a load.
    pub is_store: bool,
    /// A tile of pointers (a mask could guard it), not one pointer.
    pub is_tile: bool,
    /// The pointer parameter the address starts from.
    pub param: String,
    /// The element offset of the access's first element in program 0
    /// (negative).
    pub offset: i64,
}

/// Every unmasked top-level load and store whose first element lies before
/// the pointer parameter it is addressed from (module docs).
pub fn unmasked_accesses_before_base(func: &Function) -> Vec<BeforeBase> {
    let forms = affine::analyze(func);
    let mut found = Vec::new();
    for &op in &func.blocks[func.body].ops {
        let data = &func.ops[op];
        let is_store = match &data.kind {
            OpKind::Load {
                has_mask: false, ..
            } => false,
            OpKind::Store {
                has_mask: false, ..
            } => true,
            _ => continue,
        };
        let Some(&ptr) = data.operands.first() else {
            continue;
        };
        let Form::Ptr(form) = forms.form(ptr) else {
            continue;
        };
        let Some(param) = func.params.iter().find(|p| p.value == form.base) else {
            continue;
        };
        // Tile terms are 0 at the first element, except a wrapped index,
        // whose value there depends on its start and modulus.
        if form
            .index
            .dims
            .iter()
            .flatten()
            .any(|t| matches!(t, DimTerm::Wrapped(_)))
        {
            continue;
        }
        let Some(offset) = offset_in_program_zero(func, form.index.offset.terms()) else {
            continue;
        };
        if offset < 0 {
            found.push(BeforeBase {
                op,
                loc: data.loc,
                is_store,
                is_tile: form.index.dims.iter().any(Option::is_some),
                param: param.name.clone(),
                offset,
            });
        }
    }
    found
}

/// The value of an offset polynomial in program 0, when it depends on
/// nothing but program ids.
fn offset_in_program_zero<'a>(
    func: &Function,
    terms: impl Iterator<Item = (&'a [Atom], i64)>,
) -> Option<i64> {
    let mut value = 0i64;
    for (atoms, c) in terms {
        if atoms.is_empty() {
            value = value.checked_add(c)?;
            continue;
        }
        let all_program_ids = atoms.iter().all(|a| match a {
            Atom::Value(v) => matches!(
                func.values[*v].def,
                ValueDef::Result(def, _) if matches!(func.ops[def].kind, OpKind::ProgramId(_))
            ),
            _ => false,
        });
        if !all_program_ids {
            return None;
        }
        // A monomial of program ids is 0 in program 0.
    }
    Some(value)
}
