//! The partitioner checked by meaning: every small launch case of the
//! GEMM-like examples is warp-specialized at aref depths 1 to 4, the
//! result must pass the verifier, and the aref simulator (several
//! scheduler seeds) must write exactly the bytes the plain interpreter
//! writes for the unpartitioned kernel — and pass the example's reference
//! check — with no deadlock.
//!
//! Three pipelines build the WS kernel ([`Pipeline`]): the one the CUDA
//! backend compiles (`tawa_rs::driver::warp_specialize_function`: TMA
//! loads lowered to `desc_load`s by `tma_lower`, dead code removed, the
//! partitioner, then the pipeliner, with 1 and 2 WGMMA groups kept in
//! flight where the ring is deep enough), and the partitioner alone on
//! the unlowered kernel, which moves pointer-tile loads as they are, and
//! the driver's `--no-ws` software pipeline (one partition putting ahead
//! of its own gets, at `num_stages` 2 to 4). The
//! simulator also checks that no slot is released while an async dot
//! reading it is in flight. Which cases the first one
//! specializes is asserted per example, so that a case falling back to
//! the plain kernel fails here.
//!
//! As in `tests/tma_recipes.rs`, the kernels are compiled with every
//! integer and pointer parameter declared `:16`, so that the ragged cases
//! (whose row strides are not 16-byte multiples, which TMA inference
//! rightly refuses) still have TMA-able loads to partition: alignment
//! decides legality on the GPU, not the results of the simulation.

mod common;

use tawa_aref::sim::SimOptions;
use tawa_aref::simulate_grid;
use tawa_ir::axis_info;
use tawa_ir::interp::{run_grid, InterpOptions};
use tawa_ir::{verify_function, Function, OpKind};
use tawa_partitioner::{infer_tma, producer_copy, warp_specialize_with_copies, WsOptions};
use tawa_pipeliner::PipelineOptions;

/// WGMMA groups in flight the driver's pipeline is simulated with (capped
/// at the aref depth minus one, so depth 1 checks the unpipelined loop;
/// `None` the default, which depends on the consumer's warpgroups), and
/// whether the kernel is made persistent (every depth is run both ways;
/// two programs walk the tiles, see `tests/common`).
const MMA_DEPTHS: [(Option<u32>, bool); 3] = [(None, false), (Some(2), false), (Some(1), true)];

/// Examples (or `example/case`s) whose split the `--no-ws` software
/// pipeline leaves plain: causal attention's two KV loops sharing one ring
/// (copies would have to run ahead from one loop into the next, which
/// `software_pipeline` does not do yet; a K loop nested in a tile loop is
/// pipelined within each tile), tutorial 06, whose producer loop
/// carries its own offsets, and tutorial 08's grouped GEMM, whose K loop
/// sits in a `while` and an `if` (`software_pipeline` fuses split loops
/// nested in `for` loops only; its pointer variant's tiles, which TMA
/// refuses, are copied by a warp-specialized producer's threads only).
const NOT_SOFTWARE_PIPELINED: [&str; 6] = [
    "06-fused-attention",
    "08-grouped-gemm",
    "08-grouped-gemm--tma",
    "fused_attention/causal_d64",
    "fused_attention/causal_d128",
    "fused_attention/causal_ragged_two_warpgroups",
];

/// Examples whose consumer loops the driver coarse-pipelines
/// (`tawa_pipeliner::coarse_pipeline`: the first dot of iteration j+1 in
/// flight beside the second of iteration j): the simulator runs that
/// schedule, not the loop as written.
const COARSE_PIPELINED: [&str; 2] = ["fused_attention", "06-fused-attention"];

/// Examples whose tile operand (attention's `q`, loaded before the KV
/// loops) the producer copies through a one-slot aref of its own
/// (`tawa_partitioner`'s per-tile copies): the simulator runs that ring
/// beside the KV rings, one put per tile.
const TILE_OPERAND_RING: [&str; 2] = ["fused_attention", "06-fused-attention"];

const INPUT_SEED: u64 = 5;
const SCHEDULER_SEEDS: [u64; 3] = [0, 1, 7];

/// How the WS kernel of a case is built.
#[derive(Clone, Copy, Debug)]
enum Pipeline {
    /// `tawa_rs::driver::warp_specialize_function`: what the backend
    /// lowers. `None` when it leaves the kernel plain.
    Driver,
    /// `warp_specialize` on the kernel as the frontend wrote it.
    PartitionerOnly,
    /// `tawa_rs::driver::software_pipeline_function` (`--no-ws`) with
    /// `num_stages` equal to the depth: one partition copying ahead of
    /// itself. `None` at depth 1 and where the driver leaves the kernel
    /// plain.
    SoftwarePipelined,
}

impl Pipeline {
    /// `launch`: the integer arguments of the case's launch, which the
    /// driver chooses schedules for (ping-pong consumers for a short K
    /// loop), as `tawa-rs --case` and the run harness compile it.
    fn specialize(
        self,
        what: &str,
        plain: &Function,
        depth: u32,
        (mma_depth, persistent): (Option<u32>, bool),
        launch: &[(String, i64)],
    ) -> Option<Function> {
        match self {
            Pipeline::Driver => {
                let opts = PipelineOptions {
                    aref_depth: Some(depth),
                    mma_depth,
                    persistent,
                    launch_values: launch.to_vec(),
                    ..PipelineOptions::default()
                };
                tawa_rs::driver::warp_specialize_function(what, plain, &opts)
                    .unwrap_or_else(|e| panic!("{what}: {e}"))
                    .map(|s| s.func)
            }
            Pipeline::PartitionerOnly => {
                let axis = axis_info::analyze(plain);
                let plan = infer_tma(plain, &axis);
                let copies = producer_copy::producer_copies(plain, &plan);
                let opts = WsOptions {
                    depth,
                    ..WsOptions::default()
                };
                warp_specialize_with_copies(plain, &plan, &producer_copy::copy_ops(&copies), &opts)
                    .unwrap_or_else(|e| panic!("{what}: {e}"))
            }
            Pipeline::SoftwarePipelined => {
                let mut staged = plain.clone();
                staged.attrs.num_stages = depth;
                tawa_rs::driver::software_pipeline_function(what, &staged)
                    .unwrap_or_else(|e| panic!("{what}: {e}"))
                    .map(|s| s.func)
            }
        }
    }
}

fn count_ops(func: &Function, is: impl Fn(&OpKind) -> bool) -> usize {
    let mut n = 0;
    func.walk(&mut |op| n += usize::from(is(&func.ops[op].kind)));
    n
}

/// Whether a loop body of `func` waits twice, for one group (the second
/// dot left in flight across the chain) and then for none: the coarse
/// pipeline's iteration. MMA pipelining waits once an iteration.
fn coarse_pipelined(func: &Function) -> bool {
    let mut found = false;
    func.walk(&mut |op| {
        if !matches!(func.ops[op].kind, OpKind::For(_)) {
            return;
        }
        let body = func.ops[op].regions[0];
        let waits: Vec<u32> = func.blocks[body]
            .ops
            .iter()
            .filter_map(|&o| match func.ops[o].kind {
                OpKind::DotWait { pending } => Some(pending),
                _ => None,
            })
            .collect();
        found |= waits == [1, 0];
    });
    found
}

/// Partitions of the (last) `ws` op of `func`.
fn partition_count(func: &Function) -> usize {
    let mut partitions = 0;
    func.walk(&mut |op| {
        if let OpKind::WarpSpecialize { partitions: p } = &func.ops[op].kind {
            partitions = p.len();
        }
    });
    partitions
}

fn has_ws(func: &Function) -> bool {
    count_ops(func, |k| matches!(k, OpKind::WarpSpecialize { .. })) > 0
}

/// The case's module, compiled with alignment claimed (see the module
/// docs).
fn compile_aligned(ex: &triton_examples::Example, case: &triton_examples::Case) -> tawa_ir::Module {
    let what = format!("{}/{}", ex.name, case.name);
    let mut opts = common::compile_options(&ex.spec, case).unwrap();
    opts.signature = opts.signature.as_deref().map(common::claim_alignment);
    let source = std::fs::read_to_string(&ex.py_path).unwrap();
    tawa_frontend::compile(&ex.py_path.display().to_string(), &source, &opts)
        .unwrap_or_else(|d| panic!("{what}: {}", d.render(false)))
}

/// Simulates every small case of example `name` through both pipelines
/// at depths 1 to 4. The partitioner alone must specialize every case;
/// the driver exactly the cases in `driver_specializes`, with its TMA
/// loads as descriptor loads.
fn check_example(name: &str, driver_specializes: &[&str]) {
    check_loaded(&triton_examples::load(name).unwrap(), driver_specializes);
}

/// [`check_example`] of an example already loaded.
fn check_loaded(ex: &triton_examples::Example, driver_specializes: &[&str]) {
    let name = ex.name.as_str();
    let mut checked = 0;
    let mut specialized_by_driver = Vec::new();
    for case in ex.spec.cases.iter().filter(|c| c.has_tag("small")) {
        let what = format!("{name}/{}", case.name);
        let (module, plain, expected) = plain_run(ex, case, &what);
        let pipelines = [
            Pipeline::Driver,
            Pipeline::PartitionerOnly,
            Pipeline::SoftwarePipelined,
        ];
        let mut driver_specialized = false;
        let launch = case.int_launch_values().unwrap();
        let pipelinable = !NOT_SOFTWARE_PIPELINED.contains(&name)
            && !NOT_SOFTWARE_PIPELINED.contains(&what.as_str());
        for pipeline in pipelines {
            let mut specialized_depths = 0;
            let mma_depths: &[(Option<u32>, bool)] = match pipeline {
                Pipeline::Driver => &MMA_DEPTHS,
                Pipeline::PartitionerOnly | Pipeline::SoftwarePipelined => &[(Some(0), false)],
            };
            for (depth, &mma) in (1..=4).flat_map(|d| mma_depths.iter().map(move |m| (d, m))) {
                let how =
                    format!("{what} ({pipeline:?}, depth {depth}, mma depth / persistent {mma:?})");
                let Some(ws) = pipeline.specialize(&what, &plain, depth, mma, &launch) else {
                    continue;
                };
                if mma == mma_depths[0] {
                    specialized_depths += 1;
                }
                assert!(has_ws(&ws), "{how}: no ws op");
                if let Err(errors) = verify_function(&ws) {
                    let text = tawa_ir::print_function(&ws);
                    panic!("{how}: the WS IR does not verify: {errors:?}\n{text}");
                }
                if let Pipeline::Driver | Pipeline::SoftwarePipelined = pipeline {
                    // The producer issues descriptor loads, whatever the
                    // kernel wrote, or copies with its threads the tiles
                    // TMA refused (`producer_copy`).
                    let copies = count_ops(&ws, |k| matches!(k, OpKind::DescLoad { .. }))
                        + producer_copies(&ws);
                    assert!(copies > 0, "{how}: no desc_load and no producer copy");
                }
                if let Pipeline::Driver = pipeline {
                    assert_eq!(
                        coarse_pipelined(&ws),
                        COARSE_PIPELINED.contains(&name),
                        "{how}: coarse pipelining"
                    );
                    // Two consumer warpgroups take turns in a
                    // coarse-pipelined loop (`tawa_pipeliner::pingpong`),
                    // which the simulator runs as one thread each.
                    assert_eq!(
                        !tawa_pipeliner::aref_depth::one_slot_rings(&ws).is_empty(),
                        TILE_OPERAND_RING.contains(&name),
                        "{how}: a one-slot ring of the tile's operand"
                    );
                    // Ping-pong consumers (two consumer partitions,
                    // chosen for a short K loop at the case's launch)
                    // take turns over the mainloop.
                    let turns = count_ops(&ws, |k| matches!(k, OpKind::TurnTake));
                    assert_eq!(
                        turns > 0,
                        (coarse_pipelined(&ws) && plain.attrs.num_warps >= 8)
                            || partition_count(&ws) == 3,
                        "{how}: ping-pong turns"
                    );
                }
                checked += simulate_against(&module, &ex.spec, case, ws, &expected, &how);
            }
            match (pipeline, specialized_depths) {
                (Pipeline::Driver, 4) => {
                    driver_specialized = true;
                    specialized_by_driver.push(case.name.clone())
                }
                (Pipeline::Driver, 0) => {}
                (Pipeline::PartitionerOnly, 4) => {}
                // Pipelined from two stages on, wherever the driver can
                // specialize (it has the same loop to split).
                (Pipeline::SoftwarePipelined, 3) if driver_specialized && pipelinable => {}
                (Pipeline::SoftwarePipelined, 0) if !driver_specialized || !pipelinable => {}
                (_, n) => panic!("{what} ({pipeline:?}): specialized at {n} of 4 depths"),
            }
        }
        eprintln!("ok   {what}: depths 1-4, seeds {SCHEDULER_SEEDS:?}");
    }
    assert!(checked > 0, "{name}: no small case");
    assert_eq!(
        specialized_by_driver, driver_specializes,
        "{name}: the small cases the driver warp-specializes"
    );
}

/// The case's module (alignment claimed), its kernel and the bytes the
/// plain interpreter writes.
fn plain_run(
    ex: &triton_examples::Example,
    case: &triton_examples::Case,
    what: &str,
) -> (tawa_ir::Module, Function, Vec<Vec<u8>>) {
    let mut module = compile_aligned(ex, case);
    // The reference is the kernel after `combine` (`acc += dot(a, b)`
    // accumulating in the dot), the form every path to the GPU takes
    // (the driver's pipelines and the backend run it): accumulating
    // in the dot rounds differently from adding its result after.
    let kernel = module
        .functions
        .iter_mut()
        .find(|f| f.name == ex.spec.kernel)
        .unwrap();
    tawa_ir::combine::combine(kernel);
    let plain = common::kernel_function(&module, &ex.spec).unwrap().clone();
    let (_, expected) = common::run_module_with(
        &module,
        &ex.spec,
        case,
        INPUT_SEED,
        &mut |f, args, grid, mem| {
            run_grid(f, args, grid, mem, &InterpOptions::default()).map_err(|e| e.to_string())
        },
    )
    .unwrap_or_else(|e| panic!("{what}: plain run: {e}"));
    (module, plain, expected)
}

/// Runs `ws` in place of the kernel on the aref simulator with each
/// scheduler seed; its bytes must be `expected` (the plain run's). The
/// number of runs.
fn simulate_against(
    module: &tawa_ir::Module,
    spec: &triton_examples::ExampleSpec,
    case: &triton_examples::Case,
    ws: Function,
    expected: &[Vec<u8>],
    how: &str,
) -> usize {
    // Tensors that float atomics add into hold their sums in the order
    // the programs ran, which a persistent walk and the scheduler's
    // interleaving change: those are held to the reference's tolerance
    // (checked by each run), every other tensor to the plain run's bytes.
    // So are a kernel's outputs whose CTA pairs split K: rank 0 adds two
    // partial sums, in a fixed order but not the loop's.
    // And a stream-K kernel's: a tile's owner adds the other programs'
    // partial sums to its own.
    let split_k = common::split_k_tiles(&ws, case).unwrap().is_some() || ws.attrs.stream_k;
    let summed = float_atomic_targets(&ws);
    let names: Vec<String> = triton_examples::build_inputs(case, INPUT_SEED)
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    let mut ws_module = module.clone();
    let slot = ws_module
        .functions
        .iter_mut()
        .find(|f| f.name == spec.kernel)
        .unwrap();
    *slot = ws;
    for seed in SCHEDULER_SEEDS {
        let sim = SimOptions {
            seed,
            max_steps: Some(50_000_000),
            ..SimOptions::default()
        };
        let (_, got) = common::run_module_with(
            &ws_module,
            spec,
            case,
            INPUT_SEED,
            &mut |f, args, grid, mem| {
                simulate_grid(f, args, grid, mem, &sim)
                    .map(|_| ())
                    .map_err(|e| e.to_string())
            },
        )
        .unwrap_or_else(|e| panic!("{how} seed {seed}: {e}"));
        for (i, (g, e)) in got.iter().zip(expected).enumerate() {
            assert!(
                g == e || split_k || summed.contains(&names[i]),
                "{how} seed {seed}: the bytes of `{}` differ from the plain run",
                names[i]
            );
        }
    }
    SCHEDULER_SEEDS.len()
}

/// The pointer parameters that float atomics of `func` add into.
fn float_atomic_targets(func: &Function) -> Vec<String> {
    let mut names = Vec::new();
    func.walk(&mut |op| {
        let data = &func.ops[op];
        let float = data
            .operands
            .get(1)
            .and_then(|&v| func.ty(v).scalar_type())
            .is_some_and(|s| s.is_float());
        if matches!(data.kind, OpKind::AtomicRmw { .. }) && float {
            if let Some(root) = func.pointer_root(data.operands[0]) {
                if let Some(p) = func.params.iter().find(|p| p.value == root) {
                    names.push(p.name.clone());
                }
            }
        }
    });
    names
}

/// Tile ping-pong (`--tile-pingpong`, `tawa_pipeliner::tile_pingpong`):
/// two consumer partitions of one warpgroup on alternate tiles, one ring
/// dealt between them, taking turns over the mainloop. The small cases of
/// the GEMM examples, and matmul with 128x128 tiles on 4 warps (a second
/// consumer warpgroup added) and on 8 (the cooperative split replaced),
/// on a ragged problem whose tiles two programs walk (each warpgroup gets
/// an odd and an even count), at aref depths 1 to 4 with 0 and 1 WGMMA
/// groups in flight: bytes equal to the plain interpreter's, no deadlock,
/// and where the pass applies, exactly these cases.
#[test]
fn tile_pingpong() {
    let mut applied = Vec::new();
    for name in [
        "matmul",
        "matmul_block_ptr",
        "matmul_descriptor",
        "persistent_matmul",
        "geglu_dual_gemm",
        "linear",
    ] {
        let ex = triton_examples::load(name).unwrap();
        let mut cases = small_cases(&ex);
        if name == "matmul" {
            let base = ex.spec.case("leaky_relu_ragged_tma").unwrap();
            for warps in [4, 8] {
                let mut big = base.clone();
                big.name = format!("tiles_128x128_{warps}_warps");
                big.num_warps = Some(warps);
                big.sizes = [("M", 260), ("N", 390), ("K", 100)]
                    .into_iter()
                    .map(|(k, v)| (k.to_string(), v))
                    .collect();
                for (k, v) in [
                    ("BLOCK_SIZE_M", 128),
                    ("BLOCK_SIZE_N", 128),
                    ("BLOCK_SIZE_K", 64),
                ] {
                    big.constexprs
                        .insert(k.into(), triton_examples::Constexpr::Int(v));
                }
                cases.push(big);
            }
        }
        applied.extend(check_tile_pingpong(&ex, &cases));
    }
    assert_eq!(
        applied,
        [
            "matmul/ragged_100",
            "matmul/leaky_relu_ragged_tma",
            "matmul/bf16_ragged_tma",
            "matmul/tiles_128x128_8_warps_ragged_odd_k",
            "matmul/tiles_128x128_4_warps",
            "matmul/tiles_128x128_8_warps",
            "matmul_block_ptr/ragged_100",
            "matmul_block_ptr/ragged_tma",
            "matmul_descriptor/ragged_100",
            "persistent_matmul/ragged_tma_few_programs",
            "persistent_matmul/ragged_tma_own_walk",
            "geglu_dual_gemm/ragged_100",
            "linear/ragged",
            "linear/k_tail_8_warps",
        ]
    );
}

/// Tile ping-pong on tutorial 09's persistent kernels (the TMA one's
/// epilogue keeps its own tile counter, `tile_id_c += NUM_SMS`, which each
/// warpgroup advances past the other's tile too) and tutorial 03.
#[test]
#[ignore = "needs the upstream Triton tutorials: TAWA_UPSTREAM_DIR=DIR cargo test --test ws_simulate -- --ignored"]
fn upstream_tutorials_tile_pingpong_on_the_simulator() {
    let mut applied = Vec::new();
    for stem in [
        "03-matrix-multiplication",
        "09-persistent-matmul--naive",
        "09-persistent-matmul--tma",
        "09-persistent-matmul--tma-persistent",
        "09-persistent-matmul--descriptor",
    ] {
        let ex = upstream_example(stem);
        applied.extend(check_tile_pingpong(&ex, &small_cases(&ex)));
    }
    assert_eq!(
        applied,
        [
            "03-matrix-multiplication/ragged_100",
            "09-persistent-matmul--naive/ragged_m",
            "09-persistent-matmul--tma/ragged",
            "09-persistent-matmul--tma-persistent/ragged_few_programs",
            "09-persistent-matmul--tma-persistent/ragged_subtiled",
        ]
    );
}

/// `--epilogue-overlap` (`tawa_pipeliner::epilogue_overlap`) on the
/// simulator: each tile's stores deferred into the next iteration of the
/// tile loop, after its first async dot (the K loop's first iteration
/// peeled), and the last tile's after the loop. The GEMM examples' small
/// cases at aref depths 1 to 4 with no WGMMA group in flight (the pass
/// leaves MMA-pipelined loops alone), persistent so that the programs
/// walk several tiles: bytes equal to the plain interpreter's, no
/// deadlock, and the pass applied to exactly these cases (one and two
/// consumer warpgroups, the dual GEMM's two dots, the subtiled
/// epilogue's two stores; not a descriptor made in the tile loop, nor
/// the row reduction's element-wise store).
#[test]
fn epilogue_overlap() {
    let mut applied = Vec::new();
    for name in [
        "matmul",
        "matmul_descriptor",
        "matmul_subtiled_epilogue",
        "persistent_matmul",
        "geglu_dual_gemm",
        "linear",
        "gemm_row_reduce",
    ] {
        let ex = triton_examples::load(name).unwrap();
        applied.extend(check_epilogue_overlap(&ex, &small_cases(&ex)));
    }
    assert_eq!(
        applied,
        [
            "matmul/ragged_100",
            "matmul/leaky_relu_ragged_tma",
            "matmul/bf16_ragged_tma",
            "matmul/tiles_128x256_ragged_odd_k",
            "matmul/tiles_128x128_8_warps_ragged_odd_k",
            "matmul_subtiled_epilogue/ragged_100x90",
            "persistent_matmul/ragged_tma_few_programs",
            "persistent_matmul/ragged_tma_own_walk",
            "geglu_dual_gemm/ragged_100",
            "linear/ragged",
            "linear/k_tail_8_warps",
            "linear/tiles_128x256_ragged_odd_k",
        ]
    );
}

/// Tutorial 09's persistent kernels with `--epilogue-overlap`: the TMA
/// one whole and subtiled (two stores a tile), the device-descriptor one.
#[test]
#[ignore = "needs the upstream Triton tutorials: TAWA_UPSTREAM_DIR=DIR cargo test --test ws_simulate -- --ignored"]
fn upstream_tutorials_epilogue_overlap_on_the_simulator() {
    let mut applied = Vec::new();
    for stem in [
        "03-matrix-multiplication",
        "09-persistent-matmul--tma-persistent",
        "09-persistent-matmul--descriptor",
    ] {
        let ex = upstream_example(stem);
        applied.extend(check_epilogue_overlap(&ex, &small_cases(&ex)));
    }
    assert_eq!(
        applied,
        [
            "03-matrix-multiplication/ragged_100",
            "09-persistent-matmul--tma-persistent/ragged_few_programs",
            "09-persistent-matmul--tma-persistent/ragged_subtiled",
        ]
    );
}

fn small_cases(ex: &triton_examples::Example) -> Vec<triton_examples::Case> {
    ex.spec
        .cases
        .iter()
        .filter(|c| c.has_tag("small"))
        .cloned()
        .collect()
}

/// Simulates `cases` of `ex` with tile ping-pong at aref depths 1 to 4
/// and 0 and 1 WGMMA groups in flight; the cases it applied to (three
/// partitions: two consumers), at every depth or the check fails.
fn check_tile_pingpong(
    ex: &triton_examples::Example,
    cases: &[triton_examples::Case],
) -> Vec<String> {
    let runs = (1..=4).flat_map(|depth| {
        [0, 1].map(|mma_depth| {
            let opts = PipelineOptions {
                aref_depth: Some(depth),
                mma_depth: Some(mma_depth),
                tile_pingpong: Some(true),
                ..PipelineOptions::default()
            };
            (
                depth,
                format!("tile ping-pong, depth {depth}, mma depth {mma_depth}"),
                opts,
            )
        })
    });
    check_applied(
        ex,
        cases,
        "tile ping-pong",
        &runs.collect::<Vec<_>>(),
        |ws| partition_count(&ws.func) == 3,
    )
}

/// Simulates `cases` of `ex` with the epilogue overlap at aref depths 1
/// to 4 (no group in flight); the cases it applied to, at every depth or
/// the check fails.
fn check_epilogue_overlap(
    ex: &triton_examples::Example,
    cases: &[triton_examples::Case],
) -> Vec<String> {
    let runs: Vec<_> = (1..=4)
        .map(|depth| {
            let opts = PipelineOptions {
                aref_depth: Some(depth),
                mma_depth: Some(0),
                epilogue_overlap: true,
                // The small cases' tiles are TMA stores, as the large
                // ones' are by default: the deferred stores are what the
                // pass moves.
                small_store_bytes: 0,
                ..PipelineOptions::default()
            };
            (depth, format!("epilogue overlap, depth {depth}"), opts)
        })
        .collect();
    check_applied(ex, cases, "epilogue overlap", &runs, |ws| {
        ws.schedule
            .decisions
            .iter()
            .any(|d| d.contains("tile loop: epilogue overlap:"))
    })
}

/// Simulates each of `cases` of `ex` under each run (its aref depth, a
/// description, the options): the WS IR must verify and write the plain
/// run's bytes. The cases where `applied` held, which must be at every
/// depth 1 to 4 where it held at any.
fn check_applied(
    ex: &triton_examples::Example,
    cases: &[triton_examples::Case],
    pass: &str,
    runs: &[(u32, String, PipelineOptions)],
    applied: impl Fn(&tawa_rs::driver::Specialized) -> bool,
) -> Vec<String> {
    let mut cases_applied = Vec::new();
    for case in cases {
        let what = format!("{}/{}", ex.name, case.name);
        let (module, plain, expected) = plain_run(ex, case, &what);
        let mut at = Vec::new();
        for (depth, run, opts) in runs {
            let how = format!("{what} ({run})");
            let Some(ws) = tawa_rs::driver::warp_specialize_function(&what, &plain, opts)
                .unwrap_or_else(|e| panic!("{how}: {e}"))
            else {
                continue;
            };
            if applied(&ws) {
                at.push(*depth);
            }
            if let Err(errors) = verify_function(&ws.func) {
                let text = tawa_ir::print_function(&ws.func);
                panic!("{how}: the WS IR does not verify: {errors:?}\n{text}");
            }
            simulate_against(&module, &ex.spec, case, ws.func, &expected, &how);
        }
        if !at.is_empty() {
            at.dedup();
            assert_eq!(at, [1, 2, 3, 4], "{what}: {pass} at some depths only");
            cases_applied.push(what.clone());
        }
        eprintln!("ok   {what}: {pass} {}", !at.is_empty());
    }
    cases_applied
}

/// `--tma-multicast` on the simulator: matmul's TMA cases (and one of 9
/// tiles, whose last round leaves the rank-1 CTA without a tile),
/// linear's `ragged` case (K-major operands, a grid over x and y) and the
/// batched GEMM's `ragged_8_warps` (an MN-major B copied as two boxes side
/// by side, two consumer warpgroups, a grid over x, y and z) run in
/// CTA pairs at aref depths 1 to 4, with and without a WGMMA group in
/// flight, and at depth 4 with two K steps a slot (`--slot-merge 2`: the
/// multicast halves of merged boxes): both programs of a pair together, each multicast put writing
/// its half of a shared tile into both CTAs' slots and each release
/// arriving on the peer's barrier. The bytes must be the plain run's,
/// with no deadlock and no copy into a slot a consumer of either CTA
/// still holds. The 128x256 GEMM whose ring the default merges is merged
/// alone and left whole in pairs (measured slower merged).
#[test]
fn tma_multicast() {
    let ex = triton_examples::load("matmul").unwrap();
    let mut cases: Vec<triton_examples::Case> = ["leaky_relu_ragged_tma", "bf16_ragged_tma"]
        .iter()
        .map(|n| ex.spec.case(n).unwrap().clone())
        .collect();
    let mut odd = cases[0].clone();
    odd.name = "nine_tiles".into();
    odd.sizes = [("M", 190), ("N", 140), ("K", 100)]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    cases.push(odd);
    let linear = triton_examples::load("linear").unwrap();
    let batched = triton_examples::load("batched_matmul").unwrap();
    let runs = cases
        .iter()
        .map(|c| (&ex, c.clone()))
        .chain([(&linear, linear.spec.case("ragged").unwrap().clone())])
        .chain([(
            &batched,
            batched.spec.case("ragged_8_warps").unwrap().clone(),
        )]);
    for (ex, case) in runs {
        let case = &case;
        let what = format!("{}/{}", ex.name, case.name);
        let (module, plain, expected) = plain_run(ex, case, &what);
        let schedules = (1..=4)
            .flat_map(|d| [(d, None, None), (d, Some(1), None)])
            .chain([(4, None, Some(2))]);
        for (depth, mma_depth, slot_merge) in schedules {
            let how = format!(
                "{what} (tma multicast, depth {depth}, mma depth {mma_depth:?}, slot merge \
                 {slot_merge:?})"
            );
            let opts = PipelineOptions {
                aref_depth: Some(depth),
                mma_depth,
                tma_multicast: true,
                slot_merge,
                ..PipelineOptions::default()
            };
            let ws = specialize(&what, &plain, &opts, &how);
            // Merged only when asked: CTA pairs measured slower merged.
            assert_eq!(
                decided(&ws, "2 K steps a slot"),
                slot_merge.is_some(),
                "{how}: {:#?}",
                ws.schedule.decisions
            );
            assert_eq!(ws.func.attrs.cluster, 2, "{how}: not in CTA pairs");
            simulate_against(&module, &ex.spec, case, ws.func, &expected, &how);
        }
        eprintln!("ok   {what}: tma multicast");
    }
    // A ring the default merges on its own is left whole in CTA pairs
    // (TMA copying every tile: the default's mixed copies keep one K step
    // a slot themselves).
    let case = ex.spec.case("tiles_128x256_ragged_odd_k").unwrap();
    let what = format!("matmul/{}", case.name);
    let (module, plain, expected) = plain_run(&ex, case, &what);
    for tma_multicast in [false, true] {
        let how = format!("{what} (defaults, tma multicast {tma_multicast})");
        let opts = PipelineOptions {
            tma_multicast,
            mixed_copies: Some(false),
            ..PipelineOptions::default()
        };
        let ws = specialize(&what, &plain, &opts, &how);
        assert_eq!(
            decided(&ws, "2 K steps a slot (the default"),
            !tma_multicast,
            "{how}: {:#?}",
            ws.schedule.decisions
        );
        simulate_against(&module, &ex.spec, case, ws.func, &expected, &how);
    }
}

/// `--cluster-split-k`: GEMMs whose CTA pairs may split each tile's K
/// loop, launched as the launcher would (`common::split_k_tiles`: grids
/// of up to 4 tiles in pairs, two programs a tile; larger ones as
/// without the pass), at aref depths 1 to 4 with the default WGMMA
/// groups in flight and none: the swap-AB decode GEMM's small cases
/// (one warpgroup, a transposed accumulator) and one with an odd count
/// of K steps, matmul with a fused activation and a TMA-store epilogue,
/// and the GLU dual GEMM (two sums exchanged), each in pairs, and
/// matmul on a grid of 12 tiles as one CTA a tile. Both CTAs of a
/// pair run together, rank 1 handing its partials to rank 0 through the
/// simulator's channel (which also rejects a pair exchanging twice: the
/// exchange reuses the ring's slots, idle only after a split pair's one
/// tile; a ring too small for the sums is refused, and every case splits
/// at two depths or more). The outputs must pass the reference check (the
/// pair adds f32 partials in another order than the loop; a grid that
/// does not split must give the plain run's bytes), with no deadlock and
/// no copy into a slot a consumer still holds.
#[test]
fn cluster_split_k() {
    let swap = triton_examples::load("matmul_swap_ab").unwrap();
    let matmul = triton_examples::load("matmul").unwrap();
    let glu = triton_examples::load("glu_dual_gemm_unmasked").unwrap();
    let case = |ex: &triton_examples::Example, name: &str| ex.spec.case(name).unwrap().clone();
    let mut odd = case(&swap, "decode_ragged");
    odd.name = "decode_ragged_k_odd_steps".into();
    odd.sizes.insert("K".into(), 224); // 7 steps of 32: rank 0 runs 4
    let mut wide = case(&matmul, "leaky_relu_ragged_tma");
    wide.name = "leaky_relu_ragged_tma_12_tiles".into();
    wide.sizes.insert("M".into(), 200); // 4 x 3 tiles of 64x64
    wide.sizes.insert("N".into(), 180);
    let runs = [
        (&swap, case(&swap, "decode_ragged"), true),
        (&swap, case(&swap, "two_row_tiles"), true),
        (&swap, odd, true),
        (&matmul, case(&matmul, "leaky_relu_ragged_tma"), true),
        (&glu, case(&glu, "blocks_64x128x160"), true),
        (&matmul, wide, false),
    ];
    for (ex, case, pairs) in runs {
        let what = format!("{}/{}", ex.name, case.name);
        let (module, plain, expected) = plain_run(ex, &case, &what);
        let mut split_depths = 0;
        for depth in 1..=4 {
            for mma_depth in [None, Some(0)] {
                let how =
                    format!("{what} (cluster split-K, depth {depth}, mma depth {mma_depth:?})");
                let opts = PipelineOptions {
                    aref_depth: Some(depth),
                    mma_depth,
                    cluster_split_k: true,
                    ..PipelineOptions::default()
                };
                let ws = specialize(&what, &plain, &opts, &how);
                // The exchange reuses the ring's slots: a shallow ring of
                // small slots may not hold the partial sums.
                let applied = ws.func.attrs.cluster_split_k;
                assert!(
                    applied && decided(&ws, "cluster split-K (--cluster")
                        || !applied && decided(&ws, "exceed the largest ring's slots"),
                    "{how}: {:#?}",
                    ws.schedule.decisions
                );
                split_depths += usize::from(applied);
                if applied {
                    let split = common::split_k_tiles(&ws.func, &case).unwrap().is_some();
                    assert_eq!(split, pairs, "{how}: launched in pairs {split}");
                }
                simulate_against(&module, &ex.spec, &case, ws.func, &expected, &how);
            }
        }
        assert!(
            split_depths >= 4,
            "{what}: split in {split_depths} of 8 schedules"
        );
        eprintln!("ok   {what}: cluster split-K, in pairs: {pairs}");
    }
    // Off by default; asked where it cannot apply, it says why.
    let case = matmul.spec.case("leaky_relu_ragged_tma").unwrap();
    let (_, plain, _) = plain_run(&matmul, case, "matmul");
    let ws = specialize(
        "matmul",
        &plain,
        &PipelineOptions::default(),
        "matmul default",
    );
    assert!(
        !ws.func.attrs.cluster_split_k,
        "{:#?}",
        ws.schedule.decisions
    );
    let opts = PipelineOptions {
        persistent: false,
        cluster_split_k: true,
        ..PipelineOptions::default()
    };
    let ws = specialize("matmul", &plain, &opts, "matmul not persistent");
    assert!(
        decided(
            &ws,
            "cluster split-K: not applied: the kernel is not persistent"
        ),
        "{:#?}",
        ws.schedule.decisions
    );
}

/// Stream-K (`--stream-k`) on GEMMs whose grids leave a partial wave on
/// the simulator's three programs, at aref depths 1-4 with MMA pipelining
/// on and off: the last tiles' K steps cut into runs one a program, a
/// tile's partial sums meeting at the program of its first step (from
/// two programs, or three where a run lies inside a tile). The outputs
/// must pass the reference check (the owner adds partial sums in another
/// order than the loop), with no deadlock; the simulator runs the
/// programs from the highest x, and a take that finds no sums (a wait
/// for a program of lower x, or a put missing) is an error.
#[test]
fn stream_k() {
    let matmul = triton_examples::load("matmul").unwrap();
    let glu = triton_examples::load("glu_dual_gemm_unmasked").unwrap();
    let case = |ex: &triton_examples::Example, name: &str| ex.spec.case(name).unwrap().clone();
    let mut wide = case(&matmul, "tiles_128x256_ragged_odd_k");
    wide.name = "tiles_128x256_ragged_odd_k_4_tiles".into();
    wide.sizes.insert("N".into(), 800); // 1 x 4 tiles: one past 3 programs
    let mut glu5 = case(&glu, "blocks_64x128x160");
    glu5.name = "blocks_64x128x160_5_tiles".into();
    glu5.sizes.insert("N".into(), 320); // 5 tiles, 5 K steps: runs of 3-4
                                        // Fewer tiles than programs (the launcher then starts them all): the
                                        // decode's 2 tiles of 3 K steps in runs of 2 over 3 programs, and 1
                                        // tile over 2 programs with the third idle.
    let decode = triton_examples::load("matmul_swap_ab").unwrap();
    let mut decode2 = case(&decode, "decode_ragged");
    decode2.name = "decode_ragged_2_tiles".into();
    decode2.sizes.insert("N".into(), 100);
    let mut decode1 = case(&decode, "decode_ragged");
    decode1.name = "decode_ragged_1_tile".into();
    decode1.sizes.insert("N".into(), 60);
    let runs = [
        (&matmul, case(&matmul, "leaky_relu_ragged_tma")),
        (&matmul, wide),
        (&glu, glu5),
        (&decode, decode2),
        (&decode, decode1),
    ];
    for (ex, case) in runs {
        let what = format!("{}/{}", ex.name, case.name);
        let (module, plain, expected) = plain_run(ex, &case, &what);
        let grid = case.grid().unwrap();
        let tiles = grid[0] * grid[1] * grid[2];
        assert!(
            tiles % common::STREAM_K_PROGRAMS != 0,
            "{what}: {tiles} tiles leave no partial wave"
        );
        for depth in 1..=4 {
            for mma_depth in [None, Some(0)] {
                let how = format!("{what} (stream-K, depth {depth}, mma depth {mma_depth:?})");
                let opts = PipelineOptions {
                    aref_depth: Some(depth),
                    mma_depth,
                    stream_k: true,
                    ..PipelineOptions::default()
                };
                let ws = specialize(&what, &plain, &opts, &how);
                assert!(
                    ws.func.attrs.stream_k && decided(&ws, "stream-K (--stream-k)"),
                    "{how}: {:#?}",
                    ws.schedule.decisions
                );
                simulate_against(&module, &ex.spec, &case, ws.func, &expected, &how);
            }
        }
        eprintln!("ok   {what}: stream-K");
    }
    // Off by default; asked where it cannot apply, it says why.
    let case = matmul.spec.case("leaky_relu_ragged_tma").unwrap();
    let (_, plain, _) = plain_run(&matmul, case, "matmul");
    let ws = specialize("matmul", &plain, &PipelineOptions::default(), "default");
    assert!(!ws.func.attrs.stream_k, "{:#?}", ws.schedule.decisions);
    let opts = PipelineOptions {
        persistent: false,
        stream_k: true,
        ..PipelineOptions::default()
    };
    let ws = specialize("matmul", &plain, &opts, "matmul not persistent");
    assert!(
        decided(&ws, "stream-K: not applied: the kernel is not persistent"),
        "{:#?}",
        ws.schedule.decisions
    );
}

/// Case `case` of `example` with its `block_k` constexpr 64 and K = `k`:
/// the example, the case, its name, and [`plain_run`]'s module, kernel
/// and bytes.
fn k64_run(
    example: &str,
    case: &str,
    block_k: &str,
    k: i64,
) -> (
    triton_examples::Example,
    triton_examples::Case,
    String,
    tawa_ir::Module,
    Function,
    Vec<Vec<u8>>,
) {
    let ex = triton_examples::load(example).unwrap();
    let mut case = ex.spec.case(case).unwrap().clone();
    case.constexprs
        .insert(block_k.into(), triton_examples::Constexpr::Int(64));
    case.sizes.insert("K".into(), k);
    let what = format!("{}/{} (BLOCK_K 64, K {k})", ex.name, case.name);
    let (module, plain, expected) = plain_run(&ex, &case, &what);
    (ex, case, what, module, plain, expected)
}

/// The driver's warp specialization of `plain` with `opts`, which must
/// apply (`how` names the run in a failure).
fn specialize(
    what: &str,
    plain: &Function,
    opts: &PipelineOptions,
    how: &str,
) -> tawa_rs::driver::Specialized {
    tawa_rs::driver::warp_specialize_function(what, plain, opts)
        .unwrap_or_else(|e| panic!("{how}: {e}"))
        .unwrap_or_else(|| panic!("{how}: not warp-specialized"))
}

/// Whether one of `ws`'s pipeline decisions says `needle`.
fn decided(ws: &tawa_rs::driver::Specialized, needle: &str) -> bool {
    ws.schedule.decisions.iter().any(|d| d.contains(needle))
}

/// `--slot-split 2` on GEMMs whose K step is 64 wide: the matmul (loop
/// index as the slot index before persistence, a carried counter after),
/// the host-descriptor matmul (`range(0, K, BLOCK_K)`, a step of 64), the
/// persistent matmul (several tiles a program) and the GLU dual GEMM (two
/// dots a slot), with ragged K whose last half step reads partly or
/// wholly past K (the unmasked GLU reads whole steps: K = 192), at aref depths 1 to 4 with the split's default of one
/// WGMMA group in flight and with none. The rings must have split, and
/// the bytes must be the plain run's, with no deadlock and no copy into a
/// slot a consumer still holds.
#[test]
fn slot_split() {
    let runs = [
        ("matmul", "leaky_relu_ragged_tma", "BLOCK_SIZE_K", 70),
        ("matmul", "bf16_ragged_tma", "BLOCK_SIZE_K", 100),
        ("matmul_tma_host", "ragged_100", "BLOCK_K", 96),
        (
            "persistent_matmul",
            "ragged_tma_few_programs",
            "BLOCK_SIZE_K",
            112,
        ),
        (
            "glu_dual_gemm_unmasked",
            "blocks_64x128x160",
            "BLOCK_K",
            192,
        ),
    ];
    for (example, case, block_k, k) in runs {
        let (ex, case, what, module, plain, expected) = k64_run(example, case, block_k, k);
        for (depth, mma_depth) in (1..=4).flat_map(|d| [(d, None), (d, Some(0))]) {
            let how = format!("{what} (slot split 2, depth {depth}, mma depth {mma_depth:?})");
            let opts = PipelineOptions {
                aref_depth: Some(depth),
                mma_depth,
                slot_split: Some(2),
                ..PipelineOptions::default()
            };
            let ws = specialize(&what, &plain, &opts, &how);
            assert!(
                decided(&ws, "split in 2"),
                "{how}: no ring split: {:#?}",
                ws.schedule.decisions
            );
            simulate_against(&module, &ex.spec, &case, ws.func, &expected, &how);
        }
        eprintln!("ok   {what}: slot split");
    }
}

/// `--slot-merge 2` on GEMMs whose loop runs over K one tile a step: the
/// matmul (to `cdiv(K, 64)`) with an even and an odd number of K steps
/// (an odd count starts one step early, its first merged box half before
/// K's start, where the copy reads zeros), one and two consumer
/// warpgroups, the kernel-built descriptor matmul and the GeGLU dual GEMM
/// (`range(0, K, BLOCK_K)`, two dots a slot in the GeGLU), the weight
/// gradient and the linear layer (a tile of the slot read through its
/// transpose: X column-major, `w.T`), and the host-descriptor matmul,
/// whose loop runs to an argument `K`: on its own descriptors' extent,
/// and 3 steps short of it (`k_short_of_descriptors`, K = 192 of 256
/// columns: a merged step past the loop's end would add columns 192-255);
/// at aref depths 4 and 6, with the default MMA depth and with none. The
/// rings must have merged and the bytes must be the plain run's.
#[test]
fn slot_merge() {
    let runs = [
        ("matmul", "leaky_relu_ragged_tma", "BLOCK_SIZE_K", 200),
        ("matmul", "leaky_relu_ragged_tma", "BLOCK_SIZE_K", 150),
        ("matmul", "bf16_ragged_tma", "BLOCK_SIZE_K", 130),
        ("matmul", "tiles_128x128_ragged", "BLOCK_SIZE_K", 190),
        ("matmul_descriptor", "ragged_100", "BLOCK_K", 160),
        ("matmul_descriptor", "ragged_100", "BLOCK_K", 250),
        ("geglu_dual_gemm", "ragged_100", "BLOCK_K", 190),
        ("weight_grad", "ragged_tokens", "BLOCK_K", 150),
        ("linear", "ragged", "BLOCK_K", 200),
        ("matmul_tma_host", "ragged_100", "BLOCK_K", 160),
        ("matmul_tma_host", "k_short_of_descriptors", "BLOCK_K", 192),
    ];
    for (example, case, block_k, k) in runs {
        let (ex, case, what, module, plain, expected) = k64_run(example, case, block_k, k);
        for (depth, mma_depth) in [4, 6].into_iter().flat_map(|d| [(d, None), (d, Some(0))]) {
            let how = format!("{what} (slot merge 2, depth {depth}, mma depth {mma_depth:?})");
            let opts = PipelineOptions {
                aref_depth: Some(depth),
                mma_depth,
                slot_merge: Some(2),
                ..PipelineOptions::default()
            };
            let ws = specialize(&what, &plain, &opts, &how);
            let decisions = &ws.schedule.decisions;
            assert!(decided(&ws, "2 K steps a slot"), "{how}: {decisions:#?}");
            simulate_against(&module, &ex.spec, &case, ws.func, &expected, &how);
        }
        eprintln!("ok   {what}: slot merge applied");
    }
}

/// `--no-tma-loads`: the producer's threads copy the pointer tiles TMA
/// would have copied (`cp.async` into the same swizzled slots), among them
/// operands the dots read transposed (the swap-AB decode's `tl.trans(b)`
/// and `tl.trans(a)`), at aref depths 1 to 4; bytes equal to the plain
/// run's. A copy whose operand the dot reads transposed lies in its slot
/// as the tile was loaded, as a TMA copy would.
#[test]
fn no_tma_loads() {
    let runs = [
        ("matmul_swap_ab", "decode_ragged"),
        ("matmul_swap_ab", "two_row_tiles"),
        ("matmul", "ragged_100"),
    ];
    for (example, case) in runs {
        let ex = triton_examples::load(example).unwrap();
        let case = ex.spec.case(case).unwrap().clone();
        let what = format!("{}/{}", ex.name, case.name);
        let (module, plain, expected) = plain_run(&ex, &case, &what);
        for depth in 1..=4 {
            let how = format!("{what} (--no-tma-loads, depth {depth})");
            let opts = PipelineOptions {
                aref_depth: Some(depth),
                tma_loads: false,
                ..PipelineOptions::default()
            };
            let ws = specialize(&what, &plain, &opts, &how);
            let tma_puts = count_ops(&ws.func, |k| matches!(k, OpKind::DescLoad { .. }));
            assert_eq!(tma_puts, 0, "{how}: TMA copies left");
            assert!(
                decided(&ws, "producer copy (cp.async"),
                "{how}: {:#?}",
                ws.schedule.decisions
            );
            simulate_against(&module, &ex.spec, &case, ws.func, &expected, &how);
        }
        eprintln!("ok   {what}: producer copies instead of TMA");
    }
}

/// The default merge of a 128x128x64 GEMM of two consumer warpgroups
/// (driver defaults, no depth asked): its 5-slot ring rounded up to 6
/// and merged into 3 slots of two K steps, with an odd and an even number
/// of steps; bytes equal to the plain run's. With the depth asked
/// (`--aref-depth 5`) the ring is not rounded up and stays one step a
/// slot, and `--explain` says why.
#[test]
fn slot_merge_rounds_up() {
    for k in [144, 250] {
        let ex = triton_examples::load("matmul").unwrap();
        let mut case = ex
            .spec
            .case("tiles_128x128_8_warps_ragged_odd_k")
            .unwrap()
            .clone();
        case.sizes.insert("K".into(), k);
        let what = format!("{}/{} (K {k})", ex.name, case.name);
        let (module, plain, expected) = plain_run(&ex, &case, &what);
        for asked in [None, Some(5)] {
            let how = format!("{what} (aref depth {asked:?})");
            let opts = PipelineOptions {
                aref_depth: asked,
                ..PipelineOptions::default()
            };
            let ws = specialize(&what, &plain, &opts, &how);
            let decisions = &ws.schedule.decisions;
            let wanted = match asked {
                None => {
                    "2 K steps a slot (the default for a ring read by 2 warpgroups, 5 slots \
                         rounded up to 6"
                }
                Some(_) => {
                    "one K step a slot: 3 slots of 2 K steps would round the depth 5 up \
                            to 6, and only a depth the compiler chose"
                }
            };
            assert!(decided(&ws, wanted), "{how}: {decisions:#?}");
            simulate_against(&module, &ex.spec, &case, ws.func, &expected, &how);
        }
        eprintln!("ok   {what}: slot merge rounds up");
    }
}

/// Cases of 32-row blocks (`leaky_relu_grouped_bt` here, `ragged_bt` and
/// `ragged_few_programs` below) stay plain in the driver: a dot of fewer
/// than 64 rows a warpgroup is no wgmma, and aref slots are read by wgmma
/// only (the partitioner alone still specializes them).
#[test]
fn matmul() {
    check_example(
        "matmul",
        &[
            "ragged_100",
            "leaky_relu_ragged_tma",
            "bf16_ragged_tma",
            "tiles_128x256_ragged_odd_k",
            "tiles_128x128_8_warps_ragged_odd_k",
        ],
    );
}

#[test]
fn matmul_block_ptr() {
    check_example("matmul_block_ptr", &["ragged_100", "ragged_tma"]);
}

#[test]
fn matmul_descriptor() {
    check_example("matmul_descriptor", &["ragged_100"]);
}

/// `ragged_tma_own_walk` is launched on its `NUM_SMS = 5` programs for 12
/// tiles: the CPU starts 2 that step by 2 (`tawa_pipeliner::own_walk`).
#[test]
fn persistent_matmul() {
    check_example(
        "persistent_matmul",
        &["ragged_tma_few_programs", "ragged_tma_own_walk"],
    );
}

/// The launch contract of the persistent examples' large cases, which walk
/// their own tiles on `NUM_SMS = 132` programs (`tawa_pipeliner::own_walk`):
/// launched on exactly 132 programs on 132 SMs, 512 and 2048 tiles start
/// 128 programs stepping by 128; another grid runs as written.
#[test]
fn persistent_examples_walk_their_tiles_wave_balanced() {
    let mut checked = 0;
    for name in ["persistent_matmul", "persistent_matmul_clamped"] {
        let ex = triton_examples::load(name).unwrap();
        for case in ex
            .spec
            .cases
            .iter()
            .filter(|c| c.name.starts_with("square_"))
        {
            let what = format!("{name}/{}", case.name);
            let opts = common::compile_options(&ex.spec, case).unwrap();
            let path = ex.py_path.display().to_string();
            let source = std::fs::read_to_string(&ex.py_path).unwrap();
            let module = tawa_frontend::compile(&path, &source, &opts)
                .unwrap_or_else(|d| panic!("{what}: {}", d.render(false)));
            let func = common::kernel_function(&module, &ex.spec).unwrap();
            let kernel = tawa_rs::driver::compile_to_cuda(
                &path,
                &source,
                func,
                Some(&PipelineOptions::default()),
                false,
            )
            .unwrap_or_else(|f| panic!("{what}: {f:?}"))
            .source;
            let walk = kernel
                .own_walk
                .as_ref()
                .unwrap_or_else(|| panic!("{what}: no own walk"));
            assert!(
                walk.tiles.is_some(),
                "{what}: the tile count is no host expression"
            );
            let grid = case.grid().unwrap();
            let args = tawa_rs::harness::launch::bind_kernel_args(case, &kernel).unwrap();
            let param = |i: usize| match args.get(i).map(|b| &b.source) {
                Some(tawa_rs::harness::launch::ArgSource::Int(v)) => Some(*v),
                _ => None,
            };
            let launched = kernel.launch_grid_for(grid, 132, true, &param);
            assert_eq!(grid, [132, 1, 1], "{what}");
            assert_eq!(launched, [128, 1, 1], "{what}");
            assert_eq!(kernel.walk_step(grid, launched), Some(128), "{what}");
            let other = [100, 1, 1];
            let launched = kernel.launch_grid_for(other, 132, true, &param);
            assert_eq!(launched, other, "{what}");
            assert_eq!(kernel.walk_step(other, launched), Some(132), "{what}");
            checked += 1;
        }
    }
    assert_eq!(
        checked, 3,
        "4096^3 and 8192^3, and the clamped one's 4096^3"
    );
}

/// The persistent tutorial's clamp (`tl.where(offs < M, offs, 0)`): the
/// clamped rows only reach masked stores, as `% M` rows do.
#[test]
fn persistent_matmul_clamped() {
    check_example(
        "persistent_matmul_clamped",
        &["ragged_tma_few_programs", "ragged_tma_clamped"],
    );
}

#[test]
fn gemm_row_reduce() {
    check_example("gemm_row_reduce", &["ragged_100"]);
}

#[test]
fn geglu_dual_gemm() {
    check_example("geglu_dual_gemm", &["ragged_100"]);
}

/// A column-major A (X read transposed): its copy is a box in the other
/// order, `trans` of which the dot reads.
#[test]
fn weight_grad() {
    check_example(
        "weight_grad",
        &["ragged_tokens", "ragged_all", "tiles_128x256_ragged_odd_k"],
    );
}

/// `tl.dot(x, w.T)`: the weight tile is copied as it lies ([N, K]) and
/// its slot read through `trans`, K-major.
#[test]
fn linear() {
    check_example(
        "linear",
        &["ragged", "k_tail_8_warps", "tiles_128x256_ragged_odd_k"],
    );
}

/// Both operands are transposes of their slots (`trans(b)` MN-major as
/// A, `trans(a)` K-major as B), and the accumulator is transposed for
/// the store; in `unaligned_rows` TMA refuses both (rows not 16 bytes
/// apart) and the producer's threads copy them.
#[test]
fn matmul_swap_ab() {
    check_example(
        "matmul_swap_ab",
        &["decode_ragged", "two_row_tiles", "unaligned_rows"],
    );
}

/// No masks at all: the outer dimensions take the largest extent, the
/// inner ones the row their stride leaves (`tma_lower::unchecked_extent`).
#[test]
fn glu_dual_gemm_unmasked() {
    check_example(
        "glu_dual_gemm_unmasked",
        &["blocks_192x96x96", "blocks_64x128x160"],
    );
}

/// The batch is a dimension of box 1 of every copy (3-D tensor maps,
/// rank-reduced loads), taken from grid axis 2.
#[test]
fn batched_matmul() {
    check_example("batched_matmul", &["ragged", "ragged_8_warps"]);
}

/// The K loop starts at a program-dependent block and strides by
/// SPLIT_K blocks; the partial products are added with atomics after it.
#[test]
fn split_k_matmul() {
    check_example("split_k_matmul", &["ragged_split_3", "split_4_8_warps"]);
}

/// The epilogue splits the accumulator in halves (reshape, permute,
/// split) after the loop: the consumer's, like any epilogue.
#[test]
fn matmul_subtiled_epilogue() {
    check_example("matmul_subtiled_epilogue", &["ragged_100x90"]);
}

#[test]
fn matmul_tma_host() {
    check_example("matmul_tma_host", &["ragged_100", "k_short_of_descriptors"]);
}

/// Attention's K and V tiles of one KV step travel in one aref; the
/// consumer releases the slot after the second dot (P @ V). Q, K and V are
/// `[z, h, rows, head_dim]` copies with two dimensions of box 1, loaded
/// rank-reduced (K a transposed box); the head dimension's extent is the
/// row its stride leaves. The ragged cases (32-row blocks, too few for
/// wgmma) stay plain.
#[test]
fn fused_attention() {
    check_example(
        "fused_attention",
        &[
            "noncausal_d64",
            "causal_d64",
            "noncausal_d128",
            "causal_d128",
            "causal_ragged_two_warpgroups",
            "noncausal_bnhd_d64",
        ],
    );
}

/// The unmodified Triton tutorial 06 (`_attn_fwd`, device-side tensor
/// descriptors) on its small launch cases (`tests/upstream/`), as the
/// driver coarse-pipelines it: the tutorial is not in the repository, so
/// the test needs `$TAWA_UPSTREAM_DIR`.
#[test]
#[ignore = "needs the upstream Triton tutorials: TAWA_UPSTREAM_DIR=DIR cargo test --test ws_simulate -- --ignored"]
fn upstream_tutorials_fused_attention_on_the_simulator() {
    check_upstream("06-fused-attention", None);
}

/// Tutorial 08's grouped GEMM with device-side tensor descriptors
/// (`grouped_matmul_tma_kernel`: base pointers, sizes and leading
/// dimensions loaded per group, the K loop inside a `while` over a group's
/// tiles inside an `if` inside the loop over groups), whose tensor maps
/// the producer builds on the device: the driver specializes the small
/// case of 64-row blocks (32-row ones are too small for wgmma).
#[test]
#[ignore = "needs the upstream Triton tutorials: TAWA_UPSTREAM_DIR=DIR cargo test --test ws_simulate -- --ignored"]
fn upstream_tutorials_grouped_gemm_tma_on_the_simulator() {
    check_upstream("08-grouped-gemm--tma", Some(&["three_ragged_gemms_64"]));
}

/// Tutorial 08's grouped GEMM on pointer tiles (`grouped_matmul_kernel`:
/// base pointers loaded per group with no alignment proof, which TMA
/// refuses): the producer's threads copy the tiles into the slots. The
/// driver specializes the small cases of 64-row blocks (32-row ones are
/// too small for wgmma).
#[test]
#[ignore = "needs the upstream Triton tutorials: TAWA_UPSTREAM_DIR=DIR cargo test --test ws_simulate -- --ignored"]
fn upstream_tutorials_grouped_gemm_on_the_simulator() {
    check_upstream("08-grouped-gemm", Some(&["three_gemms_64", "odd_lda_64"]));
}

/// Plain tile loads whose tiles an `aref.put` takes: the producer's
/// thread copies.
fn producer_copies(ws: &Function) -> usize {
    let mut n = 0;
    ws.walk(&mut |op| {
        let data = &ws.ops[op];
        if matches!(data.kind, OpKind::ArefPut) {
            n += data.operands[2..]
                .iter()
                .filter(|&&v| {
                    ws.def_op(v)
                        .is_some_and(|l| matches!(ws.ops[l].kind, OpKind::Load { .. }))
                })
                .count();
        }
    });
    n
}

/// [`check_loaded`] of the small cases of `tests/upstream/<stem>.toml`
/// over the tutorial in `$TAWA_UPSTREAM_DIR`; the driver specializes
/// `driver_specializes` (every small case when `None`).
fn check_upstream(stem: &str, driver_specializes: Option<&[&str]>) {
    let ex = upstream_example(stem);
    let small: Vec<String> = small_cases(&ex).into_iter().map(|c| c.name).collect();
    let small: Vec<&str> = small.iter().map(String::as_str).collect();
    check_loaded(&ex, driver_specializes.unwrap_or(&small));
}

/// The tutorial in `$TAWA_UPSTREAM_DIR` with the cases of
/// `tests/upstream/<stem>.toml`.
fn upstream_example(stem: &str) -> triton_examples::Example {
    let Some(dir) = std::env::var_os("TAWA_UPSTREAM_DIR") else {
        panic!("set TAWA_UPSTREAM_DIR to the directory of the upstream Triton tutorials");
    };
    let file = common::upstream_case_files()
        .into_iter()
        .find(|f| f.file_stem().is_some_and(|s| s == stem))
        .unwrap_or_else(|| panic!("tests/upstream/{stem}.toml"));
    let spec = common::load_spec_file(&file).unwrap();
    triton_examples::Example {
        name: stem.into(),
        py_path: std::path::PathBuf::from(dir).join(format!("{}.py", common::upstream_stem(&file))),
        spec,
    }
}

/// The check is not vacuous: releasing the slot before the dot reads it
/// (`aref.consumed` moved right after `aref.get`) is caught.
#[test]
fn an_early_release_is_caught() {
    let ex = triton_examples::load("matmul").unwrap();
    let case = ex.spec.case("ragged_100").unwrap();
    let module = compile_aligned(&ex, case);
    let mut ws = Pipeline::Driver
        .specialize(
            "matmul/ragged_100",
            &module.functions[0],
            2,
            (Some(0), false),
            &[],
        )
        .expect("matmul is warp-specialized");
    let mut moved = false;
    let blocks: Vec<_> = ws.blocks.keys().collect();
    for b in blocks {
        let ops = ws.blocks[b].ops.clone();
        let get = ops
            .iter()
            .position(|&o| matches!(ws.ops[o].kind, OpKind::ArefGet));
        let consumed = ops
            .iter()
            .position(|&o| matches!(ws.ops[o].kind, OpKind::ArefConsumed));
        if let (Some(g), Some(c)) = (get, consumed) {
            assert!(c > g + 1, "the release follows the reads");
            let op = ws.blocks[b].ops.remove(c);
            ws.blocks[b].ops.insert(g + 1, op);
            moved = true;
        }
    }
    assert!(moved);
    // The verifier sees it (rule 13: a read after the release in the same
    // block), and so does the simulator, which runs it anyway.
    let errs = verify_function(&ws).expect_err("the verifier sees the early release");
    assert!(
        errs.iter()
            .all(|e| e.message.contains("after the slot was released")),
        "{errs:?}"
    );
    let err = simulate_broken(module, ws, &ex.spec, case).expect_err("an early release must fail");
    assert!(err.contains("release") || err.contains("released"), "{err}");
}

/// With WGMMA groups in flight, releasing a slot one iteration early
/// (`wait_group 2` where the schedule keeps 1 group in flight, so the
/// group reading the released slot may still run) is caught: the release
/// rule of the aref docs, checked with the real release order.
#[test]
fn a_release_while_a_wgmma_is_in_flight_is_caught() {
    let ex = triton_examples::load("matmul").unwrap();
    let case = ex.spec.case("ragged_100").unwrap();
    let module = compile_aligned(&ex, case);
    let mut ws = Pipeline::Driver
        .specialize(
            "matmul/ragged_100",
            &module.functions[0],
            3,
            (Some(1), false),
            &[],
        )
        .expect("matmul is warp-specialized");
    let mut loosened = 0;
    let ops: Vec<_> = ws.ops.keys().collect();
    for op in ops {
        if let OpKind::DotWait { pending } = &mut ws.ops[op].kind {
            if *pending == 1 {
                *pending = 2;
                loosened += 1;
            }
        }
    }
    assert_eq!(loosened, 1, "one wait in the pipelined loop");
    verify_function(&ws).expect("still well-formed");
    let err = simulate_broken(module, ws, &ex.spec, case)
        .expect_err("a release while in flight must fail");
    assert!(err.contains("still in flight"), "{err}");
}

/// A software pipeline whose copies run as far ahead as the ring is deep
/// puts into the slot its own partition has not released yet: the
/// simulator must report the deadlock, not hang or pass.
#[test]
fn a_copy_a_whole_ring_ahead_deadlocks() {
    let ex = triton_examples::load("matmul").unwrap();
    let case = ex.spec.case("ragged_100").unwrap();
    let module = compile_aligned(&ex, case);
    let mut ws = Pipeline::Driver
        .specialize(
            "matmul/ragged_100",
            &module.functions[0],
            2,
            (Some(0), false),
            &[],
        )
        .expect("matmul is warp-specialized");
    tawa_pipeliner::software_pipeline::fuse(&mut ws, 2).expect("one loop to fuse");
    verify_function(&ws).expect("still well-formed");
    let err = simulate_broken(module, ws, &ex.spec, case)
        .expect_err("a put a whole ring ahead must deadlock");
    assert!(err.contains("deadlock"), "{err}");
    assert!(err.contains("'pipelined'"), "{err}");
}

/// Runs a deliberately broken `ws` (which must still verify) in place of
/// matmul's kernel on the simulator: the error it must fail with.
/// Runs `ws` (which the caller verified, or knows the verifier refuses)
/// on the simulator in place of `module`'s kernel.
fn simulate_broken(
    mut module: tawa_ir::Module,
    ws: Function,
    spec: &triton_examples::ExampleSpec,
    case: &triton_examples::Case,
) -> Result<(), String> {
    module.functions[0] = ws;
    let sim = SimOptions {
        max_steps: Some(50_000_000),
        ..SimOptions::default()
    };
    common::run_module_with(&module, spec, case, INPUT_SEED, &mut |f, a, g, m| {
        simulate_grid(f, a, g, m, &sim)
            .map(|_| ())
            .map_err(|e| e.to_string())
    })
    .map(|_| ())
}

/// The multicast schedule with one rule of its protocol broken, run over
/// several seeds: the simulator must catch each (an error or bytes other
/// than the plain run's). `break_it` edits the pair's WS IR.
fn multicast_broken(break_it: &dyn Fn(&mut Function)) -> Vec<String> {
    let ex = triton_examples::load("matmul").unwrap();
    let case = ex.spec.case("leaky_relu_ragged_tma").unwrap();
    let what = "matmul/leaky_relu_ragged_tma";
    let (module, plain, expected) = plain_run(&ex, case, what);
    let opts = PipelineOptions {
        aref_depth: Some(1),
        tma_multicast: true,
        ..PipelineOptions::default()
    };
    let mut ws = tawa_rs::driver::warp_specialize_function(what, &plain, &opts)
        .unwrap()
        .unwrap()
        .func;
    break_it(&mut ws);
    verify_function(&ws).expect("the broken schedule still verifies");
    let mut caught = Vec::new();
    for seed in 0..8 {
        let mut m = module.clone();
        m.functions[0] = ws.clone();
        let sim = SimOptions {
            seed,
            max_steps: Some(50_000_000),
            ..SimOptions::default()
        };
        match common::run_module_with(&m, &ex.spec, case, INPUT_SEED, &mut |f, a, g, mem| {
            simulate_grid(f, a, g, mem, &sim)
                .map(|_| ())
                .map_err(|e| e.to_string())
        }) {
            Err(e) => caught.push(e),
            Ok((_, got)) if got != expected => caught.push("other bytes".into()),
            Ok(_) => {}
        }
    }
    caught
}

/// A predicate of `i1` constant `value` placed before `op`.
fn constant_i1_before(ws: &mut Function, op: tawa_ir::Op, value: bool) -> tawa_ir::Value {
    let block = ws.block_of(op).unwrap();
    let at = ws.blocks[block].ops.iter().position(|&o| o == op).unwrap();
    let c = ws.insert_op(
        block,
        at,
        OpKind::Constant(tawa_ir::ConstValue::Bool(value)),
        vec![],
        vec![tawa_ir::Type::Scalar(tawa_ir::Elem::Scalar(
            tawa_ir::ScalarType::I1,
        ))],
        vec![],
        tawa_ir::Loc::UNKNOWN,
    );
    ws.ops[c].results[0]
}

/// Consumers that never release the peer's slot (arriving twice on their
/// own barrier instead): a producer multicasts into the peer's slot while
/// its consumers may still read it.
#[test]
fn a_multicast_without_the_peers_release_is_caught() {
    let caught = multicast_broken(&|ws| {
        let mut releases = Vec::new();
        ws.walk(&mut |op| {
            if ws.consumed_peer(op).is_some() && matches!(ws.ops[op].kind, OpKind::ArefConsumed) {
                releases.push(op);
            }
        });
        assert!(!releases.is_empty());
        for op in releases {
            let no = constant_i1_before(ws, op, false);
            ws.ops[op].operands[2] = no;
        }
    });
    assert!(
        !caught.is_empty(),
        "no seed caught the missing remote release"
    );
    assert!(
        caught
            .iter()
            .any(|e| e.contains("still holds") || e == "other bytes"),
        "{caught:?}"
    );
}

/// Tiles multicast although the CTAs' coordinates differ (A's rows
/// differ between consecutive tiles): each CTA gets the peer's rows.
#[test]
fn a_multicast_of_different_tiles_is_caught() {
    let caught = multicast_broken(&|ws| {
        let mut puts = Vec::new();
        ws.walk(&mut |op| {
            if matches!(ws.ops[op].kind, OpKind::ArefPut) && ws.put_multicast(op).is_some() {
                puts.push(op);
            }
        });
        for op in puts {
            let n = ws.put_values(op).len();
            for j in 0..n {
                let yes = constant_i1_before(ws, op, true);
                ws.ops[op].operands[2 + n + j] = yes;
            }
        }
    });
    assert_eq!(caught.len(), 8, "every seed: {caught:?}");
}
