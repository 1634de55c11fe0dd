// Bindings of the activations (ops/nn/activation.h, ops/nn/activation_pointwise.h).
// tessera.nn.functional's activations are these entry points themselves (F.elu is _C.elu):
// PyTorch's signatures, readable by inspect.signature (Note [Readable signatures]), the
// inplace= flag and the trailing-underscore forms handled by the ops (Note [In-place
// activations]); non-tensor arguments get PyTorch's TypeError from arg_errors.cpp.
#include <pybind11/stl.h>

#include "ops/arithmetic.h"
#include "ops/math.h"  // tanh_def
#include "ops/nn/activation.h"
#include "ops/nn/activation_pointwise.h"
#include "ops/nn/softmax.h"
#include "python/convert.h"
#include "python/elementwise_binding.h"

namespace ts::python {
namespace {

// The input is taken as a Python object so that an in-place call returns it (no new wrapper).
template <class Fn>
py::object run(const py::object& input, const char* op, bool inplace, Fn fn) {
  Tensor y = fn(tensor_or_throw(input, op, "input"));
  return inplace ? input : py::cast(std::move(y));
}

// generator=: None (the default generator) or a tessera.random.Generator / ts.Generator.
Generator* generator_of(py::handle h) {
  if (h.is_none()) return nullptr;
  return h.cast<Generator*>();
}

}  // namespace

void init_activation(py::module_& m) {
  py::options text_signature;
  text_signature.disable_function_signatures();
  const auto input = py::arg("input");
  const auto inplace = py::arg("inplace") = false;

  // ---- without parameters: f(input) and f(input, inplace=False)
  using Unary = Tensor (*)(const Tensor&);
  const std::pair<const char*, Unary> plain[] = {
      {"sigmoid(input)\n--\n\n1 / (1 + exp(-x)), computed with exp(-|x|) so nothing overflows; "
       "integer input gives the default float dtype.",
       &nn::sigmoid},
      {"logsigmoid(input)\n--\n\nlog(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|)).", &nn::logsigmoid},
      {"softsign(input)\n--\n\nx / (1 + |x|).", &nn::softsign},
      {"tanhshrink(input)\n--\n\nx - tanh(x).", &nn::tanhshrink},
  };
  for (const auto& [doc, fn] : plain) {
    const std::string name = std::string(doc).substr(0, std::string(doc).find('('));
    m.def(name.c_str(), fn, input, doc);
  }
  using WithInplace = Tensor (*)(const Tensor&, bool);
  const std::pair<const char*, WithInplace> flagged[] = {
      {"relu(input, inplace=False)\n--\n\nmax(x, 0) (NaN stays NaN; boolean input raises); one "
       "fused kernel.",
       &nn::relu},
      {"relu6(input, inplace=False)\n--\n\nmin(max(x, 0), 6) (hardtanh(x, 0, 6)).", &nn::relu6},
      {"selu(input, inplace=False)\n--\n\nscale * elu(x, alpha) with PyTorch's constants "
       "(alpha 1.6732632423543772, scale 1.0507009873554805).",
       &nn::selu},
      {"silu(input, inplace=False)\n--\n\nx * sigmoid(x).", &nn::silu},
      {"mish(input, inplace=False)\n--\n\nx * tanh(softplus(x)).", &nn::mish},
      {"hardsigmoid(input, inplace=False)\n--\n\nclamp(x / 6 + 1/2, 0, 1); gradient 1/6 where "
       "-3 < x < 3, else 0.",
       &nn::hardsigmoid},
      {"hardswish(input, inplace=False)\n--\n\nx * clamp(x + 3, 0, 6) / 6; gradient 0 for x <= "
       "-3, x/3 + 1/2 below 3, 1 from 3 on.",
       &nn::hardswish},
  };
  for (const auto& [doc, fn] : flagged) {
    const std::string name = std::string(doc).substr(0, std::string(doc).find('('));
    m.def(
        name.c_str(),
        [name, fn = fn](const py::object& x, bool ip) {
          return run(x, name.c_str(), ip, [&](const Tensor& t) { return fn(t, ip); });
        },
        input, inplace, doc);
  }
  m.def(
      "relu_",
      [](const py::object& x) {
        return run(x, "relu_", true, [](const Tensor& t) { return nn::relu(t, true); });
      },
      input,
      "relu_(input)\n--\n\nrelu(input, inplace=True): x overwritten with max(x, 0) and returned.");
  m.def(
      "selu_",
      [](const py::object& x) {
        return run(x, "selu_", true, [](const Tensor& t) { return nn::selu(t, true); });
      },
      input, "selu_(input)\n--\n\nselu(input, inplace=True).");

  // ---- with one parameter: f(input, param, inplace=False) and f_(input, param)
  using OneParam = Tensor (*)(const Tensor&, double, bool);
  struct OneParamDef {
    const char *name, *name_, *param;
    double init;
    OneParam fn;
    const char *doc, *doc_;
  };
  const OneParamDef one_param[] = {
      {"elu", "elu_", "alpha", 1.0, &nn::elu,
       "elu(input, alpha=1.0, inplace=False)\n--\n\nx for x > 0, alpha * (exp(x) - 1) else "
       "(the gradient at 0 is alpha, as PyTorch's).",
       "elu_(input, alpha=1.0)\n--\n\nelu(input, alpha, inplace=True)."},
      {"celu", "celu_", "alpha", 1.0, &nn::celu,
       "celu(input, alpha=1.0, inplace=False)\n--\n\nx for x > 0, alpha * (exp(x / alpha) - 1) "
       "else.",
       "celu_(input, alpha=1.0)\n--\n\ncelu(input, alpha, inplace=True)."},
      {"leaky_relu", "leaky_relu_", "negative_slope", 0.01, &nn::leaky_relu,
       "leaky_relu(input, negative_slope=0.01, inplace=False)\n--\n\nx for x > 0, "
       "negative_slope * x else.",
       "leaky_relu_(input, negative_slope=0.01)\n--\n\nleaky_relu(input, negative_slope, "
       "inplace=True)."},
  };
  for (const OneParamDef& d : one_param) {
    m.def(
        d.name,
        [d](const py::object& x, double a, bool ip) {
          return run(x, d.name, ip, [&](const Tensor& t) { return d.fn(t, a, ip); });
        },
        input, py::arg(d.param) = d.init, inplace, d.doc);
    m.def(
        d.name_,
        [d](const py::object& x, double a) {
          return run(x, d.name_, true, [&](const Tensor& t) { return d.fn(t, a, true); });
        },
        input, py::arg(d.param) = d.init, d.doc_);
  }
  m.def(
      "hardtanh",
      [](const py::object& x, double lo, double hi, bool ip) {
        return run(x, "hardtanh", ip, [&](const Tensor& t) { return nn::hardtanh(t, lo, hi, ip); });
      },
      input, py::arg("min_val") = -1.0, py::arg("max_val") = 1.0, inplace,
      "hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False)\n--\n\nx clamped to "
      "[min_val, max_val] (ValueError if min_val > max_val); the gradient passes only strictly "
      "inside (and at NaN).");
  m.def(
      "hardtanh_",
      [](const py::object& x, double lo, double hi) {
        return run(x, "hardtanh_", true,
                   [&](const Tensor& t) { return nn::hardtanh(t, lo, hi, true); });
      },
      input, py::arg("min_val") = -1.0, py::arg("max_val") = 1.0,
      "hardtanh_(input, min_val=-1.0, max_val=1.0)\n--\n\nhardtanh(input, min_val, max_val, "
      "inplace=True).");
  m.def(
      "threshold",
      [](const py::object& x, double th, double value, bool ip) {
        return run(x, "threshold", ip,
                   [&](const Tensor& t) { return nn::threshold(t, th, value, ip); });
      },
      input, py::arg("threshold"), py::arg("value"), inplace,
      "threshold(input, threshold, value, inplace=False)\n--\n\nx where x > threshold, else "
      "value.");
  m.def(
      "threshold_",
      [](const py::object& x, double th, double value) {
        return run(x, "threshold_", true,
                   [&](const Tensor& t) { return nn::threshold(t, th, value, true); });
      },
      input, py::arg("threshold"), py::arg("value"),
      "threshold_(input, threshold, value)\n--\n\nthreshold(input, threshold, value, "
      "inplace=True).");
  m.def("softplus", &nn::softplus, input, py::arg("beta") = 1.0, py::arg("threshold") = 20.0,
        "softplus(input, beta=1.0, threshold=20.0)\n--\n\nlog(1 + exp(beta * x)) / beta, x "
        "itself where beta * x > threshold (float32 under CUDA autocast).");
  m.def("hardshrink", &nn::hardshrink, input, py::arg("lambd") = 0.5,
        "hardshrink(input, lambd=0.5)\n--\n\nx where |x| > lambd, else 0.");
  m.def("softshrink", &nn::softshrink, input, py::arg("lambd") = 0.5,
        "softshrink(input, lambd=0.5)\n--\n\nx - lambd above lambd, x + lambd below -lambd, 0 "
        "between (lambd >= 0).");
  m.def("glu", &nn::glu, input, py::arg("dim") = -1,
        "glu(input, dim=-1)\n--\n\na * sigmoid(b) for the halves a, b of input along dim (of "
        "even size).");
  m.def("prelu", &nn::prelu, input, py::arg("weight"),
        "prelu(input, weight)\n--\n\nx where x > 0, else weight * x; weight has 1 element or "
        "one per channel (dim 1).");
  m.def("softmax2d", &nn::softmax2d, input,
        "softmax2d(input)\n--\n\nsoftmax over the channels of (N, C, H, W) or (C, H, W) "
        "input.");
  m.def(
      "rrelu",
      [](const py::object& x, double lower, double upper, bool training, bool ip,
         py::handle generator) {
        return run(x, "rrelu", ip, [&](const Tensor& t) {
          return nn::rrelu(t, lower, upper, training, ip, generator_of(generator));
        });
      },
      input, py::arg("lower") = 1.0 / 8, py::arg("upper") = 1.0 / 3, py::arg("training") = false,
      inplace, py::kw_only(), py::arg("generator") = py::none(),
      "rrelu(input, lower=0.125, upper=0.3333333333333333, training=False, inplace=False, *, "
      "generator=None)\n--\n\nRandomized leaky ReLU: negative inputs scaled by a slope drawn "
      "U(lower, upper) per element in training, by (lower + upper) / 2 otherwise.");
  m.def(
      "rrelu_",
      [](const py::object& x, double lower, double upper, bool training, py::handle generator) {
        return run(x, "rrelu_", true, [&](const Tensor& t) {
          return nn::rrelu(t, lower, upper, training, true, generator_of(generator));
        });
      },
      input, py::arg("lower") = 1.0 / 8, py::arg("upper") = 1.0 / 3, py::arg("training") = false,
      py::kw_only(), py::arg("generator") = py::none(),
      "rrelu_(input, lower=0.125, upper=0.3333333333333333, training=False, *, generator=None)"
      "\n--\n\nrrelu(input, lower, upper, training, inplace=True).");
  m.def(
      "softmin",
      [](const Tensor& x, std::optional<int64_t> dim, py::handle, py::handle dtype) {
        const std::optional<DType> dt =
            dtype.is_none() ? std::nullopt : std::optional<DType>(to_dtype(dtype));
        return nn::softmax(negative(x), dim, dt, false);
      },
      input, py::arg("dim") = py::none(), py::arg("_stacklevel") = 3, py::arg("dtype") = py::none(),
      "softmin(input, dim=None, _stacklevel=3, dtype=None)\n--\n\nsoftmax(-input, dim, "
      "dtype=dtype) (PyTorch's implicit dim when None).");

  // nn.functional's forms of ts functions whose signatures differ (F.tanh takes a tensor only;
  // ts.tanh also takes numbers and out=).
  py::module_ f = m.def_submodule("_functional", "nn.functional's forms of ts functions");
  f.def(
      "tanh", [](const Tensor& x) { return unary_op(tanh_def, x); }, input,
      "tanh(input)\n--\n\nHyperbolic tangent of a tensor (F.tanh).");
}

}  // namespace ts::python
