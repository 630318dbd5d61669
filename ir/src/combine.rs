//! `combine`: algebraic rewrites that every backend wants before layouts
//! are chosen (Triton's `triton-combine`).
//!
//! - **`x + dot(a, b, 0)` → `dot(a, b, x)`.** `acc += tl.dot(a, b)` is
//!   written as a dot into a fresh zero accumulator followed by an add; on
//!   tensor cores that keeps two accumulators live (2 × 128 registers per
//!   thread for a 128×256 tile over 8 warps) and adds them every iteration.
//!   Accumulating into `x` directly is what `tl.dot(a, b, acc)` means and
//!   what Triton rewrites it to. Applies when the dot's only use is the add,
//!   its accumulator is a zero constant (or a splat of one), and `x` is
//!   available at the dot (a block argument of a block enclosing it, or
//!   defined earlier in its block).

use std::collections::HashMap;

use crate::function::{Block, Function, Op, Value, ValueDef};
use crate::ops::{BinaryOp, ConstValue, OpKind};

/// Runs the rewrites; returns how many fired.
pub fn combine(func: &mut Function) -> usize {
    let mut uses: HashMap<Value, usize> = HashMap::new();
    let mut parent: HashMap<Op, Block> = HashMap::new();
    let mut adds = Vec::new();
    for (block, data) in func.blocks.iter() {
        for &op in &data.ops {
            parent.insert(op, block);
        }
    }
    func.walk(&mut |op| {
        for &v in &func.ops[op].operands {
            *uses.entry(v).or_default() += 1;
        }
        if matches!(func.ops[op].kind, OpKind::Binary(BinaryOp::Add)) {
            adds.push(op);
        }
    });
    let mut fired = 0;
    for add in adds {
        let operands = func.ops[add].operands.clone();
        for (dot_side, x) in [(1, operands[0]), (0, operands[1])] {
            let d = operands[dot_side];
            let Some(dot) = func.def_op(d) else { continue };
            if !matches!(func.ops[dot].kind, OpKind::Dot { .. })
                || uses.get(&d) != Some(&1)
                || func.ty(x) != func.ty(d)
                || !is_zero(func, func.ops[dot].operands[2])
                || !available_at(func, &parent, x, dot)
            {
                continue;
            }
            let sum = func.ops[add].results[0];
            func.ops[dot].operands[2] = x;
            replace_uses(func, sum, d);
            let block = parent[&add];
            func.blocks[block].ops.retain(|&o| o != add);
            // The dot's value now stands for the sum: keep the source name.
            if func.values[d].name.is_none() {
                func.values[d].name = func.values[sum].name.clone();
            }
            fired += 1;
            break;
        }
    }
    fired
}

/// A constant zero tile, directly or as a splat of a zero scalar.
fn is_zero(func: &Function, v: Value) -> bool {
    let Some(op) = func.def_op(v) else {
        return false;
    };
    match &func.ops[op].kind {
        OpKind::Constant(c) => {
            matches!(c, ConstValue::Float(f) if *f == 0.0) || matches!(c, ConstValue::Int(0))
        }
        OpKind::Splat => is_zero(func, func.ops[op].operands[0]),
        _ => false,
    }
}

/// Whether `x` is defined at `op`: a block argument of a block enclosing
/// `op`, or the result of an op earlier in one of those blocks.
fn available_at(func: &Function, parent: &HashMap<Op, Block>, x: Value, op: Op) -> bool {
    let mut at = op;
    loop {
        let Some(&block) = parent.get(&at) else {
            return false;
        };
        match func.values[x].def {
            ValueDef::Arg(b, _) if b == block => return true,
            ValueDef::Result(def, _) => {
                let ops = &func.blocks[block].ops;
                if let (Some(i), Some(j)) = (
                    ops.iter().position(|&o| o == def),
                    ops.iter().position(|&o| o == at),
                ) {
                    return i < j;
                }
            }
            _ => {}
        }
        match func.blocks[block].parent {
            Some(p) => at = p,
            None => return false,
        }
    }
}

fn replace_uses(func: &mut Function, from: Value, to: Value) {
    for (_, data) in func.ops.iter_mut() {
        for v in &mut data.operands {
            if *v == from {
                *v = to;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{parse_function, print_function, verify_function};
    use expect_test::expect;

    fn run(src: &str) -> (usize, String) {
        let mut f = parse_function(src).unwrap();
        let n = combine(&mut f);
        verify_function(&f).unwrap();
        (n, print_function(&f))
    }

    const ACC_PLUS_DOT: &str = r#"
tt.func @k(%a: tensor<64x16xf16>, %b: tensor<16x64xf16>, %n: i32) attributes {num_warps = 4, num_stages = 2} {
  %acc = constant 0.0 : tensor<64x64xf32>
  %lo = constant 0 : i32
  %one = constant 1 : i32
  %out = for %i: i32 = %lo to %n step %one iter_args(%acc_2: tensor<64x64xf32> = %acc) -> (tensor<64x64xf32>) {
    %z = constant 0.0 : f32
    %zs = splat %z : f32 -> tensor<64x64xf32>
    %d = dot %a, %b, %zs : tensor<64x64xf32>
    %acc_3 = add %acc_2, %d : tensor<64x64xf32>
    yield %acc_3
  }
  return
}
"#;

    #[test]
    fn acc_plus_dot_accumulates_in_the_dot() {
        let (n, text) = run(ACC_PLUS_DOT);
        assert_eq!(n, 1);
        expect![[r#"
            tt.func @k(%a: tensor<64x16xf16>, %b: tensor<16x64xf16>, %n: i32) attributes {num_warps = 4, num_stages = 2} {
              %acc = constant 0.0 : tensor<64x64xf32>
              %lo = constant 0 : i32
              %one = constant 1 : i32
              %out = for %i: i32 = %lo to %n step %one iter_args(%acc_2: tensor<64x64xf32> = %acc) -> (tensor<64x64xf32>) {
                %z = constant 0.0 : f32
                %zs = splat %z : f32 -> tensor<64x64xf32>
                %d = dot %a, %b, %acc_2 : tensor<64x64xf32>
                yield %d
              }
              return
            }
        "#]]
        .assert_eq(&text);
    }

    #[test]
    fn dot_with_a_second_use_is_left_alone() {
        let src = ACC_PLUS_DOT.replace(
            "yield %acc_3",
            "%s = add %acc_3, %d : tensor<64x64xf32>\n    yield %s",
        );
        let (n, _) = run(&src);
        assert_eq!(n, 0);
    }

    #[test]
    fn nonzero_accumulator_is_left_alone() {
        let src = ACC_PLUS_DOT.replace("%z = constant 0.0 : f32", "%z = constant 1.0 : f32");
        let (n, _) = run(&src);
        assert_eq!(n, 0);
    }

    #[test]
    fn addend_defined_after_the_dot_is_left_alone() {
        let src = ACC_PLUS_DOT.replace(
            "%acc_3 = add %acc_2, %d",
            "%late = add %acc_2, %acc_2 : tensor<64x64xf32>\n    %acc_3 = add %late, %d",
        );
        let (n, text) = run(&src);
        assert_eq!(n, 0, "{text}");
    }
}
