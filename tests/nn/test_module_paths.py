"""PyTorch's module paths for every nn class tessera has (issue 21): for each public class of
torch.nn defined under torch.nn.modules.<file>, tessera.nn.modules.<file>.<Name> is
tessera.nn.<Name> and its __module__ is tessera.nn.modules.<file>, so pickles and
safe_globals lists that name torch's paths resolve to tessera's classes."""
from __future__ import annotations

import importlib
import inspect
import pickle

import pytest
import torch

import tessera as ts


def _torch_classes():
    out = []
    for name in sorted(dir(torch.nn)):
        obj = getattr(torch.nn, name)
        if inspect.isclass(obj) and obj.__module__.startswith("torch.nn.modules."):
            sub = obj.__module__[len("torch.nn.modules."):]
            out.append((sub, name))
    # public classes torch keeps only in its module files
    out += [("linear", "NonDynamicallyQuantizableLinear"), ("lazy", "LazyModuleMixin"),
            ("module", "Module")]
    return sorted(set(out))


CASES = [(sub, name) for sub, name in _torch_classes()
         if hasattr(ts.nn.modules, name) or hasattr(ts.nn, name)]


def test_cover_most_of_torch_nn() -> None:
    assert len(CASES) >= 140, len(CASES)


@pytest.mark.parametrize("sub,name", CASES)
def test_module_path(sub: str, name: str) -> None:
    cls = getattr(ts.nn, name, None) or getattr(ts.nn.modules, name)
    mod = importlib.import_module(f"tessera.nn.modules.{sub}")
    assert getattr(mod, name, None) is cls, f"tessera.nn.modules.{sub}.{name} is missing"
    assert cls.__module__ == f"tessera.nn.modules.{sub}"
    assert cls.__qualname__ == name


def test_non_dynamically_quantizable_linear() -> None:
    from tessera.nn.modules.linear import NonDynamicallyQuantizableLinear
    assert issubclass(NonDynamicallyQuantizableLinear, ts.nn.Linear)
    mha = ts.nn.MultiheadAttention(8, 2)
    tmha = torch.nn.MultiheadAttention(8, 2)
    assert type(mha.out_proj).__name__ == type(tmha.out_proj).__name__
    assert repr(mha) == repr(tmha)


def test_pickle_names_the_torch_shaped_path() -> None:
    data = pickle.dumps(ts.nn.Sequential(ts.nn.Dropout(0.1), ts.nn.BatchNorm1d(2),
                                         ts.nn.Embedding(3, 2)), protocol=2)
    for path in (b"tessera.nn.modules.dropout\nDropout", b"tessera.nn.modules.batchnorm\nBatchNorm1d",
                 b"tessera.nn.modules.sparse\nEmbedding", b"tessera.nn.modules.container\nSequential"):
        assert path in data
