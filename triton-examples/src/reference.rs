//! Plain-Rust references, independent of the kernels: straightforward f64
//! loops over the (already rounded) inputs, outputs rounded to the output
//! dtype once at the end. Tensors are found by role (`a`, `b`, `c`...)
//! through the spec's `roles` table; results are keyed by tensor name and
//! hold the logical elements, row-major.

use std::collections::BTreeMap;

use crate::inputs::{by_name, round_to, HostTensor};
use crate::spec::{Case, Constexpr, ExampleSpec, LaunchArg};

/// The names a spec's `reference` may take.
pub const REFERENCES: &[&str] = &[
    "vector_add",
    "softmax",
    "matmul",
    "layer_norm",
    "attention",
    "grouped_gemm",
    "geglu",
    "gemm_row_reduce",
    "batched_matmul",
    "matmul_bt",
    "accumulate",
];

pub type Outputs = BTreeMap<String, Vec<f64>>;

/// The matrix product the GEMM-like references use: `a · b` of two rank-2
/// tensors (their logical values; shapes already checked to chain), row-major
/// `rows(a) × cols(b)` values. [`run_reference`] computes it here in f64;
/// the GPU harness passes cuBLAS (fp32 accumulation) for large cases, so the
/// epilogues (activations, GELU gating, row sums) stay in one place.
pub type MatmulFn<'a> = dyn Fn(&HostTensor, &HostTensor) -> Result<Vec<f64>, String> + 'a;

/// Expected outputs of a case, by tensor name.
pub fn run_reference(
    spec: &ExampleSpec,
    case: &Case,
    inputs: &[HostTensor],
) -> Result<Outputs, String> {
    run_reference_with(spec, case, inputs, &cpu_matmul)
}

/// `a · b` in f64 on the host.
fn cpu_matmul(a: &HostTensor, b: &HostTensor) -> Result<Vec<f64>, String> {
    match (&a.shape[..], &b.shape[..]) {
        ([m, k], [_, n]) => Ok(matmul(&a.logical(), &b.logical(), *m, *k, *n)),
        _ => Err(format!("`{}` and `{}` must be 2-D", a.name, b.name)),
    }
}

/// [`run_reference`] with the matrix products computed by `matmul`.
pub fn run_reference_with(
    spec: &ExampleSpec,
    case: &Case,
    inputs: &[HostTensor],
    matmul: &MatmulFn,
) -> Result<Outputs, String> {
    let ctx = Ctx {
        spec,
        case,
        tensors: by_name(inputs),
        matmul,
    };
    match spec.reference.as_str() {
        "vector_add" => vector_add_ref(&ctx),
        "softmax" => softmax_ref(&ctx),
        "matmul" => matmul_ref(&ctx),
        "layer_norm" => layer_norm_ref(&ctx),
        "attention" => attention_ref(&ctx),
        "grouped_gemm" => grouped_gemm_ref(&ctx),
        "geglu" => geglu_ref(&ctx),
        "gemm_row_reduce" => gemm_row_reduce_ref(&ctx),
        "batched_matmul" => batched_matmul_ref(&ctx),
        "matmul_bt" => matmul_bt_ref(&ctx),
        "accumulate" => accumulate_ref(&ctx),
        other => Err(format!("unknown reference `{other}`")),
    }
}

struct Ctx<'a> {
    spec: &'a ExampleSpec,
    case: &'a Case,
    tensors: BTreeMap<&'a str, &'a HostTensor>,
    matmul: &'a MatmulFn<'a>,
}

impl<'a> Ctx<'a> {
    fn tensor(&self, role: &str) -> Result<&'a HostTensor, String> {
        let name = self.spec.role(role);
        self.tensors
            .get(name)
            .copied()
            .ok_or_else(|| format!("reference `{}`: no tensor `{name}`", self.spec.reference))
    }

    /// The logical values of the tensors playing roles `a` and `b`, of
    /// the same length.
    fn vector_pair(&self, a: &str, b: &str) -> Result<(Vec<f64>, Vec<f64>), String> {
        let (va, vb) = (self.tensor(a)?.logical(), self.tensor(b)?.logical());
        if va.len() != vb.len() {
            return Err(format!("{a} and {b} differ in length"));
        }
        Ok((va, vb))
    }

    /// A rank-2 tensor's logical values and (rows, cols).
    fn matrix(&self, role: &str) -> Result<(Vec<f64>, usize, usize), String> {
        let t = self.tensor(role)?;
        match t.shape[..] {
            [r, c] => Ok((t.logical(), r, c)),
            _ => Err(format!("`{}` must be 2-D, is {:?}", t.name, t.shape)),
        }
    }

    /// `a · b` of the tensors playing roles `a` and `b`, with `(m, n)`:
    /// over their leading `K` columns and rows where the case's size `K`
    /// is smaller than their inner extent (a kernel whose loop runs to an
    /// argument `K` short of the tensors its descriptors cover).
    fn product(&self, a: &str, b: &str) -> Result<(Vec<f64>, usize, usize), String> {
        let (ta, tb) = (self.tensor(a)?, self.tensor(b)?);
        let (&[m, k], &[k2, n]) = (&ta.shape[..], &tb.shape[..]) else {
            return Err(format!(
                "`{}` {:?} and `{}` {:?} must be 2-D",
                ta.name, ta.shape, tb.name, tb.shape
            ));
        };
        check_inner((m, k), (k2, n))?;
        let short = self
            .case
            .sizes
            .get("K")
            .and_then(|&s| usize::try_from(s).ok());
        let c = match short.filter(|&s| s < k) {
            Some(s) => {
                // Views of the leading columns of `a` and rows of `b`:
                // the same storage and strides, shorter shapes.
                let va = HostTensor {
                    shape: vec![m, s],
                    ..ta.clone()
                };
                let vb = HostTensor {
                    shape: vec![s, n],
                    ..tb.clone()
                };
                (self.matmul)(&va, &vb)?
            }
            None => (self.matmul)(ta, tb)?,
        };
        if c.len() != m * n {
            return Err(format!("matmul gave {} values for {m}x{n}", c.len()));
        }
        Ok((c, m, n))
    }

    fn output(&self, out: &mut Outputs, role: &str, values: Vec<f64>) -> Result<(), String> {
        let t = self.tensor(role)?;
        if values.len() != t.numel() {
            return Err(format!(
                "reference `{}`: {} values for `{}` of {} elements",
                self.spec.reference,
                values.len(),
                t.name,
                t.numel()
            ));
        }
        out.insert(
            t.name.clone(),
            values.into_iter().map(|v| round_to(t.dtype, v)).collect(),
        );
        Ok(())
    }

    fn constexpr(&self, name: &str) -> Option<&'a Constexpr> {
        self.case.constexprs.get(name)
    }
}

/// `[m, k] @ [k, n]` in f64.
pub fn matmul(a: &[f64], b: &[f64], m: usize, k: usize, n: usize) -> Vec<f64> {
    let mut c = vec![0.0; m * n];
    for i in 0..m {
        for p in 0..k {
            let av = a[i * k + p];
            for j in 0..n {
                c[i * n + j] += av * b[p * n + j];
            }
        }
    }
    c
}

pub fn leaky_relu(x: f64) -> f64 {
    if x >= 0.0 {
        x
    } else {
        0.01 * x
    }
}

/// GELU, tanh approximation.
pub fn gelu_tanh(x: f64) -> f64 {
    let u = (2.0 / std::f64::consts::PI).sqrt() * (x + 0.044715 * x * x * x);
    0.5 * x * (1.0 + u.tanh())
}

/// Softmax of each row of a `[rows, cols]` matrix.
pub fn softmax_rows(x: &[f64], rows: usize, cols: usize) -> Vec<f64> {
    let mut y = vec![0.0; rows * cols];
    for r in 0..rows {
        let row = &x[r * cols..(r + 1) * cols];
        let max = row.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let sum: f64 = row.iter().map(|v| (v - max).exp()).sum();
        for c in 0..cols {
            y[r * cols + c] = (row[c] - max).exp() / sum;
        }
    }
    y
}

fn vector_add_ref(ctx: &Ctx) -> Result<Outputs, String> {
    let (x, y) = ctx.vector_pair("x", "y")?;
    let mut out = Outputs::new();
    ctx.output(&mut out, "out", elementwise_sum(&x, &y))?;
    Ok(out)
}

/// `old = acc; acc += x`: `acc` as given (its initial values) is both
/// what `old` must read back and what `x` is added to.
fn accumulate_ref(ctx: &Ctx) -> Result<Outputs, String> {
    let (x, acc) = ctx.vector_pair("x", "acc")?;
    let mut out = Outputs::new();
    ctx.output(&mut out, "acc", elementwise_sum(&acc, &x))?;
    ctx.output(&mut out, "old", acc)?;
    Ok(out)
}

fn elementwise_sum(a: &[f64], b: &[f64]) -> Vec<f64> {
    a.iter().zip(b).map(|(a, b)| a + b).collect()
}

fn softmax_ref(ctx: &Ctx) -> Result<Outputs, String> {
    let (x, rows, cols) = ctx.matrix("input")?;
    let mut out = Outputs::new();
    ctx.output(&mut out, "output", softmax_rows(&x, rows, cols))?;
    Ok(out)
}

fn check_inner(a: (usize, usize), b: (usize, usize)) -> Result<(), String> {
    if a.1 != b.0 {
        return Err(format!("inner dimensions differ: {a:?} @ {b:?}"));
    }
    Ok(())
}

fn matmul_ref(ctx: &Ctx) -> Result<Outputs, String> {
    let (mut c, _, _) = ctx.product("a", "b")?;
    match ctx.constexpr("ACTIVATION") {
        None => {}
        Some(Constexpr::Str(s)) if s.is_empty() => {}
        Some(Constexpr::Str(s)) if s == "leaky_relu" => {
            c.iter_mut().for_each(|v| *v = leaky_relu(*v))
        }
        Some(other) => return Err(format!("unknown ACTIVATION {}", other.python())),
    }
    let mut out = Outputs::new();
    ctx.output(&mut out, "c", c)?;
    Ok(out)
}

/// `c = a · btᵀ` with `bt` given as `[N, K]` (a weight stored output by
/// input features, or a TMA descriptor's K-contiguous B): the product of
/// `a` with the `[K, N]` view of `bt`'s storage.
fn matmul_bt_ref(ctx: &Ctx) -> Result<Outputs, String> {
    let (a, bt) = (ctx.tensor("a")?, ctx.tensor("bt")?);
    let (&[_, k], &[n, k2], &[s0, s1]) = (&a.shape[..], &bt.shape[..], &bt.strides[..]) else {
        return Err(format!(
            "`{}` {:?} and `{}` {:?} must be 2-D",
            a.name, a.shape, bt.name, bt.shape
        ));
    };
    if k != k2 {
        return Err(format!("`{}` has {k} columns, `{}` {k2}", a.name, bt.name));
    }
    let b = HostTensor {
        shape: vec![k, n],
        strides: vec![s1, s0],
        ..bt.clone()
    };
    let c = (ctx.matmul)(a, &b)?;
    let mut out = Outputs::new();
    ctx.output(&mut out, "c", c)?;
    Ok(out)
}

fn layer_norm_ref(ctx: &Ctx) -> Result<Outputs, String> {
    let (x, rows, cols) = ctx.matrix("x")?;
    let w = ctx.tensor("w")?.logical();
    let b = ctx.tensor("b")?.logical();
    let eps = ctx.case.scalar("eps")?;
    if w.len() != cols || b.len() != cols {
        return Err("w and b must have one value per column".into());
    }
    let (mut y, mut means, mut rstds) = (vec![0.0; rows * cols], vec![0.0; rows], vec![0.0; rows]);
    for r in 0..rows {
        let row = &x[r * cols..(r + 1) * cols];
        let mean = row.iter().sum::<f64>() / cols as f64;
        let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / cols as f64;
        let rstd = 1.0 / (var + eps).sqrt();
        for c in 0..cols {
            y[r * cols + c] = (row[c] - mean) * rstd * w[c] + b[c];
        }
        means[r] = mean;
        rstds[r] = rstd;
    }
    let mut out = Outputs::new();
    ctx.output(&mut out, "y", y)?;
    ctx.output(&mut out, "mean", means)?;
    ctx.output(&mut out, "rstd", rstds)?;
    Ok(out)
}

/// Attention over `[Z, H, N_CTX, D]` tensors. Also `M`: per row, the
/// base-2 logsumexp of the scaled scores, `log2 Σ_j 2^(s_ij · sm_scale ·
/// log2 e)`, which is what the kernel stores.
fn attention_ref(ctx: &Ctx) -> Result<Outputs, String> {
    let qt = ctx.tensor("q")?;
    let [z, h, n, d] = qt.shape[..] else {
        return Err(format!("`{}` must be 4-D [Z, H, N_CTX, HEAD_DIM]", qt.name));
    };
    let (q, k, v) = (
        qt.logical(),
        ctx.tensor("k")?.logical(),
        ctx.tensor("v")?.logical(),
    );
    if k.len() != q.len() || v.len() != q.len() {
        return Err("q, k, v differ in shape".into());
    }
    let causal = match ctx.constexpr("STAGE") {
        Some(Constexpr::Int(3)) => true,
        Some(Constexpr::Int(1)) => false,
        other => return Err(format!("STAGE must be 1 or 3, is {other:?}")),
    };
    let sm_scale = ctx.case.scalar("sm_scale")?;
    let mut o = vec![0.0; z * h * n * d];
    let mut lse2 = vec![0.0; z * h * n];
    for zh in 0..z * h {
        let base = zh * n * d;
        for i in 0..n {
            let keys = if causal { i + 1 } else { n };
            let scores: Vec<f64> = (0..keys)
                .map(|j| {
                    let dot: f64 = (0..d)
                        .map(|e| q[base + i * d + e] * k[base + j * d + e])
                        .sum();
                    dot * sm_scale
                })
                .collect();
            let max = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let weights: Vec<f64> = scores.iter().map(|s| (s - max).exp()).collect();
            let sum: f64 = weights.iter().sum();
            for e in 0..d {
                let acc: f64 = (0..keys).map(|j| weights[j] * v[base + j * d + e]).sum();
                o[base + i * d + e] = acc / sum;
            }
            lse2[zh * n + i] = (max + sum.ln()) / std::f64::consts::LN_2;
        }
    }
    let mut out = Outputs::new();
    ctx.output(&mut out, "o", o)?;
    ctx.output(&mut out, "m", lse2)?;
    Ok(out)
}

fn grouped_gemm_ref(ctx: &Ctx) -> Result<Outputs, String> {
    let lists = ctx.case.launch_args()?;
    let ptr_array = |role: &str| -> Result<Vec<String>, String> {
        let name = ctx.spec.role(role);
        lists
            .iter()
            .find_map(|(n, a)| match a {
                LaunchArg::PtrArray(of) if n == name => Some(of.clone()),
                _ => None,
            })
            .ok_or_else(|| format!("no pointer array `{name}`"))
    };
    let (a_list, b_list, c_list) = (
        ptr_array("a_ptrs")?,
        ptr_array("b_ptrs")?,
        ptr_array("c_ptrs")?,
    );
    if a_list.len() != b_list.len() || a_list.len() != c_list.len() {
        return Err("pointer arrays differ in length".into());
    }
    let mut out = Outputs::new();
    for ((a_name, b_name), c_name) in a_list.iter().zip(&b_list).zip(&c_list) {
        let (c, _, _) = ctx.product(a_name, b_name)?;
        ctx.output(&mut out, c_name, c)?;
    }
    Ok(out)
}

fn geglu_ref(ctx: &Ctx) -> Result<Outputs, String> {
    let (gate, _, n) = ctx.product("a", "wg")?;
    let (up, _, n2) = ctx.product("a", "wu")?;
    if n != n2 {
        return Err("wg and wu differ in shape".into());
    }
    let h = gate
        .iter()
        .zip(&up)
        .map(|(g, u)| gelu_tanh(*g) * u)
        .collect();
    let mut out = Outputs::new();
    ctx.output(&mut out, "h", h)?;
    Ok(out)
}

/// `c[i] = a[i] · b[i]` for every batch `i` of rank-3 `a` `[B, M, K]`
/// and `b` `[B, K, N]`, each product through the context's matmul (on
/// the batch's logical values as a contiguous rank-2 tensor).
fn batched_matmul_ref(ctx: &Ctx) -> Result<Outputs, String> {
    let (ta, tb) = (ctx.tensor("a")?, ctx.tensor("b")?);
    let (&[batch, m, k], &[batch_b, k2, n]) = (&ta.shape[..], &tb.shape[..]) else {
        return Err(format!(
            "`{}` {:?} and `{}` {:?} must be 3-D",
            ta.name, ta.shape, tb.name, tb.shape
        ));
    };
    if batch != batch_b {
        return Err(format!("batches of {batch} and {batch_b} GEMMs"));
    }
    check_inner((m, k), (k2, n))?;
    let (a, b) = (ta.logical(), tb.logical());
    let slice = |t: &HostTensor, values: &[f64], rows: usize, cols: usize| HostTensor {
        name: t.name.clone(),
        dtype: t.dtype,
        shape: vec![rows, cols],
        strides: vec![cols, 1],
        data: values.to_vec(),
        output: false,
        pointers_to: None,
    };
    let mut c = Vec::with_capacity(batch * m * n);
    for i in 0..batch {
        let ai = slice(ta, &a[i * m * k..(i + 1) * m * k], m, k);
        let bi = slice(tb, &b[i * k * n..(i + 1) * k * n], k, n);
        let ci = (ctx.matmul)(&ai, &bi)?;
        if ci.len() != m * n {
            return Err(format!("matmul gave {} values for {m}x{n}", ci.len()));
        }
        c.extend(ci);
    }
    let mut out = Outputs::new();
    ctx.output(&mut out, "c", c)?;
    Ok(out)
}

fn gemm_row_reduce_ref(ctx: &Ctx) -> Result<Outputs, String> {
    let (c, m, n) = ctx.product("a", "b")?;
    let sums = (0..m).map(|i| c[i * n..(i + 1) * n].iter().sum()).collect();
    let mut out = Outputs::new();
    ctx.output(&mut out, "c", c)?;
    ctx.output(&mut out, "row_sum", sums)?;
    Ok(out)
}
