"""tawa.profiler (Proton's API as tutorial 09 uses it) on fake events."""

import io
import os
import tempfile
import unittest
from contextlib import redirect_stdout

import tawa as triton
import tawa.profiler as proton
import tawa.profiler.viewer as viewer
from tawa.runtime.driver import driver

import kernels
from fakes import FakeTensor, RecordingDriver


class Clock:
    now = 0.0


class Event:
    def record(self):
        self.t = Clock.now

    def elapsed_time(self, other):
        return other.t - self.t


class ProfilerTest(unittest.TestCase):

    def setUp(self):
        self.saved = (proton._events, proton._synchronize)
        proton._events = lambda: (Event(), Event())
        proton._synchronize = lambda: None
        self.driver = RecordingDriver()
        driver.set_active(self.driver)
        real = self.driver.launch

        def launch(*a):
            Clock.now += 2.0  # each launch takes 2 ms
            real(*a)

        self.driver.launch = launch
        self.tmp = tempfile.TemporaryDirectory()
        self.cwd = os.getcwd()
        os.chdir(self.tmp.name)

    def tearDown(self):
        proton._events, proton._synchronize = self.saved
        driver.reset_active()
        os.chdir(self.cwd)
        self.tmp.cleanup()

    def test_launches_and_scopes_are_timed_while_active(self):
        x = FakeTensor()
        proton.start("prof", hook="triton")
        proton.deactivate()
        kernels.add_kernel[(1,)](x, x, x, 64, BLOCK_SIZE=64)  # not recorded
        proton.activate(0)
        for _ in range(3):
            kernels.add_kernel[(1,)](x, x, x, 64, BLOCK_SIZE=64)
        kernels.named_add_kernel[(1,)](x, x, 1000, BLOCK_SIZE=64)
        with proton.scope("torch", {"flops16": 4e9}):
            Clock.now += 1.0
        proton.deactivate(0)
        proton.finalize()
        tree, metrics = viewer.parse(["tflop16/s", "time/ms"], "prof.hatchet")
        by_name = {n["name"]: n for n in tree}
        self.assertEqual(by_name["add_kernel"]["count"], 3)
        self.assertAlmostEqual(by_name["add_kernel"]["values"]["time/ms"], 6.0)
        self.assertAlmostEqual(by_name["torch"]["values"]["tflop16/s"], 4.0)
        out = io.StringIO()
        with redirect_stdout(out):
            viewer.print_tree(tree, metrics)
        self.assertIn("4.000 1.000 torch", out.getvalue())
        # Named and measured by the kernel's launch_metadata.
        self.assertAlmostEqual(by_name["named_add_kernel [n=1000]"]["values"]["tflop16/s"], 2000 / 2e-3 / 1e12)
        self.assertEqual(len(self.driver.launches), 5)


if __name__ == "__main__":
    unittest.main()
