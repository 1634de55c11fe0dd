"""The structured transforms (stick-breaking, softmax, Cholesky, reshape, independent,
cat/stack, cdf) and the biject_to / transform_to registries against torch's: values,
inverses, log |det J|, shapes, float64 gradients, and torch's constraint -> transform map."""
from __future__ import annotations

from typing import Any, Callable, Dict, Tuple

import numpy as np
import pytest
import torch

import tessera as ts
from harness import compare_grads

TD = torch.distributions
D = ts.distributions

# name -> (the transform on a distributions module, the input's shape, how to draw the input)
_real = lambda r, s: r.normal(size=s)  # noqa: E731
CASES: Dict[str, Tuple[Callable[[Any], Any], tuple, Callable]] = {
    "StickBreaking": (lambda M: M.transforms.StickBreakingTransform(), (2, 3, 4), _real),
    "Softmax": (lambda M: M.transforms.SoftmaxTransform(), (2, 4), _real),
    "Softplus": (lambda M: M.transforms.SoftplusTransform(), (3, 4), _real),
    "LowerCholesky": (lambda M: M.transforms.LowerCholeskyTransform(), (2, 3, 3), _real),
    "PositiveDefinite": (lambda M: M.transforms.PositiveDefiniteTransform(), (2, 3, 3), _real),
    "Reshape": (lambda M: M.transforms.ReshapeTransform((2, 3), (6,)), (4, 2, 3), _real),
    "Independent": (lambda M: M.transforms.IndependentTransform(
        M.transforms.ExpTransform(), 2), (4, 2, 3), _real),
    "Cat": (lambda M: M.transforms.CatTransform(
        [M.transforms.ExpTransform(), M.transforms.AffineTransform(1.0, -2.0),
         M.transforms.SigmoidTransform()], dim=-1, lengths=[1, 2, 2]), (3, 5), _real),
    "Cat_dim0": (lambda M: M.transforms.CatTransform(
        [M.transforms.ExpTransform(), M.transforms.TanhTransform()], dim=0,
        lengths=[2, 1]), (3, 4), _real),
    "Stack": (lambda M: M.transforms.StackTransform(
        [M.transforms.ExpTransform(), M.transforms.SoftplusTransform(),
         M.transforms.TanhTransform()], dim=1), (2, 3, 4), _real),
    "CorrCholesky": (lambda M: M.transforms.CorrCholeskyTransform(), (2, 6), _real),
    "CumulativeDistribution": (lambda M: M.transforms.CumulativeDistributionTransform(
        M.Normal(0.5, 2.0)), (3, 4), _real),
}


def _pair(name: str) -> tuple:
    make, shape, draw = CASES[name]
    x = draw(np.random.default_rng(len(name)), shape)
    return make(D), make(TD), x


@pytest.mark.parametrize("name", sorted(CASES))
def test_transform_matches_torch(name: str) -> None:
    t, tt_, x = _pair(name)
    a, b = ts.asarray(x), torch.tensor(x)
    ya, yb = t(a), tt_(b)
    np.testing.assert_allclose(ya.numpy(), yb.numpy(), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(t.inv(ya).numpy(), tt_.inv(yb).numpy(), rtol=1e-9, atol=1e-12)
    if t.bijective:
        np.testing.assert_allclose(t.inv(ya).numpy(), x, rtol=1e-7, atol=1e-9)
    assert t.bijective == tt_.bijective
    assert t.domain.event_dim == tt_.domain.event_dim
    assert t.codomain.event_dim == tt_.codomain.event_dim
    assert tuple(t.forward_shape(x.shape)) == tuple(tt_.forward_shape(torch.Size(x.shape)))
    assert tuple(t.inverse_shape(tuple(yb.shape))) == tuple(tt_.inverse_shape(yb.shape))
    assert bool(t.codomain.check(ya).all()) == bool(tt_.codomain.check(yb).all())
    assert t == _pair(name)[0] or name in ("Reshape", "Independent", "Cat", "Cat_dim0", "Stack",
                                          "CumulativeDistribution")
    if name in ("Softmax", "PositiveDefinite", "LowerCholesky"):  # no log |det J| in torch
        return
    np.testing.assert_allclose(t.log_abs_det_jacobian(a, ya).numpy(),
                               tt_.log_abs_det_jacobian(b, yb).numpy(), rtol=1e-10, atol=1e-12)

    def run(M: Any, xx: Any) -> Any:
        tr = CASES[name][0](M)
        y = tr(xx)
        return y, tr.log_abs_det_jacobian(xx, y)

    compare_grads(lambda xx: run(D, xx), lambda xx: run(TD, xx), [x], rtol=1e-8)


def test_with_cache_and_inverse_shapes() -> None:
    t = D.transforms.StickBreakingTransform().with_cache(1)
    x = ts.randn(2, 3)
    y = t(x)
    assert t.inv(y) is x
    assert t.inv.forward_shape((2, 4)) == (2, 3)
    with pytest.raises(ValueError):
        D.transforms.ReshapeTransform((2, 3), (5,))
    with pytest.raises(ValueError):
        D.transforms.ReshapeTransform((2, 3), (6,)).forward_shape((3, 2))
    with pytest.raises(ValueError):
        D.transforms.StickBreakingTransform().forward_shape(())
    c = D.transforms.CatTransform([D.transforms.ExpTransform()] * 2, dim=0, lengths=[1, 2],
                                  cache_size=1)
    assert c.length == 3 and c.event_dim == 0 and c.with_cache(1) is c


CONSTRAINTS = [
    lambda C: C.real, lambda C: C.positive, lambda C: C.nonnegative,
    lambda C: C.greater_than(1.5), lambda C: C.greater_than_eq(-2.0), lambda C: C.less_than(3.0),
    lambda C: C.unit_interval, lambda C: C.interval(-1.0, 2.0),
    lambda C: C.half_open_interval(0.0, 1.0), lambda C: C.simplex, lambda C: C.real_vector,
    lambda C: C.independent(C.positive, 1), lambda C: C.lower_cholesky,
    lambda C: C.positive_definite, lambda C: C.positive_semidefinite, lambda C: C.corr_cholesky,
    lambda C: C.cat([C.positive, C.real], dim=-1, lengths=[2, 2]),
    lambda C: C.stack([C.positive, C.unit_interval, C.real, C.less_than(1.0)], dim=-2),
]


@pytest.mark.parametrize("registry", ["biject_to", "transform_to"])
@pytest.mark.parametrize("index", range(len(CONSTRAINTS)))
def test_registries_match_torch(registry: str, index: int) -> None:
    mk = CONSTRAINTS[index]
    c, tc = mk(D.constraints), mk(TD.constraints)
    try:
        want = getattr(TD, registry)(tc)
    except NotImplementedError as e:
        with pytest.raises(NotImplementedError) as got:
            getattr(D, registry)(c)
        assert str(got.value) == str(e)
        return
    got = getattr(D, registry)(c)
    assert type(got).__name__ == type(want).__name__
    shape = {12: (4, 4), 13: (4, 4), 14: (4, 4), 15: (2, 6), 17: (4, 4)}.get(index, (3, 4))
    x = np.random.default_rng(index).normal(size=shape)
    ya, yb = got(ts.asarray(x)), want(torch.tensor(x))
    np.testing.assert_allclose(ya.numpy(), yb.numpy(), rtol=1e-10, atol=1e-12)
    assert bool(c.check(ya).all()) and bool(tc.check(yb).all())
    if got.bijective:
        np.testing.assert_allclose(got.log_abs_det_jacobian(ts.asarray(x), ya).numpy(),
                                   want.log_abs_det_jacobian(torch.tensor(x), yb).numpy(),
                                   rtol=1e-10, atol=1e-12)


def test_registry_register_and_errors() -> None:
    with pytest.raises(NotImplementedError, match="Cannot transform _Boolean constraints"):
        D.biject_to(D.constraints.boolean)
    with pytest.raises(TypeError):
        D.biject_to.register(int, lambda c: None)
    reg = D.constraint_registry.ConstraintRegistry()

    @reg.register(D.constraints.positive)
    def _f(constraint: Any) -> Any:
        return D.transforms.SoftplusTransform()

    assert isinstance(reg(D.constraints.greater_than(2.0)), D.transforms.SoftplusTransform)
