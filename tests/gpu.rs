//! The GPU suite: every launch case of every example through `tawa-rs run`
//! on a real GPU (compile, seeded inputs, poisoned outputs, every element
//! checked; see `tawa_rs::harness`), each case in its own process under a
//! watchdog, and compute-sanitizer memcheck on the small cases, which also
//! run with `--no-ws` (the one-partition software pipeline).
//!
//! `#[ignore]`d, so that a plain `cargo test` lists it as ignored instead
//! of passing without a GPU: run it with `-- --ignored` on a GPU machine,
//! where it fails without a device. It never passes having run zero cases.
//!
//! Environment:
//! - `TAWA_GPU_TIMEOUT`: seconds per case before the watchdog kills it and
//!   fails the case by name (default 120; memcheck runs get 4 times that).
//! - `TAWA_GPU_FILTER`: only cases whose `example/case` contains this text
//!   (or one of several, comma-separated).
//! - `TAWA_GPU_SHARD=i/n`: only every `n`-th run (with its memcheck run),
//!   from the `i`-th (1-based) of those the filter leaves: `1/2` and `2/2`
//!   together run the suite in two processes, for machines that give a
//!   command less time than the whole suite takes.
//! - `TAWA_GPU_LOG`: also write the summary to this file.
//! - `TAWA_SANITIZER=0`: no memcheck. compute-sanitizer is looked up on
//!   `$PATH`, then in `/usr/local/cuda/bin`.
//! - `TAWA_GPU_FLAGS`: more `tawa-rs run` flags for every case, split at
//!   spaces (`TAWA_GPU_FLAGS=--tma-multicast`: the suite in CTA pairs
//!   wherever the flag applies).
//! - `TAWA_BIN`: the `tawa-rs` binary to run (default: the one cargo built
//!   with this test); `TAWA_EXAMPLES_DIR`: where the examples are, for test
//!   binaries run away from their checkout.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use tawa_backend::runtime::Gpu;

const DEFAULT_TIMEOUT_S: u64 = 120;

/// How a child process ended.
struct Outcome {
    /// `None` when the watchdog killed it.
    code: Option<i32>,
    output: String,
    elapsed: Duration,
}

/// Runs `cmd` with a watchdog: killed after `timeout`.
fn run_with_watchdog(mut cmd: Command, timeout: Duration) -> Result<Outcome, String> {
    let start = Instant::now();
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start {cmd:?}: {e}"))?;
    // Drain both pipes in threads so a chatty child never blocks on a full
    // pipe while we wait for it.
    let mut stdout = child.stdout.take().expect("piped");
    let mut stderr = child.stderr.take().expect("piped");
    let out_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stdout.read_to_string(&mut s);
        s
    });
    let err_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let code = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status.code().or(Some(-1)),
            Ok(None) if start.elapsed() >= timeout => {
                // This child only, by its own handle.
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(50)),
            Err(e) => return Err(format!("waiting for {cmd:?}: {e}")),
        }
    };
    let mut output = out_reader.join().unwrap_or_default();
    output.push_str(&err_reader.join().unwrap_or_default());
    Ok(Outcome {
        code,
        output,
        elapsed: start.elapsed(),
    })
}

fn tawa_bin() -> PathBuf {
    std::env::var_os("TAWA_BIN")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_tawa-rs")))
}

fn compute_sanitizer() -> Option<PathBuf> {
    if std::env::var("TAWA_SANITIZER").is_ok_and(|v| v == "0") {
        return None;
    }
    let on_path = std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join("compute-sanitizer"))
            .find(|f| f.is_file())
    });
    on_path.or_else(|| {
        let f = Path::new("/usr/local/cuda/bin/compute-sanitizer");
        f.is_file().then(|| f.to_path_buf())
    })
}

/// The last lines of a child's output, indented, for the report.
fn tail(output: &str, lines: usize) -> String {
    let all: Vec<&str> = output.lines().collect();
    all[all.len().saturating_sub(lines)..]
        .iter()
        .map(|l| format!("    {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Cases that also run with `--tma-multicast`, in thread-block clusters
/// of 2 CTAs: kernels whose B tile is an MN-major operand copied as
/// several boxes side by side. In a cluster launch a shared address
/// carries the CTA's rank above bit 24; a wgmma descriptor that did not
/// mask it read such operands wrongly in every CTA but the first.
const PAIRED_RUNS: &[(&str, &str)] = &[
    ("matmul", "tiles_128x128_ragged"),
    ("batched_matmul", "ragged_8_warps"),
];

/// Cases run a second time with `--cluster-split-k`: small grids the
/// launcher runs in CTA pairs that split each tile's K loop (a GEMM with
/// a fused activation and a TMA-store epilogue, the cooperative 128x256
/// GEMM's 128 KiB of partial sums, the GLU dual GEMM's two sums, the
/// swap-AB decode GEMM's transposed accumulator), and a grid of 72 tiles
/// it runs as without the flag, one CTA a tile.
const SPLIT_K_PAIRED_RUNS: &[(&str, &str)] = &[
    ("matmul", "leaky_relu_ragged_tma"),
    ("matmul", "tiles_128x256_ragged_odd_k"),
    ("matmul", "tiles_128x128_ragged"),
    ("matmul_swap_ab", "decode_ragged"),
    ("glu_dual_gemm_unmasked", "blocks_64x128x160"),
];

/// Cases run a second time with `--stream-k`, each with the persistent
/// programs capped (`TAWA_PERSISTENT_PROGRAMS`; 0: the GPU's) and started
/// all (`TAWA_WAVE_BALANCE=0`: fewer would walk 4 tiles in the same 2
/// waves) so that its tiles leave a partial wave the programs share: one warpgroup
/// (64x64 and 128x128 tiles, a run of half a tile), the cooperative
/// 128x128 GEMM's merged slots, the GLU dual GEMM's two sums, and the
/// 128x256 GEMM on the whole GPU (4096^3: 512 tiles, 116 past the third
/// wave; M = N = 8192, K = 1024: 2048 tiles, 68 past the fifteenth);
/// and the swap-AB decode, whose 4 and 64 tiles are fewer than the SMs:
/// every program starts, and 8 and 128 of them share the tiles.
const STREAM_K_RUNS: &[(&str, &str, u32)] = &[
    ("matmul", "leaky_relu_ragged_tma", 3),
    ("matmul", "tiles_128x128_8_warps_ragged_odd_k", 3),
    ("matmul", "tiles_128x128_ragged", 5),
    ("glu_dual_gemm_unmasked", "blocks_192x96x96", 2),
    ("matmul", "square_4096", 0),
    ("matmul", "k1024_8192", 0),
    ("matmul_swap_ab", "decode_ragged", 0),
    ("matmul_swap_ab", "decode_16x8192x8192", 0),
];

#[test]
#[ignore = "needs a GPU: see the GPU suite in CONTRIBUTING.md"]
fn gpu_every_example_case_is_correct() {
    let count = Gpu::device_count();
    assert!(
        matches!(count, Ok(n) if n > 0),
        "the GPU suite needs a GPU: no CUDA device ({count:?})"
    );
    let timeout = Duration::from_secs(
        std::env::var("TAWA_GPU_TIMEOUT")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(DEFAULT_TIMEOUT_S),
    );
    let filter = std::env::var("TAWA_GPU_FILTER").unwrap_or_default();
    let (shard, shards) = std::env::var("TAWA_GPU_SHARD").map_or((0, 1), |v| {
        parse_shard(&v).unwrap_or_else(|| panic!("TAWA_GPU_SHARD={v:?}: expected i/n, 1 <= i <= n"))
    });
    let mut selected = 0;
    let extra = std::env::var("TAWA_GPU_FLAGS").unwrap_or_default();
    let extra: Vec<&str> = extra.split_whitespace().collect();
    let sanitizer = compute_sanitizer();
    let bin = tawa_bin();
    let examples = triton_examples::load_all().expect("launch cases load");

    let mut log = vec![format!(
        "gpu suite: {} via {}{}, timeout {}s, memcheck {}",
        Gpu::new(0)
            .and_then(|g| g.name())
            .unwrap_or_else(|e| e.to_string()),
        bin.display(),
        if extra.is_empty() {
            String::new()
        } else {
            format!(" with {}", extra.join(" "))
        },
        timeout.as_secs(),
        sanitizer
            .as_ref()
            .map_or("off (compute-sanitizer not found)".to_string(), |p| p
                .display()
                .to_string())
    )];
    eprintln!("{}", log[0]);
    let mut ran = 0;
    let mut failures = Vec::new();
    // Small cases run a second time without warp specialization: the
    // one-partition software pipeline `--no-ws` compiles them to. The
    // cases of `PAIRED_RUNS` run a second time in CTA pairs.
    // Each with the persistent programs it caps the launch at (0: none).
    let variants = |ex: &str,
                    case: &triton_examples::Case|
     -> Vec<(&'static [&'static str], u32)> {
        let mut v: Vec<(&'static [&'static str], u32)> = vec![(&[], 0)];
        if case.has_tag("small") {
            v.push((&["--no-ws"], 0));
        }
        // (Not again when every case runs with the flag already.)
        if PAIRED_RUNS.contains(&(ex, case.name.as_str())) && !extra.contains(&"--tma-multicast") {
            v.push((&["--tma-multicast"], 0));
        }
        if SPLIT_K_PAIRED_RUNS.contains(&(ex, case.name.as_str())) {
            v.push((&["--cluster-split-k"], 0));
        }
        for &(e, c, programs) in STREAM_K_RUNS {
            if (e, c) == (ex, case.name.as_str()) {
                v.push((&["--stream-k"], programs));
            }
        }
        v
    };
    for (ex, case, (flags, programs)) in examples.iter().flat_map(|ex| {
        ex.spec.cases.iter().flat_map(move |case| {
            variants(&ex.name, case)
                .into_iter()
                .map(move |f| (ex, case, f))
        })
    }) {
        let what = format!("{}/{}", ex.name, case.name);
        if !filter.split(',').any(|f| what.contains(f)) {
            continue;
        }
        selected += 1;
        if (selected - 1) % shards != shard {
            continue;
        }
        let cap = format!("(TAWA_PERSISTENT_PROGRAMS={programs} TAWA_WAVE_BALANCE=0)");
        let what = [what.as_str()]
            .iter()
            .chain(flags)
            .chain(&extra)
            .copied()
            .chain((programs > 0).then_some(cap.as_str()))
            .collect::<Vec<_>>()
            .join(" ");
        ran += 1;
        let mut cmd = Command::new(&bin);
        cmd.arg("run")
            .arg(&ex.py_path)
            .arg("--case")
            .arg(&case.name)
            .args(flags)
            .args(&extra);
        if flags.contains(&"--stream-k") {
            cmd.env("TAWA_WAVE_BALANCE", "0");
        }
        if programs > 0 {
            cmd.env("TAWA_PERSISTENT_PROGRAMS", programs.to_string());
        }
        let mut line = match run_with_watchdog(cmd, timeout) {
            Ok(o) if o.code == Some(0) => {
                let result = o
                    .output
                    .lines()
                    .find(|l| l.contains(" ... "))
                    .and_then(|l| l.split(" ... ").nth(1))
                    .unwrap_or("OK")
                    .to_string();
                format!("ok   {what} ({:.1}s): {result}", o.elapsed.as_secs_f64())
            }
            Ok(o) => {
                let why = match o.code {
                    None => format!(
                        "hung: killed by the watchdog after {}s (TAWA_GPU_TIMEOUT)",
                        timeout.as_secs()
                    ),
                    Some(c) => format!("exit code {c}"),
                };
                failures.push(format!("{what}: {why}\n{}", tail(&o.output, 30)));
                format!("FAIL {what} ({:.1}s): {why}", o.elapsed.as_secs_f64())
            }
            Err(e) => {
                failures.push(format!("{what}: {e}"));
                format!("FAIL {what}: {e}")
            }
        };
        if let (Some(tool), true) = (&sanitizer, case.has_tag("small")) {
            let mut cmd = Command::new(tool);
            cmd.args(["--tool", "memcheck", "--error-exitcode", "86"])
                .arg(&bin)
                .arg("run")
                .arg(&ex.py_path)
                .arg("--case")
                .arg(&case.name)
                .args(flags)
                .args(&extra);
            if flags.contains(&"--stream-k") {
                cmd.env("TAWA_WAVE_BALANCE", "0");
            }
            if programs > 0 {
                cmd.env("TAWA_PERSISTENT_PROGRAMS", programs.to_string());
            }
            match run_with_watchdog(cmd, timeout * 4) {
                Ok(o) if o.code == Some(0) => line.push_str(&format!(
                    " [memcheck clean, {:.1}s]",
                    o.elapsed.as_secs_f64()
                )),
                Ok(o) => {
                    let why = match o.code {
                        None => "memcheck hung (watchdog)".to_string(),
                        Some(86) => "memcheck found errors".to_string(),
                        Some(c) => format!("memcheck run failed with exit code {c}"),
                    };
                    line.push_str(&format!(" [{why}]"));
                    failures.push(format!("{what}: {why}\n{}", tail(&o.output, 40)));
                }
                Err(e) => failures.push(format!("{what}: memcheck: {e}")),
            }
        }
        eprintln!("{line}");
        log.push(line);
    }
    log.push(format!(
        "gpu suite: {ran} cases, {} failures{}",
        failures.len(),
        if shards > 1 {
            format!(" (shard {} of {shards}, of {selected} runs)", shard + 1)
        } else {
            String::new()
        }
    ));
    if !failures.is_empty() {
        log.push(String::new());
        log.extend(failures.iter().cloned());
    }
    if let Some(path) = std::env::var_os("TAWA_GPU_LOG") {
        std::fs::write(&path, log.join("\n") + "\n")
            .unwrap_or_else(|e| panic!("TAWA_GPU_LOG {}: {e}", Path::new(&path).display()));
    }
    assert!(ran > 0, "no case ran (TAWA_GPU_FILTER = {filter:?})");
    assert!(
        failures.is_empty(),
        "{} of {ran} GPU cases failed:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

/// `i/n` (1-based `i`) as `(i - 1, n)`; `None` unless `1 <= i <= n`.
fn parse_shard(text: &str) -> Option<(usize, usize)> {
    let (i, n) = text.trim().split_once('/')?;
    let (i, n): (usize, usize) = (i.trim().parse().ok()?, n.trim().parse().ok()?);
    (1..=n).contains(&i).then(|| (i - 1, n))
}

#[test]
fn shards_parse() {
    assert_eq!(parse_shard("1/2"), Some((0, 2)));
    assert_eq!(parse_shard(" 2 / 2 "), Some((1, 2)));
    assert_eq!(parse_shard("1/1"), Some((0, 1)));
    for bad in ["0/2", "3/2", "1/0", "2", "a/b", ""] {
        assert_eq!(parse_shard(bad), None, "{bad}");
    }
}
