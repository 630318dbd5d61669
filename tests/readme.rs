//! The documents a newcomer reads hold: every compile command of the
//! README's shell blocks runs as printed (the GPU commands `run` and
//! `bench` excepted), the quick start prints the warp-specialized kernel it
//! promises, the test command is CI's, and no document, script or comment
//! cites a file outside the repository.

use std::path::{Path, PathBuf};

mod common;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn readme() -> String {
    std::fs::read_to_string(root().join("README.md")).unwrap()
}

/// The command lines of the README's ```sh blocks, continuation lines
/// joined.
fn shell_commands(markdown: &str) -> Vec<String> {
    let mut commands = Vec::new();
    let mut in_block = false;
    let mut pending = String::new();
    for line in markdown.lines() {
        let t = line.trim();
        if t.starts_with("```") {
            in_block = t == "```sh";
            continue;
        }
        if !in_block || t.is_empty() || t.starts_with('#') {
            continue;
        }
        match t.strip_suffix('\\') {
            Some(head) => {
                pending.push_str(head);
                pending.push(' ');
            }
            None => {
                pending.push_str(t);
                commands.push(std::mem::take(&mut pending));
            }
        }
    }
    commands
}

/// `tawa-rs ARGS` or `cargo run --release -- ARGS`: the arguments, with a
/// trailing `> /dev/null` dropped.
fn tawa_args(command: &str) -> Option<Vec<String>> {
    let words = shlex::split(command).unwrap_or_else(|| panic!("unquotable: {command}"));
    let args = match words
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        ["tawa-rs", ..] => words[1..].to_vec(),
        ["cargo", "run", "--release", "--", ..] => words[4..].to_vec(),
        _ => return None,
    };
    Some(
        args.into_iter()
            .take_while(|w| w != ">")
            .collect::<Vec<String>>(),
    )
}

fn run_tawa(args: &[String]) -> (i32, String, String) {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    common::run_tawa(&args, &[])
}

#[test]
fn readme_compile_commands_run_as_printed() {
    let commands = shell_commands(&readme());
    let mut ran = 0;
    for command in &commands {
        let Some(args) = tawa_args(command) else {
            continue;
        };
        // GPU commands, and tool-dependent output forms, are not for a
        // machine without a GPU or the CUDA tools.
        if matches!(args.first().map(String::as_str), Some("run" | "bench"))
            || args.iter().any(|a| a == "ptx" || a == "cubin")
        {
            continue;
        }
        let (code, _, stderr) = run_tawa(&args);
        assert_eq!(code, 0, "`{command}`:\n{stderr}");
        ran += 1;
    }
    assert!(ran >= 4, "only {ran} README commands found: {commands:?}");
}

#[test]
fn quick_start_prints_a_warp_specialized_kernel_and_tests_as_ci_does() {
    let text = readme();
    let start = text.find("## Quick start").expect("a quick start");
    let section = &text[start..];
    let section = &section[..section[3..].find("\n## ").map_or(section.len(), |e| e + 3)];
    let commands = shell_commands(section);
    assert_eq!(commands.len(), 2, "two commands: {commands:?}");
    let args = tawa_args(&commands[0]).expect("the first runs tawa-rs");
    let (code, stdout, stderr) = run_tawa(&args);
    assert_eq!(code, 0, "{stderr}");
    for ptx in ["cp.async.bulk.tensor", "wgmma.mma_async", "setmaxnreg"] {
        assert!(stdout.contains(ptx), "the quick start's CUDA lacks {ptx}");
    }
    assert_eq!(commands[1], "bash .ci/run", "the test command is CI's");
    assert!(root().join(".ci/run").is_file());
}

/// Text files of the repository (not build output, tools or history).
fn repository_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            if !["target", ".git", ".tools", "gpu-bin"].contains(&name.as_str()) {
                repository_files(&path, out);
            }
        } else if ["rs", "md", "sh", "py", "toml"]
            .iter()
            .any(|e| name.ends_with(&format!(".{e}")))
            || name == "run"
        {
            out.push(path);
        }
    }
}

#[test]
fn nothing_cites_files_outside_the_repository() {
    // The team's design notes live outside the repository; spelled in
    // pieces so that this file does not cite them either.
    let outside: Vec<String> = ["DESIGN", "HOPPER", "BENCHMARKS"]
        .iter()
        .map(|n| format!("{n}.md"))
        .chain([format!("../{}/", "shared")])
        .collect();
    let mut files = Vec::new();
    repository_files(root(), &mut files);
    assert!(files.len() > 50, "{} files", files.len());
    let mut citations = Vec::new();
    for file in &files {
        let Ok(text) = std::fs::read_to_string(file) else {
            continue;
        };
        for (i, line) in text.lines().enumerate() {
            if let Some(name) = outside.iter().find(|n| line.contains(n.as_str())) {
                let rel = file.strip_prefix(root()).unwrap().display();
                citations.push(format!("{rel}:{}: {name}", i + 1));
            }
        }
    }
    assert!(citations.is_empty(), "{}", citations.join("\n"));
}

/// Every relative link of the top-level documents names a file that is
/// there.
#[test]
fn document_links_resolve() {
    for doc in [
        "README.md",
        "ARCHITECTURE.md",
        "CONTRIBUTING.md",
        "bench/RESULTS.md",
    ] {
        let path = root().join(doc);
        let text = std::fs::read_to_string(&path).unwrap();
        for target in text
            .split("](")
            .skip(1)
            .filter_map(|rest| rest.split(')').next())
        {
            let file = target.split('#').next().unwrap();
            if file.is_empty() || file.contains("://") {
                continue;
            }
            assert!(
                path.parent().unwrap().join(file).exists(),
                "{doc}: link to `{target}`, which does not exist"
            );
        }
    }
}
