//! The compilation pipeline behind the CLI: read → frontend → verifier →
//! CUDA generation → NVRTC → ptxas, stopping where `--emit` asks. Each
//! stage's failure becomes a [`Failure`] with the text to print and the exit
//! code; the GPU harness ([`crate::harness`]) runs the same stages through
//! the same functions.

use std::fs;
use std::io::Write;
use std::path::Path;

use tawa_backend::runtime::{self, Compiled, RuntimeError};
use tawa_backend::{CodegenError, CodegenOptions, KernelSource};
use tawa_frontend::{CompileOptions, Diagnostic, Diagnostics};
use tawa_ir::{printer, verifier, Function, Module};
use tawa_pipeliner::{PipelineOptions, Schedule, SmemModel};

use crate::cli::{CompileCommand, Emit};

/// A failed run: what to print on standard error and the exit code.
#[derive(Debug, Clone)]
pub struct Failure {
    pub message: String,
    pub exit_code: u8,
}

impl Failure {
    /// An error in the user's kernel, files or options (exit code 1).
    pub fn user(message: String) -> Failure {
        Failure {
            message,
            exit_code: 1,
        }
    }

    /// A compiler bug (exit code 3).
    pub fn internal(message: String) -> Failure {
        Failure {
            message: format!(
                "internal compiler error: {message}\nplease report this with the kernel file and the command line\n"
            ),
            exit_code: 3,
        }
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.message.trim_end())
    }
}

/// Reads a kernel file as UTF-8.
pub fn read_source(path: &Path) -> Result<String, Failure> {
    let shown = path.display();
    let bytes = fs::read(path)
        .map_err(|e| Failure::user(format!("error: cannot read `{shown}`: {e}\n")))?;
    String::from_utf8(bytes).map_err(|e| {
        Failure::user(format!(
            "error: `{shown}` is not valid UTF-8 (byte {} is not part of a UTF-8 character)\n",
            e.utf8_error().valid_up_to()
        ))
    })
}

/// The launch cases of `kernel_file`, from the `.toml` file beside it; a
/// missing file gets a message that says what the file is and where to
/// find examples of it, not only the system's "No such file".
pub fn load_launch_cases(kernel_file: &Path) -> Result<triton_examples::Example, Failure> {
    let toml_path = kernel_file.with_extension("toml");
    if kernel_file.is_file() && !toml_path.exists() {
        return Err(Failure::user(format!(
            "error: `{}` has no launch cases: they are read from `{}` beside it, which does not exist\n  = help: `run`, `bench` and `--case` need one; the examples in triton-examples/kernels/ show its format\n  = help: to compile the kernel without launch cases, give --signature\n",
            kernel_file.display(),
            toml_path.display()
        )));
    }
    triton_examples::load_beside(kernel_file).map_err(|e| Failure::user(format!("error: {e}\n")))
}

/// The frontend options of launch case `case_name` of the `.toml` file
/// beside `kernel_file`, merged under the explicit ones in `opts` (which
/// win).
pub fn apply_case(
    kernel_file: &Path,
    case_name: &str,
    mut opts: CompileOptions,
) -> Result<CompileOptions, Failure> {
    let example = load_launch_cases(kernel_file)?;
    let case = example.spec.case(case_name).map_err(|e| {
        let names: Vec<&str> = example.spec.cases.iter().map(|c| c.name.as_str()).collect();
        Failure::user(format!("error: --case: {e}; cases: {}\n", names.join(", ")))
    })?;
    let args = example
        .spec
        .compile_args(case)
        .map_err(|e| Failure::user(format!("error: --case {case_name}: {e}\n")))?;
    opts.kernel = opts.kernel.or(args.kernel);
    opts.signature = opts.signature.or(args.signature);
    // Explicit -D bindings come last so that they win.
    let mut defines = args.defines;
    defines.append(&mut opts.defines);
    opts.defines = defines;
    opts.num_warps = opts.num_warps.or(args.num_warps);
    opts.num_stages = opts.num_stages.or(args.num_stages);
    Ok(opts)
}

/// The integer arguments of launch case `case_name` of the `.toml` file
/// beside `kernel_file`, by name: the launch `--case` compiles for.
pub fn case_launch_values(
    kernel_file: &Path,
    case_name: &str,
) -> Result<Vec<(String, i64)>, Failure> {
    let example = load_launch_cases(kernel_file)?;
    example
        .spec
        .case(case_name)
        .and_then(|case| case.int_launch_values())
        .map_err(|e| Failure::user(format!("error: --case {case_name}: {e}\n")))
}

/// The advertised form, `tawa-rs kernel.py --arch sm90`, gives neither
/// `--case` nor `--signature`: when launch cases lie beside the kernel (for
/// the kernel asked for, if `--kernel` names one), the first is compiled,
/// and standard error says which and how to pick another. `None` without
/// such cases: the frontend then asks for a signature and shows a template.
pub fn first_case_beside(
    kernel_file: &Path,
    kernel: Option<&str>,
) -> Result<Option<String>, Failure> {
    let toml_path = kernel_file.with_extension("toml");
    if !toml_path.is_file() || !kernel_file.is_file() {
        return Ok(None);
    }
    let example = load_launch_cases(kernel_file).map_err(|f| Failure {
        message: format!(
            "{}  = help: or compile without launch cases: give --signature\n",
            f.message
        ),
        ..f
    })?;
    if kernel.is_some_and(|k| k != example.spec.kernel) {
        return Ok(None);
    }
    let names: Vec<&str> = example.spec.cases.iter().map(|c| c.name.as_str()).collect();
    let Some(first) = names.first() else {
        return Ok(None);
    };
    let others = if names.len() > 1 {
        format!(" (the first of {}: {})", names.len(), names.join(", "))
    } else {
        String::new()
    };
    eprintln!(
        "note: compiling launch case `{first}` of `{}`{others}; pick one with --case NAME, or give --signature",
        toml_path.display()
    );
    Ok(Some(first.to_string()))
}

/// Frontend, then the verifier. `path` is the file name shown in
/// diagnostics.
pub fn frontend(
    path: &str,
    source: &str,
    opts: &CompileOptions,
    color: bool,
) -> Result<Module, Failure> {
    let module = tawa_frontend::compile(path, source, opts)
        .map_err(|diags| Failure::user(diags.render(color)))?;
    // Every stage must leave IR the verifier accepts; a rejection here is
    // a compiler bug, not the user's.
    if let Err(errors) = verifier::verify_module(&module) {
        let list: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
        return Err(Failure::internal(format!(
            "the frontend produced invalid IR:\n{}",
            list.join("\n")
        )));
    }
    for func in &module.functions {
        eprint!("{}", kernel_warnings(path, source, func, color));
    }
    Ok(module)
}

/// Warnings about hazards the compiler can prove and the GPU would not
/// report well (a hang, a stray access): compilation goes on.
pub fn kernel_warnings(path: &str, source: &str, func: &Function, color: bool) -> String {
    let at = |loc: tawa_ir::Loc| {
        let offset = byte_offset(source, loc.line as usize, loc.col as usize);
        offset..offset
    };
    let mut list: Vec<(tawa_ir::Loc, Diagnostic)> = Vec::new();
    for loc in endless_loops(func) {
        list.push((loc, Diagnostic::warning(at(loc), "this `while` loop never ends: its condition is always true")
            .with_label("the kernel hangs the GPU here")
            .with_note("Triton kernels have no `break` and cannot `return` inside a loop; loop while a condition on the loop's variables holds")));
    }
    for access in tawa_partitioner::before_base::unmasked_accesses_before_base(func) {
        let (what, verb) = if access.is_store {
            ("store", "writes")
        } else {
            ("load", "reads")
        };
        list.push((access.loc, Diagnostic::warning(
            at(access.loc),
            format!("this unmasked {what} {verb} before the start of `{}`", access.param),
        )
        .with_label(format!(
            "program 0 {verb} element {} of `{}` here",
            access.offset, access.param
        ))
        .with_note(if access.is_tile {
            format!(
                "memory before a pointer argument is not the kernel's; start the offsets at 0, or mask the {what} (e.g. `mask=offs >= {}`)",
                -access.offset
            )
        } else {
            "memory before a pointer argument is not the kernel's; the offset must not be negative".to_string()
        })));
    }
    if list.is_empty() {
        return String::new();
    }
    list.sort_by_key(|(loc, _)| (loc.line, loc.col));
    Diagnostics::new(path, source, list.into_iter().map(|(_, d)| d).collect()).render(color)
}

/// Each `while` loop whose condition is the constant true: Triton kernels
/// have no `break` and cannot `return` inside a loop, so such a loop never
/// ends and the kernel hangs the GPU.
fn endless_loops(func: &Function) -> Vec<tawa_ir::Loc> {
    let mut found = Vec::new();
    func.walk(&mut |op| {
        let data = &func.ops[op];
        if !matches!(data.kind, tawa_ir::OpKind::While) {
            return;
        }
        let Some(&before) = data.regions.first() else {
            return;
        };
        let Some(&cond_op) = func.blocks[before].ops.last() else {
            return;
        };
        let always = func.ops[cond_op]
            .operands
            .first()
            .and_then(|&c| func.def_op(c))
            .is_some_and(|def| match &func.ops[def].kind {
                tawa_ir::OpKind::Constant(tawa_ir::ConstValue::Bool(b)) => *b,
                tawa_ir::OpKind::Constant(tawa_ir::ConstValue::Int(i)) => *i != 0,
                _ => false,
            });
        if always {
            found.push(data.loc);
        }
    });
    found
}

/// The one kernel function of a module the frontend produced.
pub fn kernel_function(module: &Module) -> Result<&Function, Failure> {
    match module.functions.as_slice() {
        [f] => Ok(f),
        fs => Err(Failure::internal(format!(
            "the frontend produced {} functions, expected one kernel",
            fs.len()
        ))),
    }
}

/// The backend's options: the defaults, less what `TAWA_DISABLE` turns
/// off, and TMA stores as the pipeline options say (`--no-tma-store`).
fn codegen_options(path: &str, tma_store: bool) -> Result<CodegenOptions, Failure> {
    let mut opts = CodegenOptions {
        source_path: Some(path.to_string()),
        tma_store,
        ..CodegenOptions::default()
    };
    // Ablations: code generation that is on by default, turned off.
    for feature in std::env::var("TAWA_DISABLE").unwrap_or_default().split(',') {
        match feature.trim() {
            "" => {}
            "mn-major" => opts.mn_major_operands = false,
            "coalesce" => opts.coalesce_loads = false,
            "wide-l2-promotion" => opts.wide_l2_promotion = false,
            other => {
                return Err(Failure::user(format!(
                    "error: unknown feature `{other}` in TAWA_DISABLE (known: mn-major, coalesce, wide-l2-promotion)\n"
                )))
            }
        }
    }
    Ok(opts)
}

/// What the pipeline stage made of a kernel: warp-specialized, software
/// pipelined in one partition, or as written; with the decisions (or the
/// reason it stayed as written) for `--explain`.
#[derive(Clone, Debug)]
pub struct Specialized {
    pub func: Function,
    pub schedule: Schedule,
    /// Split into producer and consumer partitions.
    pub warp_specialized: bool,
    /// Whether code generation may write tile stores with TMA (the
    /// options' `tma_store`, unless the staging buffer would cost the
    /// rings a slot).
    pub tma_store: bool,
}

impl Specialized {
    /// `func` unchanged, and why (`what` names the stage that left it).
    fn as_written(func: &Function, what: &str, why: String) -> Specialized {
        let mut schedule = Schedule::default();
        schedule.decisions.push(format!("kernel: {what}: {why}"));
        Specialized {
            func: func.clone(),
            schedule,
            warp_specialized: false,
            tma_store: true,
        }
    }
}

/// Why a kernel was not warp-specialized or software-pipelined: the
/// partitioner or the pipeliner refused the kernel or its options at a
/// source position (the user's to fix, or to compile without that stage:
/// `without` says how), or a stage failed.
#[derive(Debug, Clone)]
pub enum WsError {
    Refused {
        loc: tawa_ir::Loc,
        message: String,
        without: Without,
    },
    Failed(Failure),
}

/// The option that compiles a kernel without the stage that refused it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Without {
    /// `--no-ws`: no warp specialization.
    WarpSpecialization,
    /// No stage to drop: an option asked for what cannot be had
    /// (`--aref-depth` deeper than shared memory holds), and the message
    /// says what can.
    AskedOption,
}

impl Without {
    fn flag(self) -> &'static str {
        match self {
            Without::WarpSpecialization => "--no-ws",
            Without::AskedOption => "--aref-depth",
        }
    }

    fn help(self) -> &'static str {
        match self {
            Without::WarpSpecialization => {
                "--no-ws compiles the kernel without warp specialization"
            }
            Without::AskedOption => "without --aref-depth the depth is what fits",
        }
    }

    fn refused(self, loc: tawa_ir::Loc, message: String) -> WsError {
        WsError::Refused {
            loc,
            message,
            without: self,
        }
    }
}

impl From<Failure> for WsError {
    fn from(f: Failure) -> WsError {
        WsError::Failed(f)
    }
}

impl std::fmt::Display for WsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WsError::Refused { loc, message, .. } if loc.is_known() => {
                write!(f, "{}:{}: {message}", loc.line, loc.col)
            }
            WsError::Refused { message, .. } => f.write_str(message),
            WsError::Failed(failure) => failure.fmt(f),
        }
    }
}

impl WsError {
    /// A refusal rendered like a frontend diagnostic (file:line:col, the
    /// source line, a caret), saying how to compile without the stage
    /// unless the message does.
    pub fn render(self, path: &str, source: &str, color: bool) -> Failure {
        let (loc, message, without) = match self {
            WsError::Refused {
                loc,
                message,
                without,
            } => (loc, message, without),
            WsError::Failed(failure) => return failure,
        };
        let offset = if loc.is_known() {
            byte_offset(source, loc.line as usize, loc.col as usize)
        } else {
            0
        };
        let label = match without {
            Without::WarpSpecialization => "while warp-specializing this",
            Without::AskedOption => "while pipelining this",
        };
        let mut d = Diagnostic::error(offset..offset, message.clone()).with_label(label);
        if !message.contains(without.flag()) {
            d = d.with_note(without.help());
        }
        Failure::user(Diagnostics::new(path, source, vec![d]).render(color))
    }
}

/// `func` after `combine`, which the backend runs before its layouts
/// anyway: the partitioner and the pipeliner then see the dots the
/// backend lowers (`acc += tl.dot(a, b)` accumulating in the dot, a
/// loop-carried accumulator that MMA pipelining can keep in flight),
/// not a dot into zeros and an add.
fn combined(func: &Function) -> Result<Function, WsError> {
    let mut out = func.clone();
    if tawa_ir::combine::combine(&mut out) > 0 {
        check_pass("combine", &out)?;
    }
    Ok(out)
}

/// Warp specialization: the TMA inference, `tma_lower` (TMA loads become
/// descriptor loads whose descriptors the host builds), the partitioner,
/// then the pipeliner (aref depths, MMA pipelining), each result checked
/// by the verifier. `None` when there is nothing to specialize: the kernel
/// stays as it was (not even rewritten).
pub fn warp_specialize_function(
    path: &str,
    func: &Function,
    opts: &PipelineOptions,
) -> Result<Option<Specialized>, WsError> {
    Ok(warp_specialize_with(path, func, opts)?.ok())
}

/// [`warp_specialize_function`], with the reason when nothing is split.
fn warp_specialize_with(
    path: &str,
    func: &Function,
    opts: &PipelineOptions,
) -> Result<Result<Specialized, String>, WsError> {
    let combined = combined(func)?;
    let func = &combined;
    // Persistent first (a tile loop the partitioner nests the K loop in),
    // when the kernel allows it and the result still specializes.
    let mut persistence = None;
    let mut ws = None;
    let mut tiled = None;
    // What the persistent pass left in `tiled`, for `read_once`.
    let mut tile_ids = None;
    if opts.persistent {
        let mut made = func.clone();
        match tawa_pipeliner::persistent::make_persistent_tiles(&mut made) {
            Ok((walk, tiles)) => {
                check_pass("persistent", &made)?;
                use tawa_pipeliner::persistent::{Walk, BAND};
                let order = match walk {
                    Walk::Banded => format!(
                        "in bands of {BAND} y values, y fastest within a band (its loop loads \
                         data shared along x and data shared along y)"
                    ),
                    Walk::RowBands => format!(
                        "in bands of {BAND} of the rows its program id splits into (`pid // n`, \
                         `pid % n`), rows fastest within a band (its loop loads data shared along \
                         a row and data shared along a column)"
                    ),
                    _ => "x fastest".to_string(),
                };
                let params = match (&made.attrs.grid_param_y, &made.attrs.grid_param_z) {
                    (Some(y), Some(z)) => format!(
                        "x * y * z tiles, {order}, z slowest (parameters `tw_grid_x`, `{y}`, \
                         `{z}`)"
                    ),
                    (Some(y), None) => {
                        format!("x * y tiles, {order} (parameters `tw_grid_x`, `{y}`)")
                    }
                    _ if walk == Walk::RowBands => {
                        format!("tiles {order} (parameter `tw_grid_x`)")
                    }
                    _ => "tiles (parameter `tw_grid_x`)".to_string(),
                };
                let split = split_or_why(
                    &made,
                    SplitOptions {
                        tiles: Some(tiles),
                        ..SplitOptions::of(opts)
                    },
                )?;
                persistence = Some(match &split {
                    Ok(_) => format!(
                        "kernel: persistent: one program per SM walks the grid's {params}, the \
                         producer running ahead into the next tile"
                    ),
                    Err(why) => {
                        format!("kernel: not persistent: the tile loop does not split: {why}")
                    }
                });
                ws = split.ok();
                if ws.is_some() {
                    tiled = Some(made);
                    tile_ids = Some(tiles);
                }
            }
            Err(why) => {
                // A source that walks its own tiles: its step becomes a
                // launch parameter where its tiles are independent, so
                // that the launcher may start fewer programs.
                let mut own = func.clone();
                let stepped = tawa_pipeliner::own_walk::own_walk(&mut own);
                let split = match stepped {
                    Ok(_) => {
                        check_pass("own_walk", &own)?;
                        split_or_why(&own, SplitOptions::of(opts))?.ok()
                    }
                    Err(_) => None,
                };
                persistence = Some(match (&stepped, &split) {
                    (Ok(step), Some(_)) => format!(
                        "kernel: not persistent: {why}; its step ({step}) is a launch parameter \
                         (`{}`): launched on {step} programs, it starts as few as walk the \
                         tiles in as many waves, each walking every that-many-th tile",
                        tawa_pipeliner::own_walk::WALK_STEP_PARAM
                    ),
                    (Err(not), _) => {
                        format!("kernel: not persistent: {why}; its step stays the source's: {not}")
                    }
                    (Ok(_), None) => format!("kernel: not persistent: {why}"),
                });
                if split.is_some() {
                    ws = split;
                    tiled = Some(own);
                }
            }
        }
    }
    let ws = match ws {
        Some(ws) => ws,
        None => match split_or_why(func, SplitOptions::of(opts))? {
            Ok(ws) => ws,
            Err(why) => return Ok(Err(why)),
        },
    };
    // Tile ping-pong first: it changes what shared memory the consumers
    // need (each has its own scratch and TMA-store staging).
    // The default decides from the launch compiled for; the decision is
    // taken once, on the split with TMA stores, and kept for the other.
    let auto = match opts.tile_pingpong {
        Some(_) => None,
        None => Some(tawa_pipeliner::tile_pingpong::auto_choice(
            &ws.0,
            &opts.launch_values,
        )),
    };
    let tile_pingpong = opts
        .tile_pingpong
        .unwrap_or_else(|| auto.as_ref().is_some_and(|a| a.on));
    let launch_guard = auto.as_ref().and_then(|a| a.guard.clone());
    let auto_note = auto.and_then(|a| a.note);
    // The guard goes with the split it speaks for: one whose ping-pong
    // consumers were made where they were chosen.
    let split_consumers = |ws: &mut Function| -> Result<tawa_pipeliner::Schedule, WsError> {
        let mut notes = tawa_pipeliner::Schedule::default();
        if let Some((loc, note)) = &auto_note {
            notes.note(*loc, note.clone());
        }
        let made = tile_pingpong && tawa_pipeliner::tile_pingpong::tile_pingpong(ws, &mut notes);
        if tile_pingpong {
            check_pass("tile_pingpong", ws)?;
        }
        notes.launch_guard = launch_guard.clone().filter(|_| made || !tile_pingpong);
        Ok(notes)
    };
    let opts = &PipelineOptions {
        tile_pingpong: Some(tile_pingpong),
        ..opts.clone()
    };
    let (mut ws, mut stores) = ws;
    let mut consumers = split_consumers(&mut ws)?;
    let mut tma_store = opts.tma_store;
    let mut smem = measure_shared_memory(path, &ws, tma_store);
    // A TMA store's staging buffer is shared memory the rings cannot
    // have: where it would cost the ring a slot it needs (a GEMM's,
    // whose slots each feed a few hundred tensor-core cycles), the stores
    // stay element-wise; where one slot ahead covers a copy (attention's
    // two dots a slot), the staging buffer wins.
    // The split without TMA stores is made only when the ring falls short
    // with them (most kernels reach their depth either way).
    let base = tiled.as_ref().unwrap_or(func);
    let want = opts.aref_depth.unwrap_or(base.attrs.num_stages);
    let short = smem.filter(|with| tma_store && with.max_depth() < want);
    if let Some(with) = short {
        let without_tma_stores = SplitOptions {
            tma_store: false,
            tiles: tile_ids,
            ..SplitOptions::of(opts)
        };
        if let Ok(Ok((mut plain, _))) = split_or_why(base, without_tma_stores) {
            let plain_consumers = split_consumers(&mut plain)?;
            if let Some(without) = measure_shared_memory(path, &plain, false) {
                let room = want.min(without.max_depth());
                // Unless the loop's work per slot covers a copy with one
                // slot ahead (attention): then two slots lose nothing
                // and the staging buffer buys the faster epilogue.
                use tawa_pipeliner::aref_depth::{slot_tensor_flops, ONE_SLOT_AHEAD_FLOPS};
                let covering = slot_tensor_flops(&ws)
                    .filter(|&f| with.max_depth() >= 2 && f >= ONE_SLOT_AHEAD_FLOPS);
                match covering {
                    _ if with.max_depth() >= room => {}
                    Some(flops) => stores.push((
                        tawa_ir::Loc::UNKNOWN,
                        format!(
                            "epilogue: the TMA store's staging buffer leaves room for {} ring \
                             slot(s) instead of {room}: the loop's dots take {:.1} Mi flops a \
                             slot, enough for one slot ahead to cover a copy",
                            with.max_depth(),
                            flops as f64 / f64::from(1u32 << 20)
                        ),
                    )),
                    None => {
                        stores = vec![(
                            tawa_ir::Loc::UNKNOWN,
                            format!(
                                "epilogue: stores stay element-wise: a TMA store's staging \
                                 buffer would leave room for {} ring slot(s) instead of {room}",
                                with.max_depth()
                            ),
                        )];
                        ws = plain;
                        consumers = plain_consumers;
                        smem = Some(without);
                        tma_store = false;
                    }
                }
            }
        }
    }
    let mut schedule = tawa_pipeliner::pipeline(&mut ws, opts, smem.as_ref())
        .map_err(|e| Without::AskedOption.refused(e.loc, e.message))?;
    check_pass("the pipeliner", &ws)?;
    if opts.copy_split {
        let splits = tawa_partitioner::copy_split::copy_split(&mut ws);
        if !splits.is_empty() {
            // The masks the first loops no longer read.
            tawa_ir::eliminate_dead_code(&mut ws);
        }
        for split in splits {
            let loads: Vec<String> = split
                .loads
                .iter()
                .map(|l| format!("{}:{}", l.line, l.col))
                .collect();
            schedule.note(
                split.loc,
                format!(
                    "loop: producer copies split (--no-copy-split keeps one loop): the steps \
                     before the first whose mask is not whole, counted at launch, copy the \
                     load(s) at {} without the mask, the rest as written",
                    loads.join(", ")
                ),
            );
        }
        check_pass("copy_split", &ws)?;
    }
    schedule.decisions.splice(0..0, consumers.decisions);
    schedule.launch_guard = consumers.launch_guard;
    if let Some(p) = persistence {
        schedule.decisions.insert(0, p);
    }
    for (loc, note) in stores {
        schedule.note(loc, note);
    }
    Ok(Ok(Specialized {
        func: ws,
        schedule,
        warp_specialized: true,
        tma_store,
    }))
}

/// `num_stages` without warp specialization (`--no-ws`): the
/// partitioner's split fused into one software-pipelined partition
/// (`tawa_pipeliner::pipeline_without_ws`). `None` when the kernel stays
/// as it was written: one stage, or no loop of TMA copies to run ahead.
pub fn software_pipeline_function(
    path: &str,
    func: &Function,
) -> Result<Option<Specialized>, WsError> {
    let opts = PipelineOptions {
        warp_specialize: false,
        ..PipelineOptions::default()
    };
    Ok(software_pipeline_with(path, func, &opts)?.ok())
}

/// [`software_pipeline_function`] with the ring and MMA depths of `opts`;
/// `Err(reason)` when the kernel stays as written.
fn software_pipeline_with(
    path: &str,
    func: &Function,
    opts: &PipelineOptions,
) -> Result<Result<Specialized, String>, WsError> {
    let combined = combined(func)?;
    let func = &combined;
    let stages = opts.aref_depth.unwrap_or(func.attrs.num_stages);
    if stages < 2 {
        return Ok(Err(format!(
            "num_stages {stages}: with one stage no copy runs ahead (num_stages >= 2 pipelines)"
        )));
    }
    // A split the partitioner refuses (32 warps leave no room for a
    // producer warpgroup, which this path fuses away anyway) leaves the
    // kernel as written: `--no-ws` always has the plain kernel to give.
    // The fused partition copies ahead within its loops only: a tile's
    // operand loaded before them stays where the kernel loads it.
    // Its one partition holds the dots, whose copies the backend issues
    // without L2 hints: nothing to mark read once.
    let fused = SplitOptions {
        per_tile_copies: false,
        producer_copies: false,
        read_once: false,
        ..SplitOptions::of(opts)
    };
    let (mut split, stores) = match split_or_why(func, fused) {
        Ok(Ok(split)) => split,
        Ok(Err(_)) => {
            return Ok(Err(
                "no loop whose tile loads are TMA copies, nothing to run ahead (the lines \
                 above say which loads are)"
                    .into(),
            ))
        }
        Err(WsError::Refused { message, .. }) => return Ok(Err(message)),
        Err(failed) => return Err(failed),
    };
    let smem = measure_shared_memory(path, &split, opts.tma_store);
    match tawa_pipeliner::pipeline_without_ws(&mut split, opts, smem.as_ref())
        .map_err(|e| Without::AskedOption.refused(e.loc, e.message))?
    {
        tawa_pipeliner::Pipelined::Yes(mut schedule) => {
            for (loc, note) in stores {
                schedule.note(loc, note);
            }
            check_pass("the software pipeliner", &split)?;
            Ok(Ok(Specialized {
                func: split,
                schedule,
                warp_specialized: false,
                tma_store: opts.tma_store,
            }))
        }
        tawa_pipeliner::Pipelined::No(why) => Ok(Err(why)),
    }
}

/// The shared memory of warp-specialized `ws` as a function of its ring
/// depth, from the backend's layout at depths 1 and 2; `None` when the
/// backend cannot lay it out (its error comes again, in full, when the
/// kernel is generated).
fn measure_shared_memory(path: &str, ws: &Function, tma_store: bool) -> Option<SmemModel> {
    let opts = codegen_options(path, tma_store).ok()?;
    let at = |depth: u32| {
        let mut f = ws.clone();
        tawa_pipeliner::aref_depth::set_depths(&mut f, depth);
        tawa_backend::shared_memory_bytes(&f, &opts).ok()
    };
    let (one, two) = (at(1)?, at(2)?);
    SmemModel::from_two_depths(tawa_backend::MAX_DYN_SMEM_BYTES, one, two)
}

/// What [`split_or_why`] may do: TMA stores, per-tile copies, producer
/// copies of the loads TMA refuses, TMA copies of pointer loads (the
/// pipeline options', except where a caller turns one off).
#[derive(Clone, Copy, Debug)]
struct SplitOptions {
    tma_store: bool,
    store_policy: tawa_partitioner::tma_store::StorePolicy,
    per_tile_copies: bool,
    producer_copies: bool,
    tma_loads: bool,
    read_once: bool,
    /// What the persistent pass left, for a kernel it made persistent.
    tiles: Option<tawa_ir::TileIds>,
}

impl SplitOptions {
    fn of(opts: &PipelineOptions) -> SplitOptions {
        SplitOptions {
            tma_store: opts.tma_store,
            store_policy: tawa_partitioner::tma_store::StorePolicy {
                small_store_bytes: opts.small_store_bytes,
            },
            per_tile_copies: opts.per_tile_copies,
            producer_copies: true,
            tma_loads: opts.tma_loads,
            read_once: opts.read_once,
            tiles: None,
        }
    }
}

/// The TMA inference's decision for every load of `func`; without
/// `tma_loads` (`--no-tma-loads`) every pointer-tile load is refused, so
/// that the producer's threads copy the ones they can (`producer_copy`)
/// and descriptor loads alone stay TMA copies.
fn tma_plan(
    func: &Function,
    axis: &tawa_ir::axis_info::AxisInfoMap,
    tma_loads: bool,
) -> tawa_partitioner::TmaPlan {
    let mut plan = tawa_partitioner::infer_tma(func, axis);
    if !tma_loads {
        plan.refuse(
            |recipe| matches!(func.ops[recipe.op].kind, tawa_ir::OpKind::Load { .. }),
            "TMA loads are off (--no-tma-loads)",
        );
    }
    plan
}

/// Notes for `--explain` about the stores of a split kernel, at their
/// source positions.
type StoreNotes = Vec<(tawa_ir::Loc, String)>;

/// The partitioner's half of [`warp_specialize_function`]: the TMA
/// loads lowered (`tma_lower`), with `tma_store` the TMA-able stores too
/// (`tma_store`), then the split; the rings it creates have one slot
/// until the pipeliner decides (a per-tile operand's, with
/// `per_tile_copies`, keeps its one). `Err` is the reason when there is
/// nothing to split.
fn split_or_why(
    func: &Function,
    split: SplitOptions,
) -> Result<Result<(Function, StoreNotes), String>, WsError> {
    let SplitOptions {
        tma_store,
        store_policy,
        per_tile_copies,
        producer_copies,
        tma_loads,
        read_once,
        tiles,
    } = split;
    let axis = tawa_ir::axis_info::analyze(func);
    let plan = tma_plan(func, &axis, tma_loads);
    let mut lowered = func.clone();
    tawa_partitioner::lower_tma_loads(&mut lowered, &plan);
    check_pass("tma_lower", &lowered)?;
    let store_notes = if !tma_store {
        vec![(
            tawa_ir::Loc::UNKNOWN,
            "epilogue: TMA stores off (--no-tma-store): tile stores stay element-wise".to_string(),
        )]
    } else {
        let stores = tawa_partitioner::infer_tma_stores(func, &axis);
        tawa_partitioner::lower_tma_stores(&mut lowered, &stores, store_policy);
        check_pass("tma_store", &lowered)?;
        let decisions =
            tawa_partitioner::tma_store::store_decisions(&lowered, &stores, store_policy);
        explain_stores(&lowered, &decisions)
    };
    // The pointer tiles the rewritten loads and stores used, and the
    // loop-carried values that only advanced them, are dead now.
    tawa_ir::eliminate_dead_code(&mut lowered);
    check_pass("dce", &lowered)?;
    let mut store_notes = store_notes;
    if read_once {
        store_notes.extend(tawa_partitioner::read_once::mark_read_once(
            &mut lowered,
            tiles.as_ref(),
        ));
        check_pass("read_once", &lowered)?;
    }
    // The partitioner moves the copies `tma_lower` wrote, whose
    // descriptors the backend can give to the host, and the loads of
    // descriptors the kernel makes from values it loads, whose tensor maps
    // the producer builds; loads left as they were (transposed boxes,
    // unbounded extents) stay in the consumer.
    let refused = plan;
    let axis = tawa_ir::axis_info::analyze(&lowered);
    let mut plan = tawa_partitioner::infer_tma(&lowered, &axis);
    plan.decisions.retain(|d| {
        d.as_ref().is_ok_and(|r| {
            r.device_built || tawa_partitioner::tma_lower::host_descriptor_load(&lowered, r.op)
        })
    });
    // Tiles TMA refused that the producer's threads can copy, when asked
    // (`producer_copy`); TMA stays first.
    let (mut copies, not_copied) = if producer_copies {
        (
            tawa_partitioner::producer_copy::producer_copies(&lowered, &refused),
            tawa_partitioner::producer_copy::not_copied(&lowered, &refused),
        )
    } else {
        (Vec::new(), Vec::new())
    };
    let mut opts = tawa_partitioner::WsOptions {
        depth: 1,
        per_tile_copies,
        ..Default::default()
    };
    let mut copy_refusal = None;
    if !copies.is_empty() {
        opts.producer_regs = copy_producer_regs(lowered.attrs.num_warps, &opts);
        let need = copy_registers(&lowered, &copies, opts.producer_warps);
        if need > opts.producer_regs {
            // The first copies (in program order) that fit its registers;
            // the rest stay in the consumer.
            let mut kept = copies.len();
            while kept > 0
                && copy_registers(&lowered, &copies[..kept], opts.producer_warps)
                    > opts.producer_regs
            {
                kept -= 1;
            }
            let which = if kept == 0 {
                "the tiles TMA refused".to_string()
            } else {
                format!(
                    "all {} tiles TMA refused (it copies the first {kept}, the others stay in \
                     the consumer)",
                    copies.len()
                )
            };
            copy_refusal = Some((
                format!(
                    "the producer cannot copy {which}: its threads would hold about {need} \
                     registers of addresses and state, more than the {} it can have beside {} \
                     consumer warps (smaller BLOCK_* tiles or fewer warps leave it more)",
                    opts.producer_regs, lowered.attrs.num_warps
                ),
                kept == 0,
            ));
            copies.truncate(kept);
        }
    }
    let ws = tawa_partitioner::warp_specialize_with_copies(
        &lowered,
        &plan,
        &tawa_partitioner::producer_copy::copy_ops(&copies),
        &opts,
    )
    .map_err(|e| Without::WarpSpecialization.refused(e.loc, e.message))?;
    let Some(ws) = ws else {
        let (copies, loads) = (plan.decisions.len(), tile_loads(&lowered));
        let which = if copies == loads {
            "every tile load is a TMA copy, but none in a loop feeds a dot".to_string()
        } else {
            format!(
                "{copies} of {loads} tile loads are TMA copies; the lines above say why the \
                 others are not"
            )
        };
        let copy_refusal = copy_refusal.map_or(String::new(), |(why, _)| format!("; {why}"));
        return Ok(Err(format!(
            "no loop whose TMA copies feed a `tl.dot` ({which}){copy_refusal}"
        )));
    };
    check_pass("the partitioner", &ws)?;
    // A transposed copy is read in place by wgmma only from an aref
    // slot; one the partitioner left in the consumer would need a
    // register transpose: keep the kernel plain instead.
    if !tawa_partitioner::tma_lower::transposed_copies_in_slots(&ws) {
        return Ok(Err(
            "a transposed copy would stay in the consumer (loaded outside the loop the \
             producer runs), where wgmma cannot read it in place"
                .into(),
        ));
    }
    // Slots are read in place by wgmma only; a dot too small for it
    // (fewer than 64 rows a warpgroup) keeps the kernel plain.
    if let Some(m) = slot_dot_without_wgmma(&ws) {
        return Ok(Err(format!(
            "a `tl.dot` reading the copies has {m} rows for {} warps, too few for wgmma \
             (64 rows a warpgroup of 4 warps), which reads them in place; use a block of \
             at least 64 rows per 4 warps",
            ws.attrs.num_warps
        )));
    }
    let mut store_notes = store_notes;
    if let Some((why, none_copied)) = copy_refusal {
        let rest = if none_copied {
            "; they stay in the consumer"
        } else {
            ""
        };
        store_notes.push((tawa_ir::Loc::UNKNOWN, format!("mainloop: {why}{rest}")));
    }
    if !copies.is_empty() {
        // The producer's copies are the backend's to lower (their layouts,
        // no scratch area in the producer): where it cannot, the split
        // without them stands.
        let backend = codegen_options("", tma_store)
            .ok()
            .map(|o| tawa_backend::shared_memory_bytes(&ws, &o));
        if let Some(Err(e)) = backend {
            let why = format!(
                "the producer cannot copy the tiles TMA refused: the backend cannot lower its \
                 copies: {}",
                e.message
            );
            let without = split_or_why(
                func,
                SplitOptions {
                    producer_copies: false,
                    ..split
                },
            )?;
            return Ok(match without {
                Ok((ws, mut notes)) => {
                    notes.push((
                        tawa_ir::Loc::UNKNOWN,
                        format!("mainloop: {why}; they stay in the consumer"),
                    ));
                    Ok((ws, notes))
                }
                Err(plain) => Err(format!("{plain}; {why}")),
            });
        }
    }
    store_notes.extend(explain_copies(&lowered, &ws, &copies, opts.producer_regs));
    let names = tawa_ir::printer::value_names(&lowered);
    store_notes.extend(not_copied.iter().map(|n| {
        let v = lowered.ops[n.op].results[0];
        let name = names.get(&v).cloned().unwrap_or_else(|| v.to_string());
        (
            n.loc,
            format!(
                "mainloop: %{name}: stays in the consumer, no producer copy: {}; not TMA: {}",
                n.why, n.not_tma
            ),
        )
    }));
    Ok(Ok((ws, store_notes)))
}

/// The producer's `setmaxnreg` budget when its threads copy tiles (their
/// address arithmetic lives in its registers): the most, up to 128, that
/// leaves the consumer warps the budget they get beside a TMA producer.
fn copy_producer_regs(num_warps: u32, opts: &tawa_partitioner::WsOptions) -> u32 {
    let consumer_at = |regs: u32| {
        let o = tawa_partitioner::WsOptions {
            producer_regs: regs,
            ..opts.clone()
        };
        tawa_partitioner::partition::register_budgets(num_warps, &o)
            .ok()
            .map(|b| b.1)
    };
    let want = consumer_at(opts.producer_regs);
    (opts.producer_regs..=128)
        .rev()
        .step_by(8)
        .find(|&r| r % 8 == 0 && consumer_at(r) == want)
        .unwrap_or(opts.producer_regs)
}

/// About how many registers the producer's threads hold to copy `copies`
/// (`aref_lower`'s `copy_chunks`): the first pointer (64-bit) and mask of
/// each 16-byte chunk a thread copies, kept across the loop, plus the
/// loop's own state (counters, slot and barrier addresses, the values of
/// enclosing loops).
fn copy_registers(
    func: &Function,
    copies: &[tawa_partitioner::producer_copy::ProducerCopy],
    producer_warps: u32,
) -> u32 {
    const STATE: u32 = 32;
    let threads = producer_warps.max(1) * 32;
    copies
        .iter()
        .map(|c| {
            let data = &func.ops[c.op];
            let ty = func.ty(data.results[0]);
            let eb = ty.scalar_type().map_or(4, |s| s.byte_size()).max(1);
            let bytes: u64 =
                ty.shape().iter().map(|&d| u64::from(d)).product::<u64>() * u64::from(eb);
            let chunks = bytes.div_ceil(u64::from(c.chunk_bytes) * u64::from(threads)) as u32;
            let masked = matches!(data.kind, tawa_ir::OpKind::Load { has_mask: true, .. });
            chunks * (2 + u32::from(masked))
        })
        .sum::<u32>()
        + STATE
}

/// `--explain` lines for the producer copies that reached the producer of
/// `ws`: the access width and why, and why not TMA.
fn explain_copies(
    lowered: &Function,
    ws: &Function,
    copies: &[tawa_partitioner::producer_copy::ProducerCopy],
    producer_regs: u32,
) -> StoreNotes {
    let names = tawa_ir::printer::value_names(lowered);
    let mut moved = std::collections::HashSet::new();
    ws.walk(&mut |op| {
        let data = &ws.ops[op];
        if matches!(data.kind, tawa_ir::OpKind::ArefPut) {
            for &v in ws.put_values(op) {
                if let Some(l) = ws.def_op(v) {
                    if matches!(ws.ops[l].kind, tawa_ir::OpKind::Load { .. }) {
                        moved.insert(ws.ops[l].loc);
                    }
                }
            }
        }
    });
    copies
        .iter()
        .filter(|c| moved.contains(&c.loc))
        .map(|c| {
            let v = lowered.ops[c.op].results[0];
            let name = names.get(&v).cloned().unwrap_or_else(|| v.to_string());
            (
                c.loc,
                format!(
                    "mainloop: %{name}: producer copy ({}; the producer's threads copy it into \
                     the aref slot, {producer_regs} registers each); not TMA: {}",
                    c.width(),
                    c.not_tma
                ),
            )
        })
        .collect()
}

/// `--explain` lines for `tma_store`'s decisions on `func` (the kernel
/// it rewrote), with the backend's: whether the descriptor's tensor map
/// can be encoded and in which boxes the tile is stored.
fn explain_stores(
    func: &Function,
    decisions: &[tawa_partitioner::tma_store::StoreDecision],
) -> StoreNotes {
    let names = tawa_ir::printer::value_names(func);
    let axis = tawa_ir::axis_info::analyze(func);
    decisions
        .iter()
        .map(|d| {
            let name = names
                .get(&d.value)
                .cloned()
                .unwrap_or_else(|| d.value.to_string());
            let ty = func.ty(d.value);
            let dims: Vec<String> = ty.shape().iter().map(|s| s.to_string()).collect();
            let elem = ty.scalar_type().map_or(String::new(), |e| format!(" {e}"));
            let tile = format!("{}{elem}", dims.join("x"));
            let backend = d
                .tma
                .clone()
                .and_then(|()| tawa_backend::tma_store_decision(func, &axis, d.op));
            let note = match backend {
                Ok(s) => format!("epilogue: TMA store of %{name} ({tile}: {})", s.describe()),
                Err(why) => format!(
                    "epilogue: the store of %{name} ({tile}) stays element-wise (st.global): {why}"
                ),
            };
            (d.loc, note)
        })
        .collect()
}

/// Tile loads (`load` and `desc_load` of a tile) of `func`.
fn tile_loads(func: &Function) -> usize {
    let mut n = 0;
    func.walk(&mut |op| {
        let data = &func.ops[op];
        n += usize::from(
            matches!(
                data.kind,
                tawa_ir::OpKind::Load { .. } | tawa_ir::OpKind::DescLoad { .. }
            ) && data
                .results
                .first()
                .is_some_and(|&r| !func.ty(r).is_scalar()),
        );
    });
    n
}

/// The rows of a `dot` reading an aref slot (directly or through a
/// `trans`) that gets no wgmma layout, as the backend chooses it for the
/// consumer's warps; `None` when every such dot is a wgmma.
fn slot_dot_without_wgmma(ws: &Function) -> Option<u32> {
    use tawa_backend::layout::MmaVersion;
    use tawa_ir::{OpKind, ScalarType};
    let from_slot = |v| {
        let mut def = ws.def_op(v);
        if let Some(d) = def.filter(|&d| matches!(ws.ops[d].kind, OpKind::Trans { .. })) {
            def = ws.def_op(ws.ops[d].operands[0]);
        }
        def.is_some_and(|d| matches!(ws.ops[d].kind, OpKind::ArefGet))
    };
    let mut without = None;
    ws.walk(&mut |op| {
        let data = &ws.ops[op];
        let OpKind::Dot {
            input_precision, ..
        } = data.kind
        else {
            return;
        };
        if !data.operands[..2].iter().any(|&v| from_slot(v)) {
            return;
        }
        let shape = ws.ty(data.results[0]).shape();
        let k = ws.ty(data.operands[0]).shape()[1];
        let a_elem = ws
            .ty(data.operands[0])
            .scalar_type()
            .unwrap_or(ScalarType::F32);
        let wgmma = tawa_backend::layout_assign::choose_mma(
            shape[0],
            shape[1],
            k,
            a_elem,
            ws.attrs.num_warps,
            input_precision,
        )
        .is_some_and(|m| m.version == MmaVersion::V3);
        if !wgmma {
            without.get_or_insert(shape[0]);
        }
    });
    without
}

/// The verifier after a pass; a rejection is a compiler bug.
fn check_pass(pass: &str, func: &Function) -> Result<(), Failure> {
    tawa_ir::verify_function(func).map_err(|errors| {
        let msgs: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
        Failure::internal(format!(
            "{pass} left invalid IR in `{}`:\n{}",
            func.name,
            msgs.join("\n")
        ))
    })
}

/// A kernel's CUDA and, when it was warp-specialized, the schedule.
#[derive(Clone, Debug)]
pub struct CudaKernel {
    pub source: KernelSource,
    /// The pipeline stage's decisions, or why it left the kernel as
    /// written (`--explain`).
    pub schedule: Schedule,
    pub warp_specialized: bool,
}

/// Warp-specialized and pipelined as `ws` says, or software-pipelined in
/// one partition (`num_stages`) when `ws` is `None` or says
/// `warp_specialize: false`. A kernel the stage leaves as written comes
/// back unchanged, with a schedule saying why (`--explain`).
pub fn pipeline_function(
    path: &str,
    func: &Function,
    ws: Option<&PipelineOptions>,
) -> Result<Specialized, WsError> {
    let no_ws = PipelineOptions {
        warp_specialize: false,
        ..PipelineOptions::default()
    };
    let opts = ws.unwrap_or(&no_ws);
    let (outcome, what) = if opts.warp_specialize {
        (
            warp_specialize_with(path, func, opts)?,
            "not warp-specialized",
        )
    } else {
        (
            software_pipeline_with(path, func, opts)?,
            "not software-pipelined (--no-ws)",
        )
    };
    let mut specialized = outcome.unwrap_or_else(|why| Specialized::as_written(func, what, why));
    if opts.tma_multicast && !specialized.warp_specialized {
        // The pipeliner's pass speaks for itself where it ran.
        specialized.schedule.decisions.push(
            "kernel: tma multicast: not applied: only a warp-specialized persistent kernel runs \
             in CTA pairs"
                .into(),
        );
    }
    Ok(specialized)
}

/// Tile IR to CUDA: warp-specialized and pipelined as `ws` says when it is
/// `Some` and the partitioner finds a loop to split, software-pipelined
/// without warp specialization when it is `None` and `num_stages` > 1,
/// plain otherwise.
pub fn compile_to_cuda(
    path: &str,
    source: &str,
    func: &Function,
    ws: Option<&PipelineOptions>,
    color: bool,
) -> Result<CudaKernel, Failure> {
    let mut specialized =
        pipeline_function(path, func, ws).map_err(|e| e.render(path, source, color))?;
    let tma_store = ws.is_none_or(|o| o.tma_store) && specialized.tma_store;
    // Programmatic dependent launch by default only where the programs
    // walk the tiles (such a grid is one wave, and its blocks wait for the
    // kernel before once each) or the source asks for it
    // (`tl.extra.cuda.gdc_wait`). Every block of a grid of many waves
    // waits, and on the H200 that cost tutorial 06's causal attention
    // (4096 blocks) half a percent, while the kernels that gained are
    // persistent.
    let attrs = &specialized.func.attrs;
    let asked = attrs.programmatic_launch_asked;
    let walks_tiles = attrs.grid_param.is_some() || attrs.walk_step.is_some();
    let programmatic_launch =
        ws.is_some_and(|o| o.programmatic_launch.unwrap_or(walks_tiles || asked));
    let opts = CodegenOptions {
        programmatic_launch,
        ..codegen_options(path, tma_store)?
    };
    let kernel = match tawa_backend::generate_cuda(&specialized.func, &opts) {
        // The pipeliner cannot see every barrier the backend writes (an
        // operand staged through shared memory): where one falls inside a
        // ping-pong turn, the kernel goes without turns.
        Err(e)
            if e.message
                .starts_with(tawa_backend::emit_cuda::BARRIER_IN_TURN) =>
        {
            tawa_pipeliner::pingpong::remove_turns(&mut specialized.func);
            check_pass("the pipeliner", &specialized.func)?;
            specialized.schedule.note(
                e.loc,
                format!(
                    "loop: ping-pong undone: the backend writes {}, which would hang",
                    tawa_backend::emit_cuda::BARRIER_IN_TURN
                ),
            );
            tawa_backend::generate_cuda(&specialized.func, &opts)
        }
        other => other,
    }
    // An op the backend does not support is the user's to work around
    // (exit code 1), shown at its line in the kernel file.
    .map_err(|e| Failure::user(render_codegen_error(path, source, &e, color)))?;
    for (loc, note) in tawa_backend::layout_notes(&specialized.func, &opts) {
        specialized.schedule.note(loc, note);
    }
    if kernel.programmatic_launch {
        let why = if asked {
            " (the source calls `tl.extra.cuda.gdc_wait` or `gdc_launch_dependents`; the wait \
             at entry covers its own)"
        } else {
            ""
        };
        specialized.schedule.decisions.push(format!(
            "kernel: programmatic dependent launch{why}: waits at entry for the kernel before \
             it on the stream, then lets the next one start (--no-pdl: an ordinary launch)"
        ));
    } else if ws.is_some_and(|o| o.programmatic_launch.is_none()) {
        // Left to the default, which found neither reason above.
        specialized.schedule.decisions.push(
            "kernel: ordinary launch: its programs do not walk the tiles, so a large grid runs in \
             many waves, each block of which would wait for the kernel before it (--pdl: a \
             programmatic dependent launch anyway)"
                .into(),
        );
    }
    let kernel = tawa_backend::KernelSource {
        launch_guard: specialized.schedule.launch_guard.clone(),
        ..kernel
    };
    Ok(CudaKernel {
        source: kernel,
        schedule: specialized.schedule,
        warp_specialized: specialized.warp_specialized,
    })
}

/// `--explain`: the TMA inference's decision for every load, one line each
/// (`path:line:col: %a: TMA 2-D box [128, 64] f16, ...` or `...: not TMA:
/// <reason>`): what TMA can copy; the schedule's lines say which of those
/// the producer's threads copy beside TMA (`mixed_copies`).
pub fn explain_tma(path: &str, func: &Function, tma_loads: bool) -> String {
    let axis = tawa_ir::axis_info::analyze(func);
    let plan = tma_plan(func, &axis, tma_loads);
    tawa_partitioner::explain(path, func, &plan)
}

/// NVRTC (through the on-disk cache). NVRTC rejecting generated code is a
/// compiler bug; the message shows each diagnostic with the generated line
/// it points at.
pub fn nvrtc(kernel: &KernelSource) -> Result<Compiled, Failure> {
    runtime::compile_cuda(
        &kernel.cuda,
        &kernel.symbol,
        &runtime::CompileOptions::default(),
    )
    .map_err(|e| match e {
        RuntimeError::Compile { .. } => Failure::internal(format!(
            "the generated CUDA does not compile:\n{e}\n(see it with --emit cuda)"
        )),
        other => Failure::user(format!("error: {other}\n")),
    })
}

/// What ptxas says about `kernel`, for standard error: registers and
/// shared memory on a note line, then [`local_memory_warning`]. Kernels
/// are named as in the Python source, not by their (maybe mangled) symbol.
pub fn resource_report(kernel: &KernelSource, report: &runtime::PtxasReport) -> String {
    let Some(k) = report.kernel(&kernel.symbol) else {
        return String::new();
    };
    let mut out = format!(
        "note: kernel `{}`: {} registers per thread, {} bytes of static shared memory\n",
        kernel.name, k.registers, k.shared_bytes
    );
    if let Some(warning) = local_memory_warning(&kernel.name, k) {
        out.push_str(&warning);
    }
    out
}

/// A warning when the kernel spills registers to local memory or needs a
/// stack frame (local memory too): slow enough that a user should know
/// without asking. `None` when it keeps everything in registers.
pub fn local_memory_warning(name: &str, k: &runtime::KernelResources) -> Option<String> {
    (k.spills() || k.stack_frame_bytes > 0).then(|| format!(
        "warning: kernel `{name}` uses local memory: {} bytes of spill stores, {} bytes of spill loads, a {}-byte stack frame per thread\n  = help: smaller tiles (BLOCK_* constexprs) or more warps (--num-warps) need fewer registers per thread\n",
        k.spill_store_bytes, k.spill_load_bytes, k.stack_frame_bytes
    ))
}

/// A [`CodegenError`] rendered like a frontend diagnostic: file:line:col,
/// the source line and a caret.
pub fn render_codegen_error(path: &str, source: &str, e: &CodegenError, color: bool) -> String {
    let offset = if e.loc.is_known() {
        byte_offset(source, e.loc.line as usize, e.loc.col as usize)
    } else {
        0
    };
    let mut d = Diagnostic::error(
        offset..offset,
        format!("not supported by the backend: {}", e.message),
    )
    .with_label("here");
    for note in &e.notes {
        d = d.with_note(note.clone());
    }
    if !e.loc.is_known() {
        d = d.with_note("(the backend did not record a source position for this)");
    }
    Diagnostics::new(path, source, vec![d]).render(color)
}

/// Byte offset of 1-based `line`, `col` (in characters), clamped to the text.
fn byte_offset(source: &str, line: usize, col: usize) -> usize {
    let mut start = 0;
    for _ in 1..line {
        match source[start..].find('\n') {
            Some(i) => start += i + 1,
            None => return source.len(),
        }
    }
    let line_text = &source[start..];
    let line_text = &line_text[..line_text.find('\n').unwrap_or(line_text.len())];
    start
        + line_text
            .char_indices()
            .nth(col.saturating_sub(1))
            .map_or(line_text.len(), |(i, _)| i)
}

/// `tawa-rs KERNEL.py [options]`.
pub fn run(cmd: &CompileCommand, color: bool) -> Result<(), Failure> {
    let Some(kernel_file) = &cmd.kernel_file else {
        return Err(Failure::user("error: no kernel file given\n".into()));
    };
    if cmd.emit == Emit::Cubin && cmd.output.is_none() {
        return Err(Failure {
            message: "error: --emit cubin writes a binary file; name it with -o FILE\n".into(),
            exit_code: 2,
        });
    }
    let path = kernel_file.display().to_string();
    let source = read_source(kernel_file)?;
    let mut opts = CompileOptions {
        kernel: cmd.kernel.clone(),
        signature: cmd.signature.clone(),
        defines: cmd.define.clone(),
        num_warps: cmd.num_warps,
        num_stages: cmd.num_stages,
    };
    let case_name = match &cmd.case {
        Some(name) => Some(name.clone()),
        None if cmd.signature.is_none() => first_case_beside(kernel_file, cmd.kernel.as_deref())?,
        None => None,
    };
    // The launch compiled for: the case's integer arguments, then the
    // ones given (which win).
    let mut launch_values = match &case_name {
        Some(case_name) => {
            opts = apply_case(kernel_file, case_name, opts)?;
            case_launch_values(kernel_file, case_name)?
        }
        None => Vec::new(),
    };
    for (name, value) in &cmd.launch_value {
        launch_values.retain(|(n, _)| n != name);
        launch_values.push((name.clone(), *value));
    }
    let pipeline_options = || {
        cmd.pipeline_options().map(|mut o| {
            o.launch_values = launch_values.clone();
            o
        })
    };
    let module = frontend(&path, &source, &opts, color)?;
    if cmd.explain {
        let func = kernel_function(&module)?;
        let tma_loads = cmd.pipeline_options().is_none_or(|o| o.tma_loads);
        eprint!("{}", explain_tma(&path, func, tma_loads));
    }
    let bytes: Vec<u8> = match cmd.emit {
        Emit::TileIr => printer::print_module(&module).into_bytes(),
        Emit::WsIr => {
            let mut module = module;
            let opts = pipeline_options();
            for func in &mut module.functions {
                let pipelined = pipeline_function(&path, func, opts.as_ref())
                    .map_err(|e| e.render(&path, &source, color))?;
                if cmd.explain {
                    eprint!("{}", pipelined.schedule.explain(&path));
                }
                *func = pipelined.func;
            }
            printer::print_module(&module).into_bytes()
        }
        Emit::Cuda | Emit::Ptx | Emit::Cubin => {
            let func = kernel_function(&module)?;
            let opts = pipeline_options();
            let compiled = compile_to_cuda(&path, &source, func, opts.as_ref(), color)?;
            if cmd.explain {
                eprint!("{}", compiled.schedule.explain(&path));
            }
            let kernel = compiled.source;
            match cmd.emit {
                Emit::Cuda => kernel.cuda.into_bytes(),
                Emit::Ptx => {
                    // NVRTC assembled a cubin too: its log has ptxas's report.
                    let compiled = nvrtc(&kernel)?;
                    eprint!("{}", resource_report(&kernel, &compiled.resources()));
                    compiled.ptx.into_bytes()
                }
                _ => {
                    let ptx = nvrtc(&kernel)?.ptx;
                    let (cubin, report) = runtime::ptxas_cubin(&ptx, runtime::DEFAULT_ARCH)
                        .map_err(|e| match e {
                            RuntimeError::Ptxas { .. } => Failure::internal(format!(
                                "ptxas rejects the generated PTX:\n{e}\n(see it with --emit ptx)"
                            )),
                            other => Failure::user(format!("error: {other}\n")),
                        })?;
                    eprint!("{}", resource_report(&kernel, &report));
                    cubin
                }
            }
        }
    };
    match &cmd.output {
        Some(out) => fs::write(out, bytes)
            .map_err(|e| Failure::user(format!("error: cannot write `{}`: {e}\n", out.display()))),
        None => {
            let mut stdout = std::io::stdout().lock();
            // A closed pipe (`| head`) is not an error worth a message.
            let _ = stdout.write_all(&bytes).and_then(|_| stdout.flush());
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A refusal points at its loop and names the option that compiles
    /// the kernel without the stage that refused, unless it already does.
    #[test]
    fn refusals_say_how_to_compile_without_the_stage() {
        let source = "def k(x):\n    for i in range(4):\n        pass\n";
        let loc = tawa_ir::Loc { line: 2, col: 5 };
        let render = |without: Without, message: &str| {
            without
                .refused(loc, message.to_string())
                .render("k.py", source, false)
        };
        let ws = render(Without::WarpSpecialization, "no room");
        assert_eq!(ws.exit_code, 1);
        assert!(ws.message.contains("--> k.py:2:5"), "{}", ws.message);
        assert!(ws.message.contains("^ while warp-specializing this"));
        assert!(ws.message.contains("= --no-ws compiles the kernel without"));
        let asked = render(Without::AskedOption, "--aref-depth 9: too deep");
        assert!(asked.message.contains("^ while pipelining this"));
        assert!(!asked.message.contains("= "), "{}", asked.message);
        let named = render(Without::WarpSpecialization, "use 8 warps, or --no-ws");
        assert_eq!(
            named.message.matches("--no-ws").count(),
            1,
            "{}",
            named.message
        );
    }

    #[test]
    fn byte_offsets_of_lines_and_columns() {
        let src = "ab\ncdé\nf";
        assert_eq!(byte_offset(src, 1, 1), 0);
        assert_eq!(byte_offset(src, 2, 1), 3);
        assert_eq!(byte_offset(src, 2, 4), 7); // after the two-byte é
        assert_eq!(byte_offset(src, 3, 1), 8);
        assert_eq!(byte_offset(src, 9, 1), src.len());
        assert_eq!(byte_offset(src, 1, 99), 2);
    }

    #[test]
    fn codegen_errors_point_into_the_kernel_file() {
        let src = "def k(x):\n    y = tl.foo(x)\n";
        let e = CodegenError {
            loc: tawa_ir::Loc::new(2, 9),
            message: "op `foo` has no CUDA lowering".into(),
            notes: vec!["use tl.bar instead".into()],
        };
        let text = render_codegen_error("k.py", src, &e, false);
        assert!(text.contains("k.py:2:9"), "{text}");
        assert!(text.contains("y = tl.foo(x)"), "{text}");
        assert!(text.contains('^'), "{text}");
        assert!(text.contains("use tl.bar instead"), "{text}");
    }
}
