# signature: *fp16:16, *fp32:16, i32:16, 64, 64
# Nothing to specialize: the loop's loads are TMA but feed no dot (a row
# sum), so the kernel stays plain.
import triton
import triton.language as tl


@triton.jit
def row_sum(x_ptr, out_ptr, K, BM: tl.constexpr, BK: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    ks = tl.arange(0, BK)
    acc = tl.zeros((BM,), dtype=tl.float32)
    for k in range(0, K, BK):
        x = tl.load(x_ptr + rows[:, None] * K + (k + ks)[None, :])
        acc += tl.sum(x.to(tl.float32), axis=1)
    tl.store(out_ptr + rows, acc)
