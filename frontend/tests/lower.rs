//! Frontend file tests: every `tests/lower/*.py` is compiled and its tile
//! IR compared with the blessed `<name>.tir` beside it (bless with
//! `UPDATE_EXPECT=1 cargo test -p tawa-frontend --test lower`). Header
//! lines give the options: `# signature: ...`, `# kernel: NAME`,
//! `# define: NAME=VALUE` (repeatable). The IR must pass the verifier and
//! survive a print → parse → print round trip unchanged.

use std::path::Path;

use expect_test::expect_file;
use tawa_frontend::{compile, CompileOptions};

#[test]
fn lowering_file_tests() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/lower");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "py"))
        .collect();
    files.sort();
    assert!(!files.is_empty());
    for file in files {
        let name = file.file_stem().unwrap().to_str().unwrap().to_string();
        let source = std::fs::read_to_string(&file).unwrap();
        let mut opts = CompileOptions::default();
        for line in source.lines().take_while(|l| l.starts_with('#')) {
            let line = line.trim_start_matches('#').trim();
            if let Some(s) = line.strip_prefix("signature:") {
                opts.signature = Some(s.trim().to_string());
            } else if let Some(k) = line.strip_prefix("kernel:") {
                opts.kernel = Some(k.trim().to_string());
            } else if let Some(d) = line.strip_prefix("define:") {
                let (n, v) = d.trim().split_once('=').expect("define: NAME=VALUE");
                opts.defines
                    .push((n.trim().to_string(), v.trim().to_string()));
            }
        }
        let rel = format!("tests/lower/{name}.py");
        let module = match compile(&rel, &source, &opts) {
            Ok(m) => m,
            Err(d) => panic!("{name}: does not compile:\n{}", d.render(false)),
        };
        if let Err(errors) = tawa_ir::verify_module(&module) {
            panic!("{name}: invalid IR: {errors:?}");
        }
        let text = tawa_ir::print_module(&module);
        let reparsed = tawa_ir::parse_module(&text)
            .unwrap_or_else(|e| panic!("{name}: printed IR does not parse: {e:?}"));
        assert_eq!(tawa_ir::print_module(&reparsed), text, "{name}: round trip");
        expect_file![dir.join(format!("{name}.tir"))].assert_eq(&text);
    }
}
