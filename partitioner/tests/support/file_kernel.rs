//! The kernel of a file test: `tests/<dir>/<file>`, whose first line is
//! `# signature: ...` (Triton's AOT format), compiled by the frontend.

use std::path::Path;

use tawa_frontend::{compile, CompileOptions};
use tawa_ir::Function;

pub fn kernel(dir: &str, file: &str) -> Function {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join(dir)
        .join(file);
    let source = std::fs::read_to_string(&path).unwrap();
    let signature = source
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("# signature:"))
        .expect("first line is the signature")
        .trim()
        .to_string();
    let opts = CompileOptions {
        signature: Some(signature),
        ..Default::default()
    };
    let module = compile(file, &source, &opts).unwrap_or_else(|d| panic!("{}", d.render(false)));
    module.functions.into_iter().next().unwrap()
}
