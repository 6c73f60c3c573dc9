# SPDX-License-Identifier: Apache-2.0
"""The Python fragments of the documentation run as written: every ```python block of docs/howto/python.md (in
order, sharing one namespace, as a reader pastes them) and of the README's Python section."""
import pathlib
import re

import pytest

pytest.importorskip("torch")

ROOT = pathlib.Path(__file__).resolve().parents[2]


def python_blocks(path):
    return re.findall(r"```python\n(.*?)```", path.read_text(encoding="utf-8"), flags=re.S)


@pytest.mark.parametrize("page", ["docs/howto/python.md", "README.md"])
def test_fragments_run(page, tmp_path, monkeypatch):
    blocks = python_blocks(ROOT / page)
    assert blocks, f"{page} has no Python fragment"
    monkeypatch.chdir(tmp_path)  # a fragment may write files (torch.save)
    namespace = {}
    for block in blocks:
        exec(compile(block, f"{page} fragment", "exec"), namespace)
