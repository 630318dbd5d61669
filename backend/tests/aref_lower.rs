//! File tests of the warp-specialized lowering (`aref_lower` inside
//! `emit_cuda`) and of its TMA stores (`tma_store_lower`): every
//! `aref_lower/<name>.tir` and `tma_store_lower/<name>.tir` (tile IR,
//! warp-specialized as `tawa-rs --emit ws-ir` prints it or not) goes
//! through `generate_cuda`; the kernel (from its `__global__` line on) and
//! its launch contract (threads, shared memory, tensor maps) are compared
//! with the blessed `<name>.cu` beside it, or, when the backend refuses
//! the input, the error with `<name>.err`. Bless with
//! `UPDATE_EXPECT=1 cargo test -p tawa-backend --test aref_lower`.
//!
//! What to read in a blessed kernel: the partitions' `setmaxnreg`, the
//! producer's single thread waiting on `empty` with the opposite parity,
//! `expect_tx` of the slot's bytes and one `tw_tma_2d` per box; the
//! consumer waiting on `full`, wgmma descriptors into the slot, and lane 0
//! of each warp arriving on `empty` after the dot's `wait_group`. In the
//! TMA stores: thread 0 waiting for the staging buffer's reads, the
//! swizzled writes, `fence.proxy.async`, one `tw_tma_store_2d` per box of
//! the band and the commit; the final `wait_group 0`; a `desc_store` whose
//! tensor map would not encode (`plain_desc_store_unaligned`) stays
//! element-wise, and one over a base pointer loaded from memory
//! (`plain_desc_store_loaded_base`, no tensor map the host could build)
//! goes through the blocked layout, in 16-byte vectors where the
//! run-time check finds the base, stride, extent and offset aligned. In a kernel of CTA pairs (`cta_pair_multicast`): the
//! cluster barrier after the barriers' initialization and at the end,
//! the producer's wait acquiring at cluster scope, each tile copied in
//! halves (`tw_tma_2d_multicast`, the half-row map) where its predicate
//! holds and whole otherwise, and each release arriving on the peer's
//! `empty` too (or twice on its own).

use std::fmt::Write;
use std::fs;
use std::path::{Path, PathBuf};

use expect_test::expect_file;
use tawa_backend::{generate_cuda, CodegenOptions};
use tawa_ir::{parse_function, verify_function};

/// The inputs of `tests/<dir>`, at least `at_least` of them.
fn input_files(dir: &str, at_least: usize) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join(dir);
    let mut files: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "tir"))
        .collect();
    files.sort();
    assert!(
        files.len() >= at_least,
        "expected the file tests in {}",
        dir.display()
    );
    files
}

#[test]
fn aref_lower_file_tests() {
    file_tests("aref_lower", 3);
}

#[test]
fn tma_store_lower_file_tests() {
    file_tests("tma_store_lower", 3);
}

fn file_tests(dir: &str, at_least: usize) {
    for path in input_files(dir, at_least) {
        let name = path.file_stem().unwrap().to_str().unwrap().to_string();
        let text = fs::read_to_string(&path).unwrap();
        let func = parse_function(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        if let Err(errors) = verify_function(&func) {
            panic!("{name}: the input does not verify: {errors:?}");
        }
        match generate_cuda(&func, &CodegenOptions::default()) {
            Ok(kernel) => {
                let mut out = String::new();
                writeln!(
                    out,
                    "// threads {}, dynamic shared memory {} bytes",
                    kernel.num_threads, kernel.dyn_smem_bytes
                )
                .unwrap();
                if let Some(cluster) = kernel.cluster {
                    writeln!(out, "// thread-block clusters {cluster:?}").unwrap();
                }
                if kernel.device_map_workspace > 0 {
                    writeln!(
                        out,
                        "// workspace for tensor maps built on the device: {} bytes per program",
                        kernel.device_map_workspace
                    )
                    .unwrap();
                }
                for t in &kernel.tensor_maps {
                    if t.device_built {
                        writeln!(
                            out,
                            "// {}: {} template of a map built on the device, box {:?}, swizzle {}B, L2 promotion {}B",
                            t.name, t.elem, t.box_extents, t.swizzle_bytes, t.l2_promotion_bytes
                        )
                        .unwrap();
                        continue;
                    }
                    writeln!(
                        out,
                        "// {}: {} over parameter {}, extents {:?}, strides {:?} (elements), box {:?}, swizzle {}B, L2 promotion {}B",
                        t.name, t.elem, t.base, t.extents, t.strides, t.box_extents, t.swizzle_bytes, t.l2_promotion_bytes
                    )
                    .unwrap();
                }
                let start = kernel
                    .cuda
                    .find("extern \"C\" __global__")
                    .expect("a __global__ function");
                out.push_str(&kernel.cuda[start..]);
                assert!(
                    !path.with_extension("err").exists(),
                    "{name}: compiled, but an .err file expects a refusal"
                );
                expect_file![path.with_extension("cu")].assert_eq(&out);
            }
            Err(e) => {
                assert!(
                    !path.with_extension("cu").exists(),
                    "{name}: refused ({e}), but a .cu file expects a kernel"
                );
                expect_file![path.with_extension("err")].assert_eq(&format!("{e}\n"));
            }
        }
    }
}
