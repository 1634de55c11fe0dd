"""tessera.special: torch.special's functions (scipy.special names) built from tessera's
differentiable ops: error functions (erf, erfc, erfcx, erfinv, ndtr, ndtri, log_ndtr), gamma
family (gammaln, digamma/psi, polygamma, multigammaln), modified Bessel functions (i0, i0e, i1,
i1e), orthogonal polynomials (Chebyshev, Hermite, Laguerre, Legendre), entr, xlogy, xlog1py,
expit/logit, softmax/log_softmax/logsumexp, sinc, round.

Integer and bool inputs compute in the default float dtype, as torch's. The Bessel functions
use their power series for |x| <= 15 and the large-argument asymptotic expansion beyond,
evaluated in float64 (about 1e-15 relative error) and cast back.

Note [gamma series]: for x >= 0.5 both use the recurrence to shift the argument to z = x + 10
and the asymptotic (Stirling / de Moivre) series there, whose truncation error at z >= 10.5 is
below 1e-15; x < 0.5 uses the reflection formula. Autograd differentiates the series term by
term, which gives the series of the derivative, so gradients are as accurate as values. Poles
(x = 0, -1, -2, ...) are mapped like torch: lgamma -> inf, digamma(+-0) -> -+inf, digamma at
negative integers -> NaN.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Optional

from . import _C
from ._C import Tensor
from ._dtypes import float16 as _f16, bfloat16 as _bf16, float32 as _f32, float64 as _f64
from .autograd.function import Function, FunctionCtx

__all__ = ["erf", "erfc", "erfcx", "erfinv", "ndtr", "ndtri", "log_ndtr", "expit", "logit",
           "exp2", "expm1", "log1p", "gammaln", "digamma", "psi", "polygamma", "multigammaln",
           "i0", "i0e", "i1", "i1e", "modified_bessel_i0", "modified_bessel_i1", "entr",
           "xlogy", "xlog1py", "sinc", "round", "softmax", "log_softmax", "logsumexp",
           "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
           "chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
           "laguerre_polynomial_l", "legendre_polynomial_p", "gammainc", "gammaincc", "zeta"]


def _ts() -> Any:
    import tessera
    return tessera


def _float(x: Any) -> Tensor:
    """x as a floating tensor (ints and bools in the default float dtype)."""
    ts = _ts()
    if not isinstance(x, Tensor):
        x = ts.asarray(x)
    if not ts.isdtype(x.dtype, ("real floating", "complex floating")):
        x = x.astype(ts.get_default_dtype())
    return x


def erf(input: Tensor) -> Tensor:
    return _ts().erf(_float(input))


def erfc(input: Tensor) -> Tensor:
    return _ts().erfc(_float(input))


def erfcx(input: Tensor) -> Tensor:
    """exp(x^2) erfc(x), evaluated without overflow for large positive x."""
    ts = _ts()
    x = _float(input)
    big = x > 25.0
    xs = ts.where(big, ts.zeros_like(x), x)
    xl = ts.where(big, x, ts.full_like(x, 26.0))
    direct = ts.exp(xs * xs) * ts.erfc(xs)
    inv2 = 1.0 / (2.0 * xl * xl)
    asym = (1.0 - inv2 + 3.0 * inv2 * inv2 - 15.0 * inv2 ** 3) / (xl * math.sqrt(math.pi))
    return ts.where(big, asym, direct)


def ndtr(input: Tensor) -> Tensor:
    """The standard normal CDF."""
    x = _float(input)
    return 0.5 * _ts().erfc(-x / math.sqrt(2.0))


def ndtri(input: Tensor) -> Tensor:
    """The inverse of ndtr (-inf at 0, inf at 1, nan outside [0, 1])."""
    p = _float(input)
    return math.sqrt(2.0) * _ts().erfinv(2.0 * p - 1.0)


def log_ndtr(input: Tensor) -> Tensor:
    """log(ndtr(x)), with the asymptotic series below x = -20 where ndtr underflows."""
    ts = _ts()
    x = _float(input)
    tail = x < -20.0
    xs = ts.where(tail, ts.zeros_like(x), x)
    xl = ts.where(tail, x, ts.full_like(x, -21.0))
    z = 1.0 / (xl * xl)
    series = 1.0 - z + 3.0 * z * z - 15.0 * z ** 3 + 105.0 * z ** 4
    asym = -0.5 * xl * xl - ts.log(-xl) - 0.5 * math.log(2.0 * math.pi) + ts.log(series)
    return ts.where(tail, asym, ts.log(ndtr(xs)))


def expit(input: Tensor) -> Tensor:
    return _ts().sigmoid(_float(input))


def logit(input: Tensor, eps: Optional[float] = None) -> Tensor:
    return _ts().logit(_float(input), eps)


def exp2(input: Tensor) -> Tensor:
    return _ts().exp2(_float(input))


def expm1(input: Tensor) -> Tensor:
    return _ts().expm1(_float(input))


def log1p(input: Tensor) -> Tensor:
    return _ts().log1p(_float(input))


_SHIFT = 10


def _as_float64(input: Any) -> Any:
    """input in float64, and the dtype the result takes: input's floating dtype, else the
    default dtype (torch's rule for integer and bool inputs)."""
    if not isinstance(input, Tensor):
        input = _ts().asarray(input)
    if input.dtype in (_C.complex64, _C.complex128):
        raise RuntimeError(f"special function: not implemented for {input.dtype}")
    dt = input.dtype if input.dtype in (_f16, _bf16, _f32, _f64) else \
        _ts().get_default_dtype()
    x = input if input.dtype == _f64 else _C._astype(input, _f64, True)
    return x, dt


def _lgamma_pos(x: Tensor) -> Tensor:
    """lgamma for x >= 0.5 (Note [gamma series])."""
    z = x + _SHIFT
    logs = _C.log(x)
    for k in range(1, _SHIFT):
        logs = logs + _C.log(x + k)
    r = _C.reciprocal(z)
    r2 = r * r
    series = r * (1 / 12 - r2 * (1 / 360 - r2 * (1 / 1260 - r2 * (
        1 / 1680 - r2 * (1 / 1188 - r2 * (691 / 360360 - r2 * (1 / 156)))))))
    return (z - 0.5) * _C.log(z) - z + 0.5 * math.log(2 * math.pi) + series - logs


def _digamma_pos(x: Tensor) -> Tensor:
    """digamma for x >= 0.5 (Note [gamma series])."""
    z = x + _SHIFT
    acc = _C.reciprocal(x)
    for k in range(1, _SHIFT):
        acc = acc + _C.reciprocal(x + k)
    r = _C.reciprocal(z)
    r2 = r * r
    series = r2 * (1 / 12 - r2 * (1 / 120 - r2 * (1 / 252 - r2 * (1 / 240 - r2 * (
        1 / 132 - r2 * (691 / 32760 - r2 * (1 / 12)))))))
    return _C.log(z) - 0.5 * r - series - acc


def _is_pole(x: Tensor) -> Tensor:
    return (x <= 0) & (_C.floor(x) == x)


def lgamma(input: Tensor) -> Tensor:
    """log|Gamma(input)| (torch.lgamma, special.gammaln): a float result; +inf at the poles
    0, -1, -2, ... and at +-inf."""
    x, dt = _as_float64(input)
    refl = x < 0.5
    pole = _is_pole(x) | _C.isinf(x)
    xs = _C.where(pole, 1.0, x)  # keeps the unselected branches finite (and their grads)
    lg = _lgamma_pos(_C.where(refl, 1.0 - xs, xs))
    s = _C.abs(_C.sin(math.pi * _C.where(refl, xs, 0.5)))
    out = _C.where(refl, math.log(math.pi) - _C.log(s) - lg, lg)
    return _C._astype(_C.where(pole, math.inf, out), dt, True)


def digamma(input: Tensor) -> Tensor:
    """d/dx log Gamma(x) (float result; -inf at 0, NaN at negative integers and -inf)."""
    x, dt = _as_float64(input)
    refl = x < 0.5
    pole = _is_pole(x)
    xs = _C.where(pole | _C.isinf(x), 1.0, x)
    dg = _digamma_pos(_C.where(refl, 1.0 - xs, xs))
    out = _C.where(refl, dg - math.pi / _C.tan(math.pi * _C.where(refl, xs, 0.25)), dg)
    out = _C.where(x == math.inf, math.inf, _C.where(x == -math.inf, math.nan, out))
    zero = _C.where(_C.signbit(x), math.inf, -math.inf)  # torch: digamma(-0.0) = +inf
    out = _C.where(pole, _C.where(x == 0, zero, math.nan), out)
    return _C._astype(out, dt, True)


_GILES_CENTRAL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                  0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_GILES_TAIL = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
               0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)


def _horner(coefs: tuple, w: Tensor) -> Tensor:
    p = w * 0 + coefs[0]
    for c in coefs[1:]:
        p = p * w + c
    return p


def _erfinv_values(x: Tensor) -> Tensor:
    """erfinv by Giles' approximation refined with Newton steps on erf (no autograd)."""
    from .nn.functional.activation import erf
    inside = _C.abs(x) < 1
    xs = _C.where(inside, x, 0.0)
    w = -_C.log((1.0 - xs) * (1.0 + xs))
    central = _horner(_GILES_CENTRAL, w - 2.5)
    tail = _horner(_GILES_TAIL, _C.sqrt(_C.where(w < 5, 5.0, w)) - 3.0)
    y = _C.where(w < 5, central, tail) * xs
    for _ in range(2):
        y = y - (erf(y) - xs) / (_C.exp(-y * y) * (2 / math.sqrt(math.pi)))
    edge = _C.where(x == 1, math.inf, _C.where(x == -1, -math.inf, math.nan))
    return _C.where(inside, y, edge)


class _ErfInv(Function):
    @staticmethod
    def forward(ctx: FunctionCtx, x: Tensor) -> Tensor:  # type: ignore[override]
        y = _erfinv_values(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx: FunctionCtx, g: Tensor) -> Tensor:  # type: ignore[override]
        (y,) = ctx.saved_tensors
        return g * (math.sqrt(math.pi) / 2) * _C.exp(y * y)


def erfinv(input: Tensor) -> Tensor:
    """The inverse error function on (-1, 1); +-inf at +-1, NaN outside."""
    x, dt = _as_float64(input)
    return _C._astype(_ErfInv.apply(x), dt, True)


gammaln = lgamma
psi = digamma


_MVLGAMMA_MAX_P = 1 << 16


def mvlgamma(input: Tensor, p: int) -> Tensor:  # torch.mvlgamma, special.multigammaln
    """The multivariate log-gamma of dimension p: sum_i lgamma(x - i/2) + p(p-1)/4 log(pi)
    (defined for x > (p - 1) / 2; elsewhere the formula's value, as torch gives)."""
    if isinstance(p, bool) or not hasattr(p, "__index__"):
        raise TypeError(f"mvlgamma: p must be an int, got {type(p).__name__}")
    p = p.__index__()
    if p < 1:
        raise RuntimeError(f"mvlgamma: p has to be greater than or equal to 1, got {p}")
    if p > _MVLGAMMA_MAX_P:  # one lgamma pass per term: a huge p would run for ages
        raise ValueError(f"mvlgamma: p={p} is too large (at most {_MVLGAMMA_MAX_P} terms)")
    input = _float(input)
    out = lgamma(input)
    for i in range(1, p):
        out = out + lgamma(input - i / 2)
    return out + p * (p - 1) / 4 * math.log(math.pi)


_BERNOULLI_2K = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6)


_POLYGAMMA_MAX_N = 170  # the largest n whose n! is a finite float64


def polygamma(n: int, input: Tensor) -> Tensor:
    """torch.polygamma and special.polygamma: the n-th derivative of digamma: (-1)**(n+1) n! zeta(n + 1, x) for n >= 1 (float64
    series: the recurrence shifts x by 12, then Euler-Maclaurin)."""
    from ._arg_errors import int_arg
    n = int_arg("polygamma", "n", n)
    if n < 0:
        raise RuntimeError(f"polygamma: does not support negative n, got {n}")
    if n == 0:
        return digamma(input)
    x, dt = _as_float64(input)
    if n > _POLYGAMMA_MAX_N:  # n! overflows float64: +-inf everywhere, as torch gives
        inf = math.inf if n % 2 else -math.inf
        return _C._astype(_C.where(x == x, inf, x), dt, True)
    s = n + 1
    shift = 12
    acc = x * 0
    for k in range(shift):
        acc = acc + _C.pow(x + k, -float(s))
    z = x + shift
    tail = _C.pow(z, 1.0 - s) / (s - 1) + 0.5 * _C.pow(z, -float(s))
    rising = float(s)  # (s)_(2k-1): s (s+1) ... (s + 2k - 2)
    fact = 2.0         # (2k)!
    for k, b in enumerate(_BERNOULLI_2K, start=1):
        tail = tail + b / fact * rising * _C.pow(z, -float(s + 2 * k - 1))
        rising *= (s + 2 * k - 1) * (s + 2 * k)
        fact *= (2 * k + 1) * (2 * k + 2)
    out = (acc + tail) * ((-1.0) ** (n + 1) * math.factorial(n))
    pole = (x <= 0) & (_C.floor(x) == x)
    return _C._astype(_C.where(pole, -math.inf if n % 2 == 0 else math.inf, out), dt, True)


multigammaln = mvlgamma


def _polygamma_method(self: Tensor, n: int) -> Tensor:
    """x.polygamma(n) (torch's argument order for the method)."""
    return polygamma(n, self)


def _bessel(input: Tensor, order: int, scaled: bool) -> Tensor:
    """I_order(x) (times exp(-|x|) when `scaled`), order 0 or 1."""
    ts = _ts()
    x0 = _float(input)
    x = x0.astype(ts.float64) if x0.dtype != ts.float64 else x0
    ax = ts.abs(x)
    small = ax <= 15.0
    xs = ts.where(small, x, ts.zeros_like(x))
    # power series: sum_k (x/2)^(2k+order) / (k! (k+order)!)
    q = xs * xs / 4.0
    term = ts.ones_like(xs) if order == 0 else xs / 2.0
    total = term
    for k in range(1, 60):
        term = term * q / (k * (k + order))
        total = total + term
    series = total * ts.exp(-ts.abs(xs)) if scaled else total
    # asymptotic: e^|x| / sqrt(2 pi |x|) * sum_k prod_j -(mu - (2j-1)^2) / (8 j |x|)
    xl = ts.where(small, ts.full_like(x, 16.0), ax)
    mu = 4.0 * order * order
    term = ts.ones_like(xl)
    acc = term
    for k in range(1, 30):
        term = term * (-(mu - (2 * k - 1) ** 2)) / (8.0 * k * xl)
        acc = acc + term
    asym = acc / ts.sqrt(2.0 * math.pi * xl)
    if not scaled:
        asym = asym * ts.exp(xl)
    if order == 1:
        asym = asym * ts.sign(x)
    return ts.where(small, series, asym).astype(x0.dtype)


def i0(input: Tensor) -> Tensor:
    """The modified Bessel function of the first kind, order 0."""
    return _bessel(input, 0, False)


def i0e(input: Tensor) -> Tensor:
    """exp(-|x|) * i0(x)."""
    return _bessel(input, 0, True)


def i1(input: Tensor) -> Tensor:
    """The modified Bessel function of the first kind, order 1."""
    return _bessel(input, 1, False)


def i1e(input: Tensor) -> Tensor:
    """exp(-|x|) * i1(x)."""
    return _bessel(input, 1, True)


modified_bessel_i0 = i0
modified_bessel_i1 = i1


class _Entr(Function):
    """entr's value, with torch's gradient -(1 + log(x)) everywhere (+inf at 0, NaN below)."""

    @staticmethod
    def forward(ctx: FunctionCtx, x: Tensor) -> Tensor:  # type: ignore[override]
        ctx.save_for_backward(x)
        return _entr_value(x)

    @staticmethod
    def backward(ctx: FunctionCtx, g: Tensor) -> Tensor:  # type: ignore[override]
        (x,) = ctx.saved_tensors
        return g * -(1 + _ts().log(x))


def entr(input: Tensor) -> Tensor:
    """-x log(x) for x > 0, 0 at 0, -inf for x < 0 (nan stays nan); the gradient is torch's
    -(1 + log(x)) (+inf at 0)."""
    x = _float(input)
    if x.dtype in (_ts().complex64, _ts().complex128):
        return _entr_value(x)
    return _Entr.apply(x)


def _entr_value(x: Tensor) -> Tensor:
    ts = _ts()
    pos = x > 0
    safe = ts.where(pos, x, ts.ones_like(x))
    val = ts.where(pos, -safe * ts.log(safe), ts.zeros_like(x))
    val = ts.where(x < 0, ts.full_like(x, -math.inf), val)
    return ts.where(ts.isnan(x), x, val)


def xlogy(input: Any, other: Any) -> Tensor:
    return _ts().xlogy(input, other)


def xlog1py(input: Any, other: Any) -> Tensor:
    """x * log1p(y), 0 where x == 0 (unless y is nan); torch's gradients (d/dx is log1p(y),
    but 0 where x == 0 and y <= -1; d/dy is x / (1 + y))."""
    from ._elementwise import _xlogy
    return _xlogy(input, other, True)


def sinc(input: Tensor) -> Tensor:
    return _ts().sinc(_float(input))


def round(input: Tensor, *, decimals: int = 0) -> Tensor:
    return _ts().round(input, decimals=decimals)


def softmax(input: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
    return _ts().softmax(input, dim, dtype=dtype)


def log_softmax(input: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
    return _ts().log_softmax(input, dim, dtype=dtype)


def logsumexp(input: Tensor, dim: Any, keepdim: bool = False) -> Tensor:
    return _ts().logsumexp(input, dim, keepdim)


# ----------------------------------------------------------------------------- incomplete gamma
def _gamma_inc_parts(a: Tensor, x: Tensor) -> "tuple[Tensor, Tensor, Tensor]":
    """(P by its series, Q by its continued fraction, use-series mask) for a > 0, x > 0; each
    branch sees safe inputs where the other one is used (so neither overflows)."""
    ts = _ts()
    use_series = x < a + 1.0
    one = ts.ones_like(x)
    # series: P = x^a e^-x / Gamma(a + 1) * sum_n x^n / ((a+1)...(a+n))
    xs = ts.where(use_series, x, ts.zeros_like(x))
    term = one / a
    total = term
    ap = a
    for _ in range(300):
        ap = ap + 1.0
        term = term * xs / ap
        total = total + term
    log_pref = a * ts.log(ts.where(use_series, xs, one)) - xs - ts.lgamma(a)
    p_series = total * ts.exp(log_pref)
    # continued fraction for Q (modified Lentz), evaluated where x >= a + 1
    xc = ts.where(use_series, a + 2.0, x)
    tiny = 1e-300 if x.dtype == ts.float64 else 1e-30
    b = xc + 1.0 - a
    c = one / tiny
    d = one / b
    h = d
    for i in range(1, 300):
        an = -i * (i - a)
        b = b + 2.0
        d = an * d + b
        d = ts.where(ts.abs(d) < tiny, ts.full_like(d, tiny), d)
        c = b + an / c
        c = ts.where(ts.abs(c) < tiny, ts.full_like(c, tiny), c)
        d = one / d
        h = h * d * c
    q_frac = ts.exp(a * ts.log(xc) - xc - ts.lgamma(a)) * h
    return p_series, q_frac, use_series


def _gamma_inc(a: Any, x: Any, upper: bool) -> Tensor:
    ts = _ts()
    a, x = _float(a), _float(x)
    dt = ts.result_type(a, x)
    a, x = ts.broadcast_arrays(a.astype(dt), x.astype(dt))
    ok = (a > 0) & (x > 0)
    a_s = ts.where(ok, a, ts.ones_like(a))
    x_s = ts.where(ok, x, ts.ones_like(x))
    p, q, series = _gamma_inc_parts(a_s, x_s)
    val = ts.where(series, 1.0 - p, q) if upper else ts.where(series, p, 1.0 - q)
    # edges as torch: x == 0 gives P = 0; a == 0 (x > 0) gives P = 1; negatives give nan
    zero_x = (x == 0) & (a > 0)
    zero_a = (a == 0) & (x > 0)
    val = ts.where(zero_x, ts.full_like(val, 1.0 if upper else 0.0), val)
    val = ts.where(zero_a, ts.full_like(val, 0.0 if upper else 1.0), val)
    bad = (a < 0) | (x < 0) | ((a == 0) & (x == 0)) | ts.isnan(a) | ts.isnan(x)
    return ts.where(bad, ts.full_like(val, math.nan), val)


def gammainc(input: Any, other: Any) -> Tensor:
    """The regularized lower incomplete gamma function P(a, x) (a = input, x = other)."""
    return _gamma_inc(input, other, False)


def gammaincc(input: Any, other: Any) -> Tensor:
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x)."""
    return _gamma_inc(input, other, True)


# ----------------------------------------------------------------------------- polynomials
# Note [polynomials of large degree]
# The degree n is data (a tensor or a huge int), so no Python loop may run n times: the
# three-term recurrence runs for degrees up to _EXACT_DEGREE only (as torch's loop, the same
# values). Larger degrees use bounded closed forms: Chebyshev's trigonometric/hyperbolic forms
# (which torch itself uses for |x| < 1), Stieltjes' asymptotic series and the terminating
# hypergeometric series for Legendre, the positive power series (x < 0) and Hilb's Bessel
# approximation (x > 0, absolute error about x^(5/4) n^(-3/4) e^(x/2)) for Laguerre; Hermite
# values overflow long before and give NaN (torch's limit). Where the value overflows, the
# result is NaN as torch's recurrence gives (inf - inf).
_EXACT_DEGREE = 512


def _degree(x: Any, n: Any) -> "tuple[Tensor, Tensor, Tensor, int]":
    """(x as float, n broadcast as x's dtype, n's odd mask, max n): n truncates toward zero
    (2.7 -> 2, -0.5 -> 0) and NaN counts as negative, as torch's cast."""
    ts = _ts()
    x = _float(x)
    n_t = n if isinstance(n, Tensor) else ts.asarray(n)
    if n_t.dtype == ts.bool:
        n_t = n_t.astype(ts.int64)
    if ts.isdtype(n_t.dtype, "complex floating"):
        raise TypeError("special polynomial: the degree n must be real, got "
                        f"{n_t.dtype}")
    if ts.isdtype(n_t.dtype, "real floating"):
        if isinstance(n, Tensor) and ts.isdtype(x.dtype, "real floating"):
            x = x.astype(ts.result_type(x, n_t))
        n_t = ts.where(ts.isnan(n_t), -1.0, ts.trunc(n_t.astype(ts.float64)))
        odd = ts.fmod(n_t, 2.0) != 0
    else:
        odd = (n_t % 2) != 0
    nmax = int(ts.max(n_t).item()) if n_t.size else 0
    x, n_b, odd = ts.broadcast_arrays(x, n_t.astype(x.dtype) if n_t.dtype != x.dtype else n_t,
                                      odd)
    return x, n_b, odd, nmax


def _polynomial(x: Any, n: Any, p0: Callable[[Tensor], Tensor], p1: Callable[[Tensor], Tensor],
                step: Callable[[Tensor, Tensor, Tensor, int], Tensor],
                closed: Optional[Callable[[Tensor, Tensor, Tensor], "tuple[Tensor, Tensor]"]]
                ) -> Tensor:
    """P_n(x) from P_0, P_1 and P_{k+1} = step(x, P_k, P_{k-1}, k) for n <= _EXACT_DEGREE;
    `closed(x64, n64, odd)` gives (mask, value) in float64 for the elements it computes in
    closed form (always those with n > _EXACT_DEGREE). Negative n gives 0."""
    ts = _ts()
    x, n_b, odd, nmax = _degree(x, n)
    prev, cur = p0(x), p1(x)
    out = ts.where(n_b == 0, prev, ts.zeros_like(x))
    out = ts.where(n_b == 1, cur, out)
    for k in range(1, _builtin_min(nmax, _EXACT_DEGREE)):
        prev, cur = cur, step(x, cur, prev, k)
        out = ts.where(n_b == k + 1, cur, out)
    if closed is not None and x.size:
        real = ts.isdtype(x.dtype, "real floating")
        x64 = x.astype(ts.float64) if real else x.astype(ts.complex128)
        n64 = n_b.astype(ts.float64)
        mask, val = closed(x64, ts.where(n64 < 0, 0.0, n64), odd)
        mask = mask & (n64 >= 0)
        if bool(ts.any(mask).item()):
            if real:
                val = ts.where(ts.isfinite(val) | ts.isnan(x64), val, math.nan)
            out = ts.where(mask, val.astype(x.dtype), out)
    return out


def _sign_pow(odd: Tensor, negative: Tensor) -> Tensor:
    """(-1)^n where `negative`, else 1."""
    return _ts().where(odd & negative, -1.0, 1.0)


def _chebyshev(kind: str, trig_above: int) -> Callable[[Tensor, Tensor, Tensor], Any]:
    """Closed forms of Chebyshev T/U/V/W: trigonometric for |x| < 1 (where torch uses them),
    hyperbolic for |x| > 1, torch's endpoint values at |x| == 1."""
    def closed(x: Tensor, n: Tensor, odd: Tensor) -> "tuple[Tensor, Tensor]":
        ts = _ts()
        if not ts.isdtype(x.dtype, "real floating"):
            return n > _EXACT_DEGREE, ts.full_like(x, math.nan)
        ax = ts.abs(x)
        inside = ax < 1
        neg = x < 0
        th = ts.acos(ts.where(inside, x, 0.5))
        t = ts.acosh(ts.where(inside, 2.0, ax))
        np1, nh = n + 1.0, n + 0.5
        sgn = _sign_pow(odd, neg)
        if kind == "t":
            ins = ts.cos(n * th)
            out = sgn * ts.cosh(n * t)
            edge = sgn
        elif kind == "u":
            s = ts.sin(th)
            ins = ts.where(s != 0, ts.sin(np1 * th) / ts.where(s != 0, s, 1.0),
                           np1 * ts.cos(np1 * th))
            out = sgn * ts.sinh(np1 * t) / ts.sinh(t)
            edge = sgn * np1
        else:
            cos_v, sin_w = ts.cos(nh * th) / ts.cos(th / 2), ts.sin(nh * th) / ts.sin(th / 2)
            v_out = ts.cosh(nh * t) / ts.cosh(t / 2)   # V_n(|x|) for |x| > 1
            w_out = ts.sinh(nh * t) / ts.sinh(t / 2)   # W_n(|x|)
            odd_sign = ts.where(odd, -1.0, 1.0)
            if kind == "v":   # V_n(-y) = (-1)^n W_n(y)
                ins = cos_v
                out = ts.where(neg, odd_sign * w_out, v_out)
                edge = ts.where(neg, odd_sign * (2 * n + 1), 1.0)
            else:             # W_n(-y) = (-1)^n V_n(y)
                ins = sin_w
                out = ts.where(neg, odd_sign * v_out, w_out)
                edge = ts.where(neg, odd_sign, 2 * n + 1)
        val = ts.where(inside, ins, ts.where(ax == 1, edge, out))
        mask = (n > _EXACT_DEGREE) | (inside & (n > trig_above)) | (ax == 1)
        return mask, val
    return closed


def chebyshev_polynomial_t(input: Any, n: Any) -> Tensor:
    """T_n(x): T_0 = 1, T_1 = x, T_{k+1} = 2x T_k - T_{k-1}; cos(n acos x) for |x| < 1 and
    large n (elementwise; n broadcasts with x)."""
    return _polynomial(input, n, lambda x: x * 0 + 1, lambda x: x,
                       lambda x, c, p, k: 2 * x * c - p, _chebyshev("t", 6))


def chebyshev_polynomial_u(input: Any, n: Any) -> Tensor:
    """U_n(x): U_0 = 1, U_1 = 2x (elementwise; n broadcasts with x)."""
    return _polynomial(input, n, lambda x: x * 0 + 1, lambda x: 2 * x,
                       lambda x, c, p, k: 2 * x * c - p, _chebyshev("u", 8))


def chebyshev_polynomial_v(input: Any, n: Any) -> Tensor:
    """V_n(x): V_0 = 1, V_1 = 2x - 1 (elementwise; n broadcasts with x)."""
    return _polynomial(input, n, lambda x: x * 0 + 1, lambda x: 2 * x - 1,
                       lambda x, c, p, k: 2 * x * c - p, _chebyshev("v", 8))


def chebyshev_polynomial_w(input: Any, n: Any) -> Tensor:
    """W_n(x): W_0 = 1, W_1 = 2x + 1 (elementwise; n broadcasts with x)."""
    return _polynomial(input, n, lambda x: x * 0 + 1, lambda x: 2 * x + 1,
                       lambda x, c, p, k: 2 * x * c - p, _chebyshev("w", 8))


def _overflowed(x: Tensor, n: Tensor, odd: Tensor) -> "tuple[Tensor, Tensor]":
    """Degrees past _EXACT_DEGREE whose values overflow float64: NaN (torch's limit)."""
    return n > _EXACT_DEGREE, _ts().full_like(x, math.nan)


def hermite_polynomial_h(input: Any, n: Any) -> Tensor:
    """Physicists' H_n(x): H_0 = 1, H_1 = 2x, H_{k+1} = 2x H_k - 2k H_{k-1}; NaN for
    n > 512 (overflow, as torch)."""
    return _polynomial(input, n, lambda x: x * 0 + 1, lambda x: 2 * x,
                       lambda x, c, p, k: 2 * x * c - 2 * k * p, _overflowed)


def hermite_polynomial_he(input: Any, n: Any) -> Tensor:
    """Probabilists' He_n(x): He_0 = 1, He_1 = x, He_{k+1} = x He_k - k He_{k-1}; NaN for
    n > 512 (overflow, as torch)."""
    return _polynomial(input, n, lambda x: x * 0 + 1, lambda x: x,
                       lambda x, c, p, k: x * c - k * p, _overflowed)


def _bessel_j0(z: Tensor) -> Tensor:
    """J_0(z) for z >= 0 in float64: power series below 25, Hankel's expansion above."""
    ts = _ts()
    small = z < 25.0
    zs = ts.where(small, z, 0.0)
    q = -zs * zs / 4.0
    term = ts.ones_like(zs)
    total = term
    for k in range(1, 90):
        term = term * q / (k * k)
        total = total + term
    zl = ts.where(small, 25.0, z)
    p_sum, q_sum = ts.ones_like(zl), -1.0 / (8.0 * zl)
    a, b = ts.ones_like(zl), -1.0 / (8.0 * zl)
    for j in range(1, 12):
        a = -a * (4 * j - 3) ** 2 * (4 * j - 1) ** 2 / ((2 * j - 1) * (2 * j) * (8.0 * zl) ** 2)
        b = -b * (4 * j - 1) ** 2 * (4 * j + 1) ** 2 / ((2 * j) * (2 * j + 1) * (8.0 * zl) ** 2)
        p_sum, q_sum = p_sum + a, q_sum + b
    xi = zl - math.pi / 4
    asym = ts.sqrt(2.0 / (math.pi * zl)) * (p_sum * ts.cos(xi) - q_sum * ts.sin(xi))
    return ts.where(small, total, asym)


def _laguerre_closed(x: Tensor, n: Tensor, odd: Tensor) -> "tuple[Tensor, Tensor]":
    ts = _ts()
    big = n > _EXACT_DEGREE
    if not ts.isdtype(x.dtype, "real floating"):
        return big, ts.full_like(x, math.nan)
    # x <= 0: sum_k C(n, k) |x|^k / k!, all terms positive; overflow past 2 sqrt(n|x|) ~ 709
    ax = ts.where(x < 0, -x, 0.0)
    growth = 2.0 * ts.sqrt(n * ax)
    term = ts.ones_like(x)
    total = term
    if bool(ts.any(big & (x < 0)).item()):
        for k in range(1100):
            term = term * (n - k) * ax / ((k + 1.0) ** 2)
            total = total + ts.where(n > k, term, 0.0)
    neg = ts.where(growth > 709.0, math.nan, total)
    # x > 0: Hilb's formula e^(x/2) J_0(2 sqrt((n + 1/2) x))
    xp = ts.where(x > 0, x, 0.0)
    pos = ts.exp(xp / 2) * _bessel_j0(2.0 * ts.sqrt((n + 0.5) * xp))
    pos = ts.where(xp > 4.0 * n, math.nan, pos)   # beyond the oscillatory region: overflow
    val = ts.where(x == 0, 1.0, ts.where(x < 0, neg, pos))
    return big | (x == 0), val


def laguerre_polynomial_l(input: Any, n: Any) -> Tensor:
    """L_n(x): L_0 = 1, L_1 = 1 - x, (k+1) L_{k+1} = (2k + 1 - x) L_k - k L_{k-1} (see
    Note [polynomials of large degree] for n > 512)."""
    return _polynomial(input, n, lambda x: x * 0 + 1, lambda x: 1 - x,
                       lambda x, c, p, k: ((2 * k + 1 - x) * c - k * p) / (k + 1),
                       _laguerre_closed)


def _legendre_closed(x: Tensor, n: Tensor, odd: Tensor) -> "tuple[Tensor, Tensor]":
    ts = _ts()
    big = n > _EXACT_DEGREE
    ax = ts.abs(x)
    edge = ax == 1
    if not ts.isdtype(x.dtype, "real floating"):
        return big, ts.full_like(x, math.nan)
    sgn = _sign_pow(odd, x < 0)                     # P_n(-y) = (-1)^n P_n(y)
    theta = ts.acos(ts.where(ax < 1, ax, 0.5))
    sin_t = ts.sin(theta)
    stieltjes = big & (ax < 1) & (n * sin_t >= 16.0)
    val = ts.full_like(x, math.nan)
    if bool(ts.any(stieltjes).item()):
        # P_n(cos t) = C_n sum_m h_m cos((n + m + 1/2) t - (m + 1/2) pi/2) / (2 sin t)^(m+1/2)
        nn = ts.where(stieltjes, n, 1000.0)
        s2 = 2.0 * ts.where(stieltjes, sin_t, 1.0)
        c_n = (2.0 / math.sqrt(math.pi)) * ts.exp(ts.lgamma(nn + 1.0) - ts.lgamma(nn + 1.5))
        h = ts.ones_like(x)
        total = ts.zeros_like(x)
        for m in range(40):
            if m:
                h = h * (m - 0.5) ** 2 / (m * (nn + m + 0.5) * s2)
            total = total + h * ts.cos((nn + m + 0.5) * theta - (m + 0.5) * math.pi / 2)
        val = ts.where(stieltjes, c_n * total / ts.sqrt(s2), val)
    series = big & ~stieltjes & ~edge
    if bool(ts.any(series).item()):
        # 2F1(-n, n + 1; 1; (1 - y) / 2): terminating; alternating but short near y = 1
        # (n sin t < 16), all terms positive for y > 1 (ended by overflow)
        z = (1.0 - ts.where(series, ax, 1.0)) / 2.0
        nn = ts.where(series, n, 0.0)
        term = ts.ones_like(x)
        total = term
        for k in range(1200):
            term = term * (k - nn) * (nn + k + 1.0) / ((k + 1.0) ** 2) * z
            total = total + ts.where(nn > k, term, 0.0)
        val = ts.where(series, total, val)
        # past n acosh|y| ~ 720 the value overflows (NaN as torch's recurrence): the
        # 1200-term sum would stop short there
        t = ts.acosh(ts.where(ax > 1, ax, 1.0))
        val = ts.where(series & (n * t > 720.0), math.nan, val)
    val = ts.where(edge, 1.0, val) * sgn
    return big | edge, val


def legendre_polynomial_p(input: Any, n: Any) -> Tensor:
    """P_n(x): P_0 = 1, P_1 = x, (k+1) P_{k+1} = (2k+1) x P_k - k P_{k-1} (see
    Note [polynomials of large degree] for n > 512)."""
    return _polynomial(input, n, lambda x: x * 0 + 1, lambda x: x,
                       lambda x, c, p, k: ((2 * k + 1) * x * c - k * p) / (k + 1),
                       _legendre_closed)


# ----------------------------------------------------------------------------- zeta
# B_2j-based divisors of the Euler-Maclaurin corrections: (2j)! / B_2j (Cephes' zeta.c).
_ZETA_A = (12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9,
           7.47242496e10, -2.950130727918164224e12, 1.1646782814350067249e14,
           -4.5979787224074726105e15, 1.8152105401943546773e17, -7.1661652561756670113e18)


def _zeta_pos(x: Tensor, q: Tensor) -> Tensor:
    """zeta(x, q) for q > 0 in float64: the first terms summed directly until k + q > 9 (at
    most 10 of them), then the Euler-Maclaurin tail (Cephes)."""
    ts = _ts()
    finite_q = ts.where(ts.isfinite(q), q, 9.0)
    n = _builtin_max(9, int(math.ceil(9.0 - float(ts.min(finite_q).item()))) + 1)
    s = ts.zeros_like(x)
    for k in range(n + 1):
        s = s + ts.pow(q + k, -x)
    w = q + n
    b = ts.pow(w, -x)
    s = s + b * w / (x - 1.0) - 0.5 * b
    a = ts.ones_like(x)
    kk = 0.0
    for div in _ZETA_A:
        a = a * (x + kk)
        b = b / w
        s = s + a * b / div
        kk += 1.0
        a = a * (x + kk)
        b = b / w
        kk += 1.0
    return s


def zeta(input: Any, other: Any) -> Tensor:
    """The Hurwitz zeta function zeta(x, q) = sum_{k>=0} (k + q)^-x (torch.special.zeta;
    x = input, q = other). Computed in float64 as Cephes (and torch) do: the first terms
    summed directly until k + q > 9, then the Euler-Maclaurin tail. x == 1 gives inf, x < 1
    NaN; q a non-positive integer gives inf, q < 0 with non-integral x NaN."""
    ts = _ts()
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        input = ts.asarray(input, dtype=ts.get_default_dtype())
    x_t, q_t = (v if isinstance(v, Tensor) else None for v in (input, other))
    if x_t is not None and q_t is not None:
        out_dtype = ts.result_type(x_t, q_t)
    else:
        out_dtype = (x_t if x_t is not None else q_t).dtype
    if not ts.isdtype(out_dtype, "real floating"):
        out_dtype = ts.get_default_dtype()
    x = ts.asarray(input, dtype=ts.float64) if not isinstance(input, Tensor) else input.astype(ts.float64)
    q = ts.asarray(other, dtype=ts.float64) if not isinstance(other, Tensor) else other.astype(ts.float64)
    if isinstance(input, Tensor) and isinstance(other, Tensor):
        x = x.to(other.device) if x.device != other.device else x
    x, q = ts.broadcast_arrays(x, q)
    if x.size == 0:
        return x.astype(out_dtype)
    # q <= 0 (integral x only): the terms with q + k < 0 fold onto positive arguments,
    # zeta(x, q) = zeta(x, g) + (-1)^x (zeta(x, 1 - g) - zeta(x, 1 - g + m)) with
    # q = g - m, 0 < g < 1, so no loop runs -q times (Note [polynomials of large degree]).
    pos = q > 0
    g = q - ts.floor(q)
    g = ts.where(pos | (g == 0) | ~ts.isfinite(g), 0.5, g)
    m = ts.where(pos | ~ts.isfinite(q), 1.0, -ts.floor(q))
    qp = ts.where(pos, q, g)
    s = _zeta_pos(x, qp)
    if not bool(ts.all(pos).item()):
        parity = ts.where(ts.fmod(x, 2.0) == 0, 1.0, -1.0)
        folded = (s + parity * _zeta_pos(x, 1.0 - g)) - parity * _zeta_pos(x, 1.0 - g + m)
        s = ts.where(pos, s, folded)
    inf, nan = ts.full_like(s, math.inf), ts.full_like(s, math.nan)
    q_int = q == ts.floor(q)
    s = ts.where((q <= 0) & (x != ts.floor(x)), nan, s)
    s = ts.where((q <= 0) & q_int, inf, s)
    s = ts.where(x < 1.0, nan, s)
    s = ts.where(x == 1.0, inf, s)
    s = ts.where(ts.isnan(x) | ts.isnan(q), nan, s)
    return s.astype(out_dtype)


_builtin_max = max
_builtin_min = min
