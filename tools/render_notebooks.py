"""Executes the notebooks with their small settings (TESSERA_SMALL=1) and stores them, outputs and
plots included, under docs/notebooks/ for the documentation site, which renders the stored
outputs without running anything (tests/test_docs.py checks the code cells still match).

    PYTHONPATH=python python tools/render_notebooks.py
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient

REPO = Path(__file__).resolve().parent.parent


def main() -> int:
    sys.path.insert(0, str(REPO / "tests"))
    from test_notebooks import _env  # the same settings and data root as the notebook tests
    os.environ.update(_env())
    out_dir = REPO / "docs" / "notebooks"
    out_dir.mkdir(exist_ok=True)
    for path in sorted((REPO / "notebooks").glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        NotebookClient(nb, timeout=600, kernel_name="python3",
                       resources={"metadata": {"path": str(path.parent)}}).execute()
        nbformat.write(nb, out_dir / path.name)
        print("rendered", path.name, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
