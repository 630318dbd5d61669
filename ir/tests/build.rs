//! IR built through the `Function` API: printed text, names, verifier
//! errors that text cannot express, and a parser that never panics.

use std::fs;
use std::path::Path;

use expect_test::expect;
use tawa_ir::*;

fn i32_tile(n: u32) -> Type {
    Type::tensor(vec![n], Elem::Scalar(ScalarType::I32))
}

/// A small kernel with names that need uniquing and sanitizing.
fn named_kernel() -> Function {
    let mut f = Function::new("named");
    let x = f.add_param(
        "x_ptr",
        Type::ptr(ScalarType::F32),
        ParamHints {
            divisibility: Some(16),
        },
    );
    let n = f.add_param("n", Type::I32, ParamHints::default());
    f.attrs.constexprs.push(("BLOCK".into(), "64".into()));
    let body = f.body;
    let pid = f.append_value(
        body,
        OpKind::ProgramId(Axis::X),
        vec![],
        Type::I32,
        Loc::new(3, 10),
    );
    f.set_name(pid, "pid");
    let range = f.append_value(
        body,
        OpKind::MakeRange { start: 0, end: 64 },
        vec![],
        i32_tile(64),
        Loc::new(4, 5),
    );
    let splat = f.append_value(body, OpKind::Splat, vec![pid], i32_tile(64), Loc::UNKNOWN);
    let a = f.append_value(
        body,
        OpKind::Binary(BinaryOp::Add),
        vec![splat, range],
        i32_tile(64),
        Loc::UNKNOWN,
    );
    f.set_name(a, "acc");
    let b = f.append_value(
        body,
        OpKind::Binary(BinaryOp::Mul),
        vec![a, a],
        i32_tile(64),
        Loc::UNKNOWN,
    );
    f.set_name(b, "acc");
    let c = f.append_value(
        body,
        OpKind::Binary(BinaryOp::Sub),
        vec![b, a],
        i32_tile(64),
        Loc::UNKNOWN,
    );
    f.set_name(c, "acc_1");
    let d = f.append_value(
        body,
        OpKind::Binary(BinaryOp::Max),
        vec![c, c],
        i32_tile(64),
        Loc::UNKNOWN,
    );
    f.set_name(d, "x.y[0]");
    let e = f.append_value(
        body,
        OpKind::Binary(BinaryOp::Min),
        vec![d, d],
        i32_tile(64),
        Loc::UNKNOWN,
    );
    f.set_name(e, "2nd");
    let g = f.append_value(
        body,
        OpKind::Binary(BinaryOp::Min),
        vec![e, e],
        i32_tile(64),
        Loc::UNKNOWN,
    );
    f.set_name(g, "");
    let ns = f.append_value(body, OpKind::Splat, vec![n], i32_tile(64), Loc::UNKNOWN);
    let mask = f.append_value(
        body,
        OpKind::Cmp(CmpPred::Lt),
        vec![g, ns],
        Type::tensor(vec![64], Elem::Scalar(ScalarType::I1)),
        Loc::UNKNOWN,
    );
    let ptrs = f.append_value(
        body,
        OpKind::Splat,
        vec![x],
        Type::tensor(vec![64], Elem::Ptr(ScalarType::F32)),
        Loc::UNKNOWN,
    );
    let ptrs = f.append_value(
        body,
        OpKind::AddPtr,
        vec![ptrs, g],
        Type::tensor(vec![64], Elem::Ptr(ScalarType::F32)),
        Loc::UNKNOWN,
    );
    let one = f.append_value(
        body,
        OpKind::Constant(ConstValue::Float(1.0)),
        vec![],
        Type::tensor(vec![64], Elem::Scalar(ScalarType::F32)),
        Loc::UNKNOWN,
    );
    f.append_op(
        body,
        OpKind::Store {
            has_mask: true,
            boundary_check: vec![],
            cache: CacheModifier::None,
            evict: EvictionPolicy::Normal,
        },
        vec![ptrs, one, mask],
        vec![],
        vec![],
        Loc::new(9, 4),
    );
    f.append_op(body, OpKind::Return, vec![], vec![], vec![], Loc::UNKNOWN);
    f
}

#[test]
fn prints_built_function() {
    let f = named_kernel();
    assert_eq!(verify_function(&f), Ok(()));
    expect![[r#"
        tt.func @named(%x_ptr: ptr<f32> {divisibility = 16}, %n: i32) attributes {num_warps = 4, num_stages = 3, constexprs = {BLOCK = "64"}} {
          %pid = program_id x : i32 loc(3:10)
          %0 = make_range {start = 0, end = 64} : tensor<64xi32> loc(4:5)
          %1 = splat %pid : i32 -> tensor<64xi32>
          %acc = add %1, %0 : tensor<64xi32>
          %acc_1 = mul %acc, %acc : tensor<64xi32>
          %acc_1_1 = sub %acc_1, %acc : tensor<64xi32>
          %x_y_0_ = max %acc_1_1, %acc_1_1 : tensor<64xi32>
          %_2nd = min %x_y_0_, %x_y_0_ : tensor<64xi32>
          %2 = min %_2nd, %_2nd : tensor<64xi32>
          %3 = splat %n : i32 -> tensor<64xi32>
          %4 = cmp.lt %2, %3 : tensor<64xi1>
          %5 = splat %x_ptr : ptr<f32> -> tensor<64xptr<f32>>
          %6 = addptr %5, %2 : tensor<64xptr<f32>>
          %7 = constant 1.0 : tensor<64xf32>
          store %6, %7, %4 {mask} loc(9:4)
          return
        }
    "#]]
    .assert_eq(&print_function(&f));
}

#[test]
fn names_survive_the_round_trip() {
    let f = named_kernel();
    let text = print_function(&f);
    let g = parse_function(&text).unwrap();
    assert_eq!(print_function(&g), text);
    let names: Vec<Option<String>> = g.values.values().map(|v| v.name.clone()).collect();
    expect![[r#"
        [
            Some(
                "x_ptr",
            ),
            Some(
                "n",
            ),
            Some(
                "pid",
            ),
            None,
            None,
            Some(
                "acc",
            ),
            Some(
                "acc_1",
            ),
            Some(
                "acc_1_1",
            ),
            Some(
                "x_y_0_",
            ),
            Some(
                "_2nd",
            ),
            None,
            None,
            None,
            None,
            None,
            None,
        ]
    "#]]
    .assert_debug_eq(&names);
    assert_eq!(g.params[0].name, "x_ptr");
    assert_eq!(g.params[0].hints.divisibility, Some(16));
    assert_eq!(g.attrs, f.attrs);
}

#[test]
fn verifier_rejects_use_before_def_in_one_block() {
    let mut f = Function::new("early_use");
    let body = f.body;
    // Create the definition detached, use it, then place it after the use.
    let def = f.create_op(
        OpKind::Constant(ConstValue::Int(1)),
        vec![],
        vec![Type::I32],
        vec![],
        Loc::new(2, 1),
    );
    let v = f.result(def, 0);
    f.append_value(
        body,
        OpKind::Binary(BinaryOp::Add),
        vec![v, v],
        Type::I32,
        Loc::new(1, 1),
    );
    f.blocks[body].ops.push(def);
    f.append_op(body, OpKind::Return, vec![], vec![], vec![], Loc::UNKNOWN);
    let errs: Vec<String> = verify_function(&f)
        .unwrap_err()
        .iter()
        .map(|e| e.to_string())
        .collect();
    expect![[r#"
        [
            "@early_use: 'add' at 1:1: operand 0 is not defined before this op in an enclosing block",
            "@early_use: 'add' at 1:1: operand 1 is not defined before this op in an enclosing block",
        ]
    "#]]
    .assert_debug_eq(&errs);
}

#[test]
fn verifier_rejects_bad_structure() {
    let mut f = Function::new("structure");
    let x = f.add_param("x", Type::I32, ParamHints::default());
    let body = f.body;
    // A parameter list that disagrees with the body's arguments.
    f.params.clear();
    let c = f.append_value(
        body,
        OpKind::Cmp(CmpPred::Eq),
        vec![x, x],
        Type::I1,
        Loc::UNKNOWN,
    );
    let then_block = f.new_block(vec![]);
    f.append_op(
        then_block,
        OpKind::Yield,
        vec![],
        vec![],
        vec![],
        Loc::UNKNOWN,
    );
    let else_block = f.new_block(vec![]);
    f.append_op(
        else_block,
        OpKind::Yield,
        vec![],
        vec![],
        vec![],
        Loc::UNKNOWN,
    );
    let if_op = f.append_op(
        body,
        OpKind::If,
        vec![c],
        vec![],
        vec![then_block, else_block],
        Loc::new(5, 2),
    );
    // A region whose parent pointer is wrong.
    f.blocks[else_block].parent = None;
    // An `if` with one region only.
    let lone = f.new_block(vec![]);
    f.append_op(lone, OpKind::Yield, vec![], vec![], vec![], Loc::UNKNOWN);
    f.append_op(body, OpKind::If, vec![c], vec![], vec![lone], Loc::UNKNOWN);
    f.append_op(body, OpKind::Return, vec![], vec![], vec![], Loc::UNKNOWN);
    let _ = if_op;
    let errs: Vec<String> = verify_function(&f)
        .unwrap_err()
        .iter()
        .map(|e| e.to_string())
        .collect();
    expect![[r#"
        [
            "@structure: parameters (0 values) are not the body's arguments (1 values)",
            "@structure: 'if' at 5:2: region block2 does not name this op as its parent",
            "@structure: 'if': expected 2 region(s), found 1",
        ]
    "#]]
    .assert_debug_eq(&errs);
}

/// Every prefix and many one-character corruptions of every round-trip file
/// parse to a result or an error, never a panic.
#[test]
fn parser_never_panics_on_truncated_or_garbled_text() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/text");
    let mut inputs = 0;
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "tir") {
            continue;
        }
        let text = fs::read_to_string(&path).unwrap();
        let boundaries: Vec<usize> = (0..=text.len())
            .filter(|&i| text.is_char_boundary(i))
            .collect();
        for (k, &i) in boundaries.iter().enumerate() {
            if k % 7 == 0 {
                let _ = parse_module(&text[..i]);
                inputs += 1;
            }
            if k % 13 == 0 && i < text.len() {
                let next = boundaries.get(k + 1).copied().unwrap_or(text.len());
                for junk in ["", "%", "{", "}", "\"", "-", "9", "<", "x", "é", "\\"] {
                    let garbled = format!("{}{junk}{}", &text[..i], &text[next..]);
                    let _ = parse_module(&garbled);
                    inputs += 1;
                }
            }
        }
    }
    assert!(inputs > 1000);
}

#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    let mut text = String::from("tt.func @deep(%c: i1) {\n");
    for _ in 0..100_000 {
        text.push_str("if %c {\n");
    }
    let err = parse_module(&text).unwrap_err();
    assert!(err.message.contains("nested deeper"), "{err}");
}
