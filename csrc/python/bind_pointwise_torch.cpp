// Bindings of PyTorch's pointwise functions that have no standard counterpart (issue 17: one
// definition each, every argument form parsed here): gcd / lcm (integer kernels), fix,
// float_power, frexp (torch.return_types.frexp), torch.complex / polar, torch.relu /
// torch.threshold (F's ops without inplace=; in the submodule _C._torch, as _C.relu is F.relu),
// and the Tensor methods x.equal(y) (torch.equal) and x.square() (bool gives int64). Their
// in-place twins x.gcd_() ... are in bind_inplace_methods.cpp.
#include "ops/bitwise.h"
#include "ops/compare.h"
#include "ops/copy.h"
#include "ops/nn/activation_pointwise.h"
#include "ops/pointwise_torch.h"
#include "ops/rounding.h"
#include "ops/where.h"
#include "python/convert.h"
#include "python/elementwise_binding.h"
#include "python/function_method.h"

namespace ts::python {

// A namedtuple class of torch.return_types (made once per name; the module keeps it).
py::object torch_return_type(const char* name, std::initializer_list<const char*> fields) {
  static py::dict* made = new py::dict();  // leaked: lives as long as the module
  const py::str key(name);
  if (!made->contains(key)) {
    py::tuple f(fields.size());
    size_t i = 0;
    for (const char* field : fields) f[i++] = py::str(field);
    (*made)[key] = py::module_::import("collections")
                       .attr("namedtuple")(key, f, py::arg("module") = "tessera");
  }
  return (*made)[key];
}

namespace {

constexpr const char* kGcdDoc =
    "gcd(input, other, *, out=None)\n--\n\n"
    "The greatest common divisor of integer tensors (non-negative; gcd(0, 0) is 0), broadcasting;\n"
    "floating or bool input raises.";
constexpr const char* kLcmDoc =
    "lcm(input, other, *, out=None)\n--\n\n"
    "The least common multiple of integer tensors (non-negative; 0 when either is 0),\n"
    "broadcasting; the product wraps like other integer ops.";
constexpr const char* kFloatPowerDoc =
    "float_power(input, exponent, *, out=None)\n--\n\n"
    "input ** exponent computed in float64 (complex128 when either is complex); either may be a\n"
    "Python number.";
constexpr const char* kFrexpDoc =
    "frexp(input, *, out=None)\n--\n\n"
    "(mantissa, exponent) with input == mantissa * 2**exponent and |mantissa| in [0.5, 1): a\n"
    "named tuple like torch.return_types.frexp; exponent is int32. Floating input only.";

// The result, or the (mantissa, exponent) tuple `out` holding it.
py::object frexp_py(py::handle x, py::handle out) {
  auto [m, e] = frexp(tensor_or_throw(x, "frexp", "input"));
  const py::object type = torch_return_type("frexp", {"mantissa", "exponent"});
  if (out.is_none()) return type(std::move(m), std::move(e));
  const py::tuple o = py::reinterpret_borrow<py::tuple>(out);
  TS_CHECK(o.size() == 2, TypeError, "frexp: out must be a (mantissa, exponent) pair of tensors");
  const Tensor& in = tensor_or_throw(x, "frexp", "input");
  write_out_py("frexp", o[0], m, OutDtype::Exact, {&in});
  write_out_py("frexp", o[1], e, OutDtype::Exact, {&in});
  return type(o[0], o[1]);
}

}  // namespace

void init_pointwise_torch(py::module_& m) {
  py::options text_signature;  // Note [Readable signatures]
  text_signature.disable_function_signatures();
  for (const bool is_gcd : {true, false}) {
    const ElementwiseDef* def = is_gcd ? &gcd_def : &lcm_def;
    m.def(
        def->name,
        [def](py::handle x, py::handle other, py::handle out) {
          auto [a, b] = binary_operands(x, other, def->name);
          return result_or_out(def->name, binary_op(*def, a, b), out, OutDtype::Cast, {&a, &b});
        },
        py::arg("input"), py::arg("other"), py::kw_only(), py::arg("out") = py::none(),
        is_gcd ? kGcdDoc : kLcmDoc);
  }
  m.def(
      "fix",
      [](py::handle x, py::handle out) {
        return result_or_out("fix", unary_op(trunc_def, tensor_or_throw(x, "fix", "input")), out,
                             OutDtype::Exact);
      },
      py::arg("input"), py::kw_only(), py::arg("out") = py::none(),
      "fix(input, *, out=None)\n--\n\nRounds toward zero (torch's alias of trunc).");
  m.def(
      "float_power",
      [](py::handle x, py::handle exponent, py::handle out) {
        auto [a, b] = binary_operands(x, exponent, "float_power");
        return result_or_out("float_power", float_power(a, b), out, OutDtype::Exact);
      },
      py::arg("input"), py::arg("exponent"), py::kw_only(), py::arg("out") = py::none(),
      kFloatPowerDoc);
  m.def("frexp", &frexp_py, py::arg("input"), py::kw_only(), py::arg("out") = py::none(),
        kFrexpDoc);
  m.def(
      "complex",
      [](py::handle real, py::handle imag, py::handle out) {
        return result_or_out("complex",
                             complex(tensor_or_throw(real, "complex", "real"),
                                     tensor_or_throw(imag, "complex", "imag")),
                             out, OutDtype::Exact);
      },
      py::arg("real"), py::arg("imag"), py::kw_only(), py::arg("out") = py::none(),
      "complex(real, imag, *, out=None)\n--\n\n"
      "real + 1j * imag from two float32 (complex64) or float64 (complex128) tensors of the same\n"
      "dtype, broadcasting (torch.complex).");
  m.def(
      "polar",
      [](py::handle abs, py::handle angle, py::handle out) {
        return result_or_out(
            "polar",
            polar(tensor_or_throw(abs, "polar", "abs"), tensor_or_throw(angle, "polar", "angle")),
            out, OutDtype::Exact);
      },
      py::arg("abs"), py::arg("angle"), py::kw_only(), py::arg("out") = py::none(),
      "polar(abs, angle, *, out=None)\n--\n\n"
      "abs * (cos(angle) + 1j * sin(angle)) (torch.polar; float32 or float64 tensors).");
  bind_functions_as_methods(m, {"gcd", "lcm", "fix", "float_power", "frexp"});

  // torch.relu / torch.threshold: F.relu / F.threshold's ops without inplace= (ts.relu is
  // _C._torch.relu; x.relu() the same function)
  py::module_ t = m.def_submodule("_torch", "torch's top-level pointwise functions");
  t.def(
      "relu", [](py::handle x) { return nn::relu(tensor_or_throw(x, "relu", "input"), false); },
      py::arg("input"), "relu(input)\n--\n\nmax(input, 0); NaN stays NaN (torch.relu).");
  // integer input keeps its dtype (torch), the value cast to it
  static const auto threshold_of = [](const Tensor& t, double threshold, double value) {
    if (!is_integral(t.dtype())) return nn::threshold(t, threshold, value, false);
    return where(binary_op(greater_def, t, wrap_scalar(Scalar::from_double(threshold))), t,
                 scalar_tensor(Scalar::from_double(value), t.dtype()));
  };
  t.def(
      "threshold",
      [](py::handle x, double threshold, double value) {
        return threshold_of(tensor_or_throw(x, "threshold", "input"), threshold, value);
      },
      py::arg("input"), py::arg("threshold"), py::arg("value"),
      "threshold(input, threshold, value)\n--\n\ninput where input > threshold, else value "
      "(torch.threshold).");
  py::object cls = m.attr("Tensor");
  for (const char* name : {"relu", "threshold"}) cls.attr(name) = function_method(t.attr(name));

  auto tensor = py::reinterpret_borrow<py::class_<Tensor>>(cls);
  tensor.def(
      "threshold_",
      [](py::object self, double threshold, double value) {
        return write_back(self, "threshold_",
                          [&](const Tensor& x) { return threshold_of(x, threshold, value); });
      },
      py::arg("threshold"), py::arg("value"),
      "threshold_($self, /, threshold, value)\n--\n\nIn-place threshold; returns self.");
  tensor.def(
      "equal",
      [](py::handle self, py::handle other) {
        return tensor_equal(tensor_or_throw(self, "equal", "input"),
                            tensor_or_throw(other, "equal", "other"));
      },
      py::arg("other"),
      "equal(other)\n--\n\n"
      "True when other has this tensor's shape and equal values everywhere (torch.equal;\n"
      "NaN != NaN).");
  tensor.def(
      "square",
      [](py::handle self) { return square_torch(tensor_or_throw(self, "square", "input")); },
      "square()\n--\n\n"
      "self * self; a bool tensor gives int64 (torch's pow(x, 2); the namespace's ts.square is\n"
      "the standard's).");
}

}  // namespace ts::python
