// torch.special's elementwise functions (ops/special.h) as _C functions with torch's argument
// names, and their Tensor methods (x.lgamma(), x.polygamma(n), x.logit(eps), ...). The Python
// namespaces (ts.lgamma, ts.special.gammaln, ...) re-export these objects.
#include <cstring>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>

#include "autograd/record.h"
#include "ops/special.h"
#include "python/elementwise_binding.h"
#include "python/int_arg.h"

namespace ts::python {

namespace {

Tensor unary(const ElementwiseDef& d, py::handle x) {
  return special_unary(d, operand_or_throw(x, d.name));
}

// A NumPy scalar (np.float32(2.0)) is a weak Python number here, as torch takes it.
py::object weak_numpy_scalar(py::handle h) {
  static const py::handle generic =
      py::object(py::module_::import("numpy").attr("generic")).release();
  if (py::isinstance(h, generic)) return h.attr("item")();
  return py::reinterpret_borrow<py::object>(h);
}

Tensor binary(const ElementwiseDef& d, py::handle a, py::handle b) {
  auto [ta, tb] = binary_operands(weak_numpy_scalar(a), weak_numpy_scalar(b), d.name);
  return special_binary(d, ta, tb);
}

std::optional<double> optional_eps(py::handle eps) {
  if (eps.is_none()) return std::nullopt;
  if (!PyFloat_Check(eps.ptr()) && !PyLong_Check(eps.ptr()))
    throw py::type_error("logit: eps must be a float or None, got " +
                         py::type::handle_of(eps).attr("__name__").cast<std::string>());
  return eps.cast<double>();
}

// The in-place methods x.erf_(), x.xlogy_(other), x.polygamma_(n), ... (Note [torch in-place]),
// every error naming the method. The elementwise ones write straight into a floating self
// (Note [In-place without a temporary]); an integer self raises the in-place cast error.
void def_special_inplace(py::class_<Tensor>& cls) {
  static std::deque<std::string> names;  // the methods' names, alive for the module
  const ElementwiseDef* unary_defs[] = {&lgamma_def, &digamma_def, &erf_def, &erfc_def,
                                        &erfinv_def, &i0_def,      &sinc_def};
  for (const ElementwiseDef* d : unary_defs) {
    const char* op = names.emplace_back(str(d->name, "_")).c_str();
    cls.def(
        op,
        [d, op](py::object self) {
          const Tensor& x = self_of(self, op);
          if (is_inexact(x.dtype())) {
            unary_op_(*d, x, op);
          } else {
            autograd::check_inplace(x, op);
            assign_inplace_result(op, x, special_unary(*d, x));
          }
          return self;
        },
        str("In-place ", d->name, " (torch.Tensor.", op, "); returns self.").c_str());
  }
  const std::pair<const char*, const ElementwiseDef*> binary_defs[] = {
      {"xlogy_", &xlogy_def}, {"igamma_", &gammainc_def}, {"igammac_", &gammaincc_def}};
  for (const auto& [name, def] : binary_defs) {
    const char* op = name;
    const ElementwiseDef* d = def;
    cls.def(
        op,
        [d, op](py::object self, py::handle o) {
          const Tensor& x = self_of(self, op);
          const Tensor other = operand_or_throw(weak_numpy_scalar(o), op);
          if (is_inexact(result_type(x, other))) {
            binary_op_(*d, x, other, op);
          } else {
            autograd::check_inplace(x, op);
            assign_inplace_result(op, x, special_binary(*d, x, other));
          }
          return self;
        },
        py::arg("other"), str("In-place ", op, " (torch.Tensor.", op, "); returns self.").c_str());
  }
  // the composed ones: f(self, or a copy while autograd records) written into self
  using Composed = Tensor (*)(const Tensor&, py::handle, const char*);
  const std::tuple<const char*, const char*, Composed> composed[] = {
      {"polygamma_", "n",
       [](const Tensor& x, py::handle n, const char* op) {
         return polygamma(int_arg(n, op, "n"), x, op);
       }},
      {"mvlgamma_", "p",
       [](const Tensor& x, py::handle p, const char* op) {
         return mvlgamma(x, int_arg(p, op, "p"), op);
       }},
      {"logit_", "eps",
       [](const Tensor& x, py::handle eps, const char*) { return logit(x, optional_eps(eps)); }},
  };

  for (const auto& [name, arg, fn] : composed) {
    const char* op = name;
    const Composed f = fn;
    auto impl = [op, f](py::object self, py::handle v) {
      return write_back(self, op, [&](const Tensor& x) { return f(x, v, op); });
    };
    const std::string doc = str("In-place ", std::string(op, std::strlen(op) - 1),
                                " (torch.Tensor.", op, "); returns self.");
    if (std::string_view(op) == "logit_")  // eps is optional
      cls.def(op, impl, py::arg(arg) = py::none(), doc.c_str());
    else
      cls.def(op, impl, py::arg(arg), doc.c_str());
  }
}

}  // namespace

void init_special(py::module_& m) {
  m.def(
      "_set_default_float_dtype", [](py::handle d) { set_default_float_dtype(to_dtype(d)); },
      py::arg("dtype"),
      "Tells the C++ ops set_default_dtype's dtype (ops/default_dtype.h): what zeros/ones/empty "
      "give without dtype= and what integer inputs of torch.special's functions compute in.");
  struct U {
    const ElementwiseDef* def;
    const char* doc;
  };
  const U unary_fns[] = {
      {&lgamma_def, "log|Gamma(x)|; +inf at 0, -1, -2, ... and at +-inf."},
      {&digamma_def, "d/dx log Gamma(x); -+inf at +-0, nan at -1, -2, ... and -inf."},
      {&erf_def, "The error function."},
      {&erfc_def, "1 - erf(x), accurate for large x."},
      {&erfinv_def, "The inverse error function on (-1, 1); +-inf at +-1, nan outside."},
      {&erfcx_def, "exp(x**2) * erfc(x), without overflow for large x."},
      {&ndtr_def, "The standard normal CDF."},
      {&ndtri_def, "The inverse of ndtr: -inf at 0, inf at 1, nan outside [0, 1]."},
      {&log_ndtr_def, "log(ndtr(x)), accurate in the lower tail."},
      {&i0_def, "The modified Bessel function of the first kind, order 0."},
      {&i0e_def, "exp(-|x|) * i0(x)."},
      {&i1_def, "The modified Bessel function of the first kind, order 1."},
      {&i1e_def, "exp(-|x|) * i1(x)."},
      {&modified_bessel_i0_def, "i0(x), not differentiable (torch.special.modified_bessel_i0)."},
      {&modified_bessel_i1_def, "i1(x), not differentiable (torch.special.modified_bessel_i1)."},
      {&entr_def, "-x log(x) for x > 0, 0 at 0, -inf for x < 0."},
      {&sinc_def, "sin(pi x) / (pi x), 1 at 0 (complex too)."},
  };
  for (const U& u : unary_fns) {
    const ElementwiseDef* d = u.def;
    m.def(
        d->name, [d](py::handle x) { return unary(*d, x); }, py::arg("input"), u.doc);
  }
  const U binary_fns[] = {
      {&xlogy_def, "input * log(other), 0 where input == 0 (unless other is nan)."},
      {&xlog1py_def, "input * log1p(other), 0 where input == 0 (unless other is nan)."},
      {&zeta_def,
       "The Hurwitz zeta function sum_k (k + other)**-input (inf at input == 1, nan for "
       "input < 1)."},
      {&gammainc_def, "The regularized lower incomplete gamma function P(input, other)."},
      {&gammaincc_def, "The regularized upper incomplete gamma function Q(input, other) = 1 - P."},
  };
  for (const U& u : binary_fns) {
    const ElementwiseDef* d = u.def;
    m.def(
        d->name, [d](py::handle a, py::handle b) { return binary(*d, a, b); }, py::arg("input"),
        py::arg("other"), u.doc);
  }
  const U polynomials[] = {
      {&chebyshev_polynomial_t_def,
       "The Chebyshev polynomial of the first kind T_n(input). n broadcasts with input and "
       "truncates toward zero; negative n gives 0; not differentiable."},
      {&chebyshev_polynomial_u_def,
       "The Chebyshev polynomial of the second kind U_n(input). n broadcasts with input and "
       "truncates toward zero; negative n gives 0; not differentiable."},
      {&chebyshev_polynomial_v_def,
       "The Chebyshev polynomial of the third kind V_n(input). n broadcasts with input and "
       "truncates toward zero; negative n gives 0; not differentiable."},
      {&chebyshev_polynomial_w_def,
       "The Chebyshev polynomial of the fourth kind W_n(input). n broadcasts with input and "
       "truncates toward zero; negative n gives 0; not differentiable."},
      {&hermite_polynomial_h_def,
       "The physicists' Hermite polynomial H_n(input). n broadcasts with input and truncates "
       "toward zero; negative n gives 0; not differentiable."},
      {&hermite_polynomial_he_def,
       "The probabilists' Hermite polynomial He_n(input). n broadcasts with input and truncates "
       "toward zero; negative n gives 0; not differentiable."},
      {&laguerre_polynomial_l_def,
       "The Laguerre polynomial L_n(input). n broadcasts with input and truncates toward zero; "
       "negative n gives 0; not differentiable."},
      {&legendre_polynomial_p_def,
       "The Legendre polynomial P_n(input). n broadcasts with input and truncates toward zero; "
       "negative n gives 0; not differentiable."},
  };
  for (const U& u : polynomials) {
    const ElementwiseDef* d = u.def;
    m.def(
        d->name, [d](py::handle x, py::handle n) { return binary(*d, x, n); }, py::arg("input"),
        py::arg("n"), u.doc);
  }
  m.def(
      "polygamma",
      [](py::handle n, py::handle x) {
        return polygamma(int_arg(n, "polygamma", "n"), operand_or_throw(x, "polygamma"));
      },
      py::arg("n"), py::arg("input"),
      "The n-th derivative of digamma (n >= 0): (-1)**(n+1) n! zeta(n + 1, input) for n >= 1.");
  m.def(
      "mvlgamma",
      [](py::handle x, py::handle p) {
        return mvlgamma(operand_or_throw(x, "mvlgamma"), int_arg(p, "mvlgamma", "p"));
      },
      py::arg("input"), py::arg("p"),
      "The multivariate log-gamma of dimension p: sum_{i<p} lgamma(input - i/2) + "
      "p(p-1)/4 log(pi).");
  m.def(
      "logit",
      [](py::handle x, py::handle eps) {
        return logit(operand_or_throw(x, "logit"), optional_eps(eps));
      },
      py::arg("input"), py::arg("eps") = py::none(),
      "log(p / (1 - p)), p = input clamped to [eps, 1 - eps] when eps is given.");

  // Tensor methods (torch's names; in-place twins: def_special_inplace).
  auto cls = py::reinterpret_borrow<py::class_<Tensor>>(m.attr("Tensor"));
  const ElementwiseDef* methods[] = {&lgamma_def, &digamma_def, &erf_def, &erfc_def,
                                     &erfinv_def, &i0_def,      &sinc_def};
  for (const ElementwiseDef* d : methods)
    cls.def(d->name, [d](const Tensor& t) { return special_unary(*d, t); });
  cls.def(
      "xlogy",
      [](const Tensor& t, py::handle o) {
        return special_binary(xlogy_def, t, operand_or_throw(weak_numpy_scalar(o), "xlogy"));
      },
      py::arg("other"));
  cls.def(
      "igamma",
      [](const Tensor& t, py::handle o) {
        return special_binary(gammainc_def, t, operand_or_throw(o, "igamma"));
      },
      py::arg("other"));
  cls.def(
      "igammac",
      [](const Tensor& t, py::handle o) {
        return special_binary(gammaincc_def, t, operand_or_throw(o, "igammac"));
      },
      py::arg("other"));
  def_special_inplace(cls);
  cls.def(
      "polygamma",
      [](const Tensor& t, py::handle n) { return polygamma(int_arg(n, "polygamma", "n"), t); },
      py::arg("n"));
  cls.def(
      "mvlgamma",
      [](const Tensor& t, py::handle p) { return mvlgamma(t, int_arg(p, "mvlgamma", "p")); },
      py::arg("p"));
  cls.def(
      "logit", [](const Tensor& t, py::handle eps) { return logit(t, optional_eps(eps)); },
      py::arg("eps") = py::none());
}

}  // namespace ts::python
