#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes docs/reference/python.md, the Python API reference, from the docstrings and signatures of the package
tprod and of tprod.torch (every name in their __all__). With --check it writes nothing and fails when the page
differs from what it would write (the CTest test python_api_reference runs that).

    PYTHONPATH=build/python python3 scripts/python-api-reference.py [--check]
"""
import argparse
import inspect
import pathlib
import sys

import tprod
import tprod.torch

PAGE = pathlib.Path(__file__).resolve().parents[1] / "docs" / "reference" / "python.md"


def signature_of(obj, name):
    try:
        return name + str(inspect.signature(obj))
    except (TypeError, ValueError):
        doc = (obj.__doc__ or "").strip().splitlines()
        # pybind11 puts "name(args) -> result" on the docstring's first line
        return doc[0] if doc and doc[0].startswith(name + "(") else name


def description_of(obj):
    doc = inspect.getdoc(obj) or ""
    lines = doc.splitlines()
    if lines and "(" in lines[0] and "->" in lines[0]:  # pybind11's signature line
        lines = lines[1:]
    return "\n".join(lines).strip()


def section(module, title):
    out = [f"## {title}", "", description_of(module).split("\n\n")[0], ""]
    for name in sorted(module.__all__, key=str.lower):
        obj = getattr(module, name)
        if name.startswith("__"):
            continue
        kind = "class" if inspect.isclass(obj) else "function"
        out += [f"### `{module.__name__}.{name}`", "", f"```python\n{signature_of(obj, name) if kind == 'function' else 'class ' + name}\n```", ""]
        text = description_of(obj)
        if not text:
            raise SystemExit(f"python-api-reference: {module.__name__}.{name} has no docstring")
        out += [text, ""]
    return out


def page():
    lines = ["# Python API reference", "",
             "Generated from the docstrings by `scripts/python-api-reference.py` (the CTest test `python_api_reference`",
             "fails when this page and the package disagree). How to build and use the package:",
             "[docs/howto/python.md](../howto/python.md).", ""]
    lines += section(tprod, "tprod")
    lines += section(tprod.torch, "tprod.torch")
    return "\n".join(lines).rstrip() + "\n"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    text = page()
    if args.check:
        if not PAGE.exists() or PAGE.read_text(encoding="utf-8") != text:
            print(f"python-api-reference: {PAGE} is out of date: run scripts/python-api-reference.py", file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
