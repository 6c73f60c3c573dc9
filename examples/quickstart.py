#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""tprod from Python: the L-product and the L-SVD of NumPy arrays, then a PyTorch model with an L-linear layer
trained for a few steps. Run it after building the package (scripts/demo.sh does both):

    PYTHONPATH=build/python python3 examples/quickstart.py
"""
import numpy as np
import torch

import tprod
import tprod.torch

rng = np.random.default_rng(1)
A = rng.standard_normal((4, 3, 8))  # A in R^{4x3x8}: 8 frontal slices, tubes of length 8
B = rng.standard_normal((3, 2, 8))

C = tprod.product(A, B, tprod.dct())  # the cosine product, 4x2x8
I = tprod.identity(3, 8, tprod.dct())
print(f"C is {C.shape}; ||A *_L I - A||_F = {tprod.frobenius_norm(tprod.product(A, I, tprod.dct()) - A):.1e}")

svd = tprod.svd(A, tprod.dct(), rank=2)  # the tubal-rank-2 truncation
error = tprod.frobenius_norm(svd.reconstruct() - A) / tprod.frobenius_norm(A)
print(f"L-SVD: U {svd.U.shape}, S {svd.S.shape}, V {svd.V.shape}; rank-2 relative error {error:.3f}")

# A PyTorch model with an L-linear layer (8 tubes under the DCT), trained to match a fixed target layer.
torch.manual_seed(0)
target = tprod.torch.LLinear(6, 4, 8, tprod.dct())
model = torch.nn.Sequential(tprod.torch.LLinear(6, 4, 8, tprod.dct()), torch.nn.Tanh(),
                            tprod.torch.LLinear(4, 4, 8, tprod.dct()))
optimizer = torch.optim.Adam(model.parameters(), lr=0.02)
x = torch.randn(128, 6, 8)
with torch.no_grad():
    y = torch.tanh(target(x))
first = None
for step in range(1, 101):
    optimizer.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    first = first if first is not None else loss.item()
    if step in (1, 25, 50, 100):
        print(f"step {step:3d}: loss {loss.item():.4f}")
if not loss.item() < 0.5 * first:
    raise SystemExit(f"the loss did not fall: {first:.4f} -> {loss.item():.4f}")
