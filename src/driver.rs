//! The compilation pipeline behind the CLI: read → frontend → verifier →
//! emit. Each stage's failure becomes a [`Failure`] with the text to print.

use std::fs;

use tawa_frontend::CompileOptions;
use tawa_ir::{printer, verifier};

use crate::{Cli, Emit};

/// A failed run: what to print on standard error and the exit code.
pub struct Failure {
    pub message: String,
    pub exit_code: u8,
}

impl Failure {
    fn user(message: String) -> Failure {
        Failure {
            message,
            exit_code: 1,
        }
    }
    fn internal(message: String) -> Failure {
        Failure {
            message: format!(
                "internal compiler error: {message}\nplease report this with the kernel file and the command line\n"
            ),
            exit_code: 3,
        }
    }
}

pub fn run(cli: &Cli, color: bool) -> Result<(), Failure> {
    let path = cli.kernel_file.display().to_string();
    let bytes = fs::read(&cli.kernel_file)
        .map_err(|e| Failure::user(format!("error: cannot read `{path}`: {e}\n")))?;
    let source = String::from_utf8(bytes).map_err(|e| {
        Failure::user(format!(
            "error: `{path}` is not valid UTF-8 (byte {} is not part of a UTF-8 character)\n",
            e.utf8_error().valid_up_to()
        ))
    })?;

    let mut opts = CompileOptions {
        kernel: cli.kernel.clone(),
        signature: cli.signature.clone(),
        defines: cli.define.clone(),
        num_warps: cli.num_warps,
        num_stages: cli.num_stages,
    };
    if let Some(case_name) = &cli.case {
        let example = triton_examples::load_beside(&cli.kernel_file)
            .map_err(|e| Failure::user(format!("error: --case {case_name}: {e}\n")))?;
        let case = example.spec.case(case_name).map_err(|e| {
            let names: Vec<&str> = example.spec.cases.iter().map(|c| c.name.as_str()).collect();
            Failure::user(format!("error: --case: {e}; cases: {}\n", names.join(", ")))
        })?;
        let args = example
            .spec
            .compile_args(case)
            .map_err(|e| Failure::user(format!("error: --case {case_name}: {e}\n")))?;
        opts.kernel = opts.kernel.or(args.kernel);
        opts.signature = opts.signature.or(args.signature);
        // Explicit -D bindings come last so that they win.
        let mut defines = args.defines;
        defines.append(&mut opts.defines);
        opts.defines = defines;
        opts.num_warps = opts.num_warps.or(args.num_warps);
        opts.num_stages = opts.num_stages.or(args.num_stages);
    }
    let module = tawa_frontend::compile(&path, &source, &opts)
        .map_err(|diags| Failure::user(diags.render(color)))?;
    // Every stage must leave IR the verifier accepts; a rejection here is
    // a compiler bug, not the user's.
    if let Err(errors) = verifier::verify_module(&module) {
        let list: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
        return Err(Failure::internal(format!(
            "the frontend produced invalid IR:\n{}",
            list.join("\n")
        )));
    }

    let text = match cli.emit {
        Emit::TileIr => printer::print_module(&module),
    };
    match &cli.output {
        Some(out) => fs::write(out, text)
            .map_err(|e| Failure::user(format!("error: cannot write `{}`: {e}\n", out.display()))),
        None => {
            print!("{text}");
            Ok(())
        }
    }
}
