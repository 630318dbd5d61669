"""tawa._C.libtriton: tutorial 09's cuBLAS baseline, `c = a @ b.T`
through torch.matmul (a fake torch module here records the call)."""

import sys
import types
import unittest

from tawa._C.libtriton import nvidia


class T:
    def __init__(self, shape, dtype="f16", name=""):
        self.shape, self.dtype, self.name = tuple(shape), dtype, name

    def numel(self):
        n = 1
        for s in self.shape:
            n *= s
        return n

    def t(self):
        return T(self.shape[::-1], self.dtype, self.name + ".T")


class CublasLtTest(unittest.TestCase):

    def setUp(self):
        self.calls = []
        fake = types.ModuleType("torch")
        fake.matmul = lambda x, y, out: self.calls.append((x.name, y.name, out.name))
        self.saved = sys.modules.get("torch")
        sys.modules["torch"] = fake

    def tearDown(self):
        if self.saved is None:
            del sys.modules["torch"]
        else:
            sys.modules["torch"] = self.saved

    def test_matmul_writes_a_times_b_transposed_into_c(self):
        cublas = nvidia.cublas.CublasLt(T((32 * 1024 * 1024,), "u8"))
        cublas.matmul(T((64, 32), name="a"), T((48, 32), name="b"), T((64, 48), name="c"))
        self.assertEqual(self.calls, [("a", "b.T", "c")])

    def test_shapes_and_dtypes_are_checked(self):
        cublas = nvidia.cublas.CublasLt(T((16,), "u8"))
        for a, b, c in [
            (T((64, 32)), T((48, 16)), T((64, 48))),  # K differs
            (T((64, 32)), T((48, 32)), T((48, 64))),  # c is [N, M]
            (T((64, 32)), T((48, 32), "bf16"), T((64, 48))),
            (T((64, 32, 1)), T((48, 32)), T((64, 48))),
        ]:
            with self.assertRaises(ValueError):
                cublas.matmul(a, b, c)
        self.assertEqual(self.calls, [])
        with self.assertRaises(TypeError):
            nvidia.cublas.CublasLt(None)


if __name__ == "__main__":
    unittest.main()
