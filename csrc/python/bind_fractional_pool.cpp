// Bindings of fractional_max_pool2d / fractional_max_pool3d and their _with_indices forms
// (ops/nn/fractional_pool.h): tessera.nn.functional's functions are these entry points
// themselves, with PyTorch's signatures (Note [Readable signatures]), kernel_size /
// output_size / output_ratio parsed here once.
#include <pybind11/stl.h>

#include "core/error.h"
#include "ops/nn/fractional_pool.h"
#include "python/convert.h"

namespace ts::python {
namespace {

// An int (repeated) or nsp ints.
Shape sizes_of(py::handle h, int nsp, const std::string& op, const char* what) {
  Shape s = to_shape(h, (op + ": " + what).c_str());
  if (PyIndex_Check(h.ptr())) s = Shape(nsp, s[0]);
  TS_CHECK(s.size() == nsp, ValueError, op, ": ", what, " must be an int or ", nsp, " ints, got ",
           py::repr(h).cast<std::string>());
  return s;
}

// output_size, or floor(input size * output_ratio) per axis (a number or nsp numbers).
Shape output_sizes(const Tensor& x, py::handle size, py::handle ratio, int nsp,
                   const std::string& op) {
  if (!size.is_none()) return sizes_of(size, nsp, op, "output_size");
  TS_CHECK(!ratio.is_none(), ValueError, op,
           ": requires specifying either an output_size or an output_ratio");
  std::vector<double> r;
  if (py::isinstance<py::sequence>(ratio)) {
    for (py::handle v : ratio) r.push_back(py::cast<double>(v));
  } else {
    r.assign(static_cast<size_t>(nsp), py::cast<double>(ratio));
  }
  TS_CHECK(static_cast<int>(r.size()) == nsp, ValueError, op, ": output_ratio must be a number or ",
           nsp, " numbers, got ", py::repr(ratio).cast<std::string>());
  TS_CHECK(x.ndim() >= nsp, ValueError, op, ": expected a ", nsp + 1, "-D or ", nsp + 2,
           "-D input, got shape ", shape_str(x.shape()));
  Shape out;
  for (int i = 0; i < nsp; ++i)
    out.push_back(static_cast<int64_t>(static_cast<double>(x.dim(x.ndim() - nsp + i)) * r[i]));
  return out;
}

}  // namespace

void init_fractional_pool(py::module_& m) {
  py::options text_signature;  // Note [Readable signatures]
  text_signature.disable_function_signatures();
  const py::object None = py::none();
  for (int nsp : {2, 3}) {
    const std::string base = "fractional_max_pool" + std::to_string(nsp) + "d";
    for (bool with_indices : {false, true}) {
      const std::string name = with_indices ? base + "_with_indices" : base;
      m.def(
          name.c_str(),
          [name, nsp, with_indices](const Tensor& input, py::handle kernel_size,
                                    py::handle output_size, py::handle output_ratio,
                                    bool return_indices,
                                    const std::optional<Tensor>& random_samples) -> py::object {
            const Shape k = sizes_of(kernel_size, nsp, name, "kernel_size");
            const Shape out = output_sizes(input, output_size, output_ratio, nsp, name);
            auto [y, ind] =
                nn::fractional_max_pool(input, nsp, k, out, random_samples, name.c_str());
            if (with_indices || return_indices) return py::make_tuple(y, ind);
            return py::cast(y);
          },
          py::arg("input"), py::arg("kernel_size"), py::arg("output_size") = None,
          py::arg("output_ratio") = None, py::arg("return_indices") = false,
          py::arg("_random_samples") = None,
          (name +
           "(input, kernel_size, output_size=None, output_ratio=None, return_indices=False, "
           "_random_samples=None)\n--\n\n"
           "Fractional max pooling (Graham) of (N, C, *spatial) or (C, *spatial) with " +
           std::to_string(nsp) +
           " spatial dims to output_size\n(or input size * output_ratio), as "
           "torch.nn.functional." +
           name + ": PyTorch's window sequence,\nso the same _random_samples (N, C, " +
           std::to_string(nsp) + ") in [0, 1) give the same windows, values and indices;\n" +
           (with_indices ? "always returns (values, indices)"
                         : "(values, indices) with return_indices") +
           ". The gradient flows to the chosen\npositions (csrc/ops/nn/fractional_pool.h).")
              .c_str());
    }
  }
}

}  // namespace ts::python
