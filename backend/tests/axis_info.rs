//! The axis analysis on the project's example kernels, compiled through the
//! frontend with their launch cases' signatures (so the `i32:16` and
//! unit-stride specializations are the ones a launch would get).

use expect_test::expect;
use tawa_ir::axis_info::{
    analyze, analyze_proven, print_axis_info, vector_width, AxisInfo, AxisInfoMap,
};
mod common;

use common::compile;
use tawa_ir::{Function, Op, OpKind, Value};

/// Pointer, mask and result shape of every load of tensors of pointers,
/// in program order.
fn loads(func: &Function) -> Vec<(Value, Option<Value>, Vec<u32>)> {
    let mut out = Vec::new();
    func.walk(&mut |op: Op| {
        let data = &func.ops[op];
        if let OpKind::Load { has_mask, .. } = data.kind {
            let shape = func.ty(data.results[0]).shape().to_vec();
            let mask = has_mask.then(|| data.operands[1]);
            out.push((data.operands[0], mask, shape));
        }
    });
    out
}

fn stores(func: &Function) -> Vec<(Value, Option<Value>)> {
    let mut out = Vec::new();
    func.walk(&mut |op: Op| {
        let data = &func.ops[op];
        if let OpKind::Store { has_mask, .. } = data.kind {
            out.push((data.operands[0], has_mask.then(|| data.operands[2])));
        }
    });
    out
}

/// Width along `dim` with the emitter's cap of 16 bytes per access.
fn width(map: &AxisInfoMap, ptr: Value, mask: Option<Value>, dim: usize, elem_bytes: u32) -> u32 {
    vector_width(
        map.get(ptr),
        mask.map(|m| map.get(m)),
        dim,
        elem_bytes,
        16 / elem_bytes,
    )
}

/// The matmul loads: A `[BM, BK]` and B `[BK, BN]`, both row-major, so the
/// contiguous dimension is 1 for both.
fn matmul_loads(func: &Function) -> [(Value, Value); 2] {
    let ls = loads(func);
    assert_eq!(ls.len(), 2, "the matmul kernel loads A and B");
    let a = (ls[0].0, ls[0].1.expect("A load is masked"));
    let b = (ls[1].0, ls[1].1.expect("B load is masked"));
    [a, b]
}

#[test]
fn matmul_square_4096_vectorizes_its_loads_and_store() {
    let func = compile("matmul", "square_4096");
    let map = analyze(&func);
    let [(a_ptrs, a_mask), (b_ptrs, b_mask)] = matmul_loads(&func);

    // A: runs of BLOCK_K elements along K (stride_ak is the constant 1),
    // 16-byte aligned (stride_am is `i32:16`, a_ptr `*fp16:16`); the
    // loop-carried pointer keeps both through `a_ptrs += BLOCK_K`.
    let a = map.get(a_ptrs);
    assert!(a.contiguity[1] >= 8, "A contiguity {a:?}");
    assert!(a.divisibility[1] >= 16, "A divisibility {a:?}");
    // B: runs along N from the `max_contiguous` hint on cols.
    let b = map.get(b_ptrs);
    assert!(b.contiguity[1] >= 8, "B contiguity {b:?}");
    assert!(b.divisibility[1] >= 16, "B divisibility {b:?}");

    // `ks[None, :] < K - kt * BLOCK_K` with K `i32:16`: constant over
    // aligned runs of 16 along K.
    let am = map.get(a_mask);
    assert!(am.constancy[1] >= 8, "A mask {am:?}");
    // `ks[:, None] < ...` does not vary along N at all.
    assert_eq!(map.get(b_mask).constancy, vec![16, 256]);

    assert_eq!(width(&map, a_ptrs, Some(a_mask), 1, 2), 8);
    assert_eq!(width(&map, b_ptrs, Some(b_mask), 1, 2), 8);
    // Nothing is contiguous along the rows.
    assert_eq!(width(&map, a_ptrs, Some(a_mask), 0, 2), 1);

    let st = stores(&func);
    assert_eq!(st.len(), 1);
    let (c_ptrs, c_mask) = st[0];
    assert_eq!(width(&map, c_ptrs, c_mask, 1, 2), 8);
}

#[test]
fn matmul_ragged_100_stays_scalar() {
    // M = N = K = 100: no `i32:16` hints. The strides of the row
    // dimension (100 elements, 200 bytes) only guarantee 2-byte alignment
    // of each row, and the K mask may flip at any element.
    let func = compile("matmul", "ragged_100");
    let map = analyze(&func);
    let [(a_ptrs, a_mask), (b_ptrs, b_mask)] = matmul_loads(&func);
    let a = map.get(a_ptrs);
    assert_eq!(a.contiguity[1], 32, "A stays contiguous along K: {a:?}");
    assert_eq!(a.divisibility[1], 2, "but only element-aligned: {a:?}");
    assert_eq!(map.get(a_mask).constancy[1], 1);
    assert_eq!(map.get(b_mask).constancy[0], 1);
    assert_eq!(width(&map, a_ptrs, Some(a_mask), 1, 2), 1);
    assert_eq!(width(&map, b_ptrs, Some(b_mask), 1, 2), 1);
    // Without the mask A would still be limited by its alignment.
    assert_eq!(width(&map, a_ptrs, None, 1, 2), 1);
}

/// matmul's `cols = max_contiguous(multiple_of((pid_n * BN + arange) % N,
/// BN), BN)` claims runs of BN along N that `% N` breaks at column N
/// when N = 100 is no multiple of them; without the hints
/// (`analyze_proven`, what a vector taken on a run-time alignment check
/// rests on) B's pointers have runs of one.
#[test]
fn matmul_ragged_100_b_runs_are_the_hints_alone() {
    let func = compile("matmul", "ragged_100");
    let hinted = analyze(&func);
    let proven = analyze_proven(&func);
    let [(a_ptrs, _), (b_ptrs, _)] = matmul_loads(&func);
    assert_eq!(hinted.get(b_ptrs).contiguity[1], 64);
    assert_eq!(proven.get(b_ptrs).contiguity[1], 1);
    // A's runs along K come from `arange` with the unit stride: proven.
    assert_eq!(proven.get(a_ptrs).contiguity[1], 32);
}

/// With N `i32:16` the proof keeps what `% N` cannot break: runs of 16
/// (the wrap falls on a multiple of 16), where the hint claims 128.
#[test]
fn matmul_square_4096_proves_b_runs_of_what_n_is_divisible_by() {
    let func = compile("matmul", "square_4096");
    let [_, (b_ptrs, _)] = matmul_loads(&func);
    assert_eq!(analyze_proven(&func).get(b_ptrs).contiguity[1], 16);
    assert!(analyze(&func).get(b_ptrs).contiguity[1] > 16);
}

#[test]
fn vector_add_widths_follow_the_bound_specialization() {
    // n_elements = 1024 is `i32:16`: the bound check is constant over runs
    // of 16, pointers are 16-byte aligned: 4 fp32 per access.
    let func = compile("vector_add", "one_block_1024");
    let map = analyze(&func);
    let ls = loads(&func);
    assert_eq!(ls.len(), 2);
    for (ptr, mask, _) in &ls {
        assert_eq!(width(&map, *ptr, *mask, 0, 4), 4);
    }
    let (out_ptr, out_mask) = stores(&func)[0];
    assert_eq!(width(&map, out_ptr, out_mask, 0, 4), 4);

    // n_elements = 1000 is a plain `i32`: the mask may flip anywhere, as
    // in Triton, which specializes on divisibility by 16 for this reason.
    let func = compile("vector_add", "ragged_1000");
    let map = analyze(&func);
    for (ptr, mask, _) in loads(&func) {
        assert_eq!(width(&map, ptr, mask, 0, 4), 1);
        assert_eq!(width(&map, ptr, None, 0, 4), 4);
    }
}

#[test]
fn vector_add_facts() {
    let func = compile("vector_add", "one_block_1024");
    expect![[r#"
        %x_ptr: ptr<f32>  contiguity [1]  divisibility [16]  constancy [1]
        %y_ptr: ptr<f32>  contiguity [1]  divisibility [16]  constancy [1]
        %out_ptr: ptr<f32>  contiguity [1]  divisibility [16]  constancy [1]
        %n_elements: i32  contiguity [1]  divisibility [16]  constancy [1]
        %pid: i32  contiguity [1]  divisibility [1]  constancy [1]
        %0: i32  contiguity [1]  divisibility [1024]  constancy [1]
        %block_start: i32  contiguity [1]  divisibility [1024]  constancy [1]
        %1: tensor<1024xi32>  contiguity [1024]  divisibility [max]  constancy [1]
        %2: tensor<1024xi32>  contiguity [1]  divisibility [1024]  constancy [1024]
        %offsets: tensor<1024xi32>  contiguity [1024]  divisibility [1024]  constancy [1]
        %3: tensor<1024xi32>  contiguity [1]  divisibility [16]  constancy [1024]
        %in_bounds: tensor<1024xi1>  contiguity [1]  divisibility [1]  constancy [16]
        %4: tensor<1024xptr<f32>>  contiguity [1]  divisibility [16]  constancy [1024]
        %5: tensor<1024xptr<f32>>  contiguity [1024]  divisibility [16]  constancy [1]
        %x: tensor<1024xf32>  contiguity [1]  divisibility [1]  constancy [1]
        %6: tensor<1024xptr<f32>>  contiguity [1]  divisibility [16]  constancy [1024]
        %7: tensor<1024xptr<f32>>  contiguity [1024]  divisibility [16]  constancy [1]
        %y: tensor<1024xf32>  contiguity [1]  divisibility [1]  constancy [1]
        %8: tensor<1024xptr<f32>>  contiguity [1]  divisibility [16]  constancy [1024]
        %9: tensor<1024xptr<f32>>  contiguity [1024]  divisibility [16]  constancy [1]
        %10: tensor<1024xf32>  contiguity [1]  divisibility [1]  constancy [1]
    "#]]
    .assert_eq(&print_axis_info(&func));
}

#[test]
fn every_value_of_every_example_has_facts_of_its_rank() {
    // `get` answers for block arguments and loop-carried values too, and
    // the analysis terminates on every kernel (loops included).
    for ex in triton_examples::load_all().expect("examples load") {
        for case in &ex.spec.cases {
            let func = compile(&ex.name, &case.name);
            let map = analyze(&func);
            for (v, data) in func.values.iter() {
                let info: &AxisInfo = map.get(v);
                let rank = data.ty.shape().len().max(1);
                assert_eq!(
                    info.contiguity.len(),
                    rank,
                    "{}/{}: {v}",
                    ex.name,
                    case.name
                );
                assert_eq!(info.divisibility.len(), rank);
                assert_eq!(info.constancy.len(), rank);
                assert!(info
                    .contiguity
                    .iter()
                    .chain(&info.divisibility)
                    .chain(&info.constancy)
                    .all(|&x| x >= 1));
            }
        }
    }
}
