//! cuBLAS GEMMs on a [`Gpu`]'s stream, through cudarc's `cublas` bindings
//! (dynamic loading): the independent reference for large GEMM-like cases
//! and the baseline of `tawa-rs bench`.
//!
//! One entry point, [`Blas::gemm`]: `C = A · B` for fp16, bf16 or fp32
//! operands with fp32 accumulation (`cublasGemmEx`, `CUBLAS_COMPUTE_32F`;
//! fp32 operands therefore get true fp32, not TF32), C in the operands' type
//! or fp32. Matrices are logical `rows × cols` views with element strides,
//! as the examples' tensors are; row-major, column-major (a transposed view)
//! and padded leading dimensions all work, other strides (neither of a
//! matrix's strides 1) are refused.
//!
//! cuBLAS is column-major. [`plan_gemm`] maps the row-major world onto it
//! without copies: a row-major `r × c` matrix with row stride `ld` *is* the
//! column-major `c × r` matrix (its transpose) with leading dimension `ld`.
//! So when C is row-major, cuBLAS computes `Cᵀ = Bᵀ · Aᵀ` (operands swapped),
//! each operand read as stored or with `CUBLAS_OP_T`, whichever its strides
//! allow. The planning is plain arithmetic, tested on the CPU against a
//! model of cuBLAS's column-major semantics.
//!
//! Loading: cudarc finds `libcublas` by bare names through the system
//! loader. The GPU machine's toolkit may not be on the loader path, so the
//! library [`crate::toolchain::find_cublas`] finds (and `libcublasLt`
//! beside it, its dependency) is loaded by full path first; cudarc's
//! `libcublas.so.13` then resolves to it by SONAME. A missing library is an
//! error, never a panic.

use std::ffi::{c_int, c_void};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use cudarc::cublas::result as cublas;
use cudarc::cublas::safe::CudaBlas;
use cudarc::cublas::sys::{cublasComputeType_t, cublasGemmAlgo_t, cublasOperation_t, cudaDataType};
use tawa_ir::ScalarType;

use super::error::RuntimeError;
use super::gpu::{guarded, Gpu};
use crate::toolchain;

/// A logical `rows × cols` matrix in device memory; element `(i, j)` is at
/// `ptr + (i * row_stride + j * col_stride) * size_of(dtype)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Matrix {
    pub ptr: u64,
    pub dtype: ScalarType,
    pub rows: usize,
    pub cols: usize,
    pub row_stride: usize,
    pub col_stride: usize,
}

impl Matrix {
    /// A contiguous row-major matrix.
    pub fn row_major(ptr: u64, dtype: ScalarType, rows: usize, cols: usize) -> Matrix {
        Matrix {
            ptr,
            dtype,
            rows,
            cols,
            row_stride: cols,
            col_stride: 1,
        }
    }

    /// The transposed view of the same memory.
    pub fn t(self) -> Matrix {
        Matrix {
            rows: self.cols,
            cols: self.rows,
            row_stride: self.col_stride,
            col_stride: self.row_stride,
            ..self
        }
    }

    /// The leading dimension when this view is a column-major matrix
    /// (`(i, j)` at `i + j * ld`), `None` when it is not one. A dimension of
    /// extent 1 has no stride to speak of.
    fn column_major_ld(&self) -> Option<usize> {
        if self.rows > 1 && self.row_stride != 1 {
            return None;
        }
        let ld = if self.cols > 1 {
            self.col_stride
        } else {
            self.rows.max(1)
        };
        // Columns must not overlap (cuBLAS requires ld >= rows).
        (ld >= self.rows.max(1)).then_some(ld)
    }
}

/// Whether cuBLAS reads an operand as stored or transposed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    N,
    T,
}

/// One column-major operand of a cuBLAS call: `op(stored)` is the matrix
/// cuBLAS multiplies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Operand {
    pub ptr: u64,
    pub op: Op,
    pub ld: usize,
}

/// The arguments of one `cublasGemmEx` call (column-major):
/// `C[m×n] = op(A)[m×k] · op(B)[k×n]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GemmPlan {
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub a: Operand,
    pub b: Operand,
    pub c_ptr: u64,
    pub ldc: usize,
    pub ab_type: ScalarType,
    pub c_type: ScalarType,
}

/// How cuBLAS reads logical matrix `x` as `op(stored)`.
fn operand(x: &Matrix, what: &str) -> Result<Operand, String> {
    if let Some(ld) = x.column_major_ld() {
        return Ok(Operand {
            ptr: x.ptr,
            op: Op::N,
            ld,
        });
    }
    if let Some(ld) = x.t().column_major_ld() {
        return Ok(Operand {
            ptr: x.ptr,
            op: Op::T,
            ld,
        });
    }
    Err(format!(
        "{what}: strides ({}, {}) of a {}x{} matrix are neither row- nor column-major",
        x.row_stride, x.col_stride, x.rows, x.cols
    ))
}

fn blas_type(t: ScalarType) -> Option<cudaDataType> {
    match t {
        ScalarType::F16 => Some(cudaDataType::CUDA_R_16F),
        ScalarType::BF16 => Some(cudaDataType::CUDA_R_16BF),
        ScalarType::F32 => Some(cudaDataType::CUDA_R_32F),
        _ => None,
    }
}

/// Plans `c = a · b` as one column-major cuBLAS call (see the module docs).
pub fn plan_gemm(a: &Matrix, b: &Matrix, c: &Matrix) -> Result<GemmPlan, String> {
    if a.cols != b.rows || a.rows != c.rows || b.cols != c.cols {
        return Err(format!(
            "shapes do not chain: {}x{} · {}x{} -> {}x{}",
            a.rows, a.cols, b.rows, b.cols, c.rows, c.cols
        ));
    }
    if a.dtype != b.dtype || blas_type(a.dtype).is_none() {
        return Err(format!(
            "operands must both be fp16, bf16 or fp32, are {} and {}",
            a.dtype, b.dtype
        ));
    }
    if c.dtype != a.dtype && c.dtype != ScalarType::F32 {
        return Err(format!(
            "the result must be {} or fp32, is {}",
            a.dtype, c.dtype
        ));
    }
    let plan = if let Some(ldc) = c.column_major_ld() {
        // C column-major: C = A · B as cuBLAS sees it.
        GemmPlan {
            m: c.rows,
            n: c.cols,
            k: a.cols,
            a: operand(a, "A")?,
            b: operand(b, "B")?,
            c_ptr: c.ptr,
            ldc,
            ab_type: a.dtype,
            c_type: c.dtype,
        }
    } else if let Some(ldc) = c.t().column_major_ld() {
        // C row-major: its memory is column-major Cᵀ = Bᵀ · Aᵀ.
        GemmPlan {
            m: c.cols,
            n: c.rows,
            k: a.cols,
            a: operand(&b.t(), "B")?,
            b: operand(&a.t(), "A")?,
            c_ptr: c.ptr,
            ldc,
            ab_type: a.dtype,
            c_type: c.dtype,
        }
    } else {
        return Err(format!(
            "C: strides ({}, {}) are neither row- nor column-major",
            c.row_stride, c.col_stride
        ));
    };
    for (what, v) in [
        ("m", plan.m),
        ("n", plan.n),
        ("k", plan.k),
        ("lda", plan.a.ld),
        ("ldb", plan.b.ld),
        ("ldc", plan.ldc),
    ] {
        if v > i32::MAX as usize {
            return Err(format!("{what} = {v} does not fit cuBLAS's 32-bit ints"));
        }
    }
    Ok(plan)
}

/// The loaded cuBLAS libraries, kept for the life of the process.
struct Loaded {
    _libs: Vec<libloading::Library>,
}

static LOADED: OnceLock<Result<Loaded, String>> = OnceLock::new();

/// Loads cuBLAS once (see the module docs), by full path when found so.
fn load() -> Result<(), RuntimeError> {
    let loaded = LOADED.get_or_init(|| {
        let located = toolchain::find_cublas().map_err(|e| e.to_string())?;
        let mut libs = Vec::new();
        if located.via != toolchain::FoundVia::SystemLoader {
            if let Some(lt) = located.path.parent().and_then(cublas_lt_beside) {
                // SAFETY: loading runs only the library's ELF initializers.
                let lib = unsafe { libloading::Library::new(&lt) }.map_err(|e| {
                    format!("cannot load {}: {}", lt.display(), toolchain_error(&e))
                })?;
                libs.push(lib);
            }
            // SAFETY: as above.
            let lib = unsafe { libloading::Library::new(&located.path) }.map_err(|e| {
                format!(
                    "cannot load {}: {}",
                    located.path.display(),
                    toolchain_error(&e)
                )
            })?;
            libs.push(lib);
        }
        // SAFETY: only tries to dlopen the library by cudarc's names.
        if !unsafe { cudarc::cublas::sys::is_culib_present() } {
            return Err(format!(
                "{} was loaded, but cudarc does not find cuBLAS by the names it tries (libcublas.so, libcublas.so.13, ...); put its folder on LD_LIBRARY_PATH",
                located.path.display()
            ));
        }
        Ok(Loaded { _libs: libs })
    });
    loaded
        .as_ref()
        .map(|_| ())
        .map_err(|message| RuntimeError::LibraryLoad {
            library: PathBuf::from("libcublas.so"),
            message: message.clone(),
        })
}

fn toolchain_error(e: &libloading::Error) -> String {
    match std::error::Error::source(e) {
        Some(source) => source.to_string(),
        None => e.to_string(),
    }
}

/// `libcublasLt.so.*` in `dir`, longest name first.
fn cublas_lt_beside(dir: &Path) -> Option<PathBuf> {
    let mut hits: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("libcublasLt.so"))
        })
        .collect();
    hits.sort();
    hits.sort_by_key(|p| std::cmp::Reverse(p.as_os_str().len()));
    hits.into_iter().next()
}

/// A cuBLAS handle bound to a [`Gpu`]'s stream.
pub struct Blas {
    handle: CudaBlas,
}

impl Blas {
    /// Loads cuBLAS (once per process) and creates a handle on `gpu`'s
    /// stream, so its GEMMs order with the Gpu's copies and launches.
    pub fn new(gpu: &Gpu) -> Result<Blas, RuntimeError> {
        load()?;
        let stream = gpu.stream().clone();
        guarded("cublasCreate", || {
            CudaBlas::new(stream)
                .map(|handle| Blas { handle })
                .map_err(|e| RuntimeError::driver("cublasCreate", None, e))
        })
    }

    /// `c = a · b` with fp32 accumulation, enqueued on the stream.
    pub fn gemm(&self, a: &Matrix, b: &Matrix, c: &Matrix) -> Result<(), RuntimeError> {
        let plan = plan_gemm(a, b, c).map_err(|message| RuntimeError::InvalidLaunch {
            kernel: "cublasGemmEx".into(),
            message,
        })?;
        self.run(&plan)
    }

    /// Runs a planned GEMM.
    pub fn run(&self, plan: &GemmPlan) -> Result<(), RuntimeError> {
        let op = |o: Op| match o {
            Op::N => cublasOperation_t::CUBLAS_OP_N,
            Op::T => cublasOperation_t::CUBLAS_OP_T,
        };
        let ty = |t: ScalarType| blas_type(t).unwrap_or(cudaDataType::CUDA_R_32F);
        let (alpha, beta) = (1.0f32, 0.0f32);
        guarded("cublasGemmEx", || {
            // SAFETY: the pointers are device addresses the caller owns,
            // with extents the plan checked against the matrices' shapes
            // and strides; alpha/beta are host f32 (pointer mode host,
            // compute type 32F).
            unsafe {
                cublas::gemm_ex(
                    *self.handle.handle(),
                    op(plan.a.op),
                    op(plan.b.op),
                    plan.m as c_int,
                    plan.n as c_int,
                    plan.k as c_int,
                    (&alpha as *const f32).cast::<c_void>(),
                    plan.a.ptr as *const c_void,
                    ty(plan.ab_type),
                    plan.a.ld as c_int,
                    plan.b.ptr as *const c_void,
                    ty(plan.ab_type),
                    plan.b.ld as c_int,
                    (&beta as *const f32).cast::<c_void>(),
                    plan.c_ptr as *mut c_void,
                    ty(plan.c_type),
                    plan.ldc as c_int,
                    cublasComputeType_t::CUBLAS_COMPUTE_32F,
                    cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT,
                )
            }
            .map_err(|e| RuntimeError::driver("cublasGemmEx", None, e))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// cuBLAS's column-major semantics on host arrays: `C = op(A) · op(B)`,
    /// element (i, j) of a stored matrix at `i + j * ld`.
    fn column_major_gemm(plan: &GemmPlan, mem: &mut [f64], base: u64) {
        let at = |o: &Operand, i: usize, j: usize| -> usize {
            let (r, c) = match o.op {
                Op::N => (i, j),
                Op::T => (j, i),
            };
            (o.ptr - base) as usize + r + c * o.ld
        };
        for i in 0..plan.m {
            for j in 0..plan.n {
                let mut acc = 0.0;
                for p in 0..plan.k {
                    acc += mem[at(&plan.a, i, p)] * mem[at(&plan.b, p, j)];
                }
                mem[(plan.c_ptr - base) as usize + i + j * plan.ldc] = acc;
            }
        }
    }

    /// Writes a logical matrix's values into `mem` through its strides.
    fn store(mem: &mut [f64], base: u64, x: &Matrix, f: impl Fn(usize, usize) -> f64) {
        for i in 0..x.rows {
            for j in 0..x.cols {
                mem[(x.ptr - base) as usize + i * x.row_stride + j * x.col_stride] = f(i, j);
            }
        }
    }

    fn check(a: Matrix, b: Matrix, c: Matrix) {
        // Addresses count elements here; the three matrices sit apart.
        let base = 0;
        let mut mem = vec![f64::NAN; 100_000];
        let fa = |i: usize, j: usize| (i * 7 + j * 3) as f64 % 11.0 - 5.0;
        let fb = |i: usize, j: usize| (i * 5 + j * 2) as f64 % 13.0 - 6.0;
        store(&mut mem, base, &a, fa);
        store(&mut mem, base, &b, fb);
        let plan = plan_gemm(&a, &b, &c).unwrap();
        column_major_gemm(&plan, &mut mem, base);
        for i in 0..c.rows {
            for j in 0..c.cols {
                let want: f64 = (0..a.cols).map(|p| fa(i, p) * fb(p, j)).sum();
                let got = mem[(c.ptr - base) as usize + i * c.row_stride + j * c.col_stride];
                assert_eq!(got, want, "({i}, {j}) with {plan:?}");
            }
        }
    }

    const F: ScalarType = ScalarType::F16;

    #[test]
    fn row_major_operands_and_result() {
        let (m, n, k) = (5, 7, 3);
        check(
            Matrix::row_major(0, F, m, k),
            Matrix::row_major(1000, F, k, n),
            Matrix::row_major(2000, F, m, n),
        );
    }

    #[test]
    fn transposed_views_and_padded_rows() {
        let (m, n, k) = (6, 4, 9);
        // A column-major (a transposed row-major K×M), B row-major with
        // padded rows, C row-major with padded rows.
        let a = Matrix::row_major(0, F, k, m).t();
        let b = Matrix {
            row_stride: n + 3,
            ..Matrix::row_major(1000, F, k, n)
        };
        let c = Matrix {
            row_stride: n + 1,
            ..Matrix::row_major(3000, F, m, n)
        };
        check(a, b, c);
        // B as a transposed view (the matmul example's `ragged_bt` case).
        check(
            Matrix::row_major(0, F, m, k),
            Matrix::row_major(1000, F, n, k).t(),
            Matrix::row_major(3000, F, m, n),
        );
        // Column-major result.
        check(
            Matrix::row_major(0, F, m, k),
            Matrix::row_major(1000, F, k, n),
            Matrix::row_major(3000, F, n, m).t(),
        );
    }

    #[test]
    fn vectors_have_no_stride_to_check() {
        // 1×K · K×1 with arbitrary strides on the unit dimensions.
        let a = Matrix {
            row_stride: 999,
            ..Matrix::row_major(0, F, 1, 4)
        };
        let b = Matrix {
            col_stride: 77,
            ..Matrix::row_major(1000, F, 4, 1)
        };
        check(a, b, Matrix::row_major(2000, F, 1, 1));
    }

    #[test]
    fn refuses_what_cublas_cannot_read() {
        let a = Matrix::row_major(0, F, 4, 4);
        let strided = Matrix {
            row_stride: 8,
            col_stride: 2,
            ..a
        };
        assert!(plan_gemm(&strided, &a, &a).unwrap_err().contains("A:"));
        assert!(plan_gemm(&a, &a, &strided).unwrap_err().contains("C:"));
        let wrong = Matrix::row_major(0, F, 3, 4);
        assert!(plan_gemm(&a, &wrong, &a).unwrap_err().contains("chain"));
        let bf = Matrix {
            dtype: ScalarType::BF16,
            ..a
        };
        assert!(plan_gemm(&a, &bf, &a).is_err());
        let i8m = Matrix {
            dtype: ScalarType::I8,
            ..a
        };
        assert!(plan_gemm(&i8m, &i8m, &a).is_err());
        // fp32 results of fp16 operands are fine (the reference's choice).
        let f32c = Matrix {
            dtype: ScalarType::F32,
            ..a
        };
        assert!(plan_gemm(&a, &a, &f32c).is_ok());
    }
}
