#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Where a training step's time goes on the CPU: samples bench_nn's train_step cases with `perf record` and sums
the samples by phase (GEMMs, transforms, attention, LayerNorm, activations, optimizer, copies, allocation, ...).

    scripts/profile-train-step.py [--build build] [--cases std_vit,tcp_vit,std/d128,t4/d128]

Each case runs alone under `perf record -F 1999` as the benchmark runs it (3 repetitions of at least 2 s of
steps, its first step untimed and sampled too); a symbol's self samples (no
children: inlined code counts for the function it was inlined into) go to the first phase whose pattern matches its
name (an address without a symbol: its library's name, so libgomp's spinning counts as waiting threads). The
milliseconds of a phase are its share of the samples times the step's median from the same run. Needs
`perf` (Debian's linux-perf) and a Release build of bench_nn; perf_event_paranoid ≤ 2 lets a user sample its own
processes.
"""
import argparse
import json
import pathlib
import re
import subprocess
import sys
import tempfile

# First match wins, so the specific patterns come before the general ones.
PHASES = [
    ("threads (OpenMP runtime, waiting)", r"^libgomp|gomp|GOMP|omp_|futex|sched_yield|do_spin"),
    ("GEMM", r"gebp|gemm_pack|general_matrix_matrix|gemv|dgemm|sgemm|GeneralProduct|generic_product_impl|tube_gemm|"
             r"ProductBlocking|slice_linear|gemm_tile|small_gemm"),
    ("transform", r"dct|dft|fft|tube_kernel|tube_product|to_transform|from_transform|apply_transform|transform_tubes"),
    ("attention", r"softmax|attention|score"),
    ("LayerNorm", r"layer_norm|norm_forward|norm_backward|normalize"),
    ("activation", r"gelu|relu|activation|erf|tanh"),
    ("loss", r"cross_entropy"),
    ("optimizer", r"adamw|clip_grad|nn::step|parameter_list|zero_grad"),
    ("embedding and positions", r"embedding|positional|class_token|pooling|patch"),
    ("math library (exp, erf)", r"^__?(exp|erf|tanh|log)|libm|__ieee754"),
    ("elementwise (residuals, bias, scaling)", r"elementwise|axpy|add_bias|scale|residual|dropout"),
    ("copies and fills", r"memcpy|memmove|memset|copy|fill|assign|transpose"),
    ("allocation", r"malloc|free|operator new|operator delete|_int_|mmap|munmap|brk|page_fault|clear_page"),
]


def run_case(build, case, tmp):
    cache = pathlib.Path(build) / "CMakeCache.txt"
    settings = dict(re.findall(r"^(TPROD_\w+_OPTIMIZATION):STRING=(.*)$", cache.read_text(), re.M)) if cache.exists() else {}
    if settings.get("TPROD_INSTANCES_OPTIMIZATION", "-O2") != "-O2" or settings.get("TPROD_PROGRAMS_OPTIMIZATION"):
        sys.exit(f"profile-train-step: {build} was configured with CI's settings ({settings}); reconfigure it with "
                 "-DTPROD_INSTANCES_OPTIMIZATION=-O2 -DTPROD_PROGRAMS_OPTIMIZATION= to profile what users run")
    bench = pathlib.Path(build) / "bench" / "bench_nn"
    if not bench.exists():
        sys.exit(f"profile-train-step: {bench} not found (build the benchmarks: cmake --build {build} --target bench_nn)")
    data, out = tmp / "perf.data", tmp / "bench.json"
    # The case's own settings (MinTime, Repetitions) are part of its name, so the filter stops at the next "/".
    command = [str(bench), f"--benchmark_filter=^train_step/{re.escape(case)}/min_time", f"--benchmark_out={out}",
               "--benchmark_out_format=json"]
    subprocess.run(["perf", "record", "-F", "1999", "-o", str(data), "--"] + command, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    runs = [b for b in json.loads(out.read_text())["benchmarks"] if b.get("aggregate_name") == "median"]
    if not runs:
        sys.exit(f"profile-train-step: no benchmark train_step/{case} in {bench}")
    ms = runs[0]["real_time"] * {"ms": 1.0, "us": 1e-3, "ns": 1e-6, "s": 1e3}[runs[0]["time_unit"]]
    report = subprocess.run(["perf", "report", "-i", str(data), "--stdio", "--no-children", "--sort", "dso,sym",
                             "--percent-limit", "0", "-F", "overhead,dso,sym"], check=True, capture_output=True,
                            text=True).stdout
    shares = {name: 0.0 for name, _ in PHASES}
    shares["other"] = 0.0
    top_other = []
    for line in report.splitlines():
        m = re.match(r"\s*([\d.]+)%\s+(\S+)\s+\[(.)\]\s+(.*)", line)
        if not m:
            continue
        # An unresolved address is named after its library (libgomp ships without symbols).
        percent, dso, space, symbol = float(m.group(1)), m.group(2), m.group(3), m.group(4).strip()
        if symbol.startswith("0x"):
            symbol = f"{dso} {symbol}"
        phase = "threads (OpenMP runtime, waiting)" if space == "k" and re.search(r"futex|sched|schedule", symbol) \
            else next((name for name, pattern in PHASES if re.search(pattern, symbol, re.IGNORECASE)), None)
        if phase is None and space == "k":
            phase = "allocation" if re.search(r"page|mm_|alloc", symbol) else None
        if phase is None:
            phase = "other"
            top_other.append((percent, symbol))
        shares[phase] += percent
    total = sum(shares.values()) or 1.0
    return ms, {k: v / total for k, v in shares.items()}, sorted(top_other, reverse=True)[:5]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--cases", default="std_vit,tcp_vit,std/d128,t4/d128")
    args = parser.parse_args()
    cases = [c for c in args.cases.split(",") if c]
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for case in cases:
            print(f"profiling train_step/{case} ...", file=sys.stderr)
            results[case] = run_case(args.build, case, pathlib.Path(tmp))
    phases = [name for name, _ in PHASES] + ["other"]
    print("| phase | " + " | ".join(f"`{c}`" for c in cases) + " |")
    print("|---|" + "---:|" * len(cases))
    print("| **step (median)** | " + " | ".join(f"**{results[c][0]:.1f} ms**" for c in cases) + " |")
    for phase in phases:
        if all(results[c][1][phase] < 0.0005 for c in cases):
            continue
        cells = [f"{results[c][0] * results[c][1][phase]:.1f} ms ({100 * results[c][1][phase]:.0f} %)" for c in cases]
        print(f"| {phase} | " + " | ".join(cells) + " |")
    print()
    for c in cases:
        others = "; ".join(f"{p:.1f} % {s[:90]}" for p, s in results[c][2])
        print(f"- `{c}`, largest unclassified symbols: {others or 'none'}")


if __name__ == "__main__":
    main()
