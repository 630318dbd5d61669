//! Interpreter tests: kernels built with a tiny builder over the
//! `Function` API, run over a grid, checked against plain Rust references.

// Index loops mirror the kernels' index arithmetic.
#![allow(clippy::needless_range_loop)]

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
use ScalarType::{F16, F32, I1, I32, I64};

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
    fn if_op(
        &mut self,
        cond: Value,
        types: Vec<Type>,
        then_: impl FnOnce(&mut B) -> Vec<Value>,
        else_: impl FnOnce(&mut B) -> Vec<Value>,
    ) -> Vec<Value> {
        let t = self.region(vec![], OpKind::Yield, |b, _| then_(b));
        let e = self.region(vec![], OpKind::Yield, |b, _| else_(b));
        let op = self.f.append_op(
            self.blk,
            OpKind::If,
            vec![cond],
            types,
            vec![t, e],
            self.loc,
        );
        self.f.ops[op].results.clone()
    }
    /// `before` returns `[cond, forwarded...]`; forwarded values have the
    /// carried types.
    fn while_op(
        &mut self,
        inits: Vec<Value>,
        before: impl FnOnce(&mut B, Vec<Value>) -> Vec<Value>,
        after: impl FnOnce(&mut B, Vec<Value>) -> Vec<Value>,
    ) -> Vec<Value> {
        let types: Vec<Type> = inits.iter().map(|&v| self.ty(v)).collect();
        let bef = self.region(types.clone(), OpKind::Condition, before);
        let aft = self.region(types.clone(), OpKind::Yield, after);
        let op = self.f.append_op(
            self.blk,
            OpKind::While,
            inits,
            types,
            vec![bef, aft],
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
                is_async: false,
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

/// A kernel `out[i] = cast(x[i])` from `src` to `dst` with `rounding`.
fn cast_kernel(src: ScalarType, dst: ScalarType, n: u32, rounding: Rounding) -> Function {
    let mut b = B::new("cast");
    let x = b.ptr_param("x", src);
    let out = b.ptr_param("out", dst);
    let r = b.range(0, n as i32);
    let xp = b.addptr(x, r);
    let v = b.load(xp, None, None);
    let c = b.op(OpKind::Cast { rounding }, vec![v], tt(&[n], dst));
    let op = b.addptr(out, r);
    b.store(op, c, None);
    b.ret();
    b.f
}

fn run_cast(
    src: ScalarType,
    dst: ScalarType,
    xs: &[f64],
    rounding: Rounding,
) -> (Vec<f64>, Vec<u8>) {
    let f = cast_kernel(src, dst, xs.len() as u32, rounding);
    let mut mem = Memory::new();
    let x = mem.alloc_from_f64(src, xs);
    let out = mem.alloc(dst, xs.len());
    run(
        &f,
        &[ArgValue::Ptr(x.base), ArgValue::Ptr(out.base)],
        [1, 1, 1],
        &mut mem,
    )
    .unwrap();
    (mem.read_f64(&out), mem.bytes(&out).to_vec())
}

fn f16_bits(bytes: &[u8]) -> Vec<u16> {
    bytes
        .chunks(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect()
}

#[test]
fn f16_rounding() {
    let t = 2f64.powi(-24); // smallest f16 subnormal
    let xs = [
        65504.0,                    // max finite
        65519.0,                    // below the half-way point: max
        65520.0,                    // half-way to 2^16: ties to even = inf
        -70000.0,                   // -inf
        1.0 + 2f64.powi(-11),       // tie between 1 and 1+ulp: even (1)
        1.0 + 3.0 * 2f64.powi(-11), // tie: rounds up to even 1+2ulp
        t,                          // subnormal kept
        t / 2.0,                    // tie with 0: even (0)
        t * 1.5,                    // tie between t and 2t: 2t
        t * 0.75,                   // rounds to t
        1e-3,
        0.1,
    ];
    // Computed in f64 so that inputs are not pre-rounded to f32.
    let (got, bytes) = run_cast(ScalarType::F64, F16, &xs, Rounding::Rtne);
    let bits = f16_bits(&bytes);
    assert_eq!(&bits[..4], &[0x7bff, 0x7bff, 0x7c00, 0xfc00]);
    assert_eq!(got[4], 1.0);
    assert_eq!(got[5], 1.0 + 2f64.powi(-9));
    assert_eq!(&bits[6..10], &[0x0001, 0x0000, 0x0002, 0x0001]);
    assert_eq!(got[10], half::f16::from_f64(1e-3).to_f64());
    assert_eq!(bits[11], 0x2e66); // 0.1 in f16
                                  // Toward zero: overflow gives max, and 1+2^-11+tiny drops to 1.
    let (got, _) = run_cast(
        ScalarType::F64,
        F16,
        &[
            70000.0,
            1.0 + 2f64.powi(-10) * 0.99,
            -1.0 - 2f64.powi(-10) * 0.99,
        ],
        Rounding::Rtz,
    );
    assert_eq!(got, vec![65504.0, 1.0, -1.0]);
    // Memory conversions round the same way.
    let mut mem = Memory::new();
    let buf = mem.alloc_from_f64(F16, &[65520.0, 1.0 + 2f64.powi(-11), t / 2.0]);
    assert_eq!(f16_bits(mem.bytes(&buf)), vec![0x7c00, 0x3c00, 0x0000]);
    // bf16: 8 bits of precision, f32's range.
    let (got, _) = run_cast(
        F32,
        ScalarType::BF16,
        &[1.0 + 2f64.powi(-8), 1.0 + 3.0 * 2f64.powi(-8), 3e38],
        Rounding::Rtne,
    );
    assert_eq!(got, vec![1.0, 1.0 + 2f64.powi(-6), 226.0 * 2f64.powi(120)]);
}

#[test]
fn fp8_tables() {
    let mut mem = Memory::new();
    let e4 = [
        (448.0, 0x7e),
        (464.0, 0x7e), // tie between 448 and (NaN) 480: saturates to max
        (480.0, 0x7e),
        (1e9, 0x7e),
        (f64::INFINITY, 0x7e),
        (-448.0, 0xfe),
        (1.0, 0x38),
        (0.5, 0x30),
        (-2.0, 0xc0),
        (2f64.powi(-9), 0x01),        // smallest subnormal
        (2f64.powi(-10), 0x00),       // tie with 0: even
        (3.0 * 2f64.powi(-10), 0x02), // tie between 1 and 2 subnormal ulps: even
        (2f64.powi(-6), 0x08),        // smallest normal
        (1.0625, 0x38),               // tie between 1 and 1.125: even
        (1.1875, 0x3a),               // tie between 1.125 and 1.25: even (1.25)
        (f64::NAN, 0x7f),
    ];
    let xs: Vec<f64> = e4.iter().map(|p| p.0).collect();
    let buf = mem.alloc_from_f64(ScalarType::F8E4M3, &xs);
    let want: Vec<u8> = e4.iter().map(|p| p.1).collect();
    assert_eq!(mem.bytes(&buf), &want[..]);
    // Decoding: every code, max, NaN codes.
    mem.bytes_mut(&buf)[..4].copy_from_slice(&[0x7e, 0x7f, 0xff, 0x01]);
    let back = mem.read_f64(&buf);
    assert_eq!(back[0], 448.0);
    assert!(back[1].is_nan() && back[2].is_nan());
    assert_eq!(back[3], 2f64.powi(-9));

    let e5 = [
        (57344.0, 0x7b),
        (1e9, 0x7b),
        (f64::INFINITY, 0x7b),
        (1.0, 0x3c),
        (-1.5, 0xbe),
        (2f64.powi(-16), 0x01),
        (1.125, 0x3c), // tie: even
    ];
    let xs: Vec<f64> = e5.iter().map(|p| p.0).collect();
    let buf = mem.alloc_from_f64(ScalarType::F8E5M2, &xs);
    let want: Vec<u8> = e5.iter().map(|p| p.1).collect();
    assert_eq!(mem.bytes(&buf), &want[..]);
    mem.bytes_mut(&buf)[..3].copy_from_slice(&[0x7c, 0xfc, 0x7d]);
    let back = mem.read_f64(&buf);
    assert_eq!(back[0], f64::INFINITY);
    assert_eq!(back[1], f64::NEG_INFINITY);
    assert!(back[2].is_nan());
    // A kernel cast f32 -> e4m3 -> f32 round-trips through the encoding.
    let (got, bytes) = run_cast(
        F32,
        ScalarType::F8E4M3,
        &[300.0, -0.3, 1000.0],
        Rounding::Rtne,
    );
    assert_eq!(got, vec![288.0, -0.3125, 448.0]);
    assert_eq!(bytes, vec![0x79, 0xaa, 0x7e]);
}

#[test]
fn int_float_casts_and_bitcast() {
    let (got, _) = run_cast(
        F32,
        I32,
        &[2.9, -2.9, 3e10, -3e10, f64::NAN],
        Rounding::Rtne,
    );
    assert_eq!(got, vec![2.0, -2.0, 2147483647.0, -2147483648.0, 0.0]);
    let (got, _) = run_cast(I32, ScalarType::I8, &[300.0, -129.0, 127.0], Rounding::Rtne);
    assert_eq!(got, vec![44.0, 127.0, 127.0]);
    let (got, _) = run_cast(ScalarType::I8, ScalarType::U32, &[-1.0], Rounding::Rtne);
    assert_eq!(got, vec![4294967295.0]);
    let (got, _) = run_cast(F32, I1, &[0.0, 0.5, -2.0], Rounding::Rtne);
    assert_eq!(got, vec![0.0, 1.0, 1.0]);

    // Bitcast f32 -> i32 of 1.0.
    let mut b = B::new("bc");
    let x = b.ptr_param("x", F32);
    let out = b.ptr_param("out", I32);
    let zero = b.i32(0);
    let xp = b.addptr(x, zero);
    let v = b.load(xp, None, None);
    let c = b.op(OpKind::Bitcast, vec![v], sc(I32));
    let op = b.addptr(out, zero);
    b.store(op, c, None);
    b.ret();
    let mut mem = Memory::new();
    let xb = mem.alloc_from_f64(F32, &[1.0]);
    let ob = mem.alloc(I32, 1);
    run(
        &b.f,
        &[ArgValue::Ptr(xb.base), ArgValue::Ptr(ob.base)],
        [1, 1, 1],
        &mut mem,
    )
    .unwrap();
    assert_eq!(mem.read_f64(&ob), vec![0x3f80_0000 as f64]);
}

/// Block pointers over a 5x7 f32 matrix, 4x4 blocks at (4, 4): rows 5..8 and
/// columns 7..8 are out of bounds.
fn block_ptr_kernel(check: Vec<u32>, padding: Padding) -> Function {
    let mut b = B::new("bp");
    let x = b.ptr_param("x", F32);
    let out = b.ptr_param("out", F32);
    let i64c = |b: &mut B, v: i64| b.ci(v, sc(I64));
    let bp_ty = Type::BlockPtr {
        pointee: F32,
        shape: vec![4, 4],
    };
    let dense = b.ptr_param("dense", F32);
    let mk = |b: &mut B, base: Value| {
        let ops = vec![
            base,
            i64c(b, 5),
            i64c(b, 7),
            i64c(b, 7),
            i64c(b, 1),
            b.i32(0),
            b.i32(0),
        ];
        b.op(
            OpKind::MakeBlockPtr { order: vec![1, 0] },
            ops,
            bp_ty.clone(),
        )
    };
    let xb = mk(&mut b, x);
    let ob = mk(&mut b, out);
    let four = b.i32(4);
    let xb = b.op(OpKind::Advance, vec![xb, four, four], bp_ty.clone());
    let ob = b.op(OpKind::Advance, vec![ob, four, four], bp_ty.clone());
    let v = b.op(
        OpKind::Load {
            has_mask: false,
            has_other: false,
            boundary_check: check.clone(),
            padding,
            cache: CacheModifier::None,
            evict: EvictionPolicy::Normal,
            volatile: false,
        },
        vec![xb],
        tt(&[4, 4], F32),
    );
    // The raw tile, padding included, goes to a dense 4x4 buffer.
    let r = b.range(0, 16);
    let r = b.op(OpKind::Reshape, vec![r], tt(&[4, 4], I32));
    let dp = b.addptr(dense, r);
    b.store(dp, v, None);
    let one = b.cf(1.0, tt(&[4, 4], F32));
    let v1 = b.add(v, one);
    b.op0(
        OpKind::Store {
            has_mask: false,
            boundary_check: check,
            cache: CacheModifier::None,
            evict: EvictionPolicy::Normal,
        },
        vec![ob, v1],
    );
    b.ret();
    b.f
}

#[test]
fn block_pointer_boundary_check() {
    let xs: Vec<f64> = (0..35).map(|i| i as f64).collect();
    let mut mem = Memory::new();
    let x = mem.alloc_from_f64(F32, &xs);
    // Output with slack after it, filled with -1, to see what is written.
    let out = mem.alloc_from_f64(F32, &[-1.0; 64]);
    let dense = mem.alloc(F32, 16);
    let args = [
        ArgValue::Ptr(x.base),
        ArgValue::Ptr(out.base),
        ArgValue::Ptr(dense.base),
    ];
    let f = block_ptr_kernel(vec![0, 1], Padding::Zero);
    run(&f, &args, [1, 1, 1], &mut mem).unwrap();
    let got = mem.read_f64(&out);
    for (i, &g) in got.iter().enumerate() {
        let (r, c) = (i / 7, i % 7);
        let want = if i < 35 && r == 4 && (4..7).contains(&c) {
            xs[i] + 1.0
        } else {
            -1.0
        };
        assert_eq!(g, want, "out[{i}]");
    }
    let in_bounds = |i: usize| i / 4 == 0 && i % 4 < 3;
    let d = mem.read_f64(&dense);
    for (i, &v) in d.iter().enumerate() {
        let want = if in_bounds(i) { xs[28 + 4 + i] } else { 0.0 };
        assert_eq!(v, want, "tile[{i}]");
    }
    let f = block_ptr_kernel(vec![0, 1], Padding::Nan);
    run(&f, &args, [1, 1, 1], &mut mem).unwrap();
    let d = mem.read_f64(&dense);
    for (i, &v) in d.iter().enumerate() {
        assert_eq!(v.is_nan(), !in_bounds(i), "tile[{i}] = {v}");
    }

    // Dimension 1 unchecked: columns 7.. are an error even though the
    // addresses exist.
    let f = block_ptr_kernel(vec![0], Padding::Zero);
    let err = run(&f, &args, [1, 1, 1], &mut mem).unwrap_err();
    assert_eq!(err.op, "load");
    assert!(
        err.message
            .contains("coordinate 7 of dimension 1 is outside [0, 7)"),
        "{err}"
    );
}

#[test]
fn tensor_descriptor_oob() {
    // 5x7 i32 matrix, 4x8 blocks at (2, 4): rows 5.. and cols 7.. are OOB.
    let mut b = B::new("td");
    let x = b.ptr_param("x", I32);
    let out = b.ptr_param("out", I32);
    let ty = Type::TensorDesc {
        elem: I32,
        block: vec![4, 8],
    };
    let mk = |b: &mut B, base: Value| {
        let ops = vec![base, b.i32(5), b.i32(7), b.ci(7, sc(I64)), b.ci(1, sc(I64))];
        b.op(OpKind::MakeTensorDesc, ops, ty.clone())
    };
    let xd = mk(&mut b, x);
    let od = mk(&mut b, out);
    let (r0, c0) = (b.i32(2), b.i32(4));
    let v = b.op(
        OpKind::DescLoad { read_once: None },
        vec![xd, r0, c0],
        tt(&[4, 8], I32),
    );
    // Store through a second descriptor, and the loaded tile (zeros
    // included) plus 100 to a dense 4x8 buffer.
    b.op0(OpKind::DescStore, vec![od, v, r0, c0]);
    let dense = b.ptr_param("dense", I32);
    let r = b.range(0, 32);
    let r = b.op(OpKind::Reshape, vec![r], tt(&[4, 8], I32));
    let dp = b.addptr(dense, r);
    let h = b.ci(100, tt(&[4, 8], I32));
    let v100 = b.add(v, h);
    b.store(dp, v100, None);
    b.ret();

    let mut mem = Memory::new();
    let xs: Vec<f64> = (0..35).map(|i| i as f64).collect();
    let xb = mem.alloc_from_f64(I32, &xs);
    let ob = mem.alloc_from_f64(I32, &[-1.0; 48]);
    let db = mem.alloc(I32, 32);
    let args = [
        ArgValue::Ptr(xb.base),
        ArgValue::Ptr(ob.base),
        ArgValue::Ptr(db.base),
    ];
    run(&b.f, &args, [1, 1, 1], &mut mem).unwrap();
    let dense = mem.read_f64(&db);
    for i in 0..4 {
        for j in 0..8 {
            let (r, c) = (2 + i, 4 + j);
            let want = if r < 5 && c < 7 {
                (r * 7 + c) as f64
            } else {
                0.0
            };
            assert_eq!(dense[i * 8 + j], want + 100.0, "[{i}, {j}]");
        }
    }
    let out = mem.read_f64(&ob);
    for (k, &o) in out.iter().enumerate() {
        let (r, c) = (k / 7, k % 7);
        let want = if k < 35 && r >= 2 && c >= 4 {
            k as f64
        } else {
            -1.0
        };
        assert_eq!(o, want, "out[{k}]");
    }
}

/// Stores one i32 scalar result per program at `out[pid]`.
fn store_at_pid(b: &mut B, out: Value, v: Value) {
    let pid = b.pid(Axis::X);
    let p = b.addptr(out, pid);
    b.store(p, v, None);
}

#[test]
fn while_loop_collatz() {
    // Steps of the Collatz sequence from pid + 1 down to 1.
    let mut b = B::new("collatz");
    let out = b.ptr_param("out", I32);
    let pid = b.pid(Axis::X);
    let one = b.i32(1);
    let start = b.add(pid, one);
    let zero = b.i32(0);
    let res = b.while_op(
        vec![start, zero],
        |b, a| {
            let one = b.i32(1);
            let c = b.cmp(CmpPred::Ne, a[0], one);
            vec![c, a[0], a[1]]
        },
        |b, a| {
            let (x, steps) = (a[0], a[1]);
            let two = b.i32(2);
            let r = b.bin(BinaryOp::Rem, x, two);
            let zero = b.i32(0);
            let even = b.cmp(CmpPred::Eq, r, zero);
            let half = b.bin(BinaryOp::IDiv, x, two);
            let three = b.i32(3);
            let one = b.i32(1);
            let t = b.mul(x, three);
            let t = b.add(t, one);
            let next = b.op(OpKind::Select, vec![even, half, t], sc(I32));
            let s = b.add(steps, one);
            vec![next, s]
        },
    );
    store_at_pid(&mut b, out, res[1]);
    b.ret();
    let mut mem = Memory::new();
    let ob = mem.alloc(I32, 8);
    run(&b.f, &[ArgValue::Ptr(ob.base)], [8, 1, 1], &mut mem).unwrap();
    assert_eq!(
        mem.read_f64(&ob),
        vec![0.0, 1.0, 7.0, 2.0, 5.0, 8.0, 16.0, 3.0]
    );
}

#[test]
fn if_with_results() {
    let mut b = B::new("branch");
    let out = b.ptr_param("out", I32);
    let pid = b.pid(Axis::X);
    let two = b.i32(2);
    let c = b.cmp(CmpPred::Lt, pid, two);
    let r = b.if_op(
        c,
        vec![sc(I32), sc(I32)],
        |b| {
            let a = b.i32(10);
            let pid = b.pid(Axis::X);
            vec![a, pid]
        },
        |b| {
            let a = b.i32(20);
            let pid = b.pid(Axis::X);
            let m = b.i32(-1);
            let n = b.mul(pid, m);
            vec![a, n]
        },
    );
    let s = b.add(r[0], r[1]);
    store_at_pid(&mut b, out, s);
    b.ret();
    let mut mem = Memory::new();
    let ob = mem.alloc(I32, 4);
    run(&b.f, &[ArgValue::Ptr(ob.base)], [4, 1, 1], &mut mem).unwrap();
    assert_eq!(mem.read_f64(&ob), vec![10.0, 11.0, 18.0, 17.0]);
}

#[test]
fn atomic_add_across_programs() {
    // Each program adds pid + 1 to counter[0] and to counter[1] (masked off
    // for odd pids), and records the old value of counter[0].
    let mut b = B::new("atomics");
    let counter = b.ptr_param("counter", I32);
    let olds = b.ptr_param("olds", I32);
    let fsum = b.ptr_param("fsum", F32);
    let pid = b.pid(Axis::X);
    let one = b.i32(1);
    let v = b.add(pid, one);
    let r = b.range(0, 2);
    let ptrs = b.addptr(counter, r);
    let vs = b.splat(v, &[2]);
    // mask = [true, pid % 2 == 0]
    let two = b.i32(2);
    let pm = b.bin(BinaryOp::Rem, pid, two);
    let pm = b.splat(pm, &[2]);
    let one2 = b.ci(1, tt(&[2], I32));
    let lim = b.bin(BinaryOp::Sub, one2, pm);
    let mask = b.cmp(CmpPred::Le, r, lim);
    let old = b.op(
        OpKind::AtomicRmw {
            op: AtomicOp::Add,
            sem: MemSem::AcqRel,
            scope: MemScope::Gpu,
            has_mask: true,
        },
        vec![ptrs, vs, mask],
        tt(&[2], I32),
    );
    let o0 = b.op(
        OpKind::Reduce {
            kind: ReduceKind::Max,
            axis: 0,
        },
        vec![old],
        sc(I32),
    );
    store_at_pid(&mut b, olds, o0);
    let zero = b.i32(0);
    let fp = b.addptr(fsum, zero);
    let half = b.cf(0.5, sc(F32));
    b.op(
        OpKind::AtomicRmw {
            op: AtomicOp::Add,
            sem: MemSem::AcqRel,
            scope: MemScope::Gpu,
            has_mask: false,
        },
        vec![fp, half],
        sc(F32),
    );
    b.ret();
    let mut mem = Memory::new();
    let cb = mem.alloc(I32, 2);
    let ob = mem.alloc(I32, 8);
    let fb = mem.alloc(F32, 1);
    let args = [
        ArgValue::Ptr(cb.base),
        ArgValue::Ptr(ob.base),
        ArgValue::Ptr(fb.base),
    ];
    run(&b.f, &args, [8, 1, 1], &mut mem).unwrap();
    assert_eq!(mem.read_f64(&cb), vec![36.0, 1.0 + 3.0 + 5.0 + 7.0]);
    // Old values of counter[0] (counter[1] is never larger).
    assert_eq!(
        mem.read_f64(&ob),
        vec![0.0, 1.0, 3.0, 6.0, 10.0, 15.0, 21.0, 28.0]
    );
    assert_eq!(mem.read_f64(&fb), vec![4.0]);
}

#[test]
fn reduce_argmax_ties_and_sum() {
    let mut b = B::new("red");
    let x = b.ptr_param("x", F32);
    let out = b.ptr_param("out", F32);
    let idx = b.ptr_param("idx", I32);
    let r = b.range(0, 16);
    let r2 = b.op(OpKind::Reshape, vec![r], tt(&[2, 8], I32));
    let xp = b.addptr(x, r2);
    let v = b.load(xp, None, None);
    let red = |b: &mut B, kind, ty| b.op(OpKind::Reduce { kind, axis: 1 }, vec![v], ty);
    let amax = red(&mut b, ReduceKind::Argmax, tt(&[2], I32));
    let amin = red(&mut b, ReduceKind::Argmin, tt(&[2], I32));
    let sum = red(&mut b, ReduceKind::Sum, tt(&[2], F32));
    let r0 = b.range(0, 2);
    let two = b.i32(2);
    let r1 = b.add(r0, two);
    let ip = b.addptr(idx, r0);
    b.store(ip, amax, None);
    let ip = b.addptr(idx, r1);
    b.store(ip, amin, None);
    let op = b.addptr(out, r0);
    b.store(op, sum, None);
    // Cumulative sum of row 0 along axis 1.
    let cs = b.op(
        OpKind::Scan {
            kind: ScanKind::Sum,
            axis: 1,
            reverse: false,
        },
        vec![v],
        tt(&[2, 8], F32),
    );
    let sixteen = b.i32(16);
    let off = b.add(r2, sixteen);
    let op = b.addptr(out, off);
    b.store(op, cs, None);
    b.ret();
    let xs = [
        3.0,
        7.0,
        7.0,
        1.0,
        7.0,
        0.0,
        2.0,
        7.0, // max 7 first at 1
        5.0,
        1.0,
        9.0,
        1.0,
        f64::NAN,
        1.0,
        9.0,
        2.0, // min 1 first at 9-8=1, max 9 at 2
    ];
    let mut mem = Memory::new();
    let xb = mem.alloc_from_f64(F32, &xs);
    let ob = mem.alloc(F32, 32);
    let ib = mem.alloc(I32, 4);
    let args = [
        ArgValue::Ptr(xb.base),
        ArgValue::Ptr(ob.base),
        ArgValue::Ptr(ib.base),
    ];
    run(&b.f, &args, [1, 1, 1], &mut mem).unwrap();
    assert_eq!(mem.read_f64(&ib), vec![1.0, 2.0, 5.0, 1.0]);
    let o = mem.read_f64(&ob);
    assert_eq!(o[0], 34.0);
    assert!(o[1].is_nan());
    assert_eq!(&o[16..24], &[3.0, 10.0, 17.0, 18.0, 25.0, 25.0, 27.0, 34.0]);
}

#[test]
fn step_limit_stops_infinite_loop() {
    let mut b = B::new("spin");
    let zero = b.i32(0);
    b.while_op(
        vec![zero],
        |b, a| {
            let t = b.ci(1, sc(I1));
            vec![t, a[0]]
        },
        |_, a| a,
    );
    b.ret();
    let mut mem = Memory::new();
    let opts = InterpOptions {
        max_steps: Some(1000),
    };
    let err = run_grid(&b.f, &[], [1, 1, 1], &mut mem, &opts).unwrap_err();
    assert!(
        err.message.contains("step limit exceeded") && err.message.contains("may not terminate"),
        "{err}"
    );
}

#[test]
fn assert_and_launch_errors() {
    let mut b = B::new("k");
    let n = b.param("n", sc(I32));
    let r = b.range(0, 4);
    let c = b.cmp(CmpPred::Lt, r, n);
    b.op0(
        OpKind::Assert {
            message: "r < n".into(),
        },
        vec![c],
    );
    b.ret();
    let mut mem = Memory::new();
    run(&b.f, &[ArgValue::Int(4)], [2, 1, 1], &mut mem).unwrap();
    let err = run(&b.f, &[ArgValue::Int(3)], [2, 1, 1], &mut mem).unwrap_err();
    assert_eq!(err.op, "assert");
    assert!(
        err.message.contains("r < n") && err.message.contains("lane 3"),
        "{err}"
    );
    let err = run(&b.f, &[], [1, 1, 1], &mut mem).unwrap_err();
    assert!(err.message.contains("takes 1 arguments"), "{err}");
}

#[test]
fn f16_arithmetic_rounds_in_f16() {
    let mut b = B::new("h");
    let x = b.ptr_param("x", F16);
    let y = b.ptr_param("y", F16);
    let out = b.ptr_param("out", F32);
    let r = b.range(0, 4);
    let xp = b.addptr(x, r);
    let xv = b.load(xp, None, None);
    let yp = b.addptr(y, r);
    let yv = b.load(yp, None, None);
    let s = b.add(xv, yv);
    let e = b.op(OpKind::Unary(UnaryOp::Exp), vec![yv], tt(&[4], F16));
    let s32 = b.cast(s, F32);
    let e32 = b.cast(e, F32);
    let op = b.addptr(out, r);
    b.store(op, s32, None);
    let four = b.i32(4);
    let r4 = b.add(r, four);
    let op = b.addptr(out, r4);
    b.store(op, e32, None);
    b.ret();
    let mut mem = Memory::new();
    let xb = mem.alloc_from_f64(F16, &[2048.0, 2050.0, 60000.0, 0.1]);
    let yb = mem.alloc_from_f64(F16, &[1.0, 1.0, 10000.0, 0.0]);
    let ob = mem.alloc(F32, 8);
    let args = [
        ArgValue::Ptr(xb.base),
        ArgValue::Ptr(yb.base),
        ArgValue::Ptr(ob.base),
    ];
    run(&b.f, &args, [1, 1, 1], &mut mem).unwrap();
    let o = mem.read_f64(&ob);
    assert_eq!(&o[..3], &[2048.0, 2052.0, f64::INFINITY]);
    assert_eq!(o[3], half::f16::from_f64(0.1).to_f64());
    assert_eq!(o[4], 2.71875); // e rounded to f16
    assert_eq!(o[7], 1.0);
}

/// `join` interleaves its operands along a new last dimension, `split`
/// undoes it; `tl.interleave` is a join followed by a reshape.
#[test]
fn join_split_interleave() {
    let text = r#"tt.func @kernel(%out_ptr: ptr<i32>) attributes {num_warps = 4, num_stages = 3} {
  %a = make_range {start = 0, end = 4} : tensor<4xi32>
  %0 = constant 10 : i32
  %1 = splat %0 : i32 -> tensor<4xi32>
  %b = add %a, %1 : tensor<4xi32>
  %j = join %a, %b : tensor<4x2xi32>
  %lo, %hi = split %j : tensor<4xi32>, tensor<4xi32>
  %2 = constant 100 : i32
  %3 = splat %2 : i32 -> tensor<4xi32>
  %4 = mul %lo, %3 : tensor<4xi32>
  %5 = join %4, %hi : tensor<4x2xi32>
  %inter = reshape %5 : tensor<4x2xi32> -> tensor<8xi32>
  %6 = make_range {start = 0, end = 8} : tensor<8xi32>
  %7 = splat %out_ptr : ptr<i32> -> tensor<8xptr<i32>>
  %8 = addptr %7, %6 : tensor<8xptr<i32>>
  store %8, %inter
  return
}
"#;
    let f = parse_function(text).unwrap();
    verify_function(&f).unwrap();
    let mut mem = Memory::new();
    let out = mem.alloc(I32, 8);
    run_grid(
        &f,
        &[ArgValue::Ptr(out.base)],
        [1, 1, 1],
        &mut mem,
        &InterpOptions::default(),
    )
    .unwrap();
    assert_eq!(
        mem.read_f64(&out),
        vec![0.0, 10.0, 100.0, 11.0, 200.0, 12.0, 300.0, 13.0]
    );
}
