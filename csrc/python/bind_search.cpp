// Bindings for advanced indexing functions, sorting and searching. The Python layer
// (_indexing.py, _sorting.py, _searching.py) adds keyword handling and docstrings.
#include <pybind11/stl.h>

#include "ops/copy.h"
#include "ops/indexing_advanced.h"
#include "ops/sort.h"
#include "python/convert.h"

namespace ts::python {

void init_search(py::module_& m) {
  auto t = [](py::handle h, const char* op) { return operand_or_throw(h, op); };
  m.def("_nonzero", [=](py::handle x) { return nonzero(t(x, "nonzero")); });
  m.def("_gather", [=](py::handle x, int64_t dim, py::handle index) {
    return gather(t(x, "gather"), dim, t(index, "gather"));
  });
  m.def("_scatter",
        [=](py::handle x, int64_t dim, py::handle index, py::handle src, bool add, bool inplace) {
          const Tensor xt = t(x, "scatter");
          if (!inplace) return scatter(xt, dim, t(index, "scatter"), t(src, "scatter"), add);
          scatter_(xt, dim, t(index, "scatter"), t(src, "scatter"), add);
          return xt;
        });
  m.def("_index_select", [=](py::handle x, int64_t dim, py::handle index) {
    return index_select(t(x, "index_select"), dim, t(index, "index_select"));
  });
  m.def("_index_add", [=](py::handle x, int64_t dim, py::handle index, py::handle source) {
    return index_add(t(x, "index_add"), dim, t(index, "index_add"), t(source, "index_add"));
  });
  m.def("_scatter_permutation", [=](py::handle perm, py::handle values) {
    return scatter_permutation(t(perm, "scatter_permutation"), t(values, "scatter_permutation"));
  });
  m.def("_take_along_axis", [=](py::handle x, py::handle indices, int64_t axis) {
    return take_along_axis(t(x, "take_along_axis"), t(indices, "take_along_axis"), axis);
  });
  m.def("_sort", [=](py::handle x, int64_t axis, bool descending) {
    return sort(t(x, "sort"), axis, descending);
  });
  m.def("_argsort", [=](py::handle x, int64_t axis, bool descending) {
    return argsort(t(x, "argsort"), axis, descending);
  });
  m.def("_sort_with_indices", [=](py::handle x, int64_t axis, bool descending) {
    return sort_with_indices(t(x, "sort"), axis, descending);
  });
  m.def("_topk", [=](py::handle x, int64_t k, int64_t dim, bool largest) {
    return topk(t(x, "topk"), k, dim, largest);
  });
  m.def("_searchsorted", [=](py::handle x1, py::handle x2, bool right, py::handle sorter) {
    Tensor s;
    if (!sorter.is_none()) s = t(sorter, "searchsorted");
    return searchsorted(t(x1, "searchsorted"), t(x2, "searchsorted"), right,
                        sorter.is_none() ? nullptr : &s);
  });
}

}  // namespace ts::python
