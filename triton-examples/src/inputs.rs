//! Host tensors for a case: seeded, deterministic inputs rounded to their
//! dtype, poisoned outputs, and the comparison of results with expectations.
//!
//! The generator is a hand-written splitmix64 with Box-Muller normals: a few
//! lines, no dependency, and a stream that never changes under us (a `rand`
//! upgrade could change every input and every blessed number).

use std::collections::BTreeMap;

use half::{bf16, f16};
use tawa_ir::types::ScalarType;

use crate::spec::{parse_dtype, Arg, Case, Init, LaunchArg};

/// One host-side tensor. `data` is the whole storage span
/// (`1 + Σ (shape_i - 1) * strides_i` elements); elements outside the view
/// (gaps of strided tensors) are NaN for floats, so reading them shows up.
#[derive(Debug, Clone, PartialEq)]
pub struct HostTensor {
    pub name: String,
    pub dtype: ScalarType,
    pub shape: Vec<usize>,
    /// Element strides.
    pub strides: Vec<usize>,
    /// Values already rounded to `dtype`.
    pub data: Vec<f64>,
    pub output: bool,
    /// For pointer arrays: the tensors whose addresses the runner writes
    /// here (int64 each) once they are allocated; `data` is zeros until then.
    pub pointers_to: Option<Vec<String>>,
}

impl HostTensor {
    pub fn numel(&self) -> usize {
        self.shape.iter().product()
    }

    /// Storage offset of each logical element, row-major order.
    pub fn offsets(&self) -> Vec<usize> {
        let mut out = Vec::with_capacity(self.numel());
        if self.shape.contains(&0) {
            return out;
        }
        let mut idx = vec![0usize; self.shape.len()];
        loop {
            out.push(idx.iter().zip(&self.strides).map(|(i, s)| i * s).sum());
            let mut d = self.shape.len();
            loop {
                if d == 0 {
                    return out;
                }
                d -= 1;
                idx[d] += 1;
                if idx[d] < self.shape[d] {
                    break;
                }
                idx[d] = 0;
            }
        }
    }

    /// The logical elements, row-major contiguous.
    pub fn logical(&self) -> Vec<f64> {
        self.gather(&self.data)
    }

    /// The logical elements of a storage buffer laid out like this tensor
    /// (e.g. an output read back from the device).
    pub fn gather(&self, storage: &[f64]) -> Vec<f64> {
        // Contiguous row-major: the storage is the view (large GPU cases
        // would otherwise build an offset table of every element).
        if self.strides == crate::spec::contiguous_strides(&self.shape)
            && storage.len() >= self.numel()
        {
            return storage[..self.numel()].to_vec();
        }
        self.offsets()
            .into_iter()
            .map(|o| storage.get(o).copied().unwrap_or(f64::NAN))
            .collect()
    }
}

/// Storage span of a view.
fn span(shape: &[usize], strides: &[usize]) -> usize {
    if shape.contains(&0) {
        return 0;
    }
    1 + shape
        .iter()
        .zip(strides)
        .map(|(n, s)| (n - 1) * s)
        .sum::<usize>()
}

/// `x` rounded to the nearest value of `dtype` (integers: truncated toward
/// zero and wrapped as the dtype would store them is NOT done; they must
/// already fit).
pub fn round_to(dtype: ScalarType, x: f64) -> f64 {
    match dtype {
        ScalarType::F16 => f16::from_f64(x).to_f64(),
        ScalarType::BF16 => bf16::from_f64(x).to_f64(),
        ScalarType::F32 => x as f32 as f64,
        ScalarType::F64 => x,
        ScalarType::F8E4M3 | ScalarType::F8E5M2 => f16::from_f64(x).to_f64(),
        _ => x.trunc(),
    }
}

/// Deterministic generator: splitmix64.
#[derive(Debug, Clone)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform on [0, 1), 53 bits.
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Standard normal (Box-Muller; one of the pair is dropped, simplicity
    /// over speed).
    pub fn normal(&mut self) -> f64 {
        let u1 = 1.0 - self.uniform(); // (0, 1]: ln is finite
        let u2 = self.uniform();
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }
}

/// FNV-1a, to give every tensor its own stream: adding a tensor to a case
/// does not change the others' values.
fn name_hash(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

fn poison(dtype: ScalarType) -> f64 {
    if dtype.is_float() {
        f64::NAN
    } else if dtype.is_signed_int() {
        // The most negative value: unlikely to be a correct result.
        -(2f64.powi(dtype_bits(dtype) as i32 - 1))
    } else {
        2f64.powi(dtype_bits(dtype) as i32) - 1.0
    }
}

fn dtype_bits(dtype: ScalarType) -> u32 {
    match dtype {
        ScalarType::I1 => 1,
        ScalarType::I8 | ScalarType::U8 | ScalarType::F8E4M3 | ScalarType::F8E5M2 => 8,
        ScalarType::I16 | ScalarType::U16 | ScalarType::F16 | ScalarType::BF16 => 16,
        ScalarType::I32 | ScalarType::U32 | ScalarType::F32 => 32,
        ScalarType::I64 | ScalarType::U64 | ScalarType::F64 => 64,
    }
}

/// Every tensor of a case (buffers first, then tensor and pointer-array
/// arguments in parameter order), filled from `seed`.
pub fn build_inputs(case: &Case, seed: u64) -> Result<Vec<HostTensor>, String> {
    let env = case.env()?;
    let mut out = Vec::new();
    for t in case.tensors() {
        let dtype = parse_dtype(&t.dtype)?;
        let (shape, strides) = case.layout(t)?;
        let len = span(&shape, &strides);
        let mut tensor = HostTensor {
            name: t.name.clone(),
            dtype,
            shape,
            strides,
            data: vec![poison(dtype); len],
            output: t.output,
            pointers_to: None,
        };
        let mut rng = SplitMix64::new(seed ^ name_hash(&t.name));
        let offsets = tensor.offsets();
        let default_init = Init::Randn {
            scale: 1.0,
            mean: 0.0,
        };
        let init = match (&t.init, t.output) {
            (Some(init), _) => init,
            (None, true) => {
                out.push(tensor);
                continue;
            }
            (None, false) => &default_init,
        };
        let values: Vec<f64> = match init {
            Init::Randn { scale, mean } => offsets
                .iter()
                .map(|_| mean + scale * rng.normal())
                .collect(),
            Init::Uniform { low, high } => offsets
                .iter()
                .map(|_| low + (high - low) * rng.uniform())
                .collect(),
            Init::Randint { low, high } => {
                if high <= low {
                    return Err(format!("tensor `{}`: empty randint range", t.name));
                }
                let range = (high - low) as u64;
                offsets
                    .iter()
                    .map(|_| (low + (rng.next_u64() % range) as i64) as f64)
                    .collect()
            }
            Init::Zeros => vec![0.0; offsets.len()],
            Init::Values { values } => values
                .iter()
                .map(|e| e.eval(&env).map(|v| v as f64))
                .collect::<Result<_, _>>()?,
        };
        if values.len() != offsets.len() {
            return Err(format!(
                "tensor `{}`: {} values for {} elements",
                t.name,
                values.len(),
                offsets.len()
            ));
        }
        for (o, v) in offsets.iter().zip(values) {
            tensor.data[*o] = round_to(dtype, v);
        }
        out.push(tensor);
    }
    for arg in &case.args {
        if let Arg::PtrArray(p) = arg {
            out.push(HostTensor {
                name: p.name.clone(),
                dtype: ScalarType::I64,
                shape: vec![p.of.len()],
                strides: vec![1],
                data: vec![0.0; p.of.len()],
                output: false,
                pointers_to: Some(p.of.clone()),
            });
        }
    }
    // Scalars are checked here too, so a runner can rely on launch_args.
    let _: Vec<(String, LaunchArg)> = case.launch_args()?;
    Ok(out)
}

/// A failed comparison, with what a person needs to see.
#[derive(Debug, Clone, PartialEq)]
pub struct Mismatch {
    pub name: String,
    pub count: usize,
    pub total: usize,
    pub max_abs_err: f64,
    /// `(index, got, expected)` of the first few mismatches.
    pub first: Vec<(usize, f64, f64)>,
}

impl std::fmt::Display for Mismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "`{}`: {} of {} elements differ, max abs error {:e}",
            self.name, self.count, self.total, self.max_abs_err
        )?;
        for (i, got, want) in &self.first {
            writeln!(f, "  [{i}] got {got} expected {want}")?;
        }
        Ok(())
    }
}

/// `|got - expected| <= atol + rtol * |expected|` for every element (NaN
/// never passes unless both are NaN); the maximum absolute error when it
/// holds.
pub fn check_close(
    name: &str,
    got: &[f64],
    expected: &[f64],
    tol: crate::spec::Tolerance,
) -> Result<f64, Mismatch> {
    let mut mismatch = Mismatch {
        name: name.into(),
        count: 0,
        total: expected.len(),
        max_abs_err: 0.0,
        first: Vec::new(),
    };
    if got.len() != expected.len() {
        mismatch.count = got.len().max(expected.len());
        mismatch.max_abs_err = f64::INFINITY;
        return Err(mismatch);
    }
    for (i, (g, e)) in got.iter().zip(expected).enumerate() {
        let err = (g - e).abs();
        let ok = (g.is_nan() && e.is_nan()) || err <= tol.atol + tol.rtol * e.abs() || g == e;
        if err.is_nan() || err > mismatch.max_abs_err {
            mismatch.max_abs_err = if err.is_nan() { f64::NAN } else { err };
        }
        if !ok {
            mismatch.count += 1;
            if mismatch.first.len() < 10 {
                mismatch.first.push((i, *g, *e));
            }
        }
    }
    if mismatch.count == 0 {
        Ok(mismatch.max_abs_err)
    } else {
        Err(mismatch)
    }
}

/// Inputs by name, for references.
pub(crate) fn by_name(inputs: &[HostTensor]) -> BTreeMap<&str, &HostTensor> {
    inputs.iter().map(|t| (t.name.as_str(), t)).collect()
}
