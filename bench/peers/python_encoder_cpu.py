#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""tprod.torch's encoder layer against the C++ layer it wraps and against PyTorch's own layer, on the CPU, in one
run: one training step's forward and backward pass of paper 000's layer at d = 768 (8 heads, d_ff = 3072, GELU),
float32, a batch of 8 sequences of 128 tokens.

- tprod.torch.LTransformerEncoderLayer.paper000(768, 8, 3072, p=4) under the DCT: X of shape (8, 128, 192, 4),
  Y.backward(dY) with the gradients into the nn.Parameters;
- the C++ call: bench_nn's encoder_layer/lproduct_p4/d768 (the same layer and shapes, forward + backward);
- torch.nn.TransformerEncoderLayer(768, 8, 3072, dropout=0, activation="gelu", batch_first=True), the standard
  layer a PyTorch user would otherwise train, on as many threads as tprod.

Timing: wall time of each step after two warm-up steps, the median of --runs steps (a third of them, at least
3, for PyTorch's standard layer, which takes seconds); tprod's layer is timed from Python and then at once in C++.

    PYTHONPATH=build/python python3 bench/peers/python_encoder_cpu.py --bench build/bench/bench_nn
    PYTHONPATH=build/python python3 bench/peers/python_encoder_cpu.py --bench build/bench/bench_nn --alternate 4

Exit status: 0; 2 without PyTorch or tprod.
"""
import argparse
import json
import sys

try:
    import torch
    import tprod
    import tprod.torch
    from peer_timing import benchmark_medians, median_seconds
except ImportError as e:  # pragma: no cover
    print(f"python_encoder_cpu: {e}", file=sys.stderr)
    sys.exit(2)

CASE = "encoder_layer/lproduct_p4/d768"


def median_step(step, runs):
    return median_seconds(step, runs, 2)


def cxx_median(bench, threads):
    """Median real time (s) of bench_nn's CASE, run now on this machine."""
    for name, seconds in benchmark_medians(bench, f"^{CASE}/", threads).items():
        if name.startswith(CASE + "/"):
            return seconds
    raise SystemExit(f"python_encoder_cpu: {bench} reported no median of {CASE}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bench", help="bench_nn, to time the C++ layer in the same run")
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--json", help="write the figures here")
    parser.add_argument("--alternate", type=int, default=0, metavar="K",
                        help="instead: K rounds of the Python median and then the C++ one (needs --bench), a ratio "
                             "each, without PyTorch's layer")
    args = parser.parse_args()

    threads = tprod.num_threads()
    torch.set_num_threads(threads)
    torch.manual_seed(1)
    batch, tokens, d, heads, d_ff, p = 8, 128, 768, 8, 3072, 4
    ours = tprod.torch.LTransformerEncoderLayer.paper000(d, heads, d_ff, p, activation="gelu")
    x = torch.randn(batch, tokens, d // p, p)
    dy = torch.randn(batch, tokens, d // p, p)
    theirs = torch.nn.TransformerEncoderLayer(d, heads, d_ff, dropout=0.0, activation="gelu", batch_first=True)
    xs, dys = torch.randn(batch, tokens, d), torch.randn(batch, tokens, d)

    def ours_step():
        ours.zero_grad(set_to_none=True)
        ours(x).backward(dy)

    def theirs_step():
        theirs.zero_grad(set_to_none=True)
        theirs(xs).backward(dys)

    if args.alternate:
        if not args.bench:
            raise SystemExit("python_encoder_cpu: --alternate needs --bench")
        for k in range(args.alternate):
            python_s, cxx_s = median_step(ours_step, args.runs), cxx_median(args.bench, threads)
            print(f"round {k + 1}: Python {python_s * 1e3:.1f} ms, C++ {cxx_s * 1e3:.1f} ms "
                  f"(Python / C++ {python_s / cxx_s:.2f})", flush=True)
        return 0

    # tprod's two figures first, one right after the other: this VM's speed drifts by 10-20 % over the minutes that
    # PyTorch's standard layer takes, more than the gap being measured
    fig = {"threads": threads, "python_s": median_step(ours_step, args.runs)}
    if args.bench:
        fig["cxx_s"] = cxx_median(args.bench, threads)
    fig["torch_standard_s"] = median_step(theirs_step, max(3, args.runs // 3))
    line = (f"threads: {threads}; encoder layer d = 768, p = 4, forward + backward: "
            f"Python {fig['python_s'] * 1e3:.1f} ms")
    if "cxx_s" in fig:
        line += f", C++ {fig['cxx_s'] * 1e3:.1f} ms (Python / C++ {fig['python_s'] / fig['cxx_s']:.2f})"
    line += (f"; PyTorch's standard layer {fig['torch_standard_s'] * 1e3:.1f} ms "
             f"(PyTorch / tprod {fig['torch_standard_s'] / fig['python_s']:.2f})")
    print(line)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(fig, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
