//! `ptxas -arch=sm_90a -v`: per-kernel registers, spills, stack and shared
//! memory, from PTX, without a GPU. This is the compile check's report
//! of every example (`tests/compile_examples.rs`); register pressure and spills are what decide
//! whether a warp-specialized kernel can hold its accumulators.

use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};

use super::error::RuntimeError;
use super::nvrtc::DEFAULT_ARCH;
use crate::toolchain;

/// Resources of one kernel (`.entry`) as ptxas reports them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KernelResources {
    pub name: String,
    pub registers: u32,
    pub spill_store_bytes: u64,
    pub spill_load_bytes: u64,
    pub stack_frame_bytes: u64,
    /// Static shared memory (`.shared` declarations), not the dynamic part.
    pub shared_bytes: u64,
    /// Named barriers used (`bar.sync N`, ...).
    pub barriers: u32,
    /// Constant bank 0 (parameters), when ptxas reports it.
    pub cmem0_bytes: Option<u64>,
}

impl KernelResources {
    pub fn spills(&self) -> bool {
        self.spill_store_bytes > 0 || self.spill_load_bytes > 0
    }
}

/// The report of one ptxas run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PtxasReport {
    /// In the order ptxas compiled them.
    pub kernels: Vec<KernelResources>,
    /// `ptxas warning` lines.
    pub warnings: Vec<String>,
    /// ptxas's whole output.
    pub log: String,
}

impl PtxasReport {
    pub fn kernel(&self, name: &str) -> Option<&KernelResources> {
        self.kernels.iter().find(|k| k.name == name)
    }
}

/// Runs ptxas on `ptx` for `sm_90a` and parses its resource report.
pub fn ptxas_info(ptx: &str) -> Result<PtxasReport, RuntimeError> {
    ptxas_info_for(ptx, DEFAULT_ARCH)
}

/// [`ptxas_info`] for another architecture (`sm_90`, `sm_100a`, ...).
pub fn ptxas_info_for(ptx: &str, arch: &str) -> Result<PtxasReport, RuntimeError> {
    let ptxas = toolchain::find_ptxas()?.path;
    let input = TempFile::new("ptx");
    std::fs::write(&input.0, ptx)
        .map_err(|e| RuntimeError::io(format!("writing {}", input.0.display()), e))?;
    let output = Command::new(&ptxas)
        .arg(format!("-arch={arch}"))
        .arg("-v")
        .arg(&input.0)
        .arg("-o")
        .arg("/dev/null")
        .output()
        .map_err(|e| RuntimeError::io(format!("running {}", ptxas.display()), e))?;
    let mut log = String::from_utf8_lossy(&output.stdout).into_owned();
    log.push_str(&String::from_utf8_lossy(&output.stderr));
    if !output.status.success() {
        return Err(RuntimeError::Ptxas {
            message: format!("{} exited with {}", ptxas.display(), output.status),
            log,
        });
    }
    Ok(parse_report(&log))
}

/// Assembles `ptx` into an `arch` cubin with ptxas (`ptxas -arch=ARCH -v`)
/// and returns the cubin with the resource report of the same run. This is
/// `--emit cubin`; the runtime itself loads NVRTC's cubin.
pub fn ptxas_cubin(ptx: &str, arch: &str) -> Result<(Vec<u8>, PtxasReport), RuntimeError> {
    let ptxas = toolchain::find_ptxas()?.path;
    let input = TempFile::new("ptx");
    let output_file = TempFile::new("cubin");
    std::fs::write(&input.0, ptx)
        .map_err(|e| RuntimeError::io(format!("writing {}", input.0.display()), e))?;
    let output = Command::new(&ptxas)
        .arg(format!("-arch={arch}"))
        .arg("-v")
        .arg(&input.0)
        .arg("-o")
        .arg(&output_file.0)
        .output()
        .map_err(|e| RuntimeError::io(format!("running {}", ptxas.display()), e))?;
    let mut log = String::from_utf8_lossy(&output.stdout).into_owned();
    log.push_str(&String::from_utf8_lossy(&output.stderr));
    if !output.status.success() {
        return Err(RuntimeError::Ptxas {
            message: format!("{} exited with {}", ptxas.display(), output.status),
            log,
        });
    }
    let cubin = std::fs::read(&output_file.0)
        .map_err(|e| RuntimeError::io(format!("reading {}", output_file.0.display()), e))?;
    Ok((cubin, parse_report(&log)))
}

/// Parses ptxas's `-v` output. Unknown lines are ignored, so a newer ptxas
/// that says more still parses.
pub fn parse_report(log: &str) -> PtxasReport {
    let mut report = PtxasReport {
        log: log.to_string(),
        ..Default::default()
    };
    // "Function properties for X" precedes the spill line of X, which may be
    // a kernel or a non-inlined device function (ignored).
    let mut properties_of: Option<String> = None;
    let mut current: Option<usize> = None;
    for line in log.lines() {
        let t = line.trim();
        if let Some(rest) = t.strip_prefix("ptxas warning") {
            report
                .warnings
                .push(rest.trim_start_matches([' ', ':']).to_string());
            continue;
        }
        let Some(info) = t.strip_prefix("ptxas info") else {
            if let Some(name) = &properties_of {
                if t.contains("stack frame") {
                    if let Some(k) = report.kernels.iter_mut().find(|k| &k.name == name) {
                        parse_frame_line(t, k);
                    }
                }
            }
            continue;
        };
        let info = info.trim_start_matches([' ', ':']);
        if let Some(rest) = info.strip_prefix("Compiling entry function") {
            let name = quoted(rest).unwrap_or_default();
            report.kernels.push(KernelResources {
                name,
                ..Default::default()
            });
            current = Some(report.kernels.len() - 1);
        } else if let Some(rest) = info.strip_prefix("Function properties for") {
            properties_of = Some(rest.trim().trim_matches('\'').to_string());
        } else if info.starts_with("Used") {
            if let Some(k) = current.map(|i| &mut report.kernels[i]) {
                parse_used_line(info, k);
            }
        }
    }
    report
}

/// `0 bytes stack frame, 8 bytes spill stores, 8 bytes spill loads`; in
/// NVRTC's log the line starts with `ptxas         .`.
fn parse_frame_line(line: &str, k: &mut KernelResources) {
    let line = line.strip_prefix("ptxas").unwrap_or(line).trim_start();
    let line = line.strip_prefix('.').unwrap_or(line);
    for item in line.split(',') {
        let mut words = item.split_whitespace();
        let Some(n) = words.next().and_then(|w| w.parse::<u64>().ok()) else {
            continue;
        };
        let what: Vec<&str> = words.collect();
        match what.as_slice() {
            ["bytes", "stack", "frame"] => k.stack_frame_bytes = n,
            ["bytes", "spill", "stores"] => k.spill_store_bytes = n,
            ["bytes", "spill", "loads"] => k.spill_load_bytes = n,
            _ => {}
        }
    }
}

/// `Used 8 registers, used 1 barriers, 1024 bytes smem, 380 bytes cmem[0]`
fn parse_used_line(line: &str, k: &mut KernelResources) {
    for item in line.split(',') {
        let words: Vec<&str> = item.split_whitespace().collect();
        match words.as_slice() {
            [used, n, "registers"] if used.eq_ignore_ascii_case("used") => {
                k.registers = n.parse().unwrap_or(0)
            }
            [used, n, "barriers"] if used.eq_ignore_ascii_case("used") => {
                k.barriers = n.parse().unwrap_or(0)
            }
            [n, "bytes", "smem"] => k.shared_bytes = n.parse().unwrap_or(0),
            [n, "bytes", "cmem[0]"] => k.cmem0_bytes = n.parse().ok(),
            _ => {}
        }
    }
}

fn quoted(s: &str) -> Option<String> {
    let start = s.find('\'')? + 1;
    let len = s[start..].find('\'')?;
    Some(s[start..start + len].to_string())
}

/// A uniquely named file in the temp folder, removed on drop.
struct TempFile(PathBuf);

impl TempFile {
    fn new(ext: &str) -> Self {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        TempFile(std::env::temp_dir().join(format!(
            "tawa-ptxas-{}-{}.{ext}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        )))
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Verbatim ptxas 13.0.88 output, plus a device function with spills and
    // a cmem entry as older ptxas versions print.
    const LOG: &str = "\
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'k2' for 'sm_90a'
ptxas info    : Function properties for k2
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 4 registers, used 0 barriers, 380 bytes cmem[0]
ptxas info    : Compile time = 9.815 ms
ptxas info    : Function properties for helper
    16 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads
ptxas warning : Registers are spilled to local memory in function 'k', 8 bytes spill stores, 8 bytes spill loads
ptxas info    : Compiling entry function 'k' for 'sm_90a'
ptxas info    : Function properties for k
    24 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads
ptxas info    : Used 255 registers, used 1 barriers, 1024 bytes smem
ptxas info    : Compile time = 1.843 ms
";

    #[test]
    fn parses_kernels_and_ignores_device_functions() {
        let r = parse_report(LOG);
        assert_eq!(r.kernels.len(), 2);
        let k2 = r.kernel("k2").unwrap();
        assert_eq!(
            (k2.registers, k2.barriers, k2.cmem0_bytes),
            (4, 0, Some(380))
        );
        assert!(!k2.spills());
        let k = r.kernel("k").unwrap();
        assert_eq!(
            (k.registers, k.shared_bytes, k.stack_frame_bytes),
            (255, 1024, 24)
        );
        assert_eq!((k.spill_store_bytes, k.spill_load_bytes), (8, 12));
        assert!(k.spills());
        assert_eq!(r.warnings.len(), 1);
        assert!(r.warnings[0].starts_with("Registers are spilled"));
    }

    /// NVRTC's log with `--ptxas-options=-v` (NVRTC 13.0), whose frame
    /// line starts with `ptxas .` rather than spaces.
    #[test]
    fn parses_the_report_in_nvrtc_logs() {
        let log = "\
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'k' for 'sm_90a'
ptxas info    : Function properties for k
ptxas         .     2048 bytes stack frame, 16 bytes spill stores, 20 bytes spill loads
ptxas info    : Used 32 registers, used 0 barriers, 2048 bytes cumulative stack size
ptxas info    : Compile time = 15.432 ms
";
        let k = parse_report(log).kernel("k").cloned().unwrap();
        assert_eq!(
            (
                k.registers,
                k.stack_frame_bytes,
                k.spill_store_bytes,
                k.spill_load_bytes
            ),
            (32, 2048, 16, 20)
        );
    }
}
