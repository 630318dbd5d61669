//! Launch cases: the TOML schema (see the crate docs for a full example) and
//! everything derived from a case without running anything — the evaluated
//! sizes, the grid, the compile arguments (`--signature`, `-D`), the
//! per-parameter launch arguments and the benchmark work counts.

use std::collections::{BTreeMap, BTreeSet};

use serde::Deserialize;
use tawa_ir::types::ScalarType;

use crate::expr;

/// One kernel file's launch description (`kernels/<name>.toml`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExampleSpec {
    /// The `@triton.jit` function to launch.
    pub kernel: String,
    /// The plain-Rust reference that checks it (see [`crate::reference`]).
    pub reference: String,
    /// Every parameter of `kernel`, in order, constexprs included: the
    /// signature is built in this order.
    pub params: Vec<String>,
    /// Reference role → tensor name, for kernels whose tensors are named
    /// differently from the reference's roles (`a`, `b`, `c`...). A role
    /// without an entry names the tensor directly.
    #[serde(default)]
    pub roles: BTreeMap<String, String>,
    #[serde(rename = "case", default)]
    pub cases: Vec<Case>,
}

/// One launch: sizes, constexpr bindings, grid, arguments, tolerances.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Case {
    pub name: String,
    /// `small`: interpreter and GPU tests; `large`: GPU tests and benchmarks.
    #[serde(default)]
    pub tags: Vec<String>,
    /// Problem sizes, the names of the expression language.
    #[serde(default)]
    pub sizes: BTreeMap<String, i64>,
    /// `tl.constexpr` bindings. Integer and boolean constexprs are also
    /// names in expressions (booleans as 0/1).
    #[serde(default)]
    pub constexprs: BTreeMap<String, Constexpr>,
    pub num_warps: Option<u32>,
    pub num_stages: Option<u32>,
    /// One to three expressions; missing dimensions are 1.
    pub grid: Vec<Expr>,
    pub tolerance: Tolerance,
    pub bench: Option<Bench>,
    /// The non-constexpr parameters, in parameter order.
    #[serde(default)]
    pub args: Vec<Arg>,
    /// Tensors that are not parameters themselves but are reached through
    /// other arguments (pointer arrays, host tensor descriptors).
    #[serde(default)]
    pub buffers: Vec<TensorArg>,
}

/// An integer expression: a TOML integer or a string in the expression
/// language (`"cdiv(M, BLOCK_M)"`).
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum Expr {
    Int(i64),
    Text(String),
}

/// A constexpr value. TOML strings are Python strings (`ACTIVATION =
/// "leaky_relu"` binds `'leaky_relu'`); `{ py = "tl.float16" }` is passed
/// as written.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum Constexpr {
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Raw { py: String },
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Tolerance {
    pub atol: f64,
    pub rtol: f64,
}

/// Work counts for throughput numbers (`flops = "2*M*N*K"`, `bytes = ...`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Bench {
    pub flops: Option<Expr>,
    pub bytes: Option<Expr>,
}

/// A non-constexpr kernel parameter (`kind = "..."`).
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Arg {
    /// A pointer to a tensor's first element.
    Tensor(TensorArg),
    /// An integer or float scalar.
    Scalar(ScalarArg),
    /// Sugar for the scalar stride (in elements) of tensor `of` along `dim`.
    Stride(StrideArg),
    /// A host-side `TensorDescriptor` over tensor `of`.
    Desc(DescArg),
    /// A device array of int64 addresses of the tensors `of`, in order.
    PtrArray(PtrArrayArg),
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TensorArg {
    pub name: String,
    pub dtype: String,
    pub shape: Vec<Expr>,
    /// Element strides; row-major contiguous when absent.
    pub strides: Option<Vec<Expr>>,
    /// Initial values; outputs without one are poisoned (NaN).
    pub init: Option<Init>,
    #[serde(default)]
    pub output: bool,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScalarArg {
    pub name: String,
    /// `i32`, `i64`, `fp32`...
    pub dtype: String,
    pub value: ScalarValue,
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum ScalarValue {
    Int(i64),
    Float(f64),
    Expr(String),
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StrideArg {
    pub name: String,
    pub of: String,
    pub dim: usize,
    #[serde(default = "default_stride_dtype")]
    pub dtype: String,
}

fn default_stride_dtype() -> String {
    "i32".into()
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DescArg {
    pub name: String,
    pub of: String,
    pub block: Vec<Expr>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PtrArrayArg {
    pub name: String,
    pub of: Vec<String>,
}

/// How a tensor is filled (`init = { dist = "randn", scale = 0.5 }`).
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(tag = "dist", rename_all = "snake_case", deny_unknown_fields)]
pub enum Init {
    /// Normal(mean, scale²).
    Randn {
        #[serde(default = "one")]
        scale: f64,
        #[serde(default)]
        mean: f64,
    },
    /// Uniform on [low, high).
    Uniform { low: f64, high: f64 },
    /// Uniform integers on [low, high).
    Randint { low: i64, high: i64 },
    /// Zeros (accumulating outputs such as atomic-add targets).
    Zeros,
    /// Given values, row-major; their count must equal the element count.
    Values { values: Vec<Expr> },
}

fn one() -> f64 {
    1.0
}

impl Arg {
    pub fn name(&self) -> &str {
        match self {
            Arg::Tensor(t) => &t.name,
            Arg::Scalar(s) => &s.name,
            Arg::Stride(s) => &s.name,
            Arg::Desc(d) => &d.name,
            Arg::PtrArray(p) => &p.name,
        }
    }
}

impl Expr {
    pub fn eval(&self, env: &BTreeMap<String, i64>) -> Result<i64, String> {
        match self {
            Expr::Int(v) => Ok(*v),
            Expr::Text(s) => {
                expr::eval(s, &|n| env.get(n).copied()).map_err(|e| format!("in `{s}`: {e}"))
            }
        }
    }
}

impl Constexpr {
    /// The value as Python source, as `--signature` and `-D` take it.
    pub fn python(&self) -> String {
        match self {
            Constexpr::Bool(true) => "True".into(),
            Constexpr::Bool(false) => "False".into(),
            Constexpr::Int(v) => v.to_string(),
            Constexpr::Float(v) => format!("{v:?}"),
            Constexpr::Str(s) => {
                let escaped = s.replace('\\', "\\\\").replace('\'', "\\'");
                format!("'{escaped}'")
            }
            Constexpr::Raw { py } => py.clone(),
        }
    }
}

/// What a runner passes for one non-constexpr parameter, in parameter order.
#[derive(Debug, Clone, PartialEq)]
pub enum LaunchArg {
    /// The address of the tensor (or buffer) of this name.
    Tensor(String),
    /// An integer scalar of type `dtype`.
    Int { value: i64, dtype: ScalarType },
    /// A float scalar of type `dtype`.
    Float { value: f64, dtype: ScalarType },
    /// A host tensor descriptor. The compiler expands a `tensordesc`
    /// parameter `x` into `x_base` (pointer), `x_shape0..` (i32) and
    /// `x_stride0..` (i64), in that order.
    Desc {
        of: String,
        shape: Vec<i64>,
        strides: Vec<i64>,
        block: Vec<i64>,
    },
    /// A device array of the addresses of these tensors (int64 each).
    PtrArray(Vec<String>),
}

/// The compile options a case implies, in the shape of
/// `tawa_frontend::CompileOptions`.
#[derive(Debug, Clone, PartialEq)]
pub struct CompileArgs {
    pub kernel: Option<String>,
    pub signature: Option<String>,
    pub defines: Vec<(String, String)>,
    pub num_warps: Option<u32>,
    pub num_stages: Option<u32>,
}

pub(crate) fn parse_dtype(s: &str) -> Result<ScalarType, String> {
    ScalarType::parse(s).ok_or_else(|| format!("unknown dtype `{s}`"))
}

impl Case {
    pub fn has_tag(&self, tag: &str) -> bool {
        self.tags.iter().any(|t| t == tag)
    }

    /// The names of the expression language: sizes, then integer and
    /// boolean constexprs. A name in both is an error.
    pub fn env(&self) -> Result<BTreeMap<String, i64>, String> {
        let mut env = self.sizes.clone();
        for (name, value) in &self.constexprs {
            let v = match value {
                Constexpr::Int(v) => *v,
                Constexpr::Bool(b) => i64::from(*b),
                _ => continue,
            };
            if env.insert(name.clone(), v).is_some() {
                return Err(format!("`{name}` is both a size and a constexpr"));
            }
        }
        Ok(env)
    }

    /// All tensors of the case (buffers, then tensor arguments).
    pub fn tensors(&self) -> impl Iterator<Item = &TensorArg> {
        self.buffers
            .iter()
            .chain(self.args.iter().filter_map(|a| match a {
                Arg::Tensor(t) => Some(t),
                _ => None,
            }))
    }

    pub fn tensor(&self, name: &str) -> Result<&TensorArg, String> {
        self.tensors()
            .find(|t| t.name == name)
            .ok_or_else(|| format!("no tensor `{name}`"))
    }

    /// Evaluated shape and element strides of a tensor.
    pub fn layout(&self, t: &TensorArg) -> Result<(Vec<usize>, Vec<usize>), String> {
        let env = self.env()?;
        let to_usize = |e: &Expr, what: &str| -> Result<usize, String> {
            let v = e.eval(&env)?;
            usize::try_from(v).map_err(|_| format!("tensor `{}`: negative {what} {v}", t.name))
        };
        let shape = t
            .shape
            .iter()
            .map(|e| to_usize(e, "extent"))
            .collect::<Result<Vec<_>, _>>()?;
        let strides = match &t.strides {
            Some(s) if s.len() != shape.len() => {
                return Err(format!(
                    "tensor `{}`: {} strides for {} dims",
                    t.name,
                    s.len(),
                    shape.len()
                ))
            }
            Some(s) => s
                .iter()
                .map(|e| to_usize(e, "stride"))
                .collect::<Result<Vec<_>, _>>()?,
            None => contiguous_strides(&shape),
        };
        Ok((shape, strides))
    }

    /// The grid, three dimensions, each at least 1.
    pub fn grid(&self) -> Result<[u32; 3], String> {
        if self.grid.is_empty() || self.grid.len() > 3 {
            return Err(format!(
                "grid has {} dimensions, expected 1 to 3",
                self.grid.len()
            ));
        }
        let env = self.env()?;
        let mut out = [1u32; 3];
        for (i, e) in self.grid.iter().enumerate() {
            let v = e.eval(&env)?;
            out[i] = u32::try_from(v)
                .ok()
                .filter(|v| *v >= 1)
                .ok_or_else(|| format!("grid dimension {i} is {v}, expected 1..2^32"))?;
        }
        Ok(out)
    }

    /// `(flops, bytes)` of the `bench` table, when given.
    pub fn bench_work(&self) -> Result<(Option<i64>, Option<i64>), String> {
        let env = self.env()?;
        let Some(b) = &self.bench else {
            return Ok((None, None));
        };
        let flops = b.flops.as_ref().map(|e| e.eval(&env)).transpose()?;
        let bytes = b.bytes.as_ref().map(|e| e.eval(&env)).transpose()?;
        Ok((flops, bytes))
    }

    /// The value of a scalar argument, as f64 (integers are exact).
    pub fn scalar(&self, name: &str) -> Result<f64, String> {
        for (n, arg) in self.launch_args()? {
            if n == name {
                return match arg {
                    LaunchArg::Int { value, .. } => Ok(value as f64),
                    LaunchArg::Float { value, .. } => Ok(value),
                    _ => Err(format!("argument `{name}` is not a scalar")),
                };
            }
        }
        Err(format!("no scalar argument `{name}`"))
    }

    /// The integer scalar arguments (sizes, strides) by name: what the
    /// compiler is told of the launch it compiles for
    /// (`PipelineOptions::launch_values`).
    pub fn int_launch_values(&self) -> Result<Vec<(String, i64)>, String> {
        Ok(self
            .launch_args()?
            .into_iter()
            .filter_map(|(name, arg)| match arg {
                LaunchArg::Int { value, .. } => Some((name, value)),
                _ => None,
            })
            .collect())
    }

    /// The launch arguments, one per non-constexpr parameter, in order.
    pub fn launch_args(&self) -> Result<Vec<(String, LaunchArg)>, String> {
        let env = self.env()?;
        let mut out = Vec::new();
        for arg in &self.args {
            let value = match arg {
                Arg::Tensor(t) => {
                    parse_dtype(&t.dtype)?;
                    LaunchArg::Tensor(t.name.clone())
                }
                Arg::Scalar(s) => {
                    let dtype = parse_dtype(&s.dtype)?;
                    match (&s.value, dtype.is_float()) {
                        (ScalarValue::Float(v), true) => LaunchArg::Float { value: *v, dtype },
                        (ScalarValue::Int(v), true) => LaunchArg::Float {
                            value: *v as f64,
                            dtype,
                        },
                        (ScalarValue::Int(v), false) => LaunchArg::Int { value: *v, dtype },
                        (ScalarValue::Expr(e), false) => LaunchArg::Int {
                            value: expr::eval(e, &|n| env.get(n).copied())
                                .map_err(|err| format!("argument `{}`: {err}", s.name))?,
                            dtype,
                        },
                        (v, _) => {
                            return Err(format!(
                                "argument `{}`: value {v:?} does not fit dtype {}",
                                s.name, s.dtype
                            ))
                        }
                    }
                }
                Arg::Stride(s) => {
                    let t = self.tensor(&s.of)?;
                    let (_, strides) = self.layout(t)?;
                    let stride = strides.get(s.dim).ok_or_else(|| {
                        format!("argument `{}`: `{}` has no dim {}", s.name, s.of, s.dim)
                    })?;
                    LaunchArg::Int {
                        value: *stride as i64,
                        dtype: parse_dtype(&s.dtype)?,
                    }
                }
                Arg::Desc(d) => {
                    let t = self.tensor(&d.of)?;
                    let (shape, strides) = self.layout(t)?;
                    let block = d
                        .block
                        .iter()
                        .map(|e| e.eval(&env))
                        .collect::<Result<Vec<_>, _>>()?;
                    if block.len() != shape.len() {
                        return Err(format!(
                            "argument `{}`: block has {} dims, `{}` has {}",
                            d.name,
                            block.len(),
                            d.of,
                            shape.len()
                        ));
                    }
                    LaunchArg::Desc {
                        of: d.of.clone(),
                        shape: shape.iter().map(|v| *v as i64).collect(),
                        strides: strides.iter().map(|v| *v as i64).collect(),
                        block,
                    }
                }
                Arg::PtrArray(p) => {
                    for name in &p.of {
                        self.tensor(name)?;
                    }
                    LaunchArg::PtrArray(p.of.clone())
                }
            };
            out.push((arg.name().to_string(), value));
        }
        Ok(out)
    }
}

pub(crate) fn contiguous_strides(shape: &[usize]) -> Vec<usize> {
    let mut strides = vec![1; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        strides[i] = strides[i + 1] * shape[i + 1];
    }
    strides
}

/// A dtype as Triton's signatures spell it: `fp16`, `bf16`, `fp32`,
/// `i32`, `i64`, `u8`...
fn sig_dtype(dtype: ScalarType) -> &'static str {
    if dtype.is_float() {
        dtype.triton_name()
    } else {
        dtype.name()
    }
}

/// Triton's specialization of integer arguments: the value 1 becomes the
/// compile-time constant `1` (so that a unit stride makes pointers
/// contiguous, and the parameter disappears from the compiled kernel), and
/// multiples of 16 get the divisibility hint `i32:16`.
fn int_signature(value: i64, dtype: ScalarType) -> String {
    if value == 1 {
        "1".to_string()
    } else if value % 16 == 0 {
        format!("{}:16", dtype.name())
    } else {
        dtype.name().to_string()
    }
}

impl ExampleSpec {
    pub fn case(&self, name: &str) -> Result<&Case, String> {
        self.cases
            .iter()
            .find(|c| c.name == name)
            .ok_or_else(|| format!("no case `{name}`"))
    }

    /// The tensor name playing `role` for the reference.
    pub fn role<'a>(&'a self, role: &'a str) -> &'a str {
        self.roles.get(role).map(String::as_str).unwrap_or(role)
    }

    /// Triton's AOT signature for a case: one entry per parameter, e.g.
    /// `*fp16:16, i32, i32:16, 64, 'leaky_relu'`.
    pub fn signature(&self, case: &Case) -> Result<String, String> {
        let launch: BTreeMap<String, LaunchArg> = case.launch_args()?.into_iter().collect();
        let mut parts = Vec::new();
        for param in &self.params {
            let part = if let Some(c) = case.constexprs.get(param) {
                c.python()
            } else {
                match launch.get(param) {
                    Some(LaunchArg::Tensor(name)) => {
                        let t = case.tensor(name)?;
                        format!("*{}:16", sig_dtype(parse_dtype(&t.dtype)?))
                    }
                    Some(LaunchArg::PtrArray(_)) => "*i64:16".into(),
                    Some(LaunchArg::Int { value, dtype }) => int_signature(*value, *dtype),
                    Some(LaunchArg::Float { dtype, .. }) => sig_dtype(*dtype).into(),
                    Some(LaunchArg::Desc { of, block, .. }) => {
                        let t = case.tensor(of)?;
                        let dims: Vec<String> = block.iter().map(i64::to_string).collect();
                        format!(
                            "tensordesc<{}[{}]>",
                            sig_dtype(parse_dtype(&t.dtype)?),
                            dims.join(", ")
                        )
                    }
                    None => {
                        return Err(format!(
                            "case `{}`: parameter `{param}` has no argument or constexpr",
                            case.name
                        ))
                    }
                }
            };
            parts.push(part);
        }
        Ok(parts.join(", "))
    }

    /// Constexpr bindings by name, in parameter order (`-D NAME=VALUE`).
    pub fn defines(&self, case: &Case) -> Vec<(String, String)> {
        self.params
            .iter()
            .filter_map(|p| case.constexprs.get(p).map(|c| (p.clone(), c.python())))
            .collect()
    }

    /// Everything the compiler needs for a case. The constexprs are both in
    /// the signature (positional, as Triton's AOT compiler takes them) and
    /// in `defines` (by name); the values are the same.
    pub fn compile_args(&self, case: &Case) -> Result<CompileArgs, String> {
        Ok(CompileArgs {
            kernel: Some(self.kernel.clone()),
            signature: Some(self.signature(case)?),
            defines: self.defines(case),
            num_warps: case.num_warps,
            num_stages: case.num_stages,
        })
    }

    /// Checks what serde cannot: parameters versus arguments and constexprs,
    /// unique names, references, every expression, the grid.
    pub fn validate(&self) -> Result<(), String> {
        if self.cases.is_empty() {
            return Err("no [[case]]".into());
        }
        if !crate::reference::REFERENCES.contains(&self.reference.as_str()) {
            return Err(format!("unknown reference `{}`", self.reference));
        }
        let mut case_names = BTreeSet::new();
        for case in &self.cases {
            let ctx = |e: String| format!("case `{}`: {e}", case.name);
            if !case_names.insert(&case.name) {
                return Err(ctx("duplicate case name".into()));
            }
            // How a case is checked depends on it: small ones against the
            // interpreter, large ones against a GPU reference. A case with
            // neither would be interpreted at GPU sizes (hours).
            if case.has_tag("small") == case.has_tag("large") {
                return Err(ctx(
                    "needs exactly one of the tags `small` and `large`".into()
                ));
            }
            let runtime: Vec<&str> = self
                .params
                .iter()
                .map(String::as_str)
                .filter(|p| !case.constexprs.contains_key(*p))
                .collect();
            let args: Vec<&str> = case.args.iter().map(Arg::name).collect();
            if runtime != args {
                return Err(ctx(format!(
                    "arguments {args:?} do not match the non-constexpr parameters {runtime:?}"
                )));
            }
            for c in case.constexprs.keys() {
                if !self.params.contains(c) {
                    return Err(ctx(format!("constexpr `{c}` is not a parameter")));
                }
            }
            let mut names = BTreeSet::new();
            for t in case.tensors() {
                if !names.insert(&t.name) {
                    return Err(ctx(format!("duplicate tensor `{}`", t.name)));
                }
                parse_dtype(&t.dtype).map_err(ctx)?;
                let (shape, _) = case.layout(t).map_err(ctx)?;
                let count: usize = shape.iter().product();
                if let Some(Init::Values { values }) = &t.init {
                    if values.len() != count {
                        return Err(ctx(format!(
                            "tensor `{}`: {} values for {count} elements",
                            t.name,
                            values.len()
                        )));
                    }
                }
            }
            case.grid().map_err(ctx)?;
            case.bench_work().map_err(ctx)?;
            self.signature(case).map_err(ctx)?;
            if !(case.tolerance.atol >= 0.0 && case.tolerance.rtol >= 0.0) {
                return Err(ctx("tolerances must be non-negative".into()));
            }
        }
        Ok(())
    }
}
