//! Simulated global memory: buffers of bytes at 64-bit addresses.
//!
//! The first buffer starts at `0x1000_0000`; every base is aligned to 256
//! bytes and buffers are at least 4096 bytes apart, so an out-of-bounds access
//! near a buffer never lands in another one. Elements are stored in their real
//! encoding (little-endian integers, IEEE/OCP float bits), so bitcasts and
//! mixed-type accesses behave as on a GPU.

use super::float;
use super::value::{float_to_int, wrap, Num};
use crate::types::ScalarType;

const FIRST_BASE: u64 = 0x1000_0000;
const ALIGN: u64 = 256;
const GAP: u64 = 4096;

/// A buffer allocated in [`Memory`]: `len` elements of `elem` at `base`.
#[derive(Clone, Copy, Debug)]
pub struct Buffer {
    pub base: u64,
    pub elem: ScalarType,
    pub len: usize,
}

#[derive(Clone, Debug)]
struct Region {
    base: u64,
    bytes: Vec<u8>,
}

/// Simulated global memory.
#[derive(Clone, Debug)]
pub struct Memory {
    /// Sorted by base (allocation only moves up).
    regions: Vec<Region>,
    next: u64,
}

impl Default for Memory {
    fn default() -> Self {
        Memory::new()
    }
}

impl Memory {
    pub fn new() -> Memory {
        Memory {
            regions: Vec::new(),
            next: FIRST_BASE,
        }
    }

    /// A zero-filled buffer of `len` elements.
    pub fn alloc(&mut self, elem: ScalarType, len: usize) -> Buffer {
        let size = len as u64 * elem.byte_size() as u64;
        let base = self.next;
        self.next = (base + size + GAP).div_ceil(ALIGN) * ALIGN;
        self.regions.push(Region {
            base,
            bytes: vec![0; size as usize],
        });
        Buffer { base, elem, len }
    }

    /// A buffer holding `data` converted to `elem` as a GPU cast would
    /// (floats round to nearest even, integers truncate toward zero).
    pub fn alloc_from_f64(&mut self, elem: ScalarType, data: &[f64]) -> Buffer {
        let buf = self.alloc(elem, data.len());
        self.write_f64(&buf, data);
        buf
    }

    /// Overwrites the first `data.len()` elements of `buf` (at most `len`).
    pub fn write_f64(&mut self, buf: &Buffer, data: &[f64]) {
        let size = buf.elem.byte_size() as u64;
        for (i, &x) in data.iter().take(buf.len).enumerate() {
            let n = if buf.elem.is_float() {
                Num::F(x)
            } else {
                Num::I(float_to_int(buf.elem, x))
            };
            self.store(buf.elem, buf.base + i as u64 * size, n)
                .expect("buffer of this memory");
        }
    }

    /// The elements of `buf` as f64 (integers converted exactly up to 2^53).
    pub fn read_f64(&self, buf: &Buffer) -> Vec<f64> {
        let size = buf.elem.byte_size() as u64;
        (0..buf.len)
            .map(|i| {
                match self
                    .load(buf.elem, buf.base + i as u64 * size)
                    .expect("buffer of this memory")
                {
                    Num::F(x) => x,
                    Num::I(x) if buf.elem == ScalarType::U64 => x as u64 as f64,
                    Num::I(x) => x as f64,
                }
            })
            .collect()
    }

    /// The raw bytes of `buf`. Panics if `buf` does not come from this memory.
    pub fn bytes(&self, buf: &Buffer) -> &[u8] {
        let r = self
            .regions
            .iter()
            .find(|r| r.base == buf.base)
            .expect("buffer of this memory");
        &r.bytes
    }

    /// The raw bytes of `buf`, writable. Panics if `buf` does not come from
    /// this memory.
    pub fn bytes_mut(&mut self, buf: &Buffer) -> &mut [u8] {
        let r = self
            .regions
            .iter_mut()
            .find(|r| r.base == buf.base)
            .expect("buffer of this memory");
        &mut r.bytes
    }

    /// The bytes `[addr, addr + size)` if they lie inside one buffer and
    /// `addr` is a multiple of `size`.
    fn locate(&self, addr: u64, size: u64) -> Result<(usize, usize), String> {
        // `%` rather than `is_multiple_of`: the workspace supports Rust 1.85.
        #[allow(clippy::manual_is_multiple_of)]
        if addr % size != 0 {
            return Err(format!(
                "misaligned access of {size} bytes at address {addr:#x}"
            ));
        }
        let i = self.regions.partition_point(|r| r.base <= addr);
        if i > 0 {
            let r = &self.regions[i - 1];
            let off = addr - r.base;
            if off + size <= r.bytes.len() as u64 {
                return Ok((i - 1, off as usize));
            }
        }
        Err(format!(
            "address {addr:#x} ({size} bytes) is outside every allocated buffer"
        ))
    }

    /// Reads one element of type `st` at `addr`.
    pub(crate) fn load(&self, st: ScalarType, addr: u64) -> Result<Num, String> {
        let size = st.byte_size() as u64;
        let (r, off) = self.locate(addr, size)?;
        let bytes = &self.regions[r].bytes[off..off + size as usize];
        let mut raw = [0u8; 8];
        raw[..bytes.len()].copy_from_slice(bytes);
        let bits = u64::from_le_bytes(raw);
        Ok(if st.is_float() {
            Num::F(float::decode(st, bits))
        } else if st == ScalarType::I1 {
            // A bool is a byte; any non-zero byte is true.
            Num::I((bits != 0) as i64)
        } else {
            // Sign- or zero-extend from the element width.
            let shift = 64 - st.bits();
            let x = if st.is_signed_int() {
                ((bits << shift) as i64) >> shift
            } else {
                bits as i64
            };
            Num::I(x)
        })
    }

    /// Writes one element of type `st` at `addr`; floats are rounded to `st`.
    pub(crate) fn store(&mut self, st: ScalarType, addr: u64, n: Num) -> Result<(), String> {
        let size = st.byte_size() as u64;
        let (r, off) = self.locate(addr, size)?;
        let bits = match n {
            Num::F(x) if st.is_float() => float::encode(st, x),
            Num::I(x) if st.is_float() => float::encode(st, x as f64),
            Num::F(x) => wrap(st, float_to_int(st, x)) as u64,
            Num::I(x) => wrap(st, x) as u64,
        };
        let bytes = &mut self.regions[r].bytes[off..off + size as usize];
        bytes.copy_from_slice(&bits.to_le_bytes()[..size as usize]);
        Ok(())
    }
}
