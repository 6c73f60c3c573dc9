#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""tprod's Python package against the C++ call it wraps and against the same L-product written in PyTorch, on the
CPU, in one run.

- call overhead: tprod.product of two 4x4x4 float64 tensors (median time per call) beside bench_algebra's
  lproduct/dct/m4_l4_n4_p4 (the C++ call on the same shapes);
- the product of two 256x256x16 float32 tensors under the DCT: tprod.product from Python (Fortran-ordered
  arrays, read in place), the C++ call (bench_algebra's lproduct/dct/s256_p16), and PyTorch written as a user
  would: slices as a (P, S, S) batch, the transform one matmul with the P x P DCT matrix, one torch.bmm, the
  inverse matmul; PyTorch on as many threads as tprod.

Timing: wall time of each call after warm-up, the median of --runs runs. Before timing, PyTorch's product is
checked against tprod's.

    PYTHONPATH=build/python python3 bench/peers/python_lproduct_cpu.py --bench build/bench/bench_algebra

Exit status: 0; 1 when the check fails; 2 without PyTorch or tprod.
"""
import argparse
import json
import math
import sys

try:
    import numpy as np
    import torch
    import tprod
    from peer_timing import benchmark_medians, median_seconds
except ImportError as e:  # pragma: no cover
    print(f"python_lproduct_cpu: {e}", file=sys.stderr)
    sys.exit(2)


def dct_matrix(p, dtype):
    k = torch.arange(p, dtype=torch.float64)[:, None]
    j = torch.arange(p, dtype=torch.float64)[None, :]
    c = math.sqrt(2.0 / p) * torch.cos(math.pi * (2 * j + 1) * k / (2 * p))
    c[0] /= math.sqrt(2.0)
    return c.to(dtype)


def torch_lproduct(a, b, phi):
    """a: (P, S, S) slices, b likewise; L(a) = phi applied along the slice index."""
    p = a.shape[0]
    ahat = (phi @ a.reshape(p, -1)).reshape(a.shape)
    bhat = (phi @ b.reshape(p, -1)).reshape(b.shape)
    chat = torch.bmm(ahat, bhat)
    return (phi.T @ chat.reshape(p, -1)).reshape(chat.shape)


def cxx_medians(bench, names, threads):
    """Median real time (s) of bench_algebra's cases, run now on this machine."""
    pattern = "^(" + "|".join(names) + ")/real_time$"  # the cases time wall clock (UseRealTime)
    found = benchmark_medians(bench, pattern, threads, ["--benchmark_repetitions=5"])
    return {name.removesuffix("/real_time"): seconds for name, seconds in found.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bench", help="bench_algebra, to time the C++ calls in the same run")
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--json", help="write the figures here")
    args = parser.parse_args()

    threads = tprod.num_threads()
    torch.set_num_threads(threads)
    rng = np.random.default_rng(1)
    small_a, small_b = (np.asfortranarray(rng.standard_normal((4, 4, 4))) for _ in range(2))
    s, p = 256, 16
    a = np.asfortranarray(rng.standard_normal((s, s, p)).astype(np.float32))
    b = np.asfortranarray(rng.standard_normal((s, s, p)).astype(np.float32))
    ta = torch.from_numpy(np.ascontiguousarray(np.moveaxis(a, 2, 0)))  # (P, S, S): slice k is ta[k]
    tb = torch.from_numpy(np.ascontiguousarray(np.moveaxis(b, 2, 0)))
    phi = dct_matrix(p, torch.float32)

    c = tprod.product(a, b, tprod.dct())
    ct = torch_lproduct(ta, tb, phi).numpy()
    if not np.allclose(np.moveaxis(c, 2, 0), ct, atol=2e-3 * np.abs(c).max()):
        print("python_lproduct_cpu: PyTorch's product differs from tprod's", file=sys.stderr)
        return 1

    L = tprod.dct()
    fig = {
        "threads": threads,
        "python_small_s": median_seconds(lambda: tprod.product(small_a, small_b, L), args.runs * 10, max(3, args.runs)),
        "python_s256_p16_s": median_seconds(lambda: tprod.product(a, b, L), args.runs, max(3, args.runs // 10)),
        "torch_s256_p16_s": median_seconds(lambda: torch_lproduct(ta, tb, phi), args.runs, max(3, args.runs // 10)),
    }
    if args.bench:
        cxx = cxx_medians(args.bench, ["lproduct/dct/m4_l4_n4_p4", "lproduct/dct/s256_p16"], threads)
        fig["cxx_small_s"] = cxx["lproduct/dct/m4_l4_n4_p4"]
        fig["cxx_s256_p16_s"] = cxx["lproduct/dct/s256_p16"]
    print(f"threads: {threads}")
    print(f"4x4x4 float64 product: Python {fig['python_small_s'] * 1e6:.2f} us" +
          (f", C++ {fig['cxx_small_s'] * 1e6:.2f} us, overhead {(fig['python_small_s'] - fig['cxx_small_s']) * 1e6:.2f} us"
           if "cxx_small_s" in fig else ""))
    line = f"256x256x16 float32 product: Python {fig['python_s256_p16_s'] * 1e3:.3f} ms"
    if "cxx_s256_p16_s" in fig:
        line += f", C++ {fig['cxx_s256_p16_s'] * 1e3:.3f} ms (Python / C++ {fig['python_s256_p16_s'] / fig['cxx_s256_p16_s']:.2f})"
    line += (f", PyTorch {fig['torch_s256_p16_s'] * 1e3:.3f} ms "
             f"(PyTorch / tprod {fig['torch_s256_p16_s'] / fig['python_s256_p16_s']:.2f})")
    print(line)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(fig, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
