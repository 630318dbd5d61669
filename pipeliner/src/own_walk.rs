//! `own_walk`: a kernel that walks its tiles itself, with its step made a
//! launch parameter, so that the launcher may start fewer programs.
//!
//! A persistent source (tutorial 09's, `persistent_matmul.py`) is launched
//! on `C = NUM_SMS` programs, each walking tiles `pid, pid + C, ...`:
//!
//! ```text
//! %pid = program_id x                     %pid = program_id x
//! for %t = %pid to %T step %C {     =>     for %t = %pid to %T step %tw_walk_step {
//!   ... one tile, from %t alone ...          ... the same ...
//! }                                        }
//! ```
//!
//! The launcher passes `C` and starts the grid asked for, so the kernel
//! runs as written; but for a launch of exactly `C` programs it may start
//! `n < C` and pass `n`: program `p` then walks `p, p + n, ...`, and the
//! `n` programs together walk every tile of `[0, T)` once, as the `C`
//! did. It starts as few as walk the tiles in as many waves
//! (`codegen::wave_balanced`, with `T` evaluated on the host): 512 tiles
//! on 132 SMs take 4 waves on 128 programs too, and each wave's tiles then
//! follow the tile order in step (the tenth session measured the plain
//! grid's launch 1.6% faster so at 4096^3 on the H100).
//!
//! That is the same computation only where a tile's work depends on the
//! tile alone: the program id reaches nothing but the loop's start, the
//! loop carries nothing from one tile to the next, nothing before it
//! writes memory and nothing follows it, and the kernel never reads its
//! program count. The tile count `T` must be an integer the host can
//! compute (`tawa_ir::host_expr`), for the launcher to count waves.
//!
//! One carried value is allowed, because tutorial 09 writes it: a second
//! tile counter in lockstep with the loop's, for the epilogue,
//!
//! ```text
//! tile_id_c = start_pid - NUM_SMS
//! for tile_id in range(start_pid, num_tiles, NUM_SMS):
//!     ...
//!     tile_id_c += NUM_SMS
//! ```
//!
//! A value that starts at `pid + a` (`a` a constant) and grows by the
//! loop's constant step each iteration is `t + a` at the start of
//! iteration `t`, whatever the step; so it is first rewritten as that and
//! dropped from the loop (`dce`), which leaves a walk that carries nothing.

use tawa_ir::function::ParamHints;
use tawa_ir::{BinaryOp, ConstValue, Elem, Function, Op, OpKind, ScalarType, Type, Value};

/// The parameter that receives the walk's step.
pub const WALK_STEP_PARAM: &str = "tw_walk_step";

/// Makes the step of the loop through which `func` walks its own tiles
/// the parameter [`WALK_STEP_PARAM`] (module docs); returns the step the
/// source wrote, or why not (leaving `func` unchanged).
pub fn own_walk(func: &mut Function) -> Result<u32, String> {
    let mut walked = func.clone();
    let asked = walk_by_parameter(&mut walked)?;
    *func = walked;
    Ok(asked)
}

fn walk_by_parameter(func: &mut Function) -> Result<u32, String> {
    if func.attrs.grid_param.is_some() || func.attrs.walk_step.is_some() {
        return Err("the kernel's launch contract walks its tiles already".into());
    }
    if func.params.iter().any(|p| p.name == WALK_STEP_PARAM) {
        return Err(format!("a parameter is already named `{WALK_STEP_PARAM}`"));
    }
    let mut pids = Vec::new();
    let mut counts = false;
    func.walk(&mut |op| match func.ops[op].kind {
        OpKind::ProgramId(_) => pids.push(op),
        OpKind::NumPrograms(_) => counts = true,
        _ => {}
    });
    if counts {
        return Err("the kernel reads its program count".into());
    }
    let [pid_op] = pids.as_slice() else {
        return Err("the kernel reads its program id more than once, or along y or z".into());
    };
    if !matches!(func.ops[*pid_op].kind, OpKind::ProgramId(tawa_ir::Axis::X)) {
        return Err("the kernel reads its program id along y or z".into());
    }
    let pid = func.ops[*pid_op].results[0];
    let body = func.body;
    let ops = func.blocks[body].ops.clone();
    let Some(at) = ops.iter().position(|&o| {
        matches!(func.ops[o].kind, OpKind::For(_)) && func.ops[o].operands[0] == pid
    }) else {
        return Err("no loop of the kernel's body starts at the program id".into());
    };
    let the_loop = ops[at];
    if drop_lockstep_counters(func, the_loop, pid) {
        tawa_ir::dce::eliminate_dead_code(func);
    }
    let ops = func.blocks[body].ops.clone();
    let at = ops
        .iter()
        .position(|&o| o == the_loop)
        .expect("the tile loop stays");
    let data = &func.ops[the_loop];
    if data.operands.len() != 3 || !data.results.is_empty() {
        return Err("the tile loop carries values from one tile to the next".into());
    }
    let (end, step) = (data.operands[1], data.operands[2]);
    let i32_ty = Type::Scalar(Elem::Scalar(ScalarType::I32));
    if func.ty(step) != &i32_ty {
        return Err("the tile loop's step is not an i32".into());
    }
    let asked = func
        .def_op(step)
        .and_then(|d| match func.ops[d].kind {
            OpKind::Constant(ConstValue::Int(c)) => u32::try_from(c).ok().filter(|&c| c > 0),
            _ => None,
        })
        .ok_or("the tile loop's step is not a positive constant")?;
    let uses = crate::value_uses(func, pid).len();
    if uses != 1 {
        return Err("the program id reaches more than the tile loop's start".into());
    }
    if tawa_ir::host_expr::host_expr(func, end).is_none() {
        return Err("the tile count is not computable on the host from the arguments".into());
    }
    let before_writes = ops[..at].iter().any(|&o| {
        let kind = &func.ops[o].kind;
        !(kind.is_pure() || matches!(kind, OpKind::Load { .. } | OpKind::DescLoad { .. }))
    });
    if before_writes {
        return Err("the kernel writes memory before its tile loop".into());
    }
    if !ops[at + 1..]
        .iter()
        .all(|&o| matches!(func.ops[o].kind, OpKind::Return))
    {
        return Err("the kernel does more after its tile loop".into());
    }
    let param = func.add_param(WALK_STEP_PARAM, i32_ty, ParamHints::default());
    func.ops[the_loop].operands[2] = param;
    func.attrs.walk_step = Some((WALK_STEP_PARAM.into(), asked));
    Ok(asked)
}

/// Rewrites each value `the_loop` carries that starts at `pid + a` and
/// grows by the loop's constant step as `t + a` from the loop's induction
/// variable `t` (module docs), leaving the carried value unused for `dce`;
/// returns whether any was.
fn drop_lockstep_counters(func: &mut Function, the_loop: Op, pid: Value) -> bool {
    let data = &func.ops[the_loop];
    let Some(step) = crate::const_int(func, data.operands[2]) else {
        return false;
    };
    let body = data.regions[0];
    let (iv, args) = (
        func.blocks[body].args[0],
        func.blocks[body].args[1..].to_vec(),
    );
    let Some(&yield_op) = func.blocks[body].ops.last() else {
        return false;
    };
    let mut rewritten = false;
    for (j, &arg) in args.iter().enumerate() {
        let data = &func.ops[the_loop];
        let (init, result) = (data.operands[3 + j], data.results[j]);
        let next = func.ops[yield_op].operands[j];
        let Some(offset) = pid_plus_constant(func, init, pid) else {
            continue;
        };
        let grows_by_step = func.def_op(next).is_some_and(|d| {
            let d = &func.ops[d];
            matches!(d.kind, OpKind::Binary(BinaryOp::Add))
                && matches!(d.operands[..], [x, c] | [c, x]
                    if x == arg && crate::const_int(func, c) == Some(step))
        });
        if !grows_by_step
            || !crate::value_uses(func, result).is_empty()
            || func.ty(arg) != func.ty(iv)
        {
            continue;
        }
        let counter = if offset == 0 {
            iv
        } else {
            let (ty, loc) = (func.ty(iv).clone(), func.ops[the_loop].loc);
            let a = OpKind::Constant(ConstValue::Int(offset));
            let a = func.insert_value(body, 0, a, vec![], ty.clone(), loc);
            func.insert_value(body, 1, OpKind::Binary(BinaryOp::Add), vec![iv, a], ty, loc)
        };
        if let Some(name) = func.values[arg].name.clone() {
            func.set_name(counter, name);
        }
        func.replace_uses(arg, counter, &[]);
        rewritten = true;
    }
    rewritten
}

/// `a` where `v` is `pid`, `pid + a` or `pid - c` (`a = -c`) with a
/// constant `a` or `c`.
fn pid_plus_constant(func: &Function, v: Value, pid: Value) -> Option<i64> {
    if v == pid {
        return Some(0);
    }
    let d = &func.ops[func.def_op(v)?];
    match (&d.kind, &d.operands[..]) {
        (OpKind::Binary(BinaryOp::Add), &[x, c] | &[c, x]) if x == pid => crate::const_int(func, c),
        (OpKind::Binary(BinaryOp::Sub), &[x, c]) if x == pid => {
            crate::const_int(func, c)?.checked_neg()
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tawa_ir::{parse_function, print_function, verify_function};

    fn kernel(body: &str) -> Function {
        let text = format!(
            "tt.func @k(%p: ptr<i32>, %n: i32) attributes {{num_warps = 4, num_stages = 3}} \
             {{\n{body}  return\n}}\n"
        );
        parse_function(&text).unwrap()
    }

    /// Tiles `pid, pid + 4, ...` of `n`, a K loop in each: p[t] = t.
    const WALK: &str = "  %x = program_id x : i32\n  %c0 = constant 0 : i32\n  \
         %c1 = constant 1 : i32\n  %c4 = constant 4 : i32\n  \
         for %t: i32 = %x to %n step %c4 {\n    \
         for %k: i32 = %c0 to %c1 step %c1 {\n      %q = addptr %p, %t : ptr<i32>\n      \
         store %q, %t\n      yield\n    }\n    yield\n  }\n";

    #[test]
    fn the_walk_steps_by_a_parameter() {
        let mut f = kernel(WALK);
        assert_eq!(own_walk(&mut f), Ok(4));
        verify_function(&f).unwrap();
        let text = print_function(&f);
        assert!(
            text.contains("step %tw_walk_step")
                && text.contains("walk_step = \"tw_walk_step\", walk_asked = 4"),
            "{text}"
        );
        // The attributes round-trip through the text.
        assert_eq!(print_function(&parse_function(&text).unwrap()), text);
    }

    /// Tutorial 09's second tile counter: `c = pid - 4` carried and
    /// advanced by 4 is `t - 4` at the start of tile `t`.
    const LOCKSTEP: &str = "  %x = program_id x : i32\n  %c0 = constant 0 : i32\n  \
         %c1 = constant 1 : i32\n  %c4 = constant 4 : i32\n  %c = sub %x, %c4 : i32\n  \
         %cl = for %t: i32 = %x to %n step %c4 iter_args(%ci: i32 = %c) -> (i32) {\n    \
         %cn = add %ci, %c4 : i32\n    %q = addptr %p, %cn : ptr<i32>\n    \
         store %q, %t\n    yield %cn\n  }\n";

    #[test]
    fn a_counter_in_lockstep_becomes_the_tile() {
        let mut f = kernel(LOCKSTEP);
        assert_eq!(own_walk(&mut f), Ok(4));
        verify_function(&f).unwrap();
        let text = print_function(&f);
        assert!(text.contains("step %tw_walk_step {"), "{text}");
        assert!(!text.contains("iter_args"), "{text}");
        // The counter reads `t + (-4)`, then adds 4.
        assert!(text.contains("constant -4 : i32"), "{text}");
        // On the CPU, 3 programs stepping by 3 store what the source's
        // 4 programs store: p[t] = t for each of the 10 tiles.
        use tawa_ir::interp::{run_grid, ArgValue, InterpOptions, Memory};
        let tiles = 10;
        for (func, programs) in [(kernel(LOCKSTEP), 4), (f, 3)] {
            let mut mem = Memory::new();
            let buf = mem.alloc(ScalarType::I32, tiles);
            let mut args = vec![ArgValue::Ptr(buf.base), ArgValue::Int(tiles as i64)];
            if func.params.len() == 3 {
                args.push(ArgValue::Int(programs));
            }
            let grid = [programs as u32, 1, 1];
            run_grid(&func, &args, grid, &mut mem, &InterpOptions::default()).unwrap();
            let want: Vec<f64> = (0..tiles).map(|t| t as f64).collect();
            assert_eq!(mem.read_f64(&buf), want, "{programs} programs");
        }
    }

    #[test]
    fn walks_that_depend_on_more_than_the_tile_stay() {
        for (what, body, why) in [
            (
                "the program id used in the body",
                WALK.replace("store %q, %t", "store %q, %x"),
                "more than the tile loop's start",
            ),
            (
                "a store before the loop",
                format!("  %y = constant 7 : i32\n  store %p, %y\n{WALK}"),
                "writes memory before",
            ),
            (
                "a step read from an argument",
                WALK.replace("step %c4 {\n    for", "step %n {\n    for"),
                "not a positive constant",
            ),
            (
                "the program count",
                format!("  %np = num_programs x : i32\n{WALK}"),
                "program count",
            ),
            (
                "a counter not in lockstep with the tiles",
                LOCKSTEP.replace("%cn = add %ci, %c4", "%cn = add %ci, %c1"),
                "carries values",
            ),
            (
                "a counter that does not start at the program id",
                LOCKSTEP.replace("%c = sub %x, %c4", "%c = sub %n, %c4"),
                "carries values",
            ),
        ] {
            let mut f = kernel(&body);
            let before = print_function(&f);
            let err = own_walk(&mut f).unwrap_err();
            assert!(err.contains(why), "{what}: {err}");
            assert_eq!(print_function(&f), before, "{what}: changed");
        }
    }
}
