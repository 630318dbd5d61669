"""Launching from PyTorch tensors on a GPU (skipped without torch or a
GPU): results against PyTorch, pointer and scalar arguments, host tensor
descriptors (TMA tensor maps), the caller's stream, and errors as Python
exceptions. bench/python-session.sh runs these on the GPU machine."""

import unittest

try:
    import torch
    HAVE_GPU = torch.cuda.is_available()
except ImportError:
    HAVE_GPU = False

import tawa as triton
from tawa.tools.tensor_descriptor import TensorDescriptor

import kernels


@unittest.skipUnless(HAVE_GPU, "needs torch and a CUDA GPU")
class GpuTest(unittest.TestCase):

    def test_vector_add_against_torch(self):
        for n in (1, 1000, 4096, 98432):
            x = torch.rand(n, device="cuda", dtype=torch.float16)
            y = torch.rand(n, device="cuda", dtype=torch.float16)
            out = torch.empty_like(x)
            kernels.add_kernel[lambda m: (triton.cdiv(n, m["BLOCK_SIZE"]),)](x, y, out, n, BLOCK_SIZE=1024)
            torch.testing.assert_close(out, x + y * 2)

    def test_scalars_flags_and_strides(self):
        x = torch.arange(256, device="cuda", dtype=torch.float32)
        view = x[::2]  # stride 2, 128 elements
        kernels.scale_kernel[(1,)](view, 100, view.stride(0), 0.5, FLAG=True)
        expect = torch.arange(256, device="cuda", dtype=torch.float32)
        expect[0:200:2] *= 0.5
        torch.testing.assert_close(x, expect)

    def test_host_tensor_descriptors(self):
        a = torch.randn(256, 128, device="cuda", dtype=torch.float16)
        b = torch.empty_like(a)
        da = TensorDescriptor.from_tensor(a, [64, 64])
        db = TensorDescriptor.from_tensor(b, [64, 64])
        k = kernels.desc_copy_kernel[(4, 2)](da, db, BLOCK_M=64, BLOCK_N=64)
        torch.cuda.synchronize()
        torch.testing.assert_close(b, a)
        self.assertEqual(k.kernel.params[0][0], "in_desc_base")

    def test_launches_go_to_the_current_stream(self):
        n = 1 << 22
        s = torch.cuda.Stream()
        x = torch.rand(n, device="cuda")
        out = torch.zeros_like(x)
        with torch.cuda.stream(s):
            # Work on `s` only: the default stream never waits for it.
            y = x * 3
            kernels.add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK_SIZE=1024)
            z = out + 1
        s.synchronize()
        torch.testing.assert_close(z, x + (x * 3) * 2 + 1)

    def test_errors_are_python_exceptions(self):
        x = torch.rand(16, device="cuda")
        with self.assertRaisesRegex(ValueError, "CUDA tensors"):
            kernels.add_kernel[(1,)](x.cpu(), x, x, 16, BLOCK_SIZE=16)
        # 20 fp16 a row: a 40-byte stride, which TMA cannot step by.
        a = torch.randn(64, 20, device="cuda", dtype=torch.float16)
        with self.assertRaisesRegex(ValueError, "not a multiple of 16"):
            TensorDescriptor(a, [64, 20], [20, 1], [64, 8])

    def test_driver_shims(self):
        d = triton.runtime.driver.active
        self.assertEqual(d.get_current_target().backend, "cuda")
        props = d.utils.get_device_properties(d.get_active_torch_device().index)
        self.assertEqual(props["multiprocessor_count"], torch.cuda.get_device_properties(0).multi_processor_count)
        self.assertGreater(props["max_shared_mem"], 48 * 1024)
        ms = triton.testing.do_bench(lambda: torch.ones(1 << 20, device="cuda"))
        self.assertGreater(ms, 0)


if __name__ == "__main__":
    unittest.main()
