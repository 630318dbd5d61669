//! On-disk NVRTC compile cache.
//!
//! Key: SHA-256 over a format tag, NVRTC's version, the kernel name, the
//! NVRTC options and the source, each length-prefixed so no two different
//! inputs hash the same bytes. A hit needs all three files `<key>.ptx`,
//! `<key>.cubin`, `<key>.log`; each is written to a temporary name and
//! renamed, so a reader never sees a half-written file (concurrent test
//! threads and processes share the cache).
//!
//! Folder: `$TAWA_CACHE_DIR`, else `$XDG_CACHE_HOME/tawa-rs`, else
//! `$HOME/.cache/tawa-rs`. Deleting it is always safe.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use sha2::{Digest, Sha256};

/// Environment variable naming the cache folder.
pub const ENV_CACHE_DIR: &str = "TAWA_CACHE_DIR";

/// Bumped when the cached files' meaning changes.
const FORMAT: &str = "tawa-nvrtc-cache-v1";

/// The cache folder from the environment, if one can be named.
pub fn default_dir() -> Option<PathBuf> {
    let var = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    var(ENV_CACHE_DIR)
        .or_else(|| var("XDG_CACHE_HOME").map(|d| d.join("tawa-rs")))
        .or_else(|| var("HOME").map(|d| d.join(".cache").join("tawa-rs")))
}

/// The hex cache key of one compile.
pub fn key(src: &str, kernel_name: &str, args: &[String], nvrtc_version: (i32, i32)) -> String {
    let mut h = Sha256::new();
    let mut field = |bytes: &[u8]| {
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(bytes);
    };
    field(FORMAT.as_bytes());
    field(format!("nvrtc {}.{}", nvrtc_version.0, nvrtc_version.1).as_bytes());
    field(kernel_name.as_bytes());
    field(&(args.len() as u64).to_le_bytes());
    for a in args {
        field(a.as_bytes());
    }
    field(src.as_bytes());
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

pub(crate) struct Entry {
    pub ptx: String,
    pub cubin: Vec<u8>,
    pub log: String,
}

pub(crate) fn load(dir: &Path, key: &str) -> Option<Entry> {
    let read = |ext: &str| std::fs::read(dir.join(format!("{key}.{ext}"))).ok();
    let cubin = read("cubin")?;
    let ptx = String::from_utf8(read("ptx")?).ok()?;
    let log = String::from_utf8(read("log")?).ok()?;
    // An empty cubin is never a valid compile result: treat as corrupt.
    (!cubin.is_empty()).then_some(Entry { ptx, cubin, log })
}

pub(crate) fn store(
    dir: &Path,
    key: &str,
    ptx: &str,
    cubin: &[u8],
    log: &str,
) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    // The cubin last: a reader that finds it also finds the other two.
    write_atomic(dir, &format!("{key}.ptx"), ptx.as_bytes())?;
    write_atomic(dir, &format!("{key}.log"), log.as_bytes())?;
    write_atomic(dir, &format!("{key}.cubin"), cubin)
}

fn write_atomic(dir: &Path, name: &str, bytes: &[u8]) -> std::io::Result<()> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let tmp = dir.join(format!(
        ".{name}.{}.{}.tmp",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, dir.join(name)).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_depends_on_every_input() {
        let args = vec!["-std=c++17".to_string()];
        let base = key("src", "k", &args, (13, 0));
        assert_eq!(base.len(), 64);
        assert_eq!(base, key("src", "k", &args, (13, 0)));
        assert_ne!(base, key("src2", "k", &args, (13, 0)));
        assert_ne!(base, key("src", "k2", &args, (13, 0)));
        assert_ne!(base, key("src", "k", &[], (13, 0)));
        assert_ne!(base, key("src", "k", &args, (13, 1)));
        // Length prefixes: moving bytes between fields changes the key.
        assert_ne!(key("ab", "c", &[], (13, 0)), key("b", "ac", &[], (13, 0)));
    }

    #[test]
    fn store_then_load() {
        let dir = std::env::temp_dir().join(format!("tawa-cache-unit-{}", std::process::id()));
        assert!(load(&dir, "k").is_none());
        store(&dir, "k", "ptx", &[1, 2, 3], "log").unwrap();
        let e = load(&dir, "k").unwrap();
        assert_eq!(
            (e.ptx.as_str(), e.cubin.as_slice(), e.log.as_str()),
            ("ptx", &[1u8, 2, 3][..], "log")
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
