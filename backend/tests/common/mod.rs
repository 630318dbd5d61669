//! Helpers shared by the backend's integration tests.
#![allow(dead_code)]

use tawa_ir::Function;

/// The case's kernel, specialized as the case launches it.
pub fn compile(example: &str, case: &str) -> Function {
    let ex = triton_examples::load(example).expect("example loads");
    let case = ex.spec.case(case).expect("case exists");
    let args = ex.spec.compile_args(case).expect("compile args");
    let opts = tawa_frontend::CompileOptions {
        kernel: args.kernel,
        signature: args.signature,
        defines: args.defines,
        num_warps: args.num_warps,
        num_stages: args.num_stages,
    };
    let source = std::fs::read_to_string(&ex.py_path).expect("kernel file reads");
    let module = tawa_frontend::compile(&ex.py_path.display().to_string(), &source, &opts)
        .unwrap_or_else(|d| panic!("frontend error:\n{}", d.render(false)));
    module
        .functions
        .into_iter()
        .find(|f| f.name == ex.spec.kernel)
        .expect("kernel function")
}
