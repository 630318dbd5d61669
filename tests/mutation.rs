//! The frontend never panics, hangs or emits invalid IR, whatever the input.
//!
//! Every example kernel is mutated many times with a seeded generator
//! (truncation, deleted/swapped/duplicated tokens and lines, inserted bytes
//! and punctuation, broken indentation, extreme numbers, identifiers and
//! keywords put where others were). Each mutant goes through
//! `tawa_frontend::compile` with the example's first small case's options:
//! an error must render (with and without colour) without panicking; a
//! success must pass the verifier and the text round trip, and the TMA
//! inference (`--explain`) must not panic on it. A handful of
//! mutants also go through the real binary, which must exit with 0 or 1 —
//! never a panic (101) or an internal error (3) — and print an `error...`
//! on standard error when it fails.
//!
//! `TAWA_MUTANTS=2000 cargo test --test mutation` runs a deeper search (the
//! mutant streams are prefixes of each other: the default run's mutants are
//! the first ones of any deeper run).

mod common;

use std::cell::RefCell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use tawa_frontend::CompileOptions;
use triton_examples::Example;

/// Mutants per example file; `TAWA_MUTANTS=N` asks for more in a deeper run.
fn mutants_per_example() -> usize {
    std::env::var("TAWA_MUTANTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100)
}
/// A compile slower than this is reported as slow (not a failure).
const SLOW: Duration = Duration::from_secs(2);
/// A compile slower than this is taken for a hang (a failure).
const HANG: Duration = Duration::from_secs(30);

/// splitmix64: a few lines and a stream that never changes under us.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`).
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum Kind {
    Ident,
    Number,
    Str,
    Punct,
    Space,
    Newline,
    Comment,
}

#[derive(Clone, Copy, Debug)]
struct Tok {
    start: usize,
    end: usize,
    kind: Kind,
}

/// A rough Python tokenizer: good enough to pick things to mutate.
fn tokenize(src: &str) -> Vec<Tok> {
    let b = src.as_bytes();
    let mut toks = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let start = i;
        let c = b[i];
        let kind = if c == b'\n' {
            i += 1;
            Kind::Newline
        } else if c == b' ' || c == b'\t' || c == b'\r' {
            while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\r') {
                i += 1;
            }
            Kind::Space
        } else if c == b'#' {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            Kind::Comment
        } else if c.is_ascii_alphabetic() || c == b'_' {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            Kind::Ident
        } else if c.is_ascii_digit() {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'.' || b[i] == b'_') {
                i += 1;
            }
            Kind::Number
        } else if c == b'"' || c == b'\'' {
            i += 1;
            while i < b.len() && b[i] != c && b[i] != b'\n' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i = (i + 1).min(b.len());
            Kind::Str
        } else {
            // One character (possibly multi-byte).
            i += src[i..].chars().next().map_or(1, char::len_utf8);
            Kind::Punct
        };
        // Escapes can step past the end or into a character.
        while i < b.len() && !src.is_char_boundary(i) {
            i += 1;
        }
        toks.push(Tok {
            start,
            end: i.min(b.len()),
            kind,
        });
    }
    toks
}

fn char_boundary_at_or_before(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn random_position(s: &str, rng: &mut Rng) -> usize {
    char_boundary_at_or_before(s, rng.below(s.len() + 1))
}

/// Byte ranges of the lines, newline included.
fn lines(s: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, c) in s.char_indices() {
        if c == '\n' {
            out.push((start, i + 1));
            start = i + 1;
        }
    }
    if start < s.len() {
        out.push((start, s.len()));
    }
    out
}

fn replace(s: &str, start: usize, end: usize, with: &str) -> String {
    format!("{}{with}{}", &s[..start], &s[end..])
}

const PUNCT: &[&str] = &[
    "(", ")", "[", "]", "{", "}", ":", ",", ".", "=", "==", "+", "-", "*", "**", "/", "//", "%",
    "<", ">", "<=", "&", "|", "^", "~", "@", "!", "\\", "\"", "'", "#", ";", "`", "->", "...",
    ":=", "+=", "\n", "\t", " ",
];
const ODD_CHARS: &[char] = &[
    '\0', '\t', '\r', '\u{7f}', '\u{feff}', '\u{2028}', '\u{a0}', 'é', 'π', '😀', '\u{301}', '\\',
];
const NUMBERS: &[&str] = &[
    "0",
    "-1",
    "1",
    "3",
    "99999999999999999999999999",
    "2147483648",
    "-2147483649",
    "9223372036854775808",
    "1e400",
    "1e-400",
    "0.5",
    "-0.0",
    "0x7fffffff",
    "1_000",
    "2**31",
    "2**63",
    "1 << 40",
    "float('nan')",
    "0o17",
    "0b101",
    "1j",
    "65536",
    "3.0",
];
const KEYWORDS: &[&str] = &[
    "None", "True", "False", "and", "or", "not", "in", "is", "if", "else", "elif", "for", "while",
    "def", "return", "lambda", "yield", "global", "nonlocal", "pass", "break", "continue", "class",
    "import", "with", "assert", "del", "async", "await", "tl", "triton", "range", "len", "print",
    "float", "int", "self",
];

/// One mutation; `what` names it for failure reports.
fn mutate_once(src: &str, toks: &[Tok], idents: &[&str], rng: &mut Rng) -> (String, &'static str) {
    let solid: Vec<&Tok> = toks
        .iter()
        .filter(|t| !matches!(t.kind, Kind::Space | Kind::Newline))
        .collect();
    let of_kind = |k: Kind| -> Vec<&Tok> { toks.iter().filter(|t| t.kind == k).collect() };
    let line_ranges = lines(src);
    match rng.below(12) {
        0 => {
            let at = random_position(src, rng);
            (src[..at].to_string(), "truncate")
        }
        1 if !solid.is_empty() => {
            let t = rng.pick(&solid);
            (replace(src, t.start, t.end, ""), "delete token")
        }
        2 if !line_ranges.is_empty() => {
            let (s, e) = *rng.pick(&line_ranges);
            (replace(src, s, e, ""), "delete line")
        }
        3 if solid.len() >= 2 => {
            let (mut a, mut b) = (*rng.pick(&solid), *rng.pick(&solid));
            if a.start > b.start {
                std::mem::swap(&mut a, &mut b);
            }
            if a.end > b.start {
                return (src.to_string(), "swap tokens (same)");
            }
            let out = format!(
                "{}{}{}{}{}",
                &src[..a.start],
                &src[b.start..b.end],
                &src[a.end..b.start],
                &src[a.start..a.end],
                &src[b.end..]
            );
            (out, "swap tokens")
        }
        4 if !line_ranges.is_empty() => {
            let (s, e) = *rng.pick(&line_ranges);
            let line = &src[s..e];
            let line = if line.ends_with('\n') {
                line.to_string()
            } else {
                format!("{line}\n")
            };
            (replace(src, s, s, &line), "duplicate line")
        }
        5 => {
            let at = random_position(src, rng);
            let n = 1 + rng.below(3);
            let ins: String = (0..n).map(|_| *rng.pick(PUNCT)).collect();
            (replace(src, at, at, &ins), "insert punctuation")
        }
        6 => {
            let at = random_position(src, rng);
            let mut ins = String::new();
            for _ in 0..1 + rng.below(4) {
                if rng.below(2) == 0 {
                    ins.push(*rng.pick(ODD_CHARS));
                } else {
                    ins.push(char::from(1 + rng.below(126) as u8));
                }
            }
            (replace(src, at, at, &ins), "insert bytes")
        }
        7 if !line_ranges.is_empty() => {
            let (s, e) = *rng.pick(&line_ranges);
            let line = &src[s..e];
            let body = line.trim_start_matches([' ', '\t']);
            let indent = line.len() - body.len();
            let new_indent = match rng.below(4) {
                0 => String::new(),
                1 => " ".repeat(indent + 1 + rng.below(4)),
                2 => " ".repeat(indent.saturating_sub(1 + rng.below(4))),
                _ => "\t".repeat(indent / 4 + 1),
            };
            (
                replace(src, s, s + indent, &new_indent),
                "change indentation",
            )
        }
        8 => {
            let nums = of_kind(Kind::Number);
            if nums.is_empty() {
                return (src.to_string(), "no number");
            }
            let t = rng.pick(&nums);
            (
                replace(src, t.start, t.end, NUMBERS[rng.below(NUMBERS.len())]),
                "replace number",
            )
        }
        9 => {
            let ids = of_kind(Kind::Ident);
            if ids.is_empty() || idents.is_empty() {
                return (src.to_string(), "no identifier");
            }
            let t = rng.pick(&ids);
            (
                replace(src, t.start, t.end, idents[rng.below(idents.len())]),
                "replace identifier",
            )
        }
        10 => {
            let ids = of_kind(Kind::Ident);
            if ids.is_empty() {
                return (src.to_string(), "no identifier");
            }
            let t = rng.pick(&ids);
            (
                replace(src, t.start, t.end, KEYWORDS[rng.below(KEYWORDS.len())]),
                "identifier to keyword",
            )
        }
        _ => {
            // Delete a random byte range of up to a few lines.
            let a = random_position(src, rng);
            let b = char_boundary_at_or_before(src, a + rng.below(200));
            (replace(src, a, b.max(a), ""), "delete range")
        }
    }
}

/// One to three mutations in a row.
fn mutate(src: &str, rng: &mut Rng) -> (String, String) {
    let mut text = src.to_string();
    let mut what = Vec::new();
    let rounds = match rng.below(10) {
        0..=6 => 1,
        7 | 8 => 2,
        _ => 3,
    };
    for _ in 0..rounds {
        let toks = tokenize(&text);
        let mut idents: Vec<&str> = toks
            .iter()
            .filter(|t| t.kind == Kind::Ident)
            .map(|t| &text[t.start..t.end])
            .collect();
        idents.sort_unstable();
        idents.dedup();
        let (next, w) = mutate_once(&text, &toks, &idents, rng);
        text = next;
        what.push(w);
    }
    (text, what.join(" + "))
}

thread_local! {
    /// Where and why the last panic on this thread happened.
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Records panics instead of printing them; the test reports them all.
fn install_quiet_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        let msg = common::panic_message(info.payload());
        let at = info
            .location()
            .map(|l| format!("{}:{}", l.file(), l.line()))
            .unwrap_or_default();
        LAST_PANIC.with(|p| *p.borrow_mut() = Some(format!("{msg} (at {at})")));
    }));
}

enum Outcome {
    Compiled,
    Rejected,
    /// A panic, a verifier error after success, or a round-trip failure.
    Bug(String),
}

/// Compile, verify, round trip and generate CUDA (plain and through the
/// warp-specialized path), or render: everything the frontend's callers do
/// with a result.
fn exercise(path: &str, source: &str, opts: &CompileOptions) -> Outcome {
    match tawa_frontend::compile(path, source, opts) {
        Ok(module) => {
            if let Err(e) = common::verify_text(&module) {
                return Outcome::Bug(format!("compiled, but the verifier rejects the IR:\n{e}"));
            }
            if let Err(e) = common::check_round_trip(&module) {
                return Outcome::Bug(format!("compiled, but {e}"));
            }
            // The backend must turn what the frontend accepts into CUDA or a
            // diagnostic, and `--explain` run the TMA inference on it, never
            // a panic (caught by the caller as a bug).
            // The warp-specialized path (TMA lowering, partitioner, aref
            // lowering) may refuse, but must not leave IR the verifier
            // rejects (an internal error, exit code 3).
            for func in &module.functions {
                let _ = tawa_backend::generate_cuda(func, &Default::default());
                let _ = tawa_rs::driver::explain_tma(path, func, true);
                if let Err(f) = tawa_rs::driver::compile_to_cuda(
                    path,
                    source,
                    func,
                    Some(&Default::default()),
                    false,
                ) {
                    if f.exit_code == 3 {
                        return Outcome::Bug(format!(
                            "the warp-specialized path failed internally:\n{}",
                            f.message
                        ));
                    }
                }
            }
            Outcome::Compiled
        }
        Err(diags) => {
            let plain = diags.render(false);
            let _ = diags.render(true);
            if !plain.starts_with("error") {
                return Outcome::Bug(format!(
                    "rendered diagnostics do not start with `error`:\n{plain}"
                ));
            }
            Outcome::Rejected
        }
    }
}

/// Runs `exercise` on its own thread (8 MiB stack, like a main thread) so
/// that a hang is detected rather than waited for.
fn exercise_guarded(path: String, source: String, opts: CompileOptions) -> (Outcome, Duration) {
    let (tx, rx) = mpsc::channel();
    let start = Instant::now();
    std::thread::Builder::new()
        .name("mutant".into())
        .stack_size(8 << 20)
        .spawn(move || {
            let outcome = catch_unwind(AssertUnwindSafe(|| exercise(&path, &source, &opts)))
                .unwrap_or_else(|_| {
                    let msg = LAST_PANIC
                        .with(|p| p.borrow_mut().take())
                        .unwrap_or_else(|| "unknown panic".into());
                    Outcome::Bug(format!("panicked: {msg}"))
                });
            let _ = tx.send(outcome);
        })
        .expect("spawn");
    match rx.recv_timeout(HANG) {
        Ok(outcome) => (outcome, start.elapsed()),
        // The thread is left running: there is no way to stop it, and the
        // failure is reported anyway.
        Err(_) => (
            Outcome::Bug(format!("no answer within {}s (hang?)", HANG.as_secs())),
            start.elapsed(),
        ),
    }
}

fn first_small_case_options(ex: &Example) -> CompileOptions {
    let case = ex
        .spec
        .cases
        .iter()
        .find(|c| c.has_tag("small"))
        .expect("every example has a small case");
    common::compile_options(&ex.spec, case).expect("compile options")
}

/// Seed of an example's mutant stream: stable across runs and examples.
fn seed_of(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}

/// The mutant as a file snippet around the first changed byte, for reports.
fn diff_hint(original: &str, mutant: &str) -> String {
    let first = original
        .bytes()
        .zip(mutant.bytes())
        .position(|(a, b)| a != b)
        .unwrap_or(original.len().min(mutant.len()));
    let line = mutant[..char_boundary_at_or_before(mutant, first)]
        .matches('\n')
        .count()
        + 1;
    let text: Vec<&str> = mutant
        .lines()
        .skip(line.saturating_sub(2))
        .take(3)
        .collect();
    format!("around line {line}:\n    {}", text.join("\n    "))
}

/// The files to mutate: every example kernel, plus the upstream tutorials
/// when `TAWA_UPSTREAM_DIR` points at them (their host code — classes,
/// decorators, f-strings, lambdas — widens what the parser sees), each with
/// the options of its first small case.
fn sources() -> Vec<(String, String, CompileOptions)> {
    let mut out = Vec::new();
    for ex in triton_examples::load_all().expect("launch cases load") {
        let source = std::fs::read_to_string(&ex.py_path).unwrap();
        out.push((ex.name.clone(), source, first_small_case_options(&ex)));
    }
    if let Some(dir) = std::env::var_os("TAWA_UPSTREAM_DIR") {
        for file in common::upstream_case_files() {
            let spec = common::load_spec_file(&file).unwrap();
            let stem = common::upstream_stem(&file);
            let Ok(source) = std::fs::read_to_string(Path::new(&dir).join(format!("{stem}.py")))
            else {
                continue;
            };
            let case = spec.cases.iter().find(|c| c.has_tag("small")).unwrap();
            let name = file.file_stem().unwrap().to_str().unwrap().to_string();
            out.push((name, source, common::compile_options(&spec, case).unwrap()));
        }
    }
    out
}

#[test]
fn mutated_examples_never_panic_the_frontend() {
    install_quiet_panic_hook();
    let mut total = 0;
    let (mut compiled, mut rejected) = (0, 0);
    let mut bugs = Vec::new();
    let mut slow = Vec::new();
    let run_start = Instant::now();
    for (name, source, opts) in sources() {
        let path = format!("mutants/{name}.py");
        let mut rng = Rng(seed_of(&name));
        for i in 0..mutants_per_example() {
            let (mutant, what) = mutate(&source, &mut rng);
            total += 1;
            let (outcome, took) = exercise_guarded(path.clone(), mutant.clone(), opts.clone());
            if took > SLOW {
                slow.push(format!("{name} #{i} ({what}): {:.1}s", took.as_secs_f64()));
            }
            match outcome {
                Outcome::Compiled => compiled += 1,
                Outcome::Rejected => rejected += 1,
                Outcome::Bug(msg) => bugs.push(format!(
                    "{name} mutant #{i} ({what}), {}\n  {}",
                    diff_hint(&source, &mutant),
                    msg.replace('\n', "\n  ")
                )),
            }
        }
    }
    eprintln!(
        "{total} mutants in {:.1}s: {compiled} compiled, {rejected} rejected, {} bugs",
        run_start.elapsed().as_secs_f64(),
        bugs.len()
    );
    if !slow.is_empty() {
        eprintln!(
            "slow compiles (> {}s):\n  {}",
            SLOW.as_secs(),
            slow.join("\n  ")
        );
    }
    assert!(total >= 300, "only {total} mutants");
    assert!(
        bugs.is_empty(),
        "{} of {total} mutants broke the frontend:\n\n{}",
        bugs.len(),
        bugs.join("\n\n")
    );
}

/// Waits for a child up to `limit`, killing it after.
fn wait_with_limit(
    mut child: std::process::Child,
    limit: Duration,
) -> Option<std::process::Output> {
    let start = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) => return child.wait_with_output().ok(),
            Ok(None) if start.elapsed() < limit => std::thread::sleep(Duration::from_millis(20)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    }
}

/// Runs the binary on `args` under the hang limit: its exit code and
/// standard error (standard output, possibly large IR, is dropped), or
/// `None` when it did not exit in time.
fn run_binary(args: &[String]) -> Option<(Option<i32>, String)> {
    let child = Command::new(env!("CARGO_BIN_EXE_tawa-rs"))
        .args(args)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Stderr is drained only after exit; diagnostics are small.
    let out = wait_with_limit(child, HANG)?;
    Some((
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    ))
}

fn cli_args(file: &Path, opts: &CompileOptions) -> Vec<String> {
    let mut args = vec![file.display().to_string()];
    if let Some(k) = &opts.kernel {
        args.extend(["--kernel".into(), k.clone()]);
    }
    if let Some(s) = &opts.signature {
        args.extend(["--signature".into(), s.clone()]);
    }
    for (name, value) in &opts.defines {
        args.extend(["-D".into(), format!("{name}={value}")]);
    }
    if let Some(n) = opts.num_warps {
        args.extend(["--num-warps".into(), n.to_string()]);
    }
    if let Some(n) = opts.num_stages {
        args.extend(["--num-stages".into(), n.to_string()]);
    }
    args
}

#[test]
fn mutated_examples_through_the_binary_exit_cleanly() {
    let examples = triton_examples::load_all().expect("launch cases load");
    let dir: PathBuf = std::env::temp_dir().join(format!("tawa-mutants-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut failures = Vec::new();
    let mut runs = 0;
    // Two mutants of each example (different stream from the in-process
    // test), so about 24 runs.
    for ex in &examples {
        let source = std::fs::read_to_string(&ex.py_path).unwrap();
        let opts = first_small_case_options(ex);
        let mut rng = Rng(seed_of(&ex.name) ^ 0xB1A5);
        for i in 0..2 {
            let (mutant, what) = mutate(&source, &mut rng);
            let file = dir.join(format!("{}_{i}.py", ex.name));
            std::fs::write(&file, &mutant).unwrap();
            runs += 1;
            let what = format!("{} binary mutant #{i} ({what})", ex.name);
            let Some((code, stderr)) = run_binary(&cli_args(&file, &opts)) else {
                failures.push(format!("{what}: no exit within {}s", HANG.as_secs()));
                continue;
            };
            match code {
                Some(0) => {}
                Some(1) if stderr.starts_with("error") => {}
                Some(1) => {
                    failures.push(format!("{what}: exit 1, stderr not `error...`:\n{stderr}"))
                }
                code => failures.push(format!("{what}: exit {code:?}, stderr:\n{stderr}")),
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    eprintln!(
        "{runs} mutants through the binary, {} failures",
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "{} of {runs} binary runs failed:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

/// Signature entries a user might plausibly (or implausibly) write: odd
/// types, hints, descriptors, constexpr values at and past every limit.
const SIGNATURE_ENTRIES: &[&str] = &[
    "*fp16:16",
    "*fp32",
    "*i64:16",
    "*bf16:3",
    "*bogus",
    "*",
    "i32",
    "i32:1",
    "i32:16",
    "i64",
    "u8",
    "fp32",
    "fp8e4nv",
    "fp8e4b15",
    "i1",
    "tensordesc<fp16[64, 64]>",
    "tensordesc<fp16[64]>",
    "tensordesc<fp32[0, 64]>",
    "tensordesc<fp16[64, 64",
    "tensordesc<>",
    "0",
    "1",
    "-1",
    "3",
    "16",
    "1024",
    "65536",
    "1048576",
    "2097152",
    "2**40",
    "1e9",
    "'relu'",
    "''",
    "True",
    "None",
    "tl.float16",
    "(1, 2)",
    "[",
    "\"",
    ":",
    "*fp16:16:16",
    "i32 i32",
];

/// One signature mutation: drop, duplicate, swap or replace entries.
fn mutate_signature(sig: &str, rng: &mut Rng) -> String {
    let mut entries = tawa_frontend::signature::split(sig);
    for _ in 0..1 + rng.below(3) {
        let n = entries.len();
        match rng.below(5) {
            0 if n > 0 => {
                entries.remove(rng.below(n));
            }
            1 if n > 0 => {
                let e = entries[rng.below(n)].clone();
                entries.insert(rng.below(n + 1), e);
            }
            2 if n > 1 => entries.swap(rng.below(n), rng.below(n)),
            _ => {
                let e = rng.pick(SIGNATURE_ENTRIES).to_string();
                if n == 0 {
                    entries.push(e);
                } else {
                    entries[rng.below(n)] = e;
                }
            }
        }
    }
    let mut sig = entries.join(", ");
    if rng.below(20) == 0 {
        sig.push(',');
    }
    sig
}

/// How long the signature fuzzer may run (`TAWA_FUZZ_SECONDS`, default 60):
/// CI runs it for a bounded time; its stream is seeded, so a longer run
/// tries the same signatures first and then more.
fn fuzz_budget() -> Duration {
    Duration::from_secs(
        std::env::var("TAWA_FUZZ_SECONDS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(60),
    )
}

/// Mutated signatures and constexpr bindings (`-D` at extreme values) on
/// every example, through everything `exercise` does: never a panic, a hang
/// or invalid IR. A failing input is written to `target/fuzz-failures/`
/// with its command line, ready to be added to `tests/fuzz_corpus/`.
#[test]
fn mutated_signatures_never_panic_the_compiler() {
    install_quiet_panic_hook();
    let budget = fuzz_budget();
    let start = Instant::now();
    let sources = sources();
    let mut rng = Rng(0x5167_0A7E);
    let (mut total, mut bugs) = (0, Vec::new());
    'outer: for round in 0.. {
        for (name, source, opts) in &sources {
            if start.elapsed() > budget || (round > 0 && total >= 20_000) {
                break 'outer;
            }
            let mut opts = opts.clone();
            if let Some(sig) = &opts.signature {
                opts.signature = Some(mutate_signature(sig, &mut rng));
            }
            if !opts.defines.is_empty() && rng.below(3) == 0 {
                let i = rng.below(opts.defines.len());
                opts.defines[i].1 = rng.pick(SIGNATURE_ENTRIES).to_string();
            }
            total += 1;
            let path = format!("mutants/{name}.py");
            let (outcome, _) = exercise_guarded(path, source.clone(), opts.clone());
            if let Outcome::Bug(msg) = outcome {
                let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("fuzz-failures");
                let _ = std::fs::create_dir_all(&dir);
                let file = dir.join(format!("{name}_{total}.py"));
                let args: Vec<String> = cli_args(Path::new("x"), &opts)[1..]
                    .iter()
                    .map(|a| shlex::try_quote(a).map_or(a.clone(), |q| q.into_owned()))
                    .collect();
                let _ = std::fs::write(&file, format!("# args: {}\n{source}", args.join(" ")));
                bugs.push(format!(
                    "{} ({}):\n  {}",
                    file.display(),
                    args.join(" "),
                    msg
                ));
            }
        }
    }
    eprintln!(
        "{total} mutated signatures in {:.1}s, {} bugs",
        start.elapsed().as_secs_f64(),
        bugs.len()
    );
    assert!(total >= sources.len(), "ran {total} signatures only");
    assert!(bugs.is_empty(), "{}", bugs.join("\n\n"));
}

/// The kept corpus: inputs that once broke the compiler or that a user
/// plausibly writes wrong (`tests/fuzz_corpus/*.py`, each with its command
/// line on its first line, `# args: ...`), through the real binary: exit
/// 0 or 1 with a rendered message, never a panic, an internal error or a
/// hang.
#[test]
fn fuzz_corpus_exits_cleanly() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz_corpus");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "py"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "empty corpus");
    let mut failures = Vec::new();
    for file in &files {
        let source = std::fs::read_to_string(file).unwrap();
        let args = source
            .lines()
            .next()
            .and_then(|l| l.strip_prefix("# args:"))
            .and_then(shlex::split)
            .unwrap_or_else(|| panic!("{}: first line must be `# args: ...`", file.display()));
        let what = file.display();
        let mut cmd = vec![file.display().to_string()];
        cmd.extend(args);
        let Some((code, stderr)) = run_binary(&cmd) else {
            failures.push(format!("{what}: no exit within {}s", HANG.as_secs()));
            continue;
        };
        match code {
            Some(0) => {}
            Some(1) if stderr.contains("error") && stderr.contains('^') => {}
            code => failures.push(format!("{what}: exit {code:?}, stderr:\n{stderr}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
