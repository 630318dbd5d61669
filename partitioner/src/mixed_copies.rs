//! `mixed_copies`: one operand of a GEMM's `dot` copied by the
//! producer's threads (`cp.async`, the [`producer_copy`] path) although
//! TMA could copy it, while TMA keeps copying the other, so that both of
//! the SM's copy paths — its load/store units and its TMA unit — feed the
//! ring. Off unless `--mixed-copies` asks for it.
//!
//! Why it was tried: in a long-K GEMM the copies, not the tensor core,
//! set the pace. On the H200, matmul.py's 128x256x64 kernel at M = N =
//! 8192, K = 16384 had its consumers find the next slot's copies still
//! in flight at 98.5% of their waits, with the producer itself waiting
//! for free slots: the bytes arrived at the rate they were consumed,
//! whatever the ring's depth or the grain of its handovers.
//!
//! Why it is off: with TMA for B and the producer's 128 threads for A
//! (and [`copy_split`] taking the mask out of the copies' loop) the
//! kernel ran 1.01x Triton at K = 16384 against 0.98x with TMA alone in
//! the same-source runs, but its own speed was no higher (718-723
//! TFLOP/s against 717-726): Triton and cuBLAS, timed right after it,
//! ran 3% slower than beside TMA alone, the power draw of the mixed
//! kernel lowering the capped clocks of its neighbours. From an idle GPU
//! before each call (`same_source.py --cooldown-ms`) it ran 776 TFLOP/s
//! against TMA alone's 784 (`bench/RESULTS.md`, nineteenth session).
//!
//! The pass only turns the chosen load's TMA decision into a refusal
//! (with the reason `--explain` prints); the partitioner's producer
//! copies then take the load as they take any load TMA refuses, and the
//! ring keeps one K step a slot (`slot_merge` merges TMA copies only).
//! It applies where a loop's one `dot` reads two TMA copies of pointer
//! tiles; the producer's threads copy the smaller operand (`a` on a tie),
//! where its pointers are proven to run in aligned 16-byte chunks.
//!
//! [`producer_copy`]: crate::producer_copy
//! [`copy_split`]: crate::copy_split

use tawa_ir::{Function, Op, OpKind, Value};

use crate::producer_copy::{self, ProducerCopy};
use crate::tma_infer::{LoadStyle, TmaPlan};

/// How a mixed copy's TMA refusal starts (`--explain`'s `not TMA: ...`).
const REASON: &str = "mixed copies: the producer's threads copy it";

/// A load the producer's threads are to copy beside TMA.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MixedCopy {
    /// The producer copy the load becomes (whole 16-byte chunks).
    pub copy: ProducerCopy,
    /// The `dot`'s other operand's load, which TMA keeps copying.
    pub tma_op: Op,
}

/// The load of `func` whose TMA copy the producer's threads are to
/// replace, or why there is none.
pub fn choose(func: &Function, plan: &TmaPlan) -> Result<MixedCopy, String> {
    let mut dots = Vec::new();
    func.walk(&mut |op| {
        if matches!(func.ops[op].kind, OpKind::Dot { .. }) && in_for_body(func, op) {
            dots.push(op);
        }
    });
    let fed: Vec<(Op, Op)> = dots
        .iter()
        .filter_map(|&dot| {
            let operand = |i: usize| tma_pointer_load(func, plan, func.ops[dot].operands[i]);
            Some((operand(0)?, operand(1)?))
        })
        .collect();
    let (a, b) = match fed.as_slice() {
        [one] => *one,
        [] => {
            return Err("no `tl.dot` in a loop reads two TMA copies of pointer tiles".to_string())
        }
        more => {
            return Err(format!(
                "{} `tl.dot`s in loops read TMA copies; mixed copies are for a GEMM's one",
                more.len()
            ))
        }
    };
    let (a_bytes, b_bytes) = (load_bytes(func, a), load_bytes(func, b));
    let (copied, by_tma) = if b_bytes < a_bytes { (b, a) } else { (a, b) };
    // The producer copy it would become: whole 16-byte chunks, proven.
    let mut refused = plan.clone();
    refused.refuse(|r| r.op == copied, REASON);
    let copy = producer_copy::producer_copies(func, &refused)
        .into_iter()
        .find(|c| c.op == copied && c.proven_bytes == c.chunk_bytes)
        .ok_or_else(|| {
            "the smaller operand's pointers are not proven to run in aligned 16-byte chunks, \
             which the producer's threads would copy by elements"
                .to_string()
        })?;
    Ok(MixedCopy {
        copy,
        tma_op: by_tma,
    })
}

/// Turns `choice`'s TMA decision in `plan` (of `func`) into a refusal
/// that says why, naming the operand TMA keeps copying.
pub fn apply(func: &Function, plan: &mut TmaPlan, choice: &MixedCopy) {
    let tma_value = func.ops[choice.tma_op].results[0];
    let tma_name = tawa_ir::printer::value_names(func)
        .remove(&tma_value)
        .unwrap_or_else(|| tma_value.to_string());
    plan.refuse(
        |r| r.op == choice.copy.op,
        &format!(
            "{REASON} while TMA copies %{tma_name}, so that the SM's load units and its TMA \
             unit share the ring's bytes"
        ),
    );
}

/// The `load` of a pointer tile defining `v`, when TMA copies it.
fn tma_pointer_load(func: &Function, plan: &TmaPlan, v: Value) -> Option<Op> {
    let op = func.def_op(v)?;
    if !matches!(func.ops[op].kind, OpKind::Load { .. }) {
        return None;
    }
    let recipe = plan.recipe(op)?;
    (recipe.source == LoadStyle::PointerTile && func.ty(v).shape().len() == 2).then_some(op)
}

fn load_bytes(func: &Function, load: Op) -> u64 {
    let ty = func.ty(func.ops[load].results[0]);
    let elems: u64 = ty.shape().iter().map(|&d| u64::from(d)).product();
    elems * u64::from(ty.scalar_type().map_or(0, |s| s.byte_size()))
}

/// Whether `op` sits directly in the body of a `for` loop.
fn in_for_body(func: &Function, op: Op) -> bool {
    func.ops.iter().any(|(_, data)| {
        matches!(data.kind, OpKind::For(_))
            && data
                .regions
                .first()
                .is_some_and(|&body| func.blocks[body].ops.contains(&op))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use tawa_ir::parse_function;

    /// matmul.py's kernel reduced to its loop: a 128x64 `a` and a 64x256
    /// `b` of f16, both TMA copies.
    const GEMM: &str = r#"
tt.func @k(%a_ptr: ptr<f16> {divisibility = 16}, %b_ptr: ptr<f16> {divisibility = 16}, %c_ptr: ptr<f32> {divisibility = 16}, %K: i32 {divisibility = 16}, %sa: i32 {divisibility = 16}, %sb: i32 {divisibility = 16}) attributes {num_warps = WARPS} {
  %rm = make_range {start = 0, end = 128} : tensor<128xi32>
  %rn = make_range {start = 0, end = BN} : tensor<BNxi32>
  %rk = make_range {start = 0, end = 64} : tensor<64xi32>
  %0 = expand_dims %rm {axis = 1} : tensor<128xi32> -> tensor<128x1xi32>
  %1 = splat %sa : i32 -> tensor<128x1xi32>
  %2 = mul %0, %1 : tensor<128x1xi32>
  %3 = splat %a_ptr : ptr<f16> -> tensor<128x1xptr<f16>>
  %4 = addptr %3, %2 : tensor<128x1xptr<f16>>
  %5 = broadcast %4 : tensor<128x1xptr<f16>> -> tensor<128x64xptr<f16>>
  %6 = expand_dims %rk {axis = 0} : tensor<64xi32> -> tensor<1x64xi32>
  %7 = broadcast %6 : tensor<1x64xi32> -> tensor<128x64xi32>
  %a_ptrs = addptr %5, %7 : tensor<128x64xptr<f16>>
  %8 = expand_dims %rk {axis = 1} : tensor<64xi32> -> tensor<64x1xi32>
  %9 = splat %sb : i32 -> tensor<64x1xi32>
  %10 = mul %8, %9 : tensor<64x1xi32>
  %11 = splat %b_ptr : ptr<f16> -> tensor<64x1xptr<f16>>
  %12 = addptr %11, %10 : tensor<64x1xptr<f16>>
  %13 = broadcast %12 : tensor<64x1xptr<f16>> -> tensor<64xBNxptr<f16>>
  %14 = expand_dims %rn {axis = 0} : tensor<BNxi32> -> tensor<1xBNxi32>
  %15 = broadcast %14 : tensor<1xBNxi32> -> tensor<64xBNxi32>
  %b_ptrs = addptr %13, %15 : tensor<64xBNxptr<f16>>
  %z = constant 0.0 : f32
  %acc = splat %z : f32 -> tensor<128xBNxf32>
  %c0 = constant 0 : i32
  %c1 = constant 1 : i32
  %n = constant 64 : i32
  %kt = idiv %K, %n : i32
  %r, %pa, %pb = for %i: i32 = %c0 to %kt step %c1 iter_args(%acc1: tensor<128xBNxf32> = %acc, %pa1: tensor<128x64xptr<f16>> = %a_ptrs, %pb1: tensor<64xBNxptr<f16>> = %b_ptrs) -> (tensor<128xBNxf32>, tensor<128x64xptr<f16>>, tensor<64xBNxptr<f16>>) {
    %a = load %pa1 : tensor<128x64xf16>
    %b = load %pb1 : tensor<64xBNxf16>
    %acc2 = dot %a, %b, %acc1 : tensor<128xBNxf32>
    %s = splat %n : i32 -> tensor<128x64xi32>
    %pa2 = addptr %pa1, %s : tensor<128x64xptr<f16>>
    %sbk = mul %n, %sb : i32
    %t = splat %sbk : i32 -> tensor<64xBNxi32>
    %pb2 = addptr %pb1, %t : tensor<64xBNxptr<f16>>
    yield %acc2, %pa2, %pb2
  }
  return
}
"#;

    fn gemm(warps: u32, bn: u32) -> Function {
        let text = GEMM
            .replace("WARPS", &warps.to_string())
            .replace("BN", &bn.to_string());
        parse_function(&text).expect("parses")
    }

    fn decide(func: &Function) -> Result<MixedCopy, String> {
        let axis = tawa_ir::axis_info::analyze(func);
        let plan = crate::infer_tma(func, &axis);
        choose(func, &plan)
    }

    fn loaded(func: &Function, choice: &MixedCopy) -> String {
        let r = func.ops[choice.copy.op].results[0];
        tawa_ir::printer::value_names(func)[&r].clone()
    }

    #[test]
    fn the_producer_copies_the_smaller_operand() {
        for warps in [4, 8] {
            let func = gemm(warps, 256);
            let choice = decide(&func).expect("mixed");
            assert_eq!(loaded(&func, &choice), "a");
        }
        // A tie: `a`.
        let func = gemm(8, 128);
        assert_eq!(loaded(&func, &decide(&func).unwrap()), "a");
    }

    #[test]
    fn a_dot_reading_anything_else_is_left_to_tma() {
        // `b` through a `trans`: no `dot` reads two TMA copies directly.
        let text = GEMM
            .replace("WARPS", "8")
            .replace("BN", "256")
            .replace(
                "%acc2 = dot %a, %b, %acc1 : tensor<128x256xf32>",
                "%bb = add %b, %b : tensor<64x256xf16>\n    %acc2 = dot %a, %bb, %acc1 : tensor<128x256xf32>",
            );
        let func = parse_function(&text).expect("parses");
        let why = decide(&func).unwrap_err();
        assert!(
            why.contains("no `tl.dot` in a loop reads two TMA copies"),
            "{why}"
        );
    }

    #[test]
    fn the_refusal_names_the_operand_tma_keeps() {
        let func = gemm(8, 256);
        let axis = tawa_ir::axis_info::analyze(&func);
        let mut plan = crate::infer_tma(&func, &axis);
        let choice = choose(&func, &plan).unwrap();
        apply(&func, &mut plan, &choice);
        let Some(Err(not)) = plan.decision(choice.copy.op) else {
            panic!("refused");
        };
        assert!(not
            .reason
            .starts_with("mixed copies: the producer's threads copy it while TMA copies %b"));
        assert!(plan.recipe(choice.tma_op).is_some());
    }
}
