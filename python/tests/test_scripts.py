"""The benchmark and example scripts, run as a user runs them, in their CPU
smoke modes: a change to the package that breaks one of them fails here, not
on the day it is next run on a GPU. Each runs in its own process and must
exit 0 and write what it says it writes. They import this checkout's package,
so they skip when the tests run against an installed one, and without torch.
"""

import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

from package_under_test import CHECKOUT_PYTHON_DIR, TESTING_INSTALLED

HAVE_TORCH = importlib.util.find_spec("torch") is not None
HAVE_PYG = HAVE_TORCH and importlib.util.find_spec("torch_geometric") is not None
CHECKOUT_DIR = os.path.dirname(CHECKOUT_PYTHON_DIR)
RUNS_HERE = HAVE_TORCH and not TESTING_INSTALLED
NOT_HERE = "needs torch, and the checkout's package (the scripts import it, not an installed one)"


def run_script(*args, timeout=600):
    """The script's exit status and its stdout and stderr together."""
    done = subprocess.run([sys.executable, *args], cwd=CHECKOUT_DIR, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=timeout)
    return done.returncode, done.stdout


@unittest.skipUnless(RUNS_HERE, NOT_HERE)
class BenchScripts(unittest.TestCase):
    def test_dropin_overhead_times_every_call_on_cpu(self):
        status, output = run_script("bench/dropin_overhead.py", "--calls", "20")
        self.assertEqual(status, 0, output)
        rows = re.findall(r"^(left|routed)\s+(.+?)\s+(\d+\.\d+)\s+(\d+\.\d+)\s", output, re.MULTILINE)
        self.assertEqual([kind for kind, *_ in rows], ["left"] * 4 + ["routed"] * 4, output)
        self.assertTrue(all(float(torch_us) > 0 and float(switch_us) > 0 for *_, torch_us, switch_us in rows), output)

    def test_reduce_compare_smoke_test_writes_every_case(self):
        with tempfile.TemporaryDirectory() as out:
            status, output = run_script("bench/reduce_compare.py", "--device", "cpu", "--scale", "0.0005", "--reps",
                                        "2", "--out", out)
            self.assertEqual(status, 0, output)
            with open(os.path.join(out, "reduce-compare.json"), encoding="utf-8") as report:
                results = json.load(report)["results"]
            self.assertTrue(os.path.getsize(os.path.join(out, "reduce-compare.md")) > 0)
        status, listing = run_script("bench/reduce_compare.py", "--list", "--out", "unused")
        self.assertEqual(status, 0, listing)
        self.assertEqual([r["case"] for r in results], listing.split(), listing)
        for result in results:
            self.assertTrue(result["systems"], result["case"])
            for system in result["systems"]:
                self.assertEqual(system["status"], "ok", (result["case"], system))

    def test_compare_lists_the_scenario_table(self):
        status, output = run_script("bench/compare.py", "--list", "--out", "unused")
        self.assertEqual(status, 0, output)
        with open(os.path.join(CHECKOUT_DIR, "bench", "scenarios.tsv"), encoding="utf-8") as table:
            names = [line.split("\t")[0] for line in table if line.strip() and not line.startswith("#")]
        self.assertTrue(names)
        self.assertEqual(output.split(), names)


class CompareReport(unittest.TestCase):
    """bench/compare_report.py needs only the standard library: its verdict on
    the default call is checked here, wherever the tests run."""

    @staticmethod
    def report_module():
        sys.path.insert(0, os.path.join(CHECKOUT_DIR, "bench"))
        try:
            import compare_report
        finally:
            sys.path.pop(0)
        return compare_report

    @staticmethod
    def timed(*times_ms):
        return {"status": "ok", "timing": {"times_ms": list(times_ms)}}

    def test_the_default_call_is_held_against_the_fastest_other_call_that_ran_correctly(self):
        report = self.report_module()
        result = {"systems": {
            "scatterptx": self.timed(1.0, 1.03, 1.03),
            "scatterptx_streaming": self.timed(1.2, 1.2, 1.2),
            "scatterptx_path_red": self.timed(1.0, 1.0, 1.5),
            "scatterptx_plan": self.timed(0.5, 0.5, 0.5),  # grouped beforehand: not a call's peer
            "scatterptx_path_tma": {"status": "wrong", "timing": {"times_ms": [0.1]}},
            "scatterptx_path_private": {"status": "unsupported", "reason": "out_rows > 4096"},
        }}
        self.assertEqual(report.fastest_call(result), ("scatterptx_path_red", 1.0))
        self.assertEqual(report.default_over_fastest_cell(result), "1.030 (RED path)")

    def test_no_verdict_without_a_timed_default_call_or_peer(self):
        report = self.report_module()
        self.assertEqual(report.default_over_fastest_cell({"systems": {"scatterptx": self.timed(1.0)}}), "")
        self.assertEqual(report.default_over_fastest_cell(
            {"systems": {"scatterptx_streaming": self.timed(1.0)}}), "")


@unittest.skipUnless(RUNS_HERE, NOT_HERE)
class Examples(unittest.TestCase):
    def check_model(self, script, report, *sizes):
        with tempfile.TemporaryDirectory() as out:
            # The script exits 1 when the f32 runs with and without the switch disagree.
            status, output = run_script(script, "--out", out, "--device", "cpu", *sizes)
            self.assertEqual(status, 0, output)
            with open(os.path.join(out, report + ".json"), encoding="utf-8") as found:
                result = json.load(found)
            self.assertTrue(os.path.getsize(os.path.join(out, report + ".md")) > 0)
        for precision in ("f32", "bf16"):
            self.assertIn(precision, result, output)

    @unittest.skipUnless(HAVE_PYG, "torch_geometric is not installed")
    def test_graphsage_trains_alike_with_and_without_the_switch(self):
        self.check_model("examples/dropin/graphsage.py", "graphsage", "--nodes", "2000", "--edges", "20000",
                         "--features", "16", "--hidden", "16", "--steps", "4", "--warmup", "1", "--profile-steps", "1")

    def test_moe_layer_agrees_with_and_without_the_switch(self):
        self.check_model("examples/dropin/moe.py", "moe", "--tokens", "64", "--hidden", "32", "--ffn", "64",
                         "--experts", "4", "--steps", "3", "--warmup", "1")

    def test_partitioned_aggregation_matches_one_device_over_gloo(self):
        status, output = run_script("-m", "torch.distributed.run", "--nproc-per-node", "2",
                                    "examples/distributed/partitioned_aggregation.py", "--device", "cpu",
                                    "--nodes", "2000", "--edges", "30000", "--features", "16")
        self.assertEqual(status, 0, output)
        self.assertIn("2 ranks against one device", output)
        self.assertIn(": match", output)

    def test_partitioned_aggregation_outside_torchrun_says_how_to_run_it(self):
        env_free = [name for name in ("RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE") if name in os.environ]
        if env_free:
            self.skipTest(f"{', '.join(env_free)} set: this process runs under a launcher")
        status, output = run_script("examples/distributed/partitioned_aggregation.py", "--device", "cpu")
        self.assertEqual(status, 2, output)
        self.assertIn("torchrun", output)
        self.assertNotIn("Traceback", output)


if __name__ == "__main__":
    unittest.main()
