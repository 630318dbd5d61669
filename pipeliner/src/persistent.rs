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
//! A grid over z as well (batched and split-K GEMMs: a batch or a K
//! slice a z index) walks the x * y * z tiles, z slowest, with a third
//! parameter `%tw_grid_z` (`grid_param_z`): pid z = %tile / (%tw_grid_x *
//! %tw_grid_y). Such grids are many short tiles (a 512x512 product a
//! batch), where one prologue per SM instead of one per tile counts most.
//!
//! Kernels it leaves alone, with the reason: kernels that stride over
//! programs themselves (`num_programs`), kernels that have a `grid_param` already,
//! and kernels with a loop whose bounds depend on the program id (causal
//! attention: its tiles take different times, and a fixed stride gives
//! some SMs more of the long ones than the hardware's block scheduler,
//! which starts a program wherever one finished, would).

use tawa_ir::{Axis, BinaryOp, Elem, Function, LoopAttrs, OpKind, ParamHints, ScalarType, Type};

/// The name of the parameter that receives the grid's x size.
pub const GRID_PARAM: &str = "tw_grid_x";
/// The name of the parameter that receives the grid's y size, for a
/// kernel written for a grid over x and y.
pub const GRID_PARAM_Y: &str = "tw_grid_y";
/// The name of the parameter that receives the grid's z size, for a
/// kernel written for a grid over x, y and z.
pub const GRID_PARAM_Z: &str = "tw_grid_z";

/// Makes `func` persistent (see the module docs), or says why not.
pub fn make_persistent(func: &mut Function) -> Result<(), String> {
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
    if let Some(l) = loop_bounded_by_program_id(func) {
        return Err(format!(
            "the loop at {}:{} runs a different number of iterations in each program (its \
             bounds depend on the program id, as causal attention's do): the GPU's block \
             scheduler balances such tiles better than a fixed stride over them",
            func.ops[l].loc.line, func.ops[l].loc.col
        ));
    }
    for name in [GRID_PARAM, GRID_PARAM_Y, GRID_PARAM_Z] {
        if func.params.iter().any(|p| p.name == name) {
            return Err(format!("a parameter is already named `{name}`"));
        }
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
        (Some(_), None) => {
            let x = bin(func, BinaryOp::Rem, tile, grid);
            let y = bin(func, BinaryOp::IDiv, tile, grid);
            func.set_name(x, "tile_x");
            func.set_name(y, "tile_y");
            (x, Some(y), None)
        }
        _ => (tile, None, None),
    };
    func.blocks[tiles].ops.extend_from_slice(moved);
    func.append_op(tiles, OpKind::Yield, vec![], vec![], vec![], loc);
    for pid in pids {
        func.replace_uses(pid, tile_x, &[]);
    }
    if let Some(tile_y) = tile_y {
        for pid in pids_y {
            func.replace_uses(pid, tile_y, &[]);
        }
    }
    if let Some(tile_z) = tile_z {
        for pid in pids_z {
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
    func.append_op(
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
    Ok(())
}

/// A `for` loop whose bounds or step depend on a program id, if any:
/// its tiles take different times, which a fixed stride over them
/// distributes unevenly (one SM gets the long ones).
fn loop_bounded_by_program_id(func: &Function) -> Option<tawa_ir::Op> {
    let mut from_pid: std::collections::HashSet<tawa_ir::Value> = Default::default();
    let mut found = None;
    // Program order: a value's definition is visited before its uses.
    // Block arguments (induction variables, carried values) are not
    // followed: a bound computed from one is not seen, and the kernel is
    // made persistent as before.
    func.walk(&mut |op| {
        let data = &func.ops[op];
        if found.is_some() {
            return;
        }
        if let OpKind::For(_) = data.kind {
            if data.operands[..3].iter().any(|v| from_pid.contains(v)) {
                found = Some(op);
            }
        }
        let tainted = matches!(data.kind, OpKind::ProgramId(_))
            || data.operands.iter().any(|v| from_pid.contains(v));
        if tainted && data.regions.is_empty() {
            from_pid.extend(data.results.iter().copied());
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
        assert!(err.contains("bounds depend on the program id"), "{err}");
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
}
