"""ts.cuda.tunable, the switch of tuned GEMMs: torch.cuda.tunable's names and signatures, on by
default in tessera (docs/design.md, Note [Tuned GEMMs]); works without a GPU."""
import inspect

import pytest
import torch

import tessera as ts


def test_names_and_signatures_match_torch():
    def params(f):
        return [(p.name, p.kind, p.default) for p in inspect.signature(f).parameters.values()]

    for name in ("enable", "is_enabled"):
        assert params(getattr(ts.cuda.tunable, name)) == \
            params(getattr(torch.cuda.tunable, name)), name


def test_default_on_and_toggles():
    assert ts.cuda.tunable.is_enabled() is True
    ts.cuda.tunable.enable(False)
    try:
        assert ts.cuda.tunable.is_enabled() is False
    finally:
        ts.cuda.tunable.enable()
    assert ts.cuda.tunable.is_enabled() is True


@pytest.mark.parametrize("bad", [1, None, "yes"])
def test_enable_rejects_non_bools(bad):
    with pytest.raises(TypeError, match="tunable.enable: val must be a bool"):
        ts.cuda.tunable.enable(bad)
