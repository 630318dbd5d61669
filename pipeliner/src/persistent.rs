//! `persistent`: a kernel written for a grid of one program per tile
//! becomes a persistent one that loops over the tiles.
//!
//! ```text
//! body(pid = program_id x)
//! ```
//!
//! becomes
//!
//! ```text
//! for %tile = program_id x to %tw_grid_x step num_programs x {
//!   body(pid = %tile)
//! }
//! ```
//!
//! with `%tw_grid_x` a new `i32` parameter named by the function's
//! `grid_param` attribute: the launcher passes the x size of the grid it
//! was asked for and may start fewer programs (one per SM), each of which
//! then walks the tiles in the source's own order (`GROUP_SIZE_M`
//! grouping included) with a stride of the programs started. Run on the
//! tile IR before the partitioner, whose tile-loop support makes the
//! producer run ahead into the next tile's K loop while the consumers do
//! the epilogue of the last one: that overlap, and one prologue per SM
//! instead of one per tile, is what persistence buys.
//!
//! Kernels it leaves alone, with the reason: grids over more than one
//! axis (`program_id`/`num_programs` of y or z), kernels that already
//! stride over programs themselves (`num_programs x`), and kernels that
//! have a `grid_param` already.

use tawa_ir::{Axis, Elem, Function, LoopAttrs, OpKind, ParamHints, ScalarType, Type};

/// The name of the parameter that receives the grid's x size.
pub const GRID_PARAM: &str = "tw_grid_x";

/// Makes `func` persistent (see the module docs), or says why not.
pub fn make_persistent(func: &mut Function) -> Result<(), String> {
    if func.attrs.grid_param.is_some() {
        return Err("the kernel is persistent already".into());
    }
    let mut reason = None;
    let mut pids = Vec::new();
    func.walk(&mut |op| match func.ops[op].kind {
        OpKind::ProgramId(Axis::X) => pids.push(func.ops[op].results[0]),
        OpKind::ProgramId(_) | OpKind::NumPrograms(Axis::Y | Axis::Z) => {
            reason.get_or_insert("the grid has more than one axis");
        }
        OpKind::NumPrograms(Axis::X) => {
            reason.get_or_insert("the kernel strides over programs itself (num_programs)");
        }
        _ => {}
    });
    if let Some(r) = reason {
        return Err(r.into());
    }
    if func.params.iter().any(|p| p.name == GRID_PARAM) {
        return Err(format!("a parameter is already named `{GRID_PARAM}`"));
    }
    let body = func.body;
    let ret = *func.blocks[body].ops.last().ok_or("empty kernel")?;
    if !matches!(func.ops[ret].kind, OpKind::Return) {
        return Err("internal: the body does not end in return".into());
    }
    // The tile loop is made up; what is said about it (a refusal to
    // warp-specialize, `--explain`) points at the kernel's first loop,
    // the one the source wrote and the partitioner splits.
    let loc = func.blocks[body]
        .ops
        .iter()
        .find(|&&op| matches!(func.ops[op].kind, OpKind::For(_)))
        .map_or(func.ops[ret].loc, |&op| func.ops[op].loc);
    let i32_ty = Type::Scalar(Elem::Scalar(ScalarType::I32));
    let grid = func.add_param(GRID_PARAM, i32_ty.clone(), ParamHints::default());

    let tiles = func.new_block(vec![i32_ty.clone()]);
    let tile = func.blocks[tiles].args[0];
    func.set_name(tile, "tile");
    let moved: Vec<_> = func.blocks[body].ops.drain(..).collect();
    let (moved, ret) = moved.split_at(moved.len() - 1);
    func.blocks[tiles].ops = moved.to_vec();
    func.append_op(tiles, OpKind::Yield, vec![], vec![], vec![], loc);
    for pid in pids {
        func.replace_uses(pid, tile, &[]);
    }

    let first = func.append_value(
        body,
        OpKind::ProgramId(Axis::X),
        vec![],
        i32_ty.clone(),
        loc,
    );
    let stride = func.append_value(
        body,
        OpKind::NumPrograms(Axis::X),
        vec![],
        i32_ty.clone(),
        loc,
    );
    func.append_op(
        body,
        OpKind::For(LoopAttrs::default()),
        vec![first, grid, stride],
        vec![],
        vec![tiles],
        loc,
    );
    func.blocks[body].ops.push(ret[0]);
    func.attrs.grid_param = Some(GRID_PARAM.into());
    Ok(())
}
