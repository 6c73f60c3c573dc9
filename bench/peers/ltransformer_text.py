#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Training throughput of the standard text classifier of examples/ltransformer_text.cpp in PyTorch.

The same model as the example's "std" (nn::make_text_classifier with p = 1): token embedding, sinusoidal positions,
dropout 0.1, post-norm encoder layers with GELU and no dropout inside, mean pooling over the valid tokens, a linear
head; AdamW with gradient clipping at 1.0. It trains on random token ids with every position valid (the shape of
`ltransformer_text --throughput STEPS`), times every step including the first, and prints examples/s.

    /usr/bin/python3 bench/peers/ltransformer_text.py --steps 40 --threads 2
    python3 bench/peers/ltransformer_text.py --device cuda --steps 200      # on the GPU (FP32, TF32 off)
"""
import argparse
import math
import time

import torch
from torch import nn


class TextClassifier(nn.Module):
    def __init__(self, vocabulary, width, heads, hidden, layers, classes, max_length, dropout=0.1):
        super().__init__()
        self.embed = nn.Embedding(vocabulary, width)
        position = torch.arange(1, max_length + 1, dtype=torch.float32).unsqueeze(1)  # tprod counts from t = 1
        frequency = torch.pow(10000.0, -torch.arange(0, width, 2, dtype=torch.float32) / width)
        pe = torch.zeros(max_length, width)
        pe[:, 0::2] = torch.sin(position * frequency)
        pe[:, 1::2] = torch.cos(position * frequency)
        self.register_buffer("pe", pe)
        self.dropout = nn.Dropout(dropout)
        layer = nn.TransformerEncoderLayer(width, heads, hidden, dropout=0.0, activation="gelu", batch_first=True,
                                           norm_first=False)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = nn.Linear(width, classes)

    def forward(self, tokens, lengths):
        t = tokens.shape[1]
        valid = torch.arange(t, device=tokens.device).unsqueeze(0) < lengths.unsqueeze(1)  # B×T, True at a token
        x = self.dropout(self.embed(tokens) + self.pe[:t])
        x = self.encoder(x, src_key_padding_mask=~valid)
        pooled = (x * valid.unsqueeze(2)).sum(1) / lengths.unsqueeze(1)
        return self.head(pooled)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--width", type=int, default=128)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--hidden", type=int, default=512)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--max-length", type=int, default=128)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--vocabulary", type=int, default=20002)
    p.add_argument("--steps", type=int, default=40)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    a = p.parse_args()
    if min(a.width, a.heads, a.hidden, a.layers, a.max_length, a.batch, a.steps, a.threads) <= 0 or a.vocabulary < 3:
        p.error("every size must be positive (and the vocabulary at least 3)")
    if a.width % a.heads:
        p.error(f"--heads {a.heads} must divide --width {a.width}")
    torch.set_num_threads(a.threads)
    torch.manual_seed(1)
    if a.device == "cuda":
        if not torch.cuda.is_available():
            p.error("--device cuda: PyTorch finds no GPU")
        torch.backends.cuda.matmul.allow_tf32 = False  # FP32 throughout, as tprod's default
        torch.backends.cudnn.allow_tf32 = False
    device = torch.device(a.device)

    model = TextClassifier(a.vocabulary, a.width, a.heads, a.hidden, a.layers, 2, a.max_length).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    loss_fn = nn.CrossEntropyLoss()
    n = a.steps * a.batch
    tokens = torch.randint(2, a.vocabulary, (n, a.max_length), device=device)
    labels = torch.randint(0, 2, (n,), device=device)
    lengths = torch.full((a.batch,), a.max_length, dtype=torch.float32, device=device)
    encoder = sum(x.numel() for x in model.encoder.parameters())
    where = torch.cuda.get_device_name() if a.device == "cuda" else f"{torch.get_num_threads()} threads"
    print(f"pytorch {torch.__version__}, {where}: d = {a.width}, H = {a.heads}, "
          f"d_ff = {a.hidden}, {a.layers} layers, T = {a.max_length}, batch {a.batch}; "
          f"{sum(x.numel() for x in model.parameters())} parameters ({encoder} in the encoder)")

    model.train()
    start = time.perf_counter()
    for s in range(a.steps):
        rows = slice(s * a.batch, (s + 1) * a.batch)
        loss = loss_fn(model(tokens[rows], lengths), labels[rows])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if not math.isfinite(loss.item()):
            raise SystemExit(f"the loss is {loss.item()} at step {s}")
    seconds = time.perf_counter() - start
    print(f"throughput: {n / seconds:.1f} training examples/s ({a.steps} steps of {a.batch} x {a.max_length} tokens, "
          f"{seconds:.2f} s)")


if __name__ == "__main__":
    main()
