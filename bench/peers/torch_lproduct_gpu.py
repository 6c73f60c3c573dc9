#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The L-product under the DCT in PyTorch on one GPU: the peer of bench_cuda's lproduct/dct/s{S}_p{P}.

C = A *_L B = L^-1(L(A) △ L(B)) for float32 A, B of S×S×P, S ∈ {256, 1024, 4096}, P ∈ {4, 16, 64}, with L the
orthonormal DCT-II along the tubes as a P×P matrix, (Φ)_{jk} = sqrt((2 − δ_{j0})/P)·cos(π(2k+1)j/(2P)) (tprod::dct,
include/tprod/transform/dct.hpp), written as a user would in PyTorch: a tensor is kept as a (P, S, S) batch of
frontal slices (slice k is A[k]), so that the transform is one (P×P)·(P, S·S) matmul, the slice products one
torch.bmm and the inverse one matmul with Φᵀ. FP32 throughout: TF32 is off (checked: the self-check's tolerance is
below TF32's error).

Timing: device time between two torch.cuda.Event on the current stream around each product, after warm-up
runs; the median of --runs (≥ 20) runs. PyTorch's caching allocator keeps the temporaries' memory, as bench_cuda
keeps its pool. GFLOP/s counts what bench_cuda counts: 2·S³·P (slice GEMMs) + 2·3·S²·P² (three transforms).
Before timing, the product is checked at a small non-square shape against a float64 CPU loop over the slices.

    python3 bench/peers/torch_lproduct_gpu.py --json torch_lproduct_gpu.json
    python3 bench/peers/torch_lproduct_gpu.py --quick          # S = 256 only

Exit status: 0; 1 when the self-check fails; 2 without PyTorch; 77 without a CUDA device (bench_cuda's "skipped").
"""
import argparse
import json
import math
import statistics
import sys
import warnings

SIZES = (256, 1024, 4096)
TUBES = (4, 16, 64)


def dct_matrix(torch, p, dtype, device):
    """Φ_p, the orthonormal DCT-II (row j: frequency j), computed in float64 then cast."""
    j = torch.arange(p, dtype=torch.float64).unsqueeze(1)
    k = torch.arange(p, dtype=torch.float64).unsqueeze(0)
    scale = torch.full((p, 1), math.sqrt(2.0 / p), dtype=torch.float64)
    scale[0, 0] = math.sqrt(1.0 / p)
    phi = scale * torch.cos(math.pi * (2 * k + 1) * j / (2 * p))
    return phi.to(dtype=dtype, device=device)


def tube_transform(z, x):
    """x ×₃ Z for x a (P, m, n) batch of slices: slice j of the result is Σ_k Z[j, k]·x[k]."""
    p, m, n = x.shape
    return (z @ x.reshape(p, m * n)).reshape(p, m, n)


def lproduct(phi, a, b):
    """C = A *_L B for a (P, m, l), b (P, l, n): two forward transforms, one bmm, the inverse (Φ⁻¹ = Φᵀ)."""
    return tube_transform(phi.T, tube_transform(phi, a).bmm(tube_transform(phi, b)))


def lproduct_reference(phi, a, b):
    """The definition in float64 on the CPU, one slice at a time (phi, a, b: float64 CPU tensors)."""
    p = a.shape[0]
    ahat = [sum(phi[j, k] * a[k] for k in range(p)) for j in range(p)]
    bhat = [sum(phi[j, k] * b[k] for k in range(p)) for j in range(p)]
    chat = [ahat[j] @ bhat[j] for j in range(p)]
    return [sum(phi[k, j] * chat[k] for k in range(p)) for j in range(p)]  # Φᵀ: row j of Φᵀ is column j of Φ


def self_check(torch, device):
    """The GPU float32 product against the float64 CPU loop at m = 48, l = 96, n = 40, P = 6. Returns the relative
    Frobenius error; FP32 gives about 1e-7, TF32 about 3e-4, so a tolerance of 2e-5 also proves TF32 is off."""
    g = torch.Generator().manual_seed(7)
    p, m, l, n = 6, 48, 96, 40
    a = torch.rand(p, m, l, generator=g, dtype=torch.float64) * 2 - 1
    b = torch.rand(p, l, n, generator=g, dtype=torch.float64) * 2 - 1
    phi = dct_matrix(torch, p, torch.float64, "cpu")
    orthogonality = (phi @ phi.T - torch.eye(p, dtype=torch.float64)).abs().max().item()
    if orthogonality > 1e-12:
        raise SystemExit(f"self-check: Φ·Φᵀ differs from I by {orthogonality:.3g}")
    expect = torch.stack(lproduct_reference(phi, a, b))
    got = lproduct(phi.to(device, torch.float32), a.to(device, torch.float32), b.to(device, torch.float32))
    torch.cuda.synchronize()
    return ((got.double().cpu() - expect).norm() / expect.norm()).item()


def flop_count(s, p):
    return 2.0 * s**3 * p + 2.0 * 3 * s * s * p * p


def time_case(torch, device, s, p, runs, warmup):
    """Device milliseconds of `runs` products of S×S×P float32 tensors (after `warmup` untimed ones)."""
    g = torch.Generator(device=device).manual_seed(1000 * s + p)
    a = torch.rand(p, s, s, generator=g, device=device, dtype=torch.float32) * 2 - 1
    b = torch.rand(p, s, s, generator=g, device=device, dtype=torch.float32) * 2 - 1
    phi = dct_matrix(torch, p, torch.float32, device)
    for _ in range(warmup):
        c = lproduct(phi, a, b)
    del c
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(runs):
        start.record()
        c = lproduct(phi, a, b)
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
        del c
    return times


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json", metavar="PATH", help="write the results as JSON to PATH")
    ap.add_argument("--quick", action="store_true", help="S = 256 only")
    ap.add_argument("--runs", type=int, default=25, help="timed runs per case (at least 20; default 25)")
    ap.add_argument("--warmup", type=int, default=3, help="untimed runs per case first (default 3)")
    args = ap.parse_args()
    if args.runs < 20:
        ap.error("--runs must be at least 20 (the median of fewer is not reported)")
    if args.warmup < 1:
        ap.error("--warmup must be at least 1 (the first run pays cuBLAS's setup)")

    try:
        import torch
    except ImportError as e:
        print(f"torch_lproduct_gpu: PyTorch is not installed ({e}); pip install torch, or use a Python that has it",
              file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print(f"torch_lproduct_gpu: no CUDA device is available to PyTorch {torch.__version__} "
              f"(built for CUDA {torch.version.cuda}); nothing is timed")
        return 77
    # FP32 GEMMs, as bench_cuda's untagged cases. (PyTorch ≥ 2.9 warns that these flags give way to
    # fp32_precision; they still set it, and the self-check below would catch TF32.)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    device = torch.device("cuda")
    name = torch.cuda.get_device_name(device)
    print(f"pytorch {torch.__version__} (CUDA {torch.version.cuda}) on {name}; float32, TF32 off, "
          f"median of {args.runs} runs after {args.warmup} warm-up runs")

    error = self_check(torch, device)
    ok = error <= 2e-5
    print(f"self-check (m48 l96 n40 p6 against a float64 CPU loop): relative error {error:.2e} "
          f"{'ok' if ok else 'FAILED (tolerance 2e-5; TF32 on?)'}")

    sizes = (256,) if args.quick else SIZES
    results = []
    print(f"{'case':<34}{'median ms':>12}{'min ms':>12}{'GFLOP/s':>12}")
    for s in sizes:
        for p in TUBES:
            case = f"torch_lproduct/dct/s{s}_p{p}"
            entry = {"name": case, "S": s, "P": p, "runs": args.runs, "flop": flop_count(s, p)}
            try:
                times = time_case(torch, device, s, p, args.runs, args.warmup)
            except torch.cuda.OutOfMemoryError as e:
                torch.cuda.empty_cache()
                entry["error"] = f"out of device memory: {str(e).splitlines()[0]}"
                print(f"{case:<34}  skipped: {entry['error']}")
                results.append(entry)
                continue
            median = statistics.median(times)
            entry.update(median_ms=median, min_ms=min(times), max_ms=max(times),
                         **{"GFLOP/s": entry["flop"] / (median * 1e-3) * 1e-9})
            print(f"{case:<34}{median:>12.4f}{min(times):>12.4f}{entry['GFLOP/s']:>12.1f}")
            results.append(entry)
            torch.cuda.empty_cache()

    if args.json:
        report = {
            "context": {"torch": torch.__version__, "cuda": torch.version.cuda, "device": name, "dtype": "float32",
                        "tf32": False, "runs": args.runs, "warmup": args.warmup,
                        "self_check_relative_error": error, "self_check_ok": ok,
                        "flop": "2*S^3*P + 2*3*S^2*P^2"},
            "benchmarks": results,
        }
        with open(args.json, "w") as f:
            json.dump(report, f, indent=2)
        print(f"wrote {args.json}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
