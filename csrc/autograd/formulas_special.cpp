// Backward formulas of the special functions (ops/special.h), PyTorch's derivatives written
// with ops (Note [Backward formulas]), so double backward works. polygamma w.r.t. n, zeta
// w.r.t. x raise NotImplementedError as torch's; modified_bessel_i0/i1 are not differentiable.
#include <cmath>
#include <limits>
#include <string_view>
#include <unordered_map>

#include "autograd/formulas_elementwise.h"
#include "ops/arithmetic.h"
#include "ops/bitwise.h"
#include "ops/compare.h"
#include "ops/copy.h"
#include "ops/math.h"
#include "ops/special.h"
#include "ops/where.h"

namespace ts::autograd {

namespace {

Tensor sc(double v) { return wrap_scalar(Scalar::from_double(v)); }
Tensor mul(const Tensor& a, const Tensor& b) { return multiply(a, b); }
Tensor div(const Tensor& a, const Tensor& b) { return divide(a, b); }
Tensor U(const ElementwiseDef& d, const Tensor& x) { return unary_op(d, x); }
Tensor B(const ElementwiseDef& d, const Tensor& a, const Tensor& b) { return binary_op(d, a, b); }
Tensor full_like(const Tensor& t, double v) {
  Tensor o = Tensor::empty(t.shape(), t.dtype(), t.device());
  fill_(o, Scalar::from_double(v));
  return o;
}
// grad * conj(derivative) (the chain rule for holomorphic and real functions).
Tensor chain(const Tensor& g, const Tensor& d) { return mul(g, conj(d)); }

using G = const variable_list&;
#define FORMULA(name) variable_list name(const BackwardCtx& c, G g)

constexpr double kTwoOverSqrtPi = 1.12837916709551257389615890312154517;
constexpr double kSqrtPiOverTwo = 0.886226925452758013649083741671;
constexpr double kInvSqrt2Pi = 0.398942280401432677939946059934381868;
constexpr double kSqrt2Pi = 2.50662827463100050241576528481104525;

FORMULA(lgamma_bw) { return {mul(g[0], U(digamma_def, c.saved(0)))}; }
FORMULA(digamma_bw) { return {mul(g[0], polygamma(1, c.saved(0)))}; }
// Inputs (n, x); saved n (0-d), x.
FORMULA(polygamma_bw) {
  if (c.needs(0))
    throw NotImplementedError("polygamma: the derivative with respect to n is not implemented");
  const int64_t n = static_cast<int64_t>(item(c.saved(0)).to<double>());
  return {Tensor(), mul(g[0], polygamma(n + 1, c.saved(1)))};
}
FORMULA(erf_bw) {
  const Tensor x = c.saved(0);
  return {mul(g[0], mul(sc(kTwoOverSqrtPi), U(exp_def, negative(mul(x, x)))))};
}
FORMULA(erfc_bw) {
  const Tensor x = c.saved(0);
  return {mul(g[0], mul(sc(-kTwoOverSqrtPi), U(exp_def, negative(mul(x, x)))))};
}
FORMULA(erfinv_bw) {  // saved out
  const Tensor y = c.saved(0);
  return {mul(g[0], mul(sc(kSqrtPiOverTwo), U(exp_def, mul(y, y))))};
}
FORMULA(erfcx_bw) {  // saved x, out
  const Tensor x = c.saved(0), y = c.saved(1);
  return {mul(g[0], subtract(mul(sc(2.0), mul(x, y)), sc(kTwoOverSqrtPi)))};
}
FORMULA(ndtr_bw) {
  const Tensor x = c.saved(0);
  return {mul(g[0], mul(sc(kInvSqrt2Pi), U(exp_def, mul(sc(-0.5), mul(x, x)))))};
}
FORMULA(ndtri_bw) {  // saved out
  const Tensor y = c.saved(0);
  return {mul(g[0], mul(sc(kSqrt2Pi), U(exp_def, mul(sc(0.5), mul(y, y)))))};
}
FORMULA(log_ndtr_bw) {  // saved x, out
  const Tensor x = c.saved(0), y = c.saved(1);
  const Tensor e = U(exp_def, negative(add(y, mul(sc(0.5), mul(x, x)))));
  return {mul(g[0], mul(sc(kInvSqrt2Pi), e))};
}
FORMULA(i0_bw) { return {mul(g[0], U(i1_def, c.saved(0)))}; }
FORMULA(i0e_bw) {  // saved x, out
  const Tensor x = c.saved(0), y = c.saved(1);
  return {mul(g[0], subtract(U(i1e_def, x), mul(U(sign_def, x), y)))};
}
// i1' = i0 - i1 / x and i1e' = i0e - i1e (sgn(x) + 1 / x), 0.5 where |x| <= eps (torch's
// i1_backward / i1e_backward: the quotient is 0/0 at 0).
double dtype_eps(DType d) {
  switch (d) {
    case DType::Float16:
      return 9.765625e-4;
    case DType::BFloat16:
      return 7.8125e-3;
    case DType::Float32:
      return std::numeric_limits<float>::epsilon();
    default:
      return std::numeric_limits<double>::epsilon();
  }
}
variable_list bessel1_bw(const BackwardCtx& c, G g, bool scaled) {
  const Tensor x = c.saved(0), y = c.saved(1);
  const double eps = dtype_eps(x.dtype());
  const Tensor tiny = B(less_equal_def, U(abs_def, x), sc(eps));
  const Tensor safe = where(tiny, full_like(x, eps), x);
  const Tensor r = U(reciprocal_def, safe);
  const Tensor d = scaled ? subtract(U(i0e_def, safe), mul(y, add(U(sign_def, safe), r)))
                          : subtract(U(i0_def, safe), mul(y, r));
  return {mul(g[0], where(tiny, full_like(x, 0.5), d))};
}
FORMULA(i1_bw) { return bessel1_bw(c, g, false); }
FORMULA(i1e_bw) { return bessel1_bw(c, g, true); }
FORMULA(entr_bw) { return {mul(g[0], negative(add(sc(1.0), U(log_def, c.saved(0)))))}; }
// 1 / (x (1 - x)); nan outside [0, 1] (torch's logit_backward without eps; with eps the op
// clamps first, whose gradient is 0 outside the bounds).
FORMULA(logit_bw) {
  const Tensor x = c.saved(0);
  const Tensor d = div(g[0], mul(x, subtract(sc(1.0), x)));
  const Tensor out_of = B(logical_or_def, B(less_def, x, sc(0.0)), B(greater_def, x, sc(1.0)));
  return {where(out_of, full_like(d, std::numeric_limits<double>::quiet_NaN()), d)};
}
// (pi x cos(pi x) - sin(pi x)) / (pi x^2), 0 at 0.
FORMULA(sinc_bw) {
  const Tensor x = c.saved(0);
  const Tensor px = mul(x, sc(M_PI)), den = mul(mul(x, x), sc(M_PI));
  const Tensor d = div(subtract(mul(px, U(cos_def, px)), U(sin_def, px)), den);
  const Tensor gd = chain(g[0], d);
  return {where(B(equal_def, den, sc(0.0)), full_like(gd, 0.0), gd)};
}
// d/dx x log(y) = log(y), but 0 where x == 0 and y <= 0 (log1p: y <= -1), so x == 0 gets no
// nan or inf from log's pole; d/dy = x / y (x / (1 + y)). torch's, also its 0/0 = nan.
variable_list xlogy_family_bw(const BackwardCtx& c, G g, bool log1p) {
  const Tensor x = c.saved(0), y = c.saved(1);
  Tensor gx, gy;
  if (c.needs(0)) {
    const Tensor ly = U(log1p ? log1p_def : log_def, y);
    const Tensor pole =
        B(logical_and_def, B(equal_def, x, sc(0.0)), B(less_equal_def, y, sc(log1p ? -1.0 : 0.0)));
    gx = mul(g[0], where(pole, full_like(ly, 0.0), ly));
  }
  if (c.needs(1)) gy = mul(g[0], div(x, log1p ? add(y, sc(1.0)) : y));
  return {gx, gy};
}
FORMULA(xlogy_bw) { return xlogy_family_bw(c, g, false); }
FORMULA(xlog1py_bw) { return xlogy_family_bw(c, g, true); }
// d/dq zeta(x, q) = -x zeta(x + 1, q); none w.r.t. x (torch's).
FORMULA(zeta_bw) {
  if (c.needs(0))
    throw NotImplementedError(
        "zeta: the derivative with respect to x (the first argument) "
        "is not implemented (PyTorch does not define it either)");
  const Tensor x = c.saved(0), q = c.saved(1);
  return {Tensor(), mul(g[0], negative(mul(x, B(zeta_def, add(x, sc(1.0)), q))))};
}

// d/dx P(a, x) = x^(a-1) e^-x / Gamma(a) = -d/dx Q(a, x); none w.r.t. a (torch's).
variable_list gammainc_bw(const BackwardCtx& c, G g, bool upper) {
  if (c.needs(0))
    throw NotImplementedError(
        str(upper ? "igammac" : "igamma",
            ": the derivative with respect to the input a (the first "
            "argument) is not implemented (PyTorch does not define it either)"));
  const Tensor a = c.saved(0), x = c.saved(1);
  const Tensor e =
      U(exp_def, subtract(subtract(mul(subtract(a, sc(1.0)), U(log_def, x)), x), U(lgamma_def, a)));
  return {Tensor(), mul(g[0], upper ? negative(e) : e)};
}
FORMULA(gammainc_bw_lower) { return gammainc_bw(c, g, false); }
FORMULA(gammainc_bw_upper) { return gammainc_bw(c, g, true); }

constexpr int kA = kSaveA, kB = kSaveB, kOut = kSaveOut;

}  // namespace

const ElementwiseFormula* special_formula(std::string_view op) {
  static const std::unordered_map<std::string_view, ElementwiseFormula> t = {
      {"lgamma", {{"LgammaBackward", lgamma_bw}, kA}},
      {"digamma", {{"DigammaBackward", digamma_bw}, kA}},
      {"polygamma", {{"PolygammaBackward", polygamma_bw}, kA | kB}},
      {"erf", {{"ErfBackward", erf_bw}, kA}},
      {"erfc", {{"ErfcBackward", erfc_bw}, kA}},
      {"erfinv", {{"ErfinvBackward", erfinv_bw}, kOut}},
      {"erfcx", {{"SpecialErfcxBackward", erfcx_bw}, kA | kOut}},
      {"ndtr", {{"SpecialNdtrBackward", ndtr_bw}, kA}},
      {"ndtri", {{"SpecialNdtriBackward", ndtri_bw}, kOut}},
      {"log_ndtr", {{"SpecialLogNdtrBackward", log_ndtr_bw}, kA | kOut}},
      {"i0", {{"I0Backward", i0_bw}, kA}},
      {"i0e", {{"SpecialI0EBackward", i0e_bw}, kA | kOut}},
      {"i1", {{"SpecialI1Backward", i1_bw}, kA | kOut}},
      {"i1e", {{"SpecialI1EBackward", i1e_bw}, kA | kOut}},
      {"entr", {{"SpecialEntrBackward", entr_bw}, kA}},
      {"logit", {{"LogitBackward", logit_bw}, kA}},
      {"sinc", {{"SincBackward", sinc_bw}, kA}},
      {"xlogy", {{"XlogyBackward", xlogy_bw}, kA | kB}},
      {"xlog1py", {{"SpecialXlog1PyBackward", xlog1py_bw}, kA | kB}},
      {"zeta", {{"SpecialZetaBackward", zeta_bw}, kA | kB}},
      {"gammainc", {{"IgammaBackward", gammainc_bw_lower}, kA | kB}},
      {"gammaincc", {{"IgammacBackward", gammainc_bw_upper}, kA | kB}},
      {"modified_bessel_i0", {{"", nullptr}, 0}},
      {"modified_bessel_i1", {{"", nullptr}, 0}},
      {"chebyshev_polynomial_t", {{"", nullptr}, 0}},
      {"chebyshev_polynomial_u", {{"", nullptr}, 0}},
      {"chebyshev_polynomial_v", {{"", nullptr}, 0}},
      {"chebyshev_polynomial_w", {{"", nullptr}, 0}},
      {"hermite_polynomial_h", {{"", nullptr}, 0}},
      {"hermite_polynomial_he", {{"", nullptr}, 0}},
      {"laguerre_polynomial_l", {{"", nullptr}, 0}},
      {"legendre_polynomial_p", {{"", nullptr}, 0}},
  };
  auto it = t.find(op);
  return it == t.end() ? nullptr : &it->second;
}

}  // namespace ts::autograd
