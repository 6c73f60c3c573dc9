#!/usr/bin/env python3
"""PyTorch's Transformer encoder layer on one GPU: the peer of bench_cuda's encoder_layer/{standard,lproduct_p4}/d768.

torch.nn.TransformerEncoderLayer(d_model=768, nhead=8, dim_feedforward=3072, activation="gelu", dropout=0,
batch_first=True, norm_first=False) — the post-norm layer of paper 000 (tprod's nn::paper000_config(768, 8, 3072, 1,
gelu)) — forward and backward on a batch of B = 8 sequences of T = 128 tokens, float32, TF32 off, as a user would
train it: the input requires its gradient, the layer's parameters get theirs, and the backward pass is
y.backward(dy) with a fixed random dy.

Timing: device time between two torch.cuda.Event on the current stream around each forward + backward, after
warm-up steps; the median of --runs steps. PyTorch's caching allocator keeps the temporaries' memory, as bench_cuda
keeps its pool.

    python3 bench/peers/torch_encoder_gpu.py --json torch_encoder_gpu.json

Exit status: 0; 2 without PyTorch; 77 without a CUDA device (bench_cuda's "skipped").
"""
import argparse
import json
import statistics
import sys

BATCH, LENGTH, WIDTH, HEADS, HIDDEN = 8, 128, 768, 8, 3072


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", help="write the results here")
    parser.add_argument("--runs", type=int, default=25, help="timed steps (default 25)")
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
    layer = torch.nn.TransformerEncoderLayer(WIDTH, HEADS, HIDDEN, dropout=0.0, activation="gelu", batch_first=True,
                                             norm_first=False, device=device, dtype=torch.float32)
    layer.train()
    x = torch.randn(BATCH, LENGTH, WIDTH, device=device, requires_grad=True)
    dy = torch.randn(BATCH, LENGTH, WIDTH, device=device)

    def step():
        layer.zero_grad(set_to_none=False)
        x.grad = None
        layer(x).backward(dy)

    for _ in range(3):
        step()
    torch.cuda.synchronize()
    times = []
    for _ in range(max(args.runs, 5)):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        step()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    median = statistics.median(times)
    name = torch.cuda.get_device_name()
    print(f"pytorch {torch.__version__} on {name}; float32, TF32 off, median of {len(times)} steps after 3 warm-up "
          f"steps")
    print(f"torch_encoder_layer/standard/d768 (forward + backward, B={BATCH}, T={LENGTH}): median {median:.3f} ms, "
          f"min {min(times):.3f} ms, {BATCH * LENGTH / (median * 1e-3):.0f} tokens/s")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": name, "torch": torch.__version__,
                       "cases": [{"name": "torch_encoder_layer/standard/d768", "median_ms": median,
                                  "min_ms": min(times), "runs": len(times)}]}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
