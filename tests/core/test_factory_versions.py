"""A factory's result starts at version 0 as PyTorch's do (the fills that made it do not count),
and an out= draw counts as one write of out, as in torch."""
import pytest
import torch

import tessera as ts

FACTORIES = {
    "ones": lambda M: M.ones(2, 3),
    "zeros": lambda M: M.zeros(2),
    "full": lambda M: M.full((2,), 1.5),
    "eye": lambda M: M.eye(3),
    "ones_like": lambda M: M.ones_like(M.ones(2)),
    "zeros_like": lambda M: M.zeros_like(M.ones(2)),
    "full_like": lambda M: M.full_like(M.ones(2), 7),
    "empty": lambda M: M.empty(2),
    "rand": lambda M: M.rand(2),
    "randn": lambda M: M.randn(2, 2),
    "rand_like": lambda M: M.rand_like(M.ones(2)),
    "randint": lambda M: M.randint(0, 5, (3,)),
    "arange": lambda M: M.arange(4),
    "linspace": lambda M: M.linspace(0, 1, 5),
    "tensor": lambda M: M.tensor([1.0, 2.0]),
    "zeros requires_grad": lambda M: M.zeros(2, requires_grad=True),
}


@pytest.mark.parametrize("name", list(FACTORIES))
def test_factories_start_at_version_zero(name):
    assert FACTORIES[name](ts)._version == FACTORIES[name](torch)._version == 0


def test_in_place_writes_count_from_zero():
    a, b = ts.ones(3), torch.ones(3)
    a.add_(1)
    b.add_(1)
    assert a._version == b._version == 1
