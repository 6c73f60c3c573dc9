# SPDX-License-Identifier: Apache-2.0
"""Checkpoint folders in Hugging Face's layout, written and read here from the safetensors format's definition (an
8-byte little-endian header length, a JSON header of names, dtypes, shapes and byte ranges, then the data in C
order), for the tests of tprod's published architectures."""
import json
import struct

import numpy as np
import torch

DTYPES = {"F64": (torch.float64, torch.int64), "F32": (torch.float32, torch.int32),
          "F16": (torch.float16, torch.int16), "BF16": (torch.bfloat16, torch.int16)}


def safetensors_bytes(tensors, dtype):
    """The safetensors file of a dict of tensors, each stored as dtype (C order, little-endian)."""
    header, blobs, offset = {"__metadata__": {"format": "pt"}}, [], 0
    for name, t in tensors.items():
        stored, bits = DTYPES[dtype]
        blob = t.to(stored).contiguous().view(bits).numpy().tobytes()  # little-endian, as the host
        header[name] = {"dtype": dtype, "shape": list(t.shape), "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + b"".join(blobs)


def read_safetensors(path):
    """name -> (dtype, shape, float64 tensor) of a safetensors file, read here."""
    raw = path.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    header.pop("__metadata__", None)
    out = {}
    for name, e in header.items():
        stored, bits = DTYPES[e["dtype"]]
        begin, end = e["data_offsets"]
        data = bytearray(raw[8 + n + begin:8 + n + end])
        t = torch.frombuffer(data, dtype=bits).view(stored).reshape(e["shape"]) if data else torch.zeros(e["shape"])
        out[name] = (e["dtype"], tuple(e["shape"]), t.to(torch.float64))
    return out


def write_folder(folder, weights, config, dtype="F32"):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(config))
    (folder / "model.safetensors").write_bytes(safetensors_bytes(weights, dtype))
    return folder


def rounded(weights, dtype):
    """The weights as the file holds them (rounded to dtype), in double."""
    return {k: v.to(DTYPES[dtype][0]).to(torch.float64) for k, v in weights.items()}


def assert_close(ours, reference, bits=1e-12):
    scale = max(1.0, float(np.abs(reference).max()))
    assert ours.shape == reference.shape
    assert float(np.abs(ours - reference).max()) <= bits * scale
