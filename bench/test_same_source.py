#!/usr/bin/env python3
"""The parts of bench/same_source.py, bench/ablation.py and bench/attention.py
that need no GPU:
launch-case parsing, argument plans, the reference's products, the kernel
source both sides compile, the report. Needs neither torch nor triton.

    python3 bench/test_same_source.py      (or python3 -m pytest bench/test_same_source.py)

Set TAWA_UPSTREAM_DIR to also check tutorial 03's unmodified source.
"""

import ast
import collections
import glob
import json
import os
import sys
import tempfile
import unittest
import unittest.mock

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import ablation  # noqa: E402
import attention  # noqa: E402
import same_source as ss  # noqa: E402

EXAMPLES = os.path.join(ROOT, "triton-examples", "kernels")
GEMM_REFERENCES = ("matmul", "matmul_bt", "geglu", "gemm_row_reduce", "batched_matmul", "grouped_gemm")


def example(name):
    return os.path.join(EXAMPLES, name + ".py")


class Expressions(unittest.TestCase):
    def test_python_meaning(self):
        env = {"M": 100, "BLOCK": 64, "NUM_SMS": 132}
        self.assertEqual(ss.evaluate("cdiv(M, BLOCK) * 2", env), 4)
        self.assertEqual(ss.evaluate("min(NUM_SMS, cdiv(M, BLOCK))", env), 2)
        self.assertEqual(ss.evaluate("M // BLOCK", env), 1)
        self.assertEqual(ss.evaluate("-M // BLOCK", env), -2)  # floor division, as the Rust evaluator
        self.assertEqual(ss.evaluate(7, env), 7)
        self.assertEqual(ss.evaluate(True, env), 1)

    def test_not_an_integer(self):
        with self.assertRaises(ValueError):
            ss.evaluate("M / BLOCK", {"M": 100, "BLOCK": 64})
        with self.assertRaises(NameError):
            ss.evaluate("open('x')", {})

    def test_env_has_int_and_bool_constexprs_only(self):
        env = ss.case_env({"sizes": {"M": 4}, "constexprs": {"B": 64, "EVEN": True, "ACT": "x"}})
        self.assertEqual(env, {"M": 4, "B": 64, "EVEN": 1})
        with self.assertRaises(ValueError):
            ss.case_env({"sizes": {"B": 4}, "constexprs": {"B": 64}})


class Plans(unittest.TestCase):
    def test_every_case_of_every_example_plans(self):
        """Every case of every example: its arguments resolve, its grid is
        positive, and the GEMM-like ones have products and outputs."""
        count = 0
        for toml in sorted(glob.glob(os.path.join(EXAMPLES, "*.toml"))):
            spec = ss.load_spec(toml)
            for case in spec["case"]:
                plan = ss.plan_case(spec, case)
                what = f"{os.path.basename(toml)}/{case['name']}"
                self.assertTrue(all(g >= 1 for g in plan["grid"]), what)
                self.assertEqual(len(plan["args"]), len(case["args"]), what)
                if spec["reference"] in GEMM_REFERENCES:
                    prods = ss.reference_products(spec, plan)
                    self.assertTrue(prods, what)
                    for a, b, _ in prods:
                        self.assertIn(a, plan["tensors"], what)
                        self.assertIn(b, plan["tensors"], what)
                    for out in ss.output_roles(spec, plan):
                        self.assertTrue(plan["tensors"][out]["output"], what)
                else:
                    with self.assertRaises(ValueError):
                        ss.reference_products(spec, plan)
                count += 1
        self.assertGreater(count, 50)

    def test_matmul_square_8192(self):
        spec = ss.load_spec(os.path.join(EXAMPLES, "matmul.toml"))
        [case] = ss.select_cases(spec, ["square_8192"], [])
        plan = ss.plan_case(spec, case)
        self.assertEqual(plan["grid"], (2048,))
        self.assertEqual(plan["flops"], 2 * 8192 ** 3)
        self.assertEqual((plan["num_warps"], plan["num_stages"]), (8, 3))
        self.assertEqual(plan["args"][:4], [("a_ptr", "tensor", "a_ptr"), ("b_ptr", "tensor", "b_ptr"),
                                            ("c_ptr", "tensor", "c_ptr"), ("M", "int", 8192)])
        self.assertEqual(plan["args"][6], ("stride_am", "stride", ("a_ptr", 0)))
        self.assertEqual(plan["constexprs"]["ACTIVATION"], "")
        self.assertEqual(plan["tensors"]["c_ptr"]["output"], True)
        self.assertIsNone(plan["tensors"]["a_ptr"]["strides"])
        self.assertEqual(ss.reference_products(spec, plan), [("a_ptr", "b_ptr", False)])

    def test_strided_descriptors_pointer_arrays(self):
        spec = ss.load_spec(os.path.join(EXAMPLES, "linear.toml"))
        plan = ss.plan_case(spec, ss.select_cases(spec, ["square_8192"], [])[0])
        self.assertEqual(plan["tensors"]["w_ptr"]["strides"], [1, 8192])
        spec = ss.load_spec(os.path.join(EXAMPLES, "matmul_tma_host.toml"))
        plan = ss.plan_case(spec, ss.select_cases(spec, ["square_8192"], [])[0])
        self.assertEqual(plan["args"][0], ("a_desc", "desc", ("a", [128, 64])))
        self.assertIn("a", plan["tensors"])  # a buffer, not an argument
        spec = ss.load_spec(os.path.join(EXAMPLES, "grouped_gemm.toml"))
        plan = ss.plan_case(spec, ss.select_cases(spec, ["four_square"], [])[0])
        self.assertEqual(ss.reference_products(spec, plan)[3], ("a3", "b3", False))
        self.assertEqual(ss.output_roles(spec, plan), ["c0", "c1", "c2", "c3"])
        self.assertEqual(plan["tensors"]["sizes"]["init"]["values"][:3], [1024, 1024, 1024])

    def test_split_k_output_starts_at_zero(self):
        spec = ss.load_spec(os.path.join(EXAMPLES, "split_k_matmul.toml"))
        plan = ss.plan_case(spec, ss.select_cases(spec, [], ["large"])[0])
        self.assertEqual(plan["tensors"]["c_ptr"]["init"], {"dist": "zeros"})
        self.assertEqual(plan["grid"], (8, 8, 4))

    def test_selection(self):
        spec = ss.load_spec(os.path.join(EXAMPLES, "matmul.toml"))
        large = [c["name"] for c in ss.select_cases(spec, [], ["large"])]
        self.assertIn("square_8192", large)
        self.assertNotIn("ragged_100", large)
        with self.assertRaises(SystemExit):
            ss.select_cases(spec, ["no_such_case"], [])

    def test_raw_constexprs_evaluate_against_the_side(self):
        class Language:
            float16 = "the side's fp16"

        class Package:
            language = Language

        plan = {"constexprs": {"B": 64, "ACT": "", "DT": {"py": "tl.float16"}}}
        self.assertEqual(ss.constexpr_values(plan, Package),
                         {"B": 64, "ACT": "", "DT": "the side's fp16"})

    def test_unknown_tensor_is_an_error(self):
        spec = ss.load_spec(os.path.join(EXAMPLES, "matmul.toml"))
        case = dict(spec["case"][0])
        case["args"] = case["args"] + [{"kind": "stride", "name": "s", "of": "nope", "dim": 0}]
        with self.assertRaisesRegex(ValueError, "nope"):
            ss.plan_case(spec, case)


class Source(unittest.TestCase):
    TEXT = '''"""doc"""
import triton
import triton.language as tl
import torch

X = torch.zeros(3)


@triton.autotune(
    configs=[triton.Config({'B': 1}, num_warps=4)],
    key=['n'],
)
@triton.jit
def kernel(x_ptr, n,  # a comment kept
           B: tl.constexpr):
    pid = tl.program_id(0)
    helper(pid)


def host():
    kernel[(1, )](X, 3)


@triton.jit(do_not_specialize=["n"])
def helper(v):
    pass

host()
'''

    def test_both_sides_compile_the_same_text_but_imports(self):
        tri, names = ss.kernel_source(self.TEXT, False)
        taw, names2 = ss.kernel_source(self.TEXT, True)
        self.assertEqual(names, ["kernel", "helper"])
        self.assertEqual(names, names2)
        self.assertTrue(taw.startswith("import tawa as triton\nimport tawa.language as tl\n"))
        self.assertTrue(tri.startswith("import triton\nimport triton.language as tl\n"))
        self.assertEqual(tri.split("\n", 2)[2], taw.split("\n", 2)[2])
        ast.parse(tri)
        self.assertIn("def kernel(x_ptr, n,  # a comment kept\n           B: tl.constexpr):", tri)
        self.assertNotIn("autotune", tri)
        self.assertNotIn("do_not_specialize", tri)
        self.assertNotIn("host", tri)
        self.assertNotIn("torch", tri)
        self.assertEqual(tri.count("@triton.jit\n"), 2)
        # Every kept line where it was in the file.
        original = self.TEXT.splitlines()
        for i, line in enumerate(tri.splitlines()):
            if line.strip() and not line.startswith(("import ", "@triton.jit")):
                self.assertEqual(line, original[i])
        at = original.index("def kernel(x_ptr, n,  # a comment kept")
        self.assertEqual(tri.splitlines()[at], original[at])

    def test_a_kernel_on_the_first_line_moves_one_line_down(self):
        src, names = ss.kernel_source("@triton.jit\ndef k(x):\n    pass", False)
        self.assertEqual(names, ["k"])
        self.assertEqual(src, "import triton\nimport triton.language as tl\n@triton.jit\ndef k(x):\n    pass\n")

    def test_every_example_extracts_its_kernel(self):
        for py in sorted(glob.glob(os.path.join(EXAMPLES, "*.py"))):
            spec = ss.load_spec(ss.cases_file_for(py))
            with open(py) as f:
                src, names = ss.kernel_source(f.read(), True, py)
            self.assertIn(spec["kernel"], names, py)
            ast.parse(src)

    @unittest.skipUnless(os.environ.get("TAWA_UPSTREAM_DIR"), "TAWA_UPSTREAM_DIR not set")
    def test_tutorial_03_drops_its_autotune_list(self):
        py = os.path.join(os.environ["TAWA_UPSTREAM_DIR"], "03-matrix-multiplication.py")
        with open(py) as f:
            src, names = ss.kernel_source(f.read(), False, py)
        self.assertEqual(sorted(names), ["leaky_relu", "matmul_kernel"])
        self.assertNotIn("autotune", src)
        self.assertNotIn("get_autotune_config", src)
        spec = ss.load_spec(os.path.join(ROOT, "tests", "upstream", "03-matrix-multiplication.toml"))
        for name in ("square_4096", "square_8192"):
            plan = ss.plan_case(spec, ss.select_cases(spec, [name], [])[0])
            self.assertEqual({k: plan["constexprs"][k] for k in ("BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K")},
                             {"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 256, "BLOCK_SIZE_K": 64})
            self.assertEqual((plan["num_warps"], plan["num_stages"]), (8, 3))


def row(label, case, tawa_ms, triton_ms, cublas_ms, flops=2 * 8192 ** 3):
    def side(ms):
        return {"ms": ms, "tflops": flops / ms * 1e-9} if ms else {"error": "CompilationError: no"}
    r = {"label": label, "case": case, "sizes": {"M": 8192, "N": 8192, "K": 8192}, "dtypes": ["fp16"],
         "tawa": side(tawa_ms), "triton": side(triton_ms), "cublas": side(cublas_ms),
         "device": "H100", "torch_version": "2.11", "triton_version": "3.6.0",
         "tawa_version": "0.1.0", "iters": 30}
    ms = {"tawa": tawa_ms, "triton": triton_ms, "cublas": cublas_ms}
    r["tawa_vs_triton"] = ss.speed_ratio(ms["tawa"], ms["triton"])
    r["tawa_vs_cublas"] = ss.speed_ratio(ms["tawa"], ms["cublas"])
    r["triton_vs_cublas"] = ss.speed_ratio(ms["triton"], ms["cublas"])
    return r


class Report(unittest.TestCase):
    def test_table_failures_and_plain_grid_comparison(self):
        rows = [row("matmul", "square_8192", 2.0, 1.6, 1.5),
                row("persistent_matmul", "square_8192", 1.8, 1.6, 1.44),
                row("matmul_descriptor", "square_8192", None, 1.7, 1.5)]
        text = ss.report(rows)
        self.assertIn("Device: H100; torch 2.11, Triton 3.6.0, tawa 0.1.0; median of 30 ", text)
        self.assertIn("| matmul | square_8192 | M=8192 N=8192 K=8192 | 550 | 687 | 733 | 0.80 | 0.75 | 0.94 |", text)
        self.assertIn("- matmul_descriptor/square_8192 tawa: CompilationError: no", text)
        # Persistent: 1.44/1.8 = 0.8 of its cuBLAS, plain 0.75: 1.07x the plain grid.
        self.assertIn("| persistent_matmul | square_8192 | 0.80 | 0.75 | 1.07 | 0.96 |", text)
        self.assertIn("| matmul_descriptor | square_8192 | - | 0.75 | - |", text)

    def test_rows_round_trip_through_json_lines(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "r.jsonl")
            with open(path, "w") as f:
                for r in (row("matmul", "square_4096", 0.25, 0.2, 0.2),):
                    f.write(json.dumps(r) + "\n")
            self.assertEqual(ss.read_rows([path])[0]["case"], "square_4096")
            out = os.path.join(d, "r.md")
            self.assertEqual(ss.main(["--report", path, "--out", out]), 0)
            with open(out) as f:
                self.assertIn("| matmul | square_4096 |", f.read())

    def test_kernel_times_skip_the_harness_and_measure_from_the_sleep(self):
        fill = "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<signed char>>"
        events = []
        for call in range(3):
            t = 1000.0 * call
            events += [{"name": fill, "ts": t, "dur": 90.0},
                       {"name": "spin_kernel(long)", "ts": t + 100, "dur": 500.0},
                       {"name": "gemm", "ts": t + 601 + call, "dur": 50.0 + call},
                       {"name": "epilogue", "ts": t + 655 + call, "dur": 2.0}]
        rows = ss.summarize_kernels(list(reversed(events)))
        self.assertEqual([r["kernel"] for r in rows], ["gemm", "epilogue"])
        gemm, epilogue = rows
        self.assertEqual((gemm["n"], gemm["us"], gemm["gap_us"]), (3, 51.0, 2.0))
        self.assertEqual(epilogue["gap_us"], 3.0)  # from the end of the gemm before it
        # A kernel right after the flush (no sleep between) has no gap.
        rows = ss.summarize_kernels([{"name": fill, "ts": 0.0, "dur": 9.0},
                                     {"name": "k", "ts": 10.0, "dur": 5.0}])
        self.assertIsNone(rows[0]["gap_us"])

    def test_cooldown_and_sustained_figures_in_the_report(self):
        r = row("matmul", "k16384_8192", 2.0, 2.1, 2.2)
        self.assertIn(", back to back;", ss.report([r]))
        r["cooldown_ms"] = 30.0
        r["tawa"]["sustained"] = {"ms": 2.5, "tflops": 440.0, "j": 1.5, "w": 600.0}
        r["triton"]["sustained"] = {"ms": 2.4, "tflops": 458.0, "j": 1.4, "w": 583.0}
        text = ss.report([r])
        self.assertIn(", the GPU idle 30 ms before each call;", text)
        # cuBLAS without the figures: dashes.
        self.assertIn("| matmul | k16384_8192 | 440 | 458 | - | 0.96 | 1.500 / 1.400 / - | 600 / 583 / - |", text)

    def test_sustained_turns_take_medians(self):
        calls = []

        class Torch:
            class cuda:
                synchronize = staticmethod(lambda: None)
        sys.modules.setdefault("torch", Torch)
        if sys.modules["torch"] is not Torch:
            self.skipTest("a real torch is importable")
        try:
            joules = iter(range(0, 1000, 10))
            with unittest.mock.patch.object(ss.time, "sleep", lambda s: None):
                out = ss.sustained([lambda: calls.append("a"), lambda: calls.append("b")], [4, 2], 3,
                                   lambda: next(joules))
        finally:
            del sys.modules["torch"]
        # One warm-up call and 4 (2) timed ones a turn, three turns each.
        self.assertEqual(calls.count("a"), 15)
        self.assertEqual(calls.count("b"), 9)
        self.assertEqual([x["j"] for x in out], [2.5, 5.0])  # 10 J over 4 (2) calls
        self.assertEqual(sorted(out[0]), ["j", "ms", "w"])

    def test_each_side_follows_each_other_equally_often(self):
        # Calls follow each other across rounds too: count the transitions
        # of a cycle of rounds, the last call's to the first's included.
        for n in (2, 3, 5):
            orders = ss.call_orders(n)
            self.assertTrue(all(sorted(o) == list(range(n)) for o in orders), orders)
            calls = [i for o in orders for i in o]
            pairs = collections.Counter(zip(calls, calls[1:] + calls[:1]))
            self.assertEqual(set(pairs), {(a, b) for a in range(n) for b in range(n) if a != b})
            self.assertEqual(set(pairs.values()), {1}, (n, orders))
        self.assertEqual(ss.call_orders(3), [[0, 1, 2], [0, 2, 1]])
        self.assertEqual(ss.call_orders(1), [[0]])

    def test_speed_ratio(self):
        self.assertEqual(ss.speed_ratio(1.0, 2.0), 2.0)
        self.assertIsNone(ss.speed_ratio(None, 2.0))


class AblationPoints(unittest.TestCase):
    def test_ids_are_unique_and_free_of_commas(self):
        ids = [p[0] for p in ablation.POINTS]
        self.assertEqual(len(ids), len(set(ids)))
        self.assertFalse(any("," in i or " " in i for i in ids))

    def test_selection_by_id_keeps_matrix_order(self):
        picked = ablation.select_points("ws-defaults, nows-s3,ws-d4-m1")
        self.assertEqual([p[1] for p in picked], ["no-ws, stages 3", "ws, depth 4, mma 1", "ws, defaults"])

    def test_unknown_id_lists_the_known_ones(self):
        with self.assertRaisesRegex(SystemExit, "ws-d4-m1"):
            ablation.select_points("ws, depth 4, mma 1")

    def test_environment_words_are_not_flags(self):
        env, flags = ablation.split_env(["TAWA_WAVE_BALANCE=0", "--aref-depth", "3"])
        self.assertEqual(env, {"TAWA_WAVE_BALANCE": "0"})
        self.assertEqual(flags, ["--aref-depth", "3"])
        # Every point's flags are tawa-rs flags or such words.
        for _, _, pflags in ablation.POINTS:
            env, rest = ablation.split_env(pflags)
            self.assertTrue(all(w.startswith("-") or w.isdigit() for w in rest), pflags)


class AttentionCases(unittest.TestCase):
    CASES = os.path.join(ROOT, "tests", "upstream", "06-fused-attention.toml")

    def test_large_cases_carry_their_launch_configuration(self):
        _, shapes = attention.large_cases(self.CASES, ["noncausal_d128_4k", "causal_d128_4k"])
        by_name = {s["case"]: s for s in shapes}
        # (BLOCK_M, BLOCK_N, num_stages, num_warps, warp_specialize): what
        # --tawa-python launches the tutorial's kernel with.
        self.assertEqual(by_name["noncausal_d128_4k"]["config"], (128, 128, 3, 8, True))
        self.assertFalse(by_name["noncausal_d128_4k"]["causal"])
        self.assertTrue(by_name["causal_d128_4k"]["causal"])

    def test_an_unknown_case_is_named(self):
        with self.assertRaises(SystemExit):
            attention.large_cases(self.CASES, ["no_such_case"])


class ClockWindowsTest(unittest.TestCase):
    """`clock_per_call`: each call's mean of the clock samples inside its
    window, None where none fell."""

    def test_means_inside_each_window(self):
        samples = [(0.0, 1980), (1.0, 1600), (1.5, 1620), (3.0, 1980), (4.0, 1500)]
        got = ss.clock_per_call(samples, [(0.9, 1.6), (2.0, 2.5), (3.0, 4.0)])
        self.assertEqual(got, [1610, None, 1740])


if __name__ == "__main__":
    unittest.main()
