//! Interpreter tests: kernels built with a tiny builder over the
//! `Function` API, run over a grid, checked against plain Rust references.

use tawa_ir::interp::{run_grid, ArgValue, InterpOptions, Memory};
use tawa_ir::*;

/// Test-only builder: appends ops to a current block.
struct B {
    f: Function,
    blk: Block,
    loc: Loc,
}

fn sc(s: ScalarType) -> Type {
    Type::scalar(s)
}
fn tt(shape: &[u32], s: ScalarType) -> Type {
    Type::tensor(shape.to_vec(), Elem::Scalar(s))
}
use ScalarType::{F16, F32, I1, I32};

fn load_kind(has_mask: bool, has_other: bool) -> OpKind {
    OpKind::Load {
        has_mask,
        has_other,
        boundary_check: vec![],
        padding: Padding::None,
        cache: CacheModifier::None,
        evict: EvictionPolicy::Normal,
        volatile: false,
    }
}

fn store_kind(has_mask: bool) -> OpKind {
    OpKind::Store {
        has_mask,
        boundary_check: vec![],
        cache: CacheModifier::None,
        evict: EvictionPolicy::Normal,
    }
}

impl B {
    fn new(name: &str) -> B {
        let f = Function::new(name);
        let blk = f.body;
        B {
            f,
            blk,
            loc: Loc::new(1, 1),
        }
    }
    fn ty(&self, v: Value) -> Type {
        self.f.ty(v).clone()
    }
    fn shape(&self, v: Value) -> Vec<u32> {
        self.f.ty(v).shape().to_vec()
    }
    fn param(&mut self, name: &str, ty: Type) -> Value {
        self.f.add_param(name, ty, ParamHints::default())
    }
    fn ptr_param(&mut self, name: &str, s: ScalarType) -> Value {
        self.param(name, Type::ptr(s))
    }
    fn op(&mut self, kind: OpKind, operands: Vec<Value>, ty: Type) -> Value {
        self.f.append_value(self.blk, kind, operands, ty, self.loc)
    }
    fn op0(&mut self, kind: OpKind, operands: Vec<Value>) {
        self.f
            .append_op(self.blk, kind, operands, vec![], vec![], self.loc);
    }
    fn ci(&mut self, x: i64, ty: Type) -> Value {
        self.op(OpKind::Constant(ConstValue::Int(x)), vec![], ty)
    }
    fn cf(&mut self, x: f64, ty: Type) -> Value {
        self.op(OpKind::Constant(ConstValue::Float(x)), vec![], ty)
    }
    fn i32(&mut self, x: i64) -> Value {
        self.ci(x, sc(I32))
    }
    fn pid(&mut self, axis: Axis) -> Value {
        self.op(OpKind::ProgramId(axis), vec![], sc(I32))
    }
    fn range(&mut self, start: i32, end: i32) -> Value {
        self.op(
            OpKind::MakeRange { start, end },
            vec![],
            tt(&[(end - start) as u32], I32),
        )
    }
    fn splat(&mut self, v: Value, shape: &[u32]) -> Value {
        let ty = Type::tensor(shape.to_vec(), self.ty(v).elem().unwrap());
        self.op(OpKind::Splat, vec![v], ty)
    }
    fn expand(&mut self, v: Value, axis: u32) -> Value {
        let mut shape = self.shape(v);
        shape.insert(axis as usize, 1);
        let ty = Type::tensor(shape, self.ty(v).elem().unwrap());
        self.op(OpKind::ExpandDims { axis }, vec![v], ty)
    }
    fn bcast(&mut self, v: Value, shape: &[u32]) -> Value {
        let ty = Type::tensor(shape.to_vec(), self.ty(v).elem().unwrap());
        self.op(OpKind::Broadcast, vec![v], ty)
    }
    /// Binary op; a scalar operand is splatted to the other's shape.
    fn bin(&mut self, op: BinaryOp, a: Value, b: Value) -> Value {
        let (a, b) = self.same_shape(a, b);
        let ty = self.ty(a);
        self.op(OpKind::Binary(op), vec![a, b], ty)
    }
    fn same_shape(&mut self, a: Value, b: Value) -> (Value, Value) {
        let (sa, sb) = (self.shape(a), self.shape(b));
        if sa.is_empty() && !sb.is_empty() {
            (self.splat(a, &sb), b)
        } else if sb.is_empty() && !sa.is_empty() {
            (a, self.splat(b, &sa))
        } else {
            (a, b)
        }
    }
    fn add(&mut self, a: Value, b: Value) -> Value {
        self.bin(BinaryOp::Add, a, b)
    }
    fn mul(&mut self, a: Value, b: Value) -> Value {
        self.bin(BinaryOp::Mul, a, b)
    }
    fn cmp(&mut self, p: CmpPred, a: Value, b: Value) -> Value {
        let (a, b) = self.same_shape(a, b);
        let ty = self.ty(a).with_elem(Elem::Scalar(I1));
        self.op(OpKind::Cmp(p), vec![a, b], ty)
    }
    fn cast(&mut self, v: Value, to: ScalarType) -> Value {
        let ty = self.ty(v).with_elem(Elem::Scalar(to));
        self.op(
            OpKind::Cast {
                rounding: Rounding::Rtne,
            },
            vec![v],
            ty,
        )
    }
    /// `ptr + off`, splatting a scalar pointer to the offsets' shape.
    fn addptr(&mut self, p: Value, off: Value) -> Value {
        let (p, off) = self.same_shape(p, off);
        let ty = self.ty(off).with_elem(self.ty(p).elem().unwrap());
        self.op(OpKind::AddPtr, vec![p, off], ty)
    }
    fn load(&mut self, p: Value, mask: Option<Value>, other: Option<Value>) -> Value {
        let pointee = self.ty(p).elem().unwrap().pointee().unwrap();
        let ty = self.ty(p).with_elem(Elem::Scalar(pointee));
        let mut ops = vec![p];
        ops.extend(mask);
        ops.extend(other);
        self.op(load_kind(mask.is_some(), other.is_some()), ops, ty)
    }
    fn store(&mut self, p: Value, v: Value, mask: Option<Value>) {
        let mut ops = vec![p, v];
        ops.extend(mask);
        self.op0(store_kind(mask.is_some()), ops);
    }
    /// A region: a detached block filled by `body`, ended by `term`.
    fn region(
        &mut self,
        arg_types: Vec<Type>,
        term: OpKind,
        body: impl FnOnce(&mut B, Vec<Value>) -> Vec<Value>,
    ) -> Block {
        let blk = self.f.new_block(arg_types);
        let saved = std::mem::replace(&mut self.blk, blk);
        let args = self.f.blocks[blk].args.clone();
        let yielded = body(self, args);
        self.op0(term, yielded);
        self.blk = saved;
        blk
    }
    fn for_loop(
        &mut self,
        lb: Value,
        ub: Value,
        step: Value,
        inits: Vec<Value>,
        body: impl FnOnce(&mut B, Value, Vec<Value>) -> Vec<Value>,
    ) -> Vec<Value> {
        let types: Vec<Type> = inits.iter().map(|&v| self.ty(v)).collect();
        let mut arg_types = vec![self.ty(lb)];
        arg_types.extend(types.clone());
        let r = self.region(arg_types, OpKind::Yield, |b, args| {
            body(b, args[0], args[1..].to_vec())
        });
        let mut ops = vec![lb, ub, step];
        ops.extend(inits);
        let op = self.f.append_op(
            self.blk,
            OpKind::For(LoopAttrs::default()),
            ops,
            types,
            vec![r],
            self.loc,
        );
        self.f.ops[op].results.clone()
    }
    fn ret(&mut self) {
        self.op0(OpKind::Return, vec![]);
    }
}

fn run(
    f: &Function,
    args: &[ArgValue],
    grid: [u32; 3],
    mem: &mut Memory,
) -> Result<(), tawa_ir::interp::InterpError> {
    run_grid(f, args, grid, mem, &InterpOptions::default())
}

/// `out[i] = x[i] + y[i]` over `n` elements in blocks of `block`.
fn vector_add(block: u32, masked: bool) -> Function {
    let mut b = B::new("add_kernel");
    let x = b.ptr_param("x_ptr", F32);
    let y = b.ptr_param("y_ptr", F32);
    let out = b.ptr_param("out_ptr", F32);
    let n = b.param("n", sc(I32));
    let pid = b.pid(Axis::X);
    let bs = b.i32(block as i64);
    let start = b.mul(pid, bs);
    let ar = b.range(0, block as i32);
    let offs = b.add(start, ar);
    let mask = masked.then(|| b.cmp(CmpPred::Lt, offs, n));
    let xp = b.addptr(x, offs);
    b.loc = Loc::new(7, 12);
    let xv = b.load(xp, mask, None);
    b.loc = Loc::new(8, 5);
    let yp = b.addptr(y, offs);
    let yv = b.load(yp, mask, None);
    let s = b.add(xv, yv);
    let op = b.addptr(out, offs);
    b.store(op, s, mask);
    b.ret();
    b.f
}

#[test]
fn vector_add_masked_tail() {
    let n = 1000;
    let f = vector_add(256, true);
    let mut mem = Memory::new();
    let xs: Vec<f64> = (0..n).map(|i| i as f64 * 0.1).collect();
    let ys: Vec<f64> = (0..n).map(|i| 1.0 / (i as f64 + 1.0)).collect();
    let x = mem.alloc_from_f64(F32, &xs);
    let y = mem.alloc_from_f64(F32, &ys);
    let out = mem.alloc(F32, n);
    let args = [
        ArgValue::Ptr(x.base),
        ArgValue::Ptr(y.base),
        ArgValue::Ptr(out.base),
        ArgValue::Int(n as i64),
    ];
    run(&f, &args, [4, 1, 1], &mut mem).unwrap();
    let got = mem.read_f64(&out);
    for i in 0..n {
        let want = (xs[i] as f32 + ys[i] as f32) as f64;
        assert_eq!(got[i], want, "element {i}");
    }
}

#[test]
fn unmasked_oob_load_names_program_and_op() {
    let n = 1000;
    let f = vector_add(256, false);
    let mut mem = Memory::new();
    let x = mem.alloc(F32, n);
    let y = mem.alloc(F32, n);
    let out = mem.alloc(F32, 1024);
    let args = [
        ArgValue::Ptr(x.base),
        ArgValue::Ptr(y.base),
        ArgValue::Ptr(out.base),
        ArgValue::Int(n as i64),
    ];
    let err = run(&f, &args, [4, 1, 1], &mut mem).unwrap_err();
    assert_eq!(err.pid, [3, 0, 0]);
    assert_eq!(err.op, "load");
    let addr = x.base + 4000;
    assert_eq!(
        err.to_string(),
        format!(
            "program (3, 0, 0), op `load` at 7:12: lane 232: address {addr:#x} (4 bytes) is outside every allocated buffer"
        )
    );
}

#[test]
fn misaligned_access_is_an_error() {
    let mut b = B::new("k");
    let p = b.ptr_param("p", F32);
    let off = b.i32(0);
    let q = b.addptr(p, off);
    let v = b.load(q, None, None);
    b.store(q, v, None);
    b.ret();
    let mut mem = Memory::new();
    let buf = mem.alloc(F32, 4);
    let err = run(&b.f, &[ArgValue::Ptr(buf.base + 2)], [1, 1, 1], &mut mem).unwrap_err();
    assert!(err.message.contains("misaligned"), "{err}");
}

/// `out[m, n] = 2 * a[m, n] + row[m] + col[n]` on an 8x16 tile of a matrix
/// with row stride `stride`, via `[:, None]` / `[None, :]` broadcasting.
#[test]
fn tile_2d_broadcasting() {
    let (m, n, stride) = (8u32, 16u32, 20i64);
    let mut b = B::new("k");
    let a = b.ptr_param("a", F32);
    let row = b.ptr_param("row", F32);
    let col = b.ptr_param("col", F32);
    let out = b.ptr_param("out", F32);
    let s = b.param("stride", sc(I32));
    let rm = b.range(0, m as i32);
    let rn = b.range(0, n as i32);
    let rm2 = b.expand(rm, 1); // [:, None]
    let rn2 = b.expand(rn, 0); // [None, :]
    let rm_s = b.mul(rm2, s);
    let rm_b = b.bcast(rm_s, &[m, n]);
    let rn_b = b.bcast(rn2, &[m, n]);
    let offs = b.add(rm_b, rn_b);
    let ap = b.addptr(a, offs);
    let av = b.load(ap, None, None);
    let two = b.cf(2.0, sc(F32));
    let av2 = b.mul(av, two);
    let rp = b.addptr(row, rm);
    let rv = b.load(rp, None, None);
    let rv = b.expand(rv, 1);
    let rv = b.bcast(rv, &[m, n]);
    let cp = b.addptr(col, rn);
    let cv = b.load(cp, None, None);
    let cv = b.expand(cv, 0);
    let cv = b.bcast(cv, &[m, n]);
    let t = b.add(av2, rv);
    let t = b.add(t, cv);
    let op = b.addptr(out, offs);
    b.store(op, t, None);
    b.ret();

    let mut mem = Memory::new();
    let a_h: Vec<f64> = (0..m as i64 * stride).map(|i| i as f64).collect();
    let row_h: Vec<f64> = (0..m).map(|i| 1000.0 * i as f64).collect();
    let col_h: Vec<f64> = (0..n).map(|j| 0.5 * j as f64).collect();
    let a_b = mem.alloc_from_f64(F32, &a_h);
    let r_b = mem.alloc_from_f64(F32, &row_h);
    let c_b = mem.alloc_from_f64(F32, &col_h);
    let o_b = mem.alloc(F32, (m as i64 * stride) as usize);
    let args = [
        ArgValue::Ptr(a_b.base),
        ArgValue::Ptr(r_b.base),
        ArgValue::Ptr(c_b.base),
        ArgValue::Ptr(o_b.base),
        ArgValue::Int(stride),
    ];
    run(&b.f, &args, [1, 1, 1], &mut mem).unwrap();
    let got = mem.read_f64(&o_b);
    for i in 0..m as usize {
        for j in 0..stride as usize {
            let k = i * stride as usize + j;
            let want = if j < n as usize {
                2.0 * a_h[k] + row_h[i] + col_h[j]
            } else {
                0.0
            };
            assert_eq!(got[k], want, "[{i}, {j}]");
        }
    }
}

/// C = A @ B for row-major f16 A (MxK), B (KxN) and f32 C, tiles
/// BM x BN x BK, grid (M/BM, N/BN); the k loop carries an f32 accumulator.
fn matmul_kernel(bm: u32, bn: u32, bk: u32) -> Function {
    let mut b = B::new("matmul");
    let a = b.ptr_param("a", F16);
    let bp = b.ptr_param("b", F16);
    let c = b.ptr_param("c", F32);
    let m = b.param("M", sc(I32));
    let _n = b.param("N", sc(I32));
    let k = b.param("K", sc(I32));
    let pm = b.pid(Axis::X);
    let pn = b.pid(Axis::Y);
    let cbm = b.i32(bm as i64);
    let cbn = b.i32(bn as i64);
    let m0 = b.mul(pm, cbm);
    let n0 = b.mul(pn, cbn);
    let rm = b.range(0, bm as i32);
    let rn = b.range(0, bn as i32);
    let rk = b.range(0, bk as i32);
    let rm = b.add(m0, rm);
    let rn = b.add(n0, rn);
    // a offsets: rm[:, None] * K + rk[None, :]
    let rm2 = b.expand(rm, 1);
    let rm_k = b.mul(rm2, k);
    let rm_k = b.bcast(rm_k, &[bm, bk]);
    let rk_row = b.expand(rk, 0);
    let rk_row = b.bcast(rk_row, &[bm, bk]);
    let a_off = b.add(rm_k, rk_row);
    let a_ptrs = b.addptr(a, a_off);
    // b offsets: rk[:, None] * N + rn[None, :]
    let rk2 = b.expand(rk, 1);
    let rk_n = b.mul(rk2, _n);
    let rk_n = b.bcast(rk_n, &[bk, bn]);
    let rn_row = b.expand(rn, 0);
    let rn_kn = b.bcast(rn_row, &[bk, bn]);
    let b_off = b.add(rk_n, rn_kn);
    let b_ptrs = b.addptr(bp, b_off);
    let acc0 = b.cf(0.0, tt(&[bm, bn], F32));
    let zero = b.i32(0);
    let step = b.i32(bk as i64);
    let res = b.for_loop(zero, k, step, vec![acc0, a_ptrs, b_ptrs], |b, _kk, it| {
        let (acc, ap, bpp) = (it[0], it[1], it[2]);
        let av = b.load(ap, None, None);
        let bv = b.load(bpp, None, None);
        let acc = b.op(
            OpKind::Dot {
                input_precision: InputPrecision::Tf32,
                max_num_imprecise_acc: None,
            },
            vec![av, bv, acc],
            tt(&[bm, bn], F32),
        );
        let step_a = b.i32(bk as i64);
        let ap = b.addptr(ap, step_a);
        let kn = b.mul(step_a, _n);
        let bpp = b.addptr(bpp, kn);
        vec![acc, ap, bpp]
    });
    // c offsets: rm[:, None] * N + rn[None, :]
    let rm_n = b.mul(rm2, _n);
    let rm_n = b.bcast(rm_n, &[bm, bn]);
    let rn_b = b.bcast(rn_row, &[bm, bn]);
    let c_off = b.add(rm_n, rn_b);
    let c_ptrs = b.addptr(c, c_off);
    let _ = m;
    b.store(c_ptrs, res[0], None);
    b.ret();
    b.f
}

#[test]
fn matmul_for_loop_f32_accumulator() {
    let (m, n, k) = (128usize, 128usize, 128usize);
    let f = matmul_kernel(64, 64, 32);
    let mut mem = Memory::new();
    // Deterministic values with non-trivial f16 rounding.
    let a_h: Vec<f64> = (0..m * k)
        .map(|i| ((i * 37 % 101) as f64 - 50.0) / 17.0)
        .collect();
    let b_h: Vec<f64> = (0..k * n)
        .map(|i| ((i * 53 % 89) as f64 - 44.0) / 13.0)
        .collect();
    let a = mem.alloc_from_f64(F16, &a_h);
    let bb = mem.alloc_from_f64(F16, &b_h);
    let c = mem.alloc(F32, m * n);
    let (a16, b16) = (mem.read_f64(&a), mem.read_f64(&bb));
    let args = [
        ArgValue::Ptr(a.base),
        ArgValue::Ptr(bb.base),
        ArgValue::Ptr(c.base),
        ArgValue::Int(m as i64),
        ArgValue::Int(n as i64),
        ArgValue::Int(k as i64),
    ];
    let t0 = std::time::Instant::now();
    run(&f, &args, [2, 2, 1], &mut mem).unwrap();
    eprintln!("128x128x128 matmul: {:?}", t0.elapsed());
    let got = mem.read_f64(&c);
    for i in 0..m {
        for j in 0..n {
            let exact: f64 = (0..k).map(|kk| a16[i * k + kk] * b16[kk * n + j]).sum();
            // The interpreter's order: one f32 fma per k, in k order.
            let mut s = 0f32;
            for kk in 0..k {
                s = (a16[i * k + kk] as f32).mul_add(b16[kk * n + j] as f32, s);
            }
            let g = got[i * n + j];
            assert_eq!(g, s as f64, "[{i}, {j}]");
            assert!(
                (g - exact).abs() <= 1e-5 * (1.0 + exact.abs()),
                "[{i}, {j}]"
            );
        }
    }
}
