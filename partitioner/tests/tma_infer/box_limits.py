# signature: *fp16:16, *fp32:16, *fp8e4nv:16, *fp32:16, i32:16, i32:16, i32:16, i32:16, i32:16
# Box limits: rows of 4 fp16 (8 bytes) are too narrow; 512 rows are two
# boxes of 256; 64 fp32 columns (256 bytes) are two 128-byte boxes; 128 fp8
# columns are one; a 3-D tile at an offset made of three strided program
# ids needs 6 dimensions, one more than TMA has.
import triton
import triton.language as tl


@triton.jit
def boxes(h_ptr, f_ptr, q_ptr, out_ptr, s0, s1, s2, s3, s4):
    r = tl.arange(0, 512)
    c4 = tl.arange(0, 4)
    c64 = tl.arange(0, 64)
    c128 = tl.arange(0, 128)
    narrow = tl.load(h_ptr + r[:, None] * s0 + c4[None, :])
    tall = tl.load(h_ptr + r[:, None] * s0 + c64[None, :])
    wide = tl.load(f_ptr + c64[:, None] * s0 + c64[None, :])
    fp8 = tl.load(q_ptr + c64[:, None] * s0 + c128[None, :])
    i = tl.arange(0, 2)
    base = f_ptr + tl.program_id(0) * s0 + tl.program_id(1) * s1 + tl.program_id(2) * s2
    deep = tl.load(base + i[:, None, None] * s3 + i[None, :, None] * s4 + c64[None, None, :])
    total = tl.sum(narrow.to(tl.float32)) + tl.sum(tall.to(tl.float32)) + tl.sum(wide)
    total += tl.sum(fp8.to(tl.float32)) + tl.sum(deep)
    tl.store(out_ptr, total)
