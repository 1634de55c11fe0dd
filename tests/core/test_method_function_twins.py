"""A Tensor method and the namespace function of the same name are one definition (issue 17):
`x.add(y, alpha=)` is `ts.add(x, y, alpha=)`. Where the twins once disagreed, PyTorch's
behaviour won; each case below failed on one of the two forms before they were merged."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import tessera as ts
import tessera.errors  # noqa: F401
from harness import assert_same

BIG = np.array([2 ** 40 + 7, -7, 7, -(2 ** 50) - 3], dtype=np.int64)
DIV = np.array([3, 2, -2, 7], dtype=np.int64)


@pytest.mark.parametrize("name", ["add", "sub", "subtract", "div", "divide", "true_divide"])
def test_method_is_the_function(name):
    assert getattr(ts.Tensor, name) is getattr(ts, name)


@pytest.mark.parametrize("mode", ["trunc", "floor"])
@pytest.mark.parametrize("form", ["function", "method", "inplace"])
def test_div_rounding_int64_is_exact(mode, form):
    """Was: x.div(y, rounding_mode='trunc') went through float32 (366503886848 for 2**40+7 / 3)."""
    x, y = ts.asarray(BIG), ts.asarray(DIV)
    want = torch.div(torch.from_numpy(BIG), torch.from_numpy(DIV), rounding_mode=mode)
    got = {"function": lambda: ts.div(x, y, rounding_mode=mode),
           "method": lambda: x.div(y, rounding_mode=mode),
           "inplace": lambda: x.clone().div_(y, rounding_mode=mode)}[form]()
    assert_same(got, want)
    assert_same(ts.divide(x, 3, rounding_mode=mode), torch.div(torch.from_numpy(BIG), 3, rounding_mode=mode))


@pytest.mark.parametrize("mode", ["trunc", "floor"])
@pytest.mark.parametrize("divisor", [np.array([1, 0, 2, 3]), 0])
def test_integer_div_by_zero_raises_like_torch(mode, divisor):
    """Was: 0 through ts.div, an error through the method. PyTorch (CPU) raises."""
    x = np.array([5, 4, 3, 2])
    d_t = torch.from_numpy(divisor) if isinstance(divisor, np.ndarray) else divisor
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        torch.div(torch.from_numpy(x), d_t, rounding_mode=mode)
    d = ts.asarray(divisor) if isinstance(divisor, np.ndarray) else divisor
    for call in (lambda: ts.div(ts.asarray(x), d, rounding_mode=mode),
                 lambda: ts.asarray(x).div(d, rounding_mode=mode),
                 lambda: ts.asarray(x).div_(d, rounding_mode=mode)):
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            call()
        with pytest.raises(ZeroDivisionError):
            call()


def test_float_div_by_zero_rounding_gives_inf():
    x = np.array([1.0, -1.0, 0.0], dtype=np.float32)
    for mode in ("trunc", "floor"):
        want = torch.div(torch.from_numpy(x), 0.0, rounding_mode=mode)
        assert_same(ts.div(ts.asarray(x), 0.0, rounding_mode=mode), want)
        assert_same(ts.asarray(x).div(0.0, rounding_mode=mode), want)


@pytest.mark.parametrize("name", ["add", "sub", "subtract"])
@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "bool"])
def test_float_alpha_on_integers_raises_like_torch(name, dtype):
    """Was: ts.add(x, x, alpha=0.5) raised (as PyTorch) while x.add(x, alpha=0.5) gave float32."""
    a = np.array([1, 0, 1], dtype=dtype)
    if not (dtype == "bool" and name != "add"):  # torch refuses bool subtraction anyway
        with pytest.raises(RuntimeError, match="alpha must not be a floating point"):
            getattr(torch.from_numpy(a), name)(torch.from_numpy(a), alpha=0.5)
    x = ts.asarray(a)
    for call in (lambda: getattr(ts, name)(x, x, alpha=0.5), lambda: getattr(x, name)(x, alpha=0.5),
                 lambda: getattr(x.clone(), name + "_")(x, alpha=0.5)):
        with pytest.raises(RuntimeError, match="alpha must not be a floating point"):
            call()


@pytest.mark.parametrize("name", ["add", "sub"])
def test_alpha_forms_agree_with_torch(name):
    a = np.array([[1.5, -2.0], [3.0, 0.25]], dtype=np.float32)
    b = np.array([[0.5, 4.0], [-1.0, 2.0]], dtype=np.float32)
    want = getattr(torch, name)(torch.from_numpy(a), torch.from_numpy(b), alpha=0.5)
    x, y = ts.asarray(a), ts.asarray(b)
    assert_same(getattr(ts, name)(x, y, alpha=0.5), want)
    assert_same(getattr(x, name)(y, alpha=0.5), want)
    assert_same(getattr(x.clone(), name + "_")(y, alpha=0.5), want)
    ai = np.array([1, -2, 3], dtype=np.int64)
    want_i = getattr(torch, name)(torch.from_numpy(ai), torch.from_numpy(ai), alpha=3)
    assert_same(getattr(ts.asarray(ai), name)(ts.asarray(ai), alpha=3), want_i)


def test_true_divide_takes_no_rounding_mode():
    """PyTorch's true_divide has no rounding_mode; ts.true_divide accepted one."""
    with pytest.raises(TypeError):
        torch.true_divide(torch.ones(2), torch.ones(2), rounding_mode="trunc")
    x = ts.ones(2)
    with pytest.raises(TypeError):
        ts.true_divide(x, x, rounding_mode="trunc")
    with pytest.raises(TypeError):
        x.true_divide(x, rounding_mode="trunc")
    assert_same(ts.true_divide(ts.asarray([3, 4]), ts.asarray([2, 8])),
                torch.true_divide(torch.tensor([3, 4]), torch.tensor([2, 8])))


def test_bad_rounding_mode_is_torchs_error():
    """Was: ValueError from the method, RuntimeError from the function (PyTorch: RuntimeError);
    now tessera.errors.ValueError, which is both."""
    for call in (lambda: ts.ones(2).div(ts.ones(2), rounding_mode="round"),
                 lambda: ts.div(ts.ones(2), ts.ones(2), rounding_mode="round")):
        for exc in (RuntimeError, ValueError):
            with pytest.raises(exc, match="rounding_mode"):
                call()


@pytest.mark.parametrize("name,special", [("lgamma", "gammaln"), ("digamma", "digamma"),
                                          ("digamma", "psi"), ("erfinv", "erfinv")])
@pytest.mark.parametrize("default", ["float32", "float64"])
def test_special_twins_are_one_definition(name, special, default):
    """ts.lgamma/digamma/erfinv and their ts.special names are one definition. Was: two, which
    disagreed on integer inputs under set_default_dtype(float64) (float32 from ts.digamma,
    float64 from ts.special.digamma); PyTorch gives the default dtype for both."""
    a = np.array([1, 2, 5], dtype=np.int64) if name != "erfinv" else np.array([0, 0, 0])
    old = ts.get_default_dtype()
    torch_old = torch.get_default_dtype()
    try:
        ts.set_default_dtype(getattr(ts, default))
        torch.set_default_dtype(getattr(torch, default))
        want = getattr(torch, name)(torch.from_numpy(a))
        tol = {"atol": 1e-6} if name == "erfinv" else {}  # refined with a 1.2e-7 erf
        assert_same(getattr(ts, name)(ts.asarray(a)), want, **tol)
        assert_same(getattr(ts.special, special)(ts.asarray(a)), want, **tol)
        assert_same(getattr(ts.asarray(a), name)(), want, **tol)
    finally:
        ts.set_default_dtype(old)
        torch.set_default_dtype(torch_old)


@pytest.mark.parametrize("name", ["tril", "triu"])
def test_tril_triu_forms_are_one_definition(name):
    """ts.tril/x.tril take torch's positional or keyword `diagonal` and the standard's k= in
    one definition (was: a torch wrapper over the standard function, bound as the method)."""
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    x, t = ts.asarray(a), torch.from_numpy(a)
    for d in (-1, 0, 2):
        want = getattr(torch, name)(t, d)
        assert_same(getattr(ts, name)(x, d), want)
        assert_same(getattr(ts, name)(x, diagonal=d), want)
        assert_same(getattr(ts, name)(x, k=d), want)
        assert_same(getattr(x, name)(d), want)
        assert_same(getattr(x, name)(diagonal=d), want)
    # one object: the C++ function is the method (Note [One function, two spellings])
    assert getattr(ts.Tensor, name) is getattr(ts, name) is getattr(ts._creation, name)
    with pytest.raises(TypeError):
        getattr(ts, name)(x, 1, k=1)


@pytest.mark.parametrize("name,args", [("flatten", (1,)), ("unsqueeze", (1,)), ("movedim", (0, 2))])
def test_shape_twins_are_one_definition(name, args):
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    want = getattr(torch, name)(torch.from_numpy(a), *args)
    assert_same(getattr(ts, name)(ts.asarray(a), *args), want)
    assert_same(getattr(ts.asarray(a), name)(*args), want)
    # one definition: the method and the function are the one C++ lambda, bound twice in
    # csrc/python/bind_views.cpp, or the function itself (Tensor.movedim is ts.movedim); no
    # Python layer on either
    from tessera import _manipulation
    assert getattr(_manipulation, name) is getattr(ts._C, name)
    kind = type(ts.Tensor.__dict__[name]).__name__
    # tensor_method: the method's own C++ function, held without a bound method per call
    assert kind in ("instancemethod", "tensor_method", "function_method")
    if kind == "function_method":
        assert getattr(ts.Tensor, name) is getattr(ts, name)


def test_random_twins_are_one_definition():
    """ts.bernoulli/multinomial/normal/seed are ts.random's functions, which take torch's forms
    too (was: torch wrappers over them in a second module)."""
    for name in ("bernoulli", "multinomial", "normal", "seed", "initial_seed"):
        import inspect
        assert inspect.unwrap(getattr(ts, name)) is inspect.unwrap(getattr(ts.random, name)), name
    x = ts.zeros(3, 4, dtype=ts.float64)
    for got, want in ((ts.bernoulli(x, 0.5), torch.bernoulli(torch.zeros(3, 4, dtype=torch.float64), 0.5)),
                      (x.bernoulli(0.5), torch.zeros(3, 4, dtype=torch.float64).bernoulli(0.5)),
                      (ts.bernoulli(ts.ones(5)), torch.bernoulli(torch.ones(5)))):
        assert tuple(got.shape) == tuple(want.shape) and str(want.dtype).endswith(got.dtype.name)
    assert ts.bernoulli(ts.ones(5)).tolist() == [1.0] * 5
    s = ts.seed()
    assert isinstance(s, int) and ts.initial_seed() == s
    assert isinstance(ts.random.seed(3), ts.random.Generator) and ts.initial_seed() == 3
    m = ts.normal(ts.zeros(4), ts.ones(4))
    assert tuple(m.shape) == (4,)


@pytest.mark.parametrize("data", [[[0, 1], [2, 0]], [0, 3, 0, 4, 5], 5, 0])
@pytest.mark.parametrize("size", [0, 2, 6])
def test_nonzero_static_is_one_definition(data, size):
    """ts.nonzero_static and x.nonzero_static were two implementations (one ignored the device,
    the other 0-d inputs); now one, checked against PyTorch."""
    a = np.array(data)
    want = torch.nonzero_static(torch.from_numpy(a), size=size, fill_value=-1)
    assert_same(ts.nonzero_static(ts.asarray(a), size=size), want)
    assert_same(ts.asarray(a).nonzero_static(size=size), want)


def test_mvlgamma_polygamma_twins():
    """ts.mvlgamma/polygamma, x.mvlgamma/polygamma and special.multigammaln/polygamma are one
    definition each (special's were wrappers over ts's)."""
    a = np.array([2.5, 3.0, 7.25], dtype=np.float64)
    x, t = ts.asarray(a), torch.from_numpy(a)
    want = torch.mvlgamma(t, 3)
    for got in (ts.mvlgamma(x, 3), x.mvlgamma(3), ts.special.multigammaln(x, 3)):
        assert_same(got, want, rtol=1e-10)
    want = torch.polygamma(2, t)
    for got in (ts.polygamma(2, x), x.polygamma(2), ts.special.polygamma(2, x)):
        assert_same(got, want, rtol=1e-10)


def test_tensordot_forms_are_one_definition():
    """ts.tensordot / ts.linalg.tensordot take the standard's axes= and torch's dims (positional,
    keyword or a tensor) in one definition (was: a torch wrapper over the standard function)."""
    a = np.arange(24, dtype=np.float64).reshape(2, 3, 4)
    b = np.arange(60, dtype=np.float64).reshape(3, 4, 5)
    x, y, tx, ty = ts.asarray(a), ts.asarray(b), torch.from_numpy(a), torch.from_numpy(b)
    want = torch.tensordot(tx, ty, dims=2)
    for got in (ts.tensordot(x, y), ts.tensordot(x, y, 2), ts.tensordot(x, y, dims=2),
                ts.tensordot(x, y, axes=([1, 2], [0, 1])), ts.tensordot(x, y, ts.asarray(2)),
                ts.linalg.tensordot(x, y, dims=([1, 2], [0, 1]))):
        assert_same(got, want)
    import inspect
    assert inspect.unwrap(ts.tensordot) is ts._linalg_core.tensordot
    with pytest.raises(TypeError):
        ts.tensordot(x, y, 2, axes=2)


def test_einsum_forms_are_one_definition():
    """ts.einsum takes torch's sublist form and raises a ValueError that is also a
    RuntimeError, in its one definition (was: a wrapper over the standard function)."""
    a = np.arange(6, dtype=np.float64).reshape(2, 3)
    b = np.arange(12, dtype=np.float64).reshape(3, 4)
    want = torch.einsum(torch.from_numpy(a), [0, 1], torch.from_numpy(b), [1, 2], [0, 2])
    assert_same(ts.einsum(ts.asarray(a), [0, 1], ts.asarray(b), [1, 2], [0, 2]), want)
    assert_same(ts.einsum("ij,jk->ik", ts.asarray(a), ts.asarray(b)), want)
    import inspect
    assert inspect.unwrap(ts.einsum) is ts._einsum.einsum
    for exc in (ValueError, RuntimeError):
        with pytest.raises(exc):
            ts.einsum("i,i", ts.ones(2), ts.ones(3))


def test_nonzero_concat_forms_are_one_definition():
    """ts.nonzero(as_tuple=) and ts.concat(tensors, dim) (positional dim) in one definition
    each (were wrappers over the standard functions)."""
    a = np.array([[0, 1], [2, 0]])
    x, t = ts.asarray(a), torch.from_numpy(a)
    assert_same(ts.nonzero(x, as_tuple=False), torch.nonzero(t, as_tuple=False))
    assert_same(ts.nonzero(x, as_tuple=True), torch.nonzero(t, as_tuple=True))
    assert_same(ts.concat([x, x], 1), torch.concat([t, t], 1))
    assert_same(ts.concat([x, x], dim=1), torch.concat([t, t], dim=1))
    import inspect
    assert inspect.unwrap(ts.nonzero) is ts._indexing.nonzero
    with pytest.raises(TypeError):
        ts.concat([x, x], 1, dim=1)


@pytest.mark.parametrize("args,kw", [((), {}), ((1, 0), {}), ((), {"dim": 0}), ((2,), {"dim": 1})])
def test_diff_is_one_definition(args, kw):
    """ts.diff and x.diff are one definition taking the standard's axis= and torch's positional
    n, dim (was: two wrappers over the standard function and a separate method)."""
    a = np.array([[1, 4, 9, 3], [2, 3, 7, 0]])
    want = torch.diff(torch.from_numpy(a), *args, **kw)
    assert_same(ts.diff(ts.asarray(a), *args, **kw), want)
    assert_same(ts.asarray(a).diff(*args, **kw), want)
    import inspect
    assert inspect.unwrap(ts.diff) is ts._statistical.diff
    assert_same(ts.count_nonzero(ts.asarray(a), 0), torch.count_nonzero(torch.from_numpy(a), 0))


@pytest.mark.parametrize("name", ["mul", "multiply"])
def test_mul_method_is_the_function(name):
    """x.multiply was a Python forwarder of _C.multiply; now one object, as add/div."""
    assert getattr(ts.Tensor, name) is ts.multiply
    x = ts.asarray([1.0, 2.0])
    assert_same(getattr(x, name)(3), torch.tensor([3.0, 6.0]))


def test_zero_division_error_is_tessera_errors_class():
    """The op raises tessera.errors.ZeroDivisionError (a ZeroDivisionError and a
    RuntimeError), naming the op and the divisor; no Python re-raise."""
    with pytest.raises(ts.errors.ZeroDivisionError, match="div: .*divisor of int64"):
        ts.div(ts.asarray([1, 2]), ts.asarray([1, 0]), rounding_mode="trunc")
    assert issubclass(ts.errors.ZeroDivisionError, RuntimeError)


@pytest.mark.parametrize("name", ["add", "sub", "mul", "div", "true_divide"])
def test_out_writes_into_out_like_torch(name):
    """out= was refused by the wrappers (an unexpected keyword); now written as PyTorch."""
    a = np.array([[1.5, -2.0], [3.0, 0.25]], dtype=np.float32)
    b = np.array([0.5, 4.0], dtype=np.float32)
    want = getattr(torch, name)(torch.from_numpy(a), torch.from_numpy(b))
    out = ts.zeros((2, 2))
    got = getattr(ts, name)(ts.asarray(a), ts.asarray(b), out=out)
    assert got is out
    assert_same(out, want)
    out3 = ts.zeros(3)  # resized with PyTorch's deprecation warning (Note [out= rules])
    with pytest.warns(UserWarning, match="An output with one or more elements was resized"):
        assert getattr(ts, name)(ts.asarray(a), ts.asarray(b), out=out3) is out3
    assert_same(out3, want)
    with pytest.raises(RuntimeError, match="can't be cast"):
        getattr(ts, name)(ts.asarray(a), ts.asarray(b), out=ts.zeros((2, 2), dtype=ts.int64))
    x = ts.asarray(a, requires_grad=True)
    with pytest.raises(RuntimeError, match="out=... arguments don't support automatic"):
        getattr(ts, name)(x, ts.asarray(b), out=ts.zeros((2, 2)))


@pytest.mark.parametrize("dtype", ["int8", "float32", "float64"])
def test_alpha_with_python_number_other_stays_weak(dtype):
    """ts.add(x, 2, alpha=3): the Python number times alpha stays a weak scalar (x's dtype)."""
    a = np.array([1, 2, 3], dtype=dtype)
    for name in ("add", "sub"):
        want = getattr(torch, name)(torch.from_numpy(a), 2, alpha=3)
        assert_same(getattr(ts, name)(ts.asarray(a), 2, alpha=3), want)
    if dtype != "int8":
        want = torch.add(torch.from_numpy(a), 0.1, alpha=3)
        assert_same(ts.add(ts.asarray(a), 0.1, alpha=3), want)


def test_inplace_keyword_forms():
    """x.subtract_(y, alpha=), x.divide_(y, rounding_mode=) and x.true_divide_(y) are C++
    methods with PyTorch's keywords (were generated Python twins)."""
    a = np.array([7.0, -7.0, 5.5], dtype=np.float32)
    b = np.array([2.0, 2.0, -2.0], dtype=np.float32)
    for call in (lambda t, u: t.subtract_(u, alpha=2), lambda t, u: t.divide_(u, rounding_mode="floor"),
                 lambda t, u: t.true_divide_(u), lambda t, u: t.multiply_(u)):
        want = call(torch.from_numpy(a.copy()), torch.from_numpy(b))
        x = ts.asarray(a.copy())
        assert call(x, ts.asarray(b)) is x
        assert_same(x, want)


def test_bad_alpha_and_rounding_mode_types():
    x = ts.ones(2)
    with pytest.raises(TypeError, match="alpha must be a number"):
        ts.add(x, x, alpha="2")
    with pytest.raises(TypeError, match="rounding_mode must be None"):
        ts.div(x, x, rounding_mode=1)
