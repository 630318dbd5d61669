"""tawa.testing: do_bench's statistics, perf_report tables, assert_close."""

import io
import os
import tempfile
import unittest
import unittest.mock
from contextlib import redirect_stdout

import tawa as triton
from tawa import testing
from tawa.runtime.driver import driver

from fakes import RecordingDriver


class DoBenchTest(unittest.TestCase):

    def setUp(self):
        self.driver = RecordingDriver()
        driver.set_active(self.driver)

    def tearDown(self):
        driver.reset_active()

    def test_times_come_from_the_events(self):
        calls = []

        def fn():
            calls.append(1)
            self.driver.clock.advance(2.0)

        ms = triton.testing.do_bench(fn, warmup=10, rep=20)
        self.assertAlmostEqual(ms, 2.0)
        # 1 + 5 estimating + 5 warm-up + 10 timed.
        self.assertEqual(len(calls), 21)
        med, lo, hi = triton.testing.do_bench(fn, quantiles=[0.5, 0.2, 0.8])
        self.assertAlmostEqual(med, 2.0)

    def test_quantiles_and_modes(self):
        times = [1.0, 2.0, 3.0, 4.0]
        self.assertEqual(testing._summarize_statistics(times, [0.5], "mean"), 2.5)
        self.assertEqual(testing._summarize_statistics(times, [0.0, 1.0], "mean"), [1.0, 4.0])
        self.assertEqual(testing._summarize_statistics(times, None, "min"), 1.0)
        self.assertEqual(testing._summarize_statistics(times, None, "median"), 2.5)
        self.assertEqual(testing._summarize_statistics(times, None, "all"), times)
        with self.assertRaises(ValueError):
            testing._summarize_statistics(times, None, "best")


class PerfReportTest(unittest.TestCase):

    def test_table_printed_and_saved(self):
        @triton.testing.perf_report(
            triton.testing.Benchmark(x_names=["N"], x_vals=[128, 256], line_arg="provider",
                                     line_vals=["a", "b"], line_names=["A", "B"], styles=[("blue", "-")] * 2,
                                     ylabel="GB/s", plot_name="demo", args={"M": 4}))
        def bench(M, N, provider):
            v = M * N * (1 if provider == "a" else 2)
            return v, v - 1, v + 1

        out = io.StringIO()
        # Every x value: the table is checked row by row, whatever the
        # caller's TAWA_BENCH_MAX_POINTS (the GPU session sets it).
        with tempfile.TemporaryDirectory() as d, redirect_stdout(out), \
                unittest.mock.patch.dict(os.environ, {"TAWA_BENCH_MAX_POINTS": "0"}):
            df = bench.run(print_data=True, save_path=d, return_df=True)
            with open(os.path.join(d, "demo.csv")) as f:
                csv = f.read()
        self.assertIn("demo:", out.getvalue())
        self.assertEqual(csv.splitlines()[0], "N,A,B")
        self.assertEqual(csv.splitlines()[2], "256,1024,2048")
        rows = df.values.tolist() if hasattr(df, "values") else df.rows
        self.assertEqual(rows[0][:3], [128, 512, 1024])


class SubsampleTest(unittest.TestCase):

    def test_max_points(self):
        xs = list(range(10))
        # The caller's value, if any, is back after the test.
        with unittest.mock.patch.dict(os.environ):
            os.environ["TAWA_BENCH_MAX_POINTS"] = "3"
            self.assertEqual(testing._subsample(xs), [0, 4, 9])
            os.environ["TAWA_BENCH_MAX_POINTS"] = "0"
            self.assertEqual(testing._subsample(xs), xs)
            del os.environ["TAWA_BENCH_MAX_POINTS"]
            self.assertEqual(testing._subsample(xs), xs)


class AssertCloseTest(unittest.TestCase):

    def test_tolerances(self):
        try:
            import numpy  # noqa: F401
        except ImportError:
            self.skipTest("numpy is not installed")
        triton.testing.assert_close([1.0, 2.0], [1.005, 2.0])
        with self.assertRaises(AssertionError):
            triton.testing.assert_close([1.0, 2.0], [1.5, 2.0])
        triton.testing.assert_close([1.0], [1.5], atol=1)


if __name__ == "__main__":
    unittest.main()
