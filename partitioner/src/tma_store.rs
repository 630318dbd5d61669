//! `tma_store`: the tile stores the TMA inference can express as a copy
//! become what that copy is — a `desc_store` of a tensor descriptor the
//! host builds — so that the backend writes them back with a TMA store
//! (`cp.async.bulk.tensor` from shared memory) instead of one `st.global`
//! per vector, and everything between (the partitioner, the aref
//! simulator) sees the store in that form.
//!
//! A store is a TMA store when the analysis of loads, applied to its
//! pointer and mask ([`crate::tma_infer::infer_tma_stores`]), finds a
//! recipe, and that recipe is the stored tile:
//!
//! - two dimensions, both the tile's, in the tile's order: the backend
//!   stages the tile row-major, box after box (a transposed or batched
//!   store stays a pointer store);
//! - the mask bounds each dimension by a launch constant (or nothing, or
//!   a block pointer's `boundary_check`): a TMA store drops the elements
//!   outside the tensor's extents, which is exactly what the mask
//!   dropped. An index wrapped by `%` writes its overflowing rows at the
//!   start again, which clipping does not, so it is no TMA store;
//! - every extent and stride computed from the kernel's arguments, an
//!   unchecked dimension's extent as for loads
//!   ([`crate::tma_lower::unchecked_extent`]);
//! - an element type TMA moves;
//! - nothing the program runs after the store reads the tensor it writes
//!   (a TMA store completes asynchronously; `Function::read_after`: a
//!   read through another pointer argument is of another tensor); a
//!   later iteration of an enclosing tile loop is assumed not to read the
//!   tile stored, as the partitioner's run-ahead producer assumes.
//!
//! Descriptors go at the top of the body (their operands are
//! parameters); the store becomes `desc_store` of it at the recipe's
//! coordinates, computed where the store was; its pointer arithmetic is
//! left for dead-code removal. The interpreter's `desc_store` drops
//! out-of-bounds elements as TMA does, so the rewritten kernel computes
//! the same memory as the original (the aref simulator checks it).

use tawa_ir::{Function, Loc, Op, OpKind, ScalarType, Value};

use crate::tma_infer::{Extent, LoadStyle, TmaPlan, TmaRecipe};
use crate::tma_lower::{make_descriptor, materialize, over_params, unchecked_extent};
use tawa_ir::host_expr::host_descriptor;

/// Whether TMA stores elements of this type (`cuTensorMapEncodeTiled`'s
/// data types; 1-byte floats as bytes).
fn tma_element(e: ScalarType) -> bool {
    matches!(
        e,
        ScalarType::I8
            | ScalarType::F8E4M3
            | ScalarType::F8E5M2
            | ScalarType::I16
            | ScalarType::F16
            | ScalarType::BF16
            | ScalarType::I32
            | ScalarType::F32
            | ScalarType::I64
            | ScalarType::F64
    )
}

/// Which of the stores TMA can write it is to write: all but the small
/// tiles, by default.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StorePolicy {
    /// Tiles of at most this many bytes stay pointer stores, written from
    /// the registers that hold them (`tawa_ir::SMALL_STORE_BYTES` by
    /// default; 0: none).
    pub small_store_bytes: u64,
}

impl Default for StorePolicy {
    fn default() -> Self {
        StorePolicy {
            small_store_bytes: tawa_ir::SMALL_STORE_BYTES,
        }
    }
}

/// Why the store of recipe `r` does not become a TMA store under
/// `policy`, or `None` when it does (see the module docs). Each reason
/// says what would lift it.
pub fn why_not_stored(func: &Function, r: &TmaRecipe, policy: StorePolicy) -> Option<String> {
    if !matches!(func.ops[r.op].kind, OpKind::Store { .. }) {
        return Some("internal: not a store".into());
    }
    if !matches!(r.source, LoadStyle::PointerTile | LoadStyle::BlockPtr) {
        return Some("internal: a store through a descriptor is one already".into());
    }
    let tile = func.ty(func.ops[r.op].operands[1]).shape().to_vec();
    if tile.len() != 2 {
        return Some(format!(
            "the tile has {} dimension(s); TMA stores write 2-D tiles",
            tile.len()
        ));
    }
    if r.dims.len() != 2 {
        return Some(format!(
            "the copy has {} dimensions for a tile of {}; TMA stores write 2-D tiles \
             with no batch or head offset (store each batch's tile from its own base \
             pointer)",
            r.dims.len(),
            tile.len()
        ));
    }
    let bytes = func
        .ty(func.ops[r.op].operands[1])
        .data_bytes()
        .unwrap_or(u64::MAX);
    if bytes <= policy.small_store_bytes {
        return Some(format!(
            "the tile is {bytes} bytes (at most {}, --small-store-bytes): stored from the \
             registers, as a TMA store's staging and barriers take longer than so few stores",
            policy.small_store_bytes
        ));
    }
    let in_order = r
        .dims
        .iter()
        .enumerate()
        .all(|(j, d)| d.tile_dim == Some(j) && d.box_size * d.copies == tile[j]);
    if !in_order {
        return Some(
            "the tile's last dimension is not the tensor's contiguous one (a transposed \
             store); store the tile in the tensor's order"
                .into(),
        );
    }
    if !tma_element(r.elem) {
        return Some(format!("TMA does not store {} elements", r.elem));
    }
    // A later iteration of an enclosing tile loop is assumed not to read
    // the tile stored, as the partitioner's run-ahead producer assumes.
    if let Some(at) = func.read_after(r.op, r.base) {
        return Some(format!(
            "the program reads the tensor after it (at {}:{}), maybe what it writes: a TMA \
             store completes after the program has moved on",
            at.line, at.col
        ));
    }
    for (j, d) in r.dims.iter().enumerate() {
        let known = match &d.extent {
            Extent::Expr(e, _) => over_params(func, e),
            Extent::Unbounded => unchecked_extent(func, r, j).is_some(),
        };
        if !known || !over_params(func, &d.stride) {
            return Some(format!(
                "the extent or stride of dimension {j} is not known at launch; bound the \
                 store's mask by kernel arguments (`offs < N`) and pass strides as arguments"
            ));
        }
    }
    None
}

/// Rewrites the stores of `plan` (from `infer_tma_stores` on `func`)
/// that [`why_not_stored`] accepts into `desc_store`s; returns them.
pub fn lower_tma_stores(func: &mut Function, plan: &TmaPlan, policy: StorePolicy) -> Vec<Op> {
    let recipes: Vec<TmaRecipe> = plan
        .recipes()
        .filter(|r| why_not_stored(func, r, policy).is_none())
        .cloned()
        .collect();
    let mut stores = Vec::new();
    let mut prologue = Vec::new();
    for r in &recipes {
        if let Some(store) = rewrite(func, r, &mut prologue) {
            stores.push(store);
        }
    }
    let body = func.body;
    func.blocks[body].ops.splice(0..0, prologue);
    stores
}

/// Rewrites the store of `r`, appending its descriptor to `prologue`;
/// the new `desc_store`, or `None` (nothing changed) where a form cannot
/// be computed.
fn rewrite(func: &mut Function, r: &TmaRecipe, prologue: &mut Vec<Op>) -> Option<Op> {
    let data = &func.ops[r.op];
    let value = data.operands[1];
    let block = func.ty(value).shape().to_vec();
    let mut at_top = Vec::new();
    let desc = make_descriptor(func, r, block, None, &mut at_top)?;
    let mut at_store = Vec::new();
    let mut operands = vec![desc, value];
    for d in &r.dims {
        operands.push(materialize(
            func,
            &d.coord,
            Some(r.op),
            r.loc,
            &mut at_store,
        )?);
    }
    let store = func.create_op(OpKind::DescStore, operands, vec![], vec![], r.loc);
    at_store.push(store);
    let block_of = func.block_of(r.op)?;
    let at = func.blocks[block_of].ops.iter().position(|&o| o == r.op)?;
    func.blocks[block_of].ops.splice(at..=at, at_store);
    prologue.append(&mut at_top);
    Some(store)
}

/// Whether `op` is a `desc_store` of a descriptor the host builds (a
/// `make_tensor_desc` of values the host computes): the stores the
/// backend may write back with TMA.
pub fn host_descriptor_store(func: &Function, op: Op) -> bool {
    let data = &func.ops[op];
    matches!(data.kind, OpKind::DescStore) && host_descriptor(func, data.operands[0])
}

/// One decision of the pass, for `--explain`: the store's position, the
/// stored value, and `Ok` (a TMA store) or the reason it is not one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoreDecision {
    /// The store, or the `desc_store` it became.
    pub op: Op,
    pub loc: Loc,
    pub value: Value,
    pub tma: Result<(), String>,
}

/// The decision for every tile store of `func` (pointer tiles, block
/// pointers and `desc_store`s), in program order, given `plan` from
/// `infer_tma_stores`.
pub fn store_decisions(func: &Function, plan: &TmaPlan, policy: StorePolicy) -> Vec<StoreDecision> {
    let mut out = Vec::new();
    func.walk(&mut |op| {
        let data = &func.ops[op];
        let tma = match &data.kind {
            OpKind::DescStore if host_descriptor_store(func, op) => Ok(()),
            OpKind::DescStore => Err("its descriptor is made from values the host does not \
                                      have at launch; build it from the kernel's arguments"
                .to_string()),
            OpKind::Store { .. } if func.ty(data.operands[1]).is_tensor() => {
                match plan.decision(op) {
                    Some(Ok(r)) => why_not_stored(func, r, policy).map_or(Ok(()), Err),
                    Some(Err(n)) => Err(n.reason.clone()),
                    None => Err("internal: no decision".into()),
                }
            }
            _ => return,
        };
        out.push(StoreDecision {
            op,
            loc: data.loc,
            value: data.operands[1],
            tma,
        });
    });
    out
}
