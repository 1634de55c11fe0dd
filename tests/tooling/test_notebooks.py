"""The notebooks and example scripts run top to bottom with their small settings.

Each notebook is executed by nbclient in a fresh `python3` kernel (ipykernel, started with
this interpreter) with TESSERA_SMALL=1; each script in examples/ with --small. They read
the data sets from $TESSERA_DATA, else from shared/data beside the repository (where CI
keeps them). The kernel and the scripts import the same tessera as this process, and run
single-threaded so that the timing does not depend on what else the machine is doing.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Dict

import nbformat
import pytest
from nbclient import NotebookClient

import tessera
from harness import REPO_ROOT

REPO = REPO_ROOT
NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))
EXAMPLES = ["mnist_mlp.py", "mnist_cnn.py", "char_gpt.py"]


def _data_root() -> Path:
    if os.environ.get("TESSERA_DATA"):
        return Path(os.environ["TESSERA_DATA"])
    for up in (REPO, REPO.parent, REPO.parent.parent):
        if (up / "shared" / "data" / "mnist").is_dir():
            return up / "shared" / "data"
    raise FileNotFoundError(f"the MNIST and tiny-Shakespeare data are neither in $TESSERA_DATA "
                            f"nor in shared/data beside {REPO}")


def _env() -> Dict[str, str]:
    """This process's environment plus small settings, the data root, one thread and the
    directory this process imported tessera from (for an in-tree build on PYTHONPATH)."""
    env = dict(os.environ)
    pkg_parent = str(Path(tessera.__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (pkg_parent, env.get("PYTHONPATH")) if p)
    env.update(TESSERA_SMALL="1", TESSERA_DATA=str(_data_root()), OMP_NUM_THREADS="1",
               OPENBLAS_NUM_THREADS="1")
    env.pop("TESSERA_MNIST", None)
    return env


def test_every_notebook_is_listed() -> None:
    assert [p.name for p in NOTEBOOKS] == ["01_mnist_mlp.ipynb", "02_mnist_cnn.ipynb",
                                           "03_char_gpt.ipynb", "04_resnet.ipynb"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for k, v in _env().items():
        monkeypatch.setenv(k, v)
    monkeypatch.delenv("TESSERA_MNIST", raising=False)
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, kernel_name="python3", timeout=300,
                            resources={"metadata": {"path": str(path.parent)}})
    client.execute()  # raises CellExecutionError, with the traceback, if a cell fails
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    assert images, "no matplotlib figure was drawn"
    text = "".join(o.get("text", "") for o in outputs if o.get("output_type") == "stream")
    assert "small settings" in text


@pytest.mark.parametrize("script", EXAMPLES)
def test_example_runs(script: str) -> None:
    proc = subprocess.run([sys.executable, str(REPO / "examples" / script), "--small"],
                          env=_env(), cwd=str(REPO), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    expected = "val loss" if script == "char_gpt.py" else "test accuracy"
    assert expected in proc.stdout, proc.stdout
