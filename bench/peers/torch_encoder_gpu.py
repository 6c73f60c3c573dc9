#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""PyTorch's encoder layers on one GPU: the peers of bench_cuda's encoder_layer/{standard,lproduct_p4}/d768.

torch.nn.TransformerEncoderLayer(d_model=768, nhead=8, dim_feedforward=3072, activation="gelu", dropout=0,
batch_first=True, norm_first=False) — the post-norm layer of paper 000 (tprod's nn::paper000_config(768, 8, 3072, 1,
gelu)) — forward and backward on a batch of B = 8 sequences of T = 128 tokens, float32, TF32 off, as a user would
train it: the input requires its gradient, the layer's parameters get theirs, and the backward pass is
y.backward(dy) with a fixed random dy.

Beside it, torch_encoder_layer/lproduct_p4/d768: the same layer under the L-product with p = 4 (paper 000's
L-Transformer layer, tprod's nn::paper000_config(768, 8, 3072, 4, gelu) under the DCT) written in PyTorch as a user
would: the activations kept as a (p, B, T, d_s) batch of frontal slices (d_s = 192), L and L⁻¹ one (p×p) matmul
with the orthonormal DCT-II matrix Φ and Φᵀ, the slice-wise projections one batched matmul over p (Ŵ stored per
slice, as tprod stores it), h = 2 heads of d_h = 96 per slice with torch's scaled_dot_product_attention over
(p·B, h) sequences, the FFN's 768 hidden units per slice, and paper 000's original-domain LayerNorm (each
(token, slice) normalized over its d_s features, Γ and ℬ per slice); autograd for the backward pass.

Timing: device time between two torch.cuda.Event on the current stream around each forward + backward, after
10 warm-up steps; the median (and the minimum) of --runs steps. PyTorch's caching allocator keeps the temporaries' memory, as bench_cuda
keeps its pool.

    python3 bench/peers/torch_encoder_gpu.py --json torch_encoder_gpu.json

Exit status: 0; 2 without PyTorch; 77 without a CUDA device (bench_cuda's "skipped").
"""
import argparse
import json
import math
import statistics
import sys

BATCH, LENGTH, WIDTH, HEADS, HIDDEN = 8, 128, 768, 8, 3072
# Untimed steps first: with 3, the first case of a fresh process still ran 30 % slower than later runs (cuBLAS's
# heuristics and the caching allocator settle over the first steps).
WARMUP = 10


def lproduct_layer(torch, p, device):
    """Paper 000's post-norm L-Transformer layer with p slices, as a module (see the file's comment)."""
    F = torch.nn.functional
    ds, heads, hidden = WIDTH // p, HEADS // p, HIDDEN // p
    j = torch.arange(p, dtype=torch.float64).unsqueeze(1)
    k = torch.arange(p, dtype=torch.float64).unsqueeze(0)
    scale = torch.full((p, 1), math.sqrt(2.0 / p), dtype=torch.float64)
    scale[0, 0] = math.sqrt(1.0 / p)
    phi = (scale * torch.cos(math.pi * (2 * k + 1) * j / (2 * p))).to(torch.float32).to(device)

    class Layer(torch.nn.Module):
        def __init__(self):
            super().__init__()

            def weight(*shape, fan_in):
                return torch.nn.Parameter((torch.rand(*shape, device=device) * 2 - 1) / math.sqrt(fan_in))

            self.w_qkv, self.b_qkv = weight(p, ds, 3 * ds, fan_in=ds), weight(p, 1, 3 * ds, fan_in=ds)
            self.w_o, self.b_o = weight(p, ds, ds, fan_in=ds), weight(p, 1, ds, fan_in=ds)
            self.w1, self.b1 = weight(p, ds, hidden, fan_in=ds), weight(p, 1, hidden, fan_in=ds)
            self.w2, self.b2 = weight(p, hidden, ds, fan_in=hidden), weight(p, 1, ds, fan_in=hidden)
            self.gamma = torch.nn.Parameter(torch.ones(2, p, 1, ds, device=device))
            self.beta = torch.nn.Parameter(torch.zeros(2, p, 1, ds, device=device))

        @staticmethod
        def along_tubes(z, x):  # x: (p, rows, d_s); slice j of the result is Σ_k Z[j, k]·x[k]
            return (z @ x.reshape(p, -1)).reshape(x.shape)

        def norm(self, x, i):  # original-domain LayerNorm of every (token, slice) over its d_s features
            return F.layer_norm(x, (ds,)) * self.gamma[i] + self.beta[i]

        def forward(self, x):  # x: (p, B·T, d_s)
            xh = self.along_tubes(phi, x)
            qkv = torch.baddbmm(self.b_qkv, xh, self.w_qkv)  # (p, B·T, 3 d_s)
            q, k_, v = (t.reshape(p, BATCH, LENGTH, heads, ds // heads).transpose(2, 3).reshape(
                p * BATCH, heads, LENGTH, ds // heads) for t in qkv.split(ds, dim=2))
            o = F.scaled_dot_product_attention(q, k_, v)
            o = o.reshape(p, BATCH, heads, LENGTH, ds // heads).transpose(2, 3).reshape(p, BATCH * LENGTH, ds)
            x1 = self.norm(x + self.along_tubes(phi.T, torch.baddbmm(self.b_o, o, self.w_o)), 0)
            h = F.gelu(torch.baddbmm(self.b1, self.along_tubes(phi, x1), self.w1))
            return self.norm(x1 + self.along_tubes(phi.T, torch.baddbmm(self.b2, h, self.w2)), 1)

    return Layer(), (p, BATCH * LENGTH, ds)


def time_steps(torch, layer, shape, runs):
    """Median and minimum device time (ms) of forward + backward steps, after WARMUP untimed steps."""
    x = torch.randn(*shape, device="cuda", requires_grad=True)
    dy = torch.randn(*shape, device="cuda")

    def step():
        layer.zero_grad(set_to_none=False)
        x.grad = None
        layer(x).backward(dy)

    for _ in range(WARMUP):
        step()
    torch.cuda.synchronize()
    times = []
    for _ in range(max(runs, 5)):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        step()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    return statistics.median(times), min(times), len(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", help="write the results here")
    parser.add_argument("--runs", type=int, default=50, help="timed steps (default 50)")
    args = parser.parse_args()
    try:
        import torch
    except ImportError:
        print("torch_encoder_gpu: PyTorch is not installed", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("torch_encoder_gpu: no CUDA device")
        return 77
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.manual_seed(1)
    device = torch.device("cuda")
    standard = torch.nn.TransformerEncoderLayer(WIDTH, HEADS, HIDDEN, dropout=0.0, activation="gelu",
                                                batch_first=True, norm_first=False, device=device,
                                                dtype=torch.float32)
    p4, p4_shape = lproduct_layer(torch, 4, device)
    cases = [("torch_encoder_layer/standard/d768", standard, (BATCH, LENGTH, WIDTH)),
             ("torch_encoder_layer/lproduct_p4/d768", p4, p4_shape)]
    name = torch.cuda.get_device_name()
    print(f"pytorch {torch.__version__} on {name}; float32, TF32 off, forward + backward, B={BATCH}, T={LENGTH}")
    results = []
    for case, layer, shape in cases:
        layer.train()
        median, least, runs = time_steps(torch, layer, shape, args.runs)
        print(f"{case}: median {median:.3f} ms, min {least:.3f} ms of {runs} steps, "
              f"{BATCH * LENGTH / (median * 1e-3):.0f} tokens/s")
        results.append({"name": case, "median_ms": median, "min_ms": least, "runs": runs})
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": name, "torch": torch.__version__, "cases": results}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
