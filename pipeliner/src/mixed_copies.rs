//! `mixed_copies`: in a GEMM ring's slot, one tile copied by the
//! producer's threads beside TMA's copies of the others, so that both of
//! the SM's copy paths — its load/store units and its TMA unit — feed the
//! ring. On by default where [`by_default`] finds the shape it was
//! measured faster on; `--mixed-copies` asks for it wherever a put
//! qualifies, `--no-mixed-copies` for none.
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
//! Not everywhere: of the 22 same-source GEMM kernels the twenty-third
//! session timed both ways (two rounds, the second in the reverse order),
//! the 128x256x64 kernels whose A rows are 128 bytes and whose
//! descriptors are made once, before any loop, ran level to 3% faster; a
//! 128x128 slot (the thread-copied tile half of it) 3-4% slower in the
//! GEMM with a row reduction and the subtiled epilogue (1-2% faster in
//! split-K, which the default leaves out with them), a tile of 256-byte
//! rows (weight_grad's transposed x, swap-AB's 16-row X) 0-2% slower,
//! and kernels whose descriptors are made inside the tile loop 10-14%
//! slower. Kernels given the host's descriptors ran 3-5% slower too until
//! the twenty-fourth session found why: their row stride is a 64-bit
//! parameter, by which the threads' copies recomputed their rows'
//! offsets every K step. Addressed by the stride's 32-bit value (the
//! backend checks that it is one), tutorial 09's TMA-persistent kernel
//! ran 1.01x Triton with mixed copies against 1.00x without (both of its
//! cases, two rounds), its TMA kernel 0.8-1.5% faster, `matmul_tma_host`
//! level (0.3-0.5% slower).
//! [`by_default`] keeps to the measured shape.
//!
//! [`FuncAttrs::mixed_copies`]: tawa_ir::FuncAttrs::mixed_copies
//! [`Function::thread_copied`]: tawa_ir::Function::thread_copied

use tawa_ir::{Function, Op, OpKind, MIXED_COPY_THREADS};

use crate::Schedule;

/// How the pipeline options ask for mixed copies.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum MixedCopies {
    /// `--no-mixed-copies`.
    Off,
    /// The default: where [`by_default`] allows, unless the schedule flag
    /// named (`--mma-depth`, `--slot-merge`, ...) asks for a schedule the
    /// measurements did not cover.
    Default { excluded_by: Option<&'static str> },
    /// `--mixed-copies`: wherever a put qualifies.
    Asked,
}

/// Whether `func` gets mixed copies, decided before the ring's slots are
/// merged (mixed copies keep one K step a slot); a note in `schedule`
/// where the default declines a kernel that has a qualifying put.
pub fn decide(func: &Function, mode: MixedCopies, schedule: &mut Schedule) -> bool {
    let excluded_by = match mode {
        MixedCopies::Off => return false,
        MixedCopies::Asked => return true,
        MixedCopies::Default { excluded_by } => excluded_by,
    };
    let puts = qualifying_puts(func);
    let Some(&(put, _)) = puts.first() else {
        return false;
    };
    let why = match (excluded_by, measured_shape(func, &puts)) {
        (Some(flag), _) => format!("not measured with {flag}"),
        (None, Ok(())) => return true,
        (None, Err(why)) => why,
    };
    schedule.note(
        func.ops[put].loc,
        format!("mixed copies: not by default ({why}; --mixed-copies asks for them)"),
    );
    false
}

/// The shape mixed copies were measured faster on, required of every
/// qualifying put for the default: the thread-copied tile's rows are 128
/// bytes (eight threads a row, a warp four whole lines), it is at most a
/// third of the slot, and its descriptor is the host's (all its fields
/// parameters, wherever its op sits) or one the kernel makes (from a
/// pointer tile or `tl.make_tensor_descriptor`) outside every loop around
/// the put. The module comment has the measurements; `Err` says which
/// condition a put misses.
pub fn by_default(func: &Function) -> Result<(), String> {
    let puts = qualifying_puts(func);
    if puts.is_empty() {
        return Err("no put qualifies".into());
    }
    measured_shape(func, &puts)
}

/// [`by_default`]'s conditions on `puts` (each with its tile's index).
fn measured_shape(func: &Function, puts: &[(Op, usize)]) -> Result<(), String> {
    for &(put, j) in puts {
        let bytes = |v| func.ty(v).data_bytes().unwrap_or(0);
        let values = func.put_values(put);
        let tile = values[j];
        let ty = func.ty(tile);
        let row = ty.shape().last().map_or(0, |&c| u64::from(c))
            * u64::from(ty.scalar_type().map_or(0, |s| s.byte_size()));
        if row != 128 {
            return Err(format!(
                "its tile's rows are {row} bytes, measured faster at 128"
            ));
        }
        let slot: u64 = values.iter().map(|&v| bytes(v)).sum();
        if 3 * bytes(tile) > slot {
            return Err(format!(
                "its tile is {} of the slot's {slot} bytes, measured faster at a third",
                bytes(tile)
            ));
        }
        let desc = func
            .def_op(tile)
            .and_then(|load| func.def_op(func.ops[load].operands[0]));
        let Some(desc) = desc else {
            return Err("its descriptor is not made in the kernel".into());
        };
        // The host's descriptor (every field a parameter) is the same in
        // every iteration wherever its op sits (a grid made persistent
        // wraps it in the tile loop); one the kernel makes in a loop was
        // measured slower.
        let param = |v| func.params.iter().any(|p| p.value == v);
        let hosts = func.ops[desc].operands.iter().all(|&v| param(v));
        if !hosts && inside_a_loop(func, desc) {
            return Err("its descriptor is made inside a loop, measured slower".into());
        }
    }
    Ok(())
}

/// Whether `op` lies in the body of a `for` (at any depth).
fn inside_a_loop(func: &Function, op: Op) -> bool {
    let mut at = op;
    while let Some(parent) = func.block_of(at).and_then(|b| func.blocks[b].parent) {
        if matches!(func.ops[parent].kind, OpKind::For(_)) {
            return true;
        }
        at = parent;
    }
    false
}

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
