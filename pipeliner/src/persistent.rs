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
//! A kernel written for a grid over x and y (attention: query blocks by
//! heads) walks the x * y tiles, x fastest, so that the tiles running at
//! once share their y (a head's K and V stay in L2):
//!
//! ```text
//! for %tile = program_id x to %tw_grid_x * %tw_grid_y step num_programs x {
//!   body(pid x = %tile % %tw_grid_x, pid y = %tile / %tw_grid_x)
//! }
//! ```
//!
//! with `%tw_grid_y` a second parameter (the function's `grid_param_y`);
//! the launcher then starts a one-axis grid.
//!
//! Where the tiles reuse data along both axes — a loop loads one operand
//! whose address depends on pid x and not y, and another on y and not x,
//! as a GEMM over a grid of (row block, column block) does — x fastest
//! would make the tiles running at once one thin column of the grid (132
//! of them: four columns of 32 row blocks, every row block of A and few
//! of B). The walk then goes in bands of [`BAND`] y values, y fastest
//! within a band (CUTLASS's rasterization swizzle, Triton's
//! `GROUP_SIZE_M` done by the compiler): the tiles running at once form a
//! block of 8 columns by about 16 rows, and their operands fit in L2.
//! A kernel for a grid over x alone that splits its program id into a
//! row and a column itself, row-major (`pid // tiles_n`, `pid % tiles_n`:
//! the tiles of a row run at once, every column block of B for few row
//! blocks of A), and whose loop loads one operand by the row alone and
//! another by the column alone, is walked in bands of [`BAND`] rows, rows
//! fastest within a band: the same rasterization, done on the program id
//! the source decomposes (`row_major_tiles`). The walk is a permutation
//! of the tiles (programs are independent), the rows past the last full
//! one in the source's order; a source that groups its tiles itself
//! (tutorial 03's `GROUP_SIZE_M`) decomposes its id otherwise and keeps
//! its own order.
//!
//! Grids over z (batched and split-K GEMMs) keep x fastest within an x *
//! y plane: a plane there is about one wave of tiles already, and on the
//! H100 the banded walk measured 3 to 5% slower on batched GEMMs of 512²
//! and 2048² (a 2-D GEMM of 32 x 32 tiles: 5% faster).
//!
//! A grid over z as well (batched and split-K GEMMs: a batch or a K
//! slice a z index) walks the x * y * z tiles, z slowest, with a third
//! parameter `%tw_grid_z` (`grid_param_z`): pid z = %tile / (%tw_grid_x *
//! %tw_grid_y). Such grids are many short tiles (a 512x512 product a
//! batch), where one prologue per SM instead of one per tile counts most.
//!
//! Kernels it leaves alone, with the reason: kernels that stride over
//! programs themselves (`num_programs`), kernels that have a `grid_param` already,
//! and kernels with a loop whose end or step depends on the program id (causal
//! attention: its tiles take different times, and a fixed stride gives
//! some SMs more of the long ones than the hardware's block scheduler,
//! which starts a program wherever one finished, would). A loop whose
//! start alone depends on it (split-K: program z starts at K block z and
//! strides by the number of slices) does not stop persistence: its
//! programs' trip counts differ by the spread of the starts over the
//! step, one iteration for K slices.

use std::collections::HashMap;

use tawa_ir::{
    Axis, BinaryOp, ConstValue, Elem, Function, LoopAttrs, OpKind, ParamHints, ScalarType, TileIds,
    Type, Value,
};

/// The name of the parameter that receives the grid's x size.
pub const GRID_PARAM: &str = "tw_grid_x";
/// The name of the parameter that receives the grid's y size, for a
/// kernel written for a grid over x and y.
pub const GRID_PARAM_Y: &str = "tw_grid_y";
/// The name of the parameter that receives the grid's z size, for a
/// kernel written for a grid over x, y and z.
pub const GRID_PARAM_Z: &str = "tw_grid_z";

/// How many y values a band of the walk spans where the tiles reuse data
/// along both axes (the module docs): Triton's usual `GROUP_SIZE_M`.
pub const BAND: u32 = 8;

/// The order in which a persistent kernel walks its tiles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Walk {
    /// One axis: the tiles in the source's own order.
    X,
    /// x fastest, then y (then z).
    XFastest,
    /// Bands of [`BAND`] y values, y fastest within a band, then x (then
    /// z, slowest).
    Banded,
    /// One axis whose id the kernel splits into a row and a column
    /// (`pid // tiles_n`, `pid % tiles_n`): bands of [`BAND`] rows, rows
    /// fastest within a band.
    RowBands,
}

/// A one-axis kernel's own row-major split of its program id (see the
/// module docs): the column count `n` and the top-level op of the body
/// that defines it (`None`: a parameter).
struct RowSplit {
    n: Value,
    n_def: Option<tawa_ir::Op>,
}

/// Makes `func` persistent (see the module docs) and says in which
/// order it walks the tiles, or says why not.
pub fn make_persistent(func: &mut Function) -> Result<Walk, String> {
    make_persistent_tiles(func).map(|(walk, _)| walk)
}

/// [`make_persistent`], with the tile loop and the values standing for
/// the source's program ids in it.
pub fn make_persistent_tiles(func: &mut Function) -> Result<(Walk, TileIds), String> {
    if func.attrs.grid_param.is_some() {
        return Err("the kernel is persistent already".into());
    }
    let mut reason = None;
    let mut pids = Vec::new();
    let mut pids_y = Vec::new();
    let mut pids_z = Vec::new();
    func.walk(&mut |op| match func.ops[op].kind {
        OpKind::ProgramId(Axis::X) => pids.push(func.ops[op].results[0]),
        OpKind::ProgramId(Axis::Y) => pids_y.push(func.ops[op].results[0]),
        OpKind::ProgramId(Axis::Z) => pids_z.push(func.ops[op].results[0]),
        OpKind::NumPrograms(_) => {
            reason.get_or_insert("the kernel strides over programs itself (num_programs)");
        }
        _ => {}
    });
    if let Some(r) = reason {
        return Err(r.into());
    }
    match loop_bounded_by_program_id(func) {
        Some((l, ProgramLoop::Bounded)) => {
            return Err(format!(
                "the loop at {}:{} runs a different number of iterations in each program (its \
                 end or step depends on the program id, as causal attention's do): the GPU's \
                 block scheduler balances such tiles better than a fixed stride over them",
                func.ops[l].loc.line, func.ops[l].loc.col
            ))
        }
        Some((l, ProgramLoop::TileWalk)) => {
            return Err(format!(
                "the kernel walks its tiles itself: the loop at {}:{} starts at the program id \
                 and holds the kernel's inner loop",
                func.ops[l].loc.line, func.ops[l].loc.col
            ))
        }
        None => {}
    }
    for name in [GRID_PARAM, GRID_PARAM_Y, GRID_PARAM_Z] {
        if func.params.iter().any(|p| p.name == name) {
            return Err(format!("a parameter is already named `{name}`"));
        }
    }
    let row_split = (pids_y.is_empty() && pids_z.is_empty())
        .then(|| row_major_tiles(func, &pids))
        .flatten();
    let walk = if pids_y.is_empty() && pids_z.is_empty() {
        if row_split.is_some() {
            Walk::RowBands
        } else {
            Walk::X
        }
    } else if !pids_y.is_empty() && pids_z.is_empty() && reuses_both_axes(func) {
        Walk::Banded
    } else {
        Walk::XFastest
    };
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
    // A z axis brings the y parameter too (its size is the z index's
    // stride), even where the kernel never reads its y index.
    let with_z = !pids_z.is_empty();
    let grid_y = (!pids_y.is_empty() || with_z)
        .then(|| func.add_param(GRID_PARAM_Y, i32_ty.clone(), ParamHints::default()));
    let grid_z =
        with_z.then(|| func.add_param(GRID_PARAM_Z, i32_ty.clone(), ParamHints::default()));

    let tiles = func.new_block(vec![i32_ty.clone()]);
    let tile = func.blocks[tiles].args[0];
    func.set_name(tile, "tile");
    let moved: Vec<_> = func.blocks[body].ops.drain(..).collect();
    let (moved, ret) = moved.split_at(moved.len() - 1);
    // With a y axis, the tile's coordinates lead the tile loop's body.
    let bin = |f: &mut Function, op: BinaryOp, a, b| {
        f.append_value(tiles, OpKind::Binary(op), vec![a, b], i32_ty.clone(), loc)
    };
    let (tile_x, tile_y, tile_z) = match (grid_y, grid_z) {
        (Some(gy), Some(_)) => {
            let x = bin(func, BinaryOp::Rem, tile, grid);
            let rest = bin(func, BinaryOp::IDiv, tile, grid);
            let y = bin(func, BinaryOp::Rem, rest, gy);
            let z = bin(func, BinaryOp::IDiv, rest, gy);
            func.set_name(x, "tile_x");
            func.set_name(y, "tile_y");
            func.set_name(z, "tile_z");
            (x, Some(y), Some(z))
        }
        (Some(gy), None) if walk == Walk::Banded => {
            // Band `b` holds y values [b * BAND, b * BAND + height),
            // height BAND but for the last band; within it y runs fastest.
            let band = func.append_value(
                tiles,
                OpKind::Constant(ConstValue::Int(BAND.into())),
                vec![],
                i32_ty.clone(),
                loc,
            );
            let per_band = bin(func, BinaryOp::Mul, band, grid);
            let b = bin(func, BinaryOp::IDiv, tile, per_band);
            let y0 = bin(func, BinaryOp::Mul, b, band);
            let left = bin(func, BinaryOp::Sub, gy, y0);
            let height = bin(func, BinaryOp::Min, band, left);
            let within = bin(func, BinaryOp::Rem, tile, per_band);
            let dy = bin(func, BinaryOp::Rem, within, height);
            let y = bin(func, BinaryOp::Add, y0, dy);
            let x = bin(func, BinaryOp::IDiv, within, height);
            func.set_name(height, "band_height");
            // Both are below their grid size already; the `%` says so in
            // the form the TMA inference bounds (a wrapped index is below
            // its modulus), as `tile % tw_grid_x` does.
            let y = bin(func, BinaryOp::Rem, y, gy);
            let x = bin(func, BinaryOp::Rem, x, grid);
            func.set_name(x, "tile_x");
            func.set_name(y, "tile_y");
            (x, Some(y), None)
        }
        (Some(_), None) => {
            let x = bin(func, BinaryOp::Rem, tile, grid);
            let y = bin(func, BinaryOp::IDiv, tile, grid);
            func.set_name(x, "tile_x");
            func.set_name(y, "tile_y");
            (x, Some(y), None)
        }
        _ => (tile, None, None),
    };
    let tile_x = match &row_split {
        Some(split) => {
            // The remap needs the column count: it follows the op that
            // defines it, and every use of the program id follows that.
            let cut = split
                .n_def
                .and_then(|d| moved.iter().position(|&op| op == d))
                .map_or(0, |i| i + 1);
            func.blocks[tiles].ops.extend_from_slice(&moved[..cut]);
            let x = row_bands(func, tiles, tile, grid, split.n, loc);
            func.blocks[tiles].ops.extend_from_slice(&moved[cut..]);
            x
        }
        None => {
            func.blocks[tiles].ops.extend_from_slice(moved);
            tile_x
        }
    };
    func.append_op(tiles, OpKind::Yield, vec![], vec![], vec![], loc);
    for &pid in &pids {
        func.replace_uses(pid, tile_x, &[]);
    }
    if let Some(tile_y) = tile_y {
        for &pid in &pids_y {
            func.replace_uses(pid, tile_y, &[]);
        }
    }
    if let Some(tile_z) = tile_z {
        for &pid in &pids_z {
            func.replace_uses(pid, tile_z, &[]);
        }
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
    let mul = |f: &mut Function, a, b| {
        f.append_value(
            body,
            OpKind::Binary(BinaryOp::Mul),
            vec![a, b],
            i32_ty.clone(),
            loc,
        )
    };
    let tile_count = match (grid_y, grid_z) {
        (Some(gy), Some(gz)) => {
            let xy = mul(func, grid, gy);
            mul(func, xy, gz)
        }
        (Some(gy), None) => mul(func, grid, gy),
        _ => grid,
    };
    let tile_loop = func.append_op(
        body,
        OpKind::For(LoopAttrs::default()),
        vec![first, tile_count, stride],
        vec![],
        vec![tiles],
        loc,
    );
    func.blocks[body].ops.push(ret[0]);
    func.attrs.grid_param = Some(GRID_PARAM.into());
    func.attrs.grid_param_y = grid_y.map(|_| GRID_PARAM_Y.into());
    func.attrs.grid_param_z = grid_z.map(|_| GRID_PARAM_Z.into());
    let read = |pids: &Vec<Value>, id: Option<Value>| id.filter(|_| !pids.is_empty());
    let ids = [
        read(&pids, Some(tile_x)),
        read(&pids_y, tile_y),
        read(&pids_z, tile_z),
    ];
    Ok((walk, TileIds { tile_loop, ids }))
}

/// Appends to `block` the tile that the walk's `tile`-th step visits in
/// bands of [`BAND`] rows of `n` columns (`total` tiles): within the
/// `rows = total / n` full rows, band `b` holds rows `[8b, 8b + height)`
/// and runs down each column of the band before the next column; the
/// tiles past the last full row keep their place. A permutation of
/// `[0, total)`.
fn row_bands(
    func: &mut Function,
    block: tawa_ir::Block,
    tile: Value,
    total: Value,
    n: Value,
    loc: tawa_ir::Loc,
) -> Value {
    let i32_ty = Type::Scalar(Elem::Scalar(ScalarType::I32));
    let bin = |f: &mut Function, op: BinaryOp, a, b| {
        f.append_value(block, OpKind::Binary(op), vec![a, b], i32_ty.clone(), loc)
    };
    let constant = |f: &mut Function, c: u32| {
        f.append_value(
            block,
            OpKind::Constant(ConstValue::Int(c.into())),
            vec![],
            i32_ty.clone(),
            loc,
        )
    };
    let band = constant(func, BAND);
    let one = constant(func, 1);
    let rows = bin(func, BinaryOp::IDiv, total, n);
    let full = bin(func, BinaryOp::Mul, rows, n);
    let per_band = bin(func, BinaryOp::Mul, band, n);
    let b = bin(func, BinaryOp::IDiv, tile, per_band);
    let row0 = bin(func, BinaryOp::Mul, b, band);
    let left = bin(func, BinaryOp::Sub, rows, row0);
    let height = bin(func, BinaryOp::Min, band, left);
    // Past the full rows `height` is not positive; the select below
    // drops what it computes there, but it must not divide by zero.
    let height = bin(func, BinaryOp::Max, height, one);
    let within = bin(func, BinaryOp::Rem, tile, per_band);
    let dr = bin(func, BinaryOp::Rem, within, height);
    let row = bin(func, BinaryOp::Add, row0, dr);
    let col = bin(func, BinaryOp::IDiv, within, height);
    let at_row = bin(func, BinaryOp::Mul, row, n);
    let banded = bin(func, BinaryOp::Add, at_row, col);
    let in_rows = func.append_value(
        block,
        OpKind::Cmp(tawa_ir::CmpPred::Lt),
        vec![tile, full],
        Type::Scalar(Elem::Scalar(ScalarType::I1)),
        loc,
    );
    let x = func.append_value(
        block,
        OpKind::Select,
        vec![in_rows, banded, tile],
        i32_ty.clone(),
        loc,
    );
    func.set_name(height, "band_height");
    func.set_name(x, "tile_x");
    x
}

/// The kernel's own row-major split of its one program id, where its
/// loop reuses data along both halves (see the module docs): every use
/// of the program id is `pid // n` or `pid % n` for one `n` (both
/// present) at the top level of the body, after `n`'s definition, and a
/// loop loads one operand whose address depends on `pid // n` and not
/// `pid % n` and another the other way round.
fn row_major_tiles(func: &Function, pids: &[Value]) -> Option<RowSplit> {
    let body = &func.blocks[func.body].ops;
    let (mut n, mut rows, mut cols, mut first_use) = (None, Vec::new(), Vec::new(), usize::MAX);
    for &pid in pids {
        for (op, pos) in crate::value_uses(func, pid) {
            let data = &func.ops[op];
            let at = body.iter().position(|&o| o == op)?;
            let halves = match data.kind {
                OpKind::Binary(BinaryOp::IDiv) => &mut rows,
                OpKind::Binary(BinaryOp::Rem) => &mut cols,
                _ => return None,
            };
            if pos != 0 || *n.get_or_insert(data.operands[1]) != data.operands[1] {
                return None;
            }
            halves.push(data.results[0]);
            first_use = first_use.min(at);
        }
    }
    let n = n?;
    if rows.is_empty() || cols.is_empty() || !matches!(func.ty(n), Type::Scalar(_)) {
        return None;
    }
    let n_def = match func.values[n].def {
        tawa_ir::ValueDef::Result(op, _) => {
            let at = body.iter().position(|&o| o == op)?;
            (at < first_use).then_some(Some(op))?
        }
        tawa_ir::ValueDef::Arg(block, _) => (block == func.body).then_some(None)?,
    };
    let seeds: HashMap<Value, u8> = rows
        .iter()
        .map(|&v| (v, 1))
        .chain(cols.iter().map(|&v| (v, 2)))
        .collect();
    reuses_both(func, &dependence(func, true, &seeds)).then_some(RowSplit { n, n_def })
}

/// Bits of the program-id axes a value depends on: x = 1, y = 2, z = 4.
/// With `through_loops`, a loop's induction variable takes its bounds'
/// axes, a carried value (a block pointer advanced each iteration) its
/// initial value's, and an op with regions its operands'; without, block
/// arguments and the results of ops with regions depend on none.
fn pid_axes(func: &Function, through_loops: bool) -> HashMap<Value, u8> {
    let mut seeds = HashMap::new();
    func.walk(&mut |op| {
        if let OpKind::ProgramId(axis) = func.ops[op].kind {
            let bit = match axis {
                Axis::X => 1,
                Axis::Y => 2,
                Axis::Z => 4,
            };
            seeds.insert(func.ops[op].results[0], bit);
        }
    });
    dependence(func, through_loops, &seeds)
}

/// Bits of `seeds` a value depends on (each seed value depends on its
/// own bits); `through_loops` as for [`pid_axes`].
fn dependence(
    func: &Function,
    through_loops: bool,
    seeds: &HashMap<Value, u8>,
) -> HashMap<Value, u8> {
    let mut axes: HashMap<Value, u8> = seeds.clone();
    // Program order: a value's definition is visited before its uses.
    func.walk(&mut |op| {
        let data = &func.ops[op];
        let from = |vs: &[Value]| {
            vs.iter()
                .fold(0, |m, v| m | axes.get(v).copied().unwrap_or(0))
        };
        let mut mask = from(&data.operands);
        for r in &data.results {
            mask |= seeds.get(r).copied().unwrap_or(0);
        }
        if !through_loops && !data.regions.is_empty() {
            return;
        }
        let mut args = Vec::new();
        if let (OpKind::For(_), Some(&body)) = (&data.kind, data.regions.first()) {
            let block_args = &func.blocks[body].args;
            if let Some(&iv) = block_args.first() {
                args.push((iv, from(&data.operands[..3.min(data.operands.len())])));
            }
            for (arg, init) in block_args.iter().skip(1).zip(data.operands.iter().skip(3)) {
                args.push((*arg, from(std::slice::from_ref(init))));
            }
        }
        for (arg, m) in args {
            if m != 0 {
                axes.insert(arg, m);
            }
        }
        if mask != 0 {
            for &r in &data.results {
                axes.insert(r, mask);
            }
        }
    });
    axes
}

/// Whether a loop of the kernel loads one operand whose address depends
/// on pid x and not y and another on y and not x: a GEMM's A row block
/// and B column block, shared by the tiles of a row and of a column.
fn reuses_both_axes(func: &Function) -> bool {
    reuses_both(func, &pid_axes(func, true))
}

/// Whether a loop of the kernel loads one operand whose address has bit
/// 1 of `axes` and not bit 2, and another the other way round.
fn reuses_both(func: &Function, axes: &HashMap<Value, u8>) -> bool {
    let (mut x_only, mut y_only) = (false, false);
    let mut in_loop = |block: tawa_ir::Block| {
        func.walk_block(block, &mut |op| {
            let data = &func.ops[op];
            if !matches!(data.kind, OpKind::Load { .. } | OpKind::DescLoad { .. }) {
                return;
            }
            // The address: a load's pointer, a descriptor load's
            // descriptor and coordinates (not a mask or a fill value).
            let address = match data.kind {
                OpKind::DescLoad { .. } => &data.operands[..],
                _ => &data.operands[..1],
            };
            let m = address
                .iter()
                .fold(0, |m, v| m | axes.get(v).copied().unwrap_or(0));
            x_only |= m & 3 == 1;
            y_only |= m & 3 == 2;
        });
    };
    func.walk(&mut |op| {
        if let OpKind::For(_) = func.ops[op].kind {
            for &r in &func.ops[op].regions {
                in_loop(r);
            }
        }
    });
    x_only && y_only
}

/// Why a loop over program-dependent bounds keeps one program a tile.
enum ProgramLoop {
    /// Its end or step depends on a program id: its tiles take different
    /// times, which a fixed stride over them distributes unevenly (one SM
    /// gets the long ones).
    Bounded,
    /// It starts at one and holds another loop: a persistent source's own
    /// walk over tiles (`for tile in range(pid, tiles, NUM_SMS)`).
    TileWalk,
}

/// A `for` loop whose bounds keep the kernel one program a tile, if any.
/// A loop whose start alone depends on a program id and that holds no
/// loop (a split-K slice's K loop) is let through: see the module docs.
fn loop_bounded_by_program_id(func: &Function) -> Option<(tawa_ir::Op, ProgramLoop)> {
    // Block arguments (induction variables, carried values) are not
    // followed: a bound computed from one is not seen, and the kernel is
    // made persistent as before.
    let from_pid = pid_axes(func, false);
    let mut found = None;
    func.walk(&mut |op| {
        let data = &func.ops[op];
        if found.is_some() || !matches!(data.kind, OpKind::For(_)) {
            return;
        }
        if data.operands[1..3].iter().any(|v| from_pid.contains_key(v)) {
            found = Some((op, ProgramLoop::Bounded));
        } else if from_pid.contains_key(&data.operands[0]) {
            let mut nested = false;
            for &r in &data.regions {
                func.walk_block(r, &mut |inner| {
                    nested |= matches!(func.ops[inner].kind, OpKind::For(_));
                });
            }
            if nested {
                found = Some((op, ProgramLoop::TileWalk));
            }
        }
    });
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::expect;
    use tawa_ir::{parse_function, print_function, verify_function};

    fn kernel(body: &str) -> Function {
        let text = format!(
            "tt.func @k(%p: ptr<i32>) attributes {{num_warps = 4, num_stages = 3}} {{\n{body}  return\n}}\n"
        );
        parse_function(&text).unwrap()
    }

    /// A GEMM-like tile: a loop loads p[a + k] and p[b + k], and the tile
    /// (`row`, `col`) stores `100 row + col + 1` (plus the loads, zeros)
    /// at p[1000 + row * width + col].
    fn gemm_tile(a: &str, b: &str, row: &str, col: &str, width: &str) -> String {
        format!(
            "  %c0 = constant 0 : i32\n  %c4 = constant 4 : i32\n  %c1 = constant 1 : i32\n  \
             %acc = for %k: i32 = %c0 to %c4 step %c1 iter_args(%s: i32 = %c0) -> (i32) {{\n    \
             %ak = add {a}, %k : i32\n    %pa = addptr %p, %ak : ptr<i32>\n    \
             %a = load %pa : i32\n    %bk = add {b}, %k : i32\n    \
             %pb = addptr %p, %bk : ptr<i32>\n    %b = load %pb : i32\n    \
             %ab = add %a, %b : i32\n    %s1 = add %s, %ab : i32\n    yield %s1\n  }}\n  \
             %c100 = constant 100 : i32\n  %c1000 = constant 1000 : i32\n  \
             %row = mul {row}, {width} : i32\n  %i0 = add %row, {col} : i32\n  \
             %i = add %i0, %c1000 : i32\n  %q = addptr %p, %i : ptr<i32>\n  \
             %v0 = mul {row}, %c100 : i32\n  %v1 = add %v0, {col} : i32\n  \
             %v2 = add %v1, %c1 : i32\n  %v = add %v2, %acc : i32\n  store %q, %v\n"
        )
    }

    #[test]
    fn a_grid_over_x_and_y_is_walked_x_fastest() {
        let mut f = kernel(
            "  %x = program_id x : i32\n  %y = program_id y : i32\n  %s = add %x, %y : i32\n  \
             %q = addptr %p, %s : ptr<i32>\n  store %q, %y\n",
        );
        make_persistent(&mut f).unwrap();
        verify_function(&f).unwrap();
        expect![[r#"
            tt.func @k(%p: ptr<i32>, %tw_grid_x: i32, %tw_grid_y: i32) attributes {num_warps = 4, num_stages = 3, grid_param = "tw_grid_x", grid_param_y = "tw_grid_y"} {
              %0 = program_id x : i32
              %1 = num_programs x : i32
              %2 = mul %tw_grid_x, %tw_grid_y : i32
              for %tile: i32 = %0 to %2 step %1 {
                %tile_x = rem %tile, %tw_grid_x : i32
                %tile_y = idiv %tile, %tw_grid_x : i32
                %x = program_id x : i32
                %y = program_id y : i32
                %s = add %tile_x, %tile_y : i32
                %q = addptr %p, %s : ptr<i32>
                store %q, %tile_y
                yield
              }
              return
            }
        "#]]
        .assert_eq(&print_function(&f));
        // The launch contract reads back from the text.
        let again = parse_function(&print_function(&f)).unwrap();
        assert_eq!(again.attrs.grid_param_y.as_deref(), Some(GRID_PARAM_Y));
    }

    #[test]
    fn tiles_of_different_lengths_stay_one_program_each() {
        let mut f = kernel(
            "  %x = program_id x : i32\n  %c0 = constant 0 : i32\n  %c1 = constant 1 : i32\n  \
             %hi = add %x, %c1 : i32\n  for %i: i32 = %c0 to %hi step %c1 {\n    \
             %q = addptr %p, %i : ptr<i32>\n    store %q, %x\n    yield\n  }\n",
        );
        let err = make_persistent(&mut f).unwrap_err();
        assert!(
            err.contains("end or step depends on the program id"),
            "{err}"
        );
    }

    #[test]
    fn a_grid_over_z_is_walked_z_slowest() {
        let mut f = kernel(
            "  %x = program_id x : i32\n  %z = program_id z : i32\n  %s = add %x, %z : i32\n  \
             %q = addptr %p, %s : ptr<i32>\n  store %q, %z\n",
        );
        make_persistent(&mut f).unwrap();
        verify_function(&f).unwrap();
        expect![[r#"
            tt.func @k(%p: ptr<i32>, %tw_grid_x: i32, %tw_grid_y: i32, %tw_grid_z: i32) attributes {num_warps = 4, num_stages = 3, grid_param = "tw_grid_x", grid_param_y = "tw_grid_y", grid_param_z = "tw_grid_z"} {
              %0 = program_id x : i32
              %1 = num_programs x : i32
              %2 = mul %tw_grid_x, %tw_grid_y : i32
              %3 = mul %2, %tw_grid_z : i32
              for %tile: i32 = %0 to %3 step %1 {
                %tile_x = rem %tile, %tw_grid_x : i32
                %4 = idiv %tile, %tw_grid_x : i32
                %tile_y = rem %4, %tw_grid_y : i32
                %tile_z = idiv %4, %tw_grid_y : i32
                %x = program_id x : i32
                %z = program_id z : i32
                %s = add %tile_x, %tile_z : i32
                %q = addptr %p, %s : ptr<i32>
                store %q, %tile_z
                yield
              }
              return
            }
        "#]].assert_eq(&print_function(&f));
        let again = parse_function(&print_function(&f)).unwrap();
        assert_eq!(again.attrs.grid_param_z.as_deref(), Some(GRID_PARAM_Z));
    }

    /// A GEMM's grid: the loop loads a row block (pid x) and a column
    /// block (pid y); the tiles are walked in bands of y values. Each
    /// program stores its (x, y) at p[1000 + x + 5 y].
    #[test]
    fn a_grid_whose_loop_loads_rows_by_x_and_columns_by_y_is_walked_in_bands() {
        let mut f = kernel(&format!(
            "  %x = program_id x : i32\n  %y = program_id y : i32\n  %c5 = constant 5 : i32\n{}",
            gemm_tile("%x", "%y", "%y", "%x", "%c5")
        ));
        assert_eq!(make_persistent(&mut f).unwrap(), Walk::Banded);
        verify_function(&f).unwrap();
        let text = print_function(&f);
        let head: Vec<&str> = text.lines().skip(4).take(12).map(str::trim).collect();
        expect![[r#"
            [
                "for %tile: i32 = %0 to %2 step %1 {",
                "%3 = constant 8 : i32",
                "%4 = mul %3, %tw_grid_x : i32",
                "%5 = idiv %tile, %4 : i32",
                "%6 = mul %5, %3 : i32",
                "%7 = sub %tw_grid_y, %6 : i32",
                "%band_height = min %3, %7 : i32",
                "%8 = rem %tile, %4 : i32",
                "%9 = rem %8, %band_height : i32",
                "%10 = add %6, %9 : i32",
                "%11 = idiv %8, %band_height : i32",
                "%tile_y = rem %10, %tw_grid_y : i32",
            ]
        "#]]
        .assert_debug_eq(&head);
        // Three programs walk a 5 x 11 grid (a last band of 3 y values):
        // every tile is stored once, with its own coordinates.
        use tawa_ir::interp::{run_grid, ArgValue, InterpOptions, Memory};
        let (gx, gy) = (5, 11);
        let mut mem = Memory::new();
        let buf = mem.alloc(ScalarType::I32, 1000 + gx * gy);
        let args = [
            ArgValue::Ptr(buf.base),
            ArgValue::Int(gx as i64),
            ArgValue::Int(gy as i64),
        ];
        run_grid(&f, &args, [3, 1, 1], &mut mem, &InterpOptions::default()).unwrap();
        let out = mem.read_f64(&buf);
        for y in 0..gy {
            for x in 0..gx {
                assert_eq!(
                    out[1000 + x + 5 * y],
                    (100 * y + x + 1) as f64,
                    "tile ({x}, {y})"
                );
            }
        }
    }

    /// A one-axis GEMM that splits its program id row-major itself
    /// (`pid // n`, `pid % n`), its loop loading a row block and a column
    /// block: walked in bands of rows. Each program stores its (row,
    /// column) at p[1000 + pid]; with 62 tiles of 5 columns (12 full rows
    /// and two tiles past them), three programs store every tile once.
    #[test]
    fn a_row_major_split_of_one_axis_is_walked_in_bands_of_rows() {
        let src = format!(
            "  %x = program_id x : i32\n  %n = constant 5 : i32\n  %r = idiv %x, %n : i32\n  \
             %c = rem %x, %n : i32\n{}",
            gemm_tile("%r", "%c", "%r", "%c", "%n")
        );
        let mut f = kernel(&src);
        assert_eq!(make_persistent(&mut f).unwrap(), Walk::RowBands);
        verify_function(&f).unwrap();
        assert!(print_function(&f).contains("%band_height = max"));
        use tawa_ir::interp::{run_grid, ArgValue, InterpOptions, Memory};
        let tiles = 62;
        let mut mem = Memory::new();
        let buf = mem.alloc(ScalarType::I32, 1000 + tiles);
        let args = [ArgValue::Ptr(buf.base), ArgValue::Int(tiles as i64)];
        run_grid(&f, &args, [3, 1, 1], &mut mem, &InterpOptions::default()).unwrap();
        let out = mem.read_f64(&buf);
        for t in 0..tiles {
            let (r, c) = (t / 5, t % 5);
            assert_eq!(out[1000 + t], (100 * r + c + 1) as f64, "tile {t}");
        }
        // Where a use of the program id is neither `// n` nor `% n`, or the
        // loop loads by both halves, the source's order stays.
        let mut f = kernel(&src.replace("%ak = add %r, %k", "%ak = add %x, %k"));
        assert_eq!(make_persistent(&mut f).unwrap(), Walk::X);
    }

    /// A batched GEMM's grid (a batch a z index) keeps x fastest within
    /// each x * y plane.
    #[test]
    fn a_grid_over_z_is_not_banded() {
        let mut f = kernel(
            "  %x = program_id x : i32\n  %y = program_id y : i32\n  %z = program_id z : i32\n  \
             %c0 = constant 0 : i32\n  %c4 = constant 4 : i32\n  %c1 = constant 1 : i32\n  \
             for %k: i32 = %c0 to %c4 step %c1 {\n    %ak = add %x, %k : i32\n    \
             %pa = addptr %p, %ak : ptr<i32>\n    %a = load %pa : i32\n    \
             %bk = add %y, %k : i32\n    %pb = addptr %p, %bk : ptr<i32>\n    \
             %b = load %pb : i32\n    %s = add %a, %b : i32\n    %q = addptr %pa, %z : ptr<i32>\n    \
             store %q, %s\n    yield\n  }\n",
        );
        assert_eq!(make_persistent(&mut f).unwrap(), Walk::XFastest);
    }

    /// Attention's grid: the loop's loads depend on y (the head) alone.
    #[test]
    fn a_grid_whose_loop_loads_by_y_alone_stays_x_fastest() {
        let mut f = kernel(
            "  %x = program_id x : i32\n  %y = program_id y : i32\n  %c0 = constant 0 : i32\n  \
             %c4 = constant 4 : i32\n  %c1 = constant 1 : i32\n  \
             for %k: i32 = %c0 to %c4 step %c1 {\n    %bk = add %y, %k : i32\n    \
             %pb = addptr %p, %bk : ptr<i32>\n    %b = load %pb : i32\n    \
             %q = addptr %p, %x : ptr<i32>\n    store %q, %b\n    yield\n  }\n",
        );
        assert_eq!(make_persistent(&mut f).unwrap(), Walk::XFastest);
    }

    /// Split-K: the K loop starts at the program's slice and strides by
    /// the slice count; only its start depends on the program id.
    #[test]
    fn a_loop_whose_start_alone_depends_on_the_program_id_is_made_persistent() {
        let mut f = kernel(
            "  %x = program_id x : i32\n  %z = program_id z : i32\n  %c4 = constant 4 : i32\n  \
             %c64 = constant 64 : i32\n  %lo = mul %z, %c4 : i32\n  \
             for %k: i32 = %lo to %c64 step %c4 {\n    %q = addptr %p, %k : ptr<i32>\n    \
             store %q, %x\n    yield\n  }\n",
        );
        assert_eq!(make_persistent(&mut f).unwrap(), Walk::XFastest);
        verify_function(&f).unwrap();
    }

    /// Tutorial 09's persistent kernel: a loop from the program id over
    /// tiles, the K loop inside it, is the source's own walk.
    #[test]
    fn a_kernel_that_walks_its_tiles_itself_is_left_alone() {
        let mut f = kernel(
            "  %x = program_id x : i32\n  %c0 = constant 0 : i32\n  %c4 = constant 4 : i32\n  \
             %c64 = constant 64 : i32\n  for %t: i32 = %x to %c64 step %c4 {\n    \
             for %k: i32 = %c0 to %c4 step %c4 {\n      %q = addptr %p, %k : ptr<i32>\n      \
             store %q, %t\n      yield\n    }\n    yield\n  }\n",
        );
        let err = make_persistent(&mut f).unwrap_err();
        assert!(err.contains("walks its tiles itself"), "{err}");
    }
}

/// The one loop directly in `region` (a `ws` partition of a kernel this
/// pass made persistent) that runs `for tile = program_id x to T step
/// num_programs x`: the tile loop, which the passes that pair CTAs
/// rewrite. `None` without one, or with two.
pub(crate) fn tile_loop_in(func: &Function, region: tawa_ir::Block) -> Option<tawa_ir::Op> {
    let is = |v: tawa_ir::Value, want: fn(&OpKind) -> bool| {
        func.def_op(v).is_some_and(|d| want(&func.ops[d].kind))
    };
    let mut found = func.blocks[region].ops.iter().filter(|&&o| {
        let d = &func.ops[o];
        matches!(d.kind, OpKind::For(_))
            && is(d.operands[0], |k| matches!(k, OpKind::ProgramId(Axis::X)))
            && is(d.operands[2], |k| matches!(k, OpKind::NumPrograms(Axis::X)))
    });
    let op = *found.next()?;
    found.next().is_none().then_some(op)
}

/// Whether `v`, used in `body`, can be computed before the loop owning
/// `body`: defined outside it, or by a pure op of `body` (no regions)
/// whose operands can.
pub(crate) fn hoistable(func: &Function, body: tawa_ir::Block, v: Value) -> bool {
    match func.def_op(v) {
        None => !func.blocks[body].args.contains(&v),
        Some(op) => {
            if !func.blocks[body].ops.contains(&op) {
                // Defined outside the body (or in a nested region, which a
                // value used at the body's top level cannot be).
                return true;
            }
            let data = &func.ops[op];
            data.kind.is_pure()
                && data.regions.is_empty()
                && data.operands.iter().all(|&o| hoistable(func, body, o))
        }
    }
}

/// The value of `v` (used in `body`) computed in `pre`, cloning the pure
/// ops of `body` it comes from ([`hoistable`] checked that it can).
pub(crate) fn hoist(
    func: &mut Function,
    body: tawa_ir::Block,
    v: Value,
    pre: tawa_ir::Block,
    map: &mut HashMap<Value, Value>,
) -> Value {
    if let Some(&h) = map.get(&v) {
        return h;
    }
    let Some(op) = func.def_op(v) else {
        return v;
    };
    if !func.blocks[body].ops.contains(&op) {
        return v;
    }
    for o in func.ops[op].operands.clone() {
        hoist(func, body, o, pre, map);
    }
    func.clone_op(op, pre, map);
    map[&v]
}
