// Bindings of the normalizations (ops/nn/norm.h): F.batch_norm, group_norm, instance_norm,
// local_response_norm and normalize are these entry points themselves, with PyTorch's
// signatures (Note [Readable signatures]); F.layer_norm and F.rms_norm are bind_nn.cpp's.
#include <pybind11/stl.h>

#include "ops/nn/norm.h"
#include "python/convert.h"

namespace ts::python {
namespace {

Tensor opt(const std::optional<Tensor>& t) { return t ? *t : Tensor(); }

}  // namespace

void init_norm(py::module_& m) {
  py::options text_signature;
  text_signature.disable_function_signatures();
  const py::none None;
  m.def(
      "batch_norm",
      [](const Tensor& input, const std::optional<Tensor>& running_mean,
         const std::optional<Tensor>& running_var, const std::optional<Tensor>& weight,
         const std::optional<Tensor>& bias, bool training, std::optional<double> momentum,
         double eps) {
        return nn::batch_norm(input, opt(running_mean), opt(running_var), opt(weight), opt(bias),
                              training, momentum ? *momentum : 0.0, eps);
      },
      py::arg("input"), py::arg("running_mean"), py::arg("running_var"), py::arg("weight") = None,
      py::arg("bias") = None, py::arg("training") = false, py::arg("momentum") = 0.1,
      py::arg("eps") = 1e-5,
      "batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, "
      "momentum=0.1, eps=1e-05)\n--\n\n"
      "Normalizes (N, C, *) over every axis but 1 (one fused C++ op, statistics in float32\n"
      "for 16-bit inputs). In training, batch statistics are used and the running ones (if\n"
      "given) are updated in place: running = (1-m) running + m batch, with the unbiased batch\n"
      "variance, as PyTorch does; in eval, the running statistics (csrc/ops/batch_norm.h).");
  m.def(
      "group_norm",
      [](const Tensor& input, int64_t num_groups, const std::optional<Tensor>& weight,
         const std::optional<Tensor>& bias,
         double eps) { return nn::group_norm(input, num_groups, opt(weight), opt(bias), eps); },
      py::arg("input"), py::arg("num_groups"), py::arg("weight") = None, py::arg("bias") = None,
      py::arg("eps") = 1e-5,
      "group_norm(input, num_groups, weight=None, bias=None, eps=1e-05)\n--\n\n"
      "Normalizes each of num_groups channel groups of (N, C, *) over its channels and\n"
      "positions, then scales/shifts per channel (the C++ op csrc/ops/nn/norm.h).");
  m.def(
      "instance_norm",
      [](const Tensor& input, const std::optional<Tensor>& running_mean,
         const std::optional<Tensor>& running_var, const std::optional<Tensor>& weight,
         const std::optional<Tensor>& bias, bool use_input_stats, std::optional<double> momentum,
         double eps) {
        return nn::instance_norm(input, opt(running_mean), opt(running_var), opt(weight), opt(bias),
                                 use_input_stats, momentum ? *momentum : 0.0, eps);
      },
      py::arg("input"), py::arg("running_mean") = None, py::arg("running_var") = None,
      py::arg("weight") = None, py::arg("bias") = None, py::arg("use_input_stats") = true,
      py::arg("momentum") = 0.1, py::arg("eps") = 1e-5,
      "instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, "
      "use_input_stats=True, momentum=0.1, eps=1e-05)\n--\n\n"
      "Normalizes each (sample, channel) plane of (N, C, *) over its spatial axes. With\n"
      "use_input_stats and running buffers, the buffers move toward the batch means of the\n"
      "per-instance mean and unbiased variance; without use_input_stats the running statistics\n"
      "normalize (the C++ op csrc/ops/nn/norm.h).");
  m.def("local_response_norm", &nn::local_response_norm, py::arg("input"), py::arg("size"),
        py::arg("alpha") = 1e-4, py::arg("beta") = 0.75, py::arg("k") = 1.0,
        "local_response_norm(input, size, alpha=0.0001, beta=0.75, k=1.0)\n--\n\n"
        "x / (k + alpha * mean of x^2 over size neighbouring channels)^beta (the window\n"
        "[c - size//2, c + (size-1)//2], zero-padded, always divided by size; the C++ op\n"
        "csrc/ops/nn/norm.h).");
  m.def(
      "normalize",
      [](const Tensor& input, double p, py::handle dim, double eps) {
        return nn::normalize(input, p, to_shape(dim, "normalize: dim"), eps);
      },
      py::arg("input"), py::arg("p") = 2.0, py::arg("dim") = 1, py::arg("eps") = 1e-12,
      "normalize(input, p=2.0, dim=1, eps=1e-12)\n--\n\n"
      "x / max(||x||_p, eps) along dim (torch's clamp_min: the norm's gradient passes where\n"
      "it is >= eps; the C++ op csrc/ops/nn/norm.h).");
}

}  // namespace ts::python
