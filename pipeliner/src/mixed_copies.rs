//! `mixed_copies`: in a GEMM ring's slot, one tile copied by the
//! producer's threads beside TMA's copies of the others, so that both of
//! the SM's copy paths — its load/store units and its TMA unit — feed the
//! ring (`--mixed-copies`, off by default).
//!
//! The pass only decides: it sets [`FuncAttrs::mixed_copies`] when some
//! `aref.put` of the producer (one warpgroup) writes two or more TMA
//! tiles, each a 2-D box; [`Function::thread_copied`] names the tile (the
//! smallest: A of a 128x256 GEMM) and the backend writes it. There, every
//! producer thread copies its 16-byte chunks of the box with `cp.async`
//! into the slot's swizzled layout wherever the box lies inside the
//! tensor, and thread 0 copies it with TMA (which zero-fills) where it
//! reaches past an edge — the ragged last tile or K step — so the hot
//! loop's copies carry no mask. The tile stays a `desc_load` in the IR:
//! the interpreter and the aref simulator read it as TMA would.
//!
//! Why: in a long-K GEMM the copies, not the tensor core, set the pace.
//! On the H200, matmul.py's 128x256x64 kernel at M = N = 8192, K = 16384
//! had its consumers find the next slot's copies still in flight at 98.5%
//! of their waits with TMA alone. With A copied this way (one K step a
//! slot) it ran 1.01x Triton back to back against TMA alone's 0.98x,
//! 787 TFLOP/s against 775 from an idle GPU, and 1-2% faster sustained,
//! each pair timed in the same hour on the same GPU
//! (`bench/RESULTS.md`, twenty-second session, where CUDA patched to this
//! form was measured first).
//!
//! [`FuncAttrs::mixed_copies`]: tawa_ir::FuncAttrs::mixed_copies
//! [`Function::thread_copied`]: tawa_ir::Function::thread_copied

use tawa_ir::{Function, Op, OpKind, MIXED_COPY_THREADS};

use crate::Schedule;

/// Sets `func`'s mixed copies when `asked` and some put qualifies, with
/// the decision (or why none) in `schedule`.
pub fn mixed_copies(func: &mut Function, asked: bool, schedule: &mut Schedule) {
    if !asked {
        return;
    }
    let puts = qualifying_puts(func);
    func.attrs.mixed_copies = !puts.is_empty();
    let Some(&(put, j)) = puts.first() else {
        schedule.note(
            tawa_ir::Loc::UNKNOWN,
            "mixed copies: not applied: no producer warpgroup puts two or more TMA tiles (2-D \
             boxes of a descriptor the kernel makes, no multicast, the smallest in rows of whole \
             16-byte chunks that its 128 threads share evenly) into one slot"
                .into(),
        );
        return;
    };
    let names = tawa_ir::printer::value_names(func);
    let name = |v| names.get(&v).cloned().unwrap_or_else(|| format!("{v}"));
    let values = func.put_values(put);
    let others: Vec<String> = values
        .iter()
        .enumerate()
        .filter(|&(i, _)| i != j)
        .map(|(_, &v)| format!("%{}", name(v)))
        .collect();
    schedule.note(
        func.ops[put].loc,
        format!(
            "mixed copies: the producer's threads copy %{} (cp.async, where its box lies inside \
             the tensor; TMA at the edges) while TMA copies {}",
            name(values[j]),
            others.join(", ")
        ),
    );
}

/// The puts of `func` in a producer of one warpgroup that have a tile
/// [`Function::mixed_copy_tile`] names.
fn qualifying_puts(func: &Function) -> Vec<(Op, usize)> {
    let mut found = Vec::new();
    func.walk(&mut |op| {
        let OpKind::WarpSpecialize { partitions } = &func.ops[op].kind else {
            return;
        };
        for (p, &region) in partitions.iter().zip(&func.ops[op].regions) {
            if p.num_warps * 32 != MIXED_COPY_THREADS {
                continue;
            }
            func.walk_block(region, &mut |o| {
                if matches!(func.ops[o].kind, OpKind::ArefPut) {
                    if let Some(j) = func.mixed_copy_tile(o) {
                        found.push((o, j));
                    }
                }
            });
        }
    });
    found
}
