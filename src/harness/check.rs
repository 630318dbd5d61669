//! Host side of every run, on the interpreter or the GPU: tensors to bytes
//! and back, and the checks after a launch — every output element against
//! its expectation, every input byte unchanged, no byte of an output's
//! storage outside its view (the gaps of strided layouts) written.

use std::collections::BTreeMap;

use tawa_ir::interp::{float, value::float_to_int};
use tawa_ir::ScalarType;
use triton_examples::reference::Outputs;
use triton_examples::{check_close, HostTensor, Tolerance};

/// Elements above which encoding and decoding split the work over threads
/// (large GPU cases have tensors of 2^26 elements).
const PARALLEL_ABOVE: usize = 1 << 20;

/// Runs `f` over matching chunks of `a` (chunked by `a_chunk`) and `b`
/// (chunked by `b_chunk`), in parallel when large.
fn chunked<A: Sync, B: Send>(
    a: &[A],
    b: &mut [B],
    a_chunk: usize,
    b_chunk: usize,
    f: impl Fn(&[A], &mut [B]) + Sync,
) {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let elements = a.len() / a_chunk.max(1);
    if elements <= PARALLEL_ABOVE || threads == 1 {
        f(a, b);
        return;
    }
    let per = elements.div_ceil(threads);
    std::thread::scope(|s| {
        for (x, y) in a.chunks(per * a_chunk).zip(b.chunks_mut(per * b_chunk)) {
            let f = &f;
            s.spawn(move || f(x, y));
        }
    });
}

/// `values` in `dtype`'s storage encoding (little-endian integers, IEEE/OCP
/// float bits), as the interpreter's memory and the GPU hold them. Floats
/// round to nearest even; integers truncate.
pub fn encode(dtype: ScalarType, values: &[f64]) -> Vec<u8> {
    let size = dtype.byte_size() as usize;
    let mut out = vec![0u8; values.len() * size];
    chunked(values, &mut out, 1, size, |vals, bytes| {
        for (x, slot) in vals.iter().zip(bytes.chunks_exact_mut(size)) {
            let bits = if dtype.is_float() {
                float::encode(dtype, *x)
            } else {
                float_to_int(dtype, *x) as u64
            };
            slot.copy_from_slice(&bits.to_le_bytes()[..size]);
        }
    });
    out
}

/// The inverse of [`encode`]: one f64 per element (integers exact up to 2^53).
pub fn decode(dtype: ScalarType, bytes: &[u8]) -> Vec<f64> {
    let size = dtype.byte_size() as usize;
    let mut out = vec![0f64; bytes.len() / size];
    chunked(bytes, &mut out, size, 1, |bytes, vals| {
        for (slot, x) in bytes.chunks_exact(size).zip(vals.iter_mut()) {
            let mut raw = [0u8; 8];
            raw[..size].copy_from_slice(slot);
            let bits = u64::from_le_bytes(raw);
            *x = if dtype.is_float() {
                float::decode(dtype, bits)
            } else if dtype == ScalarType::I1 {
                (bits & 1) as f64
            } else if dtype.is_signed_int() {
                // Sign-extend from the element's width.
                let shift = 64 - 8 * size as u32;
                (((bits << shift) as i64) >> shift) as f64
            } else {
                bits as f64
            };
        }
    });
    out
}

/// One tensor's storage before and after a launch.
pub struct Written<'a> {
    pub tensor: &'a HostTensor,
    pub before: &'a [u8],
    pub after: &'a [u8],
}

/// The checks after a launch: each output's logical elements against
/// `expected` (within `tol`), nothing written outside an output's view,
/// every other buffer (inputs, pointer arrays) byte for byte unchanged.
/// `expected_from` names where the expectations come from, for messages.
/// Returns each output with its largest absolute error, or every problem
/// found, one per line.
pub fn check_written(
    buffers: &[Written],
    expected: &Outputs,
    tol: Tolerance,
    expected_from: &str,
) -> Result<Vec<(String, f64)>, String> {
    let mut checked = Vec::new();
    let mut problems = Vec::new();
    for w in buffers {
        let t = w.tensor;
        if w.before.len() != w.after.len() {
            problems.push(format!(
                "`{}`: {} bytes before the launch, {} after",
                t.name,
                w.before.len(),
                w.after.len()
            ));
            continue;
        }
        if t.output {
            let Some(want) = expected.get(&t.name) else {
                problems.push(format!(
                    "{expected_from} gives no values for output `{}`",
                    t.name
                ));
                continue;
            };
            let got = t.gather(&decode(t.dtype, w.after));
            match check_close(&t.name, &got, want, tol) {
                Ok(err) => checked.push((t.name.clone(), err)),
                Err(m) => problems.push(m.to_string().trim_end().to_string()),
            }
            if let Some(msg) = written_outside_view(t, w.before, w.after) {
                problems.push(msg);
            }
        } else if let Some(i) = first_changed_element(t, w.before, w.after) {
            problems.push(format!(
                "input `{}` was written (storage element {i} changed)",
                t.name
            ));
        }
    }
    if checked.is_empty() && problems.is_empty() {
        problems.push("the case has no output tensor: nothing was checked".into());
    }
    if problems.is_empty() {
        Ok(checked)
    } else {
        Err(problems.join("\n"))
    }
}

/// First storage element whose bytes differ.
pub fn first_changed_element(t: &HostTensor, before: &[u8], after: &[u8]) -> Option<usize> {
    let size = t.dtype.byte_size() as usize;
    if before == after {
        return None;
    }
    before
        .chunks(size)
        .zip(after.chunks(size))
        .position(|(b, a)| b != a)
}

/// Storage elements of an output outside its logical view (gaps of strided
/// layouts) that the kernel changed, as a message.
pub fn written_outside_view(t: &HostTensor, before: &[u8], after: &[u8]) -> Option<String> {
    let size = t.dtype.byte_size() as usize;
    let elements = before.len().min(after.len()) / size;
    if t.numel() == elements {
        // As many distinct view elements as storage elements: the view
        // covers the whole storage, there is no outside.
        return None;
    }
    let mut inside = vec![false; elements];
    for o in t.offsets() {
        if let Some(slot) = inside.get_mut(o) {
            *slot = true;
        }
    }
    let changed: Vec<usize> = (0..elements)
        .filter(|&i| {
            !inside[i] && before[i * size..(i + 1) * size] != after[i * size..(i + 1) * size]
        })
        .collect();
    if changed.is_empty() {
        None
    } else {
        Some(format!(
            "output `{}`: {} storage elements outside the tensor's view were written (first: {:?})",
            t.name,
            changed.len(),
            &changed[..changed.len().min(5)]
        ))
    }
}

/// The logical values of each output tensor of `buffers` (by name), e.g.
/// the interpreter's results as expectations for the GPU.
pub fn outputs_of(tensors: &[HostTensor], storage: &BTreeMap<String, Vec<u8>>) -> Outputs {
    tensors
        .iter()
        .filter(|t| t.output)
        .filter_map(|t| {
            storage
                .get(&t.name)
                .map(|bytes| (t.name.clone(), t.gather(&decode(t.dtype, bytes))))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tensor(
        dtype: ScalarType,
        shape: Vec<usize>,
        strides: Vec<usize>,
        output: bool,
    ) -> HostTensor {
        let span = 1 + shape
            .iter()
            .zip(&strides)
            .map(|(n, s)| (n - 1) * s)
            .sum::<usize>();
        HostTensor {
            name: "t".into(),
            dtype,
            shape,
            strides,
            data: vec![0.0; span],
            output,
            pointers_to: None,
        }
    }

    #[test]
    fn encode_decode_round_trip_every_dtype() {
        let values = [0.0, 1.0, -2.0, 3.5, -128.0, 100.0];
        for dtype in [
            ScalarType::F16,
            ScalarType::BF16,
            ScalarType::F32,
            ScalarType::F64,
            ScalarType::I8,
            ScalarType::I16,
            ScalarType::I32,
            ScalarType::I64,
            ScalarType::U8,
            ScalarType::U32,
        ] {
            // Integers truncate and saturate as the interpreter's stores do.
            let want: Vec<f64> = values
                .iter()
                .map(|v| {
                    if dtype.is_float() {
                        *v
                    } else {
                        float_to_int(dtype, *v) as f64
                    }
                })
                .collect();
            let bytes = encode(dtype, &values);
            assert_eq!(bytes.len(), values.len() * dtype.byte_size() as usize);
            assert_eq!(decode(dtype, &bytes), want, "{dtype}");
        }
        // fp16 bits are the IEEE ones, little-endian.
        assert_eq!(encode(ScalarType::F16, &[1.0]), vec![0x00, 0x3c]);
        // The 0xFF poison pattern reads back as NaN for floats.
        assert!(decode(ScalarType::F16, &[0xff, 0xff])[0].is_nan());
        assert!(decode(ScalarType::F32, &[0xff; 4])[0].is_nan());
    }

    #[test]
    fn large_buffers_encode_in_parallel_identically() {
        let values: Vec<f64> = (0..(PARALLEL_ABOVE + 12345))
            .map(|i| i as f64 * 0.25)
            .collect();
        let bytes = encode(ScalarType::F32, &values);
        let serial: Vec<u8> = values
            .iter()
            .flat_map(|v| (*v as f32).to_le_bytes())
            .collect();
        assert_eq!(bytes, serial);
        assert_eq!(decode(ScalarType::F32, &bytes), values);
    }

    #[test]
    fn finds_writes_to_inputs_and_outside_views() {
        let input = tensor(ScalarType::F32, vec![4], vec![1], false);
        let before = encode(ScalarType::F32, &[1.0, 2.0, 3.0, 4.0]);
        let mut after = before.clone();
        assert_eq!(first_changed_element(&input, &before, &after), None);
        after[9] ^= 1;
        assert_eq!(first_changed_element(&input, &before, &after), Some(2));

        // A stride-2 output: storage elements 1, 3, 5 are gaps.
        let out = tensor(ScalarType::F32, vec![4], vec![2], true);
        let before = vec![0xffu8; 7 * 4];
        let mut after = before.clone();
        after[0..4].copy_from_slice(&1f32.to_le_bytes());
        assert_eq!(written_outside_view(&out, &before, &after), None);
        after[12..16].copy_from_slice(&1f32.to_le_bytes());
        let msg = written_outside_view(&out, &before, &after).unwrap();
        assert!(msg.contains("first: [3]"), "{msg}");
    }

    #[test]
    fn check_written_reports_values_inputs_and_missing_outputs() {
        let mut out = tensor(ScalarType::F32, vec![2], vec![1], true);
        out.name = "out".into();
        let mut inp = tensor(ScalarType::F32, vec![2], vec![1], false);
        inp.name = "inp".into();
        let poison = vec![0xffu8; 8];
        let good = encode(ScalarType::F32, &[1.0, 2.0]);
        let expected: Outputs = [("out".to_string(), vec![1.0, 2.0])].into();
        let tol = Tolerance {
            atol: 0.0,
            rtol: 0.0,
        };
        let ok = check_written(
            &[
                Written {
                    tensor: &out,
                    before: &poison,
                    after: &good,
                },
                Written {
                    tensor: &inp,
                    before: &good,
                    after: &good,
                },
            ],
            &expected,
            tol,
            "the test",
        )
        .unwrap();
        assert_eq!(ok, vec![("out".to_string(), 0.0)]);
        // The output never written: NaN where 1.0 and 2.0 were expected;
        // the input overwritten.
        let err = check_written(
            &[
                Written {
                    tensor: &out,
                    before: &poison,
                    after: &poison,
                },
                Written {
                    tensor: &inp,
                    before: &good,
                    after: &poison,
                },
            ],
            &expected,
            tol,
            "the test",
        )
        .unwrap_err();
        assert!(err.contains("2 of 2 elements differ"), "{err}");
        assert!(err.contains("input `inp` was written"), "{err}");
        let err = check_written(&[], &expected, tol, "the test").unwrap_err();
        assert!(err.contains("nothing was checked"), "{err}");
    }
}
