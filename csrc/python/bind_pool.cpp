// Bindings of the adaptive pools, max_unpool and LP pooling (ops/pool.h). tessera.nn.functional's
// adaptive_{avg,max}_pool{1,2,3}d (and the _with_indices forms), max_unpool{1,2,3}d and
// lp_pool{1,2,3}d are these entry points themselves: PyTorch's signatures, readable by
// inspect.signature (Note [Readable signatures]), parsed here once; the checks and gradients are
// the C++ ops'.
#include <pybind11/stl.h>

#include "core/error.h"
#include "ops/nn/fold.h"
#include "ops/pool.h"
#include "python/convert.h"

namespace ts::python {
namespace {

// PyTorch's output_size of an adaptive pool: an int, or nsp values, each an int or None (the
// input's size on that axis).
Shape adaptive_sizes(const Tensor& x, py::handle h, int nsp, const std::string& op) {
  TS_CHECK(x.ndim() == nsp + 1 || x.ndim() == nsp + 2, ValueError, op, ": expected a ", nsp + 1,
           "-D or ", nsp + 2, "-D input, got shape ", shape_str(x.shape()));
  std::vector<py::handle> items;
  if (h.is_none() || PyIndex_Check(h.ptr())) {
    items.assign(nsp, h);
  } else {
    TS_CHECK(py::isinstance<py::sequence>(h) && !py::isinstance<py::str>(h), TypeError, op,
             ": output_size must be an int or a sequence of ", nsp, " ints or None, got ",
             py::repr(h).cast<std::string>());
    for (py::handle v : h) items.push_back(v);
  }
  TS_CHECK(static_cast<int>(items.size()) == nsp, ValueError, op, ": output_size ",
           py::repr(h).cast<std::string>(), " must have ", nsp, " elements");
  Shape out(nsp);
  for (int i = 0; i < nsp; ++i) {
    if (items[i].is_none()) {
      out[i] = x.dim(x.ndim() - nsp + i);
      continue;
    }
    TS_CHECK(!py::isinstance<py::bool_>(items[i]) && PyIndex_Check(items[i].ptr()), TypeError, op,
             ": output_size must be ints or None, got ", py::repr(h).cast<std::string>());
    // __index__ may refuse (a tensor with other than one element): its error propagates.
    py::object v = py::reinterpret_steal<py::object>(PyNumber_Index(items[i].ptr()));
    if (!v) throw py::error_already_set();
    out[i] = py::cast<int64_t>(v);
  }
  return out;
}

// stride None or empty: the kernel size (PyTorch's default).
Shape stride_of(py::handle s, const std::string& op) {
  if (s.is_none()) return {};
  return to_shape(s, (op + ": stride").c_str());
}

}  // namespace

void init_pool(py::module_& m) {
  py::options text_signature;
  text_signature.disable_function_signatures();
  const py::object None = py::none();
  for (int nsp : {1, 2, 3}) {
    const std::string d = std::to_string(nsp) + "d";
    const std::string avg = "adaptive_avg_pool" + d;
    m.def(
        avg.c_str(),
        [avg, nsp](const Tensor& input, py::handle output_size) {
          const Shape out = adaptive_sizes(input, output_size, nsp, avg);
          return std::get<0>(adaptive_pool(input, nsp, out, false, avg.c_str()));
        },
        py::arg("input"), py::arg("output_size"),
        (avg + "(input, output_size)\n--\n\n" +
         "Mean over PyTorch's adaptive windows [floor(i n / m), ceil((i + 1) n / m)) of\n"
         "(N, C, *spatial) or (C, *spatial) floating input with " +
         std::to_string(nsp) + " spatial dims; output_size an int or\n" + std::to_string(nsp) +
         " values (None keeps the input's size). The C++ op csrc/ops/pool.h, gradients in C++.")
            .c_str());
    const std::string max = "adaptive_max_pool" + d;
    for (bool with_indices : {false, true}) {
      const std::string name = with_indices ? max + "_with_indices" : max;
      m.def(
          name.c_str(),
          [max, nsp, with_indices](const Tensor& input, py::handle output_size,
                                   bool return_indices) -> py::object {
            const Shape out = adaptive_sizes(input, output_size, nsp, max);
            auto [y, idx] = adaptive_pool(input, nsp, out, true, max.c_str());
            if (with_indices || return_indices) return py::make_tuple(y, idx);
            return py::cast(y);
          },
          py::arg("input"), py::arg("output_size"), py::arg("return_indices") = with_indices,
          (name + "(input, output_size, return_indices=" + (with_indices ? "True" : "False") +
           ")\n--\n\n" +
           "Max over PyTorch's adaptive windows of (N, C, *spatial) or (C, *spatial) floating\n"
           "input; " +
           (with_indices ? "(values, indices)" : "with return_indices also") +
           " the int64 flat index of each window's first maximum in its\n"
           "plane (where the gradient goes). The C++ op csrc/ops/pool.h.")
              .c_str());
    }
    const std::string unpool = "max_unpool" + d;
    m.def(
        unpool.c_str(),
        [unpool, nsp](const Tensor& input, const Tensor& indices, py::handle kernel_size,
                      py::handle stride, py::handle padding, py::handle output_size) {
          return max_unpool(
              input, indices, nsp, to_shape(kernel_size, (unpool + ": kernel_size").c_str()),
              stride_of(stride, unpool), to_shape(padding, (unpool + ": padding").c_str()),
              output_size.is_none() ? Shape{}
                                    : to_shape(output_size, (unpool + ": output_size").c_str()),
              unpool.c_str());
        },
        py::arg("input"), py::arg("indices"), py::arg("kernel_size"), py::arg("stride") = None,
        py::arg("padding") = 0, py::arg("output_size") = None,
        (unpool +
         "(input, indices, kernel_size, stride=None, padding=0, output_size=None)\n"
         "--\n\n"
         "The partial inverse of max_pool" +
         d +
         ": the values placed at their flat indices of the\noutput planes, zeros elsewhere; "
         "each output size (in - 1) stride - 2 padding + kernel\nunless output_size (" +
         std::to_string(nsp) +
         " values, or with the leading N, C) says otherwise. Any dtype;\n"
         "IndexError for an index outside the plane. The C++ op csrc/ops/pool.h.")
            .c_str());
    const std::string lp = "lp_pool" + d;
    m.def(
        lp.c_str(),
        [lp, nsp](const Tensor& input, double norm_type, py::handle kernel_size, py::handle stride,
                  bool ceil_mode) {
          return lp_pool(input, nsp, norm_type,
                         to_shape(kernel_size, (lp + ": kernel_size").c_str()),
                         stride_of(stride, lp), ceil_mode, lp.c_str());
        },
        py::arg("input"), py::arg("norm_type"), py::arg("kernel_size"), py::arg("stride") = None,
        py::arg("ceil_mode") = false,
        (lp + "(input, norm_type, kernel_size, stride=None, ceil_mode=False)\n--\n\n" +
         "(sum over each window of x^p)^(1/p) (PyTorch's formula: the window's average times\n"
         "its full size) of (N, C, *spatial) or (C, *spatial) input; p = inf is the max of |x|.\n"
         "The C++ op csrc/ops/pool.h, gradients in C++.")
            .c_str());
  }
  m.def(
      "unfold",
      [](const Tensor& input, py::handle kernel_size, py::handle dilation, py::handle padding,
         py::handle stride) {
        return nn::unfold(input, to_shape(kernel_size, "unfold: kernel_size"),
                          to_shape(dilation, "unfold: dilation"),
                          to_shape(padding, "unfold: padding"), to_shape(stride, "unfold: stride"));
      },
      py::arg("input"), py::arg("kernel_size"), py::arg("dilation") = 1, py::arg("padding") = 0,
      py::arg("stride") = 1,
      "unfold(input, kernel_size, dilation=1, padding=0, stride=1)\n--\n\n"
      "Sliding local blocks (im2col): (N, C, H, W) or (C, H, W) -> (N, C*kh*kw, L) or\n"
      "(C*kh*kw, L), zero padding (the C++ op csrc/ops/nn/fold.h, gradients of every order).");
  m.def(
      "fold",
      [](const Tensor& input, py::handle output_size, py::handle kernel_size, py::handle dilation,
         py::handle padding, py::handle stride) {
        return nn::fold(input, to_shape(output_size, "fold: output_size"),
                        to_shape(kernel_size, "fold: kernel_size"),
                        to_shape(dilation, "fold: dilation"), to_shape(padding, "fold: padding"),
                        to_shape(stride, "fold: stride"));
      },
      py::arg("input"), py::arg("output_size"), py::arg("kernel_size"), py::arg("dilation") = 1,
      py::arg("padding") = 0, py::arg("stride") = 1,
      "fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1)\n--\n\n"
      "Sums sliding local blocks back into an image (col2im, unfold's adjoint):\n"
      "(N, C*kh*kw, L) or (C*kh*kw, L) -> (N, C, *output_size) or (C, *output_size) (the C++\n"
      "op csrc/ops/nn/fold.h, gradients of every order).");
}

}  // namespace ts::python
