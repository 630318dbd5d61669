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

use tawa_ir::function::ParamHints;
use tawa_ir::{ConstValue, Elem, Function, OpKind, ScalarType, Type};

/// The parameter that receives the walk's step.
pub const WALK_STEP_PARAM: &str = "tw_walk_step";

/// Makes the step of the loop through which `func` walks its own tiles
/// the parameter [`WALK_STEP_PARAM`] (module docs); returns the step the
/// source wrote, or why not.
pub fn own_walk(func: &mut Function) -> Result<u32, String> {
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
    let uses = count_uses(func, pid);
    if uses != 1 {
        return Err("the program id reaches more than the tile loop's start".into());
    }
    if tawa_ir::host_expr::host_expr(func, end).is_none() {
        return Err("the tile count is not computable on the host from the arguments".into());
    }
    let before_writes = ops[..at].iter().any(|&o| {
        let kind = &func.ops[o].kind;
        !(kind.is_pure() || matches!(kind, OpKind::Load { .. } | OpKind::DescLoad))
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

/// How many operands of the ops of `func` (its regions' too) are `v`.
fn count_uses(func: &Function, v: tawa_ir::Value) -> usize {
    let mut n = 0;
    func.walk(&mut |op| {
        n += func.ops[op].operands.iter().filter(|&&o| o == v).count();
    });
    n
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
        ] {
            let mut f = kernel(&body);
            let before = print_function(&f);
            let err = own_walk(&mut f).unwrap_err();
            assert!(err.contains(why), "{what}: {err}");
            assert_eq!(print_function(&f), before, "{what}: changed");
        }
    }
}
