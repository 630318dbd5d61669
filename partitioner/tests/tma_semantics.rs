//! The file-test kernels' recipes, checked by meaning: each kernel runs on
//! the interpreter as written and with its TMA loads replaced by the
//! descriptor loads their recipes describe (`support/descriptor_rewrite.rs`),
//! on the same random inputs and ragged sizes; every output byte must be
//! equal. The examples get the same check in the root package
//! (`tests/tma_recipes.rs`); these kernels cover what the examples do not
//! (block pointers one row high, a batched block pointer, loop-carried
//! offsets with a non-zero start, an offset carried by a `while` loop,
//! wrapped rows stored through a block pointer, a transposed box). The
//! library's `tma_lower` pass gets the same check on them.

#[path = "support/descriptor_rewrite.rs"]
mod descriptor_rewrite;

#[path = "support/file_kernel.rs"]
mod file_kernel;

use tawa_ir::interp::{run_grid, ArgValue, Buffer, InterpOptions, Memory};
use tawa_ir::{axis_info, eliminate_dead_code, verify_function, Function, ScalarType};
use tawa_partitioner::affine::Poly;
use tawa_partitioner::{infer_tma, lower_tma_loads};

/// One kernel argument of a run.
enum Arg {
    /// A buffer of `len` elements, random unless `output` (then zeros).
    Buffer {
        elem: ScalarType,
        len: usize,
        output: bool,
    },
    Int(i64),
}

fn kernel(file: &str) -> Function {
    file_kernel::kernel("tma_infer", file)
}

/// Deterministic inputs in [-2, 2) on a coarse grid, exact in fp16 and i8.
fn inputs(len: usize, seed: u64) -> Vec<f64> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            ((x >> 40) % 64) as f64 / 16.0 - 2.0
        })
        .collect()
}

/// Runs `func` on fresh memory; the bytes of every buffer afterwards.
fn run(func: &Function, args: &[Arg], grid: [u32; 3]) -> Vec<Vec<f64>> {
    let mut mem = Memory::new();
    let mut values = Vec::new();
    let mut buffers: Vec<Buffer> = Vec::new();
    for (i, a) in args.iter().enumerate() {
        match a {
            Arg::Buffer { elem, len, output } => {
                let data = if *output {
                    vec![0.0; *len]
                } else {
                    inputs(*len, i as u64 + 1)
                };
                let b = mem.alloc_from_f64(*elem, &data);
                values.push(ArgValue::Ptr(b.base));
                buffers.push(b);
            }
            Arg::Int(v) => values.push(ArgValue::Int(*v)),
        }
    }
    run_grid(func, &values, grid, &mut mem, &InterpOptions::default())
        .unwrap_or_else(|e| panic!("{}: {e}", func.name));
    buffers.iter().map(|b| mem.read_f64(b)).collect()
}

/// Runs the kernel as written and with `rewrite` applied; which arguments'
/// bytes differ afterwards.
fn differing_arguments(
    file: &str,
    args: &[Arg],
    grid: [u32; 3],
    rewrite: impl FnOnce(&mut Function),
) -> Vec<usize> {
    let original = kernel(file);
    let mut rewritten = original.clone();
    rewrite(&mut rewritten);
    if let Err(errors) = verify_function(&rewritten) {
        panic!("{file}: the rewritten IR does not verify: {errors:?}");
    }
    let before = run(&original, args, grid);
    let after = run(&rewritten, args, grid);
    // NaN-aware bitwise comparison of the decoded values.
    let same = |b: &Vec<f64>, a: &Vec<f64>| {
        b.len() == a.len()
            && b.iter()
                .zip(a)
                .all(|(x, y)| x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()))
    };
    (0..before.len())
        .filter(|&i| !same(&before[i], &after[i]))
        .collect()
}

/// The kernel as written and with its TMA loads as descriptor loads give
/// the same bytes everywhere; at least `min_rewritten` loads are rewritten.
/// The same holds for the library's `lower_tma_loads` (which rewrites
/// the loads whose box is the tile) followed by dead-code removal.
fn same_results(file: &str, args: &[Arg], grid: [u32; 3], min_rewritten: usize) {
    let differ = differing_arguments(file, args, grid, |f| {
        let n = descriptor_rewrite::rewrite_tma_loads(f);
        assert!(n >= min_rewritten, "{file}: only {n} loads rewritten");
    });
    assert!(
        differ.is_empty(),
        "{file}: arguments {differ:?} differ after the rewrite"
    );
    let differ = differing_arguments(file, args, grid, |f| {
        let plan = infer_tma(f, &axis_info::analyze(f));
        lower_tma_loads(f, &plan);
        eliminate_dead_code(f);
    });
    assert!(
        differ.is_empty(),
        "{file}: arguments {differ:?} differ after lower_tma_loads"
    );
}

fn buf(elem: ScalarType, len: usize) -> Arg {
    Arg::Buffer {
        elem,
        len,
        output: false,
    }
}

fn out(elem: ScalarType, len: usize) -> Arg {
    Arg::Buffer {
        elem,
        len,
        output: true,
    }
}

use ScalarType::{F16, F32, I8};

#[test]
fn rows_of_one() {
    // M = 5 rows of K = 80, row stride 96; programs past M read zeros.
    let (m, k, stride) = (5, 80, 96);
    same_results(
        "rows_of_one.py",
        &[
            buf(F16, m * stride),
            out(F32, m + 2),
            Arg::Int(m as i64),
            Arg::Int(k),
            Arg::Int(stride as i64),
        ],
        [m as u32 + 2, 1, 1],
        1,
    );
}

fn transposed_args() -> Vec<Arg> {
    // A [80, 96] row-major, B [96, 48] column-major (stride_bn = K).
    let (m, n, k) = (80, 48, 96);
    vec![
        buf(F16, m * k),
        buf(F16, k * n),
        out(F32, m * n),
        Arg::Int(m as i64),
        Arg::Int(n as i64),
        Arg::Int(k as i64),
        Arg::Int(k as i64),
    ]
}

#[test]
fn transposed_b() {
    same_results("transposed.py", &transposed_args(), [2, 1, 1], 2);
}

/// The check is not vacuous: A's K origin moved by 16 columns reads other
/// elements, and C changes. (A wrong K extent alone would not show: B's
/// own mask zeroes the products past K.)
#[test]
fn a_shifted_origin_is_caught() {
    let differ = differing_arguments("transposed.py", &transposed_args(), [2, 1, 1], |f| {
        let mut a = descriptor_rewrite::rewritable_recipes(f)
            .into_iter()
            .next()
            .expect("A is TMA");
        let inner = a.dims.last_mut().unwrap();
        inner.coord = inner.coord.checked_add(&Poly::constant(16)).unwrap();
        descriptor_rewrite::rewrite(f, &a);
    });
    assert_eq!(differ, vec![2], "only C changes");
}

#[test]
fn loop_carried_offsets() {
    // Two programs of 64 rows, row stride 112, K = 112, loop from lo = 32
    // (two iterations, the second masked); the unmasked `while` loads read
    // up to column 127 of the last row.
    let (k, stride) = (112, 112);
    same_results(
        "loop_carried.py",
        &[
            buf(F16, 128 * stride + 128),
            out(F32, 128 * 64),
            Arg::Int(k),
            Arg::Int(stride as i64),
            Arg::Int(32),
        ],
        [2, 1, 1],
        3,
    );
}

#[test]
fn wrapped_rows_stored_through_a_block_pointer() {
    let (m, n, k) = (80, 48, 96);
    same_results(
        "wrap_block_ptr_store.py",
        &[
            buf(F16, m * k),
            buf(F16, k * n),
            out(F16, m * n),
            Arg::Int(m as i64),
            Arg::Int(n as i64),
            Arg::Int(k as i64),
        ],
        [2, 1, 1],
        2,
    );
}

#[test]
fn block_pointers_batched_and_partly_checked() {
    // Two batches of [80, 96] with row stride 112.
    let (m, k, stride) = (80, 96, 112);
    let batch = m * stride;
    same_results(
        "block_ptr_and_descriptor.py",
        &[
            buf(F16, m * stride),
            buf(F16, 2 * batch),
            buf(I8, m * stride),
            out(F32, 1),
            Arg::Int(m as i64),
            Arg::Int(k as i64),
            Arg::Int(stride as i64),
            Arg::Int(batch as i64),
            Arg::Int(stride as i64),
            Arg::Int(1),
        ],
        [2, 2, 1],
        2,
    );
}
