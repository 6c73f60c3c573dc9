# SPDX-License-Identifier: Apache-2.0
"""The safetensors layout as Python sees it, with only json and struct (no numpy, no safetensors package).

  safetensors_python.py write FILE   writes the file test_safetensors.cpp reads back
  safetensors_python.py check FILE   checks the file test_safetensors.cpp wrote; exit status 1 and a message if wrong
  safetensors_python.py double SRC DST   reads a model checkpoint (F32/F64 tensors), writes DST with every value
                                         doubled, the same names, shapes and metadata plus written_by=python

Values encode their C-order indices, code(i, j, k) = 100 i + 10 j + k, so any axis mix-up shows.
"""
import json
import struct
import sys


def code3(m, n, p):
    return [100 * i + 10 * j + k for i in range(m) for j in range(n) for k in range(p)]  # C order


def write(path):
    tensors = [  # name, dtype, struct format, shape, C-order values
        ("model.embed.weight", "F32", "f", [2, 3, 4], code3(2, 3, 4)),
        ("model.head.bias", "F64", "d", [3], [0.5, -1.25, 3.0]),
        ("model.steps", "I64", "q", [], [7]),
    ]
    header, data = {"__metadata__": {"format": "pt", "written_by": "python"}}, b""
    for name, dtype, fmt, shape, values in tensors:
        raw = struct.pack("<%d%s" % (len(values), fmt), *values)
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    text = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + data)


def check(path):
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8 : 8 + n])
    data = blob[8 + n :]

    def values(name, dtype, fmt, shape):
        entry = header[name]
        assert entry["dtype"] == dtype, (name, entry["dtype"])
        assert entry["shape"] == shape, (name, entry["shape"])
        begin, end = entry["data_offsets"]
        return list(struct.unpack("<%d%s" % ((end - begin) // struct.calcsize(fmt), fmt), data[begin:end]))

    assert header["__metadata__"] == {"epoch": "3"}, header.get("__metadata__")
    # A tprod::tensor3 of shape 2x3x4 with A(i, j, k) = code(i, j, k), stored as [m, n, p] in C order.
    assert values("enc.0.w", "F32", "f", [2, 3, 4]) == code3(2, 3, 4)
    assert values("enc.0.b", "F64", "d", [5]) == [0.0, 0.5, 1.0, 1.5, 2.0]
    assert values("enc.0.ids", "I32", "i", [2, 2]) == [1, 2, 3, 4]
    assert n % 8 == 0, "header length %d is not a multiple of 8" % n


def double(src, dst):
    with open(src, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8 : 8 + n])
    data = blob[8 + n :]
    out_header, out_data = {"__metadata__": dict(header.get("__metadata__", {}), written_by="python")}, b""
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        fmt = {"F32": "f", "F64": "d"}[entry["dtype"]]
        begin, end = entry["data_offsets"]
        count = (end - begin) // struct.calcsize(fmt)
        assert count == eval("*".join(str(d) for d in entry["shape"]) or "1"), (name, entry)
        values = struct.unpack("<%d%s" % (count, fmt), data[begin:end])
        raw = struct.pack("<%d%s" % (count, fmt), *[2 * v for v in values])
        out_header[name] = {"dtype": entry["dtype"], "shape": entry["shape"],
                            "data_offsets": [len(out_data), len(out_data) + len(raw)]}
        out_data += raw
    text = json.dumps(out_header).encode()
    with open(dst, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + out_data)


if __name__ == "__main__":
    try:
        if sys.argv[1] == "double":
            double(sys.argv[2], sys.argv[3])
        else:
            {"write": write, "check": check}[sys.argv[1]](sys.argv[2])
    except AssertionError as e:
        sys.exit("safetensors_python.py: %s: %r" % (sys.argv[2], e.args))
