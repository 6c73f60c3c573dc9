#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A GPT-2-small-shaped checkpoint (124M parameters, random weights N(0, 0.02²), F32, written here in GPT2Model's
layout) through tprod.GPT2, on the CPU, in one run:

- loading: tprod.GPT2.load(folder, float32) beside reading the file's bytes (Python's read() of the whole file,
  both with the file in the page cache, as after the first load);
- the forward pass on 1 x 128 tokens: tprod.GPT2.logits beside the same GPT-2 written in PyTorch (float32, the
  definition python/tests/test_gpt2.py checks tprod against, on as many threads as tprod), after one warm-up each.
  The two logits are compared first.

    PYTHONPATH=build/python python3 bench/peers/python_gpt2_cpu.py [--runs 5] [--threads 2]

Exit status: 0; 1 when the logits differ; 2 without PyTorch or a tprod built with tprod::io.
"""
import argparse
import json
import math
import os
import pathlib
import struct
import sys
import tempfile

try:
    import numpy as np
    import torch
    import tprod
    from peer_timing import median_seconds
except ImportError as e:  # pragma: no cover
    print(f"python_gpt2_cpu: {e}", file=sys.stderr)
    sys.exit(2)

CONFIG = {"model_type": "gpt2", "vocab_size": 50257, "n_positions": 1024, "n_embd": 768, "n_layer": 12,
          "n_head": 12, "activation_function": "gelu_new", "layer_norm_epsilon": 1e-5}


def weights(c, seed):
    g = torch.Generator().manual_seed(seed)
    d, inner = c["n_embd"], 4 * c["n_embd"]
    r = lambda *shape: 0.02 * torch.randn(*shape, generator=g)  # noqa: E731
    w = {"wte.weight": r(c["vocab_size"], d), "wpe.weight": r(c["n_positions"], d),
         "ln_f.weight": 1 + r(d), "ln_f.bias": r(d)}
    for i in range(c["n_layer"]):
        h = f"h.{i}."
        w |= {h + "ln_1.weight": 1 + r(d), h + "ln_1.bias": r(d), h + "attn.c_attn.weight": r(d, 3 * d),
              h + "attn.c_attn.bias": r(3 * d), h + "attn.c_proj.weight": r(d, d), h + "attn.c_proj.bias": r(d),
              h + "ln_2.weight": 1 + r(d), h + "ln_2.bias": r(d), h + "mlp.c_fc.weight": r(d, inner),
              h + "mlp.c_fc.bias": r(inner), h + "mlp.c_proj.weight": r(inner, d), h + "mlp.c_proj.bias": r(d)}
    return w


def write_safetensors(path, tensors):
    """F32, C order, streamed tensor by tensor."""
    header, offset = {}, 0
    for name, t in tensors.items():
        header[name] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [offset, offset + 4 * t.numel()]}
        offset += 4 * t.numel()
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        for t in tensors.values():
            f.write(t.contiguous().numpy().tobytes())


def torch_gpt2(w, c, ids):
    d, heads = c["n_embd"], c["n_head"]
    dh = d // heads
    F = torch.nn.functional
    T = ids.shape[1]
    x = w["wte.weight"][ids] + w["wpe.weight"][:T]
    mask = torch.full((T, T), float("-inf")).triu(1)
    for i in range(c["n_layer"]):
        h = f"h.{i}."
        a = F.layer_norm(x, (d,), w[h + "ln_1.weight"], w[h + "ln_1.bias"], 1e-5)
        q, k, v = torch.addmm(w[h + "attn.c_attn.bias"], a.view(-1, d), w[h + "attn.c_attn.weight"]).split(d, dim=-1)
        q, k, v = (t.reshape(1, T, heads, dh).transpose(1, 2) for t in (q, k, v))
        scores = (q @ k.transpose(-1, -2)) / math.sqrt(dh) + mask  # Debian's torch 1.13 has no fused SDPA
        y = (scores.softmax(-1) @ v).transpose(1, 2).reshape(T, d)
        x = x + torch.addmm(w[h + "attn.c_proj.bias"], y, w[h + "attn.c_proj.weight"])
        m = F.layer_norm(x, (d,), w[h + "ln_2.weight"], w[h + "ln_2.bias"], 1e-5).view(-1, d)
        m = F.gelu(torch.addmm(w[h + "mlp.c_fc.bias"], m, w[h + "mlp.c_fc.weight"]), approximate="tanh")
        x = x + torch.addmm(w[h + "mlp.c_proj.bias"], m, w[h + "mlp.c_proj.weight"])
    x = F.layer_norm(x, (d,), w["ln_f.weight"], w["ln_f.bias"], 1e-5)
    return x.view(-1, d) @ w["wte.weight"].T


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--threads", type=int, default=tprod.num_threads())
    ap.add_argument("--tokens", type=int, default=128)
    args = ap.parse_args()
    if not hasattr(tprod, "GPT2"):
        print("python_gpt2_cpu: this tprod has no GPT2 (built without tprod::io)", file=sys.stderr)
        return 2
    tprod.set_num_threads(args.threads)
    torch.set_num_threads(args.threads)
    w = weights(CONFIG, 1)
    params = sum(t.numel() for t in w.values())
    with tempfile.TemporaryDirectory() as scratch:
        folder = pathlib.Path(scratch)
        (folder / "config.json").write_text(json.dumps(CONFIG))
        write_safetensors(folder / "model.safetensors", w)
        size = (folder / "model.safetensors").stat().st_size

        def read_bytes():
            with open(folder / "model.safetensors", "rb") as f:
                return len(f.read())

        read_s = median_seconds(read_bytes, 3, 1)
        load_s = median_seconds(lambda: tprod.GPT2.load(folder, dtype=np.float32), 3, 1)
        model = tprod.GPT2.load(folder, dtype=np.float32)
    ids = torch.randint(0, CONFIG["vocab_size"], (1, args.tokens), generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        reference = torch_gpt2(w, CONFIG, ids).numpy()
        ours = model.logits(ids.numpy())[0]
        err = float(np.abs(ours - reference).max())
        if not err <= 1e-3 * max(1.0, float(np.abs(reference).max())):
            print(f"python_gpt2_cpu: logits differ by {err}", file=sys.stderr)
            return 1
        tprod_s = median_seconds(lambda: model.logits(ids.numpy()), args.runs, 1)
        torch_s = median_seconds(lambda: torch_gpt2(w, CONFIG, ids), args.runs, 1)
    print(f"GPT-2 small shape: {params / 1e6:.1f}M parameters, {size / 2**20:.0f} MiB F32; threads {args.threads}")
    print(f"load: tprod.GPT2.load {load_s:.3f} s, read() of the bytes {read_s:.3f} s, ratio {load_s / read_s:.2f}"
          f" (target < 2)")
    print(f"forward 1 x {args.tokens}: tprod {tprod_s * 1e3:.1f} ms, PyTorch {torch_s * 1e3:.1f} ms, "
          f"tprod / PyTorch {tprod_s / torch_s:.2f} (target <= 1.2); max |logit difference| {err:.2e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
