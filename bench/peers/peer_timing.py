# SPDX-License-Identifier: Apache-2.0
"""Timing shared by the scripts that compare tprod from Python with its own C++ benchmarks: the median wall time of
a Python call, and the medians of Google Benchmark cases run now, on the same machine and thread count."""
import json
import os
import pathlib
import statistics
import subprocess
import tempfile
import time


def median_seconds(f, runs, warmup):
    """The median wall time (s) of `runs` calls of f() after `warmup` calls."""
    for _ in range(warmup):
        f()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        f()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def benchmark_medians(bench, pattern, threads, extra_args=()):
    """{run name: median real time (s)} of the cases of the Google Benchmark program `bench` that match `pattern`,
    run now with TPROD_NUM_THREADS=threads (the cases must report a median: repetitions, registered or in
    extra_args)."""
    with tempfile.TemporaryDirectory() as scratch:
        out = pathlib.Path(scratch) / "cxx.json"
        subprocess.run([bench, f"--benchmark_filter={pattern}", *extra_args, "--benchmark_report_aggregates_only=true",
                        f"--benchmark_out={out}", "--benchmark_out_format=json"], check=True, capture_output=True,
                       env=dict(os.environ, TPROD_NUM_THREADS=str(threads)))
        report = json.loads(out.read_text())
    scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
    return {b["run_name"]: b["real_time"] * scale[b["time_unit"]] for b in report["benchmarks"]
            if b.get("aggregate_name") == "median"}
