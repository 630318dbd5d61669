# signature: *fp16:16, *fp16:16, *i8:16, *fp32:16, i32:16, i32:16, i32:16, i32:16, i32:16, i64
# Block pointers: NaN padding (fp16: TMA's NaN fill; i8: no such fill), a
# boundary check on one dimension only (the other is read as the kernel
# addresses it), a base offset by a strided program id (an extra dimension
# of box 1). A descriptor made in the kernel with a stride argument as its
# innermost stride is not TMA.
import triton
import triton.language as tl


@triton.jit
def block_ptrs(a_ptr, b_ptr, q_ptr, out_ptr, M, K, stride_m, stride_z, stride_q, s1):
    pid = tl.program_id(0)
    nan = tl.make_block_ptr(base=a_ptr, shape=(M, K), strides=(stride_m, 1),
                            offsets=(pid * 64, 0), block_shape=(64, 64), order=(1, 0))
    x = tl.load(nan, boundary_check=(0, 1), padding_option="nan")
    rows_only = tl.make_block_ptr(base=a_ptr, shape=(M, K), strides=(stride_m, 1),
                                  offsets=(pid * 64, 0), block_shape=(64, 64), order=(1, 0))
    y = tl.load(rows_only, boundary_check=(0,), padding_option="zero")
    batched = tl.make_block_ptr(base=b_ptr + tl.program_id(1) * stride_z, shape=(M, K),
                                strides=(stride_m, 1), offsets=(pid * 64, 0),
                                block_shape=(64, 64), order=(1, 0))
    z = tl.load(batched, boundary_check=(0, 1))
    bytes_nan = tl.make_block_ptr(base=q_ptr, shape=(M, K), strides=(stride_q, 1),
                                  offsets=(pid * 64, 0), block_shape=(64, 64), order=(1, 0))
    w = tl.load(bytes_nan, boundary_check=(0, 1), padding_option="nan")
    desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[stride_m, s1],
                                     block_shape=[64, 64])
    v = desc.load([pid * 64, 0])
    total = tl.sum(x.to(tl.float32)) + tl.sum(y.to(tl.float32)) + tl.sum(z.to(tl.float32))
    total += tl.sum(w.to(tl.float32)) + tl.sum(v.to(tl.float32))
    tl.store(out_ptr, total)
