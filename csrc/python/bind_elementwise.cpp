// The elementwise functions of the array API namespace, and the torch-style Tensor methods
// that call them (x.exp(), x.clamp(...)). Operators (x + y, x ** y, ...) are in bind_tensor.cpp.
#include <deque>
#include <string_view>

#include "ops/arithmetic.h"
#include "ops/bitwise.h"
#include "ops/compare.h"
#include "ops/copy.h"
#include "ops/math.h"
#include "ops/pointwise_composite.h"
#include "ops/rounding.h"
#include "python/elementwise_binding.h"
#include "python/function_method.h"

namespace ts::python {

namespace {

std::optional<Tensor> optional_operand(py::handle h, const char* op) {
  if (h.is_none()) return std::nullopt;
  return operand_or_throw(h, op);
}

Tensor clip_py(py::handle x, py::handle lo, py::handle hi) {
  return clip(operand_or_throw(x, "clip"), optional_operand(lo, "clip"),
              optional_operand(hi, "clip"));
}

void def_unary_functions(py::module_& m) {
  struct U {
    const ElementwiseDef* def;
    const char* doc;
  };
  const U unary[] = {
      {&abs_def,
       "|x|; abs of a complex tensor is real (float32 for complex64). abs(INT_MIN) wraps."},
      {&acos_def, "Inverse cosine. Integer and boolean inputs compute in float32."},
      {&acosh_def, "Inverse hyperbolic cosine."},
      {&asin_def, "Inverse sine."},
      {&asinh_def, "Inverse hyperbolic sine."},
      {&atan_def, "Inverse tangent."},
      {&atanh_def, "Inverse hyperbolic tangent."},
      {&cos_def, "Cosine."},
      {&cosh_def, "Hyperbolic cosine."},
      {&sin_def, "Sine."},
      {&sinh_def, "Hyperbolic sine."},
      {&tan_def, "Tangent."},
      {&tanh_def, "Hyperbolic tangent (float32: a vectorized polynomial within 2 ulp)."},
      {&exp_def, "e ** x (float32: a vectorized polynomial within 1 ulp)."},
      {&expm1_def, "exp(x) - 1, accurate for small x."},
      {&log_def, "Natural logarithm."},
      {&log1p_def, "log(1 + x), accurate for small x."},
      {&log2_def, "Base-2 logarithm."},
      {&log10_def, "Base-10 logarithm."},
      {&sqrt_def, "Square root (principal branch for complex)."},
      {&reciprocal_def, "1 / x (integers compute in float32)."},
      {&sign_def, "-1, 0 or 1 (keeping +-0 and NaN); z / |z| for complex."},
      {&square_def, "x * x (integers wrap)."},
      {&positive_def, "+x (a copy)."},
      {&isfinite_def, "True where x is finite (both parts for complex)."},
      {&isinf_def, "True where x is +-inf (either part for complex)."},
      {&isnan_def, "True where x is NaN (either part for complex)."},
      {&signbit_def, "True where the sign bit of x is set (also for -0.0 and -NaN)."},
      {&bitwise_invert_def, "~x for integers; logical not for booleans."},
      {&logical_not_def, "not x, by truthiness (nonzero is true)."},
      {&ceil_def, "Smallest integer >= x (integers are returned unchanged)."},
      {&floor_def, "Largest integer <= x (integers are returned unchanged)."},
      {&trunc_def, "x rounded toward zero (integers are returned unchanged)."},
      // (round, with torch's decimals=, is bound in bind_index_forms.cpp)
  };
  for (const U& u : unary) def_unary_function(m, *u.def, u.doc);
  m.def(
      "real", [](py::handle x) { return real(operand_or_throw(x, "real")); }, py::arg("x"),
      py::pos_only(), "Real part (float32 for complex64); a real tensor is returned as is.");
  m.def(
      "imag", [](py::handle x) { return imag(operand_or_throw(x, "imag")); }, py::arg("x"),
      py::pos_only(), "Imaginary part (float32 for complex64); zeros for a real tensor.");
}

void def_binary_functions(py::module_& m) {
  struct B {
    const ElementwiseDef* def;
    const char* doc;
  };
  const B binary[] = {
      {&atan2_def, "Angle of the point (x2, x1), quadrant-aware."},
      {&hypot_def, "sqrt(x1**2 + x2**2) without undue overflow."},
      {&logaddexp_def, "log(exp(x1) + exp(x2)) without overflow."},
      {&copysign_def, "|x1| with the sign of x2."},
      {&nextafter_def, "The next representable value after x1 toward x2 (in x1's dtype)."},
      {&equal_def, "x1 == x2."},
      {&not_equal_def, "x1 != x2."},
      {&less_def, "x1 < x2."},
      {&less_equal_def, "x1 <= x2."},
      {&greater_def, "x1 > x2."},
      {&greater_equal_def, "x1 >= x2."},
      {&maximum_def, "Elementwise maximum; NaN propagates."},
      {&minimum_def, "Elementwise minimum; NaN propagates."},
      {&bitwise_and_def, "x1 & x2 (integers, booleans)."},
      {&bitwise_or_def, "x1 | x2 (integers, booleans)."},
      {&bitwise_xor_def, "x1 ^ x2 (integers, booleans)."},
      {&bitwise_left_shift_def, "x1 << x2; shifting by >= the bit width gives 0."},
      {&bitwise_right_shift_def,
       "x1 >> x2 (arithmetic); by >= the bit width gives 0, or -1 for negative x1."},
      {&logical_and_def, "x1 and x2, by truthiness."},
      {&logical_or_def, "x1 or x2, by truthiness."},
      {&logical_xor_def, "x1 xor x2, by truthiness."},
      {&floor_divide_def,
       "x1 // x2 rounded toward -inf (Python's rule); integer division by zero gives 0."},
      {&remainder_def,
       "x1 % x2 with the sign of x2 (Python's rule); integer remainder by zero gives 0."},
  };
  for (const B& b : binary) def_binary_function(m, *b.def, b.doc);
  m.def(
      "pow",
      [](py::handle a, py::handle b) {
        auto [ta, tb] = binary_operands(a, b, "pow");
        return pow(ta, tb);
      },
      py::arg("x1"), py::arg("x2"), py::pos_only(),
      "x1 ** x2; integers wrap, and integers to negative integer powers raise ValueError.");
  // Note [Readable signatures]: pybind11's own signature line is not one inspect.signature can
  // parse; a CPython-style "name(args)\n--\n\n" first line is (it becomes __text_signature__).
  py::options text_signature;
  text_signature.disable_function_signatures();
  m.def("clip", &clip_py, py::arg("x"), py::pos_only(), py::arg("min") = py::none(),
        py::arg("max") = py::none(),
        "clip(x, /, min=None, max=None)\n--\n\n"
        "x clamped to [min, max] (scalars or tensors broadcasting to x), in x's dtype.\n"
        "Where min > max the result is max (NumPy); NaN in x or a bound gives NaN. Bounds\n"
        "outside an integer x's dtype are first clamped to its range (clip(uint8 [0], -1, 5)\n"
        "is 0).");
}

// Torch-style methods: x.exp(), x.add(y), x.clamp(min, max), ... (names the standard's array
// object doesn't use, so nothing clashes).
void def_tensor_methods(py::module_& m) {
  auto cls = py::reinterpret_borrow<py::class_<Tensor>>(m.attr("Tensor"));
  struct U {
    const char* name;
    const ElementwiseDef* def;
  };
  const U unary[] = {
      {"abs", &abs_def},           {"exp", &exp_def},
      {"expm1", &expm1_def},       {"log", &log_def},
      {"log1p", &log1p_def},       {"log2", &log2_def},
      {"log10", &log10_def},       {"sqrt", &sqrt_def},
      {"sin", &sin_def},           {"cos", &cos_def},
      {"tan", &tan_def},           {"tanh", &tanh_def},
      {"sinh", &sinh_def},         {"cosh", &cosh_def},
      {"asin", &asin_def},         {"acos", &acos_def},
      {"atan", &atan_def},         {"floor", &floor_def},
      {"ceil", &ceil_def},         {"trunc", &trunc_def},
      {"sign", &sign_def},         {"reciprocal", &reciprocal_def},
      {"isnan", &isnan_def},       {"isinf", &isinf_def},
      {"isfinite", &isfinite_def}, {"neg", &kNegative},
      {"negative", &kNegative},    {"logical_not", &logical_not_def},
      {"signbit", &signbit_def},
  };
  for (const U& u : unary) {
    const ElementwiseDef* d = u.def;
    cls.def(u.name, [d](const Tensor& t) { return unary_op(*d, t); });
  }
  struct B {
    const char* name;
    const ElementwiseDef* def;
  };
  const B binary[] = {
      {"maximum", &maximum_def},
      {"minimum", &minimum_def},
      {"atan2", &atan2_def},
      {"remainder", &remainder_def},
      {"floor_divide", &floor_divide_def},
      {"eq", &equal_def},
      {"ne", &not_equal_def},
      {"lt", &less_def},
      {"le", &less_equal_def},
      {"gt", &greater_def},
      {"ge", &greater_equal_def},
      {"logical_and", &logical_and_def},
      {"logical_or", &logical_or_def},
      {"logical_xor", &logical_xor_def},
      {"bitwise_and", &bitwise_and_def},
      {"bitwise_or", &bitwise_or_def},
      {"bitwise_xor", &bitwise_xor_def},
  };
  for (const B& b : binary) {
    const ElementwiseDef* d = b.def;
    cls.def(b.name, [d](const Tensor& t, py::handle o) {
      return binary_op(*d, t, operand_or_throw(o, d->name));
    });
  }
  cls.def("pow", [](const Tensor& t, py::handle o) { return pow(t, operand_or_throw(o, "pow")); });
  cls.def("conj", [](const Tensor& t) { return conj(t); });
}

// ---- add / subtract / multiply / divide in both conventions (Note [Arithmetic argument forms]):
// the standard's add(x1, x2, /) and PyTorch's add(input, other, *, alpha=1, out=None), the
// aliases sub/mul/div and true_divide, one function each; Tensor.add is the same object. The
// in-place methods x.add_(other, *, alpha=1), ... parse the same keywords.
RoundingMode mode_of(py::handle h, const char* op) {
  if (h.is_none()) return RoundingMode::None;
  if (!PyUnicode_Check(h.ptr()))
    throw TypeError(str(op, ": rounding_mode must be None, 'trunc' or 'floor', got ",
                        py::type::handle_of(h).attr("__name__").cast<std::string>()));
  return rounding_mode_of(PyUnicode_AsUTF8(h.ptr()), op);
}

constexpr const char* kAddDoc =
    "add(input, other, *, alpha=1, out=None)\n--\n\n"
    "input + alpha * other, broadcasting; Python numbers are weak in promotion (the standard's\n"
    "add(x1, x2) and PyTorch's). A floating alpha with integral operands raises TypeError.";
constexpr const char* kSubtractDoc =
    "subtract(input, other, *, alpha=1, out=None)\n--\n\n"
    "input - alpha * other, broadcasting (ts.sub is the same function).";
constexpr const char* kMultiplyDoc =
    "multiply(input, other, *, out=None)\n--\n\n"
    "input * other, broadcasting (ts.mul is the same function).";
constexpr const char* kDivideDoc =
    "divide(input, other, *, rounding_mode=None, out=None)\n--\n\n"
    "input / other: true division (integers divide in the default float dtype); PyTorch's\n"
    "rounding_mode='trunc' or 'floor' rounds the quotient, exactly in an integer dtype, and\n"
    "raises ZeroDivisionError for a zero integer divisor on the CPU (ts.div is the same\n"
    "function).";
constexpr const char* kTrueDivideDoc =
    "true_divide(input, other, *, out=None)\n--\n\n"
    "input / other (PyTorch's true_divide: divide without rounding_mode).";

void def_arithmetic(py::module_& m) {
  py::options text_signature;  // Note [Readable signatures]
  text_signature.disable_function_signatures();
  m.def(
      "add",
      [](py::handle a, py::handle b, py::handle alpha, py::handle out) {
        auto [ta, tb] = binary_operands(a, b, "add");
        return result_or_out("add", add(ta, tb, alpha_of(alpha, "add"), "add"), out, OutDtype::Cast,
                             {&ta, &tb});
      },
      py::arg("input"), py::arg("other"), py::kw_only(), py::arg("alpha") = 1,
      py::arg("out") = py::none(), kAddDoc);
  m.def(
      "subtract",
      [](py::handle a, py::handle b, py::handle alpha, py::handle out) {
        auto [ta, tb] = binary_operands(a, b, "subtract");
        return result_or_out("subtract", subtract(ta, tb, alpha_of(alpha, "subtract"), "subtract"),
                             out, OutDtype::Cast, {&ta, &tb});
      },
      py::arg("input"), py::arg("other"), py::kw_only(), py::arg("alpha") = 1,
      py::arg("out") = py::none(), kSubtractDoc);
  // multiply(input, other, *, out=None) and true_divide(input, other, *, out=None)
  struct Plain {
    const char* name;
    const ElementwiseDef* def;
    const char* doc;
  };
  for (const Plain& p : {Plain{"multiply", &kMultiply, kMultiplyDoc},
                         Plain{"true_divide", &kDivide, kTrueDivideDoc}}) {
    const Plain q = p;
    m.def(
        q.name,
        [q](py::handle a, py::handle b, py::handle out) {
          auto [ta, tb] = binary_operands(a, b, q.name);
          return result_or_out(q.name, binary_op(*q.def, ta, tb), out, OutDtype::Cast, {&ta, &tb});
        },
        py::arg("input"), py::arg("other"), py::kw_only(), py::arg("out") = py::none(), q.doc);
  }
  m.def(
      "divide",
      [](py::handle a, py::handle b, py::handle mode, py::handle out) {
        auto [ta, tb] = binary_operands(a, b, "div");
        return result_or_out("div", divide(ta, tb, mode_of(mode, "div"), "div"), out, OutDtype::Cast,
                             {&ta, &tb});
      },
      py::arg("input"), py::arg("other"), py::kw_only(), py::arg("rounding_mode") = py::none(),
      py::arg("out") = py::none(), kDivideDoc);
  m.attr("sub") = m.attr("subtract");
  m.attr("mul") = m.attr("multiply");
  m.attr("div") = m.attr("divide");

  auto cls = py::reinterpret_borrow<py::class_<Tensor>>(m.attr("Tensor"));
  for (const char* name : {"add_", "sub_", "subtract_"}) {
    const bool is_add = name[0] == 'a';
    cls.def(
        name,
        [name, is_add](py::object self, py::handle o, py::handle alpha) {
          const Tensor& x = self_of(self, name);
          const Tensor other = operand_or_throw(o, name);
          if (is_add)
            add_(x, other, alpha_of(alpha, name), name);
          else
            subtract_(x, other, alpha_of(alpha, name), name);
          return self;
        },
        py::arg("other"), py::kw_only(), py::arg("alpha") = 1,
        is_add ? "add_($self, /, other, *, alpha=1)\n--\n\nself += alpha * other; returns self."
               : "sub_($self, /, other, *, alpha=1)\n--\n\nself -= alpha * other; returns self.");
  }
  for (const char* name : {"mul_", "multiply_"})
    cls.def(
        name,
        [name](py::object self, py::handle o) {
          binary_op_(kMultiply, self_of(self, name), operand_or_throw(o, name), name);
          return self;
        },
        py::arg("other"), "mul_($self, /, other)\n--\n\nself *= other; returns self.");
  for (const char* name : {"div_", "divide_"})
    cls.def(
        name,
        [name](py::object self, py::handle o, py::handle mode) {
          divide_(self_of(self, name), operand_or_throw(o, name), mode_of(mode, name), name);
          return self;
        },
        py::arg("other"), py::kw_only(), py::arg("rounding_mode") = py::none(),
        "div_($self, /, other, *, rounding_mode=None)\n--\n\n"
        "self /= other (rounding_mode 'trunc' or 'floor' rounds the quotient); returns self.");
  cls.def(
      "true_divide_",
      [](py::object self, py::handle o) {
        binary_op_(kDivide, self_of(self, "true_divide_"), operand_or_throw(o, "true_divide_"),
                   "true_divide_");
        return self;
      },
      py::arg("other"), "true_divide_($self, /, other)\n--\n\nself /= other; returns self.");
}

// ---- PyTorch's pointwise functions composed of elementwise ops (csrc/ops/pointwise_composite.h):
// clamp/clamp_min/clamp_max, lerp, addcmul, addcdiv, nan_to_num, isclose, allclose, fmod. Every
// argument form parsed here once (positional or keyword, value=, out=); Tensor.clamp is
// ts.clamp (Note [One function, two spellings]), x.clip is torch's clamp too (ts.clip keeps the
// standard's dtype rule). The in-place forms (x.clamp_(), ...): def_torch_pointwise_inplace
// (Note [torch in-place]).
double float_arg(py::handle h, const char* op, const char* name) {
  if (PyFloat_Check(h.ptr())) return PyFloat_AS_DOUBLE(h.ptr());
  if (!h.is_none() && !PyUnicode_Check(h.ptr()) && PyNumber_Check(h.ptr()) &&
      !PyComplex_Check(h.ptr())) {
    const double v = PyFloat_AsDouble(h.ptr());
    if (!(v == -1.0 && PyErr_Occurred())) return v;
    PyErr_Clear();
  }
  throw TypeError(str(op, ": ", name, " must be a real number, got ",
                      py::type::handle_of(h).attr("__name__").cast<std::string>(),
                      "; hint: pass a Python float such as ", name, "=1e-5"));
}

std::optional<double> optional_float(py::handle h, const char* op, const char* name) {
  if (h.is_none()) return std::nullopt;
  return float_arg(h, op, name);
}

constexpr const char* kClampDoc =
    "clamp(input, min=None, max=None, *, out=None)\n--\n\n"
    "input clamped to [min, max] elementwise (torch.clamp; x.clamp and x.clip are this\n"
    "function). min and max are numbers or tensors broadcasting with input; a float bound makes\n"
    "an integer input float (the default dtype) and a tensor bound of another dtype promotes an\n"
    "integer input. Where min > max the result is max; NaN stays NaN. With no bound at all the\n"
    "result is a copy (as ts.clip; torch raises). ts.clip is the array API's clip (input's dtype).";
constexpr const char* kClampMinDoc =
    "clamp_min(input, min, *, out=None)\n--\n\nmax(input, min) elementwise (clamp with min only).";
constexpr const char* kClampMaxDoc =
    "clamp_max(input, max, *, out=None)\n--\n\nmin(input, max) elementwise (clamp with max only).";
constexpr const char* kLerpDoc =
    "lerp(input, end, weight, *, out=None)\n--\n\n"
    "input + weight * (end - input), broadcasting; weight is a number or a tensor. input must be\n"
    "floating or complex (RuntimeError otherwise, as torch).";
constexpr const char* kAddcmulDoc =
    "addcmul(input, tensor1, tensor2, *, value=1, out=None)\n--\n\n"
    "input + value * tensor1 * tensor2, broadcasting.";
constexpr const char* kAddcdivDoc =
    "addcdiv(input, tensor1, tensor2, *, value=1, out=None)\n--\n\n"
    "input + value * tensor1 / tensor2, broadcasting; two integer divisors raise RuntimeError\n"
    "(torch).";
constexpr const char* kNanToNumDoc =
    "nan_to_num(input, nan=0.0, posinf=None, neginf=None, *, out=None)\n--\n\n"
    "input with NaN replaced by `nan`, +inf by `posinf` (default: the dtype's largest finite\n"
    "value) and -inf by `neginf` (default: its lowest); each part of a complex input; a copy of\n"
    "an integer or bool input.";
constexpr const char* kIsCloseDoc =
    "isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False)\n--\n\n"
    "|input - other| <= atol + rtol * |other| elementwise (bool), broadcasting; infinities are\n"
    "close only to themselves, NaN to NaN only with equal_nan=True. A tensor `other` must have\n"
    "input's dtype (RuntimeError, as torch).";
constexpr const char* kAllCloseDoc =
    "allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False)\n--\n\n"
    "True when isclose(input, other, ...) holds everywhere (a Python bool).";
constexpr const char* kFmodDoc =
    "fmod(input, other, *, out=None)\n--\n\n"
    "C's remainder: input - trunc(input / other) * other, with the dividend's sign (ts.remainder\n"
    "has the divisor's). An integer zero divisor raises ZeroDivisionError (a RuntimeError).";

// lerp's end and a weight tensor of 1 or more dims: of input's dtype, as torch requires
// (RuntimeError, never a silent promotion); numbers and a 0-d weight take input's dtype.
Tensor lerp_operand(py::handle h, const Tensor& x, const char* op, const char* what) {
  Tensor t = operand_or_throw(h, op);
  const bool weight = what[0] == 'w';
  if (py::isinstance<Tensor>(h) && t.dtype() != x.dtype() && !(weight && t.ndim() == 0))
    throw RuntimeError(str(op, ": expected dtype ", dtype_name(x.dtype()), " for `", what,
                           "` but got dtype ", dtype_name(t.dtype()), "; hint: cast it with .to(",
                           "input.dtype)"));
  if (weight && t.ndim() == 0 && t.dtype() != x.dtype() && is_inexact(x.dtype()))
    return astype_op(t, x.dtype(), false);  // a 0-d weight acts as a number (recorded)
  return t;
}

// The in-place twins x.clamp_(...), x.clip_, x.clamp_min_, x.clamp_max_, x.lerp_, x.addcmul_,
// x.addcdiv_: written straight into self when nothing records (pointwise_composite.h), every
// error naming the method.
void def_torch_pointwise_inplace(py::class_<Tensor> cls) {
  py::options text_signature;  // Note [Readable signatures]
  text_signature.disable_function_signatures();
  cls.def(
      "nan_to_num_",
      [](py::object self, py::handle nan, py::handle posinf, py::handle neginf) {
        const char* op = "nan_to_num_";
        const double n = nan.is_none() ? 0.0 : float_arg(nan, op, "nan");
        const std::optional<double> p = optional_float(posinf, op, "posinf");
        const std::optional<double> m = optional_float(neginf, op, "neginf");
        return write_back(self, op, [&](const Tensor& x) { return nan_to_num(x, n, p, m); });
      },
      py::arg("nan") = 0.0, py::arg("posinf") = py::none(), py::arg("neginf") = py::none(),
      "nan_to_num_($self, /, nan=0.0, posinf=None, neginf=None)\n--\n\nIn-place nan_to_num; "
      "returns self.");
  cls.def(
      "heaviside_",
      [](py::object self, py::handle values) {
        const char* op = "heaviside_";
        const Tensor v = operand_or_throw(values, op);
        const bool same_dtype = py::isinstance<Tensor>(values);
        return write_back(self, op,
                          [&](const Tensor& x) { return heaviside(x, v, same_dtype, op); }, {&v});
      },
      py::arg("values"), "heaviside_($self, /, values)\n--\n\nIn-place heaviside; returns self.");
  for (const char* name : {"clamp_", "clip_"})
    cls.def(
        name,
        [name](py::object self, py::handle lo, py::handle hi) {
          clamp_(self_of(self, name), optional_operand(lo, name), optional_operand(hi, name), name);
          return self;
        },
        py::arg("min") = py::none(), py::arg("max") = py::none(),
        str(name, "($self, /, min=None, max=None)\n--\n\nIn-place clamp; returns self.").c_str());
  for (const bool is_min : {true, false}) {
    const char* name = is_min ? "clamp_min_" : "clamp_max_";
    cls.def(
        name,
        [name, is_min](py::object self, py::handle bound) {
          const Tensor& x = self_of(self, name);
          if (bound.is_none())
            throw TypeError(
                str(name, ": ", is_min ? "min" : "max", " must be a number or a tensor, got None"));
          const Tensor b = operand_or_throw(bound, name);
          is_min ? clamp_(x, b, std::nullopt, name) : clamp_(x, std::nullopt, b, name);
          return self;
        },
        py::arg(is_min ? "min" : "max"),
        str(name, "($self, /, ", is_min ? "min" : "max", ")\n--\n\nIn-place ",
            is_min ? "clamp_min" : "clamp_max", "; returns self.")
            .c_str());
  }
  cls.def(
      "lerp_",
      [](py::object self, py::handle end, py::handle weight) {
        const char* op = "lerp_";
        const Tensor& x = self_of(self, op);
        lerp_(x, lerp_operand(end, x, op, "end"), lerp_operand(weight, x, op, "weight"), op);
        return self;
      },
      py::arg("end"), py::arg("weight"),
      "lerp_($self, /, end, weight)\n--\n\nself += weight * (end - self); returns self.");
  for (const bool is_mul : {true, false}) {
    const char* name = is_mul ? "addcmul_" : "addcdiv_";
    cls.def(
        name,
        [name, is_mul](py::object self, py::handle t1, py::handle t2, py::handle value) {
          const Tensor& x = self_of(self, name);
          const Tensor a = operand_or_throw(t1, name), b = operand_or_throw(t2, name);
          const Scalar v = alpha_of(value, name);
          is_mul ? addcmul_(x, a, b, v, name) : addcdiv_(x, a, b, v, name);
          return self;
        },
        py::arg("tensor1"), py::arg("tensor2"), py::kw_only(), py::arg("value") = 1,
        str(name, "($self, /, tensor1, tensor2, *, value=1)\n--\n\nself += value * tensor1 ",
            is_mul ? "*" : "/", " tensor2; returns self.")
            .c_str());
  }
}

void def_torch_pointwise(py::module_& m) {
  py::options text_signature;  // Note [Readable signatures]
  text_signature.disable_function_signatures();
  m.def(
      "clamp",
      [](py::handle x, py::handle lo, py::handle hi, py::handle out) {
        const char* op = "clamp";
        const Tensor& t = tensor_or_throw(x, op, "input");
        return result_or_out(op, clamp(t, optional_operand(lo, op), optional_operand(hi, op)), out,
                             OutDtype::Exact, {&t});
      },
      py::arg("input"), py::arg("min") = py::none(), py::arg("max") = py::none(), py::kw_only(),
      py::arg("out") = py::none(), kClampDoc);
  for (const bool is_min : {true, false}) {
    const char* name = is_min ? "clamp_min" : "clamp_max";
    m.def(
        name,
        [name, is_min](py::handle x, py::handle bound, py::handle out) {
          if (bound.is_none())
            throw TypeError(str(name, ": ", is_min ? "min" : "max",
                                " must be a number or a tensor, got None; hint: use ts.clamp(x, "
                                "min, max) for an optional bound"));
          const Tensor& t = tensor_or_throw(x, name, "input");
          const Tensor b = operand_or_throw(bound, name);
          return result_or_out(name, is_min ? clamp(t, b, std::nullopt) : clamp(t, std::nullopt, b),
                               out, OutDtype::Exact, {&t, &b});
        },
        py::arg("input"), py::arg(is_min ? "min" : "max"), py::kw_only(),
        py::arg("out") = py::none(), is_min ? kClampMinDoc : kClampMaxDoc);
  }
  m.def(
      "lerp",
      [](py::handle x, py::handle end, py::handle weight, py::handle out) {
        const char* op = "lerp";
        const Tensor& t = tensor_or_throw(x, op, "input");
        const Tensor e = lerp_operand(end, t, op, "end"), w = lerp_operand(weight, t, op, "weight");
        return result_or_out(op, lerp(t, e, w), out, OutDtype::Cast, {&t, &e, &w});
      },
      py::arg("input"), py::arg("end"), py::arg("weight"), py::kw_only(),
      py::arg("out") = py::none(), kLerpDoc);
  for (const bool is_mul : {true, false}) {
    const char* name = is_mul ? "addcmul" : "addcdiv";
    m.def(
        name,
        [name, is_mul](py::handle x, py::handle t1, py::handle t2, py::handle value,
                       py::handle out) {
          const Tensor& t = tensor_or_throw(x, name, "input");
          const Tensor a = operand_or_throw(t1, name), b = operand_or_throw(t2, name);
          const Scalar v = alpha_of(value, name);
          return result_or_out(name, is_mul ? addcmul(t, a, b, v) : addcdiv(t, a, b, v), out,
                               OutDtype::Cast, {&t, &a, &b});
        },
        py::arg("input"), py::arg("tensor1"), py::arg("tensor2"), py::kw_only(),
        py::arg("value") = 1, py::arg("out") = py::none(), is_mul ? kAddcmulDoc : kAddcdivDoc);
  }
  m.def(
      "nan_to_num",
      [](py::handle x, py::handle nan, py::handle posinf, py::handle neginf, py::handle out) {
        const char* op = "nan_to_num";
        const Tensor& t = tensor_or_throw(x, op, "input");
        return result_or_out(op,
                             nan_to_num(t, nan.is_none() ? 0.0 : float_arg(nan, op, "nan"),
                                        optional_float(posinf, op, "posinf"),
                                        optional_float(neginf, op, "neginf")),
                             out, OutDtype::Exact, {&t});
      },
      py::arg("input"), py::arg("nan") = 0.0, py::arg("posinf") = py::none(),
      py::arg("neginf") = py::none(), py::kw_only(), py::arg("out") = py::none(), kNanToNumDoc);
  for (const bool all : {false, true}) {
    const char* name = all ? "allclose" : "isclose";
    m.def(
        name,
        [name, all](py::handle x, py::handle other, py::handle rtol, py::handle atol,
                    py::handle equal_nan) -> py::object {
          const Tensor& t = tensor_or_throw(x, name, "input");
          const Tensor o = operand_or_throw(other, name);
          const double r = float_arg(rtol, name, "rtol"), a = float_arg(atol, name, "atol");
          const bool e = PyObject_IsTrue(equal_nan.ptr()) == 1;
          const bool same = py::isinstance<Tensor>(other);
          if (all) return py::bool_(allclose(t, o, r, a, e, same));
          return py::cast(isclose(t, o, r, a, e, same));
        },
        py::arg("input"), py::arg("other"), py::arg("rtol") = 1e-05, py::arg("atol") = 1e-08,
        py::arg("equal_nan") = false, all ? kAllCloseDoc : kIsCloseDoc);
  }
  m.def(
      "fmod",
      [](py::handle x, py::handle other, py::handle out) {
        auto [a, b] = binary_operands(x, other, "fmod");
        return result_or_out("fmod", fmod(a, b), out, OutDtype::Cast, {&a, &b});
      },
      py::arg("input"), py::arg("other"), py::kw_only(), py::arg("out") = py::none(), kFmodDoc);
  bind_functions_as_methods(m, {"clamp", "clamp_min", "clamp_max", "lerp", "addcmul", "addcdiv",
                                "nan_to_num", "isclose", "allclose", "fmod"});
  m.attr("Tensor").attr("clip") = function_method(m.attr("clamp"));
  def_torch_pointwise_inplace(py::reinterpret_borrow<py::class_<Tensor>>(m.attr("Tensor")));
}

// PyTorch's unary and binary functions made of elementwise ops: f(input, *, out=None) and
// f(input, other, *, out=None), each also the Tensor method (in-place twins: _tensor_methods).
void def_torch_unary_binary(py::module_& m) {
  static std::deque<std::string> docs;  // "name(args)\n--\n\n" + text, alive for the module
  auto doc = [](const char* name, const char* args, const char* text) {
    return docs.emplace_back(str(name, "(", args, ")\n--\n\n", text)).c_str();
  };
  py::options text_signature;  // Note [Readable signatures]
  text_signature.disable_function_signatures();
  using UnaryFn = Tensor (*)(const Tensor&);
  struct U {
    const char* name;
    UnaryFn fn;
    const char* doc;
    OutDtype out_dtype = OutDtype::Cast;  // Exact where torch wants out in the result's dtype
  };
  const U unary[] = {
      {"rsqrt", &rsqrt, "1 / sqrt(input); integer input gives the default float dtype."},
      {"exp2", &exp2, "2 ** input (float result)."},
      {"frac", [](const Tensor& x) { return frac(x); },
       "input - trunc(input), keeping the sign; floating input only (as torch).", OutDtype::Exact},
      {"deg2rad", &deg2rad, "input * pi / 180 (float result)."},
      {"rad2deg", &rad2deg, "input * 180 / pi (float result)."},
      {"isposinf", &isposinf, "True where input is +inf.", OutDtype::Exact},
      {"isneginf", &isneginf, "True where input is -inf.", OutDtype::Exact},
      {"sgn", &sgn, "sign for real input (sgn(NaN) is 0); input / |input| (0 at 0) for complex.",
       OutDtype::Exact},
      {"angle", &angle,
       "The argument of complex input; for real input pi where negative, else 0 (NaN kept)."},
      {"isreal", &isreal, "True where the imaginary part is 0 (everywhere for real dtypes)."},
  };
  for (const U& u : unary) {
    const U v = u;
    m.def(
        v.name,
        [v](py::handle x, py::handle out) {
          const Tensor& t = tensor_or_throw(x, v.name, "input");
          return result_or_out(v.name, v.fn(t), out, v.out_dtype, {&t});
        },
        py::arg("input"), py::kw_only(), py::arg("out") = py::none(),
        doc(v.name, "input, *, out=None", v.doc));
  }
  using BinaryFn = Tensor (*)(const Tensor&, const Tensor&);
  struct B {
    const char* name;
    BinaryFn fn;
    const char* doc;
  };
  const B binary[] = {
      {"fmax", &fmax,
       "Elementwise maximum that ignores NaN (NaN only where both are NaN); ties and a NaN\n"
       "`other` give input and its gradient, as torch."},
      {"fmin", &fmin,
       "Elementwise minimum that ignores NaN (NaN only where both are NaN); ties and a NaN\n"
       "`other` give input and its gradient, as torch."},
      {"logaddexp2", &logaddexp2, "log2(2**input + 2**other) without overflow (float result)."},
      {"ldexp", &ldexp, "input * 2**other (float result); other is a tensor."},
  };
  for (const B& b : binary) {
    const B v = b;
    m.def(
        v.name,
        [v](py::handle x, py::handle other, py::handle out) {
          const Tensor& t = tensor_or_throw(x, v.name, "input");
          // ldexp's other is a tensor, as torch's (a number raises TypeError there too)
          const bool need_tensor = std::string_view(v.name) == "ldexp";
          const Tensor o = need_tensor ? tensor_or_throw(other, v.name, "other")
                                       : operand_or_throw(other, v.name);
          return result_or_out(v.name, v.fn(t, o), out, OutDtype::Cast, {&t, &o});
        },
        py::arg("input"), py::arg("other"), py::kw_only(), py::arg("out") = py::none(),
        doc(v.name, "input, other, *, out=None", v.doc));
  }
  m.def(
      "heaviside",
      [](py::handle x, py::handle values, py::handle out) {
        const char* op = "heaviside";
        const Tensor& t = tensor_or_throw(x, op, "input");
        const Tensor v = operand_or_throw(values, op);
        return result_or_out(op, heaviside(t, v, py::isinstance<Tensor>(values)), out,
                             OutDtype::Exact, {&t, &v});
      },
      py::arg("input"), py::arg("values"), py::kw_only(), py::arg("out") = py::none(),
      "heaviside(input, values, *, out=None)\n--\n\n"
      "0 where input < 0, `values` where input == 0, 1 where input > 0; a tensor `values` must\n"
      "have input's dtype (RuntimeError, as torch).");
  m.def(
      "rsub",
      [](py::handle x, py::handle other, py::handle alpha, py::handle out) {
        const char* op = "rsub";
        const Tensor& t = tensor_or_throw(x, op, "input");
        const Tensor o = operand_or_throw(other, op);
        return result_or_out(op, subtract(o, t, alpha_of(alpha, op), op), out, OutDtype::Cast,
                             {&t, &o});
      },
      py::arg("input"), py::arg("other"), py::kw_only(), py::arg("alpha") = 1,
      py::arg("out") = py::none(),
      "rsub(input, other, *, alpha=1, out=None)\n--\n\n"
      "other - alpha * input (torch.rsub: subtract with the operands swapped).");
  bind_functions_as_methods(
      m, {"rsqrt", "exp2", "frac", "deg2rad", "rad2deg", "isposinf", "isneginf", "sgn", "angle",
          "isreal", "fmax", "fmin", "logaddexp2", "ldexp", "heaviside"});
}

}  // namespace

void init_elementwise(py::module_& m) {
  def_arithmetic(m);
  def_unary_function(m, kNegative, "-x.");
  m.def(
      "conj", [](py::handle x) { return conj(operand_or_throw(x, "conj")); }, py::arg("x"),
      py::pos_only(), "Complex conjugate (real inputs are returned unchanged).");
  def_unary_functions(m);
  def_binary_functions(m);
  def_tensor_methods(m);
  def_torch_pointwise(m);
  def_torch_unary_binary(m);
  // x.add(y, alpha=2) is ts.add(x, y, alpha=2) (Note [One function, two spellings])
  bind_functions_as_methods(
      m, {"add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide"});
}

}  // namespace ts::python
