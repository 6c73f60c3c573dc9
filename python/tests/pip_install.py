# SPDX-License-Identifier: Apache-2.0
"""`pip install --no-build-isolation ./python` into a fresh virtual environment (with the system's NumPy and
PyTorch), offline, then imports tprod from there and checks one product against NumPy.

Usage: pip_install.py SOURCE_DIR [CMAKE_BUILD_DIR]. With CMAKE_BUILD_DIR, setup.py builds the module in that
existing build tree (TPROD_CMAKE_BUILD_DIR) instead of configuring a fresh one, as CI does to save the compile.
"""
import os
import subprocess
import sys
import tempfile
from pathlib import Path

source = Path(sys.argv[1]).resolve()
env = dict(os.environ)
env.pop("PYTHONPATH", None)  # the installed package, not a build tree's
if len(sys.argv) > 2:
    env["TPROD_CMAKE_BUILD_DIR"] = str(Path(sys.argv[2]).resolve())
with tempfile.TemporaryDirectory(prefix="tprod-pip-") as tmp:
    venv = Path(tmp) / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--no-build-isolation", "--no-index",
                    "--no-deps", str(source / "python")], check=True, env=env, cwd=tmp)
    check = """
import numpy as np, sys, tprod
assert tprod.__file__.startswith(sys.prefix), tprod.__file__
a = np.random.default_rng(1).standard_normal((3, 4, 5)); b = np.random.default_rng(2).standard_normal((4, 2, 5))
c = tprod.product(a, b, tprod.identity_transform())
assert np.allclose(c, np.einsum('ilk,ljk->ijk', a, b), atol=1e-12)
print('tprod', tprod.__version__, 'installed by pip into', sys.prefix)
"""
    subprocess.run([str(python), "-c", check], check=True, env=env, cwd=tmp)
