// Bindings of the convolution ops (ops/conv.h). tessera.nn.functional's conv* forward here.
#include <pybind11/stl.h>

#include "ops/conv.h"
#include "python/convert.h"

namespace ts::python {

void init_conv(py::module_& m) {
  m.def(
      "_conv",
      [](const Tensor& x, const Tensor& w, const std::optional<Tensor>& b, py::handle stride,
         py::handle padding, py::handle dilation, int64_t groups, int nsp, const std::string& op) {
        std::string pad_str;
        Shape pad{0};
        if (py::isinstance<py::str>(padding))
          pad_str = padding.cast<std::string>();
        else
          pad = to_shape(padding, "padding");
        return convolution(x, w, b ? *b : Tensor(), to_shape(stride, "stride"), pad, pad_str,
                           to_shape(dilation, "dilation"), groups, nsp, op.c_str());
      },
      py::arg("input"), py::arg("weight"), py::arg("bias"), py::arg("stride"), py::arg("padding"),
      py::arg("dilation"), py::arg("groups"), py::arg("nsp"), py::arg("op"),
      "PyTorch's conv{1,2,3}d over nsp spatial dims (padding: ints, 'same' or 'valid')");
  m.def(
      "_conv_transpose",
      [](const Tensor& x, const Tensor& w, const std::optional<Tensor>& b, py::handle stride,
         py::handle padding, py::handle output_padding, int64_t groups, py::handle dilation,
         int nsp, const std::string& op) {
        return convolution_transpose(x, w, b ? *b : Tensor(), to_shape(stride, "stride"),
                                     to_shape(padding, "padding"),
                                     to_shape(output_padding, "output_padding"), groups,
                                     to_shape(dilation, "dilation"), nsp, op.c_str());
      },
      py::arg("input"), py::arg("weight"), py::arg("bias"), py::arg("stride"), py::arg("padding"),
      py::arg("output_padding"), py::arg("groups"), py::arg("dilation"), py::arg("nsp"),
      py::arg("op"), "PyTorch's conv_transpose{1,2,3}d over nsp spatial dims");
  m.def(
      "_to_memory_format",
      [](const Tensor& x, py::handle fmt, const std::string& op) {
        return to_memory_format(x, memory_format_of(fmt, op.c_str()), op.c_str());
      },
      "x laid out as the memory format asks (a differentiable copy, or x itself)");
}

}  // namespace ts::python
