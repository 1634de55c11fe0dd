"""Runs a PyTorch program unchanged, either with real torch or with tessera standing in for it.

    python _alias.py tessera|torch PROGRAM.py [ARGS...]

With ``tessera``, an import hook makes ``import torch`` / ``import torch.nn.functional as F`` /
``from torch.utils.data import DataLoader`` ... resolve to tessera and its submodules before the
program runs as ``__main__``.
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import runpy
import sys


class _TorchAsTessera(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname, path=None, target=None):
        if fullname == "torch" or fullname.startswith("torch."):
            return importlib.util.spec_from_loader(fullname, self)
        return None

    def create_module(self, spec):
        return importlib.import_module("tessera" + spec.name[len("torch"):])

    def exec_module(self, module):
        pass


def main() -> None:
    backend, program, *args = sys.argv[1:]
    if backend == "tessera":
        sys.meta_path.insert(0, _TorchAsTessera())
    sys.argv = [program, *args]
    sys.path.insert(0, __import__("os").path.dirname(program))
    runpy.run_path(program, run_name="__main__")


if __name__ == "__main__":
    main()
