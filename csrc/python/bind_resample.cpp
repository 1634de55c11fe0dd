// Bindings of the resampling ops (ops/nn/resample.h, ops/nn/grid_sample.h).
// tessera.nn.functional's interpolate, upsample, upsample_nearest, upsample_bilinear,
// affine_grid and grid_sample are these entry points themselves:
// PyTorch's signatures, readable by inspect.signature (Note [Readable signatures]); the size
// and scale_factor forms (one value or one per spatial dim) are parsed here, the checks and
// the resampling are the op's.
#include <pybind11/stl.h>

#include <string>

#include "ops/nn/grid_sample.h"
#include "ops/nn/resample.h"
#include "python/convert.h"
#include "python/int_arg.h"

namespace ts::python {
namespace {

std::string type_name(py::handle h) {
  return py::type::handle_of(h).attr("__name__").cast<std::string>();
}

// None, one value, or a list/tuple of values (an int for size, a number for scale_factor).
template <class T>
std::optional<nn::PerDim<T>> per_dim(py::handle h, const char* name) {
  if (h.is_none()) return std::nullopt;
  auto one = [name](py::handle v) -> T {
    const bool index = !PyBool_Check(v.ptr()) && PyIndex_Check(v.ptr());
    if constexpr (std::is_same_v<T, int64_t>) {
      if (!index)
        throw py::type_error(std::string("interpolate: ") + name +
                             " must be an int or a sequence of ints, got " + type_name(v));
      return py::cast<int64_t>(v.attr("__index__")());
    } else {
      if (!index && !PyFloat_Check(v.ptr()) &&
          !(py::hasattr(v, "__float__") && !py::isinstance<py::str>(v)))
        throw py::type_error(std::string("interpolate: ") + name +
                             " must be a number or a sequence of numbers, got " + type_name(v));
      return py::cast<double>(py::float_(py::reinterpret_borrow<py::object>(v)));
    }
  };
  nn::PerDim<T> r;
  if (py::isinstance<py::list>(h) || py::isinstance<py::tuple>(h)) {
    r.seq = true;
    for (py::handle v : h) r.v.push_back(one(v));
  } else {
    r.v.push_back(one(h));
  }
  return r;
}

// f() with an allocation failure raised as a MemoryError that names the op.
template <class F>
Tensor named_oom(const char* op, F f) {
  try {
    return f();
  } catch (const std::bad_alloc&) {
    PyErr_SetString(PyExc_MemoryError,
                    (std::string(op) + ": cannot allocate the output (out of memory)").c_str());
    throw py::error_already_set();
  }
}

Tensor interpolate(const Tensor& input, py::handle size, py::handle scale_factor,
                   const std::string& mode, std::optional<bool> align_corners,
                   std::optional<bool> recompute_scale_factor, bool antialias) {
  const auto sz = per_dim<int64_t>(size, "size");
  const auto sf = per_dim<double>(scale_factor, "scale_factor");
  return named_oom("interpolate", [&] {
    return nn::interpolate(input, sz, sf, mode, align_corners, recompute_scale_factor, antialias);
  });
}

}  // namespace

void init_resample(py::module_& m) {
  py::options text_signature;
  text_signature.disable_function_signatures();
  const py::object None = py::none();
  m.def("interpolate", &interpolate, py::arg("input"), py::arg("size") = None,
        py::arg("scale_factor") = None, py::arg("mode") = "nearest",
        py::arg("align_corners") = None, py::arg("recompute_scale_factor") = None,
        py::arg("antialias") = false,
        "interpolate(input, size=None, scale_factor=None, mode='nearest', align_corners=None, "
        "recompute_scale_factor=None, antialias=False)\n--\n\n"
        "Resamples (N, C, L), (N, C, H, W) or (N, C, D, H, W) input to `size` or by\n"
        "`scale_factor` (one value or one per spatial dim), as PyTorch's F.interpolate: modes\n"
        "nearest, nearest-exact, linear (3-D), bilinear and bicubic (4-D), trilinear (5-D) and\n"
        "area; align_corners only for the interpolating modes; antialias=True (bilinear,\n"
        "bicubic) low-pass filters when downsampling, as PIL. The C++ op\n"
        "csrc/ops/nn/resample.h (Note [Separable resampling by gathered taps]).");
  m.def(
      "upsample",
      [](const Tensor& input, py::handle size, py::handle scale_factor, const std::string& mode,
         std::optional<bool> align_corners) {
        return interpolate(input, size, scale_factor, mode, align_corners, std::nullopt, false);
      },
      py::arg("input"), py::arg("size") = None, py::arg("scale_factor") = None,
      py::arg("mode") = "nearest", py::arg("align_corners") = None,
      "upsample(input, size=None, scale_factor=None, mode='nearest', align_corners=None)\n--\n\n"
      "interpolate under its deprecated name (PyTorch keeps it).");
  m.def(
      "upsample_nearest",
      [](const Tensor& input, py::handle size, py::handle scale_factor) {
        return interpolate(input, size, scale_factor, "nearest", std::nullopt, std::nullopt, false);
      },
      py::arg("input"), py::arg("size") = None, py::arg("scale_factor") = None,
      "upsample_nearest(input, size=None, scale_factor=None)\n--\n\n"
      "interpolate with mode='nearest' (PyTorch's deprecated upsample_nearest).");
  m.def(
      "upsample_bilinear",
      [](const Tensor& input, py::handle size, py::handle scale_factor) {
        return interpolate(input, size, scale_factor, "bilinear", true, std::nullopt, false);
      },
      py::arg("input"), py::arg("size") = None, py::arg("scale_factor") = None,
      "upsample_bilinear(input, size=None, scale_factor=None)\n--\n\n"
      "interpolate with mode='bilinear' and align_corners=True (PyTorch's deprecated\n"
      "upsample_bilinear).");
  m.def(
      "affine_grid",
      [](const Tensor& theta, py::iterable size, std::optional<bool> align_corners) {
        std::vector<int64_t> sz;
        for (py::handle v : size) sz.push_back(int_arg(v, "affine_grid", "size"));
        return named_oom("affine_grid",
                         [&] { return nn::affine_grid(theta, sz, align_corners.value_or(false)); });
      },
      py::arg("theta"), py::arg("size"), py::arg("align_corners") = None,
      "affine_grid(theta, size, align_corners=None)\n--\n\n"
      "Sampling grids of batches of affine maps: theta (N, 2, 3) with size (N, C, H, W) ->\n"
      "(N, H, W, 2), or theta (N, 3, 4) with size (N, C, D, H, W) -> (N, D, H, W, 3), in\n"
      "grid_sample's [-1, 1] coordinates (the C++ op csrc/ops/nn/grid_sample.h).");
  m.def(
      "grid_sample",
      [](const Tensor& input, const Tensor& grid, const std::string& mode,
         const std::string& padding_mode, std::optional<bool> align_corners) {
        return nn::grid_sample(input, grid, mode, padding_mode, align_corners.value_or(false));
      },
      py::arg("input"), py::arg("grid"), py::arg("mode") = "bilinear",
      py::arg("padding_mode") = "zeros", py::arg("align_corners") = None,
      "grid_sample(input, grid, mode='bilinear', padding_mode='zeros', align_corners=None)\n--\n\n"
      "Samples input (N, C, H, W) at grid (N, Ho, Wo, 2) -> (N, C, Ho, Wo) (5-D: grid\n"
      "(N, Do, Ho, Wo, 3)); grid[..., 0] is x (width), in [-1, 1]; mode bilinear, nearest or\n"
      "bicubic (4-D), padding_mode zeros, border or reflection, as PyTorch's. Gradients of\n"
      "the input and the grid (the C++ op csrc/ops/nn/grid_sample.h, Note [Sampling by\n"
      "gathered corners]).");
}

}  // namespace ts::python
