//! The plain backend's entry point: tile IR function in, CUDA C++ source
//! and its launch contract out.
//!
//! Passes, in order (each in its own file, named as its CLI flag):
//! `layout_assign` (a distributed layout for every tile value),
//! `smem_alloc` (shared-memory scratch), `emit_cuda` (the source text).
//! Nothing here knows any particular kernel: every example reaches CUDA
//! through the same passes.

use tawa_ir::{Elem, Function, Loc, ScalarType, Type};

use crate::layout::Layout;
use crate::layout_assign::{Regroup, RENAME};

/// What the runtime needs to launch a generated kernel.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct KernelSource {
    /// The source function's name, for messages.
    pub name: String,
    /// The `__global__` function's symbol ([`cuda_symbol`] of `name`):
    /// what NVRTC, ptxas and the module loader know the kernel by.
    pub symbol: String,
    /// CUDA C++ for NVRTC (`-arch=sm_90a`), self-contained (no includes
    /// beyond what NVRTC ships).
    pub cuda: String,
    /// Threads per block (`num_warps * 32`); the grid is the launch case's.
    pub num_threads: u32,
    /// Dynamic shared memory in bytes (may exceed 48 KiB: the runtime opts in).
    pub dyn_smem_bytes: u32,
    /// One entry per kernel parameter, in the order of `Function::params`.
    pub params: Vec<KernelParam>,
    /// TMA tensor maps the host encodes at launch and passes after
    /// `params`, in this order, each as a `const __grid_constant__`
    /// 128-byte `CUtensorMap` (`KernelArg::Bytes`). Empty for kernels
    /// without TMA copies.
    pub tensor_maps: Vec<TensorMapParam>,
    /// Bytes of global memory each program needs for the tensor maps it
    /// builds on the device ([`TensorMapParam::device_built`]), 0 when it
    /// builds none. When positive, the kernel takes one more parameter
    /// after the tensor maps: a pointer to a workspace of this many bytes
    /// per program of the grid asked for (128-byte aligned; the launcher
    /// allocates it, its contents need not be initialized).
    #[serde(default)]
    pub device_map_workspace: u32,
    /// A stream-K kernel's workspace slot (`tawa_pipeliner::stream_k`):
    /// bytes of partial sums each program may leave for another, 0 for any
    /// other kernel. When positive, the kernel takes one more parameter,
    /// its last: a pointer to `emit_cuda::stream_k_lower::STREAM_K_FLAG_BYTES`
    /// of flags (a u32 for each program, at most
    /// `STREAM_K_MAX_PROGRAMS`), all zero before the kernel's first launch
    /// (each launch leaves them zero again), then this many bytes per
    /// program started. Launches that use one workspace must not overlap:
    /// one stream each.
    #[serde(default)]
    pub stream_k_workspace: u32,
    /// A persistent kernel's grid parameter (index into `params`): the
    /// launcher passes the x size of the grid it was asked for there and
    /// may start fewer programs along x, at least one ([`Self::launch_grid`]).
    pub grid_param: Option<usize>,
    /// With `grid_param`, for a kernel written for a grid over x and y:
    /// the parameter (index into `params`) that receives the y size; the
    /// launcher then starts a one-axis grid of at most `resident` programs,
    /// which walk the x * y tiles.
    #[serde(default)]
    pub grid_param_y: Option<usize>,
    /// With `grid_param_y`, for a kernel written for a grid over x, y and
    /// z: the parameter that receives the z size; the one-axis grid's
    /// programs walk the x * y * z tiles.
    #[serde(default)]
    pub grid_param_z: Option<usize>,
    /// Thread-block clusters to launch with (`LaunchConfig::cluster`):
    /// `[2, 1, 1]` for a persistent kernel whose CTA pairs multicast their
    /// shared TMA copies (`--tma-multicast`); `None` for no clusters.
    /// [`Self::launch_grid`] then starts an even number of programs.
    #[serde(default)]
    pub cluster: Option<[u32; 3]>,
    /// A persistent kernel whose CTA pairs may split each tile's K loop
    /// (`tawa_pipeliner::cluster_split_k`): where the tiles fill at most
    /// half the programs the device holds ([`Self::splits_k`]),
    /// [`Self::launch_grid`] starts two programs a tile and
    /// [`Self::launch_cluster`] clusters of 2; else the usual persistent
    /// grid without clusters.
    #[serde(default)]
    pub cluster_split_k: bool,
    /// Blocks one SM holds at once, as the kernel was compiled for
    /// (`__launch_bounds__`' minimum; the IR's `occupancy`): a persistent
    /// kernel starts this many programs per SM ([`Self::launch_grid`]).
    #[serde(default = "one")]
    pub occupancy: u32,
    /// A kernel that walks its own tiles, its step a parameter
    /// ([`OwnWalk`]): [`Self::launch_grid_for`] may start fewer programs
    /// than asked, and [`Self::walk_step`] says what the step parameter
    /// receives.
    #[serde(default)]
    pub own_walk: Option<OwnWalk>,
    /// The launches the kernel's schedule was chosen for
    /// (`tawa_pipeliner::Schedule::launch_guard`): correct at any launch,
    /// but a launcher that compiles on demand compiles again for a launch
    /// outside it ([`Self::chosen_for`]). `None`: chosen for every launch.
    #[serde(default)]
    pub launch_guard: Option<tawa_ir::host_expr::LaunchGuard>,
    /// Launch as a programmatic dependent of the kernel before it on the
    /// stream (`LaunchConfig::programmatic`): the kernel was generated
    /// with `griddepcontrol.wait` first (`CodegenOptions::programmatic_launch`).
    #[serde(default)]
    pub programmatic_launch: bool,
}

/// The launch contract of a kernel that walks its tiles itself
/// (`for t in range(pid, T, C)`, `tawa_pipeliner::own_walk`), its step
/// made parameter `step_param`. A launch of a grid other than `[asked, 1,
/// 1]` starts that grid and passes `asked`, the source's step: the kernel
/// runs as written. A launch of `[asked, 1, 1]` may start `n <= asked`
/// programs and pass `n`: together they still walk every tile once.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct OwnWalk {
    /// Index into `KernelSource::params` of the step parameter (an i32).
    pub step_param: usize,
    /// The step the source wrote (its `NUM_SMS`).
    pub asked: u32,
    /// The tile count `T`, from the kernel's parameters (`None`: not a
    /// host expression after all, and every launch starts the grid
    /// asked for).
    #[serde(default)]
    pub tiles: Option<HostExpr>,
}

fn one() -> u32 {
    1
}

/// For a persistent kernel launch asked for `grid`: the tiles each of
/// its walks covers (all of the grid where the kernel walks x, y and z;
/// x * y where it walks x and y, or x) and how many such walks the
/// launch holds (the planes of the axes it does not walk).
pub fn walked_tiles(grid: [u32; 3], walks_y: bool, walks_z: bool) -> (u32, u32) {
    match (walks_y, walks_z) {
        (true, true) => (grid[0].saturating_mul(grid[1]).saturating_mul(grid[2]), 1),
        (true, false) => (grid[0].saturating_mul(grid[1]), grid[2]),
        _ => (grid[0], grid[1].saturating_mul(grid[2])),
    }
}

/// The fewest programs that walk `tiles` tiles in as many waves as
/// `programs` do (`ceil(tiles / programs)` tiles each at most): 2048 tiles
/// on 132 programs take 16 waves, and so do 128 programs, each then
/// walking exactly 16. Each wave's tiles then follow the grouped order
/// of the tiles in step (on the H100, matmul.py at 4096^3, 512 tiles:
/// 726-731 TFLOP/s on 128 programs against 715-716 on 132).
pub fn wave_balanced(tiles: u32, programs: u32) -> u32 {
    if programs == 0 || tiles <= programs {
        return tiles.min(programs);
    }
    tiles.div_ceil(tiles.div_ceil(programs))
}

/// Whether CTA pairs that split K pay for a launch of `tiles` tiles in
/// each of `planes` walks on a device running `resident` programs at
/// once: where the pairs, two programs a tile, fit at once. Larger grids
/// gain nothing from halving each tile's K loop: every SM has a tile
/// already.
pub fn split_k_fits(tiles: u32, planes: u32, resident: u32) -> bool {
    tiles.saturating_mul(planes).saturating_mul(2) <= resident
}

impl KernelSource {
    /// Whether a launch whose integer parameters are `param` (by index
    /// into [`Self::params`]) is one the kernel's schedule was chosen for
    /// ([`Self::launch_guard`]).
    pub fn chosen_for(&self, param: &dyn Fn(usize) -> Option<i64>) -> bool {
        self.launch_guard.as_ref().is_none_or(|g| g.holds(param))
    }

    /// [`walked_tiles`] of this kernel's grid parameters.
    fn walked_tiles(&self, grid: [u32; 3]) -> (u32, u32) {
        walked_tiles(
            grid,
            self.grid_param_y.is_some(),
            self.grid_param_z.is_some(),
        )
    }

    /// Whether a launch asked for `grid` on a device running `resident`
    /// programs at once runs CTA pairs that split K: a kernel compiled for
    /// it whose tiles (of every plane it does not walk) fill at most half
    /// of `resident` ([`split_k_fits`]).
    pub fn splits_k(&self, grid: [u32; 3], resident: u32) -> bool {
        let (tiles, planes) = self.walked_tiles(grid);
        self.cluster_split_k && self.grid_param.is_some() && split_k_fits(tiles, planes, resident)
    }

    /// [`Self::launch_grid_with`] for a launch whose integer parameters
    /// `param` gives (by index into `params`): a kernel that walks its own
    /// tiles ([`OwnWalk`]) asked for exactly its step's programs starts,
    /// with `balance`, as few as walk its tiles in as many waves on at
    /// most `resident` of them.
    pub fn launch_grid_for(
        &self,
        grid: [u32; 3],
        resident: u32,
        balance: bool,
        param: &dyn Fn(usize) -> Option<i64>,
    ) -> [u32; 3] {
        if let Some(w) = &self.own_walk {
            if grid != [w.asked, 1, 1] || !balance {
                return grid;
            }
            let tiles = w.tiles.as_ref().and_then(|t| t.eval(param));
            let Some(tiles) = tiles.and_then(|t| u32::try_from(t).ok()) else {
                return grid;
            };
            let most = w.asked.min(resident.max(1));
            return [wave_balanced(tiles, most).max(1), 1, 1];
        }
        self.launch_grid_with(grid, resident, balance)
    }

    /// What the step parameter of a kernel that walks its own tiles
    /// receives for a launch asked for `grid` that starts `launched`: the
    /// programs started where the launch started fewer than the source's
    /// step along x, the source's step otherwise. `None` for other
    /// kernels.
    pub fn walk_step(&self, grid: [u32; 3], launched: [u32; 3]) -> Option<u32> {
        let w = self.own_walk.as_ref()?;
        Some(if grid == [w.asked, 1, 1] && launched[0] < w.asked {
            launched[0]
        } else {
            w.asked
        })
    }

    /// The thread-block clusters of a launch asked for `grid` (see
    /// [`Self::launch_grid`]).
    pub fn launch_cluster(&self, grid: [u32; 3], resident: u32) -> Option<[u32; 3]> {
        if self.splits_k(grid, resident) {
            return Some([2, 1, 1]);
        }
        self.cluster
    }

    /// The grid to start for a launch asked for `grid`, on a device that
    /// runs `resident` programs at once ([`crate::runtime::resident_programs`]):
    /// a persistent kernel gets at most `resident` programs along x (it
    /// walks the rest itself), as few as walk its tiles in as many waves
    /// ([`wave_balanced`]), but a stream-K kernel with fewer tiles than
    /// that gets all `resident`; any other kernel gets `grid`.
    pub fn launch_grid(&self, grid: [u32; 3], resident: u32) -> [u32; 3] {
        self.launch_grid_with(grid, resident, true)
    }

    /// [`Self::launch_grid`], with `balance` false starting a persistent
    /// kernel's `resident` programs even where fewer would walk its tiles
    /// in as many waves (the ablation baseline, `TAWA_WAVE_BALANCE=0`).
    pub fn launch_grid_with(&self, grid: [u32; 3], resident: u32, balance: bool) -> [u32; 3] {
        let programs = |tiles: u32| {
            let resident = resident.max(1);
            if self.stream_k_workspace > 0 && tiles < resident {
                // Fewer tiles than the GPU holds are one partial wave: a
                // stream-K kernel shares their K steps among all of them
                // (64 tiles on 132 SMs: 128 programs of half a tile each).
                return resident;
            }
            let most = tiles.min(resident);
            if balance && self.cluster.is_none() {
                wave_balanced(tiles, most)
            } else {
                most
            }
        };
        let launched = match (self.grid_param, self.grid_param_y, self.grid_param_z) {
            (Some(_), Some(_), Some(_)) => [
                programs(grid[0].saturating_mul(grid[1]).saturating_mul(grid[2])),
                1,
                1,
            ],
            (Some(_), Some(_), None) => [programs(grid[0].saturating_mul(grid[1])), 1, grid[2]],
            (Some(_), None, _) => [programs(grid[0]), grid[1], grid[2]],
            (None, _, _) => grid,
        };
        if self.splits_k(grid, resident) {
            // Two programs a tile: pair p = program / 2 walks from tile p.
            return [
                self.walked_tiles(grid).0.saturating_mul(2),
                launched[1],
                launched[2],
            ];
        }
        match self.cluster {
            // CTA pairs: program 2c + r is rank r of cluster c, and the
            // peer of tile t is t ^ 1 only with an even stride. Fewer
            // than `resident` (rounded down to pairs), never more pairs
            // than the tiles fill.
            Some([2, 1, 1]) if self.grid_param.is_some() => {
                // The tiles along x the programs walk: all of them where
                // the kernel walks the whole grid, else x's.
                let (tiles, _) = self.walked_tiles(grid);
                let pairs = tiles.div_ceil(2).min((resident / 2).max(1)).max(1);
                [pairs * 2, launched[1], launched[2]]
            }
            _ => launched,
        }
    }
}

/// One TMA tensor map of a kernel, described in terms of the kernel's own
/// parameters so that the host can build it from the launch arguments:
/// the runtime's `TensorMapSpec` with every number still an expression.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TensorMapParam {
    /// Name used in the generated source (`tw_tmap0`, ...).
    pub name: String,
    pub elem: ScalarType,
    /// Index into `KernelSource::params` of the pointer parameter holding
    /// element (0, ..., 0) of the global tensor.
    pub base: usize,
    /// Extents in elements, innermost dimension first (the driver's order).
    pub extents: Vec<HostExpr>,
    /// Strides in *elements* of `extents[1..]` (the innermost dimension is
    /// dense); the host multiplies by the element size.
    pub strides: Vec<HostExpr>,
    /// Box extents in elements, innermost first.
    pub box_extents: Vec<u32>,
    /// Shared-memory swizzle span in bytes: 0 (none), 32, 64 or 128.
    pub swizzle_bytes: u32,
    /// How many bytes the L2 cache fetches from memory for each line a
    /// copy misses on (the tensor map's L2 promotion): 0 (no promotion),
    /// 64, 128 or 256. See [`CodegenOptions::wide_l2_promotion`].
    #[serde(default = "default_l2_promotion")]
    pub l2_promotion_bytes: u32,
    /// A template for a tensor map the kernel builds itself: its base,
    /// extents and strides are values the kernel computes (loaded from a
    /// pointer array, as in grouped GEMM), so the host encodes only what
    /// is known before the launch (element type, rank, box, swizzle) over
    /// placeholder address, extents and strides, and the kernel replaces
    /// those (`tensormap.replace`) in its workspace
    /// ([`KernelSource::device_map_workspace`]). `base`, `extents` and
    /// `strides` are then unused.
    #[serde(default)]
    pub device_built: bool,
}

/// What kernels compiled before `l2_promotion_bytes` existed encoded.
fn default_l2_promotion() -> u32 {
    128
}

/// Expressions of `TensorMapParam` (defined in the IR crate, which also
/// derives them: `tawa_ir::host_expr`).
pub use tawa_ir::host_expr::HostExpr;

/// A kernel parameter as passed at launch.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct KernelParam {
    pub name: String,
    pub ty: ParamType,
}

/// How a parameter is passed: pointers as 64-bit device addresses, scalars
/// by value with their own width (`i1` as a 1-byte C++ `bool`, `f16`/`bf16` as
/// their 2-byte bits).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum ParamType {
    Ptr(ScalarType),
    Scalar(ScalarType),
}

/// Options of the plain backend.
#[derive(Clone, Debug)]
pub struct CodegenOptions {
    /// Write `// line:col` comments pointing into this source file.
    pub source_path: Option<String>,
    /// Let `dot` operands whose registers run along M/N lie MN-major in
    /// shared memory (16-byte stores, wgmma's transpose bit) instead of
    /// being transposed into K-major. On by default (GPU suite green, 4096³
    /// GEMM 5x faster, 2026-11-23); `TAWA_DISABLE=mn-major` turns it off
    /// for ablations.
    pub mn_major_operands: bool,
    /// Anchor each global load's layout along the dimension its pointers
    /// are contiguous in (`layout_assign::load_anchor`) instead of the
    /// last one. On by default; `TAWA_DISABLE=coalesce` turns it off.
    pub coalesce_loads: bool,
    /// Write `desc_store`s of host-built descriptors back with TMA stores
    /// through a shared-memory staging buffer (`tma_store_lower`).
    /// On by default; `--no-tma-store` turns it off (the stores are then
    /// element-wise `st.global`), for ablations.
    pub tma_store: bool,
    /// TMA loads ask the L2 cache for 256-byte promotion instead of 128
    /// (TMA stores keep 128). Measured, not modelled: tutorial 09's
    /// persistent TMA kernels went from 0.98x to 1.00x Triton at 8192³,
    /// the other GEMMs and the memory-bound decode level (bench/RESULTS.md,
    /// 2026-11-27, fourteenth session). Probably because a GEMM's boxes
    /// read rows of 128 bytes (64 f16 along K) that the next K step
    /// continues, so one fetch brings in both steps' rows. On by default;
    /// `TAWA_DISABLE=wide-l2-promotion` turns it off.
    pub wide_l2_promotion: bool,
    /// Programmatic dependent launch: the kernel starts with
    /// `griddepcontrol.wait` (nothing of it touches global memory before
    /// the kernel before it on the stream has finished and its writes are
    /// visible) and then `griddepcontrol.launch_dependents` (the kernel
    /// after it may be scheduled as soon as every block of this one has
    /// started), and [`KernelSource::programmatic_launch`] has the
    /// launcher ask for it. Back to back, the next kernel's launch and
    /// its blocks' start then overlap this one's last blocks. Off in this
    /// default (without the launch attribute both instructions do
    /// nothing); the driver turns it on as
    /// `PipelineOptions::programmatic_launch` says (by default for the
    /// kernels whose programs walk the tiles).
    pub programmatic_launch: bool,
}

impl Default for CodegenOptions {
    fn default() -> Self {
        CodegenOptions {
            source_path: None,
            mn_major_operands: true,
            coalesce_loads: true,
            tma_store: true,
            wide_l2_promotion: true,
            programmatic_launch: false,
        }
    }
}

/// Why a function could not be turned into CUDA: an op or type the backend
/// does not support (yet), with the op's source position.
#[derive(Clone, Debug, PartialEq)]
pub struct CodegenError {
    pub loc: Loc,
    pub message: String,
    /// Extra lines for the diagnostic (why, what to do instead).
    pub notes: Vec<String>,
}

impl std::fmt::Display for CodegenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.loc.is_known() {
            write!(f, "{}:{}: ", self.loc.line, self.loc.col)?;
        }
        write!(f, "{}", self.message)
    }
}

impl std::error::Error for CodegenError {}

/// The launch types of a function's parameters.
pub fn kernel_params(func: &Function) -> Result<Vec<KernelParam>, CodegenError> {
    func.params
        .iter()
        .map(|p| {
            let ty = match &func.values[p.value].ty {
                Type::Scalar(Elem::Scalar(s)) => ParamType::Scalar(*s),
                Type::Scalar(Elem::Ptr(s)) => ParamType::Ptr(*s),
                other => {
                    return Err(CodegenError {
                        loc: Loc::UNKNOWN,
                        message: format!(
                            "parameter `{}` has type {other}, which cannot be passed to a kernel",
                            p.name
                        ),
                        notes: Vec::new(),
                    })
                }
            };
            Ok(KernelParam {
                name: p.name.clone(),
                ty,
            })
        })
        .collect()
}

/// Generates the CUDA source of one kernel: `combine` (on a copy), then
/// `layout_assign`, the axis analysis and `emit_cuda` (which also sizes
/// shared memory).
pub fn generate_cuda(func: &Function, opts: &CodegenOptions) -> Result<KernelSource, CodegenError> {
    let params = kernel_params(func)?;
    let emitted = emit(func, opts)?;
    if emitted.smem_bytes > MAX_DYN_SMEM_BYTES {
        return Err(CodegenError {
            loc: first_aref_loc(func),
            message: format!(
                "the kernel needs {} bytes of shared memory; an sm_90 block can have at most {MAX_DYN_SMEM_BYTES}",
                emitted.smem_bytes
            ),
            notes: vec![
                "use smaller blocks, or fewer aref slots (`--aref-depth`, `--num-stages`)".into(),
            ],
        });
    }
    let own_walk = own_walk(func, &params);
    Ok(KernelSource {
        name: func.name.clone(),
        symbol: cuda_symbol(&func.name),
        cuda: emitted.cuda,
        num_threads: emitted.num_threads,
        dyn_smem_bytes: emitted.smem_bytes,
        grid_param: func
            .attrs
            .grid_param
            .as_ref()
            .and_then(|n| params.iter().position(|p| p.name == *n)),
        grid_param_y: func
            .attrs
            .grid_param_y
            .as_ref()
            .and_then(|n| params.iter().position(|p| p.name == *n)),
        grid_param_z: func
            .attrs
            .grid_param_z
            .as_ref()
            .and_then(|n| params.iter().position(|p| p.name == *n)),
        cluster: (func.attrs.cluster == 2).then_some([2, 1, 1]),
        cluster_split_k: func.attrs.cluster_split_k,
        params,
        tensor_maps: emitted.tensor_maps,
        device_map_workspace: emitted.device_map_workspace,
        stream_k_workspace: emitted.stream_k_workspace,
        occupancy: func.attrs.occupancy.max(1),
        own_walk,
        launch_guard: None,
        programmatic_launch: opts.programmatic_launch,
    })
}

/// The launch contract of a kernel that walks its own tiles with the step
/// a parameter (`FuncAttrs::walk_step`): the parameter, the source's step
/// and the tile count of the loop that steps by it, as the host computes
/// it (where it can; the launcher otherwise starts the grid asked for).
/// `None` for other kernels.
fn own_walk(func: &Function, params: &[KernelParam]) -> Option<OwnWalk> {
    let (name, asked) = func.attrs.walk_step.as_ref()?;
    let index = params.iter().position(|p| p.name == *name)?;
    let step = func.params.get(index)?.value;
    let mut tiles = None;
    func.walk(&mut |op| {
        let data = &func.ops[op];
        if tiles.is_none()
            && matches!(data.kind, tawa_ir::OpKind::For(_))
            && data.operands[2] == step
        {
            tiles = tawa_ir::host_expr::host_expr(func, data.operands[1]);
        }
    });
    Some(OwnWalk {
        step_param: index,
        asked: *asked,
        tiles,
    })
}

/// The dynamic shared memory the kernel generated from `func` would
/// need, whether or not a block can have that much (the pipeliner sizes
/// aref rings from it).
pub fn shared_memory_bytes(func: &Function, opts: &CodegenOptions) -> Result<u32, CodegenError> {
    Ok(emit(func, opts)?.smem_bytes)
}

/// `combine` (on a copy), `layout_assign`, the axis analysis, `emit_cuda`.
/// The function `emit_cuda` reads: `combine`d (on a copy), with its axis
/// facts and home layouts.
fn laid_out(
    func: &Function,
    opts: &CodegenOptions,
) -> Result<
    (
        Function,
        tawa_ir::axis_info::AxisInfoMap,
        crate::layout_assign::LayoutMap,
    ),
    CodegenError,
> {
    let mut func = func.clone();
    tawa_ir::combine::combine(&mut func);
    if let Err(errors) = tawa_ir::verify_function(&func) {
        return Err(CodegenError {
            loc: Loc::UNKNOWN,
            message: format!("internal: `combine` left invalid IR: {}", errors[0]),
            notes: errors.iter().skip(1).map(|e| e.to_string()).collect(),
        });
    }
    let axis = tawa_ir::axis_info::analyze(&func);
    let layouts =
        crate::layout_assign::assign_layouts_with(&func, opts.coalesce_loads.then_some(&axis))?;
    Ok((func, axis, layouts))
}

fn emit(func: &Function, opts: &CodegenOptions) -> Result<crate::emit_cuda::Emitted, CodegenError> {
    let (func, axis, layouts) = laid_out(func, opts)?;
    let func = &func;
    check_tile_registers(func, &layouts)?;
    let source = opts
        .source_path
        .as_ref()
        .and_then(|p| std::fs::read_to_string(p).ok());
    crate::emit_cuda::emit(
        func,
        &layouts,
        &axis,
        source.as_deref(),
        opts.mn_major_operands,
        opts.tma_store,
        if opts.wide_l2_promotion { 256 } else { 128 },
        opts.programmatic_launch,
    )
}

/// `--explain` lines about the layouts: how each `reshape`, `split` and
/// `join` moves its tile's elements (a register rename, or shared memory
/// and why not a rename), at its source position. Empty when the kernel
/// has none, or when the backend cannot lay it out (generating it says
/// why).
pub fn layout_notes(func: &Function, opts: &CodegenOptions) -> Vec<(Loc, String)> {
    let Ok((func, _, layouts)) = laid_out(func, opts) else {
        return Vec::new();
    };
    let mut notes = Vec::new();
    func.walk(&mut |op| {
        let data = &func.ops[op];
        let what = tawa_ir::printer::op_name(&data.kind);
        let home = |v| layouts.home(v);
        let note = match layouts.regroup(op) {
            Some(Regroup::Rename { .. }) => {
                let layout = home(data.results[0]).map_or(String::new(), |l| format!(" ({l})"));
                format!("{what}: {RENAME}{layout}")
            }
            Some(Regroup::Shared(why)) => {
                format!("{what}: through shared memory, not a register rename: {why}")
            }
            // A permute between them (of a reshaped tile) is always one;
            // other transposes are the operand buffers' business.
            None if matches!(data.kind, tawa_ir::OpKind::Trans { .. })
                && matches!(home(data.operands[0]), Some(Layout::Linear(_))) =>
            {
                format!("{what}: {RENAME}")
            }
            None => return,
        };
        notes.push((data.loc, note));
    });
    notes
}

/// The CUDA symbol of a kernel named `name` in Python. Any Python
/// identifier is a kernel name, but not every one is a usable `extern "C"`
/// symbol: C++ keywords (`new`, `template`), non-ASCII letters, and the
/// many names NVRTC's built-in headers already give C linkage (`max`,
/// `printf`, `expf`, `size_t`, `make_float4`). Names shaped like the ones
/// kernels usually have and CUDA's never do — lowercase snake case with an
/// underscore, at most one leading underscore, not ending in `_t` nor
/// starting with a CUDA or tawa-rs prefix — are kept as they are, so that
/// profilers show them; any other becomes `tw_k_` followed by its ASCII
/// letters, digits and underscores and `_uXXXX_` for each other character.
pub fn cuda_symbol(name: &str) -> String {
    const KEYWORDS_WITH_UNDERSCORE: [&str; 9] = [
        "static_assert",
        "static_cast",
        "dynamic_cast",
        "reinterpret_cast",
        "const_cast",
        "thread_local",
        "co_await",
        "co_return",
        "co_yield",
    ];
    const CUDA_PREFIXES: [&str; 5] = ["tw_", "make_", "nv_", "cuda", "cu"];
    let body = name.strip_prefix('_').unwrap_or(name);
    let kept = body.starts_with(|c: char| c.is_ascii_lowercase())
        && body
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && body.contains('_')
        && !body.contains("__")
        && !body.ends_with("_t")
        && !CUDA_PREFIXES.iter().any(|p| name.starts_with(p))
        && !KEYWORDS_WITH_UNDERSCORE.contains(&name);
    if kept {
        return name.to_string();
    }
    let mut symbol = String::from("tw_k_");
    for c in name.chars() {
        if c.is_ascii_alphanumeric() || c == '_' {
            symbol.push(c);
        } else {
            symbol.push_str(&format!("_u{:04x}_", u32::from(c)));
        }
    }
    symbol
}

/// The most dynamic shared memory one block may opt into on sm_90 (227 KiB).
pub const MAX_DYN_SMEM_BYTES: u32 = 227 * 1024;

/// Where to point a shared-memory overflow: the first aref ring, which is
/// what grows with `--aref-depth`, else nowhere in particular.
/// Elements of one tile a thread may hold in registers. The backend keeps
/// every tile in registers, unrolled element by element: past the register
/// file (255 per thread) the kernel spills, and NVRTC's time grows with the
/// unrolled code (vector_add over 4 warps: 256 per thread 2 s, 512 9 s,
/// 1024 44 s, 8192 more than five minutes). The CLI reports the spills of
/// what this lets through.
pub const MAX_TILE_ELEMENTS_PER_THREAD: u32 = 256;

/// Refuses, before any code is written, a tile too large to hold in
/// registers (see [`MAX_TILE_ELEMENTS_PER_THREAD`]), at the op that makes it.
fn check_tile_registers(
    func: &Function,
    layouts: &crate::layout_assign::LayoutMap,
) -> Result<(), CodegenError> {
    let mut err = None;
    func.walk(&mut |op| {
        if err.is_some() {
            return;
        }
        let data = &func.ops[op];
        for &v in &data.results {
            let ty = func.ty(v);
            let (Some(layout), true) = (layouts.home(v), ty.is_tensor()) else {
                continue;
            };
            let shape = ty.shape();
            let per_thread = layout.regs_per_thread(shape);
            if per_thread > MAX_TILE_ELEMENTS_PER_THREAD {
                let dims: Vec<String> = shape.iter().map(u32::to_string).collect();
                let warps = layouts.num_warps();
                err = Some(CodegenError {
                    loc: data.loc,
                    message: format!(
                        "a tile of shape [{}] is {per_thread} elements per thread over {warps} warps; tiles live in registers, at most {MAX_TILE_ELEMENTS_PER_THREAD} elements per thread",
                        dims.join(", ")
                    ),
                    notes: vec![format!(
                        "with {warps} warps a tile has at most {} elements: use smaller blocks (a BLOCK_* constexpr) or more warps (--num-warps, up to 32)",
                        u64::from(MAX_TILE_ELEMENTS_PER_THREAD) * u64::from(warps) * 32
                    )],
                });
                return;
            }
        }
    });
    err.map_or(Ok(()), Err)
}

fn first_aref_loc(func: &Function) -> Loc {
    let mut loc = Loc::UNKNOWN;
    func.walk(&mut |op| {
        let data = &func.ops[op];
        if matches!(data.kind, tawa_ir::OpKind::ArefCreate) && !loc.is_known() {
            loc = data.loc;
        }
    });
    loc
}

#[cfg(test)]
mod wave_tests {
    use super::{wave_balanced, KernelSource};

    /// A persistent kernel over x, with a stream-K workspace or not.
    fn persistent(stream_k_workspace: u32) -> KernelSource {
        KernelSource {
            name: "k".into(),
            symbol: "k".into(),
            cuda: String::new(),
            num_threads: 384,
            dyn_smem_bytes: 0,
            params: Vec::new(),
            tensor_maps: Vec::new(),
            device_map_workspace: 0,
            stream_k_workspace,
            grid_param: Some(0),
            grid_param_y: None,
            grid_param_z: None,
            cluster: None,
            cluster_split_k: false,
            occupancy: 1,
            own_walk: None,
            launch_guard: None,
            programmatic_launch: false,
        }
    }

    #[test]
    fn a_stream_k_kernel_with_one_partial_wave_starts_every_program() {
        // (tiles, resident) -> (programs started, stream-K programs started).
        for (tiles, resident, plain, stream_k) in [
            (64, 132, 64, 132), // the swap-AB decode: half a tile each
            (1, 132, 1, 132),
            (131, 132, 131, 132),
            (132, 132, 132, 132),
            (512, 132, 128, 128), // whole waves: as balanced as any
            (2048, 132, 128, 128),
            (5, 3, 3, 3),
        ] {
            let got = (
                persistent(0).launch_grid([tiles, 1, 1], resident)[0],
                persistent(64).launch_grid([tiles, 1, 1], resident)[0],
            );
            assert_eq!(got, (plain, stream_k), "{tiles} tiles on {resident}");
        }
    }

    #[test]
    fn a_kernel_walking_its_own_tiles_starts_fewer_only_when_asked_for_its_step() {
        use super::{HostExpr, OwnWalk};
        let mut k = persistent(0);
        k.grid_param = None;
        // T = parameter 0; the source steps by 132.
        k.own_walk = Some(OwnWalk {
            step_param: 1,
            asked: 132,
            tiles: Some(HostExpr::Param(0)),
        });
        // (asked, tiles, resident, balance) -> (programs started, step passed).
        for (asked, tiles, resident, balance, want) in [
            (132, 512, 132, true, (128, 128)), // 4 waves on 128
            (132, 2048, 132, true, (128, 128)),
            (132, 2752, 132, true, (132, 132)), // 21 waves need all
            (132, 512, 132, false, (132, 132)), // TAWA_WAVE_BALANCE=0
            (132, 64, 132, true, (64, 64)),     // fewer tiles than programs
            (132, 512, 66, true, (64, 64)),     // half the GPU resident: 8 waves on 64
            (100, 512, 132, true, (100, 132)),  // another grid: as written
        ] {
            let grid = [asked, 1, 1];
            let param = |i: usize| (i == 0).then_some(i64::from(tiles));
            let launched = k.launch_grid_for(grid, resident, balance, &param);
            let got = (launched[0], k.walk_step(grid, launched).unwrap());
            assert_eq!(
                got, want,
                "{asked} asked, {tiles} tiles, {resident} resident"
            );
        }
    }

    #[test]
    fn the_fewest_programs_that_take_as_many_waves() {
        // (tiles, programs) -> programs started.
        for (tiles, programs, want) in [
            (2048, 132, 128), // 16 waves either way
            (512, 132, 128),  // 4
            (4096, 132, 128), // 32
            (2752, 132, 132), // 21 waves need 132
            (133, 132, 67),   // 2 waves
            (64, 132, 64),    // fewer tiles than programs: unchanged
            (132, 132, 132),
            (0, 0, 0),
        ] {
            assert_eq!(
                wave_balanced(tiles, programs),
                want,
                "{tiles} tiles, {programs}"
            );
            if programs > 0 && tiles > 0 {
                assert_eq!(
                    tiles.div_ceil(want),
                    tiles.div_ceil(programs.min(tiles)),
                    "{tiles} tiles: the waves must not change"
                );
            }
        }
    }
}
