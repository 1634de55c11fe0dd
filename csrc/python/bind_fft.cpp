// Bindings for the fft extension (submodule _C._fft); python/tessera/fft.py owns the keyword
// names, defaults and docstrings.
#include "ops/fft.h"
#include "python/convert.h"
#include "python/int_arg.h"

namespace ts::python {

namespace {

using Fn1 = Tensor (*)(const Tensor&, std::optional<int64_t>, int64_t, FftNorm);
using FnN = Tensor (*)(const Tensor&, std::optional<Shape>, std::optional<Shape>, FftNorm);

// norm: "backward" (also None, as PyTorch), "ortho" or "forward".
std::string norm_arg(py::handle h, const char* op) {
  if (h.is_none()) return "backward";
  if (!py::isinstance<py::str>(h))
    throw py::type_error(std::string(op) + ": norm must be a str, got " +
                         py::type::handle_of(h).attr("__name__").cast<std::string>());
  return h.cast<std::string>();
}

std::optional<Shape> shape_arg(py::handle h, const char* op) {
  if (h.is_none()) return std::nullopt;
  return to_shape(h, op);
}

void def_1d(py::module_& f, const char* name, Fn1 fn) {
  f.def(
      name,
      [fn, name](py::handle x, py::handle n, py::handle axis, py::handle norm) {
        const Tensor t = operand_or_throw(x, name);
        const std::optional<int64_t> len =
            n.is_none() ? std::nullopt : std::optional<int64_t>(int_arg(n, name, "n"));
        return fn(t, len, int_arg(axis, name, "axis"), parse_fft_norm(norm_arg(norm, name), name));
      },
      py::arg("x"), py::arg("n") = py::none(), py::arg("axis") = -1, py::arg("norm") = py::none());
}

void def_nd(py::module_& f, const char* name, FnN fn) {
  f.def(
      name,
      [fn, name](py::handle x, py::handle s, py::handle axes, py::handle norm) {
        const Tensor t = operand_or_throw(x, name);
        return fn(t, shape_arg(s, name), shape_arg(axes, name),
                  parse_fft_norm(norm_arg(norm, name), name));
      },
      py::arg("x"), py::arg("s") = py::none(), py::arg("axes") = py::none(),
      py::arg("norm") = py::none());
}

}  // namespace

void init_fft(py::module_& m) {
  py::module_ f = m.def_submodule("_fft", "the fft extension's C++ entry points");
  def_1d(f, "fft", &fft);
  def_1d(f, "ifft", &ifft);
  def_1d(f, "rfft", &rfft);
  def_1d(f, "irfft", &irfft);
  def_1d(f, "hfft", &hfft);
  def_1d(f, "ihfft", &ihfft);
  def_nd(f, "fftn", &fftn);
  def_nd(f, "ifftn", &ifftn);
  def_nd(f, "rfftn", &rfftn);
  def_nd(f, "irfftn", &irfftn);
  f.def("fftfreq", [](py::handle n, double d, py::handle dtype, py::handle device) {
    return fftfreq(int_arg(n, "fftfreq", "n"), d, to_dtype(dtype), creation_device(device));
  });
  f.def("rfftfreq", [](py::handle n, double d, py::handle dtype, py::handle device) {
    return rfftfreq(int_arg(n, "rfftfreq", "n"), d, to_dtype(dtype), creation_device(device));
  });
  f.def("fftshift", [](py::handle x, py::handle axes) {
    return fftshift(operand_or_throw(x, "fftshift"), shape_arg(axes, "fftshift"));
  });
  f.def("ifftshift", [](py::handle x, py::handle axes) {
    return ifftshift(operand_or_throw(x, "ifftshift"), shape_arg(axes, "ifftshift"));
  });
}

}  // namespace ts::python
