"""Set functions, searchsorted/isin and the complex expm1/log1p/log2 and nextafter kernels on
CUDA, each compared with the CPU's result for the same input."""
import numpy as np
import pytest

import tessera as ts

pytestmark = pytest.mark.skipif(not ts.cuda.is_available(), reason="no CUDA device")

DEV = "cuda:0"


def both(a):
    return ts.asarray(a), ts.asarray(a, device=DEV)


def same(c, g, exact=True):
    assert str(g.device) == DEV and g.dtype == c.dtype and tuple(g.shape) == tuple(c.shape)
    if exact:
        np.testing.assert_array_equal(g.cpu().numpy(), c.numpy())
    else:
        np.testing.assert_allclose(g.cpu().numpy(), c.numpy(), rtol=1e-12, atol=1e-300)


VALUES = {
    "float32": np.array([3.0, -0.0, np.nan, 1.0, 0.0, 3.0, -np.inf, np.nan, 1.0, np.inf], "f4"),
    "float64": np.random.default_rng(0).integers(-50, 50, 10_007).astype("f8"),
    "int64": np.random.default_rng(1).integers(-5, 5, 1001),
    "uint8": np.random.default_rng(2).integers(0, 255, 999).astype("u1"),
    "bool": np.array([True, False, True, True]),
}


@pytest.mark.parametrize("name", sorted(VALUES))
def test_unique_family_matches_cpu(name):
    c, g = both(VALUES[name])
    for fn in (ts.unique_all, ts.unique_counts, ts.unique_inverse):
        for rc, rg in zip(fn(c), fn(g)):
            same(rc, rg)
    same(ts.unique_values(c), ts.unique_values(g))


def test_unique_complex_and_2d_and_empty():
    z = np.array([[1 + 2j, np.nan, 1 + 2j], [0j, -1j, 1 - 2j]], "c8")
    for a in (z, np.zeros((0, 3), "f4"), np.array(7.0, "f8")):
        c, g = both(a)
        for rc, rg in zip(ts.unique_all(c), ts.unique_all(g)):
            same(rc, rg)


@pytest.mark.parametrize("right", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "float16", "bfloat16"])
def test_searchsorted_matches_cpu(dtype, right):
    rng = np.random.default_rng(3)
    s = np.sort(rng.integers(-20, 20, 300)).astype("f8")
    v = rng.integers(-25, 25, (7, 31)).astype("f8")
    if dtype.startswith("float"):
        s = np.concatenate([s, [np.nan]])
        v[0, :3] = [np.nan, -0.0, 0.0]
    sc, sg = ts.asarray(s).astype(getattr(ts, dtype)), ts.asarray(s, device=DEV).astype(getattr(ts, dtype))
    vc, vg = ts.asarray(v).astype(getattr(ts, dtype)), ts.asarray(v, device=DEV).astype(getattr(ts, dtype))
    same(ts.searchsorted(sc, vc, side="right" if right else "left"),
         ts.searchsorted(sg, vg, side="right" if right else "left"))


def test_searchsorted_sorter_and_isin():
    rng = np.random.default_rng(4)
    x1 = rng.permutation(50).astype("f4")
    sorter = np.argsort(x1)
    v = rng.integers(-3, 55, 40).astype("f4")
    g = ts.searchsorted(ts.asarray(x1, device=DEV), ts.asarray(v, device=DEV),
                        sorter=ts.asarray(sorter, device=DEV))
    c = ts.searchsorted(ts.asarray(x1), ts.asarray(v), sorter=ts.asarray(sorter))
    same(c, g)
    for invert in (False, True):
        same(ts.isin(ts.asarray(v), ts.asarray(x1), invert=invert),
             ts.isin(ts.asarray(v, device=DEV), ts.asarray(x1, device=DEV), invert=invert))
    same(ts.isin(ts.asarray(v), ts.asarray(x1[:0])),
         ts.isin(ts.asarray(v, device=DEV), ts.asarray(x1[:0], device=DEV)))


@pytest.mark.parametrize("fn", ["expm1", "log1p", "log2"])
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_exp_log_match_cpu(fn, dtype):
    rng = np.random.default_rng(5)
    z = (rng.normal(size=2000) * 3 + 1j * rng.normal(size=2000) * 3).astype(dtype)
    z[:8] = [0, -0.0, complex(np.inf, 0), complex(-np.inf, 1), complex(np.nan, 0),
             complex(0, np.inf), complex(1, np.nan), 1e-8 + 1e-8j]
    c, g = both(z)
    rc, rg = getattr(ts, fn)(c), getattr(ts, fn)(g)
    tol = 2e-6 if dtype == "complex64" else 1e-13
    np.testing.assert_allclose(rg.cpu().numpy(), rc.numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_nextafter_matches_cpu_bitwise(dtype):
    a = np.array([0.0, -0.0, 1.0, -1.0, 1.0, np.inf, np.nan, 3.0, 65504.0, 1e-3], "f8")
    b = np.array([1.0, -1.0, 2.0, 0.0, 1.0, 0.0, 1.0, np.nan, np.inf, -1.0], "f8")
    dt = getattr(ts, dtype)
    c = ts.nextafter(ts.asarray(a).astype(dt), ts.asarray(b).astype(dt))
    g = ts.nextafter(ts.asarray(a, device=DEV).astype(dt), ts.asarray(b, device=DEV).astype(dt))
    assert g.dtype == c.dtype
    np.testing.assert_array_equal(g.cpu().astype(ts.float64).numpy(),
                                  c.astype(ts.float64).numpy())


@pytest.mark.parametrize("name", sorted(VALUES))
def test_torch_unique_forms_match_cpu(name):
    # torch.unique / unique_consecutive run on the device (no host copy since they moved to C++)
    a = VALUES[name]
    for arr, dim in ((a, None), (a[: len(a) // 4 * 4].reshape(-1, 4), 0),
                     (a[: len(a) // 4 * 4].reshape(-1, 4), 1)):
        c, g = both(arr)
        for fn in (ts.unique, ts.unique_consecutive):
            rc = fn(c, return_inverse=True, return_counts=True, dim=dim)
            rg = fn(g, return_inverse=True, return_counts=True, dim=dim)
            for x, y in zip(rc, rg):
                same(x, y)


def test_isin_numbers_and_cross_on_device():
    c, g = both(np.array([1.0, 2.5, 3.0, np.nan], "f4"))
    for test in (2.5, 3, np.array([3.0, np.nan], "f4")):
        tc = ts.asarray(test) if isinstance(test, np.ndarray) else test
        tg = ts.asarray(test, device=DEV) if isinstance(test, np.ndarray) else test
        same(ts.isin(c, tc), ts.isin(g, tg))
        same(ts.isin(tc, c), ts.isin(tg, g))
    rng = np.random.default_rng(5)
    (ac, ag), (bc, bg) = both(rng.standard_normal((4, 3))), both(rng.standard_normal((4, 3)))
    same(ts.cross(ac, bc), ts.cross(ag, bg), exact=False)
    xg = ts.asarray(rng.standard_normal((3, 5)), device=DEV, requires_grad=True)
    xc = ts.asarray(xg.detach().cpu().numpy(), requires_grad=True)
    ts.cross(xg, xg.flip(1)).sum().backward()
    ts.cross(xc, xc.flip(1)).sum().backward()
    same(xc.grad, xg.grad, exact=False)
