// The elementwise functions of the array API namespace, and the torch-style Tensor methods
// that call them (x.exp(), x.clamp(...)). Operators (x + y, x ** y, ...) are in bind_tensor.cpp.
#include "ops/arithmetic.h"
#include "ops/bitwise.h"
#include "ops/compare.h"
#include "ops/copy.h"
#include "ops/math.h"
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
      {&round_def, "x rounded to the nearest integer, ties to even (both parts for complex)."},
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
      {"abs", &abs_def},         {"exp", &exp_def},        {"expm1", &expm1_def},
      {"log", &log_def},         {"log1p", &log1p_def},    {"log2", &log2_def},
      {"log10", &log10_def},     {"sqrt", &sqrt_def},      {"sin", &sin_def},
      {"cos", &cos_def},         {"tan", &tan_def},        {"tanh", &tanh_def},
      {"sinh", &sinh_def},       {"cosh", &cosh_def},      {"asin", &asin_def},
      {"acos", &acos_def},       {"atan", &atan_def},      {"floor", &floor_def},
      {"ceil", &ceil_def},       {"trunc", &trunc_def},    {"round", &round_def},
      {"sign", &sign_def},       {"square", &square_def},  {"reciprocal", &reciprocal_def},
      {"isnan", &isnan_def},     {"isinf", &isinf_def},    {"isfinite", &isfinite_def},
      {"neg", &kNegative},       {"negative", &kNegative}, {"logical_not", &logical_not_def},
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
  cls.def("pow", [](const Tensor& t, py::handle o) {
    return pow(t, operand_or_throw(o, "pow"));
  });
  {
    py::options text_signature;  // Note [Readable signatures]
    text_signature.disable_function_signatures();
    cls.def(
        "clip", [](py::handle self, py::handle lo, py::handle hi) { return clip_py(self, lo, hi); },
        py::arg("min") = py::none(), py::arg("max") = py::none(),
        "clip($self, /, min=None, max=None)\n--\n\nself clamped to [min, max] (see ts.clip).");
    cls.def(
        "clamp", [](py::handle self, py::handle lo, py::handle hi) { return clip_py(self, lo, hi); },
        py::arg("min") = py::none(), py::arg("max") = py::none(),
        "clamp($self, /, min=None, max=None)\n--\n\nself clamped to [min, max] (see ts.clip).");
  }
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
        return result_or_out("add", add(ta, tb, alpha_of(alpha, "add"), "add"), out);
      },
      py::arg("input"), py::arg("other"), py::kw_only(), py::arg("alpha") = 1,
      py::arg("out") = py::none(), kAddDoc);
  m.def(
      "subtract",
      [](py::handle a, py::handle b, py::handle alpha, py::handle out) {
        auto [ta, tb] = binary_operands(a, b, "subtract");
        return result_or_out("subtract",
                             subtract(ta, tb, alpha_of(alpha, "subtract"), "subtract"), out);
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
          return result_or_out(q.name, binary_op(*q.def, ta, tb), out);
        },
        py::arg("input"), py::arg("other"), py::kw_only(), py::arg("out") = py::none(), q.doc);
  }
  m.def(
      "divide",
      [](py::handle a, py::handle b, py::handle mode, py::handle out) {
        auto [ta, tb] = binary_operands(a, b, "div");
        return result_or_out("div", divide(ta, tb, mode_of(mode, "div"), "div"), out);
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
          binary_op_(kMultiply, self_of(self, name), operand_or_throw(o, name));
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
        binary_op_(kDivide, self_of(self, "true_divide_"), operand_or_throw(o, "true_divide_"));
        return self;
      },
      py::arg("other"), "true_divide_($self, /, other)\n--\n\nself /= other; returns self.");
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
  m.attr("clamp") = m.attr("clip");
  def_tensor_methods(m);
  // x.add(y, alpha=2) is ts.add(x, y, alpha=2) (Note [One function, two spellings])
  bind_functions_as_methods(
      m, {"add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide"});
}

}  // namespace ts::python
