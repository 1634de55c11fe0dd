"""Importing tessera before PyTorch must leave PyTorch working (and the other way round). On
the H100 machine `import tessera; import torch` crashed inside libstdc++'s num_put while
PyTorch printed an operator schema: the toolchain there links libstdc++ into _C statically,
and its facet ids (GNU-unique symbols) took over the process's. CMakeLists.txt hides the
symbols of static archives (--exclude-libs,ALL)."""
import subprocess
import sys

import pytest

pytest.importorskip("torch")


@pytest.mark.parametrize("first,second", [("tessera", "torch"), ("torch", "tessera")])
def test_import_order(first, second):
    code = (f"import {first}, {second}, torch, tessera\n"
            "x = torch.ones(2) + 1\n"
            "t = tessera.from_dlpack(x)\n"
            "assert t.tolist() == [2.0, 2.0]\n"
            "if torch.cuda.is_available() and tessera.cuda.is_available():\n"
            "    y = torch.nn.Linear(4, 4).cuda()(torch.ones(2, 4, device='cuda')).detach()\n"
            "    assert tessera.from_dlpack(y).shape == (2, 4)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
