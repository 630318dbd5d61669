//! The partitioned file-test GEMMs (`tests/partition/*.py`) on the aref
//! simulator: at depths 1 to 4 and several scheduler seeds, C must be
//! bitwise what the plain interpreter writes for the unpartitioned
//! kernel, on ragged sizes (M, N not multiples of the tiles), with grids
//! and loop bounds giving several iterations per ring slot.

#[path = "support/file_kernel.rs"]
mod file_kernel;

use tawa_aref::sim::SimOptions;
use tawa_aref::simulate_grid;
use tawa_ir::interp::{run_grid, ArgValue, InterpOptions, Memory};
use tawa_ir::{axis_info, verify_function, Function, ScalarType};
use tawa_partitioner::{infer_tma, warp_specialize, WsOptions};

fn kernel(file: &str) -> Function {
    file_kernel::kernel("partition", file)
}

/// Small integers and halves, exact in f16 and in f32 sums.
fn inputs(len: usize, seed: u64) -> Vec<f64> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            ((x >> 40) % 17) as f64 / 2.0 - 4.0
        })
        .collect()
}

/// A[M, K] @ B[K, N] -> C[M, N] (f32, poisoned with NaN); `extra` are
/// the integer arguments after M, N, K. C's values after the launch.
fn run(
    func: &Function,
    (m, n, k): (usize, usize, usize),
    extra: &[i64],
    grid: [u32; 3],
    sim: Option<&SimOptions>,
) -> Vec<f64> {
    let mut mem = Memory::new();
    let a = mem.alloc_from_f64(ScalarType::F16, &inputs(m * k, 1));
    let b = mem.alloc_from_f64(ScalarType::F16, &inputs(k * n, 2));
    let c = mem.alloc_from_f64(ScalarType::F32, &vec![f64::NAN; m * n]);
    let mut args = vec![
        ArgValue::Ptr(a.base),
        ArgValue::Ptr(b.base),
        ArgValue::Ptr(c.base),
        ArgValue::Int(m as i64),
        ArgValue::Int(n as i64),
        ArgValue::Int(k as i64),
    ];
    args.extend(extra.iter().map(|&v| ArgValue::Int(v)));
    match sim {
        None => run_grid(func, &args, grid, &mut mem, &InterpOptions::default())
            .unwrap_or_else(|e| panic!("{}: {e}", func.name)),
        Some(opts) => {
            simulate_grid(func, &args, grid, &mut mem, opts)
                .unwrap_or_else(|e| panic!("{}: {e}", func.name));
        }
    }
    mem.read_f64(&c)
}

fn same_as_plain(file: &str, sizes: (usize, usize, usize), extra: &[i64], grid: [u32; 3]) {
    let plain = kernel(file);
    let expected = run(&plain, sizes, extra, grid, None);
    assert!(
        expected.iter().any(|x| x.is_finite() && *x != 0.0),
        "{file}: a trivial product"
    );
    let plan = infer_tma(&plain, &axis_info::analyze(&plain));
    for depth in 1..=4 {
        let ws = warp_specialize(
            &plain,
            &plan,
            &WsOptions {
                depth,
                ..Default::default()
            },
        )
        .unwrap()
        .unwrap_or_else(|| panic!("{file}: not specialized"));
        verify_function(&ws).unwrap_or_else(|e| panic!("{file}: {e:?}"));
        for seed in [0, 3, 11] {
            let sim = SimOptions {
                seed,
                max_steps: Some(10_000_000),
                ..SimOptions::default()
            };
            let got = run(&ws, sizes, extra, grid, Some(&sim));
            let equal = got
                .iter()
                .zip(&expected)
                .all(|(x, y)| x.to_bits() == y.to_bits());
            assert!(equal, "{file} depth {depth} seed {seed}: C differs");
        }
    }
}

#[test]
fn matmul() {
    // 64x64 tiles, K steps of 32: 6 iterations.
    same_as_plain("matmul.py", (100, 90, 192), &[], [2, 2, 1]);
}

#[test]
fn offset_start() {
    // The loop runs from lo = 64 (the trip counter is (k - lo) / 32).
    same_as_plain("offset_start.py", (100, 90, 256), &[64], [2, 2, 1]);
}

#[test]
fn persistent() {
    // 4 x 3 tiles of 64x64 over PROGRAMS = 4 programs: each runs 3 tiles
    // of 4 K steps, the aref counter running on across them.
    same_as_plain("persistent.py", (200, 150, 128), &[], [4, 1, 1]);
}

#[test]
fn two_loops() {
    same_as_plain("two_loops.py", (128, 128, 224), &[], [2, 2, 1]);
}
