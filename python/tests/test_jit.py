"""The JIT's host side: specialization keys, grids, caches, errors.

No torch and no GPU: tensors are `FakeTensor`s, the driver records
launches. Compiling goes through the real extension (frontend to NVRTC),
so the tools of .ci/install-cuda-tools.sh must be there.
"""

import os
import tempfile
import unittest

import tawa
import tawa as triton
import tawa.language as tl
from tawa import _jit
from tawa.runtime.driver import driver
from tawa.tools.tensor_descriptor import TensorDescriptor

import kernels
from fakes import FakeTensor, RecordingDriver


class DriverTest(unittest.TestCase):
    """Each test gets a recording driver and an empty on-disk cache."""

    def setUp(self):
        self.driver = RecordingDriver()
        driver.set_active(self.driver)
        self.tmp = tempfile.TemporaryDirectory()
        self.old_cache = os.environ.get("TAWA_PY_CACHE_DIR")
        os.environ["TAWA_PY_CACHE_DIR"] = self.tmp.name
        for k in (kernels.add_kernel, kernels.scale_kernel, kernels.desc_copy_kernel, kernels.broken_kernel):
            k.cache.clear()

    def tearDown(self):
        driver.reset_active()
        if self.old_cache is None:
            del os.environ["TAWA_PY_CACHE_DIR"]
        else:
            os.environ["TAWA_PY_CACHE_DIR"] = self.old_cache
        self.tmp.cleanup()

    def signature(self, fn, *args, **kwargs):
        _, key, values, _ = fn._bind(args, kwargs)
        return fn.signature_of(key), values


class SpecializationTest(DriverTest):

    def test_pointers_dtypes_and_alignment(self):
        x, y, o = FakeTensor(), FakeTensor(dtype="torch.bfloat16"), FakeTensor(ptr=0x7F0000000002)
        sig, values = self.signature(kernels.add_kernel, x, y, o, 1000, BLOCK_SIZE=256)
        self.assertEqual(sig, "*fp16:16, *bf16:16, *fp16, i32, 256")
        self.assertEqual(values, (x.data_ptr(), y.data_ptr(), o.data_ptr(), 1000))

    def test_integers_divisibility_one_and_width(self):
        x = FakeTensor()
        cases = {
            1: ("i32:1", ()),
            32: ("i32:16", (32,)),
            33: ("i32", (33,)),
            -16: ("i32:16", (-16,)),
            2**40: ("i64:16", (2**40,)),
            2**63 + 1: ("u64", (2**63 + 1,)),
        }
        for n, (entry, vals) in cases.items():
            sig, values = self.signature(kernels.add_kernel, x, x, x, n, BLOCK_SIZE=64)
            self.assertEqual(sig.split(", ")[3], entry, n)
            self.assertEqual(values[3:], vals, n)
        with self.assertRaisesRegex(ValueError, "does not fit 64 bits"):
            self.signature(kernels.add_kernel, x, x, x, 2**64, BLOCK_SIZE=64)

    def test_do_not_specialize_floats_bools_and_constexpr_defaults(self):
        x = FakeTensor(dtype="torch.float32")
        sig, values = self.signature(kernels.scale_kernel, x, 1, 16, 0.5)
        # `n` is in do_not_specialize: no `:1`, no `:16`; `stride` = 16 is.
        self.assertEqual(sig, "*fp32:16, i32, i32:16, fp32, False, tl.float32")
        self.assertEqual(values, (x.data_ptr(), 1, 16, 0.5))
        sig, _ = self.signature(kernels.scale_kernel, x, 7, True, 2.0, FLAG=True, DTYPE=tl.float16)
        self.assertEqual(sig, "*fp32:16, i32, i1, fp32, True, tl.float16")

    def test_constexpr_values_are_keys_not_launch_values(self):
        x = FakeTensor()
        _, k1, v1, _ = kernels.add_kernel._bind((x, x, x, 100), {"BLOCK_SIZE": 64})
        _, k2, v2, _ = kernels.add_kernel._bind((x, x, x, 100), {"BLOCK_SIZE": 128})
        self.assertNotEqual(k1, k2)
        self.assertEqual(v1, v2)
        # Launch options are part of the key.
        _, k3, _, _ = kernels.add_kernel._bind((x, x, x, 100), {"BLOCK_SIZE": 64, "num_warps": 8})
        self.assertNotEqual(k1, k3)

    def test_tensor_descriptor(self):
        a = FakeTensor(shape=(256, 128))
        d = TensorDescriptor.from_tensor(a, [64, 32])
        sig, values = self.signature(kernels.desc_copy_kernel, d, d, BLOCK_M=64, BLOCK_N=32)
        self.assertEqual(sig, "tensordesc<fp16[64, 32]>, tensordesc<fp16[64, 32]>, 64, 32")
        self.assertEqual(values[:5], (a.data_ptr(), 256, 128, 128, 1))
        names = [n for p, k in zip(kernels.desc_copy_kernel.params, kernels.desc_copy_kernel._bind((d, d), {"BLOCK_M": 64, "BLOCK_N": 32})[1]) for n, _ in _jit.launch_names(p.name, k)]
        self.assertEqual(names[:5], ["in_desc_base", "in_desc_shape0", "in_desc_shape1", "in_desc_stride0", "in_desc_stride1"])
        with self.assertRaisesRegex(ValueError, "not a multiple of 16"):
            TensorDescriptor(a, [256, 127], [127, 1], [64, 32])
        with self.assertRaisesRegex(ValueError, "contiguous"):
            TensorDescriptor(a, [256, 128], [1, 256], [64, 32])


class BinderTest(unittest.TestCase):
    """`_bind` goes through a binder generated for the kernel's
    parameters; `_bind_checked`, one parameter at a time, is what it must
    equal, call for call."""

    def same(self, fn, *args, **kwargs):
        fast = fn._bind(args, kwargs)
        self.assertIsNot(fn._fast_bind, False)
        self.assertEqual(fast, fn._bind_checked(args, kwargs))
        # Names bound to the very objects given (the grid sees them).
        checked = fn._bind_checked(args, kwargs)
        for name, v in fast[0].items():
            self.assertIs(v, checked[0][name])
        return fast

    def test_calls_bind_as_the_checked_path_does(self):
        x, y = FakeTensor(), FakeTensor(dtype="torch.bfloat16", ptr=0x7F0000000002)
        k = kernels.add_kernel
        for args, kwargs in [
            ((x, y, x, 1000), dict(BLOCK_SIZE=256)),
            ((x, y, x, 1), dict(BLOCK_SIZE=True)),
            ((x, y, x, 2**40), dict(BLOCK_SIZE="s")),
            ((x, y, x, 1000, 64), {}),
            ((x,), dict(y_ptr=y, out_ptr=x, n_elements=16, BLOCK_SIZE=tl.constexpr(8))),
            ((x, y, x, 7), dict(BLOCK_SIZE=64, num_warps=8, num_stages=2)),
            ((x, y, x, 7.5), dict(BLOCK_SIZE=None, debug=True)),
        ]:
            self.same(k, *args, **kwargs)
        # The binder's written-out integer cases, at and past their edges.
        for n in (0, 1, 16, -16, 17, 2**31 - 1, -(2**31), 2**31, -(2**31) - 1, True, False):
            key = self.same(k, x, y, x, n, BLOCK_SIZE=64)[1]
            if type(n) is int and -(2**31) <= n < 2**31 and n != 1:
                self.assertEqual(key[3], ("i", "i32", n % 16 == 0))
        # Defaults, do_not_specialize, dtype constexprs.
        self.same(kernels.scale_kernel, x, 32, 3, 0.5)
        self.same(kernels.scale_kernel, x, 32, 3, 0.5, True, tl.float16)
        # Tensor descriptors: their shape and strides are launch values.
        d = TensorDescriptor(FakeTensor(shape=(64, 32)), [64, 32], [32, 1], [16, 16])
        self.same(kernels.desc_copy_kernel, d, d, 16, 16)

    def test_wrong_calls_get_the_checked_paths_errors(self):
        x = FakeTensor()
        k = kernels.add_kernel
        for args, kwargs, error in [
            ((x, x, x, 10), dict(BLOCK=64), "unexpected keyword argument `BLOCK`"),
            ((x, x, x, 10), {}, "missing argument `BLOCK_SIZE`"),
            ((x, x, x, 10, 64, 1), {}, "takes 5 arguments, 6 given"),
            ((x, x, x, 10), dict(x_ptr=x, BLOCK_SIZE=64), "multiple values for argument `x_ptr`"),
            ((x, x, x, [1]), dict(BLOCK_SIZE=64), "`n_elements` of type list"),
        ]:
            with self.assertRaisesRegex(TypeError, error):
                k._bind(args, kwargs)

    def test_a_kernel_without_parameters(self):
        @triton.jit
        def k():
            pass

        self.assertEqual(self.same(k)[1], ((4, 3),))
        self.assertEqual(self.same(k, num_warps=8)[1], ((8, 3),))

    def test_a_parameter_named_like_an_option_keeps_the_checked_path(self):
        @triton.jit
        def k(x_ptr, num_warps):
            pass

        x = FakeTensor()
        self.assertEqual(k._bind((x, 3), {}), k._bind_checked((x, 3), {}))
        self.assertIs(k._fast_bind, False)

    def test_constexpr_keys_of_common_values_keep_their_types(self):
        # 1 and True are equal in Python, not as constexprs.
        self.assertNotEqual(_jit.constexpr_key(1), _jit.constexpr_key(True))
        self.assertEqual(_jit.constexpr_key(None), ("NoneType", None))
        self.assertEqual(_jit.constexpr_key(tl.constexpr(4)), ("int", 4))


class GridTest(DriverTest):

    def test_tuples_ints_and_callables(self):
        self.assertEqual(_jit.evaluate_grid((4,), {}), (4, 1, 1))
        self.assertEqual(_jit.evaluate_grid(7, {}), (7, 1, 1))
        self.assertEqual(_jit.evaluate_grid((2, 3, 4), {}), (2, 3, 4))
        self.assertEqual(_jit.evaluate_grid((2, 3), {}), (2, 3, 1))
        self.assertEqual(_jit.evaluate_grid((True, 3), {}), (1, 3, 1))
        self.assertEqual(_jit.evaluate_grid((2, 0, 65535), {}), (2, 0, 65535))
        meta = {"n": 1000, "BLOCK": 256}
        self.assertEqual(_jit.evaluate_grid(lambda m: (triton.cdiv(m["n"], m["BLOCK"]),), meta), (4, 1, 1))

    def test_bad_grids(self):
        with self.assertRaisesRegex(ValueError, "1 to 3 dimensions"):
            _jit.evaluate_grid((1, 1, 1, 1), {})
        with self.assertRaisesRegex(ValueError, "grid dimension 1 is 70000"):
            _jit.evaluate_grid((1, 70000), {})
        with self.assertRaisesRegex(ValueError, "grid dimension 0 is -1"):
            _jit.evaluate_grid((-1,), {})
        with self.assertRaisesRegex(ValueError, "grid dimension 2 is 65536"):
            _jit.evaluate_grid((1, 1, 65536), {})
        with self.assertRaisesRegex(ValueError, "grid dimension 0 is 2147483648"):
            _jit.evaluate_grid((2**31, 1), {})
        with self.assertRaisesRegex(TypeError, "tuple of 1 to 3 ints"):
            _jit.evaluate_grid("abc", {})

    def test_grid_sees_arguments_constexprs_and_defaults(self):
        x = FakeTensor(dtype="torch.float32")
        seen = {}

        def grid(meta):
            seen.update(meta)
            return (1,)

        kernels.scale_kernel[grid](x, 10, 1, 0.5)
        self.assertEqual(seen["n"], 10)
        self.assertIs(seen["FLAG"], False)
        self.assertIs(seen["DTYPE"], tl.float32)

    def test_launch_values_and_empty_grids(self):
        x, y, o = FakeTensor(), FakeTensor(), FakeTensor()
        kernels.add_kernel[lambda m: (triton.cdiv(m["n_elements"], m["BLOCK_SIZE"]),)](x, y, o, 1000, BLOCK_SIZE=256)
        (kernel, grid, values, device), = self.driver.launches
        self.assertEqual(grid, (4, 1, 1))
        self.assertEqual(values, (x.data_ptr(), y.data_ptr(), o.data_ptr(), 1000))
        self.assertEqual(kernel.name, "add_kernel")
        self.assertEqual([n for n, _ in kernel.params], ["x_ptr", "y_ptr", "out_ptr", "n_elements"])
        # A grid with a zero dimension launches nothing, as in Triton.
        kernels.add_kernel[(0,)](x, y, o, 1000, BLOCK_SIZE=256)
        self.assertEqual(len(self.driver.launches), 1)


class CacheTest(DriverTest):

    def test_in_memory_cache_per_specialization(self):
        x = FakeTensor()
        k1 = kernels.add_kernel[(1,)](x, x, x, 100, BLOCK_SIZE=64)
        k2 = kernels.add_kernel[(1,)](x, x, x, 200, BLOCK_SIZE=64)
        self.assertIs(k1, k2)
        k3 = kernels.add_kernel[(1,)](x, x, x, 208, BLOCK_SIZE=64)  # divisible by 16
        self.assertIsNot(k1, k3)
        self.assertEqual(len(kernels.add_kernel.cache), 2)
        self.assertIn("tw_", k1.asm["cuda"])
        self.assertIn(".entry", k1.asm["ptx"])

    def test_on_disk_cache_survives_a_new_process(self):
        x = FakeTensor()
        k1 = kernels.add_kernel.warmup(x, x, x, 100, BLOCK_SIZE=64, grid=(1,))
        files = [os.path.join(r, f) for r, _, fs in os.walk(self.tmp.name) for f in fs]
        self.assertEqual(len(files), 1, files)
        # A fresh in-memory cache (as in a new process) with the compiler
        # unavailable: the kernel comes from disk.
        kernels.add_kernel.cache.clear()
        from tawa import _tawa
        real = _tawa.compile

        def refuse(*a, **k):
            raise AssertionError("compiled although cached on disk")

        _tawa.compile = refuse
        try:
            k2 = kernels.add_kernel.warmup(x, x, x, 100, BLOCK_SIZE=64, grid=(1,))
            self.assertEqual(k2.asm["cuda"], k1.asm["cuda"])
            self.assertEqual(k2.kernel.params, k1.kernel.params)
            self.assertEqual(k2.kernel.cubin, k1.kernel.cubin)
            # Other options are another entry.
            with self.assertRaises(AssertionError):
                kernels.add_kernel.warmup(x, x, x, 100, BLOCK_SIZE=64, num_warps=8, grid=(1,))
        finally:
            _tawa.compile = real

    def test_corrupt_entries_are_recompiled(self):
        x = FakeTensor()
        kernels.add_kernel.warmup(x, x, x, 100, BLOCK_SIZE=64, grid=(1,))
        path = [os.path.join(r, f) for r, _, fs in os.walk(self.tmp.name) for f in fs][0]
        with open(path, "wb") as f:
            f.write(b"garbage")
        kernels.add_kernel.cache.clear()
        k = kernels.add_kernel.warmup(x, x, x, 100, BLOCK_SIZE=64, grid=(1,))
        self.assertEqual(k.name, "add_kernel")
        with open(path, "rb") as f:
            self.assertNotEqual(f.read(), b"garbage")

    def test_cache_key_has_source_specialization_options_and_compiler(self):
        req = {"source": "a", "kernel": "k", "signature": "i32", "args": [], "num_warps": 4, "num_stages": 3,
               "warp_specialize": True, "flags": ""}
        p = kernels.add_kernel._disk_path(req)
        for change in ({"source": "b"}, {"signature": "i64"}, {"num_warps": 8}, {"warp_specialize": False},
                       {"flags": "--mma-depth 1"}):
            self.assertNotEqual(p, kernels.add_kernel._disk_path(dict(req, **change)), change)
        self.assertIn("+nvrtc", _jit.compiler_version())

    def test_serialization_round_trip(self):
        x = FakeTensor()
        a = FakeTensor(shape=(256, 128))
        d = TensorDescriptor.from_tensor(a, [64, 64])
        from tawa import _tawa
        for k in (kernels.add_kernel.warmup(x, x, x, 100, BLOCK_SIZE=64, grid=(1,)),
                  kernels.desc_copy_kernel.warmup(d, d, BLOCK_M=64, BLOCK_N=64, grid=(1,))):
            back = _tawa.Kernel.deserialize(k.kernel.serialize())
            for attr in ("name", "symbol", "cuda", "ptx", "params", "num_threads", "dyn_smem",
                         "num_tensor_maps", "warp_specialized", "cubin"):
                self.assertEqual(getattr(back, attr), getattr(k.kernel, attr), attr)
        with self.assertRaisesRegex(ValueError, "corrupt cache entry"):
            _tawa.Kernel.deserialize(b"{}\0")


class WarpSpecializedTest(DriverTest):

    def test_a_matmul_is_warp_specialized_with_tensor_maps(self):
        # Row-major fp16 operands whose strides are multiples of 16 (and
        # unit inner strides, specialized to 1): TMA copies, a producer
        # warpgroup, and (one-axis grid) a persistent tile loop whose grid
        # parameter the launcher fills.
        M, N, K = 512, 256, 128
        a = FakeTensor(shape=(M, K))
        b = FakeTensor(shape=(K, N))
        c = FakeTensor(shape=(M, N))
        k = kernels.matmul_kernel.warmup(a, b, c, M, N, K, K, 1, N, 1, N, 1, BLOCK_M=128, BLOCK_N=128,
                                         BLOCK_K=64, num_warps=8, num_stages=3, grid=(1,))
        self.assertTrue(k.kernel.warp_specialized)
        self.assertGreater(k.kernel.num_tensor_maps, 0)
        self.assertIn("wgmma.mma_async", k.asm["ptx"])
        names = [n for n, _ in k.kernel.params]
        self.assertNotIn("stride_ak", names)  # == 1: a constant
        self.assertEqual(k.launch_names[:3], [("a_ptr", "ptr"), ("b_ptr", "ptr"), ("c_ptr", "ptr")])
        from tawa import _tawa
        back = _tawa.Kernel.deserialize(k.kernel.serialize())
        self.assertEqual(back.params, k.kernel.params)
        self.assertEqual(back.num_tensor_maps, k.kernel.num_tensor_maps)


class PipelineFlagsTest(DriverTest):
    """`TAWA_FLAGS`: the compiler's pipeline flags, read when a kernel is
    compiled."""

    def setUp(self):
        super().setUp()
        self.old_env = {k: os.environ.get(k) for k in ("TAWA_FLAGS", "TAWA_NO_WS")}
        kernels.matmul_kernel.cache.clear()

    def tearDown(self):
        for k, v in self.old_env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        super().tearDown()

    def matmul(self, flags=None, no_ws=None):
        """The 8-warp GEMM of `WarpSpecializedTest` compiled under these
        settings, afresh in memory (the on-disk cache stays)."""
        for name, value in (("TAWA_FLAGS", flags), ("TAWA_NO_WS", no_ws)):
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        kernels.matmul_kernel.cache.clear()
        # A K loop long enough for the cooperative consumers (a short one
        # gets ping-pong consumers, `LaunchGuardTest`).
        M, N, K = 512, 256, 4096
        a = FakeTensor(shape=(M, K))
        b = FakeTensor(shape=(K, N))
        c = FakeTensor(shape=(M, N))
        return kernels.matmul_kernel.warmup(a, b, c, M, N, K, K, 1, N, 1, N, 1, BLOCK_M=128, BLOCK_N=128,
                                            BLOCK_K=64, num_warps=8, num_stages=3, grid=(1,))

    def cache_files(self):
        return sorted(os.path.join(r, f) for r, _, fs in os.walk(self.tmp.name) for f in fs)

    def test_a_flag_changes_the_generated_cuda(self):
        # Two consumer warpgroups wait for each iteration's WGMMA group by
        # default; `--mma-depth 1` keeps one in flight.
        default = self.matmul()
        deeper = self.matmul("--mma-depth 1")
        for k in (default, deeper):
            self.assertTrue(k.kernel.warp_specialized)
        self.assertNotIn("wgmma.wait_group.sync.aligned 1", default.asm["cuda"])
        self.assertIn("wgmma.wait_group.sync.aligned 1", deeper.asm["cuda"])
        self.assertIn("wgmma.wait_group", deeper.asm["ptx"])
        # Each its own on-disk entry (the second would otherwise have been
        # the first's); spacing aside, the same flags share one.
        self.assertEqual(len(self.cache_files()), 2)
        again = self.matmul("  --mma-depth\t1 ")
        self.assertEqual(again.asm["cuda"], deeper.asm["cuda"])
        self.assertEqual(len(self.cache_files()), 2)
        # Empty flags are the defaults.
        self.assertEqual(self.matmul("").asm["cuda"], default.asm["cuda"])

    def test_programmatic_launch_for_persistent_kernels_by_default(self):
        # The warp-specialized GEMM is persistent: launched as a
        # programmatic dependent unless `--no-pdl`.
        default = self.matmul()
        self.assertTrue(default.kernel.programmatic_launch)
        self.assertIn("griddepcontrol.wait", default.asm["cuda"])
        off = self.matmul("--no-pdl")
        self.assertFalse(off.kernel.programmatic_launch)
        self.assertNotIn("griddepcontrol", off.asm["cuda"])
        # Without warp specialization its blocks do not walk the tiles:
        # an ordinary launch unless `--pdl`.
        self.assertFalse(self.matmul(no_ws="1").kernel.programmatic_launch)
        self.assertTrue(self.matmul("--pdl", no_ws="1").kernel.programmatic_launch)
        # Triton's `launch_pdl=True` asks for what happens anyway.
        M, N, K = 512, 256, 4096
        a, b, c = FakeTensor(shape=(M, K)), FakeTensor(shape=(K, N)), FakeTensor(shape=(M, N))
        kernels.matmul_kernel[(1,)](a, b, c, M, N, K, K, 1, N, 1, N, 1, BLOCK_M=128, BLOCK_N=128,
                                    BLOCK_K=64, num_warps=8, num_stages=3, launch_pdl=True)
        self.assertEqual(len(self.driver.launches), 1)

    def test_a_kernel_written_for_launch_pdl_is_launched_so(self):
        # `tl.extra.cuda.gdc_wait` asks for it, whether or not the blocks
        # walk tiles; `--no-pdl` launches it the ordinary way.
        os.environ.pop("TAWA_FLAGS", None)
        kernels.pdl_add_kernel.cache.clear()
        x = FakeTensor()
        k = kernels.pdl_add_kernel.warmup(x, x, 100, BLOCK_SIZE=64, grid=(2,))
        self.assertTrue(k.kernel.programmatic_launch)
        self.assertIn("griddepcontrol.wait", k.asm["cuda"])
        kernels.pdl_add_kernel[(2,)](x, x, 100, BLOCK_SIZE=64, launch_pdl=True)
        self.assertEqual(len(self.driver.launches), 1)
        os.environ["TAWA_FLAGS"] = "--no-pdl"
        kernels.pdl_add_kernel.cache.clear()
        off = kernels.pdl_add_kernel.warmup(x, x, 100, BLOCK_SIZE=64, grid=(2,))
        self.assertFalse(off.kernel.programmatic_launch)

    def test_no_ws_in_the_flags_is_tawa_no_ws(self):
        from_flags = self.matmul("--no-ws")
        from_env = self.matmul(no_ws="1")
        self.assertFalse(from_flags.kernel.warp_specialized)
        self.assertFalse(from_env.kernel.warp_specialized)
        self.assertEqual(from_flags.asm["cuda"], from_env.asm["cuda"])
        # Both: other pipeline flags still apply to the software pipeline.
        plain = self.matmul("--no-tma-store", no_ws="1")
        self.assertFalse(plain.kernel.warp_specialized)
        self.assertNotEqual(plain.asm["cuda"], from_env.asm["cuda"])

    def test_bad_flags_are_a_compilation_error_naming_the_flag(self):
        for flags, named in (("--mma-depth 1 --no-such-flag", "'--no-such-flag'"),
                             ("--num-stages 4", "'--num-stages'"),
                             ("--aref-depth zero", "'--aref-depth <D>'")):
            with self.assertRaises(triton.CompilationError) as cm:
                self.matmul(flags)
            msg = str(cm.exception)
            self.assertIn("TAWA_FLAGS", msg)
            self.assertIn(named, msg)
            self.assertNotIn("Traceback", msg)
        self.assertEqual(self.cache_files(), [])
        self.assertEqual(kernels.matmul_kernel.cache, {})


class LaunchGuardTest(DriverTest):
    """A schedule chosen from the launch compiled for (ping-pong consumers
    for a short K loop) is kept for the launches its guard accepts; a call
    outside them compiles again, and both kernels stay."""

    def setUp(self):
        super().setUp()
        kernels.matmul_kernel.cache.clear()

    def warm(self, K):
        M, N = 512, 256
        return kernels.matmul_kernel.warmup(
            FakeTensor(shape=(M, K)), FakeTensor(shape=(K, N)), FakeTensor(shape=(M, N)),
            M, N, K, K, 1, N, 1, N, 1, BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, num_warps=8,
            num_stages=3, grid=(1,))

    def test_short_and_long_k_loops_get_their_own_kernels(self):
        short = self.warm(128)
        self.assertIn("partition consumer1", short.asm["cuda"])
        self.assertIn("<= 4", short.launch_guard)
        # Another short K loop: the same kernel.
        self.assertIs(self.warm(256), short)
        # A long one: compiled again, cooperative consumers.
        long = self.warm(4096)
        self.assertIsNot(long, short)
        self.assertNotIn("partition consumer1", long.asm["cuda"])
        self.assertIn(">= 5", long.launch_guard)
        # Both kept: neither compiles again.
        self.assertIs(self.warm(64), short)
        self.assertIs(self.warm(8192), long)
        key_variants = [v for vs in kernels.matmul_kernel._variants.values() for v in vs]
        self.assertEqual(len(key_variants), 2)
        self.assertTrue(short.chosen_for(None))

    def test_the_disk_keeps_one_kernel_used_where_it_was_chosen_for_the_call(self):
        long = self.warm(4096)
        from tawa import _tawa
        real = _tawa.compile
        calls = []

        def counting(*a, **k):
            calls.append(k.get("launch_values"))
            return real(*a, **k)

        _tawa.compile = counting
        try:
            # A new process with another long K loop: the kernel on disk.
            kernels.matmul_kernel.cache.clear()
            again = self.warm(8192)
            self.assertEqual(calls, [])
            self.assertEqual(again.asm["cuda"], long.asm["cuda"])
            # A short one: the kernel on disk was not chosen for it.
            kernels.matmul_kernel.cache.clear()
            short = self.warm(128)
            self.assertEqual(len(calls), 1)
            self.assertIn(("K", 128), calls[0])
            self.assertIn("partition consumer1", short.asm["cuda"])
        finally:
            _tawa.compile = real

    def test_kernels_without_a_choice_have_no_guard(self):
        x = FakeTensor(shape=(4096,))
        k = kernels.add_kernel.warmup(x, x, x, 4096, BLOCK_SIZE=1024, grid=(4,))
        self.assertIsNone(k.launch_guard)


class ErrorTest(DriverTest):

    def test_compile_errors_point_at_the_source(self):
        x = FakeTensor()
        with self.assertRaises(triton.CompilationError) as cm:
            kernels.broken_kernel[(1,)](x, BLOCK=64)
        msg = str(cm.exception)
        self.assertIn("kernels.py:", msg)
        self.assertIn("undefined_name", msg)
        self.assertIn("^", msg)

    def test_argument_errors(self):
        x = FakeTensor()
        with self.assertRaisesRegex(TypeError, "unexpected keyword argument `BLOCK`"):
            kernels.add_kernel[(1,)](x, x, x, 10, BLOCK=64)
        with self.assertRaisesRegex(TypeError, "missing argument `BLOCK_SIZE`"):
            kernels.add_kernel[(1,)](x, x, x, 10)
        with self.assertRaisesRegex(TypeError, "takes 5 arguments, 6 given"):
            kernels.add_kernel[(1,)](x, x, x, 10, 64, 1)
        with self.assertRaisesRegex(TypeError, "multiple values for argument `x_ptr`"):
            kernels.add_kernel[(1,)](x, x, x, 10, x_ptr=x, BLOCK_SIZE=64)
        cpu = FakeTensor()
        cpu.is_cuda = False
        with self.assertRaisesRegex(ValueError, "`x_ptr` is a tensor on .*CUDA tensors"):
            kernels.add_kernel[(1,)](cpu, x, x, 10, BLOCK_SIZE=64)
        with self.assertRaisesRegex(TypeError, "dtype torch.complex64"):
            kernels.add_kernel[(1,)](FakeTensor(dtype="torch.complex64"), x, x, 10, BLOCK_SIZE=64)
        with self.assertRaisesRegex(TypeError, "`n_elements` of type list"):
            kernels.add_kernel[(1,)](x, x, x, [1], BLOCK_SIZE=64)
        with self.assertRaisesRegex(ValueError, "num_warps must be a power of two"):
            kernels.add_kernel[(1,)](x, x, x, 10, BLOCK_SIZE=64, num_warps=3)
        self.assertEqual(self.driver.launches, [])

    def test_unsupported_things_say_so(self):
        x = FakeTensor()
        with self.assertRaisesRegex(NotImplementedError, "num_ctas=2 is not supported by tawa"):
            kernels.add_kernel[(1,)](x, x, x, 10, BLOCK_SIZE=64, num_ctas=2)
        with self.assertRaisesRegex(NotImplementedError, "triton.no_such_thing is not supported"):
            triton.no_such_thing
        self.assertFalse(hasattr(triton, "no_such_thing"))
        with self.assertRaisesRegex(NotImplementedError, "tl.load can only be called inside"):
            tl.load(None)
        with self.assertRaisesRegex(NotImplementedError, "triton.language.no_such"):
            tl.no_such
        with self.assertRaisesRegex(NotImplementedError, "use_cuda_graph"):
            triton.autotune([triton.Config({})], key=[], use_cuda_graph=True)(kernels.add_kernel)

    def test_calling_a_kernel_directly(self):
        with self.assertRaisesRegex(RuntimeError, r"launch it as `add_kernel\[grid\]"):
            kernels.add_kernel(1, 2, 3)

    def test_launch_errors_from_the_runtime_are_python_exceptions(self):
        # The real driver without a GPU: a LaunchError, not a crash.
        driver.reset_active()
        from tawa import _tawa
        if _tawa.gpu_available():
            self.skipTest("a GPU is present")
        x = FakeTensor()
        k = kernels.add_kernel.warmup(x, x, x, 100, BLOCK_SIZE=64, grid=(1,))
        with self.assertRaises(triton.LaunchError):
            k.kernel.launch((1, 1, 1), (1, 2, 3, 100), 0, 0)
        with self.assertRaisesRegex(TypeError, "takes 4 launch values, 2 given"):
            k.kernel.launch((1, 1, 1), (1, 2), 0, 0)
        with self.assertRaisesRegex(TypeError, "`n_elements`: expected an integer"):
            k.kernel.launch((1, 1, 1), (1, 2, 3, "x"), 0, 0)


class CompiledKernelTest(DriverTest):

    def test_warmup_with_dtypes_and_the_compiled_kernel_launcher(self):
        k = kernels.add_kernel.warmup(tl.float16, tl.float16, tl.float16, 100, BLOCK_SIZE=64, grid=(1,))
        self.assertEqual(self.driver.launches, [])
        self.assertGreater(k.n_regs, 0)
        self.assertEqual(k.metadata.num_warps, 4)
        x = FakeTensor()
        k[(3, 1, 1)](x, x, x, 100, 64)
        self.assertEqual(self.driver.launches[0][1], (3, 1, 1))
        with self.assertRaisesRegex(ValueError, "do not match the specialization"):
            k[(1,)](x, x, x, 100, 128)
        # As tutorial 02 does: compiled with options, launched positionally.
        k8 = kernels.add_kernel.warmup(x, x, x, 100, BLOCK_SIZE=64, num_warps=8, grid=(1,))
        k8[(2, 1, 1)](x, x, x, 100, 64)
        self.assertEqual(self.driver.launches[-1][0].num_threads, 256)


class HelpersTest(unittest.TestCase):

    def test_cdiv_and_next_power_of_2(self):
        self.assertEqual(triton.cdiv(10, 4), 3)
        self.assertEqual(triton.cdiv(8, 4), 2)
        self.assertEqual([triton.next_power_of_2(n) for n in (0, 1, 2, 3, 5, 1024, 1025)],
                         [1, 1, 2, 4, 8, 1024, 2048])

    def test_constexpr_and_dtypes(self):
        c = tl.constexpr(4)
        self.assertEqual(c, 4)
        self.assertEqual(c * 2, 8)
        self.assertEqual(triton.cdiv(c, 3), 2)
        self.assertEqual(str(tl.float16), "fp16")
        self.assertTrue(tl.bfloat16.is_bf16())
        self.assertEqual(kernels.SCALE, 2)

    def test_set_allocator(self):
        triton.set_allocator(lambda size, align, stream: None)
        self.assertIsNotNone(triton.get_allocator())
        with self.assertRaises(TypeError):
            triton.set_allocator(3)
        triton.set_allocator(None)


if __name__ == "__main__":
    unittest.main()
