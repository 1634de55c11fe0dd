// Bindings of PyTorch's legacy norms and statistics utilities (ops/statistics_torch.h), each
// the namespace function and the Tensor method at once (issue 17): torch.norm with its p / dim /
// keepdim / out / dtype forms, dist, renorm, histogram (torch.return_types.histogram),
// combinations, gradient and Tensor.sum_to_size.
#include <pybind11/stl.h>

#include "ops/arithmetic.h"
#include "ops/copy.h"
#include "ops/elementwise.h"
#include "ops/statistics_torch.h"
#include "python/convert.h"
#include "python/function_method.h"
#include "python/int_arg.h"
#include "python/out_arg.h"

namespace ts::python {

py::object torch_return_type(const char* name, std::initializer_list<const char*> fields);

namespace {

NormOrd norm_ord(py::handle p) {
  NormOrd ord;
  if (p.is_none()) {
    ord.name = "fro";
  } else if (py::isinstance<py::str>(p)) {
    ord.name = p.cast<std::string>();
  } else if (PyBool_Check(p.ptr()) || !to_scalar(p, ord.p)) {
    throw TypeError(str("norm: p must be a number, 'fro' or 'nuc', got ",
                        py::str(py::type::handle_of(p).attr("__name__")).cast<std::string>()));
  }
  return ord;
}

std::optional<Shape> dims_of(py::handle dim, const char* op) {
  if (dim.is_none()) return std::nullopt;
  return to_shape(dim, op);
}

py::object norm_py(py::handle x, py::handle p, py::handle dim, bool keepdim, py::handle out,
                   py::handle dtype) {
  const Tensor& t = tensor_or_throw(x, "norm", "input");
  const std::optional<DType> dt =
      dtype.is_none() ? std::nullopt : std::optional<DType>(to_dtype(dtype));
  return result_or_out("norm", torch_norm(t, norm_ord(p), dims_of(dim, "norm"), keepdim, dt), out,
                       OutDtype::Exact);
}

py::object histogram_py(py::handle x, py::handle bins, py::handle range, py::handle weight,
                        bool density, py::handle out) {
  const char* op = "histogram";
  const Tensor& t = tensor_or_throw(x, op, "input");
  std::optional<int64_t> nbins;
  const Tensor* edges = nullptr;
  if (py::isinstance<Tensor>(bins))
    edges = &bins.cast<const Tensor&>();
  else
    nbins = int_arg(bins, op, "bins");
  std::optional<std::pair<double, double>> rng;
  if (!range.is_none()) {
    const py::sequence s = py::reinterpret_borrow<py::sequence>(range);
    TS_CHECK(py::isinstance<py::sequence>(range) && s.size() == 2, TypeError,
             "histogram: range must be a (min, max) pair of numbers");
    rng = std::make_pair(s[0].cast<double>(), s[1].cast<double>());
  }
  const Tensor* w = weight.is_none() ? nullptr : &tensor_or_throw(weight, op, "weight");
  auto [hist, bin_edges] = histogram(t, nbins, edges, rng, w, density);
  const py::object type = torch_return_type("histogram", {"hist", "bin_edges"});
  if (out.is_none()) return type(std::move(hist), std::move(bin_edges));
  const py::tuple o = py::reinterpret_borrow<py::tuple>(out);
  TS_CHECK(o.size() == 2, TypeError, "histogram: out must be a (hist, bin_edges) pair of tensors");
  write_out_py(op, o[0], hist, OutDtype::Exact, {&t});
  write_out_py(op, o[1], bin_edges, OutDtype::Exact, {&t});
  return type(o[0], o[1]);
}

// spacing: a number or 0-d tensor (every dim), or one number / 0-d tensor / 1-D coordinate
// tensor per dim.
GradientSpacing spacing_of(py::handle h) {
  GradientSpacing s;
  if (py::isinstance<Tensor>(h)) {
    const Tensor& t = h.cast<const Tensor&>();
    if (t.ndim() == 0)
      s.h = item(t).to<double>();
    else
      s.coords = t;
  } else {
    s.h = py::cast<double>(h);
  }
  return s;
}

py::tuple gradient_py(py::handle x, py::handle spacing, py::handle dim, int64_t edge_order) {
  const Tensor& t = tensor_or_throw(x, "gradient", "input");
  Shape dims;
  if (dim.is_none()) {
    for (int64_t i = 0; i < t.ndim(); ++i) dims.push_back(i);
  } else {
    dims = to_shape(dim, "gradient");
  }
  std::vector<GradientSpacing> sp;
  const bool one = !py::isinstance<py::sequence>(spacing) || py::isinstance<py::str>(spacing);
  if (one) {
    sp.assign(dims.size(), spacing_of(spacing));
  } else {
    for (py::handle s : py::reinterpret_borrow<py::sequence>(spacing)) sp.push_back(spacing_of(s));
  }
  const std::vector<Tensor> g = gradient(t, sp, dims, edge_order);
  py::tuple r(g.size());
  for (size_t i = 0; i < g.size(); ++i) r[i] = py::cast(g[i]);
  return r;
}

}  // namespace

void init_statistics_torch(py::module_& m) {
  py::options text_signature;  // Note [Readable signatures]
  text_signature.disable_function_signatures();
  m.def("norm", &norm_py, py::arg("input"), py::arg("p") = "fro", py::arg("dim") = py::none(),
        py::arg("keepdim") = false, py::arg("out") = py::none(), py::arg("dtype") = py::none(),
        "norm(input, p='fro', dim=None, keepdim=False, out=None, dtype=None)\n--\n\n"
        "torch.norm: the p-norm of the elements over dim (all when None; an int or a tuple),\n"
        "'fro' (the 2-norm of the elements) or 'nuc' (the nuclear norm of the matrices in two\n"
        "dims); input cast to dtype first. Floating or complex input.");
  m.def(
      "dist",
      [](py::handle x, py::handle other, py::handle p) {
        int pos = 1;
        for (const auto& [h, name] : {std::pair{x, "input"}, std::pair{other, "other"}}) {
          if (!py::isinstance<Tensor>(h))  // torch's TypeError
            throw TypeError(
                str("dist(): argument '", name, "' (position ", pos, ") must be ", "Tensor, not ",
                    py::str(py::type::handle_of(h).attr("__name__")).cast<std::string>()));
          ++pos;
        }
        const Tensor& a = x.cast<const Tensor&>();
        const Tensor& b = other.cast<const Tensor&>();
        return torch_norm(subtract(a, b), norm_ord(p), std::nullopt, false, std::nullopt);
      },
      py::arg("input"), py::arg("other"), py::arg("p") = 2,
      "dist(input, other, p=2)\n--\n\nThe p-norm of input - other (broadcast; torch.dist).");
  m.def(
      "renorm",
      [](py::handle x, double p, int64_t dim, double maxnorm, py::handle out) {
        return result_or_out("renorm",
                             renorm(tensor_or_throw(x, "renorm", "input"), p, dim, maxnorm), out,
                             OutDtype::Exact);
      },
      py::arg("input"), py::arg("p"), py::arg("dim"), py::arg("maxnorm"), py::kw_only(),
      py::arg("out") = py::none(),
      "renorm(input, p, dim, maxnorm, *, out=None)\n--\n\n"
      "Each slice along dim whose p-norm exceeds maxnorm, scaled down to norm maxnorm.");
  m.def("histogram", &histogram_py, py::arg("input"), py::arg("bins") = 100, py::kw_only(),
        py::arg("range") = py::none(), py::arg("weight") = py::none(), py::arg("density") = false,
        py::arg("out") = py::none(),
        "histogram(input, bins=100, *, range=None, weight=None, density=False, out=None)\n--\n\n"
        "(hist, bin_edges) as torch.histogram (NumPy's semantics): bins an int (equal widths\n"
        "over range, the data's min and max by default) or a 1-D tensor of edges; the last bin\n"
        "includes its right edge; weight sums per bin; density normalizes to a density.");
  m.def(
      "combinations",
      [](py::handle x, py::handle r, bool with_replacement) {
        const Tensor& t = tensor_or_throw(x, "combinations", "input");
        const int64_t n = int_arg(r, "combinations", "r");
        try {
          return combinations(t, n, with_replacement);
        } catch (const std::bad_alloc&) {
          PyErr_SetString(PyExc_MemoryError,
                          str("combinations: cannot allocate the output of the r=", n,
                              " combinations of ", t.numel(), " elements; hint: use a smaller r")
                              .c_str());
          throw py::error_already_set();
        }
      },
      py::arg("input"), py::arg("r") = 2, py::arg("with_replacement") = false,
      "combinations(input, r=2, with_replacement=False)\n--\n\n"
      "The length-r combinations of a 1-D tensor's elements, as the rows of a (count, r)\n"
      "tensor in itertools order (torch.combinations); differentiable.");
  m.def("gradient", &gradient_py, py::arg("input"), py::kw_only(), py::arg("spacing") = 1,
        py::arg("dim") = py::none(), py::arg("edge_order") = 1,
        "gradient(input, *, spacing=1, dim=None, edge_order=1)\n--\n\n"
        "Central differences inside, one-sided (first or second order) at the edges, along each\n"
        "dim in dim (default all): a tuple of tensors. spacing: a scalar, one scalar per dim,\n"
        "or one 1-D coordinate tensor per dim (torch.gradient, np.gradient).");
  bind_functions_as_methods(m, {"norm", "dist", "renorm", "histogram"});
  auto cls = py::reinterpret_borrow<py::class_<Tensor>>(m.attr("Tensor"));
  cls.def(
      "sum_to_size",
      [](py::handle self, const py::args& size) {
        const Tensor& x = tensor_or_throw(self, "sum_to_size", "self");
        const bool one = size.size() == 1 && py::isinstance<py::sequence>(size[0]);
        return sum_to_size(x, to_shape(one ? size[0] : size, "sum_to_size"));
      },
      "sum_to_size(*size)\n--\n\n"
      "This tensor summed down to size, which it must be expandable from.");
}

}  // namespace ts::python
