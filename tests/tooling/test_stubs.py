"""Type stubs: the committed .pyi files equal what tools/stubgen.py generates from the live
modules (so they follow the bindings), they ship with py.typed, and `mypy --strict` passes on
the examples with them."""
import os
import subprocess
import sys

import pytest
from harness import REPO_ROOT

ROOT = str(REPO_ROOT)
PKG = os.path.join(ROOT, "python", "tessera")
STUBS = ["__init__.pyi", "_C.pyi", "nn/__init__.pyi", "nn/functional/__init__.pyi",
         "nn/utils/__init__.pyi", "optim/__init__.pyi", "utils/data/__init__.pyi"]


def _env():
    env = dict(os.environ)
    # the tessera this process imports (installed wheel under CI, python/ in development)
    import tessera
    parent = os.path.dirname(os.path.dirname(os.path.abspath(tessera.__file__)))
    env["PYTHONPATH"] = parent + os.pathsep + env.get("PYTHONPATH", "")
    return env


def test_stubs_are_committed_and_typed_marker_present():
    for rel in STUBS:
        assert os.path.isfile(os.path.join(PKG, rel)), rel
    assert os.path.isfile(os.path.join(PKG, "py.typed"))


def test_stubs_match_the_generator():
    r = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "stubgen.py"), "--check"],
                       capture_output=True, text=True, env=_env(), cwd=ROOT)
    assert r.returncode == 0, r.stdout + r.stderr


def test_stub_covers_tensor_methods_and_namespace():
    import tessera as ts
    text = open(os.path.join(PKG, "__init__.pyi")).read()
    assert "class Tensor:" in text
    for name in ("reshape", "sum", "backward", "item", "to", "clip"):
        assert f"    def {name}(" in text, name
    for name in ("zeros", "matmul", "clip", "floor_divide"):
        assert (f"def {name}(" in text) or (f"import {name} as {name}" in text), name
    assert ts.Tensor.__name__ == "Tensor"


def test_mypy_strict_on_examples():
    pytest.importorskip("mypy")
    examples = os.path.join(ROOT, "examples")
    files = sorted(f for f in os.listdir(examples) if f.endswith(".py"))
    env = _env()
    env["MYPYPATH"] = os.path.join(ROOT, "python")
    r = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent",
                        "--cache-dir", os.path.join(ROOT, "build", ".mypy_cache"), *files],
                       capture_output=True, text=True, env=env, cwd=examples)
    assert r.returncode == 0, r.stdout + r.stderr
