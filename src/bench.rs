//! `tawa-rs bench`: times launch cases on the GPU against a baseline
//! measured in the same run:
//!
//! - every case is first run once and checked ([`harness::check_compiled`]);
//!   a wrong kernel is not timed;
//! - inputs are the case's seeded random data (never zeros);
//! - the case's tensors are copied into as many rotating sets as it takes
//!   for their total to exceed twice the L2 cache ([`rotation_copies`]), and
//!   consecutive launches use consecutive sets, so no launch finds its
//!   inputs in L2 left there by the previous one;
//! - warm-up launches first (module load and clocks outside the timing),
//!   then `iters` rounds, each timing one kernel launch and one baseline
//!   run between their own CUDA events, interleaved so both see the same
//!   clocks and power state; the figure is the median ([`Stats`]).
//!
//! Throughput comes from the case's `bench` work counts (`flops`, `bytes` in
//! its `.toml`). Baselines: for GEMM-like examples, cuBLAS doing the same
//! matrix products as the example's reference (found by running the
//! reference with a recording matmul), with results in the operands' type
//! as `torch.matmul` does; for cases with a byte count, a device-to-device
//! copy moving the same bytes (half read, half written); otherwise none.
//! The ratio is baseline time / kernel time: above 1 the kernel is faster.

use std::cell::RefCell;
use std::io::Write;
use std::time::Instant;

use serde_json::json;
use tawa_backend::runtime::blas::Matrix;
use tawa_backend::runtime::{DeviceBuffer, Gpu, KernelArg, RuntimeError};
use triton_examples::{build_inputs, run_reference_with, Case, Example, HostTensor};

use crate::cli::BenchCommand;
use crate::driver::Failure;
use crate::harness::gpu_reference::{matrix_of, GEMM_REFERENCES};
use crate::harness::{self, launch, CaseFailure, DeviceTensors, GpuSession, Stage};

/// Timing statistics of one kind of work, in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stats {
    pub runs: usize,
    pub median: f64,
    pub mean: f64,
    pub min: f64,
    pub max: f64,
    /// 10th and 90th percentiles (nearest rank).
    pub p10: f64,
    pub p90: f64,
}

impl Stats {
    /// `None` for no samples.
    pub fn of(samples_ms: &[f32]) -> Option<Stats> {
        if samples_ms.is_empty() {
            return None;
        }
        let mut v: Vec<f64> = samples_ms.iter().map(|&x| f64::from(x)).collect();
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let median = if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        };
        // Nearest rank: the smallest value with at least p% of samples at
        // or below it.
        let rank = |p: f64| v[((p * n as f64).ceil() as usize).clamp(1, n) - 1];
        Some(Stats {
            runs: n,
            median,
            mean: v.iter().sum::<f64>() / n as f64,
            min: v[0],
            max: v[n - 1],
            p10: rank(0.10),
            p90: rank(0.90),
        })
    }
}

/// How many copies of a working set of `footprint` bytes make the total
/// exceed `2 * l2_bytes` (at least 1; a set larger than that is 1).
pub fn rotation_copies(footprint: usize, l2_bytes: usize) -> usize {
    if footprint == 0 {
        return 1;
    }
    (2 * l2_bytes / footprint + 1).max(1)
}

/// TFLOP/s of `flops` in `ms` milliseconds.
pub fn tflops(flops: i64, ms: f64) -> f64 {
    flops as f64 / (ms * 1e-3) / 1e12
}

/// GB/s (10^9 bytes per second) of `bytes` in `ms` milliseconds.
pub fn gbps(bytes: i64, ms: f64) -> f64 {
    bytes as f64 / (ms * 1e-3) / 1e9
}

/// What a case is compared with.
enum Baseline {
    /// cuBLAS doing these products `(a, b)` of the case's tensors.
    Cublas(Vec<(HostTensor, HostTensor)>),
    /// A device-to-device copy of this many bytes (half the case's count).
    Copy(usize),
    None,
}

impl Baseline {
    fn name(&self) -> &'static str {
        match self {
            Baseline::Cublas(_) => "cuBLAS",
            Baseline::Copy(_) => "D2D copy",
            Baseline::None => "-",
        }
    }
}

/// The matrix products `(a, b)` the example's reference computes, in
/// order, recorded by running it with a matmul that returns zeros (the
/// tensors come back without their data: only names, shapes, strides).
pub fn reference_products(
    example: &Example,
    case: &Case,
    tensors: &[HostTensor],
) -> Result<Vec<(HostTensor, HostTensor)>, String> {
    let products = RefCell::new(Vec::new());
    let record = |a: &HostTensor, b: &HostTensor| -> Result<Vec<f64>, String> {
        products.borrow_mut().push((a.clone(), b.clone()));
        Ok(vec![0.0; a.shape[0] * b.shape[1]])
    };
    // Only the product shapes matter; drop the values to save memory.
    let light: Vec<HostTensor> = tensors
        .iter()
        .map(|t| HostTensor {
            data: Vec::new(),
            ..t.clone()
        })
        .collect();
    run_reference_with(&example.spec, case, &light, &record)?;
    Ok(products.into_inner())
}

/// The measurement of one case.
#[derive(Debug, Clone)]
pub struct CaseBench {
    pub case: String,
    pub checked_against: String,
    pub max_errors: Vec<(String, f64)>,
    pub copies: usize,
    pub flops: Option<i64>,
    pub bytes: Option<i64>,
    pub kernel: Stats,
    pub baseline_name: String,
    pub baseline: Option<Stats>,
    /// The check's warning that the kernel spills to local memory.
    pub local_memory: Option<String>,
}

impl CaseBench {
    /// Baseline time over kernel time (above 1: the kernel is faster).
    pub fn ratio(&self) -> Option<f64> {
        self.baseline.map(|b| b.median / self.kernel.median)
    }

    fn throughput(&self, ms: f64) -> (Option<f64>, Option<f64>) {
        (
            self.flops.map(|f| tflops(f, ms)),
            self.bytes.map(|b| gbps(b, ms)),
        )
    }

    pub fn to_json(&self, example: &str, device: &str, cmd: &BenchCommand) -> serde_json::Value {
        let (k_tf, k_gb) = self.throughput(self.kernel.median);
        let (b_tf, b_gb) = self
            .baseline
            .map_or((None, None), |b| self.throughput(b.median));
        json!({
            "example": example,
            "case": self.case,
            "device": device,
            "iters": cmd.iters,
            "warmup": cmd.warmup,
            "rotating_sets": self.copies,
            "checked_against": self.checked_against,
            "max_errors": self.max_errors.iter().map(|(n, e)| (n.clone(), json!(e))).collect::<serde_json::Map<_, _>>(),
            "flops": self.flops,
            "bytes": self.bytes,
            "kernel_ms": { "median": self.kernel.median, "mean": self.kernel.mean, "min": self.kernel.min, "p10": self.kernel.p10, "p90": self.kernel.p90, "max": self.kernel.max },
            "kernel_tflops": k_tf,
            "kernel_gbps": k_gb,
            "baseline": self.baseline.map(|_| self.baseline_name.clone()),
            "baseline_ms": self.baseline.map(|b| json!({ "median": b.median, "mean": b.mean, "min": b.min, "p10": b.p10, "p90": b.p90, "max": b.max })),
            "baseline_tflops": b_tf,
            "baseline_gbps": b_gb,
            "ratio": self.ratio(),
        })
    }
}

fn launch_err(e: impl ToString) -> CaseFailure {
    CaseFailure::new(Stage::Launch, e.to_string())
}

/// Checks, then times, one case (see the module docs).
pub fn bench_case(
    session: &GpuSession,
    example: &Example,
    case: &Case,
    cmd: &BenchCommand,
) -> Result<CaseBench, CaseFailure> {
    let gpu = &session.gpu;
    let seed = cmd.select.seed;
    let compiled = harness::compile_case(example, case, cmd.select.pipeline_options().as_ref())?;
    let report = harness::check_compiled(session, example, case, &compiled, seed)?;

    let setup = |e: String| CaseFailure::new(Stage::Setup, e);
    let tensors = build_inputs(case, seed).map_err(setup)?;
    let grid = case.grid().map_err(setup)?;
    let (flops, bytes) = case.bench_work().map_err(setup)?;
    let bound = launch::bind_kernel_args(case, &compiled.kernel).map_err(setup)?;
    let kernel = gpu
        .load(&compiled.compiled, &compiled.kernel.symbol)
        .map_err(launch_err)?;
    let resident = tawa_backend::runtime::resident_programs(gpu, &kernel, &compiled.kernel)
        .map_err(launch_err)?;
    let l2 = gpu.l2_cache_bytes().map_err(launch_err)? as usize;

    let footprint: usize = tensors
        .iter()
        .map(|t| t.data.len() * t.dtype.byte_size() as usize)
        .sum();
    let copies = rotation_copies(footprint, l2);
    let mut sets = Vec::with_capacity(copies);
    for _ in 0..copies {
        sets.push(DeviceTensors::upload(gpu, case, &tensors).map_err(launch_err)?);
    }
    let cfg = launch::launch_config(&compiled.kernel, grid, resident, &bound);
    let args: Vec<Vec<KernelArg>> = sets
        .iter()
        .map(|s| s.launch_args(gpu, &compiled.kernel, &bound, grid, cfg.grid))
        .collect::<Result<_, _>>()
        .map_err(setup)?;
    let mut run_kernel = |g: &Gpu, round: usize| -> Result<(), RuntimeError> {
        g.launch_with(&kernel, &cfg, &args[round % copies])
    };

    let baseline = if cmd.no_baseline {
        Baseline::None
    } else if GEMM_REFERENCES.contains(&example.spec.reference.as_str()) {
        Baseline::Cublas(reference_products(example, case, &tensors).map_err(setup)?)
    } else if let Some(b) = bytes {
        Baseline::Copy((b / 2).max(1) as usize)
    } else {
        Baseline::None
    };
    let mut baseline_run = BaselineRun::prepare(session, &baseline, &sets, l2)?;

    for round in 0..cmd.warmup as usize {
        run_kernel(gpu, round).map_err(launch_err)?;
        baseline_run.run(gpu, round).map_err(launch_err)?;
    }
    gpu.synchronize().map_err(launch_err)?;
    let iters = cmd.iters as usize;
    let times = if matches!(baseline, Baseline::None) {
        gpu.time_interleaved(iters, &mut [&mut run_kernel])
    } else {
        let mut run_baseline = |g: &Gpu, round: usize| baseline_run.run(g, round);
        gpu.time_interleaved(iters, &mut [&mut run_kernel, &mut run_baseline])
    }
    .map_err(launch_err)?;
    let stats = |i: usize| times.get(i).and_then(|t| Stats::of(t));
    Ok(CaseBench {
        case: case.name.clone(),
        checked_against: report.expected_from,
        max_errors: report.outputs,
        copies,
        flops,
        bytes,
        kernel: stats(0).ok_or_else(|| launch_err("no timings"))?,
        baseline_name: baseline.name().into(),
        baseline: stats(1),
        local_memory: report.local_memory,
    })
}

/// The baseline's buffers and how to run it once.
enum BaselineRun<'a> {
    Cublas {
        blas: &'a tawa_backend::runtime::blas::Blas,
        /// Per rotating set, the products' operands and results.
        gemms: Vec<Vec<(Matrix, Matrix, Matrix)>>,
        _results: Vec<DeviceBuffer>,
    },
    Copy {
        len: usize,
        pairs: Vec<(DeviceBuffer, DeviceBuffer)>,
    },
    None,
}

impl<'a> BaselineRun<'a> {
    fn prepare(
        session: &'a GpuSession,
        baseline: &Baseline,
        sets: &[DeviceTensors],
        l2: usize,
    ) -> Result<BaselineRun<'a>, CaseFailure> {
        let gpu = &session.gpu;
        Ok(match baseline {
            Baseline::None => BaselineRun::None,
            Baseline::Copy(len) => {
                let copies = rotation_copies(2 * len, l2);
                let mut pairs = Vec::new();
                for _ in 0..copies {
                    let mut src = gpu.alloc(*len).map_err(launch_err)?;
                    // Non-zero source bytes, like the kernel's inputs.
                    gpu.memset(&mut src, 0x3c).map_err(launch_err)?;
                    pairs.push((gpu.alloc(*len).map_err(launch_err)?, src));
                }
                BaselineRun::Copy { len: *len, pairs }
            }
            Baseline::Cublas(products) => {
                let blas = session
                    .blas()
                    .map_err(|e| CaseFailure::new(Stage::Launch, e))?;
                // One result buffer per product, shared by the sets: results
                // are written, never read.
                let mut results = Vec::new();
                for (a, b) in products {
                    let len = a.shape[0] * b.shape[1] * a.dtype.byte_size() as usize;
                    results.push(gpu.alloc(len).map_err(launch_err)?);
                }
                let mut gemms = Vec::new();
                for set in sets {
                    let mut list = Vec::new();
                    for ((a, b), c) in products.iter().zip(&results) {
                        let address = |n: &str| set.address(n);
                        let ma = matrix_of(a, &address).map_err(launch_err)?;
                        let mb = matrix_of(b, &address).map_err(launch_err)?;
                        let mc = Matrix::row_major(c.ptr(), a.dtype, ma.rows, mb.cols);
                        list.push((ma, mb, mc));
                    }
                    gemms.push(list);
                }
                BaselineRun::Cublas {
                    blas,
                    gemms,
                    _results: results,
                }
            }
        })
    }

    fn run(&mut self, gpu: &Gpu, round: usize) -> Result<(), RuntimeError> {
        match self {
            BaselineRun::None => Ok(()),
            BaselineRun::Copy { len, pairs } => {
                let n = pairs.len();
                let (dst, src) = &mut pairs[round % n];
                gpu.copy_device(dst, src, *len)
            }
            BaselineRun::Cublas { blas, gemms, .. } => {
                let n = gemms.len();
                for (a, b, c) in &gemms[round % n] {
                    blas.gemm(a, b, c)?;
                }
                Ok(())
            }
        }
    }
}

fn fmt_opt(v: Option<f64>, digits: usize) -> String {
    v.map_or_else(|| "-".into(), |x| format!("{x:.digits$}"))
}

/// `tawa-rs bench EXAMPLE.py [--case NAME]...`. Without `--case` or `--tag`
/// the cases tagged `large` are timed (small ones measure launch overhead).
pub fn bench_command(cmd: &BenchCommand) -> Result<(), Failure> {
    let mut select = cmd.select.clone();
    if select.cases.is_empty() && select.tags.is_empty() {
        select.tags.push("large".into());
    }
    let (example, cases) = harness::select_cases(&select)?;
    let session =
        GpuSession::new(select.device).map_err(|e| Failure::user(format!("error: {e}\n")))?;
    let device = session.describe();
    let mut out = std::io::stdout().lock();
    let mut err = std::io::stderr().lock();
    if !cmd.json {
        let _ = writeln!(
            out,
            "device {}: {device}; median of {} runs after {} warm-up, baseline interleaved",
            select.device, cmd.iters, cmd.warmup
        );
    }
    let mut rows = Vec::new();
    let mut failed = Vec::new();
    for (i, case) in cases.iter().enumerate() {
        let what = format!("{}/{}", example.name, case.name);
        // Progress on stderr so that --json output stays one object a line.
        let _ = write!(err, "[{}/{}] {what} ... ", i + 1, cases.len());
        let _ = err.flush();
        let start = Instant::now();
        match bench_case(&session, &example, case, cmd) {
            Ok(b) => {
                let _ = writeln!(
                    err,
                    "{:.3} ms ({:.1}s)",
                    b.kernel.median,
                    start.elapsed().as_secs_f64()
                );
                for line in b.local_memory.iter().flat_map(|w| w.lines()) {
                    let _ = writeln!(err, "    {line}");
                }
                if cmd.json {
                    let _ = writeln!(out, "{}", b.to_json(&example.name, &device, cmd));
                }
                rows.push(b);
            }
            Err(f) => {
                let _ = writeln!(err, "FAIL");
                for line in f.to_string().lines() {
                    let _ = writeln!(err, "    {line}");
                }
                failed.push(what);
            }
        }
    }
    if !cmd.json && !rows.is_empty() {
        let _ = writeln!(
            out,
            "{:<28} {:>10} {:>9} {:>9} | {:<9} {:>10} {:>9} {:>9} | {:>7}",
            "case", "ms", "TFLOP/s", "GB/s", "baseline", "ms", "TFLOP/s", "GB/s", "ratio"
        );
        for b in &rows {
            let (k_tf, k_gb) = b.throughput(b.kernel.median);
            let (b_ms, b_tf, b_gb) = match b.baseline {
                Some(s) => {
                    let (tf, gb) = b.throughput(s.median);
                    (Some(s.median), tf, gb)
                }
                None => (None, None, None),
            };
            let _ = writeln!(
                out,
                "{:<28} {:>10.4} {:>9} {:>9} | {:<9} {:>10} {:>9} {:>9} | {:>7}",
                b.case,
                b.kernel.median,
                fmt_opt(k_tf, 1),
                fmt_opt(k_gb, 1),
                b.baseline_name,
                fmt_opt(b_ms, 4),
                fmt_opt(b_tf, 1),
                fmt_opt(b_gb, 1),
                b.ratio().map_or("-".into(), |r| format!("{r:.3}x")),
            );
        }
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(Failure::user(format!(
            "error: {} of {} cases failed: {}\n",
            failed.len(),
            cases.len(),
            failed.join(", ")
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_and_percentiles() {
        let s = Stats::of(&[5.0, 1.0, 3.0]).unwrap();
        assert_eq!((s.median, s.min, s.max, s.runs), (3.0, 1.0, 5.0, 3));
        assert_eq!(s.mean, 3.0);
        let s = Stats::of(&[4.0, 1.0, 3.0, 2.0]).unwrap();
        assert_eq!(s.median, 2.5);
        let hundred: Vec<f32> = (1..=100).rev().map(|x| x as f32).collect();
        let s = Stats::of(&hundred).unwrap();
        assert_eq!((s.p10, s.p90, s.median), (10.0, 90.0, 50.5));
        assert_eq!(Stats::of(&[]), None);
        // One outlier does not move the median.
        let s = Stats::of(&[1.0, 1.0, 1.0, 1.0, 100.0]).unwrap();
        assert_eq!(s.median, 1.0);
    }

    #[test]
    fn rotation_exceeds_twice_the_l2() {
        let l2 = 50 << 20;
        for footprint in [1usize, 1 << 20, 30 << 20, 50 << 20, 99 << 20, 100 << 20] {
            let n = rotation_copies(footprint, l2);
            assert!(n * footprint > 2 * l2, "{footprint}: {n}");
            // And not more sets than needed.
            assert!((n - 1) * footprint <= 2 * l2, "{footprint}: {n}");
        }
        assert_eq!(rotation_copies(400 << 20, l2), 1);
        assert_eq!(rotation_copies(0, l2), 1);
    }

    #[test]
    fn throughput_units() {
        // 2·4096³ flops in 1 ms is 137.4 TFLOP/s.
        assert!((tflops(2 * 4096i64.pow(3), 1.0) - 137.438_953_472).abs() < 1e-6);
        // 3 GB in 1 ms is 3000 GB/s.
        assert_eq!(gbps(3_000_000_000, 1.0), 3000.0);
    }

    /// Every case can report a throughput: its `.toml` gives flops or bytes.
    #[test]
    fn every_case_has_work_counts() {
        for ex in triton_examples::load_all().unwrap() {
            for case in &ex.spec.cases {
                let (flops, bytes) = case.bench_work().unwrap();
                assert!(
                    flops.is_some_and(|f| f > 0) || bytes.is_some_and(|b| b > 0),
                    "{}/{}: no `bench = {{ flops = ..., bytes = ... }}`",
                    ex.name,
                    case.name
                );
            }
        }
    }

    #[test]
    fn gemm_baselines_do_the_reference_products() {
        let ex = triton_examples::load("geglu_dual_gemm").unwrap();
        let case = ex.spec.case("ragged_100").unwrap();
        let tensors = build_inputs(case, 1).unwrap();
        let products = reference_products(&ex, case, &tensors).unwrap();
        let names: Vec<(&str, &str)> = products
            .iter()
            .map(|(a, b)| (a.name.as_str(), b.name.as_str()))
            .collect();
        assert_eq!(names, [("a_ptr", "wg_ptr"), ("a_ptr", "wu_ptr")]);

        let ex = triton_examples::load("grouped_gemm").unwrap();
        let case = ex.spec.case("three_ragged").unwrap();
        let tensors = build_inputs(case, 1).unwrap();
        assert_eq!(reference_products(&ex, case, &tensors).unwrap().len(), 3);
    }
}
