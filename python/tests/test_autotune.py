"""autotune / Config / heuristics with Triton's semantics, and the
configs compiled in parallel before any is timed."""

import os
import tempfile
import threading
import unittest
import warnings

import tawa as triton
from tawa.runtime.driver import driver

import kernels
from fakes import FakeTensor, RecordingDriver

CONFIGS = [
    triton.Config({"BLOCK_SIZE": 64}, num_warps=4),
    triton.Config({"BLOCK_SIZE": 128}, num_warps=4),
    triton.Config({"BLOCK_SIZE": 256}, num_warps=8),
]
# Fake milliseconds per launch of each block size: 128 is the fastest.
TIME = {64: 3.0, 128: 1.0, 256: 2.0}


def block_size(kernel):
    return int(kernel.cuda.split("BLOCK_SIZE=")[1].split()[0].rstrip(","))


class AutotuneTest(unittest.TestCase):

    def setUp(self):
        self.driver = RecordingDriver(timings=lambda k: TIME[block_size(k)])
        driver.set_active(self.driver)
        self.tmp = tempfile.TemporaryDirectory()
        os.environ["TAWA_PY_CACHE_DIR"] = self.tmp.name
        kernels.add_kernel.cache.clear()

    def tearDown(self):
        driver.reset_active()
        self.tmp.cleanup()

    def tuner(self, **kw):
        return triton.autotune(configs=CONFIGS, key=["n_elements"], **kw)(kernels.add_kernel)

    def test_best_config_per_key_and_dtype(self):
        tuned = self.tuner()
        x = FakeTensor()
        grid = lambda m: (triton.cdiv(m["n_elements"], m["BLOCK_SIZE"]),)
        tuned[grid](x, x, x, 1000)
        self.assertEqual(tuned.best_config.kwargs, {"BLOCK_SIZE": 128})
        self.assertEqual(self.driver.launches[-1][1], (8, 1, 1))
        self.assertEqual(len(tuned.cache), 1)
        n = len(self.driver.launches)
        tuned[grid](x, x, x, 1000)  # cached: one launch, no timing
        self.assertEqual(len(self.driver.launches), n + 1)
        tuned[grid](x, x, x, 2000)  # a new key value tunes again
        y = FakeTensor(dtype="torch.float32")
        tuned[grid](y, y, y, 2000)  # and so does a new dtype
        self.assertEqual(len(tuned.cache), 3)
        self.assertEqual(set(tuned.configs_timings), set(CONFIGS))

    def test_configs_compile_in_parallel_before_timing(self):
        tuned = self.tuner()
        x = FakeTensor()
        compiled_before_first_launch = []
        threads = set()
        real_compile = kernels.add_kernel.compile

        def compile(key, options, values=None):
            threads.add(threading.get_ident())
            # Compiled for the call's launch.
            self.assertIsNotNone(values)
            return real_compile(key, options, values)

        kernels.add_kernel.compile = compile
        real_launch = self.driver.launch

        def launch(*a):
            if not compiled_before_first_launch:
                compiled_before_first_launch.append(len(kernels.add_kernel.cache))
            real_launch(*a)

        self.driver.launch = launch
        os.environ["TAWA_COMPILE_THREADS"] = "3"
        try:
            tuned[(1,)](x, x, x, 1000)
        finally:
            del kernels.add_kernel.compile
            del os.environ["TAWA_COMPILE_THREADS"]
        self.assertEqual(compiled_before_first_launch, [3])
        self.assertNotIn(threading.get_ident(), threads)

    def test_prune_configs_by(self):
        seen = {}

        def early(configs, nargs, **kwargs):
            seen["nargs"] = sorted(nargs)
            return [c for c in configs if c.kwargs["BLOCK_SIZE"] != 128]

        tuned = self.tuner(prune_configs_by={"early_config_prune": early})
        x = FakeTensor()
        tuned[(1,)](x, x, x, 1000)
        self.assertEqual(tuned.best_config.kwargs, {"BLOCK_SIZE": 256})
        self.assertEqual(seen["nargs"], ["n_elements", "out_ptr", "x_ptr", "y_ptr"])
        tuned = self.tuner(prune_configs_by={"early_config_prune": lambda c, n, **k: []})
        with self.assertRaisesRegex(RuntimeError, "No valid autotuner configs"):
            tuned[(1,)](x, x, x, 1000)
        model = lambda **kw: {64: 1, 128: 3, 256: 2}[kw["BLOCK_SIZE"]]
        tuned = self.tuner(prune_configs_by={"perf_model": model, "top_k": 1})
        tuned[(1,)](x, x, x, 1000)
        self.assertEqual(tuned.best_config.kwargs, {"BLOCK_SIZE": 64})

    def test_reset_to_zero_and_restore_value(self):
        x = FakeTensor(data=[5.0, 5.0])
        out = FakeTensor(data=[7.0, 7.0])
        calls = []
        real_launch = self.driver.launch

        def launch(kernel, grid, values, device):
            calls.append((list(x.data), list(out.data)))
            out.data = [99.0, 99.0]  # the kernel writes its output
            real_launch(kernel, grid, values, device)

        self.driver.launch = launch
        tuned = triton.autotune(configs=CONFIGS, key=["n_elements"], reset_to_zero=["x_ptr"],
                                restore_value=["out_ptr"])(kernels.add_kernel)
        tuned[(1,)](x, x, out, 1000)
        # Every timed launch saw x zeroed and out as it was before tuning.
        for xs, outs in calls[:-1]:
            self.assertEqual(xs, [0.0, 0.0])
            self.assertEqual(outs, [7.0, 7.0])
        with self.assertRaisesRegex(ValueError, "`nope`"):
            triton.autotune(configs=CONFIGS, key=[], reset_to_zero=["nope"])(kernels.add_kernel)

    def test_conflicting_meta_parameters(self):
        tuned = self.tuner()
        x = FakeTensor()
        with self.assertRaisesRegex(RuntimeError, "Conflicting meta-parameters: BLOCK_SIZE"):
            tuned[(1,)](x, x, x, 1000, BLOCK_SIZE=64)

    def test_configs_that_fail_are_skipped_with_a_warning(self):
        bad = triton.Config({"BLOCK_SIZE": 64}, num_warps=3)
        tuned = triton.autotune(configs=[bad] + CONFIGS[1:], key=["n_elements"])(kernels.add_kernel)
        x = FakeTensor()
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            tuned[(1,)](x, x, x, 1000)
        self.assertEqual(tuned.best_config.kwargs, {"BLOCK_SIZE": 128})
        self.assertTrue(any("num_warps must be a power of two" in str(m.message) for m in w))

    def test_config_pre_hook_runs_before_binding(self):
        hooked = []
        cfg = triton.Config({"BLOCK_SIZE": 64}, pre_hook=lambda nargs: hooked.append(nargs["BLOCK_SIZE"]))
        tuned = triton.autotune(configs=[cfg], key=[])(kernels.add_kernel)
        x = FakeTensor()
        tuned[(1,)](x, x, x, 1000)
        self.assertEqual(hooked, [64])
        self.assertEqual(str(cfg), "BLOCK_SIZE: 64, num_warps: 4, num_ctas: 1, num_stages: 3")


class HeuristicsTest(unittest.TestCase):

    def setUp(self):
        self.driver = RecordingDriver()
        driver.set_active(self.driver)

    def tearDown(self):
        driver.reset_active()

    def test_values_computed_from_arguments(self):
        fn = triton.heuristics({"BLOCK_SIZE": lambda args: triton.next_power_of_2(args["n_elements"])})(
            kernels.add_kernel)
        x = FakeTensor()
        k = fn[(1,)](x, x, x, 100)
        self.assertIn("BLOCK_SIZE=128", k.asm["cuda"])


if __name__ == "__main__":
    unittest.main()
